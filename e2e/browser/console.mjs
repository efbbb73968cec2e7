// Drives the embedded web console (/console) in Debian's headless chromium
// through playwright-core, against a running iac-code-agui binary with its
// embedded agent and a bearer token configured. One JSON line per scenario;
// exit status 1 when any scenario fails.
//
// Environment: CONSOLE_URL (the server's base URL), CONSOLE_TOKEN (the
// server's bearer token), CONSOLE_CWD (a workspace root inside the allowed
// roots), CHROMIUM (executable), SCREENSHOTS (directory; when set, PNGs of
// the key states are written there).
import { chromium } from "playwright-core";
import { mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const base = new URL(process.env.CONSOLE_URL);
const token = process.env.CONSOLE_TOKEN;
const cwdRoot = process.env.CONSOLE_CWD;
const shots = process.env.SCREENSHOTS ?? "";
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

const userDataDir = mkdtempSync(join(tmpdir(), "console-chromium-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 1360, height: 880 },
  locale: "en-US",
  colorScheme: "light",
  reducedMotion: "reduce",
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20000);

// Every request the page makes: it must go to the adapter only, and every
// API call must carry the token the user typed.
const requests = [];
page.on("request", (r) => requests.push({ url: r.url(), method: r.method(), auth: r.headers().authorization ?? null, body: r.postData() }));
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(e.message));
page.on("console", (m) => { if (m.type() === "error") pageErrors.push(m.text()); });

function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}

async function shot(name) {
  if (!shots) return;
  await page.evaluate(() => document.activeElement?.blur());
  await page.screenshot({ path: join(shots, `${name}.png`) });
}

const lastRun = () => page.locator(".run").last();

async function send(text) {
  await page.fill("#message", text);
  await page.press("#message", "Enter");
  await idle();
}

async function idle() {
  await page.waitForFunction(() => !document.querySelector("#send").disabled && document.querySelector("#status").dataset.state !== "running", null, { timeout: 30000 });
}

async function setSettings({ cwd, runMode = "", pipelineName = "", language = "", bearer = token }) {
  if (cwd !== undefined) await page.fill("#cwd", cwd);
  await page.fill("#token", bearer);
  await page.selectOption("#run-mode", runMode);
  await page.fill("#pipeline-name", pipelineName);
  await page.selectOption("#language", language);
}

async function newThread(settings) {
  await page.click("#new-thread");
  await setSettings(settings);
}

const text = (loc) => loc.innerText();

// The forwardedProps.iacCode of the last POST / the page sent.
function lastRunProps() {
  const r = requests.filter((x) => x.method === "POST" && new URL(x.url).pathname === "/").at(-1);
  return JSON.parse(r.body).forwardedProps.iacCode;
}

// The timeline shows its end: the last element is inside the timeline's
// visible box (after a layout change too, e.g. the answer panel closing).
async function atEnd() {
  return page.evaluate(() => {
    const tl = document.querySelector("#timeline");
    const box = tl.getBoundingClientRect();
    const last = tl.lastElementChild.getBoundingClientRect();
    return { overflow: tl.scrollHeight > tl.clientHeight + 50, gap: tl.scrollHeight - tl.scrollTop - tl.clientHeight, visible: last.bottom <= box.bottom + 1 && last.bottom > box.top };
  });
}

// No earlier run still claims to wait for an answer or to be running.
async function nothingLeftOpen(what) {
  const waiting = await page.locator("#timeline .badge", { hasText: /^Waiting for you$/ }).count();
  expect(waiting === 0, `${what}: ${waiting} "Waiting for you" marks left after the answer`);
  const running = await page.locator("#timeline .pipeline[data-status=running], #timeline .pipeline[data-status=waiting]").count();
  expect(running === 0, `${what}: ${running} pipeline cards still running or waiting: ${await page.locator("#timeline .pipeline > summary .status").allInnerTexts()}`);
}

