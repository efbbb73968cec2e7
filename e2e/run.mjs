// Conformance harness: drives a running iac-code-agui server with the
// official @ag-ui/client 1.0.0 HttpAgent, one scenario per behaviour of the
// embedded agent. Every run must end with exactly one expected terminal
// event, and the client must print no [ag-ui] warning or error.
//
// Environment: AGUI_URL (required), AGUI_TOKEN, AGUI_CWD (workspace),
// SCENARIOS (comma-separated subset). Prints one JSON line per scenario and
// exits 1 when any scenario fails.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { randomUUID } from "node:crypto";
import { captureDiagnostics, expect, runScenarios } from "./harness.mjs";

const url = process.env.AGUI_URL;
const token = process.env.AGUI_TOKEN ?? "";
const cwd = process.env.AGUI_CWD ?? process.cwd();
if (!url) {
  console.log("AGUI_URL is required");
  process.exit(2);
}

// Capture the client's own diagnostics: any [ag-ui] line fails the scenario.
const diagnostics = captureDiagnostics();

const headers = token ? { Authorization: `Bearer ${token}` } : {};

function iacCode(extra = {}) {
  return { iacCode: { schemaVersion: 1, rosInvocationId: `inv-${randomUUID()}`, cwd, ...extra } };
}

function newAgent() {
  return new HttpAgent({ url, headers, threadId: `e2e-${randomUUID()}` });
}

// run performs one runAgent call and returns its events and terminal event.
async function run(agent, params, { onEvent } = {}) {
  const events = [];
  const before = diagnostics.length;
  await agent.runAgent({ runId: randomUUID(), ...params }, {
    onEvent: ({ event }) => {
      events.push(event);
      onEvent?.(event, agent);
    },
  });
  const terminals = events.filter((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR");
  for (const e of events) {
    const r = EventSchemas.safeParse(e);
    if (!r.success) throw new Error(`event fails @ag-ui/core schema: ${JSON.stringify(e)}`);
  }
  return { events, terminals, terminal: terminals.at(-1), warnings: diagnostics.slice(before) };
}

function expectSingleTerminal(r, type, extra = {}) {
  expect(r.terminals.length === 1, `want exactly one terminal event, got ${r.terminals.map((e) => e.type).join(",") || "none"}`);
  expect(r.events[0]?.type === "RUN_STARTED", `first event is ${r.events[0]?.type}`);
  expect(r.terminal.type === type, `terminal ${r.terminal.type} ${JSON.stringify(r.terminal)}; want ${type}`);
  for (const [k, v] of Object.entries(extra)) {
    expect(JSON.stringify(k.split(".").reduce((o, p) => o?.[p], r.terminal)) === JSON.stringify(v), `terminal ${k} = ${JSON.stringify(r.terminal)}; want ${JSON.stringify(v)}`);
  }
}

const has = (r, type, name) => r.events.some((e) => e.type === type && (name === undefined || e.name === name));

function user(agent, text) {
  agent.addMessage({ id: randomUUID(), role: "user", content: text });
}

async function cancelExecution(executionId, threadId, rosInvocationId) {
  const res = await fetch(`${url.replace(/\/$/, "")}/extensions/iac-code/v1/executions/${executionId}/cancel`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ threadId, rosInvocationId }),
  });
  return { status: res.status, body: await res.json() };
}

