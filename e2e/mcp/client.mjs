// An official MCP SDK client session against lattice, for the MCP suite:
// initialize, tools/list, tools/call show_dashboard, resources/read.
// Usage: node client.mjs BASE TOKEN (streamable HTTP at BASE/mcp), or
// node client.mjs stdio LATTICE_BINARY (`lattice mcp --stdio`, its token and
// database from this process's environment); prints one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [base, second] = process.argv.slice(2);
const transport = base === "stdio"
  ? new StdioClientTransport({ command: second, args: ["mcp", "--stdio"], env: process.env, stderr: "inherit" })
  : new StreamableHTTPClientTransport(new URL(base + "/mcp"), {
      requestInit: { headers: { Authorization: "Bearer " + second } },
    });
const client = new Client({ name: "lattice-e2e", version: "1.0.0" });
const out = {};
try {
  await client.connect(transport);
  out.server = client.getServerVersion();
  out.capabilities = client.getServerCapabilities();
  out.tools = (await client.listTools()).tools.map((t) => ({ name: t.name, meta: t._meta ?? null }));
  out.call = await client.callTool({
    name: "show_dashboard",
    arguments: { title: "Service health", panels: [{ type: "metric", label: "Open incidents", value: 3 }, { type: "line", title: "Requests", x: ["09:00", "10:00"], series: [{ name: "api", values: [1200, 1350] }] }] },
  });
  const uri = out.call._meta?.ui?.resourceUri;
  out.resource = uri ? await client.readResource({ uri }) : null;
  out.bad = await client.callTool({ name: "show_dashboard", arguments: { title: "Broken", panels: [{ type: "pie" }] } });
} catch (e) {
  out.error = String(e);
}
await client.close().catch(() => {});
console.log(JSON.stringify(out));