const scenarios = {
  // GET / from a browser leads to the console, which loads without the token.
  async loads() {
    const res = await page.goto(base.href);
    expect(new URL(page.url()).pathname === "/console", `landed on ${page.url()}`);
    expect(res.status() === 200, `console answered ${res.status()}`);
    expect(requests.every((r) => !r.auth), "the page load carried a token");
    // The server runs the demo agent, and the console says so (/health).
    await page.waitForSelector("#demo-mark:not([hidden])", { timeout: 5000 });
    expect((await text(page.locator("#demo-mark"))) === "demo agent", "no demo agent mark");
    // Every control is labelled.
    const unlabelled = await page.$$eval("input, select, textarea, button", (els) => els
      .filter((el) => !el.closest("[hidden]") && !(el.labels?.length || el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") || (el.tagName === "BUTTON" && el.textContent.trim())))
      .map((el) => el.id || el.outerHTML.slice(0, 60)));
    expect(unlabelled.length === 0, `unlabelled controls: ${unlabelled}`);
    // Keyboard: the message box has focus; Tab reaches Send (Cancel is
    // disabled while idle) with a visible focus ring.
    expect(await page.evaluate(() => document.activeElement.id) === "message", "message box not focused");
    await page.keyboard.press("Tab");
    const ring = await page.evaluate(() => {
      const el = document.activeElement;
      const cs = getComputedStyle(el);
      return { id: el.id, outline: cs.outlineStyle, width: parseFloat(cs.outlineWidth) };
    });
    expect(ring.id === "send" && ring.outline !== "none" && ring.width >= 2, `focus ring ${JSON.stringify(ring)}`);
  },

  // Errors show their code and the translated message (Spanish), both
  // before the stream (401 without the token) and inside it (RUN_ERROR);
  // the console's own labels are Spanish too, and follow a change of the
  // language at once.
  async spanishErrors() {
    await newThread({ cwd: `${cwdRoot}/es`, language: "es", bearer: "" });
    expect(await page.evaluate(() => document.documentElement.lang) === "es", "html lang is not es");
    const labels = { "#send": "Enviar", "#new-thread": "Nuevo hilo", "#cancel-run": "Cancelar ejecución", "#settings-title": "Ajustes", "label[for=cwd]": "Espacio de trabajo", "#status": "Listo" };
    for (const [sel, want] of Object.entries(labels)) {
      const got = await page.locator(sel).textContent();
      expect(got === want, `${sel} is ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
    expect((await page.getAttribute("#message", "placeholder")).startsWith("Pregunta al agente"), "message placeholder not Spanish");
    await send("Crea una plantilla de VPC");
    const unauth = page.locator(".error").last();
    expect((await text(unauth.locator(".code-name"))) === "UNAUTHORIZED", "no UNAUTHORIZED code");
    expect((await text(unauth.locator(".error-message"))) === "Se requiere un token bearer válido.", `401 message: ${await text(unauth)}`);
    expect(/HTTP 401/.test(await text(unauth)), "no HTTP status");
    await page.fill("#token", token);
    await send("Please fail this run");
    const failed = page.locator(".error").last();
    expect((await text(failed.locator(".code-name"))) === "A2A_EXECUTION_FAILED", `code ${await text(failed)}`);
    expect((await text(failed.locator(".error-message"))) === "La ejecución A2A falló.", `message ${await text(failed)}`);
    await shot("console-error-es");
    await send("Crea una plantilla de VPC");
    const run = lastRun();
    expect((await text(run.locator(".run-end .badge"))) === "Terminado", `run end ${await text(run.locator(".run-end"))}`);
    expect(/Herramienta/.test(await text(run.locator(".tool summary"))), "tool card label not Spanish");
    expect(/entrada .* salida/.test(await text(run.locator(".usage"))), "usage line not Spanish");
    // Switching the language redraws what is on screen in it.
    await page.selectOption("#language", "en");
    expect((await text(lastRun().locator(".run-end .badge"))) === "Finished", "the timeline kept the old language");
    expect((await text(page.locator("#send"))) === "Send", "labels kept the old language");
  },

  // A workspace outside the allowed roots: the error card shows the field
  // and rule the server sent, and the allowed roots (the console's
  // workspace-roots route, with the token). The refused thread is not
  // bound, so the corrected workspace is used; once bound, the field is
  // read-only with the reason, and a new thread is offered instead.
  async workspace() {
    await newThread({ cwd: "/etc/iac-code-console-outside" });
    await send("Write a VPC template");
    const err = page.locator(".error").last();
    expect((await text(err.locator(".code-name"))) === "INVALID_INPUT" && /HTTP 400/.test(await text(err)), `refusal ${await text(err)}`);
    const details = await text(err.locator(".error-details"));
    expect(/\/forwardedProps\/iacCode\/cwd/.test(details) && /is outside the allowed workspace roots/.test(details), `field and reason: ${details}`);
    const roots = await err.locator(".error-roots li").allInnerTexts();
    expect(roots.length === 1 && roots[0] === realpathSync(cwdRoot), `allowed roots shown: ${JSON.stringify(roots)}`);
    const calls = requests.filter((r) => new URL(r.url).pathname === "/console/workspace-roots");
    expect(calls.length === 1 && calls[0].method === "GET" && calls[0].auth === `Bearer ${token}`, `roots calls ${JSON.stringify(calls)}`);
    expect(await page.locator("#cwd").isEditable(), "the workspace of a refused (unbound) thread is read-only");
    await page.fill("#cwd", `${cwdRoot}/workspace`);
    await send("Write a VPC template");
    expect(/Finished/.test(await text(lastRun().locator(".run-end"))), `corrected workspace: ${await text(lastRun())}`);
    expect(lastRunProps().cwd === `${cwdRoot}/workspace`, `sent cwd ${lastRunProps().cwd}`);
    // Bound now: typing another workspace is not silently dropped; the field says why it cannot change.
    expect(!(await page.locator("#cwd").isEditable()), "the bound workspace is editable");
    expect(await page.locator("#cwd-bound").isVisible() && /bound to this workspace/.test(await text(page.locator("#cwd-bound"))), "no binding notice");
    expect(await page.getAttribute("#cwd", "aria-describedby") === "cwd-bound-text", "the notice does not describe the field");
    await page.focus("#cwd");
    await page.keyboard.type("/elsewhere");
    expect(await page.inputValue("#cwd") === `${cwdRoot}/workspace`, "typing changed the bound workspace");
    await send("Write a bucket template");
    expect(lastRunProps().cwd === `${cwdRoot}/workspace`, `second turn sent cwd ${lastRunProps().cwd}`);
    expect(/Finished/.test(await text(lastRun().locator(".run-end"))), "second turn");
    await shot("console-workspace-bound");
    await page.click("#cwd-new");
    expect(await page.locator("#cwd").isEditable() && await page.evaluate(() => document.activeElement.id) === "cwd", "the new thread's workspace is not ready to type");
    expect(await page.locator("#cwd-bound").isHidden(), "binding notice on a new thread");
  },

  // A full conversation: streamed text, reasoning, a tool call with its
  // arguments and result, an artifact and token usage; then a permission
  // interrupt allowed from the page.
  async conversationAndPermission() {
    await newThread({ cwd: `${cwdRoot}/conversation` });
    await send("Create a VPC template");
    const run = lastRun();
    expect(/VPC/.test(await text(run.locator(".msg.assistant"))), "no assistant text");
    expect(await run.locator("details.reasoning").count() === 1, "no reasoning");
    expect(await run.locator("details.reasoning").getAttribute("open") === null, "reasoning must start collapsed");
    await run.locator("details.reasoning summary").click();
    expect(/vpc\.yaml/.test(await text(run.locator(".reasoning-text"))), "reasoning text");
    const tool = run.locator(".tool").first();
    await tool.locator("summary").click();
    expect(/write_file/.test(await text(tool.locator("summary"))), "tool name");
    expect(/file_path/.test(await text(tool.locator(".field").first())), "tool arguments");
    expect(/Wrote \d+ bytes/.test(await text(tool)), "tool result");
    expect(/vpc\.yaml/.test(await text(run.locator(".artifact"))), "artifact");
    expect(/1,550 tokens/.test(await text(run.locator(".usage"))), `usage ${await text(run.locator(".run-end"))}`);
    await shot("console-conversation");

    await send("Deploy the VPC stack (permission)");
    const card = page.locator("#pending .interrupt");
    expect(await card.count() === 1, "no permission card");
    expect(/Run a local shell command/.test(await text(card)), "permission title");
    expect(/bash/.test(await text(card)), "tool name in the permission");
    const allow = card.getByRole("button", { name: "Allow once" });
    expect(await card.getByRole("button", { name: "Deny" }).count() === 1, "no deny button");
    expect(await page.evaluate(() => document.activeElement?.textContent) === "Allow once", "focus is not on the first answer");
    await shot("console-permission");
    await allow.click();
    await idle();
    expect(await page.locator("#pending").isHidden(), "pending still shown");
    const after = lastRun();
    expect(/Finished/.test(await text(after.locator(".run-end"))), `resume did not finish: ${await text(after)}`);
    // The tool started before the interrupt; its result arrives in the resumed run.
    const bash = page.locator(".tool", { hasText: "bash" });
    expect(await bash.count() === 1 && await bash.getAttribute("data-status") === "done", "no bash tool result after allow");
    expect(/Allow once/.test(await text(page.locator(".msg.answer").last())), "answer not shown");
  },

  // A question answered from its options.
  async question() {
    await newThread({ cwd: `${cwdRoot}/question`, runMode: "pipeline" });
    await send("Plan a deployment and ask me a question");
    const card = page.locator("#pending .interrupt");
    expect(/Which architecture/.test(await text(card)), "question prompt");
    expect(await card.locator("textarea").count() === 1, "no free-text field although allowFreeText");
    await card.getByRole("button", { name: "VPC with ECS" }).click();
    await idle();
    const run = lastRun();
    expect(/Finished/.test(await text(run.locator(".run-end"))), `question resume: ${await text(run)}`);
    const asked = page.locator(".tool[data-status=done]", { hasText: "VPC with ECS" });
    expect(await asked.count() === 1, "the answered question's tool has no result");
    // The first run's marks are settled by the answer: answered, and its
    // pipeline card completed like the resumed one.
    await nothingLeftOpen("question");
    expect(await page.locator("#timeline .badge[data-state=answered]").count() === 1, "the question is not marked answered");
    const states = await page.locator("#timeline .pipeline > summary .status").allInnerTexts();
    expect(states.length === 2 && states.every((s) => s === "Completed"), `pipeline cards ${JSON.stringify(states)}`);
    // The resume carried the adapter's snapshot, with nothing the page had not shown.
    expect(await page.getByText("Recovered pipeline snapshot").count() === 0, "an ordinary resume shows a recovered snapshot");
  },

  // A deployment confirmation: the summary, an edited override that the
  // agent must receive (the next confirmation shows it), then deploy.
  async deployment() {
    await newThread({ cwd: `${cwdRoot}/deploy`, runMode: "pipeline" });
    await send("Deploy the stack");
    let card = page.locator("#pending .interrupt");
    expect(/demo-vpc/.test(await text(card)) && /¥120/.test(await text(card)), "no deployment summary");
    const input = card.getByLabel("InstanceType");
    expect(await input.inputValue() === "ecs.g7.large", "parameter value");
    await input.fill("ecs.g7.xlarge");
    await shot("console-deployment");
    await card.getByRole("button", { name: "Adjust parameters" }).click();
    await idle();
    card = page.locator("#pending .interrupt");
    expect(await card.count() === 1, "no second confirmation after adjust");
    const answer = await text(page.locator(".msg.answer").last());
    expect(/InstanceType=ecs\.g7\.xlarge/.test(answer), `the answer does not carry the override: ${answer}`);
    const received = await card.getByLabel("InstanceType").inputValue();
    let overrideError = null;
    if (received !== "ecs.g7.xlarge") overrideError = `OVERRIDE_NOT_RECEIVED: the agent's next confirmation has InstanceType=${received}, want ecs.g7.xlarge`;
    await card.getByRole("button", { name: "Deploy now" }).click();
    await idle();
    const run = lastRun();
    expect(/Finished/.test(await text(run.locator(".run-end"))), `deploy: ${await text(run)}`);
    expect(await run.locator(".stack progress").evaluate((p) => p.value) === 100, "stack progress not at 100%");
    expect(/CREATE_COMPLETE/.test(await text(run.locator(".stack-progress"))), "no CREATE_COMPLETE");
    await nothingLeftOpen("deployment");
    expect(await page.locator("#timeline .badge[data-state=answered]").count() === 2, "both confirmations are not marked answered");
    if (overrideError) throw new Error(overrideError);
  },

  // A pipeline run: steps, candidates, progress and completion.
  async pipeline() {
    await newThread({ cwd: `${cwdRoot}/pipeline`, runMode: "pipeline", pipelineName: "selling" });
    await send("Run the selling pipeline");
    const p = lastRun().locator(".pipeline");
    expect(/Pipeline selling/.test(await text(p.locator("summary"))) && /Completed/.test(await text(p.locator("summary"))), `pipeline header ${await text(p.locator("summary"))}`);
    expect(await p.locator(".step").count() >= 4, "steps");
    expect(await p.locator(".step[data-status=done]").count() === await p.locator(".step").count(), "unfinished steps");
    expect(await p.locator(".candidate").count() === 2, "candidates");
    expect(await p.locator(".candidate[data-status=done]").count() === 2, "candidates not completed");
    expect(/single-zone/.test(await text(p.locator(".candidates"))), "candidate names");
    expect(await p.locator(".stack progress").count() === 1, "no stack progress");
    await shot("console-pipeline");
  },

  // Cancellation through the extension, on a stalled run kept alive by
  // heartbeats: the cancel the user asked for is a neutral outcome, not an
  // error. Then a waiting permission cancelled from the page.
  async cancellation() {
    await newThread({ cwd: `${cwdRoot}/cancel` });
    await page.fill("#message", "stall");
    await page.press("#message", "Enter");
    await page.waitForFunction(() => /heartbeat/.test(document.querySelector("#status").textContent), null, { timeout: 25000 });
    const cancel = page.locator("#cancel-run");
    expect(await cancel.isEnabled(), "cancel disabled while running");
    await cancel.click();
    await idle();
    expect(await lastRun().locator(".error").count() === 0, `the cancel shows as an error: ${await text(lastRun())}`);
    const end = lastRun().locator(".run-end.cancelled");
    expect(await end.count() === 1 && (await text(end.locator(".badge"))) === "Cancelled", `no Cancelled outcome: ${await text(lastRun())}`);
    expect(await page.getAttribute("#status", "data-state") === "cancelled" && (await text(page.locator("#status"))) === "Cancelled", `status ${await text(page.locator("#status"))}`);
    expect(/Cancellation requested/.test(await text(page.locator(".note").last())), "no cancel confirmation");
    let cancels = requests.filter((r) => /\/cancel$/.test(r.url));
    expect(cancels.length === 1 && cancels[0].method === "POST", `cancel requests ${JSON.stringify(cancels)}`);

    await send("Deploy the VPC stack (permission)");
    expect(await page.locator("#pending .interrupt").count() === 1, "no permission to cancel");
    await page.click("#cancel-run");
    await page.locator("#timeline .badge[data-state=cancelled]").waitFor();
    expect(await page.locator("#pending").isHidden(), "the cancelled permission is still offered");
    await nothingLeftOpen("cancelled permission");
    expect(await page.locator("#timeline .error").count() === 0, "a cancel shows as an error");
    expect(/the execution was cancelled/.test(await text(page.locator(".note").last())), "no cancel confirmation for the permission");
    expect(await page.getAttribute("#status", "data-state") === "cancelled", "status after cancelling the permission");
    cancels = requests.filter((r) => /\/cancel$/.test(r.url));
    expect(cancels.length === 2, `cancel requests ${cancels.length}`);
  },

  // After an answer the conversation follows the resumed run to its end,
  // although the answer panel took room and then gave it back.
  async autoScroll() {
    await page.setViewportSize({ width: 1360, height: 640 });
    try {
      await newThread({ cwd: `${cwdRoot}/scroll` });
      await send("Make a VPC template to scroll through");
      await send("Deploy the VPC stack (permission)");
      await page.locator("#pending .interrupt").getByRole("button", { name: "Allow once" }).click();
      await idle();
      await page.waitForFunction(() => {
        const tl = document.querySelector("#timeline");
        return tl.scrollHeight - tl.scrollTop - tl.clientHeight < 2;
      }, null, { timeout: 5000 }).catch(() => {});
      const end = await atEnd();
      expect(end.overflow, `the conversation does not overflow, the check would prove nothing: ${JSON.stringify(end)}`);
      expect(end.visible && end.gap < 2, `not scrolled to the end after the answer: ${JSON.stringify(end)}`);
    } finally {
      await page.setViewportSize({ width: 1360, height: 880 });
    }
  },

  // A resume whose snapshot brings what the page never showed (here the
  // thread's stored log is gone, as when it outgrew its storage share):
  // the snapshot is shown as recovered and its steps fill the card.
  async recoveredSnapshot() {
    await newThread({ cwd: `${cwdRoot}/recovered`, runMode: "pipeline" });
    await send("Plan a deployment and ask me a question");
    expect(await page.locator("#pending .interrupt").count() === 1, "no question");
    const id = await page.evaluate(() => document.querySelector(".thread[aria-current=true]").dataset.threadId);
    await page.evaluate((tid) => localStorage.removeItem(`iac-code-console.log.${tid}`), id);
    await page.reload();
    const card = page.locator("#pending .interrupt");
    await card.waitFor();
    await card.getByRole("button", { name: "VPC with ECS" }).click();
    await idle();
    const p = lastRun().locator(".pipeline");
    expect(/Recovered pipeline snapshot/.test(await text(p.locator(".pipeline-log"))), `no recovered snapshot: ${await text(p)}`);
    expect(await p.locator(".step", { hasText: "requirements" }).count() === 1, "snapshot steps not on the card");
    const head = await text(p.locator(":scope > summary"));
    expect(/Pipeline selling/.test(head) && /Completed/.test(head), `card ${head}`);
  },

  // A 390 px wide phone: the status badge, the thread list and the
  // composer are inside the viewport, nothing widens the page, and the
  // thread list is not covered by anything.
  async mobile() {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      await newThread({ cwd: `${cwdRoot}/mobile` });
      await send("Make a VPC template on a phone");
      await send("Deploy the VPC stack (permission)");
      await page.locator(".thread").first().scrollIntoViewIfNeeded();
      const r = await page.evaluate(() => {
        const box = (el) => { const b = el.getBoundingClientRect(); return { left: b.left, right: b.right, top: b.top, bottom: b.bottom, clipped: el.scrollWidth > el.clientWidth + 1 }; };
        const out = {};
        for (const s of ["#status", "#demo-mark", "#thread-list", "#new-thread", "#message", "#send", "#cancel-run"]) out[s] = box(document.querySelector(s));
        out.threads = [...document.querySelectorAll(".thread")].map((el) => {
          el.scrollIntoView({ block: "nearest" });
          const b = el.getBoundingClientRect();
          const hit = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
          return { ...box(el), covered: !el.contains(hit) };
        });
        out.pageWidth = document.documentElement.scrollWidth;
        out.status = document.querySelector("#status").textContent;
        return out;
      });
      expect(r.pageWidth <= 390, `the page is ${r.pageWidth} px wide`);
      for (const [s, b] of Object.entries(r)) {
        if (!b || typeof b !== "object" || Array.isArray(b)) continue;
        expect(b.left >= 0 && b.right <= 390, `${s} is outside the 390 px viewport: ${JSON.stringify(b)}`);
      }
      const st = r["#status"];
      expect(st.top >= 0 && st.bottom <= 844 && !st.clipped, `status badge "${r.status}" cut off: ${JSON.stringify(st)}`);
      expect(r.threads.length >= 2, `only ${r.threads.length} threads listed`);
      for (const b of r.threads) expect(b.left >= 0 && b.right <= 390 && !b.covered && b.bottom - b.top > 20, `thread entry cut off or covered: ${JSON.stringify(b)}`);
      await shot("console-mobile");
    } finally {
      await page.setViewportSize({ width: 1360, height: 880 });
    }
  },

  // A pending interrupt survives a reload: shown again, the adapter's
  // RESUME_REQUIRED is explained, and the answer resumes the thread.
  async reload() {
    await newThread({ cwd: `${cwdRoot}/reload` });
    await send("Deploy the VPC stack (permission)");
    expect(await page.locator("#pending .interrupt").count() === 1, "no pending before reload");
    await page.reload();
    const card = page.locator("#pending .interrupt");
    await card.waitFor();
    expect(/Deploy the VPC stack/.test(await text(page.locator(".msg.user").first())), "transcript not restored");
    await send("Something else");
    const err = page.locator(".error").last();
    expect((await text(err.locator(".code-name"))) === "RESUME_REQUIRED", `want RESUME_REQUIRED, got ${await text(err)}`);
    expect(await card.count() === 1, "pending lost after RESUME_REQUIRED");
    await card.getByRole("button", { name: "Allow once" }).click();
    await idle();
    expect(/Finished/.test(await text(lastRun().locator(".run-end"))), "resume after reload");
    // Reopen an earlier thread from the list.
    await page.locator(".thread", { hasText: "Create a VPC template" }).click();
    expect(/Create a VPC template/.test(await text(page.locator(".msg.user").first())), "reopened thread transcript");
    expect(await page.locator("#cwd").inputValue() === `${cwdRoot}/conversation`, "reopened thread workspace");
  },
};

const results = [];
for (const name of (process.env.SCENARIOS || Object.keys(scenarios).join(",")).split(",")) {
  const t0 = Date.now();
  try {
    await scenarios[name]();
    results.push({ name, ok: true, ms: Date.now() - t0 });
  } catch (err) {
    results.push({ name, ok: false, ms: Date.now() - t0, error: String(err?.message ?? err) });
    if (shots) await page.screenshot({ path: join(shots, `failed-${name}.png`) }).catch(() => {});
  }
}

// Across all scenarios: only the adapter's origin, and every API call with the token.
const foreign = requests.filter((r) => new URL(r.url).origin !== base.origin && !r.url.startsWith("data:"));
const api = requests.filter((r) => r.method === "POST");
const tokenless = api.filter((r) => r.auth !== `Bearer ${token}`);
const checks = [
  { name: "onlyAdapter", ok: foreign.length === 0, error: foreign.map((r) => r.url).join(" ") },
  // The one API call made before the token was typed is the 401 of spanishErrors.
  { name: "tokenOnEveryCall", ok: api.length > 10 && tokenless.length === 1 && tokenless[0].auth === null, error: `${tokenless.length} of ${api.length} calls without the token` },
  // Chromium logs every non-2xx fetch; the scenarios provoke a 400, a 401 and a 409.
  { name: "noPageErrors", ok: pageErrors.filter((e) => !/status of (400|401|409)/.test(e)).length === 0, error: pageErrors.join(" | ") },
];
for (const r of [...results, ...checks]) console.log(JSON.stringify(r));
await context.close();
rmSync(userDataDir, { recursive: true, force: true });
process.exit([...results, ...checks].some((r) => !r.ok) ? 1 : 0);
