// The conversation view: turns AG-UI events (and the console's own entries)
// into DOM, incrementally while a run streams and again from the stored log
// when a thread is reopened. It keeps no protocol state of its own beyond
// what it needs to place each event.
import { h, append, clear, pretty, richText, fmtInt, fmtTime } from "./dom.js";

const STATUS_TEXT = { running: "Running", done: "Done", failed: "Failed", interrupted: "Waiting" };

export class Timeline {
  constructor(el) {
    this.el = el;
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
    this.empty = h("div", { class: "empty" },
      h("h2", {}, "Start a conversation"),
      h("p", {}, "Ask for an Infrastructure-as-Code task. With the embedded agent, try ",
        h("code", {}, "Create a VPC template"), ", ", h("code", {}, "permission"), ", ",
        h("code", {}, "ask me a question"), ", ", h("code", {}, "deploy"), ", ",
        h("code", {}, "pipeline"), " or ", h("code", {}, "cancel me"), "."));
    this.el.append(this.empty);
  }

  /** Applies one log entry: an AG-UI event or a console.* entry. */
  apply(e) {
    this.empty?.remove();
    this.empty = null;
    const stick = this.nearBottom();
    const fn = this[`on_${e.type}`];
    if (fn) fn.call(this, e);
    if (stick) this.scrollToEnd();
  }

  nearBottom() {
    const s = this.el;
    return s.scrollHeight - s.scrollTop - s.clientHeight < 120;
  }

  scrollToEnd() {
    this.el.scrollTop = this.el.scrollHeight;
  }

  // The run container every event of a run goes into; created on demand so
  // replayed logs and pre-stream errors render too.
  container() {
    if (!this.run) this.startRun({ runId: "", timestamp: Date.now() });
    return this.run.body;
  }

  startRun(e) {
    const body = h("div", { class: "run-body" });
    const el = h("section", { class: "run", "aria-label": "Agent run", "aria-busy": "true" }, body);
    this.el.append(el);
    this.run = { el, body, runId: e.runId, pipeline: null, open: true };
  }

  endRun() {
    if (!this.run) return;
    this.run.el.setAttribute("aria-busy", "false");
    for (const t of this.run.el.querySelectorAll(".tool[data-status=running]")) setStatus(t, "done");
    for (const s of this.run.el.querySelectorAll(".step[data-status=running]")) setStatus(s, "interrupted");
    this.run.open = false;
    this.run = null;
  }

  // ---- console entries

  "on_console.user"(e) {
    this.el.append(h("div", { class: "msg user" },
      h("div", { class: "who" }, "You"),
      h("div", { class: "body" }, richText(e.text))));
  }

  "on_console.answer"(e) {
    this.el.append(h("div", { class: "msg user answer" },
      h("div", { class: "who" }, "Your answer"),
      h("ul", { class: "body answers" }, e.summary.map((s) => h("li", {}, s)))));
  }

  "on_console.error"(e) {
    this.container().append(errorCard(e.code, e.message, e.status));
    this.endRun();
  }

  "on_console.note"(e) {
    const parent = this.run ? this.run.body : this.el;
    parent.append(h("div", { class: `note ${e.level ?? "info"}`, role: e.level === "warning" ? "status" : null }, e.text));
  }

  // ---- AG-UI lifecycle

  on_RUN_STARTED(e) {
    this.endRun();
    this.startRun(e);
  }

  on_RUN_FINISHED(e) {
    const body = this.container();
    if (e.outcome?.type === "interrupt") {
      const asks = (e.outcome.interrupts ?? []).map((i) => i.metadata?.title || i.metadata?.prompt || i.message || i.id);
      body.append(h("div", { class: "run-end interrupt" },
        h("span", { class: "badge warn" }, "Waiting for you"),
        h("span", {}, asks.length === 1 ? asks[0] : `${asks.length} requests: ${asks.join("; ")}`)));
    } else {
      body.append(h("div", { class: "run-end ok" }, h("span", { class: "badge ok" }, "Finished"), usageLine(e.usage)));
    }
    this.endRun();
  }

