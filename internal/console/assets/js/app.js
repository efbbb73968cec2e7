// The console's controller: settings, threads, sending runs and resumes,
// cancellation, and keeping the pending interrupts of each thread so they
// can be answered after a reload.
import { ApiError, cancelExecution, runAgent, workspaceRoots } from "./api.js";
import { h, append, clear, uid, fmtTime } from "./dom.js";
import { interruptCard } from "./forms.js";
import { language, setLanguage, t } from "./i18n.js";
import { CLEARS_PENDING, Timeline, outsideRoots } from "./render.js";
import * as store from "./store.js";

const $ = (id) => document.getElementById(id);
const ui = {
  timeline: $("timeline"), pending: $("pending"), composer: $("composer"), message: $("message"),
  send: $("send"), cancel: $("cancel-run"), hint: $("composer-hint"), status: $("status"),
  threads: $("thread-list"), newThread: $("new-thread"), settings: $("settings-form"),
  cwd: $("cwd"), cwdBound: $("cwd-bound"), cwdNew: $("cwd-new"), runMode: $("run-mode"), pipelineName: $("pipeline-name"),
  language: $("language"), token: $("token"), showToken: $("show-token"), session: $("session-info"), threadTitle: $("thread-title"),
};

const timeline = new Timeline(ui.timeline);
let settings = store.loadSettings();
let threads = store.loadThreads();
let thread = null;
let log = [];
let busy = false;
let lastDrop = 0;
let heartbeatAt = 0;
let answers = new Map();
let cancelAsked = false;
let status = { kind: "idle", key: null, params: null };

// A thread is bound to its workspace once the adapter accepted its first
// request (RUN_STARTED); a first request refused before the stream (a
// workspace outside the allowed roots) leaves it free to change. Threads
// stored before "bound" existed were bound when they started.
const bound = (x) => Boolean(x?.bound ?? x?.started);

// ---- settings

function showSettings() {
  ui.cwd.value = settings.cwd;
  ui.runMode.value = settings.runMode;
  ui.pipelineName.value = settings.pipelineName;
  ui.language.value = settings.language;
  ui.token.value = settings.token;
}

function readSettings() {
  const lang = settings.language;
  settings = {
    // A bound thread's workspace field shows its binding, read-only.
    cwd: bound(thread) ? settings.cwd : ui.cwd.value.trim(), runMode: ui.runMode.value, pipelineName: ui.pipelineName.value.trim(),
    language: ui.language.value, token: ui.token.value.trim(),
  };
  store.saveSettings(settings);
  if (thread && !bound(thread)) thread.cwd = settings.cwd;
  if (settings.language !== lang) applyLanguage();
  renderSession();
}

ui.settings.addEventListener("input", readSettings);
ui.settings.addEventListener("change", readSettings);
ui.settings.addEventListener("submit", (e) => e.preventDefault());
ui.showToken.addEventListener("click", () => {
  const show = ui.token.type === "password";
  ui.token.type = show ? "text" : "password";
  ui.showToken.setAttribute("aria-pressed", String(show));
  ui.showToken.textContent = show ? t("token.hide") : t("token.show");
});

// The console's own labels follow the chosen language (or the browser's);
// what is on screen is drawn again from the thread's log in it.
function applyLanguage() {
  setLanguage(settings.language);
  ui.showToken.textContent = ui.token.type === "password" ? t("token.show") : t("token.hide");
  if (!busy && thread) open(thread);
  else {
    renderThreads();
    renderSession();
    setStatus(status.kind, status.key, status.params);
  }
}

// ---- threads

function newThread() {
  return {
    id: uid("console-"), title: "", cwd: settings.cwd, rosInvocationId: uid("inv-"),
    createdAt: Date.now(), updatedAt: Date.now(), pending: [], session: null, started: false, bound: false,
  };
}

function persist() {
  if (!thread?.started) return;
  thread.updatedAt = Date.now();
  threads = [thread, ...threads.filter((x) => x.id !== thread.id)];
  store.saveThreads(threads);
  store.saveLog(thread.id, log);
  store.setCurrentThreadId(thread.id);
  renderThreads();
}

