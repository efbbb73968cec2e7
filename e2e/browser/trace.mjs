// Draws one trace, as Jaeger's query API answers it (/api/traces/{id}),
// as a waterfall page in Debian's headless chromium through
// playwright-core, and saves a screenshot: the picture of a trace in
// docs/operations.md. The Jaeger built from the module proxy serves no UI
// assets, so the page is drawn here from the API's JSON.
//
// Environment: TRACE_JSON (the API's answer, a file), OUT (the PNG to
// write), CHROMIUM (executable).
import { chromium } from "playwright-core";
import { readFileSync } from "node:fs";

const answer = JSON.parse(readFileSync(process.env.TRACE_JSON, "utf8"));
const trace = answer.data[0];
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

const spans = trace.spans.map((s) => ({
  id: s.spanID,
  parent: (s.references.find((r) => r.refType === "CHILD_OF") ?? {}).spanID ?? "",
  op: s.operationName,
  service: trace.processes[s.processID].serviceName,
  start: s.startTime,
  dur: s.duration,
  tags: Object.fromEntries(s.tags.map((t) => [t.key, t.value])),
  events: (s.logs ?? []).map((l) => (l.fields.find((f) => f.key === "event") ?? {}).value).filter(Boolean),
}));
const byId = new Map(spans.map((s) => [s.id, s]));
const children = new Map();
for (const s of spans) {
  const p = byId.has(s.parent) ? s.parent : "";
  if (!children.has(p)) children.set(p, []);
  children.get(p).push(s);
}
for (const list of children.values()) list.sort((a, b) => a.start - b.start);
const rows = [];
const walk = (parent, depth) => {
  for (const s of children.get(parent) ?? []) {
    rows.push({ ...s, depth });
    walk(s.id, depth + 1);
  }
};
walk("", 0);
const t0 = Math.min(...spans.map((s) => s.start));
const t1 = Math.max(...spans.map((s) => s.start + s.dur));
const total = Math.max(1, t1 - t0);
const colors = { "iac-code-agui": "#3b6fd4", "iac-code-agui-demo-agent": "#d9822b" };
const esc = (v) => String(v).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
const shown = ["iac_code_agui.run.kind", "iac_code_agui.run.outcome", "iac_code_agui.run.events", "iac_code_agui.run.first_event_ms",
  "iac_code_agui.error.code", "iac_code_agui.state.store", "iac_code_agui.state.bytes", "iac_code_agui.a2a.events", "http.response.status_code"];
const ms = (us) => (us / 1000).toFixed(us < 10000 ? 2 : 1) + " ms";
const html = `<!doctype html><html><head><meta charset="utf-8"><style>
body { font: 13px/1.35 "DejaVu Sans", sans-serif; margin: 18px; color: #222; }
h1 { font-size: 16px; margin: 0 0 4px; } .sub { color: #666; margin-bottom: 12px; }
table { border-collapse: collapse; width: 100%; } td { padding: 3px 6px; border-bottom: 1px solid #eee; vertical-align: top; }
.name { white-space: nowrap; width: 470px; } .svc { font-size: 11px; color: #fff; border-radius: 3px; padding: 0 4px; margin-right: 6px; }
.lane { position: relative; height: 16px; background: #f6f7f9; } .bar { position: absolute; top: 2px; height: 12px; border-radius: 2px; min-width: 2px; }
.tags { color: #555; font-size: 11px; } .dur { white-space: nowrap; width: 70px; text-align: right; color: #444; }
.legend span { margin-right: 14px; }
</style></head><body>
<h1>Trace ${esc(trace.traceID)}</h1>
<div class="sub">${spans.length} spans, ${ms(total)} &middot; from Jaeger's query API &middot;
<span class="legend">${Object.entries(colors).map(([k, c]) => `<span><span class="svc" style="background:${c}">${esc(k)}</span></span>`).join("")}</span></div>
<table>${rows.map((r) => `<tr>
<td class="name" style="padding-left:${6 + r.depth * 16}px"><span class="svc" style="background:${colors[r.service] ?? "#777"}">${r.service === "iac-code-agui" ? "gateway" : "agent"}</span>${esc(r.op)}
<div class="tags" style="padding-left:0">${shown.filter((k) => k in r.tags).map((k) => `${esc(k.replace("iac_code_agui.", ""))}=${esc(r.tags[k])}`).join(" ")}${r.events.length ? " &middot; events: " + r.events.map(esc).join(", ") : ""}</div></td>
<td><div class="lane"><div class="bar" style="left:${((r.start - t0) / total) * 100}%;width:${(r.dur / total) * 100}%;background:${colors[r.service] ?? "#777"}"></div></div></td>
<td class="dur">${ms(r.dur)}</td></tr>`).join("")}</table></body></html>`;

const browser = await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 200 }, deviceScaleFactor: 1 });
await page.setContent(html);
await page.screenshot({ path: process.env.OUT, fullPage: true });
await browser.close();
console.log(JSON.stringify({ ok: true, spans: spans.length, out: process.env.OUT }));
