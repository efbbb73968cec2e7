// The console's own labels, in the 7 languages the server speaks
// (messages.json; internal/console's test checks that every language has
// every key with the same placeholders). Texts from the server (error
// messages, prompts, agent output) arrive already translated; only what the
// page itself writes is looked up here.
//
// The language is the one chosen in the settings, else the first of the
// browser's languages the console has, else English: the same choice the
// server makes from Accept-Language (a region such as pt-BR counts as pt).
export const LANGUAGES = ["en", "zh", "es", "fr", "de", "ja", "pt"];

const res = await fetch(new URL("../messages.json", import.meta.url));
const messages = res.ok ? await res.json() : {};
let current = "en";

/** The console language for a settings value ("" follows the browser). */
export function pick(chosen, browser = navigator.languages ?? [navigator.language]) {
  for (const tag of [chosen, ...browser]) {
    const base = String(tag ?? "").toLowerCase().split(/[-_]/)[0];
    if (LANGUAGES.includes(base)) return base;
    if (tag) break; // an explicit choice the console does not have: English
  }
  return "en";
}

export function language() {
  return current;
}

/** Switches the labels of the page (data-i18n attributes) to chosen. */
export function setLanguage(chosen) {
  current = pick(chosen);
  document.documentElement.lang = current;
  document.title = t("page.title");
  for (const el of document.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const attr of ["placeholder", "title", "aria-label"]) {
    for (const el of document.querySelectorAll(`[data-i18n-${attr}]`)) el.setAttribute(attr, t(el.getAttribute(`data-i18n-${attr}`)));
  }
  return current;
}

/** The label key in the current language, {name} replaced from params. */
export function t(key, params = {}) {
  const s = messages[current]?.[key] ?? messages.en?.[key] ?? key;
  return s.replace(/\{(\w+)\}/g, (m, k) => (params[k] === undefined ? m : String(params[k])));
}
