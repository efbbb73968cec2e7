// Drives Debian's chromium against a running iac-code-agui from a page
// served on another loopback port: the page's origin is listed in the
// server's --cors-origins (CORS_LISTED=1) or not. The page runs a turn with
// fetch, as @ag-ui/client's HttpAgent does (POST, JSON, Accept
// text/event-stream, a bearer token), and reads the stream. One JSON line.
//
// Environment: AGUI_URL, AGUI_TOKEN, AGUI_CWD, PAGE_PORT, CORS_LISTED,
// CHROMIUM.
import { chromium } from "playwright-core";
import { createServer } from "node:http";

const server = createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end("<!doctype html><title>cors</title>");
});
await new Promise((r) => server.listen(Number(process.env.PAGE_PORT), "127.0.0.1", r));
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"] });
const page = await browser.newPage();
await page.goto(`http://127.0.0.1:${process.env.PAGE_PORT}/`);
const out = await page.evaluate(async ({ url, token, cwd }) => {
  try {
    const res = await fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "text/event-stream", Authorization: `Bearer ${token}` },
      body: JSON.stringify({ threadId: `cors-${Date.now()}`, runId: "run-1", protocolVersion: "1.0", state: {}, tools: [], context: [],
        messages: [{ id: "m-1", role: "user", content: "Create a VPC" }],
        forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId: "inv-1", cwd } } }),
    });
    const text = await res.text();
    return { status: res.status, finished: text.includes('"RUN_FINISHED"'), requestId: res.headers.get("X-Request-Id") };
  } catch (e) {
    return { error: String(e) };
  }
}, { url: process.env.AGUI_URL, token: process.env.AGUI_TOKEN, cwd: process.env.AGUI_CWD });
console.log(JSON.stringify(out));
await browser.close();
server.close();