const scenarios = {
  async normal() {
    const agent = newAgent();
    user(agent, "Create a VPC template");
    const r = await run(agent, { forwardedProps: iacCode() });
    expectSingleTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
    for (const t of ["TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "REASONING_MESSAGE_CONTENT", "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT"]) {
      expect(has(r, t), `no ${t}`);
    }
    expect(has(r, "CUSTOM", "iac-code.session.v1"), "no session event");
    expect(has(r, "CUSTOM", "iac-code.artifact.v1"), "no artifact event");
    expect(Array.isArray(r.terminal.usage) && r.terminal.usage.length > 0, "no usage on RUN_FINISHED");
    expect(agent.messages.some((m) => m.role === "assistant" && /VPC/.test(m.content ?? "")), "assistant text lacks VPC");
    // A second turn on the same thread rotates the execution.
    user(agent, "Now an OSS bucket template");
    const r2 = await run(agent, { forwardedProps: iacCode() });
    expectSingleTerminal(r2, "RUN_FINISHED", { "outcome.type": "success" });
    const s1 = r.events.find((e) => e.name === "iac-code.session.v1").value;
    const s2 = r2.events.find((e) => e.name === "iac-code.session.v1").value;
    expect(s1.contextId === s2.contextId && s1.sessionId === s2.sessionId && s1.executionId !== s2.executionId, "second turn must keep the context and session and rotate the execution");
    return [r, r2];
  },

  async permission() {
    const agent = newAgent();
    user(agent, "Deploy the VPC stack (permission)");
    const props = iacCode();
    const r = await run(agent, { forwardedProps: props });
    expectSingleTerminal(r, "RUN_FINISHED", { "outcome.type": "interrupt" });
    const [it] = agent.pendingInterrupts;
    expect(agent.pendingInterrupts.length === 1 && it.reason === "tool_call", `pending ${JSON.stringify(agent.pendingInterrupts)}`);
    expect(it.responseSchema?.properties?.decision?.enum?.join() === "allow_once,deny", "permission schema");
    // An invalid payload is refused and the interrupt stays answerable.
    const bad = await run(agent, { forwardedProps: props, resume: [{ interruptId: it.id, status: "resolved", payload: { decision: "allow" } }] });
    expectSingleTerminal(bad, "RUN_ERROR", { code: "RESUME_PAYLOAD_INVALID" });
    agent.pendingInterrupts = [it];
    const ok = await run(agent, { forwardedProps: props, resume: [{ interruptId: it.id, status: "resolved", payload: { decision: "allow_once" } }] });
    expectSingleTerminal(ok, "RUN_FINISHED", { "outcome.type": "success" });
    expect(has(ok, "TOOL_CALL_RESULT"), "no tool result after allow_once");
    return [r, bad, ok];
  },

  async question() {
    const agent = newAgent();
    user(agent, "Plan a deployment and ask me a question");
    const props = iacCode({ runMode: "pipeline" });
    const r = await run(agent, { forwardedProps: props });
    expectSingleTerminal(r, "RUN_FINISHED", { "outcome.type": "interrupt" });
    const [it] = agent.pendingInterrupts;
    expect(it.reason === "input_required", `reason ${it.reason}`);
    const choice = it.metadata.standardOptions[0].id;
    const ok = await run(agent, { forwardedProps: props, resume: [{ interruptId: it.id, status: "resolved", payload: { selectedId: choice } }] });
    expectSingleTerminal(ok, "RUN_FINISHED");
    expect(ok.events.filter((e) => e.type === "TOOL_CALL_RESULT").length >= 1, "answered question has no TOOL_CALL_RESULT");
    return [r, ok];
  },

  async pipelinePermission() {
    // Steps close before the interrupt outcome and reopen in the resumed run.
    const agent = newAgent();
    user(agent, "Run the pipeline permission flow");
    const props = iacCode({ runMode: "pipeline" });
    const r = await run(agent, { forwardedProps: props });
    expectSingleTerminal(r, "RUN_FINISHED", { "outcome.type": "interrupt" });
    const [it] = agent.pendingInterrupts;
    const ok = await run(agent, { forwardedProps: props, resume: [{ interruptId: it.id, status: "resolved", payload: { decision: "allow_once" } }] });
    expectSingleTerminal(ok, "RUN_FINISHED", { "outcome.type": "success" });
    expect(ok.events[1]?.type === "STEP_STARTED", "the resumed run does not reopen the open step");
    return [r, ok];
  },

  async resourceSelection() {
    const agent = newAgent();
    user(agent, "Launch an ECS instance; select a vswitch");
    const props = iacCode();
    const r = await run(agent, { forwardedProps: props });
    expectSingleTerminal(r, "RUN_FINISHED", { "outcome.type": "interrupt" });
    const [it] = agent.pendingInterrupts;
    const opt = it.metadata.options[1];
    const ok = await run(agent, { forwardedProps: props, resume: [{ interruptId: it.id, status: "resolved", payload: { value: opt.id, label: opt.label } }] });
    expectSingleTerminal(ok, "RUN_FINISHED", { "outcome.type": "success" });
    const res = ok.events.filter((e) => e.type === "TOOL_CALL_RESULT" && e.toolCallId === it.toolCallId);
    expect(res.length === 1 && res[0].content === opt.label, `tool result ${JSON.stringify(res)}`);
    return [r, ok];
  },

  async pipeline() {
    const agent = newAgent();
    user(agent, "Run the selling pipeline");
    const r = await run(agent, { forwardedProps: iacCode({ runMode: "pipeline", pipelineName: "selling", candidatePresentation: "rich" }) });
    expectSingleTerminal(r, "RUN_FINISHED", { "outcome.type": "success" });
    expect(has(r, "STEP_STARTED") && has(r, "STEP_FINISHED"), "no steps");
    expect(has(r, "CUSTOM", "iac-code.pipeline.v1"), "no pipeline custom event");
    return [r];
  },

  async failure() {
    const agent = newAgent();
    user(agent, "Please fail this run");
    const r = await run(agent, { forwardedProps: iacCode() });
    expectSingleTerminal(r, "RUN_ERROR", { code: "A2A_EXECUTION_FAILED" });
    return [r];
  },

  async cancellation() {
    const agent = newAgent();
    user(agent, "cancel me: run a long deployment");
    const props = iacCode();
    let requested = null;
    const r = await run(agent, { forwardedProps: props }, {
      onEvent: (e) => {
        if (e.type === "CUSTOM" && e.name === "iac-code.session.v1" && !requested) {
          requested = cancelExecution(e.value.executionId, e.value.threadId, props.iacCode.rosInvocationId);
        }
      },
    });
    const c = await requested;
    expect(c?.status === 200 && c.body.status === "cancelled", `cancel answered ${JSON.stringify(c)}`);
    expectSingleTerminal(r, "RUN_ERROR", { code: "CANCELLED" });
    return [r];
  },

  async abort() {
    // Closing the connection is the only cancel signal @ag-ui/client sends.
    const agent = newAgent();
    user(agent, "slow: write a long Terraform module");
    const r = await run(agent, { forwardedProps: iacCode() }, {
      onEvent: (e, a) => {
        if (e.type === "TEXT_MESSAGE_CONTENT") a.abortRun();
      },
    });
    expect(r.warnings.length === 0, `warnings ${r.warnings}`);
    // The thread is released once the server saw the disconnect. Probe
    // with a request that can never start a run (another workspace): while
    // the aborted run holds the thread it gets THREAD_BUSY, afterwards
    // THREAD_BINDING_CONFLICT. @ag-ui/client itself would throw on a 409.
    let code = "";
    for (let i = 0; i < 100 && code !== "THREAD_BINDING_CONFLICT"; i++) {
      const res = await fetch(url, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...headers },
        body: JSON.stringify({ threadId: agent.threadId, runId: randomUUID(), state: {}, messages: [], tools: [], context: [], forwardedProps: iacCode({ cwd: `${cwd}-elsewhere` }) }),
      });
      code = (await res.json()).error?.code ?? "";
      if (code === "THREAD_BUSY") await new Promise((r) => setTimeout(r, 50));
    }
    expect(code === "THREAD_BINDING_CONFLICT", `thread not released after the abort: ${code}`);
    user(agent, "Create a VPC template");
    const next = await run(agent, { forwardedProps: iacCode() });
    expectSingleTerminal(next, "RUN_FINISHED", { "outcome.type": "success" });
    return [next];
  },

  async heartbeat() {
    // A stalled upstream: the server must keep the stream alive with the
    // ": heartbeat" comment, which the client ignores.
    const props = iacCode();
    const threadId = `e2e-${randomUUID()}`;
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", ...headers },
      body: JSON.stringify({ threadId, runId: randomUUID(), state: {}, messages: [{ id: randomUUID(), role: "user", content: "stall" }], tools: [], context: [], forwardedProps: props }),
    });
    const reader = res.body.getReader();
    let text = "";
    const started = Date.now();
    let session = null;
    while (!text.includes(": heartbeat\n\n") && Date.now() - started < 25000) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      const m = text.match(/"name":"iac-code\.session\.v1","value":(\{[^\n]*\})\}/);
      if (m && !session) session = JSON.parse(m[1]);
    }
    expect(text.includes(": heartbeat\n\n"), "no heartbeat comment within 25 s");
    expect(!text.includes("\r"), "CR in the SSE stream");
    expect(session, "no session event before the stall");
    const c = await cancelExecution(session.executionId, threadId, props.iacCode.rosInvocationId);
    expect(c.status === 200, `cancel ${c.status}`);
    while (true) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
    }
    expect(/"type":"RUN_ERROR"[^\n]*"code":"CANCELLED"/.test(text), "stalled run did not end CANCELLED");
    return [];
  },
};

const selected = (process.env.SCENARIOS || Object.keys(scenarios).join(",")).split(",").filter(Boolean);
await runScenarios(scenarios, selected, diagnostics);
