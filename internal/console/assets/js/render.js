// The conversation view: turns AG-UI events (and the console's own entries)
// into DOM, incrementally while a run streams and again from the stored log
// when a thread is reopened or the language changes. It keeps no protocol
// state of its own beyond what it needs to place each event and to settle
// what earlier runs showed as still open (a waiting interrupt, a running
// pipeline) once a later run of the thread answers it.
import { h, append, clear, pretty, richText, fmtInt, fmtTime } from "./dom.js";
import { t } from "./i18n.js";

// Errors after which a resumed interrupt is gone (adapter.md §5.6–§5.8);
// after any other RUN_ERROR of a resume the interrupts stay answerable.
export const CLEARS_PENDING = new Set(["CANCELLED", "EXECUTION_LOST", "RESUME_ALREADY_APPLIED", "STATE_PERSISTENCE_FAILED"]);

// Label keys of the statuses of tools, steps and pipelines.
const STATUS_KEY = {
  running: "status.running", done: "status.done", failed: "status.failed", interrupted: "status.waiting",
  waiting: "status.waiting", completed: "status.completed", cancelled: "status.cancelled", ended: "status.ended",
  resumed: "status.resumed",
};
const statusText = (s) => (STATUS_KEY[s] ? t(STATUS_KEY[s]) : s);

// The snapshot's step states (a2a-upstream.md §5.3) as the console's.
const SNAPSHOT_STATUS = { working: "running", completed: "done", failed: "failed", waiting_input: "interrupted", canceled: "cancelled", cancelled: "cancelled" };

// Pipeline states a later run cannot change any more.
const FINAL = new Set(["completed", "failed", "cancelled"]);

export class Timeline {
  constructor(el) {
    this.el = el;
    // Follow the end of the conversation unless the user scrolled away
    // from it; layout changes (the answer panel opening or closing, a
    // narrower window) keep the end in view too.
    this.follow = true;
    el.addEventListener("scroll", () => { this.follow = this.nearBottom(); }, { passive: true });
    new ResizeObserver(() => { if (this.follow) this.scrollToEnd(); }).observe(el);
    this.reset();
  }

  reset() {
    clear(this.el);
    this.run = null;
    this.messages = new Map();
    this.reasoning = new Map();
    this.tools = new Map();
    this.seenPipelineEvents = new Set();
    this.dirty = new Set();
    this.frame = 0;
    this.follow = true;
    // Across the runs of the thread: the interrupts still waiting, the
    // pipeline cards by pipelineRunId, the steps seen started and
    // finished, and what the user asked for that the next run settles.
    this.waiting = [];
    this.pipelines = new Map();
    this.stepsSeen = new Set();
    this.stepsFinished = new Set();
    this.answered = false;
    this.cancelRequested = false;
    this.empty = h("div", { class: "empty" },
      h("h2", {}, t("empty.title")),
      h("p", {}, t("empty.try"), " ",
        h("code", {}, "Create a VPC template"), ", ", h("code", {}, "permission"), ", ",
        h("code", {}, "ask me a question"), ", ", h("code", {}, "deploy"), ", ",
        h("code", {}, "pipeline"), ", ", h("code", {}, "cancel me"), "."));
    this.el.append(this.empty);
  }

  /** Applies one log entry: an AG-UI event or a console.* entry. */
  apply(e) {
    this.empty?.remove();
    this.empty = null;
    const fn = this[`on_${e.type}`];
    if (fn) fn.call(this, e);
    if (this.follow) this.scrollToEnd();
  }

  nearBottom() {
    const s = this.el;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 120;
  }

  /** Scrolls to the end at once and follows it from now on. */
  scrollToEnd() {
    this.follow = true;
    this.el.scrollTo({ top: this.el.scrollHeight, behavior: "instant" });
  }

  // The run container every event of a run goes into; created on demand so
  // replayed logs and pre-stream errors render too.
  container() {
    if (!this.run) this.startRun({ runId: "", timestamp: Date.now() });
    return this.run.body;
  }

  startRun(e) {
    const body = h("div", { class: "run-body" });
    const el = h("section", { class: "run", "aria-label": t("run.label"), "aria-busy": "true" }, body);
    this.el.append(el);
    this.run = { el, body, runId: e.runId, pipeline: null, open: true };
  }

