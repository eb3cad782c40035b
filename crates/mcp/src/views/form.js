// A lattice form for MCP Apps hosts, drawn from the schema subset with
// native labelled controls. Sending calls lattice's submit_form through the
// host, so the values land as a submission by the MCP caller; lattice checks
// them again and a refusal is shown here.
let form = null, receipt = null, drawn = "";
const host = view("lattice-form", {
  // The form is drawn once lattice has made it: its widgets come with it.
  input: () => { const waiting = !receipt && document.querySelector("#root > p[role=status]"); if (waiting) waiting.textContent = "Preparing the form…"; },
  result: (r) => {
    const s = r.structuredContent;
    if (r.isError || !s || !s.form || !s.receipt) { status("The form was not created: " + text(r), true); return; }
    draw(s.form, s.receipt);
  },
});
const text = (r) => ((r && r.content) || []).filter((c) => c.type === "text").map((c) => c.text).join(" ");
const status = (message, alarm) => {
  const s = document.getElementById("status");
  if (s) { s.setAttribute("role", alarm ? "alert" : "status"); s.textContent = message; }
};
// The widget lattice resolved for each property (lattice_ui::hints::widgets).
const kindOf = (name) => (form.widgets || {})[name] || "text";
const control = (name, p, hint, required) => {
  const id = "f-" + name, kind = kindOf(name);
  const label = (p.title || name) + (required ? " (required)" : "");
  const help = (hint && hint.help) || p.description;
  const choices = p.type === "array" ? (p.items && p.items.enum) || [] : p.enum || [];
  // A choice's label where the form gives one (a titled enum); its value is sent.
  const shown = (c) => String((hint && hint.labels && hint.labels[c]) || c);
  if (kind === "radio" || kind === "checkboxes") {
    const box = el("fieldset", null, { class: "field" });
    box.append(el("legend", label));
    if (help) box.append(el("span", help, { class: "hint" }));
    for (const c of choices) {
      const l = el("label", null, { class: "choice" });
      const i = el("input", null, { type: kind === "radio" ? "radio" : "checkbox", name, value: c });
      if (Array.isArray(p.default) ? p.default.includes(c) : p.default === c) i.checked = true;
      l.append(i, document.createTextNode(shown(c)));
      box.append(l);
    }
    return box;
  }
  const box = el("div", null, { class: "field" });
  box.append(el("label", label, { for: id }));
  let input;
  if (kind === "select") {
    input = el("select", null, { id, name });
    if (!required) input.append(el("option", "", { value: "" }));
    for (const c of choices) input.append(el("option", shown(c), { value: c }));
  } else if (kind === "textarea") {
    input = el("textarea", null, { id, name, rows: 4 });
  } else if (kind === "checkbox") {
    input = el("input", null, { id, name, type: "checkbox" });
  } else {
    const type = { number: "number", date: "date", time: "time", datetime: "datetime-local", email: "email", url: "url" }[kind] || "text";
    input = el("input", null, { id, name, type });
    if (p.type === "integer") input.setAttribute("step", "1");
    if (p.minimum !== undefined) input.setAttribute("min", p.minimum);
    if (p.maximum !== undefined) input.setAttribute("max", p.maximum);
    if (p.maxLength !== undefined) input.setAttribute("maxlength", p.maxLength);
  }
  if (p.default !== undefined) { if (kind === "checkbox") input.checked = !!p.default; else input.value = p.default; }
  if (hint && hint.placeholder) input.setAttribute("placeholder", hint.placeholder);
  if (required && kind !== "checkbox") input.required = true;
  if (help) { input.setAttribute("aria-describedby", id + "-hint"); box.append(el("span", help, { class: "hint", id: id + "-hint" })); }
  box.append(input);
  return box;
};
const read = (root) => {
  const values = {};
  for (const [name, p] of Object.entries(form.schema.properties || {})) {
    const kind = kindOf(name);
    if (kind === "checkboxes") { values[name] = [...root.querySelectorAll("input[name='" + CSS.escape(name) + "']:checked")].map((i) => i.value); continue; }
    if (kind === "radio") { const c = root.querySelector("input[name='" + CSS.escape(name) + "']:checked"); if (c) values[name] = c.value; continue; }
    const input = root.querySelector("#" + CSS.escape("f-" + name));
    if (kind === "checkbox") { values[name] = input.checked; continue; }
    if (input.value === "") continue;
    if (p.type === "number" || p.type === "integer") values[name] = Number(input.value);
    // The control gives local time, as the chat reads it; the form wants RFC 3339.
    else if (kind === "datetime") { const d = new Date(input.value); values[name] = isNaN(d) ? input.value : d.toISOString(); }
    else values[name] = input.value;
  }
  return values;
};
const draw = (f, r) => {
  const key = JSON.stringify([f, r && r.id]);
  if (key === drawn) return;
  drawn = key; form = f; receipt = r;
  const root = document.getElementById("root");
  const ui = f.ui || {}, props = (f.schema && f.schema.properties) || {}, required = new Set((f.schema && f.schema.required) || []);
  const order = [...(ui.order || []), ...Object.keys(props).filter((k) => !(ui.order || []).includes(k))];
  const node = el("form", null, { "aria-labelledby": "form-title", novalidate: "" });
  node.append(el("h2", f.title, { id: "form-title" }));
  for (const name of order) if (props[name]) node.append(control(name, props[name], (ui.fields || {})[name], required.has(name)));
  // Hosts frame views without allow-forms, so a form never submits: the
  // button and Enter send it instead.
  const send = el("button", ui.submit_label || "Send", { type: "button" });
  if (!r) send.disabled = true;
  node.append(send, el("p", r ? "" : "Preparing the form…", { id: "status", role: "status" }));
  node.addEventListener("submit", (e) => e.preventDefault());
  node.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.tagName === "INPUT" && e.target.type !== "checkbox" && e.target.type !== "radio") { e.preventDefault(); go(); }
  });
  send.addEventListener("click", () => go());
  const go = async () => {
    if (!receipt || send.disabled) return;
    send.disabled = true;
    status("Sending…");
    try {
      const answer = await host.call("submit_form", { form: receipt.id, form_version: receipt.version, values: read(node) });
      if (answer.isError) { status(text(answer), true); send.disabled = false; }
      else status("Sent. " + text(answer));
    } catch (err) {
      status("The host did not pass the submission on: " + (err && err.message ? err.message : String(err)), true);
      send.disabled = false;
    }
  };
  root.replaceChildren(node);
};
