// A minimal MCP Apps host for the suites: the official MCP client and the
// ext-apps AppBridge, in a page, showing one tool's view in a sandboxed
// frame. Bundled by the test with esbuild (`mcp_view.rs`).
import { AppBridge, PostMessageTransport, getToolUiResourceUri } from "@modelcontextprotocol/ext-apps/app-bridge";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const events = (window.hostEvents = []);

// Calls `tool` with `args` on lattice at `mcp` as `token` and shows its view.
window.showTool = async ({ mcp, token, tool, args }) => {
  const client = new Client({ name: "lattice-e2e-host", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp), { requestInit: { headers: { Authorization: "Bearer " + token } } }));
  const def = (await client.listTools()).tools.find((t) => t.name === tool);
  const uri = getToolUiResourceUri(def);
  const resource = await client.readResource({ uri });
  const content = resource.contents[0];
  events.push({ resource: { uri, mimeType: content.mimeType, csp: content._meta && content._meta.ui && content._meta.ui.csp } });
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = tool + " view";
  frame.style.cssText = "width:600px;height:400px;border:1px solid #888";
  document.body.append(frame);
  const bridge = new AppBridge(client, { name: "lattice-e2e-host", version: "1.0.0" }, { serverTools: {}, openLinks: {} }, {
    hostContext: { theme: "light", displayMode: "inline" },
  });
  window.bridge = bridge;
  bridge.onsizechange = (size) => events.push({ size });
  const initialized = new Promise((resolve) => (bridge.oninitialized = resolve));
  await bridge.connect(new PostMessageTransport(frame.contentWindow, frame.contentWindow));
  frame.srcdoc = content.text;
  await initialized;
  events.push("initialized");
  await bridge.sendToolInput({ arguments: args });
  const result = await client.callTool({ name: tool, arguments: args });
  await bridge.sendToolResult(result);
  events.push({ result: result.structuredContent });
  return result.structuredContent;
};

window.teardown = async () => {
  await window.bridge.teardownResource({});
  events.push("torn down");
};
