// The console's controller: settings, threads, sending runs and resumes,
// cancellation, and keeping the pending interrupts of each thread so they
// can be answered after a reload.
import { ApiError, cancelExecution, runAgent } from "./api.js";
import { h, append, clear, uid, fmtTime } from "./dom.js";
import { interruptCard } from "./forms.js";
import { Timeline } from "./render.js";
import * as store from "./store.js";

const $ = (id) => document.getElementById(id);
const ui = {
  timeline: $("timeline"), pending: $("pending"), composer: $("composer"), message: $("message"),
  send: $("send"), cancel: $("cancel-run"), hint: $("composer-hint"), status: $("status"),
  threads: $("thread-list"), newThread: $("new-thread"), settings: $("settings-form"),
  cwd: $("cwd"), runMode: $("run-mode"), pipelineName: $("pipeline-name"), language: $("language"),
  token: $("token"), showToken: $("show-token"), session: $("session-info"), threadTitle: $("thread-title"),
};

// Errors after which a resumed interrupt is gone (adapter.md §5.6–§5.8);
// after any other RUN_ERROR of a resume the interrupts stay answerable.
const CLEARS_PENDING = new Set(["CANCELLED", "EXECUTION_LOST", "RESUME_ALREADY_APPLIED", "STATE_PERSISTENCE_FAILED"]);

const timeline = new Timeline(ui.timeline);
let settings = store.loadSettings();
let threads = store.loadThreads();
let thread = null;
let log = [];
let busy = false;
let lastDrop = 0;
let heartbeatAt = 0;
let answers = new Map();

// ---- settings

function showSettings() {
  ui.cwd.value = settings.cwd;
  ui.runMode.value = settings.runMode;
  ui.pipelineName.value = settings.pipelineName;
  ui.language.value = settings.language;
  ui.token.value = settings.token;
}

function readSettings() {
  settings = {
    cwd: ui.cwd.value.trim(), runMode: ui.runMode.value, pipelineName: ui.pipelineName.value.trim(),
    language: ui.language.value, token: ui.token.value.trim(),
  };
  store.saveSettings(settings);
  if (thread && !thread.started) thread.cwd = settings.cwd;
  renderSession();
}

ui.settings.addEventListener("input", readSettings);
ui.settings.addEventListener("change", readSettings);
ui.settings.addEventListener("submit", (e) => e.preventDefault());
ui.showToken.addEventListener("click", () => {
  const show = ui.token.type === "password";
  ui.token.type = show ? "text" : "password";
  ui.showToken.setAttribute("aria-pressed", String(show));
  ui.showToken.textContent = show ? "Hide" : "Show";
});

// ---- threads

function newThread() {
  return {
    id: uid("console-"), title: "New thread", cwd: settings.cwd, rosInvocationId: uid("inv-"),
    createdAt: Date.now(), updatedAt: Date.now(), pending: [], session: null, started: false,
  };
}

function persist() {
  if (!thread?.started) return;
  thread.updatedAt = Date.now();
  threads = [thread, ...threads.filter((t) => t.id !== thread.id)];
  store.saveThreads(threads);
  store.saveLog(thread.id, log);
  store.setCurrentThreadId(thread.id);
  renderThreads();
}

function open(t) {
  if (busy) return;
  thread = t;
  answers = new Map();
  log = t.started ? store.loadLog(t.id) : [];
  timeline.reset();
  for (const entry of log) timeline.apply(entry);
  timeline.flush();
  timeline.endRun();
  timeline.scrollToEnd();
  if (t.started) {
    ui.cwd.value = t.cwd;
    settings.cwd = t.cwd;
    store.saveSettings(settings);
    store.setCurrentThreadId(t.id);
  }
  renderThreads();
  renderPending();
  renderSession();
  setStatus(t.pending.length ? "waiting" : "idle");
}

function renderThreads() {
  clear(ui.threads);
  const list = thread && !thread.started ? [thread, ...threads] : threads;
  for (const t of list) {
    const current = t.id === thread?.id;
    ui.threads.append(h("li", {}, h("button", {
      type: "button", class: "thread", "aria-current": current ? "true" : null, dataset: { threadId: t.id },
      onclick: () => open(threads.find((x) => x.id === t.id) ?? t),
    },
    h("span", { class: "thread-title" }, t.title),
    h("span", { class: "thread-meta" }, t.started ? new Date(t.updatedAt).toLocaleString() : "Not started",
      t.pending?.length ? h("span", { class: "badge warn" }, `${t.pending.length} waiting`) : null))));
  }
  ui.threadTitle.textContent = thread?.title ?? "";
}

