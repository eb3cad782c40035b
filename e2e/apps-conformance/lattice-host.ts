// lattice-host.ts: an MCP Apps *host* conformance adapter for lattice's chat.
//
// It implements the `Host` interface of the ext-apps conformance runner
// (modelcontextprotocol/ext-apps PR #726, `src/conformance`) against lattice:
//
//   setup     provisions a workspace and a thread over lattice's HTTP API (dev tokens),
//             opens the thread's chat page in headless Chromium, signed in through
//             localStorage, has the agent call `conformance__run_conformance` with the
//             deterministic `scripted:call` model, and returns a bridge to the app's
//             `window.__mcpConformance` (in the inner of lattice's two app frames).
//   clickTrigger       a real click on the app's trigger button, then the person's answer to
//                      lattice's own confirmation dialog ("Post" for ui/message, "Open link"
//                      for ui/open-link); with commitDraftedMessage it also gives the agent its
//                      next turn: a run prompted with the posted text, with the deterministic
//                      model `scripted:context`, which says back what the thread's apps told
//                      it through ui/update-model-context (FOLLOWUP_MODEL overrides it).
//   conversationContains  reads the thread's timeline (`article.message`) in the page.
//   checkLinkOpen      looks for a tab opened at the URL.
//   readModelToolList  asks `scripted:call` to call each of the server's tools
//                      (see the method for what this can and cannot tell).
//   inspectFrame, toggleTheme, readConsole, resetBetweenTests.
//
// Everything it sees along the way (runs, dialogs, console lines, refusals) is kept in
// `diagnostics` and written next to the results by main().
//
// Paths come from the environment (see configFromEnv and README.md):
//   CONFORMANCE_RUNNER_DIR  ext-apps' src/conformance (runner.ts, protocol.ts), PR #726
//   LATTICE_BIN             a lattice binary: if set, main() starts `lattice up` itself and
//                           stops it at the end; unset, a lattice must already answer at LATTICE_URL
//   LATTICE_WEB_DIR         the chat host's built files for that lattice (lattice's own variable;
//                           unset, lattice looks in `web/` beside the binary's folder, i.e. target/web)
//   LATTICE_WORKDIR         where that lattice keeps lattice.toml and data/ (unset: a fresh temp folder)
//
// Only the runner's `Runner` and `CHANNEL` are loaded from CONFORMANCE_RUNNER_DIR; the
// types below are the shapes of its host.ts and protocol.ts.

import { chromium, type Browser, type BrowserContext, type Frame, type Page } from "playwright";
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, openSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

// ---------------------------------------------------------------- the runner (PR #726)

/** `CapabilityResult` of src/conformance/protocol.ts. */
export interface CapabilityResult { ok: boolean; value?: unknown; error?: string; unsupported?: boolean }
/** `SubtestResult` of src/conformance/protocol.ts (the fields this file reads). */
export interface SubtestResult { id: string; name: string; status: string; message?: string; [k: string]: unknown }
/** `SetupOptions` and `SuiteBridge` of src/conformance/host.ts. */
export interface SetupOptions { appName: string; profileDir: string; recordVideoDir?: string }
export interface SuiteBridge {
  listTests(): Promise<unknown[]>;
  start(filter?: { manual?: boolean; id?: string }): Promise<void>;
  poll(): Promise<any>;
  resolve(result: CapabilityResult): Promise<void>;
}

/** `Host` of src/conformance/host.ts: setup and teardown, and the capabilities this adapter has. */
export interface Host {
  readonly name: string;
  setup(opts: SetupOptions): Promise<SuiteBridge>;
  teardown(): Promise<void>;
  clickTrigger?(req: { commitDraftedMessage?: boolean }): Promise<CapabilityResult>;
  confirmDialog?(dialog: "download" | "sampling"): Promise<CapabilityResult>;
  checkLinkOpen?(url: string): Promise<CapabilityResult>;
  conversationContains?(marker: string, timeoutMs: number): Promise<CapabilityResult>;
  toggleTheme?(to: "light" | "dark"): Promise<CapabilityResult>;
  readModelToolList?(): Promise<CapabilityResult>;
  inspectFrame?(): Promise<CapabilityResult>;
  readConsole?(pattern: string, timeoutMs: number): Promise<CapabilityResult>;
  resetBetweenTests?(): Promise<void>;
}