  /** Ends the current run; outcome is "interrupt", "success", "error", "cancelled" or undefined (cut off). */
  endRun(outcome) {
    if (!this.run) return;
    this.run.el.setAttribute("aria-busy", "false");
    for (const el of this.run.el.querySelectorAll(".tool[data-status=running]")) setStatus(el, "done");
    const stepEnd = outcome === "interrupt" ? "interrupted" : "ended";
    for (const el of this.run.el.querySelectorAll(".step[data-status=running]")) setStatus(el, stepEnd);
    const p = this.run.pipeline;
    if (p && !FINAL.has(p.el.dataset.status)) {
      const end = { interrupt: "waiting", cancelled: "cancelled", error: "failed" }[outcome] ?? "ended";
      setStatus(p.el, end);
    }
    this.run.open = false;
    this.run = null;
  }

  // Settles the "Waiting for you" marks of earlier runs: answered,
  // cancelled or no longer answerable (closed).
  settleWaiting(how) {
    for (const badge of this.waiting.splice(0)) {
      badge.className = `badge ${how === "answered" ? "ok" : "neutral"}`;
      badge.dataset.state = how;
      badge.textContent = t(`badge.${how}`);
    }
  }

  // ---- console entries

  "on_console.user"(e) {
    this.el.append(h("div", { class: "msg user" },
      h("div", { class: "who" }, t("who.you")),
      h("div", { class: "body" }, richText(e.text))));
    this.scrollToEnd();
  }

  "on_console.answer"(e) {
    this.answered = true;
    this.el.append(h("div", { class: "msg user answer" },
      h("div", { class: "who" }, t("who.answer")),
      h("ul", { class: "body answers" }, e.summary.map((s) => h("li", {}, s)))));
    this.scrollToEnd();
  }

  "on_console.error"(e) {
    // An error of the cancel call belongs to the run it tried to stop,
    // which goes on; any other ends the run it was sent for.
    if (e.origin === "cancel") {
      this.cancelRequested = false;
      (this.run ? this.run.body : this.el).append(errorCard(e));
      return;
    }
    this.container().append(errorCard(e));
    this.answered = false;
    this.endRun("error");
  }

  "on_console.note"(e) {
    const parent = this.run ? this.run.body : this.el;
    const text = e.key ? t(e.key, e.params) : e.text;
    parent.append(h("div", { class: `note ${e.level ?? "info"}`, role: e.level === "warning" ? "status" : null }, text));
  }

  // The user pressed Cancel: a CANCELLED that follows is what they asked
  // for, not a failure.
  "on_console.cancel"() {
    this.cancelRequested = true;
  }

  // The cancel call answered. While a run streams, its CANCELLED outcome
  // follows (or came first); otherwise the waiting interrupts are gone.
  "on_console.cancelled"(e) {
    const done = e.status === "cancelled";
    const parent = this.run ? this.run.body : this.el;
    parent.append(h("div", { class: "note info" }, done ? t("cancel.done") : t("cancel.alreadyEnded")));
    if (e.streaming) return;
    this.cancelRequested = false;
    this.settleWaiting(done ? "cancelled" : "closed");
    for (const cards of this.pipelines.values()) {
      for (const p of cards) if (!FINAL.has(p.el.dataset.status)) setStatus(p.el, done ? "cancelled" : "ended");
    }
  }

  // ---- AG-UI lifecycle

  on_RUN_STARTED(e) {
    this.endRun();
    this.startRun(e);
  }

  on_RUN_FINISHED(e) {
    const body = this.container();
    // Whatever this run did, the interrupts an answer was sent for are
    // answered now (a new request, if any, is announced below).
    if (this.answered) this.settleWaiting("answered");
    this.answered = false;
    this.cancelRequested = false;
    if (e.outcome?.type === "interrupt") {
      const asks = (e.outcome.interrupts ?? []).map((i) => i.metadata?.title || i.metadata?.prompt || i.message || i.id);
      const badge = h("span", { class: "badge warn", dataset: { state: "waiting" } }, t("badge.waiting"));
      this.waiting.push(badge);
      body.append(h("div", { class: "run-end interrupt" }, badge,
        h("span", {}, asks.length === 1 ? asks[0] : t("run.requests", { count: asks.length, list: asks.join("; ") }))));
      this.endRun("interrupt");
    } else {
      body.append(h("div", { class: "run-end ok" }, h("span", { class: "badge ok" }, t("badge.finished")), usageLine(e.usage)));
      this.endRun("success");
    }
  }

