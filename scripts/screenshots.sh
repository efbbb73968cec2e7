#!/usr/bin/env bash
# Regenerates the console screenshots in docs/console/ by running the
# browser test (real binary, embedded agent, headless chromium) with
# SCREENSHOTS set, and the trace picture docs/img/trace.png (e2e/tracing,
# a real Jaeger: build it first, docs/operations.md "Tracing"). Needs
# chromium (apt-get install chromium) and npm.
set -euo pipefail
cd "$(dirname "$0")/.."
out="$(pwd)/docs/console"
mkdir -p "$out"
rm -f "$out"/*.png
(cd e2e/browser && npm ci --no-audit --no-fund >/dev/null)
SCREENSHOTS="$out" go test -count=1 -run '^TestConsole$' ./e2e/browser
rm -f "$out"/failed-*.png
ls -l "$out"
SCREENSHOTS="$(pwd)/docs/img" go test -count=1 -run '^TestTraceScreenshot$' ./e2e/tracing
ls -l docs/img/trace.png
