// CopilotKit React end to end: the page of app.jsx (CopilotKitProvider,
// CopilotChat and useInterrupt from @copilotkit/react-core/v2), bundled
// with esbuild and driven in Debian's chromium by playwright-core, against
// the real CopilotKit v2 runtime (@copilotkit/runtime, an HttpAgent) in
// front of the real binary started with --compat copilotkit.
//
// Environment: AGUI_URL (the binary), AGUI_CWD (workspace), CHROMIUM,
// CASES (comma-separated subset). Prints one JSON line per case
// ({"name","ok","ms","error"}) and one per RunAgentInput the runtime sent
// ({"request": …}, validated against schemas/ by the Go test); exits 1 when
// any case fails.
import { createServer } from "node:http";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { tap } from "rxjs";
import { HttpAgent } from "@ag-ui/client";
import { CopilotRuntime } from "@copilotkit/runtime/v2";
import { createCopilotNodeListener } from "@copilotkit/runtime/v2/node";

const { AGUI_URL: aguiURL, AGUI_CWD: cwd } = process.env;
if (!aguiURL || !cwd) {
  console.log("AGUI_URL and AGUI_CWD are required");
  process.exit(2);
}

// RecordingAgent is the recipe's HttpAgent; it also prints each request
// body and each event it receives, so that the Go test can check them
// against the published contract.
class RecordingAgent extends HttpAgent {
  requestInit(input) {
    console.log(JSON.stringify({ request: input }));
    return super.requestInit(input);
  }
  run(input) {
    return super.run(input).pipe(tap((event) => console.log(JSON.stringify({ event }))));
  }
}

const out = join(mkdtempSync(join(tmpdir(), "ck-react-")), "dist");
await build({
  entryPoints: [new URL("./app.jsx", import.meta.url).pathname],
  bundle: true, format: "esm", outdir: out, jsx: "automatic", logLevel: "error",
  define: { "process.env.NODE_ENV": '"production"' }, minify: true,
  loader: { ".woff2": "file", ".woff": "file", ".ttf": "file" }, assetNames: "[name]",
});

const runtime = new CopilotRuntime({ agents: { iac: new RecordingAgent({ url: aguiURL }) } });
const copilot = createCopilotNodeListener({ runtime, basePath: "/api/copilotkit", activateChannels: false });
const page = `<!doctype html><html><head><meta charset="utf-8"><link rel="stylesheet" href="/app.css"></head>
<body><div id="root"></div><script>window.AGUI_CWD=${JSON.stringify(cwd)}</script><script type="module" src="/app.js"></script></body></html>`;
const server = createServer((req, res) => {
  if (req.url.startsWith("/api/copilotkit")) return copilot(req, res);
  const path = new URL(req.url, "http://x").pathname;
  const files = { "/app.js": ["app.js", "text/javascript"], "/app.css": ["app.css", "text/css"] };
  if (files[path]) {
    res.writeHead(200, { "content-type": files[path][1] });
    return res.end(readFileSync(join(out, files[path][0])));
  }
  res.writeHead(200, { "content-type": "text/html" });
  res.end(page);
});
await new Promise((r) => server.listen(0, "127.0.0.1", r));
const base = `http://127.0.0.1:${server.address().port}/`;

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || "/usr/bin/chromium",
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
});
const context = await browser.newContext();
const consoleErrors = [];

function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}

let current = null;
async function open(query = "") {
  const p = await context.newPage();
  current = p;
  p.on("pageerror", (e) => consoleErrors.push(String(e)));
  p.on("console", (m) => { if (m.type() === "error" || m.type() === "warning") consoleErrors.push(m.text().slice(0, 500)); });
  await p.goto(`${base}?fresh=1${query}`);
  await p.getByTestId("copilot-chat-textarea").waitFor();
  return p;
}

async function send(p, text) {
  await p.getByTestId("copilot-chat-textarea").fill(text);
  await p.getByTestId("copilot-chat-textarea").press("Enter");
}

