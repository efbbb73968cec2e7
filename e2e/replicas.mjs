// Scale-out harness: three iac-code-agui replicas sharing one Redis, driven
// by the official @ag-ui/client 1.0.0 HttpAgent with a replica chosen at
// random for every request. Environment: AGUI_URLS (comma-separated
// replica URLs), AGUI_CWD. Prints one JSON line per scenario; exits 1 when
// any fails.
import { HttpAgent } from "@ag-ui/client";
import { EventSchemas } from "@ag-ui/core/schemas";
import { randomUUID } from "node:crypto";

const urls = (process.env.AGUI_URLS ?? "").split(",").filter(Boolean);
const cwd = process.env.AGUI_CWD ?? process.cwd();
if (urls.length < 3) {
  console.log("AGUI_URLS needs three replica URLs");
  process.exit(2);
}
const diagnostics = [];
for (const level of ["warn", "error"]) {
  const orig = console[level].bind(console);
  console[level] = (...args) => {
    diagnostics.push(args.map(String).join(" "));
    orig(...args);
  };
}

const pick = () => urls[Math.floor(Math.random() * urls.length)];
const other = (u) => urls.filter((x) => x !== u)[Math.floor(Math.random() * (urls.length - 1))];
const props = () => ({ iacCode: { schemaVersion: 1, rosInvocationId: `inv-${randomUUID()}`, cwd } });
const expect = (cond, msg) => { if (!cond) throw new Error(msg); };

async function run(agent, url, params, onEvent) {
  agent.url = url;
  const events = [];
  await agent.runAgent({ runId: randomUUID(), ...params }, { onEvent: ({ event }) => { events.push(event); onEvent?.(event); } });
  for (const e of events) expect(EventSchemas.safeParse(e).success, `event fails the schema: ${JSON.stringify(e)}`);
  const terminals = events.filter((e) => e.type === "RUN_FINISHED" || e.type === "RUN_ERROR");
  expect(terminals.length === 1, `want one terminal event, got ${terminals.length}`);
  return { events, terminal: terminals[0] };
}

function newAgent() {
  return new HttpAgent({ url: pick(), threadId: `replicas-${randomUUID()}` });
}
const say = (agent, text) => agent.addMessage({ id: randomUUID(), role: "user", content: text });

const scenarios = {
  // Turns and a permission round trip, each request on a random replica.
  async anyReplica() {
    const agent = newAgent();
    const p = props();
    for (let i = 0; i < 4; i++) {
      say(agent, `Create a VPC template ${i}`);
      const r = await run(agent, pick(), { forwardedProps: p });
      expect(r.terminal.type === "RUN_FINISHED" && r.terminal.outcome.type === "success", `turn ${i}: ${JSON.stringify(r.terminal)}`);
    }
    say(agent, "Deploy the VPC stack (permission)");
    const first = pick();
    const r = await run(agent, first, { forwardedProps: p });
    expect(r.terminal.outcome?.type === "interrupt", `interrupt: ${JSON.stringify(r.terminal)}`);
    const [it] = agent.pendingInterrupts;
    const ok = await run(agent, other(first), { forwardedProps: p, resume: [{ interruptId: it.id, status: "resolved", payload: { decision: "allow_once" } }] });
    expect(ok.terminal.type === "RUN_FINISHED" && ok.terminal.outcome.type === "success", `resume elsewhere: ${JSON.stringify(ok.terminal)}`);
    expect(ok.events.some((e) => e.type === "TOOL_CALL_RESULT"), "no tool result after the resume");
  },

  // A second run while the first streams is THREAD_BUSY on every replica;
  // a cancel sent to another replica stops the run.
  async busyAndCancel() {
    const agent = newAgent();
    const p = props();
    say(agent, "cancel me");
    const home = pick();
    let session;
    const sawSession = new Promise((resolve) => { session = resolve; });
    const running = run(agent, home, { forwardedProps: p }, (e) => { if (e.name === "iac-code.session.v1") session(e.value); });
    const s = await sawSession;
    for (const u of urls) {
      const res = await fetch(u, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ threadId: agent.threadId, runId: randomUUID(), state: {}, tools: [], context: [], forwardedProps: p,
          messages: [{ id: randomUUID(), role: "user", content: "again" }] }),
      });
      const body = await res.json();
      expect(res.status === 409 && body.error.code === "THREAD_BUSY", `busy on ${u}: ${res.status} ${JSON.stringify(body)}`);
    }
    const res = await fetch(`${other(home).replace(/\/$/, "")}/extensions/iac-code/v1/executions/${s.executionId}/cancel`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ threadId: agent.threadId, rosInvocationId: p.iacCode.rosInvocationId }),
    });
    const body = await res.json();
    expect(res.status === 200 && body.status === "cancelled", `cancel: ${res.status} ${JSON.stringify(body)}`);
    const r = await running;
    expect(r.terminal.type === "RUN_ERROR" && r.terminal.code === "CANCELLED", `cancelled run: ${JSON.stringify(r.terminal)}`);
  },
};

let failed = 0;
for (const [name, fn] of Object.entries(scenarios)) {
  const start = Date.now();
  const before = diagnostics.length;
  try {
    await fn();
    const warnings = diagnostics.slice(before).filter((d) => d.includes("[ag-ui]"));
    if (warnings.length) throw new Error(`client warnings: ${warnings.join("; ")}`);
    console.log(JSON.stringify({ name, ok: true, ms: Date.now() - start }));
  } catch (err) {
    failed++;
    console.log(JSON.stringify({ name, ok: false, ms: Date.now() - start, error: String(err?.stack ?? err) }));
  }
}
process.exit(failed ? 1 : 0);
