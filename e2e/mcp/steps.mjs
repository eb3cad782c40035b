// One official MCP SDK client session that runs the steps it is given and
// prints what each answered, for the MCP suites.
// Usage: node steps.mjs BASE TOKEN PLAN, where PLAN is JSON:
//   {"elicit": "accept" | "decline" | null, "steps": [STEP, ...]}
//   STEP: {"list": true} | {"call": NAME, "arguments": {...}} | {"read": URI}
//         | {"parallel": [STEP, ...]} (run at once; their outputs in order)
// With "elicit" set, the client declares elicitation and answers every
// request so; progress notifications of a call are counted in its output.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const [base, token, planText] = process.argv.slice(2);
const plan = JSON.parse(planText);
const capabilities = plan.elicit ? { elicitation: { form: {} } } : {};
const client = new Client({ name: "lattice-e2e", version: "1.0.0" }, { capabilities });
const elicited = [];
if (plan.elicit) {
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    elicited.push(request.params.message);
    return plan.elicit === "accept" ? { action: "accept", content: {} } : { action: "decline" };
  });
}
const out = { steps: [], elicited };

async function run(step) {
  try {
    if (step.list) return (await client.listTools()).tools.map((t) => ({ name: t.name, meta: t._meta ?? null }));
    if (step.read) return await client.readResource({ uri: step.read });
    if (step.parallel) return await Promise.all(step.parallel.map(run));
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