  on_RUN_ERROR(e) {
    const body = this.container();
    const cancelled = e.code === "CANCELLED" && this.cancelRequested;
    if (this.answered && CLEARS_PENDING.has(e.code)) this.settleWaiting(e.code === "CANCELLED" ? "cancelled" : "closed");
    if (cancelled) {
      // The cancel the user asked for: an outcome, not an error.
      body.append(h("div", { class: "run-end cancelled", role: "status" },
        h("span", { class: "badge neutral" }, t("badge.cancelled")), h("span", {}, e.message ?? ""),
        e.usage ? usageLine(e.usage) : null));
    } else {
      body.append(errorCard(e));
      if (e.usage) body.append(h("div", { class: "run-end" }, usageLine(e.usage)));
    }
    this.answered = false;
    this.cancelRequested = false;
    this.endRun(e.code === "CANCELLED" ? "cancelled" : "error");
  }

  // ---- text and reasoning

  on_TEXT_MESSAGE_START(e) {
    this.message(e.messageId);
  }

  on_TEXT_MESSAGE_CONTENT(e) {
    const m = this.message(e.messageId);
    m.text += e.delta;
    this.schedule(m);
  }

  on_TEXT_MESSAGE_END(e) {
    const m = this.messages.get(e.messageId);
    if (m) m.el.classList.remove("streaming");
  }

  message(id) {
    let m = this.messages.get(id);
    if (m) return m;
    const caption = pipelineCaption(id);
    const body = h("div", { class: "body" });
    const el = h("div", { class: "msg assistant streaming" },
      h("div", { class: "who" }, t("who.agent"), caption ? h("span", { class: "caption" }, caption) : null), body);
    this.container().append(el);
    m = { el, body, text: "" };
    this.messages.set(id, m);
    return m;
  }

  on_REASONING_START(e) {
    this.reasoningOf(e.messageId);
  }

  on_REASONING_MESSAGE_CONTENT(e) {
    const r = this.reasoningOf(e.messageId);
    r.text += e.delta;
    r.body.textContent = r.text;
  }

  on_REASONING_END(e) {
    this.reasoning.get(e.messageId)?.el.classList.remove("streaming");
  }

  reasoningOf(id) {
    let r = this.reasoning.get(id);
    if (r) return r;
    const body = h("div", { class: "reasoning-text" });
    const el = h("details", { class: "reasoning streaming" }, h("summary", {}, t("reasoning")), body);
    this.container().append(el);
    r = { el, body, text: "" };
    this.reasoning.set(id, r);
    return r;
  }

  // Text is re-rendered once per frame, not once per delta.
  schedule(m) {
    this.dirty.add(m);
    if (this.frame) return;
    this.frame = requestAnimationFrame(() => this.flush());
  }

  flush() {
    this.frame = 0;
    for (const m of this.dirty) clear(m.body).append(richText(m.text));
    this.dirty.clear();
    if (this.follow) this.scrollToEnd();
  }

  // ---- tools

  on_TOOL_CALL_START(e) {
    this.tool(e.toolCallId, e.toolCallName);
  }

  on_TOOL_CALL_ARGS(e) {
    const tl = this.tool(e.toolCallId);
    tl.args += e.delta;
    tl.argsEl.textContent = pretty(tl.args);
    tl.argsBox.hidden = false;
  }

  on_TOOL_CALL_END() {}

  on_TOOL_CALL_RESULT(e) {
    const tl = this.tool(e.toolCallId);
    tl.resultEl.textContent = pretty(e.content ?? "");
    tl.resultBox.hidden = false;
    setStatus(tl.el, "done");
  }

