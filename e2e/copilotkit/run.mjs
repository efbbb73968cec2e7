// CopilotKit end to end: the real CopilotKit v2 runtime (@copilotkit/runtime
// 1.75.0, CopilotRuntime with an HttpAgent from @ag-ui/client 0.0.59 per
// agent) in front of two iac-code-agui binaries, one started as is
// ("strict") and one with --compat copilotkit ("compat"), and
// @copilotkit/core 1.75.0 as the client, used the way @copilotkit/react-core's
// useInterrupt uses it (interruptClient below mirrors its 1.74.0 code).
//
// Environment: STRICT_URL, COMPAT_URL (the two binaries), AGUI_CWD
// (workspace), SCENARIOS (comma-separated subset). Prints one JSON line per
// scenario and exits 1 when any fails.
//
// The one stand-in: @copilotkit/core connects to its runtime only in a
// browser (it checks `typeof window`), so a minimal window is defined below;
// everything else is the packages' own code over loopback HTTP.
import { createServer } from "node:http";
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";
import { CopilotKitCore, ɵInterruptState as InterruptState } from "@copilotkit/core";

globalThis.window = globalThis;
globalThis.location = new URL("http://127.0.0.1/");

const cwd = process.env.AGUI_CWD;
const urls = { strict: process.env.STRICT_URL, compat: process.env.COMPAT_URL };
if (!cwd || !urls.strict || !urls.compat) {
  console.log("STRICT_URL, COMPAT_URL and AGUI_CWD are required");
  process.exit(2);
}

// The recipe's runtime (docs/copilotkit.md): one HttpAgent per server.
const runtime = new CopilotRuntime({
  agents: { strict: new HttpAgent({ url: urls.strict }), compat: new HttpAgent({ url: urls.compat }) },
});
const server = createServer(createCopilotNodeListener({ runtime, basePath: "/api/copilotkit", activateChannels: false }));
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const runtimeUrl = `http://127.0.0.1:${server.address().port}/api/copilotkit`;

const iacCode = (extra = {}) => ({ iacCode: { schemaVersion: 1, rosInvocationId: `inv-${randomUUID()}`, cwd, ...extra } });

function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}

// client is one browser tab: a CopilotKitCore, one of the runtime's agents
// on a thread, and a record of what the client saw.
async function client(agentId, { threadId = `ck-${randomUUID()}`, props = iacCode(), tools = [] } = {}) {
  const core = new CopilotKitCore({ runtimeUrl, properties: props, tools });
  const errors = [];
  core.subscribe({ onError: ({ code, error }) => errors.push({ code, message: error?.message ?? String(error) }) });
  for (let i = 0; i < 100 && core.runtimeConnectionStatus !== "connected"; i++) await new Promise((r) => setTimeout(r, 50));
  expect(core.runtimeConnectionStatus === "connected", `runtime connection ${core.runtimeConnectionStatus}`);
  const agent = core.getAgent(agentId);
  expect(agent, `no agent ${agentId}`);
  agent.threadId = threadId;
  const seen = { events: [], terminal: null };
  agent.subscribe({
    onEvent: ({ event }) => {
      seen.events.push(event);
      if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") seen.terminal = event;
    },
  });
  const tab = {
    core, agent, errors, seen, props, threadId,
    async send(text, forwardedProps) {
      agent.addMessage({ id: randomUUID(), role: "user", content: text });
      return tab.run({ forwardedProps });
    },
    // run is CopilotKitCore.runAgent; it reports failures through onError.
    async run(params = {}) {
      seen.events.length = 0;
      seen.terminal = null;
      const before = errors.length;
      await core.runAgent({ agent, ...params });
      return { terminal: seen.terminal, events: [...seen.events], errors: errors.slice(before) };
    },
  };
  return tab;
}

