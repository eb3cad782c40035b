// An AG-UI session against lattice with the official client (`@ag-ui/client`
// HttpAgent), for the AG-UI suite: a run of the scripted ask_form model to its
// interrupt, an answer the form refuses, then the answer that resumes it;
// then a reconnect (lattice's `forwardedProps.reconnect`), whose
// MESSAGES_SNAPSHOT the client takes as its messages. Every event is checked
// against `@ag-ui/core`'s own schemas.
// Usage: node client.mjs BASE TOKEN THREAD [MODEL]; prints one JSON object.
// With MODEL, one run of that model only.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";

const [base, token, thread, model] = process.argv.slice(2);
const agent = new HttpAgent({ url: `${base}/v1/agui/threads/${thread}`, headers: { Authorization: `Bearer ${token}` }, threadId: thread });
agent.messages = [{ id: "u1", role: "user", content: "We have an incident: answer within expires_in_secs=3600." }];

const out = { runs: [], invalid: [] };
async function run(parameters) {
  const events = [];
  try {
    await agent.runAgent(parameters, {
      onEvent: ({ event }) => {
        const checked = EventSchemas.safeParse(event);
        if (!checked.success) out.invalid.push({ event, issues: checked.error.issues });
        events.push(event);
      },
    });
  } catch (e) {
    events.push({ thrown: String(e) });
  }
  out.runs.push(events);
  return events;
}

try {
  if (model) {
    await run({ forwardedProps: { model } });
    console.log(JSON.stringify(out));
    process.exit(0);
  }
  const first = await run({ forwardedProps: { model: "scripted:ask_form" } });
  const finished = first.find((e) => e.type === "RUN_FINISHED");
  const interrupt = finished?.outcome?.interrupts?.[0];
  out.interrupt = interrupt ?? null;
  if (interrupt) {
    // Refused: severity is not one of the form's choices.
    await run({ resume: [{ interruptId: interrupt.id, status: "resolved", payload: { date: "2026-12-01", severity: "catastrophic" } }] });
    await run({ resume: [{ interruptId: interrupt.id, status: "resolved", payload: { date: "2026-12-01", severity: "high", affected: ["API"] } }] });
    agent.messages = [];
    await run({ forwardedProps: { reconnect: true } });
    out.messages = agent.messages;
  }
} catch (e) {
  out.error = String(e);
}
console.log(JSON.stringify(out));