const HERE = dirname(fileURLToPath(import.meta.url));
/** ext-apps' src/conformance: CONFORMANCE_RUNNER_DIR, or ../ext-apps/src/conformance beside this folder. */
export const RUNNER_DIR = resolve(process.env.CONFORMANCE_RUNNER_DIR ?? join(HERE, "..", "ext-apps", "src", "conformance"));
for (const f of ["runner.ts", "protocol.ts"]) {
  if (!existsSync(join(RUNNER_DIR, f))) {
    throw new Error(`no ${f} in ${RUNNER_DIR}: set CONFORMANCE_RUNNER_DIR to the src/conformance folder of an ext-apps checkout at PR #726`);
  }
}
const { Runner } = (await import(pathToFileURL(join(RUNNER_DIR, "runner.ts")).href)) as {
  Runner: new (host: any, opts: SetupOptions, pollMs?: number) => { run(filter?: { manual?: boolean; id?: string }): Promise<SubtestResult[]> };
};
const { CHANNEL } = (await import(pathToFileURL(join(RUNNER_DIR, "protocol.ts")).href)) as { CHANNEL: string };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export interface LatticeConfig {
  /** The chat and the API, e.g. http://127.0.0.1:8480 */
  base: string;
  /** The connected server's name in lattice.toml (`[mcp_servers.<name>]`). */
  server: string;
  /** The server's own MCP endpoint, read once to learn its tool names (never by the browser). */
  serverUrl: string;
  /** The launching tool, as the server names it. */
  launchTool: string;
  /** A Chromium executable; empty: Playwright's own. */
  chromium: string;
  headless: boolean;
  /** Log every message the host sends the app (as JSON) to the console diagnostics. */
  trace: boolean;
  /** The model of the agent's turns that call a tool (setup, readModelToolList): `scripted:call`. */
  toolModel: string;
  /**
   * The model of the agent's turn after an app's ui/message (commitDraftedMessage):
   * `scripted:context`, which says back what the thread's apps told it.
   */
  followupModel: string;
}

interface Diagnostics {
  thread?: string;
  workspace?: string;
  launchRun?: unknown;
  launchToolResult?: unknown;
  launchReply?: string;
  runs: Array<{ purpose: string; prompt: string; model: string; id: string; status?: string; reply?: string }>;
  dialogs: Array<{ at: string; text: string; pressed: string | null }>;
  popups: string[];
  console: string[];
  notes: string[];
  appContext?: unknown[];
  serverTools?: Array<{ name: string; visibility?: string[] }>;
  /** The workspace's log at teardown (GET /v1/workspaces/{ws}/events?format=json, every page). */
  workspaceEvents?: any[];
  /** Of those, the tool-call audit rows: `mcp_tool_call` (the agent's) and `app_tool_call` (an app's). */
  toolCallAudit?: any[];
}

/** The lattice chat host, driven as a person would drive it in a browser. */
export class LatticeHost implements Host {
  readonly name = "lattice";
  readonly diagnostics: Diagnostics = { runs: [], dialogs: [], popups: [], console: [], notes: [] };

  private browser?: Browser;
  private context?: BrowserContext;
  private page!: Page;
  private token = "";
  private thread = "";
  /** Runs this adapter started that may still be going (the agent's turns). */
  private ourRuns = new Set<string>();

  constructor(private readonly cfg: LatticeConfig) {}

  // ---------------------------------------------------------------- lattice's HTTP API

