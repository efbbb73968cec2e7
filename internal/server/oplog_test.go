package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// logRecords decodes the JSON lines of e.Logs.
func logRecords(t *testing.T, e *env) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(e.Logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		out = append(out, rec)
	}
	return out
}

// TestOperatorLines (issue 29): the access line of a refused request
// carries its error code, an answered one none; every run line carries
// the rosInvocationId the cancel route needs (protocol.md §11).
func TestOperatorLines(t *testing.T) {
	e := newEnv(t, envOptions{logs: true})
	const th = "thread-oplog"
	ok := post(t, e.URL, e.body(th, "run-1", "hello", nil), map[string]string{"X-Request-Id": "req-ok"})
	if fin := last(ok.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("run: %v", fin)
	}
	refused := post(t, e.URL, e.body(th, "run-1", "hello again", nil), map[string]string{"X-Request-Id": "req-refused"})
	if refused.Status != 409 {
		t.Fatalf("reuse: %d", refused.Status)
	}
	badJSON := post(t, e.URL, []byte("{"), map[string]string{"X-Request-Id": "req-bad-json"})
	if badJSON.Status != 400 {
		t.Fatalf("bad JSON: %d", badJSON.Status)
	}
	access := map[string]map[string]any{}
	var runLines []map[string]any
	for _, rec := range logRecords(t, e) {
		if rec["msg"] == "http request" {
			access[rec["requestId"].(string)] = rec
		}
		if rec["runId"] == "run-1" {
			runLines = append(runLines, rec)
		}
	}
	for id, want := range map[string]any{"req-ok": nil, "req-refused": "RUN_ID_CONFLICT", "req-bad-json": "INVALID_JSON"} {
		rec, found := access[id]
		if !found {
			t.Fatalf("no access line for %s", id)
		}
		if rec["code"] != want {
			t.Errorf("access line of %s: code %v, want %v (%v)", id, rec["code"], want, rec)
		}
	}
	if len(runLines) < 2 {
		t.Fatalf("run lines: %v", runLines)
	}
	for _, rec := range runLines {
		if rec["rosInvocationId"] != "invocation-1" || rec["threadId"] != th || rec["executionId"] == nil {
			t.Errorf("run line without its identities: %v", rec)
		}
	}
}
