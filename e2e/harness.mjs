// Shared by the @ag-ui/client harnesses run.mjs and generic.mjs: the
// capture of the client's own diagnostics and the scenario driver, which
// prints one JSON line per scenario and exits 1 when any scenario fails or
// the client printed an [ag-ui] line.

// captureDiagnostics records every console.warn and console.error line
// (still printed) in the returned array.
export function captureDiagnostics() {
  const diagnostics = [];
  for (const level of ["warn", "error"]) {
    const orig = console[level].bind(console);
    console[level] = (...args) => {
      const text = args.map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : JSON.stringify(a))).join(" ");
      diagnostics.push(`${level}: ${text}`);
      orig(...args);
    };
  }
  return diagnostics;
}

export function expect(cond, msg) {
  if (!cond) throw new Error(msg);
}

// runScenarios runs the selected scenarios concurrently; each returns its
// runs, and a run with client warnings fails its scenario.
export async function runScenarios(scenarios, selected, diagnostics) {
  const results = await Promise.all(selected.map(async (name) => {
    const t0 = Date.now();
    try {
      const runs = await scenarios[name]();
      const warnings = runs.flatMap((r) => r.warnings);
      if (warnings.length) throw new Error(`client warnings: ${warnings.join(" | ")}`);
      return { name, ok: true, ms: Date.now() - t0, events: runs.reduce((n, r) => n + r.events.length, 0) };
    } catch (err) {
      return { name, ok: false, ms: Date.now() - t0, error: String(err?.stack ?? err) };
    }
  }));
  for (const r of results) console.log(JSON.stringify(r));
  const leftover = diagnostics.filter((d) => d.includes("[ag-ui]"));
  if (leftover.length) console.log(JSON.stringify({ name: "diagnostics", ok: false, error: leftover }));
  const failed = results.filter((r) => !r.ok).length + (leftover.length ? 1 : 0);
  console.log(`${results.length - results.filter((r) => !r.ok).length} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
