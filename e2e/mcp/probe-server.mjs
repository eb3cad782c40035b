// A stdio MCP server that tells what it can see of the host that started it,
// for the suites that prove a connected server learns nothing of lattice's
// and shares nothing across tenants (the official MCP SDK's server; its tools
// read only what the process itself has):
//   count      a counter this process keeps (its state: a tenant's, or a person's)
//   env        the names and values of its environment
//   fds        the descriptors it holds (/proc/self/fd)
//   limits     its resource limits (/proc/self/limits)
//   cwd        where it runs, and its HOME
//   write      writes `bytes` bytes to a file in its folder
//   spawn      starts `n` sleeping children (they end with its process group)
// Usage: node probe-server.mjs
import { readdirSync, readFileSync, readlinkSync, writeFileSync } from "node:fs";
import { spawn } from "node:child_process";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "probe", version: "1.0.0" });
let count = 0;
const text = (value) => ({ content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: { value } });

server.registerTool("count", { description: "Counts calls in this process", inputSchema: {} }, async () => text(++count));
server.registerTool("env", { description: "This process's environment", inputSchema: {} }, async () => text(process.env));
server.registerTool("fds", { description: "This process's open descriptors", inputSchema: {} }, async () => {
  const fds = {};
  for (const fd of readdirSync("/proc/self/fd")) {
    try { fds[fd] = readlinkSync(`/proc/self/fd/${fd}`); } catch { /* closed while read */ }
  }
  return text(fds);
});
server.registerTool("limits", { description: "This process's resource limits", inputSchema: {} }, async () =>
  text(readFileSync("/proc/self/limits", "utf8")));
server.registerTool("cwd", { description: "Where this process runs", inputSchema: {} }, async () =>
  text({ cwd: process.cwd(), home: process.env.HOME }));
server.registerTool("write", { description: "Writes a file of `bytes` bytes here", inputSchema: { bytes: z.number() } }, async ({ bytes }) => {
  try {
    writeFileSync("filler.bin", Buffer.alloc(bytes));
    return text("written");
  } catch (e) {
    return text(`refused: ${e.code ?? e.message}`);
  }
});
server.registerTool("spawn", { description: "Starts `n` sleeping children", inputSchema: { n: z.number() } }, async ({ n }) => {
  const pids = [];
  for (let i = 0; i < n; i++) pids.push(spawn("sleep", ["600"], { stdio: "ignore" }).pid);
  return text(pids);
});
server.registerTool("hog", { description: "Writes `mb` MiB of memory and holds it", inputSchema: { mb: z.number() } }, async ({ mb }) => {
  const held = [];
  for (let i = 0; i < mb; i++) held.push(Buffer.alloc(1024 * 1024, 1));
  globalThis.held = held;
  return text(`held ${held.length} MiB`);
});
// Node's fetch instantiates WebAssembly, which reserves far more address
// space than it writes: it must work under the default limits.
server.registerTool("fetch", { description: "Fetches a data: URL with Node's fetch", inputSchema: {} }, async () =>
  text(await (await fetch("data:text/plain,fetched")).text()),
);
process.stderr.write("probe: ready\n");
await server.connect(new StdioServerTransport());