  tool(id, name) {
    let tl = this.tools.get(id);
    if (tl) return tl;
    const argsEl = h("pre", { class: "code" });
    const resultEl = h("pre", { class: "code" });
    const progressEl = h("ul", { class: "progress-list" });
    const argsBox = h("div", { class: "field", hidden: true }, h("div", { class: "label" }, t("tool.arguments")), argsEl);
    const resultBox = h("div", { class: "field", hidden: true }, h("div", { class: "label" }, t("tool.result")), resultEl);
    const el = h("details", { class: "card tool", dataset: { status: "running" } },
      h("summary", {}, h("span", { class: "icon", "aria-hidden": "true" }, "⚙"),
        h("span", { class: "title" }, t("tool.title"), " ", h("code", {}, name ?? "tool")),
        h("span", { class: "status" }, statusText("running"))),
      h("div", { class: "card-body" }, argsBox, progressEl, resultBox));
    this.container().append(el);
    tl = { el, argsEl, resultEl, argsBox, resultBox, progressEl, args: "" };
    this.tools.set(id, tl);
    return tl;
  }

  // ---- custom events

  on_CUSTOM(e) {
    const v = e.value ?? {};
    switch (e.name) {
      case "iac-code.artifact.v1":
        return this.container().append(artifactCard(v));
      case "iac-code.tool-progress.v1": {
        const tl = this.tool(v.toolUseId ?? "tool-progress", v.name);
        tl.progressEl.append(h("li", {}, v.message ?? v.status ?? JSON.stringify(v)));
        return;
      }
      case "iac-code.pipeline.v1":
        return this.pipelineEvent(v);
      default:
        return; // the session event and unknown namespaced events show elsewhere or not at all
    }
  }

  // Every resume of a pipeline carries the adapter's snapshot of it
  // (protocol.md §5.6 step 4). Most of the time it says nothing the page
  // has not shown; only when it does (this page never saw the pipeline, or
  // misses some of its steps, e.g. after a dropped connection or a
  // trimmed log) is it shown, and its steps are added to the card.
  on_ACTIVITY_SNAPSHOT(e) {
    const c = e.content ?? {};
    const snap = c.snapshot ?? {};
    const id = c.pipelineRunId ?? snap.pipelineRunId;
    const known = id && this.pipelines.has(id);
    const p = this.pipeline();
    this.bindPipeline(p, id, snap.pipelineName);
    const steps = Array.isArray(snap.steps) ? snap.steps.filter((s) => s && typeof s.id === "string") : [];
    const missing = steps.filter((s) => !this.stepsSeen.has(s.id) ||
      ((s.status === "completed" || s.status === "failed") && !this.stepsFinished.has(s.id)));
    if (known && !missing.length) return;
    for (const s of steps) {
      if (p.stepEls.has(s.id)) continue;
      setStatus(this.step(s.id), SNAPSHOT_STATUS[s.status] ?? "running");
    }
    p.log.append(h("li", { class: "recovered" }, h("details", {}, h("summary", {}, t("pipeline.recovered")),
      h("pre", { class: "code" }, JSON.stringify(snap, null, 2)))));
  }

  on_STEP_STARTED(e) {
    this.stepsSeen.add(e.stepName);
    setStatus(this.step(e.stepName), "running");
  }

  on_STEP_FINISHED(e) {
    this.stepsSeen.add(e.stepName);
    this.stepsFinished.add(e.stepName);
    setStatus(this.step(e.stepName), "done");
  }

  pipeline() {
    const run = this.run ?? (this.container(), this.run);
    if (run.pipeline) return run.pipeline;
    const title = h("span", { class: "title" }, t("pipeline.title"));
    const status = h("span", { class: "status" }, statusText("running"));
    const steps = h("ol", { class: "steps", "aria-label": t("pipeline.steps") });
    const candidates = h("div", { class: "candidates", hidden: true });
    const progress = h("div", { class: "stack-progress", hidden: true });
    const log = h("ul", { class: "pipeline-log" });
    const el = h("details", { class: "card pipeline", open: true, dataset: { status: "running" } },
      h("summary", {}, h("span", { class: "icon", "aria-hidden": "true" }, "▤"), title, status),
      h("div", { class: "card-body" }, steps, candidates, progress, log));
    run.body.append(el);
    run.pipeline = { el, title, status, steps, candidates, progress, log, id: null, stepEls: new Map(), candEls: new Map(), stackEls: new Map() };
    return run.pipeline;
  }

  // Ties a card to its pipelineRunId, so that a later run's outcome of the
  // same pipeline settles it.
  bindPipeline(p, id, name) {
    if (name && p.title.textContent === t("pipeline.title")) p.title.textContent = t("pipeline.named", { name });
    if (!id || p.id) return;
    p.id = id;
    const cards = this.pipelines.get(id) ?? [];
    cards.push(p);
    this.pipelines.set(id, cards);
  }

