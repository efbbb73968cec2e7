package server_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// Two input rules that follow the original: a leading UTF-8 byte-order
// mark (protocol.md §2.5 step 5) and both spellings of a forwarded
// property (§3.3).

// TestBOMBodyAccepted: a body that starts with a UTF-8 byte-order mark is
// read as the JSON after it, as the original's json.loads of the body's
// bytes does (§2.5 step 5), on POST / and on the cancel route; the request
// digest is the parsed body's, so the same request without the mark is a
// replay. Only one mark is dropped.
func TestBOMBodyAccepted(t *testing.T) {
	e := newEnv(t, envOptions{})
	raw, err := json.Marshal(e.body("thread-bom", "run-1", "Create a VPC template", nil))
	if err != nil {
		t.Fatal(err)
	}
	assertSuccess(t, post(t, e.URL, append([]byte("\xef\xbb\xbf"), raw...), nil))
	if code, _ := errorOf(t, post(t, e.URL, raw, nil)); code != "DUPLICATE_RUN_ID" {
		t.Fatalf("the same request without the mark: %s, want DUPLICATE_RUN_ID", code)
	}
	r := post(t, e.URL, append([]byte("\xef\xbb\xbf\xef\xbb\xbf"), raw...), nil)
	if code, msg := errorOf(t, r); r.Status != 400 || code != "INVALID_JSON" || msg != "The request body is not valid JSON." {
		t.Fatalf("two marks: %d %s %s", r.Status, code, msg)
	}
	// UTF-16 (which json.loads would also decode) is no UTF-8 JSON.
	r = post(t, e.URL, []byte("\xff\xfe{\x00}\x00"), nil)
	if code, _ := errorOf(t, r); r.Status != 400 || code != "INVALID_JSON" {
		t.Fatalf("UTF-16: %d %s", r.Status, code)
	}
	c := postCancel(t, e, "no-such-execution", "\ufeff"+`{"threadId":"thread-bom","rosInvocationId":"invocation-1"}`)
	if code, _ := errorOf(t, c); c.Status != 404 || code != "EXECUTION_NOT_FOUND" {
		t.Fatalf("cancel with a mark: %d %s", c.Status, c.Body)
	}
}

// TestBothLLMHeaderSpellings: a request with both llmHeaders and
// llm_headers is refused as the original refuses it (its strict schema
// reads one spelling and counts the other as an extra key, §3.3): 400
// INVALID_INPUT with the generic message, nothing sent to A2A, no header
// value in the answer or the log.
func TestBothLLMHeaderSpellings(t *testing.T) {
	e := newEnv(t, envOptions{logs: true})
	body := e.body("thread-both", "run-1", "Create a VPC template", map[string]any{
		"llmHeaders":  map[string]any{"X-Trace": "camel-secret"},
		"llm_headers": map[string]any{"X-Trace": "snake-secret"},
	})
	r := post(t, e.URL, body, nil)
	if code, msg := errorOf(t, r); r.Status != 400 || code != "INVALID_INPUT" || msg != "Invalid iac-code forwarded properties." {
		t.Fatalf("both spellings: %d %s", r.Status, r.Body)
	}
	if calls := e.Agent.Calls(); len(calls) != 0 {
		t.Fatalf("A2A was called: %+v", calls)
	}
	for _, secret := range []string{"camel-secret", "snake-secret"} {
		if bytes.Contains(r.Body, []byte(secret)) || strings.Contains(e.Logs.String(), secret) {
			t.Fatalf("a header value leaked into the answer or the log")
		}
	}
	// Either spelling alone reaches A2A as the context's llm_headers.
	for i, k := range []string{"llmHeaders", "llm_headers"} {
		run := "run-" + string(rune('2'+i))
		r := post(t, e.URL, e.body("thread-both", run, "Create a VPC template", map[string]any{k: map[string]any{"X-Trace": k + "-value"}}), nil)
		assertSuccess(t, r)
		ctxID := sessionOf(t, r.Events)["contextId"].(string)
		if got := e.Agent.ContextHeaders(ctxID); len(got) != 1 || got["X-Trace"] != k+"-value" {
			t.Fatalf("%s alone: A2A bound %v", k, got)
		}
	}
}
