// One official MCP SDK client session that runs the steps it is given and
// prints what each answered, for the MCP suites.
// Usage: node steps.mjs BASE TOKEN PLAN, where PLAN is JSON:
//   {"elicit": "accept" | "decline" | null, "content": {...}?, "elicit_url": true?, "steps": [STEP, ...]}
//   STEP: {"list": true} | {"call": NAME, "arguments": {...}} | {"read": URI}
//         | {"parallel": [STEP, ...]} (run at once; their outputs in order)
//         | {"fetch": {"method", "path", "token", "body"}} (an HTTP request to
//           BASE, as another client would make it, mid-session)
//         | {"wait_list_changed": MS} (until notifications/tools/list_changed
//           has come, or MS have passed)
// With "elicit" set, the client declares elicitation and answers every
// request so (accepting with "content", or {}); the schemas it was asked are
// in "requested"; progress notifications of a call are counted in its output.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema, ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [base, token, planText] = process.argv.slice(2);
const plan = JSON.parse(planText);
const capabilities = plan.elicit_url ? { elicitation: { url: {} } } : plan.elicit ? { elicitation: { form: {} } } : {};
const client = new Client({ name: "lattice-e2e", version: "1.0.0" }, { capabilities });
const elicited = [];
const requested = [];
if (plan.elicit || plan.elicit_url) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited.push(request.params.message);
    requested.push(request.params.requestedSchema ?? { mode: request.params.mode, url: request.params.url });
    if (plan.elicit_url) return { action: "accept" };
    return plan.elicit === "accept" ? { action: "accept", content: plan.content ?? {} } : { action: "decline" };
  });
}
const out = { steps: [], elicited, requested };
let listChanged = 0;
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { listChanged++; });

async function run(step) {
  try {
    if (step.list) return (await client.listTools()).tools.map((t) => ({ name: t.name, meta: t._meta ?? null }));
    if (step.read) return await client.readResource({ uri: step.read });
    if (step.parallel) return await Promise.all(step.parallel.map(run));
    if (step.fetch) {
      const f = step.fetch;
      const r = await fetch(base + f.path, { method: f.method, headers: { Authorization: "Bearer " + f.token, "content-type": "application/json" }, body: f.body ? JSON.stringify(f.body) : undefined });
      return { status: r.status };
    }
    if (step.wait_list_changed !== undefined) {
      const until = Date.now() + step.wait_list_changed, started = Date.now();
      while (listChanged === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 25));
      const seen = listChanged;
      listChanged = 0;
      return { list_changed: seen, ms: Date.now() - started };
    }
    const progress = [];
    const result = await client.callTool({ name: step.call, arguments: step.arguments ?? {} }, undefined, {
      onprogress: (p) => progress.push(p),
      resetTimeoutOnProgress: true,
      timeout: 120000,
    });
    return { ...result, progress };
  } catch (e) {
    return { error: String(e) };
  }
}
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(base + "/mcp"), { requestInit: { headers: { Authorization: "Bearer " + token } } }));
  for (const step of plan.steps) out.steps.push(await run(step));
} catch (e) {
  out.error = String(e);
}
await client.close().catch(() => {});
console.log(JSON.stringify(out));
