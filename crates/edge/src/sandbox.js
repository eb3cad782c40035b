// The sandbox proxy (SPEC W4, E2), served by the apps origin. It runs in
// the outer frame (sandbox="allow-scripts allow-same-origin", safe because
// this origin holds nothing), loads the app into an inner srcdoc frame with
// sandbox="allow-scripts" only, and relays JSON-RPC between the host and
// the app. The inner document starts with its policy and a prelude that
// takes WebRTC away (no CSP directive governs it); an app that asks for the
// MCP Apps SDK (a script element with data-lattice-sdk="ext-apps") gets the
// release's vendored copy inlined there. This file is inlined in the proxy
// document: it must never hold the characters that end a script element.
(() => {
  const HOST = __HOST__;
  const SDK = __SDK__;
  // The app document's policy and WebRTC-removing script (lattice_ui::app::prelude).
  const PRELUDE = __PRELUDE__;
  if (window.top === window.self) {
    document.body.textContent = "This page runs only inside lattice.";
    return;
  }
  const inner = document.createElement("iframe");
  inner.setAttribute("sandbox", "allow-scripts");
  inner.setAttribute("title", "Mini app");
  inner.style.cssText = "border:0;width:100%;height:100%;display:block";
  document.documentElement.style.cssText = "margin:0;height:100%";
  document.body.style.cssText = "margin:0;height:100%";
  document.body.appendChild(inner);

  const MARKER = /<script\s+data-lattice-sdk\s*=\s*["']?ext-apps["']?\s*>\s*<\/script>/i;
  let sdk = null;

  async function compose(html) {
    let body = html;
    if (SDK && MARKER.test(body)) {
      if (sdk === null) {
        const r = await fetch(SDK, { credentials: "omit" });
        sdk = (await r.text()).replace(/<\/script/gi, "<\\/script");
      }
      body = body.replace(MARKER, () => "<script>" + sdk + "<\/script>");
    }
    // The policy comes first, after a doctype (which keeps standards mode).
    const doctype = body.match(/^\s*<!doctype[^>]*>/i);
    return doctype ? doctype[0] + PRELUDE + body.slice(doctype[0].length) : PRELUDE + body;
  }

  window.addEventListener("message", async (event) => {
    if (event.source === window.parent) {
      if (event.origin !== HOST) return;
      const data = event.data;
      if (data && data.method === "ui/notifications/sandbox-resource-ready") {
        const html = data.params && typeof data.params.html === "string" ? data.params.html : "";
        inner.srcdoc = await compose(html);
        window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-loaded", params: {} }, HOST);
      } else if (inner.contentWindow) {
        inner.contentWindow.postMessage(data, "*");
      }
    } else if (event.source === inner.contentWindow) {
      window.parent.postMessage(event.data, HOST);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, HOST);
})();
