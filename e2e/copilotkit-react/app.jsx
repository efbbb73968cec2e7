// The CopilotKit React page of e2e/copilotkit_react_test.go, written the
// way docs/copilotkit.md tells a front-end developer to: CopilotKitProvider
// and CopilotChat from @copilotkit/react-core/v2, useInterrupt for the
// interrupts, renderers for what CopilotChat does not show by itself.
//
// URL parameters: mode=pipeline (runMode), tool=1 (registers a front-end
// tool), fresh=1 (forget the stored thread).
import React, { useEffect, useMemo, useState, useSyncExternalStore } from "react";
import { createRoot } from "react-dom/client";
import {
  CopilotKitProvider, CopilotChat, useInterrupt, useFrontendTool, useAgent, useCopilotKit,
} from "@copilotkit/react-core/v2";
// @copilotkit/react-ui/v2/styles.css imports react-core's v2 styles.
import "@copilotkit/react-ui/v2/styles.css";
import { z } from "zod";
import { CUSTOM_EVENT_NAMES, PIPELINE_ACTIVITY_TYPE } from "@iac-code-agui/protocol";

const params = new URLSearchParams(location.search);
const AGENT = "iac";

// The thread-identity rule: threadId and rosInvocationId are one identity.
// Both live in localStorage, so a reload continues the same thread with the
// same rosInvocationId (a new one for a thread with a pending interrupt is
// refused with EXECUTION_LOST).
function threadIdentity() {
  if (params.get("fresh") === "1") localStorage.removeItem("iac-thread");
  let id = JSON.parse(localStorage.getItem("iac-thread") ?? "null");
  if (!id) {
    id = { threadId: crypto.randomUUID(), rosInvocationId: crypto.randomUUID() };
    localStorage.setItem("iac-thread", JSON.stringify(id));
  }
  return id;
}

// ourError returns the JSON error body CopilotKit wraps in its message
// ("HTTP 409: {...}"), or null.
function ourError(error) {
  const m = /HTTP (\d{3}): (\{.*\})/s.exec(error?.message ?? String(error));
  if (!m) return null;
  try {
    return { status: Number(m[1]), ...JSON.parse(m[2]).error };
  } catch {
    return null;
  }
}

// AnswerCard renders one interrupt from its published shape (metadata.kind,
// standardOptions, responseSchema) and calls answer(payload) or cancel().
function AnswerCard({ interrupt, answer, cancel }) {
  const md = interrupt.metadata ?? {};
  const [free, setFree] = useState("");
  const [overrides, setOverrides] = useState("");
  const options = md.standardOptions ?? [];
  const branches = interrupt.responseSchema?.oneOf ?? [];
  const allowsFree = branches.some((b) => b.properties?.freeText);
  let body;
  if (md.kind === "permission") {
    body = (
      <>
        <button data-testid="allow" onClick={() => answer({ decision: "allow_once" })}>Allow once</button>
        <button data-testid="deny" onClick={() => answer({ decision: "deny" })}>Deny</button>
      </>
    );
  } else if (md.kind === "deployment_confirmation") {
    const extra = () => (overrides.trim() ? { parameter_overrides: JSON.parse(overrides) } : {});
    body = (
      <>
        <textarea data-testid="overrides" placeholder='{"InstanceCount": 2}' value={overrides} onChange={(e) => setOverrides(e.target.value)} />
        {options.map((o) => (
          <button key={o.id} data-testid={`option-${o.id}`} onClick={() => answer({ selectedId: o.id, ...extra() })}>{o.title}</button>
        ))}
      </>
    );
  } else {
    body = (
      <>
        {options.map((o) => (
          <button key={o.id} data-testid={`option-${o.id}`} onClick={() => answer({ selectedId: o.id })}>{o.title}</button>
        ))}
        {allowsFree && (
          <form onSubmit={(e) => { e.preventDefault(); answer({ freeText: free }); }}>
            <input data-testid="free-text" value={free} onChange={(e) => setFree(e.target.value)} />
            <button data-testid="send-answer" type="submit" disabled={!free}>Answer</button>
          </form>
        )}
      </>
    );
  }
  return (
    <div data-testid="interrupt" data-kind={md.kind}>
      <p data-testid="interrupt-message">{md.title ?? interrupt.message.split("\n")[0]}</p>
      {md.safeSummary && <code>{md.safeSummary}</code>}
      {body}
      <button data-testid="cancel-interrupt" onClick={() => cancel()}>Cancel</button>
    </div>
  );
}

// The pipeline store: CUSTOM iac-code.pipeline.v1 values by pipelineRunId
// (a pipeline outlives the AG-UI runs that carry it), de-duplicated by
// eventId. Each pipeline's card is anchored after the message that was
// last when its first event arrived (the user message that started it).
const pipelines = new Map(); // pipelineRunId -> { anchor, events }
let lastMessageId = "";
let version = 0;
const listeners = new Set();
const store = {
  subscribe(l) {
    listeners.add(l);
    return () => listeners.delete(l);
  },
  version: () => version,
};
function recordPipeline(value) {
  const key = value.pipelineRunId ?? "pipeline";
  const p = pipelines.get(key) ?? { anchor: lastMessageId, events: [] };
  if (value.eventId && p.events.some((v) => v.eventId === value.eventId)) return;
  pipelines.set(key, { ...p, events: [...p.events, value] });
  version++;
  for (const l of listeners) l();
}

