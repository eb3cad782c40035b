// The sandbox proxy (REQUIREMENTS.md W4, E2), served by the apps origin. It runs in
// the outer frame (sandbox="allow-scripts allow-same-origin", safe because
// this origin holds nothing), under a policy that runs this script alone
// (by its hash). It loads an inner frame from this origin (/sandbox/frame,
// sandbox="allow-scripts" only, so its origin is opaque), hands it the app's
// document to write, and relays JSON-RPC between the host and the app. The
// document starts with its policy and a prelude that takes WebRTC away (no
// CSP directive governs it); an app that asks for the MCP Apps SDK (a
// script element with data-lattice-sdk="ext-apps") gets the release's
// vendored copy inlined there. This file is inlined in the proxy document:
// it must never hold the characters that end a script element.
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

  const MARKER = /<script\s+data-lattice-sdk\s*=\s*["']?ext-apps["']?\s*>\s*<\/script>/i;
  let sdk = null;
  // The app's document once composed, and whether the inner frame wrote it.
  let pending = null;
  let written = false;

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

  function load(html) {
    pending = html;
    written = false;
    // A fresh frame for every document: what an app left behind goes with it.
    inner.src = "/sandbox/frame";
    if (!inner.isConnected) document.body.appendChild(inner);
  }

  window.addEventListener("message", async (event) => {
    if (event.source === window.parent) {
      if (event.origin !== HOST) return;
      const data = event.data;
      if (data && data.method === "ui/notifications/sandbox-resource-ready") {
        const html = data.params && typeof data.params.html === "string" ? data.params.html : "";
        load(await compose(html));
        window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-resource-loaded", params: {} }, HOST);
      } else if (inner.contentWindow) {
        inner.contentWindow.postMessage(data, "*");
      }
    } else if (event.source === inner.contentWindow) {
      // The inner frame's loader asks for its document once; everything
      // after is the app's, for the host.
      if (!written && event.data && event.data.lattice === "frame-ready") {
        written = true;
        inner.contentWindow.postMessage({ lattice: "document", html: pending }, "*");
        return;
      }
      window.parent.postMessage(event.data, HOST);
    }
  });
  window.parent.postMessage({ jsonrpc: "2.0", method: "ui/notifications/sandbox-proxy-ready", params: {} }, HOST);
})();
