// A lattice mini app for MCP Apps hosts that show a tool's declared view:
// create_app's and update_app's results carry the app's document (in
// `_meta`, which hosts give the view and not the model), and this page
// becomes it. The app then speaks to the host itself, as in its own
// resource (`ui://lattice/apps/{id}`); the tool's input and result, which
// the host sent before the app was there, are handed to it once it has
// initialized, as the host would have.
let input = null;
const becomeApp = (result) => {
  const doc = result._meta && result._meta.lattice && result._meta.lattice.document;
  if (typeof doc !== "string") return;
  const replay = [
    { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: input || {} } },
    { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: result },
  ];
  const handOver = "<script>(() => { const replay = " + JSON.stringify(replay).replace(/</g, "\\u003c") + "; let done = false;" +
    " addEventListener('message', (e) => { if (done || e.source !== parent) return; const m = e.data;" +
    " if (m && m.result && m.result.protocolVersion) { done = true; setTimeout(() => replay.forEach((data) =>" +
    " dispatchEvent(new MessageEvent('message', { data, source: parent, origin: e.origin }))), 0); } }); })();<\/script>";
  const page = doc.replace(/^(\s*<!doctype[^>]*>)?/i, (start) => start + handOver);
  document.open();
  document.write(page);
  document.close();
};
view("lattice-app", {
  input: (args) => { input = args; },
  result: becomeApp,
});
