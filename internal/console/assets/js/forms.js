// Interrupt forms, generated from each interrupt's responseSchema and
// metadata (adapter.md §5.2): the schema decides what can be sent, the
// metadata only labels and explains it. A schema the console does not
// recognise still gets a JSON editor, so every interrupt can be answered.
import { h, uid } from "./dom.js";
import { t } from "./i18n.js";

/**
 * Builds the card of one pending interrupt. answer(entry, summary) is
 * called with a resume entry {interruptId, status, payload?} and a short
 * text describing the choice.
 */
export function interruptCard(it, answer) {
  const md = it.metadata ?? {};
  const id = uid("it-");
  const shape = analyze(it.responseSchema);
  const send = (payload, summary) => answer({ interruptId: it.id, status: "resolved", payload }, summary);
  const body = h("div", { class: "card-body" });

  const prompt = md.prompt || it.message || "";
  body.append(h("p", { class: "prompt", id: `${id}-prompt` }, prompt));
  const facts = [
    [t("fact.tool"), md.toolName], [t("fact.purpose"), md.purpose], [t("fact.target"), md.target], [t("fact.effect"), md.effect],
    [t("fact.readOnly"), md.isReadOnly === undefined ? undefined : md.isReadOnly ? t("yes") : t("no")],
  ].filter(([, v]) => v !== undefined && v !== null && v !== "");
  if (facts.length) body.append(h("dl", { class: "facts" }, facts.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])));
  if (md.safeSummary) body.append(h("pre", { class: "code", "aria-label": t("interrupt.summary") }, md.safeSummary));

  let overrides = () => ({});
  if (md.deploymentSummary && shape.consts.some((c) => c.overrides)) {
    const dep = deploymentEditor(md.deploymentSummary, id);
    overrides = dep.overrides;
    body.append(dep.el);
  }

  const actions = h("div", { class: "actions", role: "group", "aria-labelledby": `${id}-title` });
  const optionLabel = (value) => {
    const o = (md.options ?? []).find((x) => x?.id === value || x?.value === value);
    return o?.label ?? o?.name ?? o?.title ?? humanize(String(value));
  };

  for (const en of shape.enums) {
    for (const value of en.values) {
      actions.append(h("button", {
        type: "button", class: `btn ${tone(value)}`, dataset: { value },
        onclick: () => send({ [en.key]: value }, optionLabel(value)),
      }, optionLabel(value)));
    }
  }
  for (const c of shape.consts) {
    const label = c.title ?? optionLabel(c.value);
    actions.append(h("button", {
      type: "button", class: `btn ${tone(String(c.value))}`, dataset: { value: c.value },
      onclick: () => {
        const payload = { [c.key]: c.value };
        const o = c.overrides ? overrides() : {};
        if (Object.keys(o).length) payload.parameter_overrides = o;
        const extra = Object.entries(o).map(([k, v]) => `${k}=${v}`).join(", ");
        send(payload, extra ? `${label} (${extra})` : label);
      },
    }, label));
  }
  if (actions.childElementCount) body.append(actions);

  if (shape.value) body.append(valueChooser(md, shape.value, id, send));
  if (shape.freeText) body.append(freeTextForm(md, shape.freeText, id, send));
  if (!shape.known) body.append(jsonForm(it, id, send));

  // A permission's "deny" already says no; other kinds can be cancelled,
  // which ends the execution (adapter.md §5.8).
  if (it.reason !== "tool_call") {
    body.append(h("div", { class: "cancel-row" }, h("button", {
      type: "button", class: "btn link", title: t("interrupt.cancelTitle"),
      onclick: () => answer({ interruptId: it.id, status: "cancelled" }, t("interrupt.cancelledAnswer")),
    }, t("interrupt.cancel"))));
  }

  const title = md.title || (it.reason === "tool_call" ? t("interrupt.permission") : t("interrupt.input"));
  const el = h("section", {
    class: `card interrupt kind-${md.kind ?? "other"}`, "aria-labelledby": `${id}-title`, "aria-describedby": `${id}-prompt`,
    dataset: { interruptId: it.id, kind: md.kind ?? "" },
  },
  h("header", {}, h("span", { class: "icon", "aria-hidden": "true" }, it.reason === "tool_call" ? "⚠" : "?"),
    h("h3", { id: `${id}-title` }, title), h("span", { class: "chip" }, md.kind ?? it.reason)),
  body);
  return el;
}

/** Reads the schema's branches into the controls the console can draw. */
export function analyze(schema) {
  const out = { enums: [], consts: [], value: null, freeText: null, known: false };
  const branches = Array.isArray(schema?.oneOf) ? schema.oneOf : Array.isArray(schema?.anyOf) ? schema.anyOf : [schema];
  const pending = [];
  for (const b of branches) {
    const props = b?.properties ?? {};
    const keys = Object.keys(props);
    const required = Array.isArray(b?.required) ? b.required : [];
    const constKey = keys.find((k) => props[k] && "const" in props[k]);
    if (constKey) {
      out.consts.push({ key: constKey, value: props[constKey].const, title: props[constKey].title, overrides: "parameter_overrides" in props });
      continue;
    }
    const enumKey = keys.find((k) => Array.isArray(props[k]?.enum) && required.includes(k));
    if (enumKey) {
      pending.push({ key: enumKey, values: props[enumKey].enum, overrides: "parameter_overrides" in props });
      continue;
    }
    if (props.value?.type === "string" && required.includes("value")) {
      out.value = { key: "value", labelKey: "label" in props ? "label" : null };
      continue;
    }
    const textKey = keys.find((k) => props[k]?.type === "string" && required.includes(k) && keys.length === 1);
    if (textKey) out.freeText = { key: textKey };
  }
  // An action branch next to one button per option says the same thing.
  for (const en of pending) if (!(en.overrides && out.consts.length)) out.enums.push(en);
  out.known = Boolean(out.enums.length || out.consts.length || out.value || out.freeText);
  return out;
}