function open(next) {
  if (busy) return;
  thread = next;
  answers = new Map();
  log = next.started ? store.loadLog(next.id) : [];
  timeline.reset();
  for (const entry of log) timeline.apply(entry);
  timeline.flush();
  timeline.endRun();
  timeline.scrollToEnd();
  if (bound(next)) {
    settings.cwd = next.cwd;
    store.saveSettings(settings);
    store.setCurrentThreadId(next.id);
  }
  renderWorkspace();
  renderThreads();
  renderPending();
  renderSession();
  setStatus(next.pending.length ? "waiting" : "idle");
}

// A thread stays bound to its first workspace: the adapter refuses another
// one for it (protocol.md §3.5, THREAD_BINDING_CONFLICT). So the field of a
// bound thread shows that workspace, read-only, says why, and offers a
// new thread for another one.
function renderWorkspace() {
  const fixed = bound(thread);
  ui.cwd.value = fixed ? thread.cwd : settings.cwd;
  ui.cwd.readOnly = fixed;
  ui.cwd.setAttribute("aria-describedby", fixed ? "cwd-bound-text" : "cwd-help");
  ui.cwdBound.hidden = !fixed;
  $("cwd-help").hidden = fixed;
}

ui.cwdNew.addEventListener("click", () => {
  open(newThread());
  ui.cwd.focus();
  ui.cwd.select();
});

function renderThreads() {
  clear(ui.threads);
  const list = thread && !thread.started ? [thread, ...threads] : threads;
  for (const x of list) {
    const current = x.id === thread?.id;
    ui.threads.append(h("li", {}, h("button", {
      type: "button", class: "thread", "aria-current": current ? "true" : null, dataset: { threadId: x.id },
      onclick: () => open(threads.find((y) => y.id === x.id) ?? x),
    },
    h("span", { class: "thread-title" }, x.started ? x.title : t("thread.new")),
    h("span", { class: "thread-meta" }, x.started ? new Date(x.updatedAt).toLocaleString(language()) : t("thread.notStarted"),
      x.pending?.length ? h("span", { class: "badge warn" }, t("thread.waiting", { count: x.pending.length })) : null))));
  }
  ui.threadTitle.textContent = thread?.started ? thread.title : thread ? t("thread.new") : "";
}

ui.newThread.addEventListener("click", () => {
  open(newThread());
  ui.message.focus();
});

// ---- status and session panel

function setStatus(kind, key, params) {
  status = { kind, key, params };
  ui.status.dataset.state = kind;
  ui.status.textContent = t(key ?? `pill.${kind}`, params);
}

function renderSession() {
  const s = thread?.session;
  const rows = [
    [t("session.thread"), thread?.id], [t("session.workspace"), bound(thread) ? thread.cwd : settings.cwd],
    [t("session.execution"), s?.executionId], [t("session.task"), s?.taskId], [t("session.invocation"), thread?.rosInvocationId],
  ];
  append(clear(ui.session), rows.filter(([, v]) => v).map(([k, v]) => [h("dt", {}, k), h("dd", { class: "mono" }, v)]));
  if (heartbeatAt) ui.session.append(h("dt", {}, t("session.heartbeat")), h("dd", { id: "heartbeat" }, fmtTime(heartbeatAt)));
  ui.cancel.disabled = !s?.executionId || !(busy || thread?.pending.length);
  ui.send.disabled = busy;
  ui.message.setAttribute("aria-disabled", String(busy));
  ui.hint.textContent = busy ? t("hint.busy") : thread?.pending.length ? t("hint.pending") : t("hint.idle");
}

// ---- pending interrupts

