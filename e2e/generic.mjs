// Generic-profile harness: drives a running iac-code-agui server started
// with --a2a-profile generic in front of a third-party A2A agent (the test
// agents of e2e/a2aagents, which behave alike) with the official
// @ag-ui/client 1.0.0 HttpAgent. Every run must end with exactly one
// expected terminal event, every event must pass the @ag-ui/core schema,
// and the client must print no [ag-ui] warning or error.
//
// Environment: AGUI_URL (required), AGENT_URL (the agent's base URL, for
// its out-of-band sign-in), SCENARIOS (comma-separated subset).
// The restart test runs two halves: SCENARIOS=interrupt prints
// {"name":"interrupt","threadId":…,"interrupt":…}; SCENARIOS=resumeAfter
// with THREAD_ID and INTERRUPT (that JSON) answers it. Prints one JSON line
// per scenario and exits 1 when any scenario fails.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { randomUUID } from "node:crypto";
import { captureDiagnostics, expect, runScenarios } from "./harness.mjs";

const url = process.env.AGUI_URL;
const agentURL = process.env.AGENT_URL ?? ""; // the test agent's base URL (auth)
if (!url) {
  console.log("AGUI_URL is required");
  process.exit(2);
}

const diagnostics = captureDiagnostics();

const QUESTION = "What is your name?";
// forwardedProps of another front end: the generic profile ignores them.
const props = { app: { theme: "dark" } };
const newAgent = (threadId = `generic-${randomUUID()}`) => new HttpAgent({ url, threadId });
const user = (agent, text) => agent.addMessage({ id: randomUUID(), role: "user", content: text });

