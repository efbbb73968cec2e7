package a2a

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

const testToken = "tok-secret-123"

// captured is one request as the upstream saw it.
type captured struct {
	Method string
	Path   string
	Query  string
	Header http.Header
	Body   []byte
	RPC    struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      string          `json:"id"`
		Method  string          `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
}

// newUpstream starts a loopback HTTP server standing in for the iac-code
// A2A server. Each test scripts h to emit the exact wire shapes (and wire
// quirks or faults) it needs on demand; the last request is sent on the
// returned channel.
func newUpstream(t *testing.T, h func(w http.ResponseWriter, r *http.Request, c *captured), opts ...Option) (*Client, <-chan *captured) {
	t.Helper()
	reqs := make(chan *captured, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := &captured{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, Header: r.Header.Clone()}
		c.Body, _ = io.ReadAll(r.Body)
		if len(c.Body) > 0 && r.URL.Path == "/" {
			_ = json.Unmarshal(c.Body, &c.RPC)
		}
		select {
		case reqs <- c:
		default:
		}
		h(w, r, c)
	}))
	t.Cleanup(srv.Close)
	return New(srv.URL+"/", testToken, opts...), reqs
}

// writeSSE writes raw SSE text and flushes it.
func writeSSE(w http.ResponseWriter, raw string) {
	_, _ = io.WriteString(w, raw)
	w.(http.Flusher).Flush()
}

// sseFrames answers with the given JSON payloads as LF-framed SSE.
func sseFrames(frames ...string) func(http.ResponseWriter, *http.Request, *captured) {
	return func(w http.ResponseWriter, _ *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		for _, f := range frames {
			writeSSE(w, "data: "+f+"\n\n")
		}
	}
}

// jsonAnswer answers with one JSON body.
func jsonAnswer(status int, body string) func(http.ResponseWriter, *http.Request, *captured) {
	return func(w http.ResponseWriter, _ *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

func rpcResult(result string) string {
	return `{"jsonrpc":"2.0","id":"1","result":` + result + `}`
}

// readAllEvents drains a stream up to io.EOF.
func readAllEvents(t *testing.T, s *Stream) []*Event {
	t.Helper()
	var out []*Event
	for {
		ev, err := s.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("Next after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func noToken(t *testing.T, err error) {
	t.Helper()
	if err != nil && strings.Contains(err.Error(), testToken) {
		t.Fatalf("error leaks the token: %v", err)
	}
}