function valueChooser(md, spec, id, send) {
  const opts = (md.options ?? []).filter((o) => o && typeof o === "object");
  const name = `${id}-value`;
  const form = h("form", { class: "choices" });
  if (!opts.length) return h("div");
  form.append(h("fieldset", {}, h("legend", {}, md.selector?.resourceType ? t("choice.typed", { type: md.selector.resourceType }) : t("choice.one")),
    opts.map((o, i) => {
      const value = o.id ?? o.value;
      return h("label", { class: "choice" },
        h("input", { type: "radio", name, value, checked: i === 0 }),
        h("span", {}, o.label ?? value), o.description ? h("span", { class: "muted" }, o.description) : null);
    })));
  form.append(h("button", { type: "submit", class: "btn primary" }, t("choice.use")));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const value = new FormData(form).get(name);
    const o = opts.find((x) => (x.id ?? x.value) === value);
    const payload = { [spec.key]: value };
    if (spec.labelKey && o?.label) payload[spec.labelKey] = o.label;
    send(payload, o?.label ?? value);
  });
  return form;
}

function freeTextForm(md, spec, id, send) {
  const input = h("textarea", { id: `${id}-free`, rows: "2", required: true, placeholder: md.freeTextPrompt ?? "" });
  const form = h("form", { class: "free-text" },
    h("label", { for: `${id}-free` }, md.freeTextPrompt || t("free.label")),
    h("div", { class: "row" }, input, h("button", { type: "submit", class: "btn" }, t("answer.send"))));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const text = input.value.trim();
    if (!text) return input.focus();
    send({ [spec.key]: text }, text);
  });
  input.addEventListener("keydown", (ev) => {
    if (ev.key === "Enter" && !ev.shiftKey) {
      ev.preventDefault();
      form.requestSubmit();
    }
  });
  return form;
}

function jsonForm(it, id, send) {
  const area = h("textarea", { id: `${id}-json`, rows: "4", class: "mono", spellcheck: "false" }, "{}");
  const err = h("p", { class: "field-error", role: "alert" });
  const form = h("form", { class: "json-answer" },
    h("label", { for: `${id}-json` }, t("json.label")),
    h("details", {}, h("summary", {}, t("json.schema")), h("pre", { class: "code" }, JSON.stringify(it.responseSchema, null, 2))),
    area, err, h("button", { type: "submit", class: "btn primary" }, t("answer.send")));
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    try {
      const payload = JSON.parse(area.value);
      err.textContent = "";
      send(payload, area.value);
    } catch {
      err.textContent = t("json.invalid");
      area.focus();
    }
  });
  return form;
}

/**
 * The deployment summary with one input per stack parameter; overrides()
 * returns only the parameters the user changed, in their original types.
 */
function deploymentEditor(ds, id) {
  const rows = [
    [t("deploy.plan"), ds.candidateName], [t("deploy.action"), ds.action], [t("deploy.stack"), ds.stackName], [t("deploy.region"), ds.region],
    [t("deploy.template"), ds.template], [t("deploy.monthlyCost"), ds.totalMonthlyCost],
  ].filter(([, v]) => v !== undefined && v !== null && v !== "");
  const el = h("div", { class: "deployment" });
  if (rows.length) el.append(h("dl", { class: "facts" }, rows.map(([k, v]) => [h("dt", {}, k), h("dd", {}, String(v))])));
  const resources = Array.isArray(ds.resources) ? ds.resources : [];
  if (resources.length) {
    el.append(h("table", { class: "resources" },
      h("caption", {}, t("deploy.resources")),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("deploy.name")), h("th", { scope: "col" }, t("deploy.spec")), h("th", { scope: "col" }, t("deploy.monthlyCost")))),
      h("tbody", {}, resources.map((r) => h("tr", {}, h("td", {}, r.name ?? ""), h("td", {}, String(r.spec ?? "")), h("td", {}, r.monthlyCost ?? ""))))));
  }
  const params = ds.parameters && typeof ds.parameters === "object" ? ds.parameters : {};
  const inputs = [];
  const fieldset = h("fieldset", { class: "params" }, h("legend", {}, t("deploy.parameters")));
  Object.entries(params).forEach(([k, v], i) => {
    const fid = `${id}-p${i}`;
    let input;
    if (typeof v === "boolean") input = h("input", { id: fid, type: "checkbox", checked: v, dataset: { param: k } });
    else input = h("input", { id: fid, type: typeof v === "number" ? "number" : "text", value: String(v ?? ""), dataset: { param: k } });
    inputs.push({ k, v, input });
    fieldset.append(h("div", { class: "param" }, h("label", { for: fid }, k), input));
  });
  if (inputs.length) el.append(fieldset);
  const overrides = () => {
    const out = {};
    for (const { k, v, input } of inputs) {
      let now;
      if (typeof v === "boolean") now = input.checked;
      else if (typeof v === "number") now = input.value === "" ? v : Number(input.value);
      else now = input.value;
      if (now !== v && !(typeof v !== "number" && typeof v !== "boolean" && String(v ?? "") === now)) out[k] = now;
    }
    return out;
  };
  return { el, overrides };
}

function tone(value) {
  if (/^(allow|confirm|approve|yes|accept|deploy)/i.test(value)) return "primary";
  if (/(deny|cancel|reject|no$)/i.test(value)) return "danger";
  return "";
}

function humanize(s) {
  return s.replace(/[_-]+/g, " ").replace(/^./, (c) => c.toUpperCase());
}