async function run(agent, params = {}, { onEvent } = {}) {
  const events = [];
  const before = diagnostics.length;
  await agent.runAgent({ runId: randomUUID(), forwardedProps: props, ...params }, {
    onEvent: ({ event }) => {
      events.push({ ...event, at: Date.now() });
      onEvent?.(event, agent);
    },
  });
  for (const e of events) {
    const { at, ...plain } = e;
    const r = EventSchemas.safeParse(plain);
    if (!r.success) throw new Error(`event fails @ag-ui/core schema: ${JSON.stringify(plain)}`);
  }
  const terminals = events.filter((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR");
  return { events, terminals, terminal: terminals.at(-1), warnings: diagnostics.slice(before) };
}

function expectTerminal(r, type, extra = {}) {
  expect(r.terminals.length === 1, `want one terminal event, got ${r.terminals.map((e) => e.type).join(",") || "none"}`);
  expect(r.events[0]?.type === "RUN_STARTED", `first event is ${r.events[0]?.type}`);
  expect(r.terminal.type === type, `terminal ${JSON.stringify(r.terminal)}; want ${type}`);
  for (const [k, v] of Object.entries(extra)) {
    const got = k.split(".").reduce((o, p) => o?.[p], r.terminal);
    expect(JSON.stringify(got) === JSON.stringify(v), `terminal ${k} = ${JSON.stringify(got)}; want ${JSON.stringify(v)}`);
  }
}

const deltas = (r) => r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta);
const session = (r) => r.events.find((e) => e.type === "CUSTOM" && e.name === "iac-code.session.v1")?.value;

function expectHello(r) {
  expectTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
  // Each chunk exactly once, in order: three status chunks, the artifact.
  const got = deltas(r);
  expect(JSON.stringify(got) === JSON.stringify(["Hello", ", ", "world", " (from an artifact)"]), `deltas ${JSON.stringify(got)}`);
  const starts = r.events.filter((e) => e.type === "TEXT_MESSAGE_START").length;
  const ends = r.events.filter((e) => e.type === "TEXT_MESSAGE_END").length;
  expect(starts === 2 && ends === 2, `${starts} starts, ${ends} ends`);
}

async function ask(agent) {
  user(agent, "ask");
  const r = await run(agent);
  expectTerminal(r, "RUN_FINISHED", { "outcome.type": "interrupt" });
  const its = r.terminal.outcome.interrupts;
  expect(its.length === 1, `interrupts ${JSON.stringify(its)}`);
  const [it] = its;
  expect(it.reason === "input_required" && it.message === QUESTION, `interrupt ${JSON.stringify(it)}`);
  expect(it.responseSchema?.properties?.text?.type === "string" && it.responseSchema.required?.[0] === "text", `schema ${JSON.stringify(it.responseSchema)}`);
  expect(deltas(r).length === 0, `the question also streamed as text: ${deltas(r)}`);
  expect(agent.pendingInterrupts.length === 1 && agent.pendingInterrupts[0].id === it.id, "client has no pending interrupt");
  return [r, it];
}

async function answer(agent, it, text) {
  const r = await run(agent, { resume: [{ interruptId: it.id, status: "resolved", payload: { text } }] });
  expectTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
  const got = deltas(r);
  expect(JSON.stringify(got) === JSON.stringify([`you said: ${text}`]), `continuation deltas ${JSON.stringify(got)}`);
  return r;
}

const scenarios = {
  async hello() {
    const agent = newAgent();
    user(agent, "hello");
    const r = await run(agent);
    expectHello(r);
    expect(agent.messages.some((m) => m.role === "assistant" && m.content === "Hello, world"), `messages ${JSON.stringify(agent.messages)}`);
    return [r];
  },

  async ask() {
    const agent = newAgent();
    const [r, it] = await ask(agent);
    const ok = await answer(agent, it, "Ada");
    // The same answer again is a replay, not a second message to the agent.
    agent.pendingInterrupts = [it];
    const again = await run(agent, { resume: [{ interruptId: it.id, status: "resolved", payload: { text: "Ada" } }] });
    expectTerminal(again, "RUN_ERROR", { code: "RESUME_ALREADY_APPLIED" });
    return [r, ok, again];
  },

  async badAnswer() {
    const agent = newAgent();
    const [r, it] = await ask(agent);
    const bad = await run(agent, { resume: [{ interruptId: it.id, status: "resolved", payload: { answer: "Ada" } }] });
    expectTerminal(bad, "RUN_ERROR", { code: "RESUME_PAYLOAD_INVALID" });
    agent.pendingInterrupts = [it];
    const ok = await answer(agent, it, "Grace");
    return [r, bad, ok];
  },

  async cancelled() {
    const agent = newAgent();
    const [r, it] = await ask(agent);
    const c = await run(agent, { resume: [{ interruptId: it.id, status: "cancelled" }] });
    expectTerminal(c, "RUN_ERROR", { code: "CANCELLED" });
    // The thread is free for a new turn (the client keeps an interrupt a
    // RUN_ERROR ended; the server has none left).
    agent.pendingInterrupts = [];
    user(agent, "hello");
    const next = await run(agent);
    expectHello(next);
    return [r, c, next];
  },

  async auth() {
    const agent = newAgent();
    user(agent, "auth");
    const r = await run(agent);
    expectTerminal(r, "RUN_FINISHED", { "outcome.type": "interrupt" });
    const [it] = r.terminal.outcome.interrupts;
    expect(r.terminal.outcome.interrupts.length === 1 && it.reason === "auth_required" && it.message === "Sign in, then send the code.", `interrupt ${JSON.stringify(it)}`);
    // Signing in happens out of band, at the agent; the answer only says
    // it happened, and the run follows the task that goes on. The session
    // event leaves once the gateway follows the task: sign in then.
    let signedIn = null;
    const ok = await run(agent, { resume: [{ interruptId: it.id, status: "resolved", payload: { text: "done" } }] }, {
      onEvent: (e) => {
        if (e.type === "CUSTOM" && e.name === "iac-code.session.v1" && !signedIn) signedIn = fetch(`${agentURL}test/signin`, { method: "POST" });
      },
    });
    expect((await signedIn)?.status === 204, "sign-in not sent");
    expectTerminal(ok, "RUN_FINISHED", { "outcome.type": "success" });
    expect(JSON.stringify(deltas(ok)) === JSON.stringify(["signed in"]), `continuation deltas ${JSON.stringify(deltas(ok))}`);
    return [r, ok];
  },

  async fail() {
    const agent = newAgent();
    user(agent, "fail");
    const r = await run(agent);
    expectTerminal(r, "RUN_ERROR", { code: "A2A_EXECUTION_FAILED", message: "The agent failed on purpose." });
    return [r];
  },

  async twoTurns() {
    const agent = newAgent();
    user(agent, "hello");
    const r1 = await run(agent);
    expectHello(r1);
    const [r2, it] = await ask(agent);
    const r3 = await answer(agent, it, "Lin");
    user(agent, "hello");
    const r4 = await run(agent);
    expectHello(r4);
    const [s1, s2, s4] = [session(r1), session(r2), session(r4)];
    expect(s1 && s2 && s4, "no session event");
    expect(s1.contextId === s2.contextId && s2.contextId === s4.contextId, "the thread changed its A2A context");
    expect(new Set([s1.taskId, s2.taskId, s4.taskId]).size === 3, `a turn reused a task: ${s1.taskId} ${s2.taskId} ${s4.taskId}`);
    expect(session(r3).taskId === s2.taskId, "the answer went to another task");
    return [r1, r2, r3, r4];
  },

  async tools() {
    const agent = newAgent();
    user(agent, "hello");
    const r = await run(agent, {
      tools: [{ name: "showWeather", description: "Show the weather", parameters: { type: "object", properties: { city: { type: "string" } } } }],
      context: [{ description: "page", value: "settings" }],
      state: { draft: true },
    });
    expectHello(r);
    return [r];
  },

  async image() {
    // An image reaches the agent as an A2A 1.0 file part.
    const agent = newAgent();
    agent.addMessage({ id: randomUUID(), role: "user", content: [
      { type: "text", text: "image" },
      { type: "image", source: { type: "data", mimeType: "image/png", value: "iVBORw0KGgo=" }, metadata: { filename: "a.png" } },
    ] });
    const r = await run(agent);
    expectTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
    expect(JSON.stringify(deltas(r)) === JSON.stringify(["file a.png image/png 8 bytes"]), `deltas ${JSON.stringify(deltas(r))}`);
    return [r];
  },

  async slow() {
    const agent = newAgent();
    user(agent, "slow");
    const r = await run(agent);
    expectTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
    const contents = r.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT");
    expect(contents.length === 10, `${contents.length} chunks`);
    // The agent pauses 300 ms before each chunk: streamed, the chunks
    // arrive spread over at least most of that time, never in one burst.
    const spread = contents.at(-1).at - contents[0].at;
    expect(spread >= 2000, `chunks arrived within ${spread} ms: buffered, not streamed`);
    return [r];
  },

  async cancelRoute() {
    const agent = newAgent();
    user(agent, "slow");
    let requested = null;
    let sess = null;
    const r = await run(agent, {}, {
      onEvent: (e) => {
        if (e.type === "CUSTOM" && e.name === "iac-code.session.v1") sess = e.value;
        // Cancel once the task is streaming, through the cancellation
        // extension, keyed by the thread's execution.
        if (e.type === "TEXT_MESSAGE_CONTENT" && !requested) {
          requested = fetch(`${url.replace(/\/$/, "")}/extensions/iac-code/v1/executions/${sess.executionId}/cancel`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify({ threadId: sess.threadId, rosInvocationId: sess.rosInvocationId }),
          }).then(async (res) => ({ status: res.status, body: await res.json() }));
        }
      },
    });
    const c = await requested;
    expect(c?.status === 200 && c.body.status === "cancelled", `cancel answered ${JSON.stringify(c)}`);
    expectTerminal(r, "RUN_ERROR", { code: "CANCELLED" });
    return [r];
  },

  async subscribe() {
    // The observation route, keyed by the thread's execution, follows the
    // running task read-only while the run streams it too.
    const agent = newAgent();
    user(agent, "slow");
    const runId = randomUUID();
    let observed = null;
    const r = await run(agent, { runId }, {
      onEvent: (e) => {
        if (e.type === "CUSTOM" && e.name === "iac-code.session.v1" && !observed) {
          observed = fetch(`${url.replace(/\/$/, "")}/extensions/iac-code/v1/executions/${e.value.executionId}/subscribe`, {
            method: "POST",
            headers: { "Content-Type": "application/json", Accept: "text/event-stream" },
            body: JSON.stringify({ threadId: e.value.threadId, runId, rosInvocationId: e.value.rosInvocationId }),
          }).then(async (res) => ({ status: res.status, text: await res.text() }));
        }
      },
    });
    expectTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
    const o = await observed;
    expect(o?.status === 200, `subscribe answered ${o?.status}: ${o?.text}`);
    const evs = o.text.split("\n").filter((l) => l.startsWith("data: ")).map((l) => JSON.parse(l.slice(6)));
    expect(evs[0]?.type === "RUN_STARTED", `observation starts with ${evs[0]?.type}`);
    const end = evs.at(-1);
    expect(end?.type === "RUN_FINISHED" && end.outcome?.type === "success", `observation ends with ${JSON.stringify(end)}`);
    expect(evs.some((e) => e.type === "TEXT_MESSAGE_CONTENT" && /^chunk \d $/.test(e.delta)), "the observation saw no chunk");
    return [r];
  },

  async interrupt() {
    const agent = newAgent();
    const [r, it] = await ask(agent);
    console.log(JSON.stringify({ name: "interrupt-info", threadId: agent.threadId, interrupt: it }));
    return [r];
  },

  async resumeAfter() {
    const agent = newAgent(process.env.THREAD_ID);
    const it = JSON.parse(process.env.INTERRUPT);
    agent.pendingInterrupts = [it];
    const ok = await answer(agent, it, "after a crash");
    return [ok];
  },
};

const selected = (process.env.SCENARIOS || "hello,ask,badAnswer,cancelled,auth,fail,twoTurns,tools,image,slow,cancelRoute,subscribe").split(",").filter(Boolean);
await runScenarios(scenarios, selected, diagnostics);
