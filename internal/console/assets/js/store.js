// What the console keeps, all in this browser's localStorage: the settings
// (the bearer token included; it never leaves the browser except in the
// Authorization header of the console's own calls), the known threads with
// their pending interrupts, and a compact log of each thread's events so a
// reopened thread shows its conversation again.
const KEY = "iac-code-console";
const MAX_LOG_CHARS = 400_000;
const MAX_THREADS = 50;

function read(key, fallback) {
  try {
    const v = localStorage.getItem(`${KEY}.${key}`);
    return v === null ? fallback : JSON.parse(v);
  } catch {
    return fallback;
  }
}

function write(key, value) {
  try {
    localStorage.setItem(`${KEY}.${key}`, JSON.stringify(value));
    return true;
  } catch {
    return false; // quota exceeded or storage disabled: keep working in memory
  }
}

export const defaultSettings = {
  cwd: "/tmp/iac-code-console",
  runMode: "",
  pipelineName: "",
  language: "",
  token: "",
};

export function loadSettings() {
  return { ...defaultSettings, ...read("settings", {}) };
}

export function saveSettings(s) {
  write("settings", s);
}

export function loadThreads() {
  const list = read("threads", []);
  return Array.isArray(list) ? list : [];
}

export function saveThreads(list) {
  list.sort((a, b) => (b.updatedAt ?? 0) - (a.updatedAt ?? 0));
  for (const t of list.splice(MAX_THREADS)) localStorage.removeItem(`${KEY}.log.${t.id}`);
  write("threads", list);
}

export function currentThreadId() {
  return read("current", null);
}

export function setCurrentThreadId(id) {
  write("current", id);
}

export function loadLog(threadId) {
  const log = read(`log.${threadId}`, []);
  return Array.isArray(log) ? log : [];
}

// Streaming deltas of one message are merged, so a long answer is one entry.
const mergeable = { TEXT_MESSAGE_CONTENT: "messageId", REASONING_MESSAGE_CONTENT: "messageId", TOOL_CALL_ARGS: "toolCallId" };

/** Appends an entry to a thread's in-memory log, merging deltas. */
export function appendLog(log, entry) {
  const key = mergeable[entry.type];
  const last = log.at(-1);
  if (key && last && last.type === entry.type && last[key] === entry[key]) {
    last.delta += entry.delta;
    return;
  }
  log.push({ ...entry });
}

export function saveLog(threadId, log) {
  let total = JSON.stringify(log).length;
  // Oldest entries go first when a thread outgrows its share of storage.
  while (total > MAX_LOG_CHARS && log.length > 1) {
    total -= JSON.stringify(log.shift()).length;
  }
  if (!write(`log.${threadId}`, log)) {
    localStorage.removeItem(`${KEY}.log.${threadId}`);
  }
}

export function forgetThread(threadId) {
  localStorage.removeItem(`${KEY}.log.${threadId}`);
}
