package demoagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
)

const testToken = "secret-token"

type harness struct {
	t   *testing.T
	srv *Server
	seq atomic.Int64
}

func newHarness(t *testing.T, opts Options) *harness {
	t.Helper()
	if opts.Token == "" {
		opts.Token = testToken
	}
	s, err := Start(context.Background(), "127.0.0.1:0", opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return &harness{t: t, srv: s}
}

// post sends one JSON-RPC call with the bearer token and A2A-Version 1.0.
func (h *harness) post(method string, params any) *http.Response {
	h.t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": fmt.Sprintf("req-%d", h.seq.Add(1)), "method": method, "params": params})
	return h.raw(body, map[string]string{"A2A-Version": "1.0"})
}

func (h *harness) raw(body []byte, headers map[string]string) *http.Response {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, h.srv.URL, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testToken)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	return resp
}

func (h *harness) get(path string) (int, map[string]any) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, strings.TrimSuffix(h.srv.URL, "/")+path, nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// call is a non-streaming JSON-RPC call returning the decoded response.
func (h *harness) call(method string, params any) map[string]any {
	h.t.Helper()
	resp := h.post(method, params)
	defer resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		h.t.Fatalf("%s: status %d content-type %q", method, resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var m map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
		h.t.Fatal(err)
	}
	return m
}

type sseEvent struct {
	event string
	data  map[string]any
	raw   string
}

// stream is a small SSE reader that also checks sse-starlette CRLF framing.
type stream struct {
	t    *testing.T
	resp *http.Response
	br   *bufio.Reader
}

func (h *harness) stream(method string, params any) *stream {
	h.t.Helper()
	resp := h.post(method, params)
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(resp.Body)
		h.t.Fatalf("%s: content-type %q body %s", method, ct, b)
	}
	return &stream{t: h.t, resp: resp, br: bufio.NewReader(resp.Body)}
}

// next returns the next event, or ok=false at the end of the stream.
func (s *stream) next() (sseEvent, bool) {
	s.t.Helper()
	var ev sseEvent
	for {
		line, err := s.br.ReadString('\n')
		if err != nil {
			if line != "" {
				s.t.Fatalf("truncated line %q", line)
			}
			return ev, false
		}
		if !strings.HasSuffix(line, "\r\n") {
			s.t.Fatalf("line without CRLF: %q", line)
		}
		line = strings.TrimSuffix(line, "\r\n")
		switch {
		case line == "":
			if ev.raw != "" {
				return ev, true
			}
		case strings.HasPrefix(line, ":"):
		case strings.HasPrefix(line, "event: "):
			ev.event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.raw = strings.TrimPrefix(line, "data: ")
			if err := json.Unmarshal([]byte(ev.raw), &ev.data); err != nil {
				s.t.Fatalf("bad frame %q: %v", ev.raw, err)
			}
		default:
			s.t.Fatalf("unexpected line %q", line)
		}
	}
}

func (s *stream) all() []sseEvent {
	var out []sseEvent
	for {
		ev, ok := s.next()
		if !ok {
			s.resp.Body.Close()
			return out
		}
		out = append(out, ev)
	}
}

// until reads events up to and including the first whose state is state.
func (s *stream) until(state string) []sseEvent {
	s.t.Helper()
	var out []sseEvent
	for {
		ev, ok := s.next()
		if !ok {
			s.t.Fatalf("stream ended before %s; got %d events", state, len(out))
		}
		out = append(out, ev)
		if stateOf(ev) == state {
			return out
		}
	}
}

func (s *stream) close() { s.resp.Body.Close() }

// result returns the single member of the frame's StreamResponse.
func result(ev sseEvent) (string, map[string]any) {
	r, _ := ev.data["result"].(map[string]any)
	for _, k := range []string{"task", "statusUpdate", "artifactUpdate", "message"} {
		if v, ok := r[k].(map[string]any); ok {
			return k, v
		}
	}
	return "", nil
}

func stateOf(ev sseEvent) string {
	_, r := result(ev)
	st, _ := r["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

func iacOf(ev sseEvent) map[string]any {
	_, r := result(ev)
	md, _ := r["metadata"].(map[string]any)
	iac, _ := md["iac_code"].(map[string]any)
	return iac
}

func textOf(ev sseEvent) (id, text string) {
	_, r := result(ev)
	st, _ := r["status"].(map[string]any)
	m, _ := st["message"].(map[string]any)
	if m == nil {
		return "", ""
	}
	parts, _ := m["parts"].([]any)
	for _, p := range parts {
		if tx, ok := p.(map[string]any)["text"].(string); ok {
			text += tx
		}
	}
	return m["messageId"].(string), text
}

func msgParams(text, contextID, taskID string, iac map[string]any) map[string]any {
	m := map[string]any{"messageId": fmt.Sprintf("m-%s-%d", contextID, len(text)), "role": "ROLE_USER",
		"parts": []any{map[string]any{"text": text}}, "metadata": map[string]any{"iac_code": iac}}
	if contextID != "" {
		m["contextId"] = contextID
	}
	if taskID != "" {
		m["taskId"] = taskID
	}
	return map[string]any{"message": m, "configuration": map[string]any{"acceptedOutputModes": []string{"text/plain"}}}
}

func cwdMeta(cwd string) map[string]any { return map[string]any{"cwd": cwd} }

func taskIDOf(evs []sseEvent) string {
	for _, ev := range evs {
		k, r := result(ev)
		if k == "task" {
			return r["id"].(string)
		}
		if id, ok := r["taskId"].(string); ok {
			return id
		}
	}
	return ""
}

func errorOf(t *testing.T, m map[string]any) (float64, string) {
	t.Helper()
	e, ok := m["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error in %v", m)
	}
	return e["code"].(float64), e["message"].(string)
}

// contextHeaders returns a copy of the llm_headers bound to a context (nil
// when none).
func (a *Agent) contextHeaders(contextID string) map[string]string {
	a.mu.Lock()
	defer a.mu.Unlock()
	c := a.ctxs[contextID]
	if c == nil || c.headers == nil {
		return nil
	}
	out := make(map[string]string, len(c.headers))
	for k, v := range c.headers {
		out[k] = v
	}
	return out
}

// retained counts what the agent holds.
func (a *Agent) retained() (tasks, ctxs, idleTasks, idleCtxs int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.tasks), len(a.ctxs), a.idleTasks.Len(), a.idleCtxs.Len()
}
