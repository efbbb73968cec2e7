package demoagent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestAuthEveryRoute(t *testing.T) {
	h := newHarness(t, Options{})
	for _, tc := range []struct{ method, path, auth string }{
		{"GET", "/health", ""},
		{"GET", "/health", "Bearer wrong"},
		{"GET", "/.well-known/agent-card.json", ""},
		{"GET", "/iac-code/pipeline/state?taskId=x", ""},
		{"POST", "/iac-code/session/ensure-restored", ""},
		{"POST", "/", "Basic abc"},
	} {
		req, _ := http.NewRequest(tc.method, strings.TrimSuffix(h.srv.URL, "/")+tc.path, strings.NewReader("{}"))
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 401 || string(b) != `{"error":"Unauthorized"}` {
			t.Errorf("%s %s auth %q: %d %s", tc.method, tc.path, tc.auth, resp.StatusCode, b)
		}
	}
	code, body := h.get("/health")
	if code != 200 || body["status"] != "healthy" || body["mode"] != "normal" || body["version"] != Version {
		t.Fatalf("health: %d %v", code, body)
	}
}

func TestNoTokenMeansNoAuth(t *testing.T) {
	s, err := Start(t.Context(), "127.0.0.1:0", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	resp, err := http.Get(s.URL + "health")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

func TestAgentCard(t *testing.T) {
	h := newHarness(t, Options{})
	code, card := h.get("/.well-known/agent-card.json")
	if code != 200 || card["name"] != "iac-code" {
		t.Fatalf("%d %v", code, card)
	}
	exts := card["capabilities"].(map[string]any)["extensions"].([]any)
	var params map[string]any
	for _, e := range exts {
		if e.(map[string]any)["uri"] == "urn:iac-code:a2a:pipeline-events:v1" {
			params = e.(map[string]any)["params"].(map[string]any)
		}
	}
	want := map[string]any{"schemaVersion": "1.0", "supportsEventBatching": true, "eventBatchMetadataPath": "metadata.iac_code.pipelineBatch.events",
		"maxBatchEvents": 1024.0, "maxBatchBytes": 1048576.0, "maxBatchDelayMs": 20.0, "supportsSnapshot": true, "supportsReplay": true,
		"supportsInterrupts": true, "supportsParallelCandidates": true, "stateEndpoint": "/iac-code/pipeline/state"}
	for k, v := range want {
		if params[k] != v {
			t.Errorf("param %s = %v, want %v", k, params[k], v)
		}
	}
}

func TestVersionHeaderAndRPCErrors(t *testing.T) {
	h := newHarness(t, Options{})
	body := []byte(`{"jsonrpc":"2.0","id":7,"method":"GetTask","params":{"id":"x"}}`)
	resp := h.raw(body, nil)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	want := `{"jsonrpc":"2.0","id":7,"error":{"code":-32009,"message":"A2A version 0.3 is not supported","data":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","domain":"a2a-protocol.org","metadata":{},"reason":"VERSION_NOT_SUPPORTED"}]}}`
	if resp.StatusCode != 200 || string(b) != want {
		t.Fatalf("got %d %s", resp.StatusCode, b)
	}
	for _, tc := range []struct {
		body string
		code float64
	}{
		{`{not json`, -32700},
		{`[{"jsonrpc":"2.0"}]`, -32600},
		{`{"jsonrpc":"1.0","id":1,"method":"GetTask"}`, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send"}`, -32601},
		{`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"nope"}}`, -32001},
		{`{"jsonrpc":"2.0","id":1,"method":"CancelTask","params":{"id":"nope"}}`, -32001},
	} {
		resp := h.raw([]byte(tc.body), map[string]string{"A2A-Version": "1.0"})
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if c, _ := errorOf(t, m); resp.StatusCode != 200 || c != tc.code {
			t.Errorf("%s: http %d code %v", tc.body, resp.StatusCode, c)
		}
	}
}

func TestUnknownAndTerminalTaskArePlainJSON(t *testing.T) {
	h := newHarness(t, Options{})
	resp := h.post("SendStreamingMessage", msgParams("hi", "ctx-u", "missing-task", cwdMeta("/srv/iac/u")))
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("content type %q", resp.Header.Get("Content-Type"))
	}
	if c, msg := errorOf(t, m); c != -32001 || msg != "Task not found" {
		t.Fatalf("%v %q", c, msg)
	}
	evs := h.stream("SendStreamingMessage", msgParams("please fail", "ctx-u", "", cwdMeta("/srv/iac/u"))).all()
	tid := taskIDOf(evs)
	resp = h.post("SendStreamingMessage", msgParams("again", "ctx-u", tid, cwdMeta("/srv/iac/u")))
	m = nil
	_ = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if c, msg := errorOf(t, m); c != -32602 || msg != "Task "+tid+" is in terminal state: 4" {
		t.Fatalf("%v %q", c, msg)
	}
	if data, ok := m["error"].(map[string]any)["data"].([]any); !ok || data[0].(map[string]any)["reason"] != "INVALID_PARAMS" {
		t.Fatalf("data %v", m["error"])
	}
}

func TestStreamErrorFrame(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("stream error please", "ctx-se", "", cwdMeta("/srv/iac/se"))).all()
	last := evs[len(evs)-1]
	if last.event != "error" {
		t.Fatalf("last event %q %s", last.event, last.raw)
	}
	if c, _ := errorOf(t, last.data); c != -32603 {
		t.Fatalf("code %v", c)
	}
	if stateOf(evs[len(evs)-2]) != stateWorking {
		t.Fatalf("frame before error: %s", evs[len(evs)-2].raw)
	}
}

func TestPingComments(t *testing.T) {
	h := newHarness(t, Options{PingInterval: 10 * time.Millisecond})
	resp := h.post("SendStreamingMessage", msgParams("stall", "ctx-ping", "", cwdMeta("/w")))
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	tid := ""
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if tid == "" && strings.HasPrefix(line, "data: ") {
			var f map[string]any
			_ = json.Unmarshal([]byte(line[6:]), &f)
			tid = f["result"].(map[string]any)["task"].(map[string]any)["id"].(string)
		}
		if strings.HasPrefix(line, ": ping") {
			if !strings.HasSuffix(line, "\r\n") {
				t.Fatalf("ping line %q", line)
			}
			break
		}
	}
	h.call("CancelTask", map[string]any{"id": tid})
}

func TestRunStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, "127.0.0.1", 0, Options{Token: "tok"}) }()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