// PipelineCards shows the progress, then the result, of the pipelines
// anchored after messageId.
function PipelineCards({ messageId }) {
  useSyncExternalStore(store.subscribe, store.version);
  return [...pipelines].filter(([, p]) => p.anchor === messageId).map(([id, { events }]) => {
    const last = events.findLast((e) => ["pipeline_completed", "pipeline_error"].includes(e.eventType));
    return (
      <div key={id} data-testid="pipeline-card" data-status={last ? last.eventType : "running"}>
        <strong>Pipeline {last?.eventType === "pipeline_completed" ? "completed" : last ? "failed" : "running"}</strong>
        <ul>{events.map((e, i) => <li key={e.eventId ?? i} data-testid="pipeline-event">{e.eventType}</li>)}</ul>
      </div>
    );
  });
}

// The renderers: tool results (a question's answer arrives as one) and
// the pipeline card after a run's last message; the recovered pipeline
// snapshot (ACTIVITY_SNAPSHOT) as an activity message.
const renderCustomMessages = [{
  agentId: AGENT,
  render: ({ message, position }) => {
    if (position !== "after") return null;
    return (
      <>
        {message.role === "tool" && <div data-testid="tool-result">{String(message.content)}</div>}
        <PipelineCards messageId={message.id} />
      </>
    );
  },
}];
const renderActivityMessages = [{
  activityType: PIPELINE_ACTIVITY_TYPE,
  agentId: AGENT,
  content: z.object({ schemaVersion: z.literal(1), pipelineRunId: z.string(), snapshot: z.record(z.string(), z.unknown()) }),
  render: ({ content }) => <div data-testid="pipeline-snapshot">Pipeline {content.pipelineRunId}</div>,
}];

function Page({ identity }) {
  const { agent } = useAgent({ agentId: AGENT });
  const { copilotkit } = useCopilotKit();
  const [pending, setPending] = useState(null); // interrupts listed by RESUME_REQUIRED
  const [error, setError] = useState(null);

  useInterrupt({
    agentId: AGENT,
    render: ({ interrupt, resolve, cancel }) => <AnswerCard interrupt={interrupt} answer={resolve} cancel={cancel} />,
  });

  if (params.get("tool") === "1") {
    useFrontendTool({ name: "showToast", description: "Show a toast in the page", parameters: z.object({ text: z.string() }), handler: async () => "shown" });
  }

  useEffect(() => {
    if (!agent) return;
    const sub = agent.subscribe({
      onCustomEvent: ({ event }) => {
        if (event.name === "iac-code.pipeline.v1") recordPipeline(event.value);
      },
      onMessagesChanged: ({ messages }) => { lastMessageId = messages.at(-1)?.id ?? ""; },
      // The remedy for a run that ended in RUN_ERROR with interrupts set.
      onRunErrorEvent: () => { agent.pendingInterrupts = []; },
    });
    return () => sub.unsubscribe();
  }, [agent]);

  const onError = ({ error: err }) => {
    const body = ourError(err);
    setError(body ?? { message: err?.message ?? String(err) });
    if (body?.code === "RESUME_REQUIRED") {
      // A reload lost the interrupts: the server lists them; drop the
      // refused message and answer them.
      agent.setMessages(agent.messages.slice(0, -1));
      setPending(body.pendingInterrupts);
    }
  };
  const answerPending = async (payload, status = "resolved") => {
    const list = pending;
    setPending(null);
    setError(null);
    agent.pendingInterrupts = list;
    await copilotkit.runAgent({ agent, resume: list.map((it) => ({ interruptId: it.id, status, ...(status === "resolved" ? { payload } : {}) })) });
  };

  return (
    <div style={{ display: "flex", flexDirection: "column", height: "100vh" }}>
      <div data-testid="identity" data-thread={identity.threadId} data-ros={identity.rosInvocationId} />
      {error && <div data-testid="server-error" data-code={error.code}>{error.code}: {error.message}</div>}
      {pending && <AnswerCard interrupt={pending[0]} answer={(p) => answerPending(p)} cancel={() => answerPending(undefined, "cancelled")} />}
      <div style={{ flex: 1, minHeight: 0 }}>
        <CopilotChat agentId={AGENT} threadId={identity.threadId} onError={onError} />
      </div>
    </div>
  );
}

function App() {
  const identity = useMemo(threadIdentity, []);
  const iacCode = {
    schemaVersion: 1, rosInvocationId: identity.rosInvocationId, cwd: window.AGUI_CWD,
    ...(params.get("mode") === "pipeline" ? { runMode: "pipeline" } : {}),
  };
  return (
    <CopilotKitProvider runtimeUrl="/api/copilotkit" properties={{ iacCode }} renderCustomMessages={renderCustomMessages} renderActivityMessages={renderActivityMessages}>
      <Page identity={identity} />
    </CopilotKitProvider>
  );
}

window.__customEventNames = CUSTOM_EVENT_NAMES;
createRoot(document.getElementById("root")).render(<App />);
