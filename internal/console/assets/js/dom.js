// Small DOM helpers. Text from the server is only ever set as text (never as
// HTML), so agent output cannot inject markup into the page.

/**
 * h("div", {class: "x", onclick: fn}, "text", child) builds an element.
 * Attributes starting with "on" become listeners; null/false are skipped.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs ?? {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "class") el.className = v;
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return el;
}

/** Pretty JSON when the text is JSON, else the text itself. */
export function pretty(text) {
  if (typeof text !== "string") return JSON.stringify(text, null, 2);
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** A random id that works in insecure contexts too (no randomUUID there). */
export function uid(prefix = "") {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const x = [...b].map((n) => n.toString(16).padStart(2, "0")).join("");
  return `${prefix}${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

const numberFormat = new Intl.NumberFormat();
export const fmtInt = (n) => numberFormat.format(n ?? 0);

export function fmtTime(ms) {
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

/**
 * Renders assistant text: fenced code blocks become <pre>, `inline code`
 * becomes <code>, blank lines separate paragraphs. Everything is text.
 */
export function richText(text) {
  const frag = document.createDocumentFragment();
  const parts = text.split(/```/);
  parts.forEach((part, i) => {
    if (i % 2 === 1) {
      const nl = part.indexOf("\n");
      const lang = nl > 0 ? part.slice(0, nl).trim() : "";
      const code = nl >= 0 ? part.slice(nl + 1) : part;
      frag.append(h("pre", { class: "code", "data-lang": lang || null }, h("code", {}, code.replace(/\n$/, ""))));
      return;
    }
    for (const para of part.split(/\n{2,}/)) {
      if (!para.trim()) continue;
      const p = h("p");
      para.split(/(`[^`\n]+`)/).forEach((seg, j) => {
        p.append(j % 2 === 1 ? h("code", {}, seg.slice(1, -1)) : document.createTextNode(seg));
      });
      frag.append(p);
    }
  });
  return frag;
}