  private async api<T = any>(method: string, path: string, body?: unknown, token = this.token): Promise<T> {
    const res = await fetch(this.cfg.base + path, {
      method,
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  private async devToken(tenant: string, user: string, role: string): Promise<string> {
    return (await this.api<{ token: string }>("POST", "/v1/dev/token", { tenant, user, role }, "")).token;
  }

  /** Every event of the thread so far (`?format=json` pages, followed with `after`). */
  private async threadEvents(): Promise<any[]> {
    const all: any[] = [];
    let after = 0;
    for (;;) {
      const page = await this.api<{ events: any[] }>("GET", `/v1/threads/${this.thread}/events?format=json&after=${after}`);
      if (!page.events.length) return all;
      all.push(...page.events);
      after = page.events[page.events.length - 1].seq;
    }
  }

  /** Every event of the workspace's log so far (`?format=json` pages, followed with `after`). */
  private async workspaceEvents(ws: string): Promise<any[]> {
    const all: any[] = [];
    let after: unknown = 0;
    for (;;) {
      const page = await this.api<{ events: any[] }>("GET", `/v1/workspaces/${ws}/events?format=json&after=${after}`);
      if (!page.events?.length) return all;
      all.push(...page.events);
      const last = page.events[page.events.length - 1];
      const next = last.seq ?? last.id;
      if (next === undefined || next === after) return all;
      after = next;
    }
  }

  /**
   * Starts an agent turn. By default with the deterministic model that calls the tool its
   * prompt names (`tool=<server>__<tool>`); the turn after an app's ui/message passes its own.
   */
  private async startRun(prompt: string, purpose: string, model = this.cfg.toolModel): Promise<string> {
    const { run_id } = await this.api<{ run_id: string }>("POST", `/v1/threads/${this.thread}/runs`, { prompt, model });
    this.ourRuns.add(run_id);
    this.diagnostics.runs.push({ purpose, prompt, model, id: run_id });
    return run_id;
  }

  /** Waits for a run to end; returns it with the agent's final words (run_finished's text). */
  private async finishRun(id: string, timeoutMs = 60_000): Promise<{ run: any; reply?: string }> {
    const deadline = Date.now() + timeoutMs;
    let run: any;
    for (;;) {
      run = await this.api("GET", `/v1/runs/${id}`);
      if (!["running", "queued", "pending"].includes(run.status) || Date.now() > deadline) break;
      await sleep(250);
    }
    const ended = (await this.threadEvents()).find(
      (e) => (e.type === "run_finished" || e.type === "run_failed") && e.payload?.run_id === id,
    );
    const reply: string | undefined = ended?.payload?.text ?? ended?.payload?.error;
    const entry = this.diagnostics.runs.find((r) => r.id === id);
    if (entry) Object.assign(entry, { status: run.status, reply });
    if (run.status !== "running") this.ourRuns.delete(id);
    return { run, reply };
  }

  // ---------------------------------------------------------------- setup / teardown

  async setup(_opts: SetupOptions): Promise<SuiteBridge> {
    try {
      return await this.open();
    } catch (e) {
      // The Runner only tears down after a successful setup: close the browser ourselves.
      await this.teardown();
      throw e;
    }
  }

  private async open(): Promise<SuiteBridge> {
    const d = this.diagnostics;

    // 1. The deployment's admin turns mini apps on; a tenant admin gets a workspace and a thread.
    const root = await this.devToken("ops", "root", "deployment_admin");
    await this.api("PUT", "/v1/integrations/deployment/ui:mini-apps", { state: "on", reason: "conformance" }, root);
    this.token = await this.devToken("acme", "ana", "tenant_admin");
    const ws = await this.api<{ id: string }>("POST", "/v1/workspaces", { name: "Conf" });
    const th = await this.api<{ id: string }>("POST", `/v1/workspaces/${ws.id}/threads`, { title: "Conf" });
    this.thread = d.thread = th.id;
    d.workspace = ws.id;
    d.serverTools = await this.serverTools().catch((e) => (d.notes.push(`tools/list failed: ${e}`), undefined));

    // 2. A browser signed in as ana. The chat keeps its token in localStorage["lattice.token"]
    //    (the e2e suite hands it over as `#token=` in the URL, which the page moves there);
    //    an init script puts it there before the chat's own script runs.
    this.browser = await chromium.launch({
      executablePath: this.cfg.chromium || undefined,
      headless: this.cfg.headless,
      args: ["--no-sandbox", "--disable-gpu", "--no-first-run"],
    });
    this.context = await this.browser.newContext({ colorScheme: "light" });
    const origin = new URL(this.cfg.base).origin;
    await this.context.addInitScript(
      ([o, t]) => {
        if (location.origin === o) localStorage.setItem("lattice.token", t);
      },
      [origin, this.token] as const,
    );
    // The machine is offline. Stub the two outside addresses the suite touches, so that
    // (a) ui/open-link's tab really loads the URL and (b) a fetch to example.com would
    // *succeed* if the app's policy let it through: a PASS of csp-no-loosening is the
    // policy's doing, not the lack of a network. (A request a CSP blocks never gets here.)
    const stub = (body: string) => (r: any) => r.fulfill({ status: 200, contentType: "text/html", body });
    await this.context.route("https://modelcontextprotocol.io/**", stub("<h1>stub: modelcontextprotocol.io</h1>"));
    await this.context.route("https://example.com/**", stub("<h1>stub: example.com</h1>"));
    this.context.on("console", (m) => d.console.push(`[${m.type()}] ${m.text()}`.slice(0, 2000)));
    this.page = await this.context.newPage();
    // Tabs the host opens (ui/open-link), and where they go.
    this.context.on("page", (p) => {
      d.popups.push(`opened: ${p.url()}`);
      p.on("framenavigated", (f) => f === p.mainFrame() && d.popups.push(`navigated: ${f.url()}`));
    });
    await this.page.goto(`${this.cfg.base}/t/${this.thread}`);
    // The chat is ready once its composer is drawn.
    await this.page.getByRole("button", { name: "Ask the agent" }).waitFor({ timeout: 30_000 });

    // 3. The agent calls the launching tool; lattice reads the app and puts it in the thread.
    const tool = `${this.cfg.server}__${this.cfg.launchTool}`;
    const runId = await this.startRun(`tool=${tool}`, "launch the conformance app");
    const { run, reply } = await this.finishRun(runId);
    d.launchRun = run;
    d.launchReply = reply;
    d.launchToolResult = (await this.threadEvents()).find(
      (e) => e.type === "tool_returned" && e.payload?.run_id === runId,
    )?.payload?.result;

    // 4. Wait for the outer frame and for the app to install its channel in the inner one.
    const shown = (d.launchToolResult as any)?.app?.shown;
    const deadline = Date.now() + (shown === false ? 10_000 : 60_000);
    while (Date.now() < deadline) {
      const frame = await this.findAppFrame();
      if (frame) {
        if (this.cfg.trace) {
          // From here on, what the host (through the proxy) says to the app, verbatim.
          await frame.evaluate(() =>
            window.addEventListener("message", (e) => console.log(`[trace host->app] ${JSON.stringify(e.data).slice(0, 1500)}`)),
          );
        }
        return this.bridge();
      }
      await sleep(500);
    }
    const why = (d.launchToolResult as any)?.app?.why;
    throw new Error(
      `the conformance app did not render in lattice (no frame exposes window.${CHANNEL}); ` +
        `run ${runId} ${run.status}, agent said ${JSON.stringify(reply)}; ` +
        `tool result app: ${JSON.stringify((d.launchToolResult as any)?.app ?? null)}` +
        (why ? ` — lattice refused it: ${why}` : ""),
    );
  }

  async teardown(): Promise<void> {
    if (this.thread && this.token) {
      // Evidence for the report: what ui/update-model-context left with lattice.
      this.diagnostics.appContext = await this.threadEvents()
        .then((ev) => ev.filter((e) => /context/.test(e.type)).map((e) => ({ type: e.type, payload: e.payload })))
        .catch(() => undefined);
    }
    if (this.diagnostics.workspace && this.token) {
      // Evidence for the report: the audit rows lattice wrote for the agent's and the app's tool calls.
      const ev = await this.workspaceEvents(this.diagnostics.workspace).catch((e) => {
        this.diagnostics.notes.push(`workspace events failed: ${e}`);
        return undefined;
      });
      if (ev) {
        this.diagnostics.workspaceEvents = ev;
        this.diagnostics.toolCallAudit = ev.filter((e) => /(^|[^a-z_])(mcp_tool_call|app_tool_call)([^a-z_]|$)/.test(JSON.stringify(e)));
      }
    }
    await this.browser?.close().catch(() => {});
    this.browser = undefined;
  }

  /** The server's tools and their visibility, read from the server itself (stateless HTTP). */
  private async serverTools(): Promise<Array<{ name: string; visibility?: string[] }>> {
    const res = await fetch(this.cfg.serverUrl, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
    });
    const text = await res.text();
    const json = JSON.parse(text.startsWith("{") ? text : text.split("\n").find((l) => l.startsWith("data:"))!.slice(5));
    return json.result.tools.map((t: any) => ({ name: t.name, visibility: t._meta?.ui?.visibility }));
  }

  // ---------------------------------------------------------------- the bridge into the app

  /** The frame (at any depth) whose window has the suite's channel, or null. */
  private async findAppFrame(): Promise<Frame | null> {
    for (const f of this.page.frames()) {
      if (f === this.page.mainFrame()) continue;
      try {
        if (await f.evaluate((k) => Boolean((globalThis as any)[k]), CHANNEL)) return f;
      } catch {
        /* a frame that is navigating or gone */
      }
    }
    return null;
  }

  private async appFrame(): Promise<Frame> {
    const f = await this.findAppFrame();
    if (!f) throw new Error(`no frame exposes window.${CHANNEL} any more`);
    return f;
  }

  private bridge(): SuiteBridge {
    const call = async (method: string, arg?: unknown) =>
      (await this.appFrame()).evaluate(
        ([k, m, a]) => (globalThis as any)[k][m](a),
        [CHANNEL, method, arg ?? null] as const,
      );
    return {
      listTests: () => call("listTests") as any,
      start: (filter) => call("start", filter ?? null) as Promise<void>,
      poll: () => call("poll") as any,
      resolve: (r) => call("resolve", r) as Promise<void>,
    };
  }

  // ---------------------------------------------------------------- capabilities

  /**
   * A real (trusted) click on the app's trigger, then whatever lattice asks the person:
   * ui/message opens "… wants to post in the thread" (Post), ui/open-link opens a dialog
   * with the full address (Open link). We answer yes, as the person running the suite would.
   * With commitDraftedMessage, the posted text then goes to the agent as its next turn.
   */
  async clickTrigger(req: { commitDraftedMessage?: boolean }): Promise<CapabilityResult> {
    const frame = await this.appFrame();
    await frame.getByTestId("conformance-trigger").click({ timeout: 10_000 });
    const answered = await this.answerDialog(["Post", "Open link"], 10_000);
    if (req.commitDraftedMessage && answered?.pressed === "Post") {
      // lattice posts an app's ui/message as the person's message but does not start the agent:
      // a person would now ask the agent. lattice's composer offers no deterministic model, so
      // the turn is started over the API, prompted with the posted text (in
      // model-context/provide-future-turns: "What is the secret conformance code I gave you?"),
      // with `scripted:context`: it answers from what the thread's apps told it through
      // ui/update-model-context, as the model call carries it, and calls no tool.
      const posted = await this.waitForPostedText(answered.text);
      const run = await this.startRun(posted ?? answered.text, "the agent's turn after the app's ui/message", this.cfg.followupModel);
      void this.finishRun(run).catch(() => {});
    }
    return { ok: true, value: answered ?? undefined };
  }

  /** Presses the first of `buttons` that appears in a dialog of the top page; null if none did. */
  private async answerDialog(buttons: string[], timeoutMs: number): Promise<{ text: string; pressed: string | null } | null> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const dialogs = this.page.locator('[role="dialog"], [role="alertdialog"], dialog[open]');
      for (let i = 0; i < (await dialogs.count()); i++) {
        const dialog = dialogs.nth(i);
        if (!(await dialog.isVisible().catch(() => false))) continue;
        for (const name of buttons) {
          const button = dialog.getByRole("button", { name, exact: true });
          if (await button.count()) {
            const text = ((await dialog.innerText().catch(() => "")) || "").trim();
            await button.first().click({ timeout: 5_000 });
            const entry = { at: new Date().toISOString(), text, pressed: name };
            this.diagnostics.dialogs.push(entry);
            return entry;
          }
        }
      }
      await sleep(200);
    }
    this.diagnostics.notes.push(`no confirmation dialog (${buttons.join(" / ")}) within ${timeoutMs} ms after a trigger click`);
    return null;
  }

