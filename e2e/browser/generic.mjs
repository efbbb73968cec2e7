// Drives the embedded web console (/console) in Debian's headless chromium
// through playwright-core, against a running iac-code-agui binary started
// with --a2a-profile generic in front of the a2a-go test agent
// (e2e/a2aagents/goagent) and a bearer token configured. One JSON line per
// scenario; exit status 1 when any scenario fails.
//
// Environment: CONSOLE_URL, CONSOLE_TOKEN, CHROMIUM, as console.mjs.
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const base = new URL(process.env.CONSOLE_URL);
const token = process.env.CONSOLE_TOKEN;
const executablePath = process.env.CHROMIUM ?? "/usr/bin/chromium";

const userDataDir = mkdtempSync(join(tmpdir(), "console-generic-"));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath,
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync"],
  viewport: { width: 1360, height: 880 },
  locale: "en-US",
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(20000);
const pageErrors = [];
page.on("pageerror", (e) => pageErrors.push(e.message));
page.on("console", (m) => { if (m.type() === "error") pageErrors.push(m.text()); });

function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}
const text = (loc) => loc.innerText();
const lastRun = () => page.locator(".run").last();

async function idle() {
  await page.waitForFunction(() => !document.querySelector("#send").disabled && document.querySelector("#status").dataset.state !== "running", null, { timeout: 30000 });
}

async function send(msg) {
  await page.fill("#message", msg);
  await page.press("#message", "Enter");
  await idle();
}

const scenarios = {
  async hello() {
    await page.goto(new URL("console", base).href);
    await page.fill("#token", token);
    await send("hello");
    const said = await text(lastRun().locator(".msg.assistant").first());
    expect(said.includes("Hello, world"), `assistant text ${JSON.stringify(said)}`);
    expect((await text(lastRun())).includes("(from an artifact)"), "no artifact text");
    expect(/Finished/.test(await text(lastRun().locator(".run-end"))), `run end ${await text(lastRun())}`);
  },

  // The agent's question is a free-text interrupt card; the typed answer
  // resumes its task, whose continuation streams.
  async ask() {
    await send("ask");
    const card = page.locator("#pending .interrupt");
    expect(await card.count() === 1, "no interrupt card");
    expect(/What is your name\?/.test(await text(card)), `card ${await text(card)}`);
    const box = card.locator("textarea");
    expect(await box.count() === 1, "no free-text answer field");
    await box.fill("Ada");
    await card.getByRole("button", { name: "Send answer" }).click();
    await idle();
    expect(await page.locator("#pending").isHidden(), "pending still shown");
    const run = lastRun();
    expect(/you said: Ada/.test(await text(run)), `continuation ${await text(run)}`);
    expect(/Finished/.test(await text(run.locator(".run-end"))), "the answer's run did not finish");
  },

  async fail() {
    await send("fail");
    const err = page.locator(".error").last();
    expect((await text(err.locator(".code-name"))) === "A2A_EXECUTION_FAILED", `code ${await text(err)}`);
    expect(/The agent failed on purpose\./.test(await text(err)), `message ${await text(err)}`);
  },
};

const results = [];
for (const name of Object.keys(scenarios)) {
  const t0 = Date.now();
  try {
    await scenarios[name]();
    results.push({ name, ok: true, ms: Date.now() - t0 });
  } catch (err) {
    results.push({ name, ok: false, ms: Date.now() - t0, error: String(err?.message ?? err) });
  }
}
results.push({ name: "noPageErrors", ok: pageErrors.length === 0, error: pageErrors.join(" | ") });
for (const r of results) console.log(JSON.stringify(r));
await context.close();
rmSync(userDataDir, { recursive: true, force: true });
process.exit(results.some((r) => !r.ok) ? 1 : 0);