// interruptClient mirrors @copilotkit/react-core 1.74.0 useInterrupt: it
// remembers which run raised each interrupt, and resolve()/cancel() add
// the tool results and resume with that run's id.
function interruptClient(tab) {
  const state = new InterruptState();
  const runIds = new Map();
  let local = null;
  tab.agent.subscribe({
    onRunFinishedEvent: (p) => {
      if (p.outcome === "interrupt") {
        for (const it of p.interrupts) runIds.set(it.id, p.input.runId);
        local = p.interrupts;
      }
    },
    onRunStartedEvent: () => {
      local = null;
      runIds.clear();
      state.clear();
    },
    onRunFinalized: () => {
      if (local?.length) state.setStandard(local);
      local = null;
    },
    onRunFailed: () => {
      local = null;
      runIds.clear();
      state.clear();
    },
  });
  const answer = async (decision) => {
    if (decision.kind !== "resume") return { decision };
    const runId = decision.resume.map((e) => runIds.get(e.interruptId)).find((id) => id !== undefined);
    for (const r of decision.toolResults) tab.agent.addMessage({ id: randomUUID(), role: "tool", toolCallId: r.toolCallId, content: r.content });
    return { runId, ...(await tab.run({ resume: decision.resume, ...(runId !== undefined ? { runId } : {}) })) };
  };
  return {
    get pending() { return state.pending; },
    // adopt installs interrupts learned elsewhere (a RESUME_REQUIRED body).
    adopt(interrupts) { state.setStandard(interrupts); },
    resolve: (payload, id) => answer(state.resolve(payload, id)),
    cancel: (id) => answer(state.cancel(id)),
  };
}

const text = (r) => r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta).join("");
const isInterrupt = (r) => r.terminal?.type === "RUN_FINISHED" && r.terminal.outcome?.type === "interrupt";
const isSuccess = (r) => r.terminal?.type === "RUN_FINISHED" && r.terminal.outcome?.type !== "interrupt";
const describe = (r) => JSON.stringify({ terminal: r.terminal, errors: r.errors });

// ourError digs our JSON error body out of what CopilotKit reports for a
// refusal before the stream: RUN_ERROR (INCOMPLETE_STREAM) or an onError
// message, both holding "HTTP <status>: <body>" as a string.
function ourError(r) {
  const texts = [r.terminal?.message, ...r.errors.map((e) => e.message)].filter(Boolean);
  for (const t of texts) {
    const m = /HTTP (\d{3}): (\{.*\})/s.exec(t);
    if (m) return { status: Number(m[1]), ...JSON.parse(m[2]).error };
  }
  return null;
}

