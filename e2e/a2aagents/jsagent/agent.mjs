// A third-party A2A 1.0 agent for the generic profile's tests, built only
// with the official JavaScript SDK (@a2a-js/sdk 1.x) on express: nothing in
// it knows iac-code or the gateway. JSON-RPC is served at /rpc, named by
// the agent card, so the gateway must read the card to find it.
//
// Behaviour, chosen by the user's text (the same as e2e/a2aagents/goagent):
//   hello  a few status-message text chunks and an artifact text, completed
//   ask    input-required with a question; the text answer streams
//          "you said: <answer>" and completes
//   auth   auth-required with a prompt; the execution goes on once the
//          user signed in out of band (POST /test/signin), streams
//          "signed in" and completes
//   fail   failed, with a message
//   slow   a chunk every 300 ms for about 3 s, then completed
//   image  describes each file part ("file a.png image/png 8 bytes")
//   other  echoes the text and completes
//
// Like the SDK's own samples, cancelTask only marks the task: a waiting
// task has no execution to publish the canceled state, so the SDK's
// CancelTask waits (the gateway bounds that wait).
//
// Environment: PORT (0 or absent: a free port). Prints "LISTENING <base URL>"
// once it serves. GET /test/answers lists the answers received, in order.
import express from "express";
import { AGENT_CARD_PATH, A2A_PROTOCOL_VERSION, Role, TaskState } from "@a2a-js/sdk";
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from "@a2a-js/sdk/server";
import { agentCardHandler, jsonRpcHandler, UserBuilder } from "@a2a-js/sdk/server/express";
import { randomUUID } from "node:crypto";

export const QUESTION = "What is your name?";
export const FAIL_MESSAGE = "The agent failed on purpose.";

const card = {
  name: "js-sdk-test-agent",
  description: "A2A test agent built with @a2a-js/sdk",
  supportedInterfaces: [{ url: "", protocolBinding: "JSONRPC", tenant: "", protocolVersion: A2A_PROTOCOL_VERSION }],
  version: "1.0.0",
  capabilities: { streaming: true, pushNotifications: false, extensions: [], extendedAgentCard: false },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "test", name: "test", description: "hello, ask, fail, slow", tags: ["test"], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  documentationUrl: "",
  signatures: [],
};

const textPart = (value) => ({ content: { $case: "text", value }, metadata: undefined, filename: "", mediaType: "text/plain" });
const textOf = (m) => (m?.parts ?? []).map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const answers = [];
const signins = []; // the waiting "auth" executions' resolvers
let earlySignins = 0;
const signIn = () => {
  const next = signins.shift();
  if (next) next();
  else earlySignins++;
};

class Executor {
  cancelled = new Set();

  cancelTask = async (taskId) => {
    this.cancelled.add(taskId);
  };

  async execute(rc, bus) {
    const { taskId, contextId } = rc;
    const text = textOf(rc.userMessage).trim();
    const status = (state, say) => {
      const message = say === undefined ? undefined : {
        role: Role.ROLE_AGENT, messageId: randomUUID(), parts: [textPart(say)], taskId, contextId,
        extensions: [], metadata: {}, referenceTaskIds: [],
      };
      bus.publish(AgentEvent.statusUpdate({ taskId, contextId, status: { state, message, timestamp: new Date().toISOString() }, metadata: {} }));
    };
    const existing = rc.task;
    // Every streaming turn starts with a Task (the SDK enforces it), on an
    // answer too: then it is the waiting task with its history.
    bus.publish(AgentEvent.task(existing ?? {
      id: taskId, contextId, status: { state: TaskState.TASK_STATE_SUBMITTED, timestamp: new Date().toISOString(), message: undefined },
      artifacts: [], history: [rc.userMessage], metadata: {},
    }));
    try {
      if (existing?.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED) {
        answers.push(text);
        status(TaskState.TASK_STATE_WORKING);
        status(TaskState.TASK_STATE_WORKING, `you said: ${text}`);
        status(TaskState.TASK_STATE_COMPLETED);
        return;
      }
      status(TaskState.TASK_STATE_WORKING);
      switch (text.toLowerCase()) {
        case "hello":
          for (const c of ["Hello", ", ", "world"]) status(TaskState.TASK_STATE_WORKING, c);
          bus.publish(AgentEvent.artifactUpdate({
            taskId, contextId, append: false, lastChunk: true, metadata: undefined,
            artifact: { artifactId: randomUUID(), name: "result", description: "", parts: [textPart(" (from an artifact)")], metadata: undefined, extensions: [] },
          }));
          status(TaskState.TASK_STATE_COMPLETED);
          return;
        case "ask":
          status(TaskState.TASK_STATE_INPUT_REQUIRED, QUESTION);
          return;
        case "auth":
          // A2A 1.0: the credential arrives out of band and the same
          // execution goes on publishing on its bus.
          status(TaskState.TASK_STATE_AUTH_REQUIRED, "Sign in, then send the code.");
          await new Promise((resolve) => {
            if (earlySignins > 0) {
              earlySignins--;
              resolve();
            } else signins.push(resolve);
          });
          status(TaskState.TASK_STATE_WORKING, "signed in");
          status(TaskState.TASK_STATE_COMPLETED);
          return;
        case "fail":
          status(TaskState.TASK_STATE_FAILED, FAIL_MESSAGE);
          return;
        case "image":
          for (const p of rc.userMessage.parts) {
            if (p.content?.$case === "raw") status(TaskState.TASK_STATE_WORKING, `file ${p.filename} ${p.mediaType} ${p.content.value.length} bytes`);
          }
          status(TaskState.TASK_STATE_COMPLETED);
          return;
        case "slow":
          for (let i = 0; i < 10; i++) {
            await sleep(300);
            if (this.cancelled.has(taskId)) {
              status(TaskState.TASK_STATE_CANCELED);
              return;
            }
            status(TaskState.TASK_STATE_WORKING, `chunk ${i} `);
          }
          status(TaskState.TASK_STATE_COMPLETED);
          return;
        default:
          status(TaskState.TASK_STATE_WORKING, `echo: ${text}`);
          status(TaskState.TASK_STATE_COMPLETED);
      }
    } finally {
      this.cancelled.delete(taskId);
    }
  }
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new Executor());
const app = express();
app.get("/test/answers", (_req, res) => res.json(answers));
app.post("/test/signin", (_req, res) => {
  signIn();
  res.status(204).end();
});
app.use(`/${AGENT_CARD_PATH}`, agentCardHandler({ agentCardProvider: handler }));
app.use("/rpc", jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication }));
const server = app.listen(Number(process.env.PORT ?? 0), "127.0.0.1", () => {
  const base = `http://127.0.0.1:${server.address().port}/`;
  card.supportedInterfaces[0].url = `${base}rpc`;
  console.log(`LISTENING ${base}`);
});
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => server.close(() => process.exit(0)));