  // A pipeline's final state, on its card and on the cards earlier runs
  // left waiting or running.
  finishPipeline(p, status) {
    setStatus(p.el, status);
    for (const other of this.pipelines.get(p.id) ?? []) {
      if (other !== p && !FINAL.has(other.el.dataset.status)) setStatus(other.el, status);
    }
  }

  step(name) {
    const p = this.pipeline();
    let s = p.stepEls.get(name);
    if (s) return s;
    const m = /^candidate:([^:]+):(.*)$/.exec(name);
    const label = m ? [h("span", { class: "cand" }, m[1]), " › ", m[2]] : [name];
    s = h("li", { class: "step", dataset: { status: "running" } },
      h("span", { class: "dot", "aria-hidden": "true" }), h("span", { class: "name" }, label),
      h("span", { class: "status" }, statusText("running")));
    p.steps.append(s);
    p.stepEls.set(name, s);
    return s;
  }

  pipelineEvent(v) {
    const key = v.eventId ?? (v.sequence !== undefined ? `seq:${v.sequence}` : null);
    if (key) {
      if (this.seenPipelineEvents.has(key)) return;
      this.seenPipelineEvents.add(key);
    }
    const p = this.pipeline();
    const type = v.eventType ?? "event";
    const d = v.data ?? {};
    this.bindPipeline(p, v.pipelineRunId, v.pipelineName ?? d.pipelineType);
    if (type === "pipeline_started" || type === "pipeline_resumed") {
      setStatus(p.el, type === "pipeline_started" ? "running" : "resumed");
    } else if (type === "pipeline_completed") {
      this.finishPipeline(p, "completed");
    } else if (type === "pipeline_error") {
      this.finishPipeline(p, "failed");
    } else if (type === "pipeline_canceled" || type === "pipeline_cancelled") {
      this.finishPipeline(p, "cancelled");
    } else if (type.startsWith("candidate_")) {
      this.candidate(p, v, type);
      return;
    } else if (/progress$/.test(type)) {
      this.progress(p, v, d, type);
      return;
    }
    p.log.append(h("li", { class: type === "pipeline_warning" || type === "pipeline_error" ? "warn" : null },
      h("code", {}, type), summarize(d)));
  }

  candidate(p, v, type) {
    const c = v.candidate ?? {};
    const id = c.id ?? v.data?.subPipelineId ?? "candidate";
    let el = p.candEls.get(id);
    if (!el) {
      el = { status: h("span", { class: "status" }), box: null };
      el.box = h("div", { class: "candidate", dataset: { status: "running" } },
        h("div", { class: "name" }, c.name ?? v.data?.subPipelineName ?? id), h("div", { class: "meta" }, id), el.status);
      p.candidates.append(el.box);
      p.candidates.hidden = false;
      p.candEls.set(id, el);
    }
    const word = type.replace(/^candidate_/, "");
    const key = `candidate.${word}`;
    el.status.textContent = t(key) === key ? word.replace(/_/g, " ") : t(key);
    el.box.dataset.status = /failed|interrupted/.test(type) ? "failed" : /completed|selected/.test(type) ? "done" : "running";
  }

  progress(p, v, d, type) {
    const id = d.stackId ?? d.toolUseId ?? type;
    let el = p.stackEls.get(id);
    if (!el) {
      const bar = h("progress", { max: "100", value: "0" });
      const label = h("span", { class: "label" });
      const status = h("span", { class: "status" });
      el = { bar, label, status };
      const name = d.stackName ?? id;
      bar.setAttribute("aria-label", t("pipeline.progressOf", { name }));
      p.progress.append(h("div", { class: "stack" }, h("div", { class: "row" }, h("strong", {}, name), status, label), bar));
      p.progress.hidden = false;
      p.stackEls.set(id, el);
    }
    const pct = Number(d.progressPercentage ?? d.progress ?? 0);
    el.bar.value = Number.isFinite(pct) ? pct : 0;
    el.label.textContent = Number.isFinite(pct) ? `${pct}%` : "";
    el.status.textContent = d.status ?? type;
  }
}