  /** The newest `article.message` text after a Post (the message the app asked to post). */
  private async waitForPostedText(dialogText: string): Promise<string | null> {
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const texts = await this.timeline();
      const last = texts[texts.length - 1];
      if (last && dialogText.includes(last.body)) return last.body;
      await sleep(250);
    }
    return null;
  }

  /** The thread's messages as drawn: each `article.message`, its whole text and its body. */
  private async timeline(): Promise<Array<{ all: string; body: string }>> {
    return this.page.$$eval("article.message", (els) =>
      els.map((el) => ({
        all: (el as HTMLElement).innerText,
        body: ((el.querySelector(".text") as HTMLElement | null)?.innerText ?? "").trim(),
      })),
    );
  }

  /**
   * Whether `marker` shows in the thread's timeline. Waits up to timeoutMs, but stops early
   * once the agent turns this adapter started have ended and the timeline has been quiet for
   * 10 s: nothing else in a lattice thread would post after that.
   */
  async conversationContains(marker: string, timeoutMs: number): Promise<CapabilityResult> {
    const deadline = Date.now() + timeoutMs;
    let lastCount = -1;
    let quietSince = Date.now();
    for (;;) {
      const texts = await this.timeline();
      const hit = texts.find((t) => t.all.includes(marker));
      if (hit) {
        this.diagnostics.notes.push(`conversationContains(${JSON.stringify(marker)}): found in ${JSON.stringify(hit.all)}`);
        return { ok: true, value: hit.all };
      }
      if (texts.length !== lastCount) {
        lastCount = texts.length;
        quietSince = Date.now();
      }
      for (const id of [...this.ourRuns]) await this.finishRun(id, 0).catch(() => {});
      const settled = this.ourRuns.size === 0 && Date.now() - quietSince > 10_000;
      if (settled || Date.now() > deadline) {
        const tail = texts.slice(-4).map((t) => t.all);
        this.diagnostics.notes.push(`conversationContains(${JSON.stringify(marker)}): not found; last messages ${JSON.stringify(tail)}`);
        return { ok: false, value: tail };
      }
      await sleep(500);
    }
  }

  /** A tab other than the chat's, at `url` (the stub answers it). Presses "Open link" if still asked. */
  async checkLinkOpen(url: string): Promise<CapabilityResult> {
    const want = url.replace(/\/+$/, "");
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      const tab = this.context!.pages().find((p) => p !== this.page && p.url().replace(/\/+$/, "").startsWith(want));
      if (tab) return { ok: true, value: tab.url() };
      await this.answerDialog(["Open link"], 500);
      await sleep(300);
    }
    return { ok: false, value: this.context!.pages().map((p) => p.url()) };
  }

  /** The top document's <iframe> elements: how many, how many sandboxed, the first sandbox. */
  async inspectFrame(): Promise<CapabilityResult> {
    const value = await this.page.evaluate(() => {
      const all = Array.from(document.querySelectorAll("iframe"));
      const sandboxed = all.filter((f) => f.hasAttribute("sandbox"));
      return {
        total: all.length,
        sandboxed: sandboxed.length,
        firstSandbox: sandboxed[0]?.getAttribute("sandbox") ?? null,
        frames: all.map((f) => ({ src: f.src, sandbox: f.getAttribute("sandbox"), allow: f.getAttribute("allow") })),
      };
    });
    return { ok: true, value };
  }

  /**
   * The names, as the server calls them, of the server's tools that lattice offers its model.
   * lattice has no endpoint that lists a model's tools, so each candidate is put to the
   * `scripted:call` model, which calls the named tool only if it is in the request's tool list
   * and otherwise replies "<tool> is not offered here." The launcher (already called by setup,
   * so offered) is not probed again: calling it would put a second conformance app in the thread.
   */
  async readModelToolList(): Promise<CapabilityResult> {
    const launch = this.cfg.launchTool;
    const candidates = (this.diagnostics.serverTools ?? []).map((t) => t.name).filter((n) => n !== launch);
    if (!candidates.length) candidates.push("conformance_probe", "model_only_probe");
    const offered = [launch];
    const replies: Record<string, string | undefined> = {};
    for (const name of candidates) {
      const tool = `${this.cfg.server}__${name}`;
      const { reply } = await this.finishRun(await this.startRun(`tool=${tool}`, `probe the model's tool list: ${name}`));
      replies[name] = reply;
      if (reply !== `${tool} is not offered here.`) offered.push(name);
    }
    this.diagnostics.notes.push(`readModelToolList replies: ${JSON.stringify(replies)}`);
    return { ok: true, value: offered };
  }

  /** The browser's colour scheme (lattice's own Scheme setting is "System" by default). */
  async toggleTheme(to: "light" | "dark"): Promise<CapabilityResult> {
    await this.page.emulateMedia({ colorScheme: to });
    return { ok: true };
  }

  async readConsole(pattern: string, timeoutMs: number): Promise<CapabilityResult> {
    const re = new RegExp(pattern, "i");
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.diagnostics.console.find((l) => re.test(l));
      if (hit) return { ok: true, value: hit };
      if (Date.now() > deadline) return { ok: false };
      await sleep(300);
    }
  }

  /** Before each manual test: only the chat's tab, no dialog open, the app inline, light scheme. */
  async resetBetweenTests(): Promise<void> {
    for (const p of this.context!.pages()) if (p !== this.page) await p.close().catch(() => {});
    await this.page.bringToFront();
    if (await this.page.locator('[role="dialog"]:visible, dialog[open]').count()) await this.page.keyboard.press("Escape");
    const frame = await this.findAppFrame();
    await frame?.getByTestId("reset-inline").click({ timeout: 5_000 }).catch(() => {});
    await this.page.emulateMedia({ colorScheme: "light" });
  }
}