  on_RUN_ERROR(e) {
    const body = this.container();
    body.append(errorCard(e.code, e.message));
    if (e.usage) body.append(h("div", { class: "run-end" }, usageLine(e.usage)));
    this.endRun();
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
      h("div", { class: "who" }, "Agent", caption ? h("span", { class: "caption" }, caption) : null), body);
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
    const el = h("details", { class: "reasoning streaming" }, h("summary", {}, "Reasoning"), body);
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
    const stick = this.nearBottom();
    for (const m of this.dirty) clear(m.body).append(richText(m.text));
    this.dirty.clear();
    if (stick) this.scrollToEnd();
  }

  // ---- tools

  on_TOOL_CALL_START(e) {
    this.tool(e.toolCallId, e.toolCallName);
  }

  on_TOOL_CALL_ARGS(e) {
    const t = this.tool(e.toolCallId);
    t.args += e.delta;
    t.argsEl.textContent = pretty(t.args);
    t.argsBox.hidden = false;
  }

  on_TOOL_CALL_END() {}

  on_TOOL_CALL_RESULT(e) {
    const t = this.tool(e.toolCallId);
    t.resultEl.textContent = pretty(e.content ?? "");
    t.resultBox.hidden = false;
    setStatus(t.el, "done");
  }

  tool(id, name) {
    let t = this.tools.get(id);
    if (t) return t;
    const argsEl = h("pre", { class: "code" });
    const resultEl = h("pre", { class: "code" });
    const progressEl = h("ul", { class: "progress-list" });
    const argsBox = h("div", { class: "field", hidden: true }, h("div", { class: "label" }, "Arguments"), argsEl);
    const resultBox = h("div", { class: "field", hidden: true }, h("div", { class: "label" }, "Result"), resultEl);
    const el = h("details", { class: "card tool", dataset: { status: "running" } },
      h("summary", {}, h("span", { class: "icon", "aria-hidden": "true" }, "⚙"),
        h("span", { class: "title" }, "Tool ", h("code", {}, name ?? "tool")),
        h("span", { class: "status" }, STATUS_TEXT.running)),
      h("div", { class: "card-body" }, argsBox, progressEl, resultBox));
    this.container().append(el);
    t = { el, argsEl, resultEl, argsBox, resultBox, progressEl, args: "" };
    this.tools.set(id, t);
    return t;
  }

  // ---- custom events

  on_CUSTOM(e) {
    const v = e.value ?? {};
    switch (e.name) {
      case "iac-code.artifact.v1":
        return this.container().append(artifactCard(v));
      case "iac-code.tool-progress.v1": {
        const t = this.tool(v.toolUseId ?? "tool-progress", v.name);
        t.progressEl.append(h("li", {}, v.message ?? v.status ?? JSON.stringify(v)));
        return;
      }
      case "iac-code.pipeline.v1":
        return this.pipelineEvent(v);
      default:
        return; // the session event and unknown namespaced events show elsewhere or not at all
    }
  }

  on_ACTIVITY_SNAPSHOT(e) {
    const p = this.pipeline();
    p.log.append(h("li", {}, h("details", {}, h("summary", {}, "Recovered pipeline snapshot"),
      h("pre", { class: "code" }, JSON.stringify(e.content?.snapshot ?? e.content, null, 2)))));
  }

  on_STEP_STARTED(e) {
    const s = this.step(e.stepName);
    setStatus(s, "running");
  }

  on_STEP_FINISHED(e) {
    setStatus(this.step(e.stepName), "done");
  }

  pipeline() {
    const run = this.run ?? (this.container(), this.run);
    if (run.pipeline) return run.pipeline;
    const title = h("span", { class: "title" }, "Pipeline");
    const status = h("span", { class: "status" }, "Running");
    const steps = h("ol", { class: "steps", "aria-label": "Pipeline steps" });
    const candidates = h("div", { class: "candidates", hidden: true });
    const progress = h("div", { class: "stack-progress", hidden: true });
    const log = h("ul", { class: "pipeline-log" });
    const el = h("details", { class: "card pipeline", open: true, dataset: { status: "running" } },
      h("summary", {}, h("span", { class: "icon", "aria-hidden": "true" }, "▤"), title, status),
      h("div", { class: "card-body" }, steps, candidates, progress, log));
    run.body.append(el);
    run.pipeline = { el, title, status, steps, candidates, progress, log, stepEls: new Map(), candEls: new Map(), stackEls: new Map() };
    return run.pipeline;
  }

  step(name) {
    const p = this.pipeline();
    let s = p.stepEls.get(name);
    if (s) return s;
    const m = /^candidate:([^:]+):(.*)$/.exec(name);
    const label = m ? [h("span", { class: "cand" }, m[1]), " › ", m[2]] : [name];
    s = h("li", { class: "step", dataset: { status: "running" } },
      h("span", { class: "dot", "aria-hidden": "true" }), h("span", { class: "name" }, label),
      h("span", { class: "status" }, STATUS_TEXT.running));
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
    if (type === "pipeline_started" || type === "pipeline_resumed") {
      p.title.textContent = `Pipeline ${v.pipelineName ?? d.pipelineType ?? ""}`.trim();
      p.status.textContent = type === "pipeline_started" ? "Running" : "Resumed";
    } else if (type === "pipeline_completed") {
      p.status.textContent = "Completed";
      p.el.dataset.status = "done";
    } else if (type === "pipeline_error") {
      p.status.textContent = "Failed";
      p.el.dataset.status = "failed";
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
    const word = type.replace(/^candidate_/, "").replace(/_/g, " ");
    el.status.textContent = word;
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
      bar.setAttribute("aria-label", `Progress of ${name}`);
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
  if (s) s.textContent = STATUS_TEXT[status] ?? status;
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
  if (!Array.isArray(usage) || !usage.length) return h("span", { class: "usage muted" }, "No token usage reported");
  const sum = (k) => usage.reduce((n, u) => n + (u[k] ?? 0), 0);
  const models = usage.map((u) => [u.provider, u.model].filter(Boolean).join("/")).filter(Boolean);
  return h("span", { class: "usage", title: "Token usage of this run" },
    h("strong", {}, `${fmtInt(sum("totalTokens"))} tokens`),
    ` · in ${fmtInt(sum("inputTokens"))} · out ${fmtInt(sum("outputTokens"))} · cached ${fmtInt(sum("cachedInputTokens"))}`,
    models.length ? ` · ${models.join(", ")}` : "");
}

export function errorCard(code, message, status) {
  return h("div", { class: "card error", role: "alert" },
    h("div", { class: "error-head" }, h("span", { class: "icon", "aria-hidden": "true" }, "!"),
      h("code", { class: "code-name" }, code ?? "ERROR"), status ? h("span", { class: "muted" }, `HTTP ${status}`) : null),
    h("p", { class: "error-message" }, message ?? ""));
}

function artifactCard(v) {
  const meta = v.metadata ?? {};
  const parts = Array.isArray(v.parts) ? v.parts : [];
  const text = parts.map((p) => p.text).filter((t) => typeof t === "string").join("\n");
  const where = meta.sourcePath ?? meta.uri ?? parts.find((p) => p.url)?.url;
  return h("div", { class: "card artifact" },
    h("div", { class: "artifact-head" }, h("span", { class: "icon", "aria-hidden": "true" }, "▣"),
      h("strong", {}, v.name ?? v.artifactId ?? "Artifact"),
      meta.mediaType ? h("span", { class: "chip" }, meta.mediaType) : null,
      meta.byteSize !== undefined ? h("span", { class: "chip" }, `${fmtInt(meta.byteSize)} bytes`) : null),
    where ? h("div", { class: "muted path" }, where) : null,
    text ? h("pre", { class: "code" }, text) : null);
}

export { fmtTime, append };