function setStatus(el, status) {
  el.dataset.status = status;
  const s = el.querySelector(":scope > summary > .status, :scope > .status");
  if (s) s.textContent = statusText(status);
}

function pipelineCaption(id) {
  if (!id?.startsWith("pipeline-message:")) return null;
  const parts = id.split(":");
  const scope = parts[2] ?? "pipeline";
  const coord = parts.at(-1);
  const step = /^step-(.+)-\d+$/.exec(coord)?.[1];
  const cand = id.match(/candidate-(cand-[^-:]+)/)?.[1];
  return [scope.replace(/_/g, " "), cand, step].filter(Boolean).join(" · ");
}

function summarize(d) {
  const keys = Object.keys(d ?? {});
  if (!keys.length) return "";
  const s = keys.slice(0, 4).map((k) => `${k}: ${typeof d[k] === "object" ? JSON.stringify(d[k]) : d[k]}`).join(", ");
  return ` ${s.length > 160 ? `${s.slice(0, 157)}…` : s}`;
}

export function usageLine(usage) {
  if (!Array.isArray(usage) || !usage.length) return h("span", { class: "usage muted" }, t("usage.none"));
  const sum = (k) => usage.reduce((n, u) => n + (u[k] ?? 0), 0);
  const models = usage.map((u) => [u.provider, u.model].filter(Boolean).join("/")).filter(Boolean);
  return h("span", { class: "usage", title: t("usage.title") },
    h("strong", {}, t("usage.tokens", { n: fmtInt(sum("totalTokens")) })),
    ` · ${t("usage.detail", { in: fmtInt(sum("inputTokens")), out: fmtInt(sum("outputTokens")), cached: fmtInt(sum("cachedInputTokens")) })}`,
    models.length ? ` · ${models.join(", ")}` : "");
}

/**
 * An error: its code, HTTP status, the server's translated message, and
 * the field and rule a validation error names (the rule is English by
 * protocol, protocol.md §2.4); for a workspace outside the allowed roots,
 * the roots (e.roots, fetched by the console).
 */
export function errorCard(e) {
  const details = [];
  if (e.field) details.push(h("dt", {}, t("error.field")), h("dd", {}, h("code", {}, e.field)));
  if (e.reason) details.push(h("dt", {}, t("error.reason")), h("dd", { class: "error-reason" }, e.reason));
  const roots = Array.isArray(e.roots) ? e.roots : null;
  return h("div", { class: "card error", role: "alert" },
    h("div", { class: "error-head" }, h("span", { class: "icon", "aria-hidden": "true" }, "!"),
      h("code", { class: "code-name" }, e.code ?? "ERROR"), e.status ? h("span", { class: "muted" }, `HTTP ${e.status}`) : null),
    h("p", { class: "error-message" }, e.message ?? ""),
    details.length ? h("dl", { class: "error-details" }, details) : null,
    roots ? h("div", { class: "error-roots" },
      h("p", {}, roots.length ? t("error.roots") : t("error.noRoots")),
      roots.length ? h("ul", {}, roots.map((r) => h("li", {}, h("code", {}, r)))) : null) : null);
}

/** Whether an error refuses the workspace as outside the allowed roots. */
export function outsideRoots(e) {
  return e?.field === "/forwardedProps/iacCode/cwd" && /outside/i.test(e.reason ?? "");
}

function artifactCard(v) {
  const meta = v.metadata ?? {};
  const parts = Array.isArray(v.parts) ? v.parts : [];
  const text = parts.map((p) => p.text).filter((x) => typeof x === "string").join("\n");
  const where = meta.sourcePath ?? meta.uri ?? parts.find((p) => p.url)?.url;
  return h("div", { class: "card artifact" },
    h("div", { class: "artifact-head" }, h("span", { class: "icon", "aria-hidden": "true" }, "▣"),
      h("strong", {}, v.name ?? v.artifactId ?? t("artifact")),
      meta.mediaType ? h("span", { class: "chip" }, meta.mediaType) : null,
      meta.byteSize !== undefined ? h("span", { class: "chip" }, t("artifact.bytes", { n: fmtInt(meta.byteSize) })) : null),
    where ? h("div", { class: "muted path" }, where) : null,
    text ? h("pre", { class: "code" }, text) : null);
}

export { fmtTime, append };
