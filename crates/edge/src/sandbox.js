// The sandbox proxy (REQUIREMENTS.md W4, E2), served by the apps origin. It runs in
// the outer frame (sandbox="allow-scripts allow-same-origin", safe because
// this origin holds nothing), under a policy that runs this script alone
// (by its hash). It loads an inner frame from this origin (/sandbox/frame,
// sandbox="allow-scripts" only, so its origin is opaque), hands it the app's
// document to write, and relays JSON-RPC between the host and the app. The
// inner frame writes the document after its policy and a prelude that takes
// WebRTC away (no CSP directive governs it); an app that asks for the MCP
// Apps SDK (a script element with data-lattice-sdk="ext-apps") gets the
// release's vendored copy inlined there. A connected server's app asks for
// the origins it declared (`csp`, MCP Apps) in the frame's address; the
// apps origin grants what of them the operator allowed for its server.
// This file is inlined in the proxy document: it must never hold the
// characters that end a script element.
(() => {
  const HOST = __HOST__;
  const SDK = __SDK__;
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
    return body;
  }

  // The frame's address: a server's app asks for what its server declared.
  const KINDS = { connectDomains: "connect", resourceDomains: "resource", frameDomains: "frame", baseUriDomains: "base" };
  function frameAddress(server, csp) {
    if (typeof server !== "string" || !csp || typeof csp !== "object") return "/sandbox/frame";
    const query = new URLSearchParams({ server });
    for (const [kind, name] of Object.entries(KINDS)) {
      if (Array.isArray(csp[kind])) for (const origin of csp[kind].slice(0, 32)) if (typeof origin === "string") query.append(name, origin);
    }
    return "/sandbox/frame?" + query.toString();
  }

  function load(html, address) {
    pending = html;
    written = false;
    // A fresh frame for every document: what an app left behind goes with it.
    inner.src = address;
    if (!inner.isConnected) document.body.appendChild(inner);
  }

  window.addEventListener("message", async (event) => {
    if (event.source === window.parent) {
      if (event.origin !== HOST) return;
      const data = event.data;
      if (data && data.method === "ui/notifications/sandbox-resource-ready") {
        const params = data.params || {};
        const html = typeof params.html === "string" ? params.html : "";
        load(await compose(html), frameAddress(params.server, params.csp));
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