// ---------------------------------------------------------------- configuration

/** The adapter's settings from the environment (every one has a default). */
export function configFromEnv(env = process.env): LatticeConfig {
  return {
    base: env.LATTICE_URL ?? "http://127.0.0.1:8480",
    server: env.CONFORMANCE_SERVER_NAME ?? "conformance",
    serverUrl: env.CONFORMANCE_SERVER_URL ?? "http://127.0.0.1:3917/mcp",
    launchTool: "run_conformance",
    // Unset: Playwright's own Chromium (`npx playwright install chromium`).
    chromium: env.CHROMIUM ?? "",
    headless: env.HEADLESS !== "0",
    trace: env.TRACE === "1",
    toolModel: env.TOOL_MODEL ?? "scripted:call",
    followupModel: env.FOLLOWUP_MODEL ?? "scripted:context",
  };
}

// ---------------------------------------------------------------- lattice, when LATTICE_BIN is set

export interface LatticeProcess {
  /** The folder it runs in: lattice.toml, data/, lattice.log. */
  workdir: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * With LATTICE_BIN set: starts `lattice up` in LATTICE_WORKDIR (unset: a fresh temp folder,
 * so an empty database), on LATTICE_URL's address and LATTICE_APPS_URL's (default
 * http://localhost:8481), with a lattice.toml that connects the conformance server at
 * CONFORMANCE_SERVER_URL (written only if the folder has none), and waits for /readyz.
 * LATTICE_WEB_DIR, if set, reaches lattice as its own setting. Without LATTICE_BIN: null,
 * and a lattice must already answer at LATTICE_URL.
 */
export async function startLattice(cfg: LatticeConfig, env = process.env): Promise<LatticeProcess | null> {
  if (!env.LATTICE_BIN) {
    const ready = await fetch(new URL("/readyz", cfg.base)).then((r) => r.ok, () => false);
    if (!ready) throw new Error(`no lattice answers at ${cfg.base}/readyz: start one, or set LATTICE_BIN to have the adapter start it`);
    return null;
  }
  const bin = resolve(env.LATTICE_BIN);
  if (!existsSync(bin)) throw new Error(`LATTICE_BIN: no file at ${bin}`);
  const workdir = resolve(env.LATTICE_WORKDIR ?? mkdtempSync(join(tmpdir(), "lattice-apps-conformance-")));
  mkdirSync(workdir, { recursive: true });
  const toml = join(workdir, "lattice.toml");
  if (!existsSync(toml)) {
    writeFileSync(
      toml,
      `# Written by lattice-host.ts: the conformance server, connected to lattice.\n` +
        `[mcp_servers.${cfg.server}]\nurl = ${JSON.stringify(cfg.serverUrl)}\nallow_internal = true\npolicy = { default = "allow" }\n`,
    );
  }
  const http = new URL(cfg.base);
  const apps = new URL(env.LATTICE_APPS_URL ?? "http://localhost:8481");
  const log = join(workdir, "lattice.log");
  const fd = openSync(log, "a");
  const child: ChildProcess = spawn(bin, ["--config", toml, "up"], {
    cwd: workdir,
    stdio: ["ignore", fd, fd],
    env: {
      ...env,
      LATTICE_PROFILE: env.LATTICE_PROFILE ?? "local",
      LATTICE_HTTP_ADDR: `127.0.0.1:${http.port || 80}`,
      LATTICE_PORTAL_ORIGIN: http.origin,
      LATTICE_APPS_ADDR: `127.0.0.1:${apps.port || 80}`,
      LATTICE_APPS_ORIGIN: apps.origin,
      LATTICE_AUTH_SECRET: env.LATTICE_AUTH_SECRET ?? randomBytes(32).toString("hex"),
      ...(env.LATTICE_WEB_DIR ? { LATTICE_WEB_DIR: resolve(env.LATTICE_WEB_DIR) } : {}),
    },
  });
  let exited: string | null = null;
  const gone = new Promise<void>((r) => child.once("exit", (code, signal) => ((exited = `${code ?? signal}`), r())));
  const stop = async () => {
    if (exited === null) {
      child.kill("SIGTERM");
      await Promise.race([gone, sleep(15_000)]);
      if (exited === null) child.kill("SIGKILL");
    }
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (exited !== null) throw new Error(`lattice exited (${exited}) before it was ready; see ${log}`);
    if (await fetch(new URL("/readyz", cfg.base)).then((r) => r.ok, () => false)) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`lattice was not ready at ${cfg.base}/readyz within 60 s; see ${log}`);
    }
    await sleep(500);
  }
  console.log(`lattice ${bin} (pid ${child.pid}) ready at ${cfg.base}, apps at ${apps.origin}; folder ${workdir}`);
  return { workdir, pid: child.pid!, stop };
}

