// Drives Debian's chromium against a running iac-code-agui from a page
// served on another loopback port: the page's origin is listed in the
// server's --cors-origins or not. The page loads the official
// @ag-ui/client 1.0.0 (bundled for the browser by esbuild) and, with its
// HttpAgent, runs a turn that asks for a permission, then answers the
// interrupt. Prints one JSON line; any [ag-ui] warning or error the client
// logs in the page is reported in "diagnostics".
//
// Environment: AGUI_URL, AGUI_TOKEN, AGUI_CWD, PAGE_PORT, CHROMIUM.
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { createServer } from "node:http";

const bundle = await build({
  stdin: { contents: 'export { HttpAgent } from "@ag-ui/client";', resolveDir: import.meta.dirname },
  bundle: true, format: "esm", platform: "browser", write: false, logLevel: "warning",
});
const agui = bundle.outputFiles[0].text;

const server = createServer((req, res) => {
  if (req.url === "/agui.js") {
    res.writeHead(200, { "Content-Type": "text/javascript" });
    res.end(agui);
    return;
  }
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end("<!doctype html><title>cors</title>");
});
await new Promise((r) => server.listen(Number(process.env.PAGE_PORT), "127.0.0.1", r));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
const page = await browser.newPage();
const diagnostics = [];
page.on("console", (m) => {
  // Chromium reports the blocked request itself; only the client's own
  // lines count.
  if ((m.type() === "warning" || m.type() === "error") && m.text().includes("[ag-ui]")) diagnostics.push(m.text());
});
await page.goto(`http://127.0.0.1:${process.env.PAGE_PORT}/`);
const out = await page.evaluate(async ({ url, token, cwd }) => {
  const { HttpAgent } = await import("/agui.js");
  const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` }, threadId: `cors-${crypto.randomUUID()}` });
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: "Deploy the VPC stack (permission)" });
  const forwardedProps = { iacCode: { schemaVersion: 1, rosInvocationId: `inv-${crypto.randomUUID()}`, cwd } };
  const run = async (params) => {
    const types = [];
    let terminal;
    await agent.runAgent({ runId: crypto.randomUUID(), forwardedProps, ...params }, {
      onEvent: ({ event }) => {
        types.push(event.type);
        if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") terminal = event;
      },
    });
    return { types, terminal };
  };
  try {
    const first = await run({});
    const pending = agent.pendingInterrupts.map((it) => ({ id: it.id, reason: it.reason }));
    const answer = pending.length === 1
      ? await run({ resume: [{ interruptId: pending[0].id, status: "resolved", payload: { decision: "allow_once" } }] })
      : null;
    return {
      first: first.terminal?.outcome?.type ?? first.terminal?.type ?? null,
      pending,
      resumed: answer?.terminal?.outcome?.type ?? answer?.terminal?.type ?? null,
      resumedEvents: answer?.types.length ?? 0,
    };
  } catch (e) {
    return { error: String(e?.message ?? e) };
  }
}, { url: process.env.AGUI_URL, token: process.env.AGUI_TOKEN, cwd: process.env.AGUI_CWD });
out.diagnostics = diagnostics;
console.log(JSON.stringify(out));
await browser.close();
server.close();