ui.newThread.addEventListener("click", () => {
  open(newThread());
  ui.message.focus();
});

// ---- status and session panel

function setStatus(kind, text) {
  const words = { idle: "Ready", running: "Streaming", waiting: "Waiting for your answer", error: "Error", dropped: "Connection lost" };
  ui.status.dataset.state = kind;
  ui.status.textContent = text ?? words[kind] ?? kind;
}

function renderSession() {
  const s = thread?.session;
  const rows = [
    ["Thread", thread?.id], ["Workspace", thread?.started ? thread.cwd : settings.cwd],
    ["Execution", s?.executionId], ["Task", s?.taskId], ["Invocation", thread?.rosInvocationId],
  ];
  append(clear(ui.session), rows.filter(([, v]) => v).map(([k, v]) => [h("dt", {}, k), h("dd", { class: "mono" }, v)]));
  if (heartbeatAt) ui.session.append(h("dt", {}, "Heartbeat"), h("dd", { id: "heartbeat" }, fmtTime(heartbeatAt)));
  ui.cancel.disabled = !s?.executionId || !(busy || thread?.pending.length);
  ui.send.disabled = busy;
  ui.message.setAttribute("aria-disabled", String(busy));
  ui.hint.textContent = busy ? "The agent is working. You can cancel the execution."
    : thread?.pending.length ? "Answer the request above to continue, or cancel the execution."
      : "Enter to send · Shift+Enter for a new line";
}

// ---- pending interrupts

function renderPending() {
  clear(ui.pending);
  const pending = thread?.pending ?? [];
  ui.pending.hidden = pending.length === 0;
  if (!pending.length) return;
  const many = pending.length > 1;
  const sendAll = h("button", { type: "button", class: "btn primary", disabled: true, onclick: () => submitAnswers() },
    `Send ${pending.length} answers`);
  for (const it of pending) {
    const card = interruptCard(it, (entry, summary) => {
      answers.set(it.id, { entry, summary });
      if (!many) return submitAnswers();
      card.classList.add("answered");
      card.querySelector(".chosen")?.remove();
      card.append(h("p", { class: "chosen" }, `Answer: ${summary}`));
      sendAll.disabled = answers.size < pending.length;
      if (!sendAll.disabled) sendAll.focus();
    });
    ui.pending.append(card);
  }
  if (many) ui.pending.append(h("div", { class: "send-all" }, sendAll));
  ui.pending.inert = busy;
}

function submitAnswers() {
  const list = thread.pending.map((it) => answers.get(it.id)).filter(Boolean);
  if (list.length !== thread.pending.length || busy) return;
  answers = new Map();
  record({ type: "console.answer", summary: list.map((a) => a.summary) });
  execute({ messages: [], resume: list.map((a) => a.entry) }, true);
}

// ---- runs

function record(entry) {
  store.appendLog(log, entry);
  timeline.apply(entry);
}

function input(extra) {
  const iac = { schemaVersion: 1, rosInvocationId: thread.rosInvocationId, cwd: thread.started ? thread.cwd : settings.cwd };
  if (settings.runMode) iac.runMode = settings.runMode;
  if (settings.pipelineName) iac.pipelineName = settings.pipelineName;
  if (settings.language) iac.preferredLanguage = settings.language;
  return { threadId: thread.id, runId: uid("run-"), state: {}, tools: [], context: [], forwardedProps: { iacCode: iac }, ...extra };
}

function send(text) {
  if (busy || !text.trim()) return;
  if (!thread.started) {
    if (!settings.cwd) {
      ui.cwd.focus();
      return setStatus("error", "Set a workspace first");
    }
    thread.started = true;
    thread.cwd = settings.cwd;
    thread.title = text.trim().replace(/\s+/g, " ").slice(0, 60);
  }
  ui.message.value = "";
  record({ type: "console.user", text });
  execute({ messages: [{ id: uid("msg-"), role: "user", content: text }] }, false);
}

