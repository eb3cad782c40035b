// The MCP Apps view lifecycle (2026-01-26), shared by lattice's generated
// views: ui/initialize, then initialized; tool-input and tool-result handed
// to the page; size-changed whenever the body's size changes; the host's
// theme applied; teardown acknowledged. No SDK, no network.
const view = (name, handlers) => {
  let next = 1, capability = null;
  const pending = new Map();
  const send = (m) => window.parent.postMessage(Object.assign({ jsonrpc: "2.0" }, m), "*");
  const request = (method, params) =>
    new Promise((resolve, reject) => {
      const id = next++;
      pending.set(id, { resolve, reject });
      send({ id, method, params });
    });
  const applyContext = (ctx) => {
    if (!ctx) return;
    if (ctx.theme) document.documentElement.dataset.theme = ctx.theme;
    const vars = ctx.styles && ctx.styles.variables;
    if (vars) for (const [k, v] of Object.entries(vars)) if (k.startsWith("--") && typeof v === "string") document.documentElement.style.setProperty(k, v);
  };
  window.addEventListener("message", (e) => {
    if (e.source !== window.parent) return;
    const m = e.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method) {
      const p = pending.get(m.id);
      if (p) { pending.delete(m.id); m.error ? p.reject(m.error) : p.resolve(m.result); }
      return;
    }
    switch (m.method) {
      case "ui/notifications/tool-input": handlers.input && handlers.input((m.params && m.params.arguments) || {}); break;
      case "ui/notifications/tool-result":
        // The capability for this view's artifact, which the host gives the
        // view and not the model: app-only tools need it.
        if (m.params && m.params._meta && m.params._meta.lattice && typeof m.params._meta.lattice.capability === "string") capability = m.params._meta.lattice.capability;
        handlers.result && handlers.result(m.params || {});
        break;
      case "ui/notifications/tool-cancelled": handlers.cancelled && handlers.cancelled(m.params || {}); break;
      case "ui/notifications/host-context-changed": applyContext(m.params); break;
      case "ui/resource-teardown": send({ id: m.id, result: {} }); break;
      case "ping": send({ id: m.id, result: {} }); break;
    }
  });
  let last = "";
  const sized = () => {
    const size = { width: Math.ceil(document.documentElement.scrollWidth), height: Math.ceil(document.documentElement.scrollHeight) };
    const key = size.width + "x" + size.height;
    if (key !== last) { last = key; send({ method: "ui/notifications/size-changed", params: size }); }
  };
  request("ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name, version: "1" }, appCapabilities: {} }).then((init) => {
    applyContext(init && init.hostContext);
    send({ method: "ui/notifications/initialized", params: {} });
    new ResizeObserver(sized).observe(document.body);
    sized();
  });
  return {
    // A tool on lattice's server, called through the host as its caller.
    call: (tool, args) => request("tools/call", { name: tool, arguments: capability ? { ...args, capability } : args }),
  };
};
const el = (tag, text, attrs) => {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = String(text);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
};
