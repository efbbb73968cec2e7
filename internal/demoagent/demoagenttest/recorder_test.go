package demoagenttest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent/demoagenttest"
)

const token = "tok"

// post sends one JSON-RPC call and returns the response with its body
// unread (a stream may stay open).
func post(t *testing.T, url string, headers map[string]string, method string, params any) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

var good = map[string]string{"Authorization": "Bearer " + token, "A2A-Version": "1.0"}

func send(text, contextID string, iac map[string]any) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": "m-" + text, "role": "ROLE_USER", "contextId": contextID,
		"parts": []any{map[string]any{"text": text}}, "metadata": map[string]any{"iac_code": iac}}}
}

func TestRecordsCalls(t *testing.T) {
	s, err := demoagenttest.Start(t.Context(), "127.0.0.1:0", demoagent.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	// Refused by the agent before any work: not recorded.
	post(t, s.URL, map[string]string{"A2A-Version": "1.0"}, "GetTask", map[string]any{"id": "T"})
	post(t, s.URL, map[string]string{"Authorization": "Bearer " + token}, "GetTask", map[string]any{"id": "T"})
	post(t, s.URL, good, "tasks/get", map[string]any{"id": "T"})
	// Recorded: a permission turn whose stream stays open, a task call, and
	// a message whose request-level metadata replaces the message's.
	stream := post(t, s.URL, good, "SendStreamingMessage", send("permission", "ctx-1",
		map[string]any{"cwd": "/w", "llm_headers": map[string]any{"X-A": "1"}}))
	if !strings.HasPrefix(stream.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("content type %q", stream.Header.Get("Content-Type"))
	}
	calls := s.Calls()
	want := demoagenttest.Call{Method: "SendStreamingMessage", ContextID: "ctx-1", MessageID: "m-permission",
		Parts: []demoagenttest.Part{{Text: "permission"}}, MetadataKeys: []string{"cwd", "llm_headers"}}
	if len(calls) != 1 || !reflect.DeepEqual(calls[0], want) {
		t.Fatalf("calls while the stream is open: %+v", calls)
	}
	post(t, s.URL, good, "GetTask", map[string]any{"id": "T-1"})
	p := send("hello", "ctx-1", map[string]any{"cwd": "/w"})
	p["metadata"] = map[string]any{"iac_code": map[string]any{"cwd": "/w", "preferredLanguage": "es", "llm_headers": map[string]any{}}}
	p["message"].(map[string]any)["parts"] = []any{map[string]any{"data": map[string]any{"k": 1}, "mediaType": "application/json"}}
	io.Copy(io.Discard, post(t, s.URL, good, "SendMessage", p).Body)
	calls = s.Calls()
	if len(calls) != 3 || calls[1].Method != "GetTask" || calls[1].TaskID != "T-1" || calls[1].Parts != nil {
		t.Fatalf("task call %+v", calls)
	}
	parts, _ := json.Marshal(calls[2].Parts)
	if calls[2].Method != "SendMessage" || string(parts) != `[{"data":{"k":1},"mediaType":"application/json"}]` ||
		strings.Join(calls[2].MetadataKeys, ",") != "cwd,llm_headers,preferredLanguage" {
		t.Fatalf("SendMessage %+v %s", calls[2], parts)
	}
}

func TestContextHeaders(t *testing.T) {
	s, err := demoagenttest.Start(t.Context(), "127.0.0.1:0", demoagent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	h := map[string]string{"A2A-Version": "1.0"}
	turn := func(iac map[string]any) {
		iac["cwd"] = "/w"
		io.Copy(io.Discard, post(t, s.URL, h, "SendStreamingMessage", send("Create a VPC", "ctx-h", iac)).Body)
	}
	turn(map[string]any{"llm_headers": map[string]any{"X-A": "1", "X-B": "2"}})
	if got := s.ContextHeaders("ctx-h"); !reflect.DeepEqual(got, map[string]string{"X-A": "1", "X-B": "2"}) {
		t.Fatalf("bound %v", got)
	}
	turn(map[string]any{})
	if got := s.ContextHeaders("ctx-h"); len(got) != 2 {
		t.Fatalf("omission must inherit: %v", got)
	}
	turn(map[string]any{"llm_headers": map[string]any{"X-C": "3"}})
	if got := s.ContextHeaders("ctx-h"); !reflect.DeepEqual(got, map[string]string{"X-C": "3"}) {
		t.Fatalf("a map must replace: %v", got)
	}
	turn(map[string]any{"llm_headers": map[string]any{}})
	if got := s.ContextHeaders("ctx-h"); got != nil {
		t.Fatalf("{} must clear: %v", got)
	}
}

// TestCloseWithContext: the server stops when its context ends, and Close
// after that is harmless.
func TestCloseWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	s, err := demoagenttest.Start(ctx, "127.0.0.1:0", demoagent.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(s.URL + "health")
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still serving after the context ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
