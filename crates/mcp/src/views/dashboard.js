// A lattice dashboard for MCP Apps hosts: the figures as tables, every value
// inserted with DOM text APIs, never as HTML.
const render = (d) => {
  const root = document.getElementById("root");
  root.replaceChildren(el("h2", d.title), el("p", "Figures as of " + d.as_of, { class: "muted" }));
  for (const p of d.panels || []) {
    if (p.type === "metric") root.append(el("p", p.label + ": " + p.value + (p.unit ? " " + p.unit : "")));
    else if (p.type === "line" || p.type === "bar" || p.type === "table") {
      const t = el("table");
      t.append(el("caption", p.title || ""));
      const head = el("tr");
      const cols = p.type === "table" ? p.columns : ["", ...p.series.map((s) => s.name)];
      for (const c of cols) head.append(el("th", c, { scope: "col" }));
      t.append(head);
      const rows = p.type === "table" ? p.rows : p.x.map((x, i) => [x, ...p.series.map((s) => s.values[i])]);
      for (const r of rows) { const tr = el("tr"); for (const c of r) tr.append(el("td", c)); t.append(tr); }
      root.append(t);
    } else if (p.type === "text") root.append(el("p", p.markdown));
    else if (p.type === "action") root.append(el("p", "Action: " + p.label));
  }
};
view("lattice-dashboard", {
  result: (r) => r.structuredContent && r.structuredContent.dashboard && render(r.structuredContent.dashboard),
});