const scenarios = {
  async normalTurn() {
    const tab = await client("strict");
    const r = await tab.send("Create a VPC template");
    expect(isSuccess(r), `normal turn: ${describe(r)}`);
    expect(text(r).includes("vpc.yaml"), "the answer does not mention vpc.yaml");
    const written = readFileSync(join(cwd, "vpc.yaml"), "utf8");
    expect(written.startsWith("ROSTemplateFormatVersion"), "vpc.yaml was not written into the workspace");
    const reply = tab.agent.messages.filter((m) => m.role === "assistant").at(-1);
    expect(reply?.content?.includes("vpc.yaml"), "CopilotKit's message list lacks the assistant reply");
  },

  async permissionStrictRefusesReusedRunId() {
    // Without --compat the protocol's rule holds: a resume needs a new run id.
    const tab = await client("strict");
    const ui = interruptClient(tab);
    expect(isInterrupt(await tab.send("Deploy it (permission)")), "no interrupt");
    const r = await ui.resolve({ decision: "allow_once" });
    expect(r.runId, "useInterrupt did not reuse the interrupted run's id");
    const e = ourError(r);
    expect(e?.status === 409 && e.code === "RUN_ID_CONFLICT", `want 409 RUN_ID_CONFLICT, got ${describe(r)}`);
  },

  async permissionCompat() {
    const tab = await client("compat");
    const ui = interruptClient(tab);
    const first = await tab.send("Deploy it (permission)");
    expect(isInterrupt(first), `no interrupt: ${describe(first)}`);
    expect(ui.pending?.interrupts?.[0]?.reason === "tool_call", "useInterrupt state has no permission");
    const r = await ui.resolve({ decision: "allow_once" });
    expect(r.runId === first.terminal.runId, "the resume did not reuse the interrupted run's id");
    expect(isSuccess(r), `resume: ${describe(r)}`);
    expect(text(r).length > 0, "the continuation streamed no text");
    expect(r.events.some((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === "toolu_demo_bash"), "no result for the permitted tool");
  },

  async question() {
    const tab = await client("compat", { props: iacCode({ runMode: "pipeline" }) });
    const ui = interruptClient(tab);
    const first = await tab.send("Plan a deployment and ask me a question");
    expect(isInterrupt(first), `no question: ${describe(first)}`);
    const [it] = ui.pending.interrupts;
    expect(it.reason === "input_required", `reason ${it.reason}`);
    const r = await ui.resolve({ selectedId: it.metadata.standardOptions[0].id });
    expect(isSuccess(r), `answer: ${describe(r)}`);
    expect(r.events.some((e) => e.type === "TOOL_CALL_RESULT"), "answered question has no TOOL_CALL_RESULT");
  },

  async cancelledAnswerThenNewMessage() {
    const tab = await client("compat", { props: iacCode({ runMode: "pipeline" }) });
    const ui = interruptClient(tab);
    expect(isInterrupt(await tab.send("Plan a deployment and ask me a question")), "no question");
    const c = await ui.cancel();
    expect(c.terminal?.type === "RUN_ERROR" && c.terminal.code === "CANCELLED", `cancel: ${describe(c)}`);
    // Known client limit: only RUN_FINISHED clears agent.pendingInterrupts,
    // so the next message fails inside the client ...
    expect(tab.agent.pendingInterrupts.length === 1, "the client cleared its interrupts itself");
    const stuck = await tab.send("Create a VPC template");
    expect(!stuck.terminal && stuck.errors.some((e) => /pending interrupt/.test(e.message)), `want the client-side refusal, got ${describe(stuck)}`);
    // ... and the recipe's remedy (docs/copilotkit.md) keeps a thread usable.
    const fixed = await client("compat", { props: iacCode({ runMode: "pipeline" }) });
    fixed.agent.subscribe({ onRunErrorEvent: () => { fixed.agent.pendingInterrupts = []; } });
    const fixedUI = interruptClient(fixed);
    expect(isInterrupt(await fixed.send("Plan a deployment and ask me a question")), "no question");
    const c2 = await fixedUI.cancel();
    expect(c2.terminal?.code === "CANCELLED", `cancel: ${describe(c2)}`);
    const r = await fixed.send("Create a VPC template", iacCode());
    expect(isSuccess(r), `new message after the remedy: ${describe(r)}`);
  },

  async reloadWithPendingInterrupt() {
    const before = await client("compat");
    expect(isInterrupt(await before.send("Deploy it (permission)")), "no interrupt");
    // A reload: a new client on the same thread knows nothing.
    const tab = await client("compat", { threadId: before.threadId, props: before.props });
    const ui = interruptClient(tab);
    const r = await tab.send("hello again");
    const e = ourError(r);
    expect(e?.status === 409 && e.code === "RESUME_REQUIRED", `want RESUME_REQUIRED, got ${describe(r)}`);
    expect(e.pendingInterrupts?.length === 1 && e.pendingInterrupts[0].reason === "tool_call", `pendingInterrupts ${JSON.stringify(e.pendingInterrupts)}`);
    // The recipe: adopt the listed interrupts and answer them.
    tab.agent.messages.pop();
    tab.agent.pendingInterrupts = e.pendingInterrupts;
    ui.adopt(e.pendingInterrupts);
    const ok = await ui.resolve({ decision: "allow_once" });
    expect(isSuccess(ok), `resume after reload: ${describe(ok)}`);
  },

  async frontendTool() {
    const tool = { name: "showToast", description: "Show a toast in the page", handler: async () => "shown" };
    const strict = await client("strict", { tools: [tool] });
    const refused = await strict.send("Create a VPC template");
    const e = ourError(refused);
    expect(e?.status === 400 && e.code === "INVALID_INPUT" && e.message === "Client-provided tools are not supported." && e.field === "/tools",
      `strict server with a front-end tool: ${describe(refused)}`);
    const compat = await client("compat", { tools: [tool] });
    const ok = await compat.send("Create a VPC template");
    expect(isSuccess(ok), `compat server with a front-end tool: ${describe(ok)}`);
  },
};

const only = process.env.SCENARIOS ? process.env.SCENARIOS.split(",") : Object.keys(scenarios);
let failed = 0;
for (const name of only) {
  const start = Date.now();
  try {
    await scenarios[name]();
    console.log(JSON.stringify({ name, ok: true, ms: Date.now() - start }));
  } catch (err) {
    failed++;
    console.log(JSON.stringify({ name, ok: false, ms: Date.now() - start, error: err.message }));
  }
}
server.close();
process.exit(failed ? 1 : 0);
