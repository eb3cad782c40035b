// probe-app-calls.ts: not part of the suite. The 8 conformance tests never have the app call a
// server tool, so this shows what lattice does (and audits) when the *upstream* conformance
// view calls the server's tools. It launches the app exactly as the adapter does, then, from
// inside the app's frame, sends the JSON-RPC `tools/call` requests that ext-apps'
// App.callServerTool would send (same message, same window.parent.postMessage path), and
// records the answers, any dialog lattice shows, and the workspace's tool-call audit rows.
import { writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { LatticeHost, configFromEnv, startLattice } from "./lattice-host";

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// The adapter's settings (LATTICE_URL, CONFORMANCE_SERVER_URL, CHROMIUM, …); with LATTICE_BIN
// set, a lattice of its own, as lattice-host.ts starts it.
const cfg = { ...configFromEnv(), trace: false };
const lattice = await startLattice(cfg);
const host = new LatticeHost(cfg);

const calls = [
  { id: 90001, name: "conformance_probe", arguments: { ping: "from-app" } }, // visibility ["app"]: must work
  { id: 90002, name: "model_only_probe", arguments: { ping: "from-app" } },  // visibility ["model"]: MUST be rejected (a JSON-RPC error)
  { id: 90003, name: "run_conformance", arguments: {} },                     // ["model","app"]
];
const out: any = { calls: [] };
await host.setup({} as any);
const h = host as any;
for (const c of calls) {
  const frame = await h.appFrame();
  // A string, not a function: tsx would wrap a named function in `__name`, absent in the page.
  const answer = frame.evaluate(`new Promise((resolve) => {
    const id = ${c.id};
    const t = setTimeout(() => resolve({ timeout: "no answer in 20 s" }), 20000);
    const l = (e) => {
      if (e.data && e.data.id === id && ("result" in e.data || "error" in e.data)) {
        clearTimeout(t); window.removeEventListener("message", l); resolve(e.data);
      }
    };
    window.addEventListener("message", l);
    window.parent.postMessage(${JSON.stringify({ jsonrpc: "2.0", id: c.id, method: "tools/call", params: { name: c.name, arguments: c.arguments } })}, "*");
  })`);
  // lattice may ask the person first; record what it says, and allow.
  const dialog = await Promise.race([
    h.answerDialog(["Allow", "Allow once", "Run", "Call", "Confirm", "Continue"], 8_000),
    answer.then(() => null),
  ]);
  out.calls.push({ request: c, dialog, answer: await answer });
}
// The declared connectDomains (https://modelcontextprotocol.io, stubbed by the adapter's route):
// may the app reach it? And which CSP does the app's document carry?
{
  const frame = await h.appFrame();
  out.declaredFetch = await frame.evaluate(`fetch("https://modelcontextprotocol.io/", { mode: "no-cors", cache: "no-store" })
    .then((r) => ({ ok: true, type: r.type }), (e) => ({ ok: false, error: String(e) }))`);
  out.appFrame = await frame.evaluate(`({ url: location.href.slice(0, 200), origin: location.origin,
    cspMeta: Array.from(document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]')).map((m) => m.content) })`);
  const parent = frame.parentFrame();
  out.proxyFrame = parent ? await parent.evaluate(`({ url: location.href.slice(0, 200),
    cspMeta: Array.from(document.querySelectorAll('meta[http-equiv="Content-Security-Policy" i]')).map((m) => m.content),
    inner: Array.from(document.querySelectorAll("iframe")).map((f) => ({ sandbox: f.getAttribute("sandbox"), allow: f.getAttribute("allow"), csp: f.getAttribute("csp") })) })`).catch((e: unknown) => String(e)) : null;
}
await sleep(1_000);
await host.teardown();
await lattice?.stop();
const d = host.diagnostics;
out.workspace = d.workspace;
out.thread = d.thread;
out.launchToolResult = d.launchToolResult;
out.toolCallAudit = d.toolCallAudit;
out.workspaceEventTypes = d.workspaceEvents?.map((e: any) => e.type);
out.dialogs = d.dialogs;
out.notes = d.notes;
out.console = d.console.filter((l) => !/^\[debug\]/.test(l));
writeFileSync(resolve(process.env.OUT ?? "probe-app-calls.json"), JSON.stringify(out, null, 2));
console.log("declared fetch:", JSON.stringify(out.declaredFetch));
console.log("app frame:", JSON.stringify(out.appFrame));
console.log("proxy frame:", JSON.stringify(out.proxyFrame));
for (const c of out.calls) console.log(c.request.name, JSON.stringify(c.dialog), JSON.stringify(c.answer).slice(0, 600));
for (const a of out.toolCallAudit ?? []) console.log(JSON.stringify(a.payload));