// ---------------------------------------------------------------- command line

/** One full run of the suite: its results, or the error that stopped the runner. */
async function runOnce(cfg: LatticeConfig, filter?: { id?: string; manual?: boolean }) {
  const host = new LatticeHost(cfg);
  const startedAt = new Date().toISOString();
  let results: SubtestResult[] = [];
  let runnerError: string | undefined;
  try {
    // The runner hands profileDir to setup; this adapter launches a fresh browser and ignores it.
    results = await new Runner(host, { appName: "conformance", profileDir: join(tmpdir(), "lattice-apps-conformance-profile") }, 300).run(filter);
  } catch (e) {
    runnerError = (e as Error).message;
  }
  const counts = Object.fromEntries(["PASS", "FAIL", "TIMEOUT", "SKIP", "NOTRUN"].map((s) => [s, results.filter((r) => r.status === s).length]));
  return { startedAt, finishedAt: new Date().toISOString(), counts, runnerError, results, diagnostics: host.diagnostics };
}

async function main() {
  const env = process.env;
  const cfg = configFromEnv(env);
  const times = Number(env.RUNS ?? 1);
  const out = resolve(env.OUT ?? "results-lattice.json");
  const filter = env.ONLY ? { id: env.ONLY } : undefined;
  const lattice = await startLattice(cfg, env);
  const stopOnSignal = () => void lattice?.stop().finally(() => process.exit(130));
  process.once("SIGINT", stopOnSignal).once("SIGTERM", stopOnSignal);
  const runs = [];
  try {
    for (let i = 1; i <= times; i++) {
      console.log(`== run ${i}/${times} against lattice at ${cfg.base}${env.LABEL ? ` (${env.LABEL})` : ""}`);
      const r = await runOnce(cfg, filter);
      if (r.runnerError) console.log(`runner stopped: ${r.runnerError}`);
      for (const t of r.results) console.log(`${t.status.padEnd(7)} ${t.id}${t.message ? ` — ${t.message}` : ""}`);
      console.log(`[conformance] lattice: ${Object.entries(r.counts).map(([k, v]) => `${k} ${v}`).join(" · ")}`);
      runs.push(r);
    }
  } finally {
    await lattice?.stop();
  }
  const settings = {
    runnerDir: RUNNER_DIR,
    latticeBin: env.LATTICE_BIN ? resolve(env.LATTICE_BIN) : null,
    latticeWebDir: env.LATTICE_WEB_DIR ? resolve(env.LATTICE_WEB_DIR) : null,
    latticeWorkdir: lattice?.workdir ?? null,
    toolModel: cfg.toolModel,
    followupModel: cfg.followupModel,
    serverUrl: cfg.serverUrl,
  };
  writeFileSync(out, JSON.stringify({ host: "lattice", label: env.LABEL ?? null, base: cfg.base, settings, runs }, null, 2));
  console.log(`wrote ${out}`);
}

// Run the suite only when this file is the program (probe-app-calls.ts imports LatticeHost).
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await main();