const assistant = (p) => p.getByTestId("copilot-assistant-message");
const T = { timeout: 20000 };

async function idle(p) {
  // The send button is back (not the stop button) and enabled once typed.
  await p.getByTestId("copilot-chat-textarea").fill("x");
  await p.waitForFunction(() => {
    const b = document.querySelector('[data-testid="copilot-send-button"]');
    return b && !b.disabled && !b.querySelector("svg.lucide-square");
  }, null, T);
  await p.getByTestId("copilot-chat-textarea").fill("");
}

const cases = {
  async streamedText() {
    const p = await open();
    await send(p, "Create a VPC template");
    await assistant(p).last().filter({ hasText: "vpc.yaml" }).waitFor(T);
    expect(readFileSync(join(cwd, "vpc.yaml"), "utf8").startsWith("ROSTemplateFormatVersion"), "vpc.yaml not written");
    await p.close();
  },

  async permissionAllow() {
    const p = await open();
    await send(p, "Deploy it (permission)");
    await p.getByTestId("interrupt").and(p.locator('[data-kind="permission"]')).waitFor(T);
    await p.getByTestId("allow").click();
    await p.getByTestId("interrupt").waitFor({ state: "detached", ...T });
    await assistant(p).filter({ hasText: "The workspace is" }).waitFor(T);
    await idle(p);
    await p.close();
  },

  async permissionDeny() {
    const p = await open();
    await send(p, "Deploy it (permission)");
    await p.getByTestId("deny").waitFor(T);
    await p.getByTestId("deny").click();
    await p.getByTestId("interrupt").waitFor({ state: "detached", ...T });
    await assistant(p).filter({ hasText: "permission was denied" }).waitFor(T);
    await idle(p);
    await p.close();
  },

  async question() {
    const p = await open("&mode=pipeline");
    await send(p, "Plan a deployment and ask me a question");
    await p.getByTestId("free-text").waitFor(T);
    await p.getByTestId("free-text").fill("Use the cheapest region");
    await p.getByTestId("send-answer").click();
    await p.getByTestId("tool-result").filter({ hasText: "Use the cheapest region" }).waitFor(T);
    await p.locator('[data-testid="pipeline-card"][data-status="pipeline_completed"]').waitFor(T);
    await p.close();
  },

  async deploymentWithOverride() {
    const p = await open("&mode=pipeline");
    await send(p, "deploy the stack");
    await p.getByTestId("option-confirm").waitFor(T);
    await p.getByTestId("overrides").fill('{"InstanceCount": 2}');
    await p.getByTestId("option-confirm").click();
    await p.locator('[data-testid="pipeline-card"][data-status="pipeline_completed"]').waitFor(T);
    // The resumed run's recovery snapshot, an ACTIVITY_SNAPSHOT, is an
    // activity message CopilotChat renders with the page's renderer.
    await p.getByTestId("pipeline-snapshot").first().waitFor(T);
    await p.close();
  },

  async pipeline() {
    const p = await open("&mode=pipeline");
    await send(p, "Run the pipeline");
    const card = p.locator('[data-testid="pipeline-card"][data-status="pipeline_completed"]');
    await card.waitFor(T);
    const events = await card.getByTestId("pipeline-event").allInnerTexts();
    expect(events.includes("pipeline_started") && events.includes("pipeline_completed"), `pipeline events ${events}`);
    expect((await assistant(p).allInnerTexts()).join("").length > 0, "no pipeline text");
    await p.close();
  },

  async stop() {
    const p = await open();
    await send(p, "cancel me");
    await assistant(p).last().waitFor(T);
    await p.waitForFunction(() => {
      const b = document.querySelector('[data-testid="copilot-send-button"]');
      return b && b.querySelector("svg.lucide-square");
    }, null, T);
    await p.getByTestId("copilot-send-button").click();
    const before = (await assistant(p).last().innerText()).length;
    await idle(p);
    // Nothing streams after the stop ...
    await p.waitForTimeout(600);
    const after = (await assistant(p).last().innerText()).length;
    expect(after <= before + 20, `text kept streaming after stop (${before} → ${after})`);
    // ... and the thread takes the next message.
    await send(p, "Create a VPC template");
    await assistant(p).last().filter({ hasText: "vpc.yaml" }).waitFor(T);
    await p.close();
  },

  async reloadResumesPendingInterrupt() {
    const p = await open();
    await send(p, "Deploy it (permission)");
    await p.getByTestId("allow").waitFor(T);
    const id = await p.getByTestId("identity");
    const thread = await id.getAttribute("data-thread");
    const ros = await id.getAttribute("data-ros");
    await p.goto(base); // a reload without fresh=1: the stored identity
    await p.getByTestId("copilot-chat-textarea").waitFor();
    const again = p.getByTestId("identity");
    expect((await again.getAttribute("data-thread")) === thread && (await again.getAttribute("data-ros")) === ros, "the reload changed the thread identity");
    // The runtime replays the thread's last run on connect, so useInterrupt
    // shows the pending permission again.
    await p.getByTestId("allow").click(T);
    await p.getByTestId("interrupt").waitFor({ state: "detached", ...T });
    await assistant(p).filter({ hasText: "The workspace is" }).waitFor(T);
    await idle(p);
    await p.close();
  },

  async resumeRequiredAfterRuntimeLostHistory() {
    // The runtime's thread history is in its memory: a runtime restart, or
    // an interrupt raised by another client, leaves a page with nothing to
    // replay. Here another client raises it; the page has the identity.
    const threadId = `ck-react-${Date.now()}`;
    const rosInvocationId = `inv-${threadId}`;
    const res = await fetch(aguiURL, {
      method: "POST", headers: { "content-type": "application/json" },
      body: JSON.stringify({ threadId, runId: `${threadId}-r1`, state: {}, tools: [], context: [],
        messages: [{ id: "m1", role: "user", content: "Deploy it (permission)" }],
        forwardedProps: { iacCode: { schemaVersion: 1, rosInvocationId, cwd } } }),
    });
    expect((await res.text()).includes('"outcome":{"type":"interrupt"'), "the other client got no interrupt");
    const p = await open();
    await p.evaluate((id) => localStorage.setItem("iac-thread", JSON.stringify(id)), { threadId, rosInvocationId });
    await p.goto(base);
    await p.getByTestId("copilot-chat-textarea").waitFor();
    await send(p, "hello again");
    await p.locator('[data-testid="server-error"][data-code="RESUME_REQUIRED"]').waitFor(T);
    await p.getByTestId("allow").click(T);
    await assistant(p).filter({ hasText: "The workspace is" }).waitFor(T);
    await p.close();
  },

  async frontendTool() {
    const p = await open("&tool=1");
    await send(p, "Create a VPC template");
    await assistant(p).last().filter({ hasText: "vpc.yaml" }).waitFor(T);
    await p.close();
  },
};

const only = process.env.CASES ? process.env.CASES.split(",") : Object.keys(cases);
let failed = 0;
for (const name of only) {
  const start = Date.now();
  try {
    await cases[name]();
    console.log(JSON.stringify({ name, ok: true, ms: Date.now() - start }));
  } catch (err) {
    failed++;
    const shown = await current?.evaluate(() => document.body.innerText).catch(() => "") ?? "";
    console.log(JSON.stringify({ name, ok: false, ms: Date.now() - start, error: String(err?.message ?? err).slice(0, 2000), page: shown.slice(0, 6000) }));
    await current?.close().catch(() => {});
  }
}
if (consoleErrors.length) console.log(JSON.stringify({ pageConsole: consoleErrors.slice(0, 50) }));
await browser.close();
server.close();
process.exit(failed ? 1 : 0);