async function execute(extra, isResume) {
  busy = true;
  heartbeatAt = 0;
  ui.pending.inert = true;
  setStatus("running");
  renderSession();
  const body = input(extra);
  let ended = false;
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        const r = await runAgent({
          token: settings.token, language: settings.language, input: body,
          onEvent: (e) => {
            ended ||= e.type === "RUN_FINISHED" || e.type === "RUN_ERROR";
            onEvent(e, isResume);
          },
          onHeartbeat: () => {
            heartbeatAt = Date.now();
            setStatus("running", `Streaming · heartbeat ${fmtTime(heartbeatAt)}`);
            renderSession();
          },
        });
        if (r.dropped && !ended) {
          lastDrop = Date.now();
          record({ type: "console.note", level: "warning", text: "The connection closed before the run ended. A normal run is cancelled by the adapter when its client goes away; an interrupt stays answerable. Send a new message to continue." });
          timeline.endRun();
          setStatus("dropped");
        }
        break;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // Right after a dropped connection the adapter may still hold the
        // thread for a moment; wait for it instead of failing the user.
        if (err.code === "THREAD_BUSY" && Date.now() - lastDrop < 15000 && attempt < 30) {
          setStatus("running", "Waiting for the adapter to release the thread");
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        onApiError(err);
        break;
      }
    }
  } finally {
    busy = false;
    ui.pending.inert = false;
    persist();
    renderPending();
    renderSession();
    if (ui.status.dataset.state === "running") setStatus(thread.pending.length ? "waiting" : "idle");
    const first = ui.pending.querySelector("button, input, textarea");
    (first ?? ui.message).focus();
  }
}

function onEvent(e, isResume) {
  record(e);
  if (e.type === "CUSTOM" && e.name === "iac-code.session.v1") {
    thread.session = e.value;
    renderSession();
  } else if (e.type === "RUN_FINISHED") {
    thread.pending = e.outcome?.type === "interrupt" ? e.outcome.interrupts ?? [] : [];
    setStatus(thread.pending.length ? "waiting" : "idle");
  } else if (e.type === "RUN_ERROR") {
    if (!isResume || CLEARS_PENDING.has(e.code)) thread.pending = [];
    setStatus("error", `Error · ${e.code}`);
  }
}

function onApiError(err) {
  record({ type: "console.error", status: err.status || null, code: err.code, message: err.message });
  setStatus("error", `Error · ${err.code}`);
  if (err.code === "RESUME_REQUIRED") {
    const fromServer = err.body?.error?.pendingInterrupts;
    if (Array.isArray(fromServer) && fromServer.length) thread.pending = fromServer;
    if (!thread.pending.length) {
      record({ type: "console.note", level: "warning", text: "The adapter waits for answers to interrupts this browser does not know. Cancel the execution to continue." });
    }
  }
}

// ---- cancellation

ui.cancel.addEventListener("click", async () => {
  const s = thread?.session;
  if (!s?.executionId) return;
  ui.cancel.disabled = true;
  try {
    const r = await cancelExecution({ token: settings.token, language: settings.language, executionId: s.executionId, threadId: thread.id, rosInvocationId: s.rosInvocationId ?? thread.rosInvocationId });
    const text = r.status === "cancelled" ? "Cancellation requested: the execution was cancelled." : `The execution had already ended (${r.status}).`;
    if (!busy) {
      thread.pending = [];
      record({ type: "console.note", level: "info", text });
      persist();
      renderPending();
      setStatus("idle");
    } else {
      record({ type: "console.note", level: "info", text });
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    record({ type: "console.error", status: err.status || null, code: err.code, message: err.message });
  } finally {
    renderSession();
  }
});

// ---- composer

ui.composer.addEventListener("submit", (e) => {
  e.preventDefault();
  send(ui.message.value);
});
ui.message.addEventListener("keydown", (e) => {
  if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    ui.composer.requestSubmit();
  }
});

// ---- start

// The server says in /health which agent serves; a scripted demo agent
// must never pass for iac-code.
fetch("/health", { cache: "no-store" })
  .then((r) => (r.ok ? r.json() : {}))
  .then((doc) => { document.getElementById("demo-mark").hidden = doc.upstream !== "demo"; })
  .catch(() => {});

showSettings();
const saved = threads.find((t) => t.id === store.currentThreadId());
open(saved ?? newThread());
ui.message.focus();