function renderPending() {
  clear(ui.pending);
  const pending = thread?.pending ?? [];
  ui.pending.hidden = pending.length === 0;
  if (!pending.length) return;
  const many = pending.length > 1;
  const sendAll = h("button", { type: "button", class: "btn primary", disabled: true, onclick: () => submitAnswers() },
    t("answers.sendAll", { count: pending.length }));
  for (const it of pending) {
    const card = interruptCard(it, (entry, summary) => {
      answers.set(it.id, { entry, summary });
      if (!many) return submitAnswers();
      card.classList.add("answered");
      card.querySelector(".chosen")?.remove();
      card.append(h("p", { class: "chosen" }, t("answers.chosen", { summary })));
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
  const iac = { schemaVersion: 1, rosInvocationId: thread.rosInvocationId, cwd: bound(thread) ? thread.cwd : settings.cwd };
  if (settings.runMode) iac.runMode = settings.runMode;
  if (settings.pipelineName) iac.pipelineName = settings.pipelineName;
  if (settings.language) iac.preferredLanguage = settings.language;
  return { threadId: thread.id, runId: uid("run-"), state: {}, tools: [], context: [], forwardedProps: { iacCode: iac }, ...extra };
}

function send(text) {
  if (busy || !text.trim()) return;
  if (!bound(thread)) {
    if (!settings.cwd) {
      ui.cwd.focus();
      return setStatus("error", "pill.noWorkspace");
    }
    thread.cwd = settings.cwd;
  }
  if (!thread.started) {
    thread.started = true;
    thread.title = text.trim().replace(/\s+/g, " ").slice(0, 60);
  }
  ui.message.value = "";
  record({ type: "console.user", text });
  execute({ messages: [{ id: uid("msg-"), role: "user", content: text }] }, false);
}

async function execute(extra, isResume) {
  busy = true;
  heartbeatAt = 0;
  cancelAsked = false;
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
            setStatus("running", "pill.heartbeat", { time: fmtTime(heartbeatAt) });
            renderSession();
          },
        });
        if (r.dropped && !ended) {
          lastDrop = Date.now();
          record({ type: "console.note", level: "warning", key: "note.dropped" });
          timeline.endRun();
          setStatus("dropped");
        }
        break;
      } catch (err) {
        if (!(err instanceof ApiError)) throw err;
        // Right after a dropped connection the adapter may still hold the
        // thread for a moment; wait for it instead of failing the user.
        if (err.code === "THREAD_BUSY" && Date.now() - lastDrop < 15000 && attempt < 30) {
          setStatus("running", "pill.waitThread");
          await new Promise((r) => setTimeout(r, 250));
          continue;
        }
        await onApiError(err);
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
  if (e.type === "RUN_STARTED" && !bound(thread)) {
    thread.bound = true;
    renderWorkspace();
  } else if (e.type === "CUSTOM" && e.name === "iac-code.session.v1") {
    thread.session = e.value;
    renderSession();
  } else if (e.type === "RUN_FINISHED") {
    thread.pending = e.outcome?.type === "interrupt" ? e.outcome.interrupts ?? [] : [];
    setStatus(thread.pending.length ? "waiting" : "idle");
  } else if (e.type === "RUN_ERROR") {
    if (!isResume || CLEARS_PENDING.has(e.code)) thread.pending = [];
    if (e.code === "CANCELLED" && cancelAsked) setStatus("cancelled");
    else setStatus("error", "pill.errorCode", { code: e.code });
  }
}

async function onApiError(err) {
  const e = err.body?.error ?? {};
  const entry = { type: "console.error", status: err.status || null, code: err.code, message: err.message };
  if (typeof e.field === "string") entry.field = e.field;
  if (typeof e.reason === "string") entry.reason = e.reason;
  // The roots are not in the refusal (it names no path the client did not
  // send); the console asks for them and keeps them with the error.
  if (outsideRoots(entry)) entry.roots = await workspaceRoots({ token: settings.token, language: settings.language });
  record(entry);
  setStatus("error", "pill.errorCode", { code: err.code });
  if (err.code === "RESUME_REQUIRED") {
    const fromServer = e.pendingInterrupts;
    if (Array.isArray(fromServer) && fromServer.length) thread.pending = fromServer;
    if (!thread.pending.length) record({ type: "console.note", level: "warning", key: "note.unknownPending" });
  }
}

// ---- cancellation

ui.cancel.addEventListener("click", async () => {
  const s = thread?.session;
  if (!s?.executionId) return;
  ui.cancel.disabled = true;
  cancelAsked = true;
  record({ type: "console.cancel", executionId: s.executionId });
  try {
    const r = await cancelExecution({ token: settings.token, language: settings.language, executionId: s.executionId, threadId: thread.id, rosInvocationId: s.rosInvocationId ?? thread.rosInvocationId });
    record({ type: "console.cancelled", status: r.status, streaming: busy });
    if (!busy) {
      // Nothing streams: the cancel settles the waiting interrupts itself.
      thread.pending = [];
      persist();
      renderPending();
      setStatus(r.status === "cancelled" ? "cancelled" : "idle");
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    cancelAsked = false;
    record({ type: "console.error", origin: "cancel", status: err.status || null, code: err.code, message: err.message });
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
setLanguage(settings.language);
const saved = threads.find((x) => x.id === store.currentThreadId());
open(saved ?? newThread());
ui.message.focus();
