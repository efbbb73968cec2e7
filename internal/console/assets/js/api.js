// The console's network calls: POST / (RunAgentInput in, SSE out), the
// cancellation extension and, when a workspace is refused as outside the
// allowed roots, GET /console/workspace-roots; all on the origin that
// served the page, all carrying the bearer token the user typed (when there
// is one).
import { t } from "./i18n.js";
import { readSSE } from "./sse.js";

/** An error answered before the stream, or a transport failure. */
export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }
}

function headers(token, language, extra = {}) {
  const h = { "Content-Type": "application/json", ...extra };
  if (token) h.Authorization = `Bearer ${token}`;
  // preferredLanguage in the body translates what the adapter says once it
  // has read the body; Accept-Language also covers the errors before that
  // (401, 415, 413, invalid JSON).
  if (language) h["Accept-Language"] = language;
  return h;
}

async function errorOf(res) {
  let body = null;
  try {
    body = await res.json();
  } catch {
    /* not the JSON envelope */
  }
  const e = body?.error ?? {};
  return new ApiError(res.status, e.code ?? `HTTP_${res.status}`, e.message ?? res.statusText, body);
}

async function post(path, { token, language }, body, extra, signal) {
  try {
    return await fetch(new URL(path, location.origin), {
      method: "POST",
      headers: headers(token, language, extra),
      body: JSON.stringify(body),
      signal,
      cache: "no-store",
    });
  } catch (err) {
    if (err?.name === "AbortError") throw err;
    throw new ApiError(0, "NETWORK_ERROR", t("error.network"), null);
  }
}

/**
 * Runs one AG-UI request. onEvent gets each parsed event, onHeartbeat each
 * SSE comment. Resolves when the stream ends, with whether a terminal event
 * was seen; throws ApiError for an answer before the stream.
 */
export async function runAgent({ token, language, input, signal, onEvent, onHeartbeat }) {
  const res = await post("/", { token, language }, input, { Accept: "text/event-stream" }, signal);
  if (!res.ok) throw await errorOf(res);
  let terminal = false;
  try {
    for await (const item of readSSE(res.body)) {
      if (item.comment !== undefined) {
        onHeartbeat?.(item.comment);
        continue;
      }
      let event;
      try {
        event = JSON.parse(item.data);
      } catch {
        continue;
      }
      if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") terminal = true;
      onEvent(event);
    }
  } catch (err) {
    if (err?.name === "AbortError") throw err;
    return { terminal, dropped: true };
  }
  return { terminal, dropped: !terminal };
}

/** POST /extensions/iac-code/v1/executions/{id}/cancel (adapter.md §7.1). */
export async function cancelExecution({ token, language, executionId, threadId, rosInvocationId }) {
  const path = `/extensions/iac-code/v1/executions/${encodeURIComponent(executionId)}/cancel`;
  const res = await post(path, { token, language }, { threadId, rosInvocationId });
  if (!res.ok) throw await errorOf(res);
  return res.json();
}

/** GET /console/workspace-roots: the allowed workspace roots, or null. */
export async function workspaceRoots({ token, language }) {
  try {
    const res = await fetch(new URL("/console/workspace-roots", location.origin), { headers: headers(token, language), cache: "no-store" });
    if (!res.ok) return null;
    const doc = await res.json();
    return Array.isArray(doc.allowedRoots) ? doc.allowedRoots.filter((r) => typeof r === "string") : null;
  } catch {
    return null;
  }
}
