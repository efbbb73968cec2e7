package a2a

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestJSONRPCURL(t *testing.T) {
	const cardURL = "http://agent.example:9000/.well-known/agent-card.json"
	cases := []struct {
		name, card, want string
	}{
		{"a2a 1.0", `{"supportedInterfaces":[{"url":"http://agent.example:9000/grpc","protocolBinding":"GRPC"},{"url":"http://agent.example:9000/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, "http://agent.example:9000/rpc"},
		{"1.0 interface wins over 0.3", `{"supportedInterfaces":[{"url":"http://a/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"},{"url":"http://a/v1","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`, "http://a/v1"},
		{"only a 0.3 interface", `{"supportedInterfaces":[{"url":"http://a/v03","protocolBinding":"JSONRPC","protocolVersion":"0.3"}]}`, "http://a/v03"},
		{"relative url", `{"supportedInterfaces":[{"url":"/a2a/jsonrpc","protocolBinding":"jsonrpc"}]}`, "http://agent.example:9000/a2a/jsonrpc"},
		{"other members of odd types ignored", `{"name":5,"securitySchemes":{"b":{"httpAuthSecurityScheme":{"scheme":"bearer"}}},"supportedInterfaces":[{"url":"http://a/rpc","protocolBinding":"JSONRPC","tenant":7}]}`, "http://a/rpc"},
		{"0.3 additionalInterfaces", `{"url":"http://a/grpc","preferredTransport":"GRPC","additionalInterfaces":[{"url":"http://a/rpc","transport":"JSONRPC"}]}`, "http://a/rpc"},
		{"0.3 url", `{"url":"http://a/rpc","preferredTransport":"JSONRPC"}`, "http://a/rpc"},
		{"0.3 url without transport", `{"url":"http://a/"}`, "http://a/"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := JSONRPCURL(cardURL, []byte(c.card))
			if err != nil || got != c.want {
				t.Fatalf("JSONRPCURL = %q, %v; want %q", got, err, c.want)
			}
		})
	}
	for _, bad := range []string{`[]`, `{"supportedInterfaces":[{"url":"http://a/","protocolBinding":"GRPC"}]}`, `{"url":"http://a/","preferredTransport":"GRPC"}`,
		`{"supportedInterfaces":[{"url":"file:///etc/passwd","protocolBinding":"JSONRPC"}]}`, `not json`} {
		if got, err := JSONRPCURL(cardURL, []byte(bad)); !errors.Is(err, ErrProtocol) {
			t.Errorf("JSONRPCURL(%s) = %q, %v; want ErrProtocol", bad, got, err)
		}
	}
}

// TestAgentCardEndpoint: with WithAgentCard the client reads the card once,
// posts JSON-RPC to the card's interface URL with A2A-Version and the
// bearer token, and a card that failed is read again on the next call.
func TestAgentCardEndpoint(t *testing.T) {
	var cards, rpcs atomic.Int32
	var failCard atomic.Bool
	failCard.Store(true)
	mux := http.NewServeMux()
	var srvURL string
	mux.HandleFunc("/.well-known/agent-card.json", func(w http.ResponseWriter, r *http.Request) {
		cards.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("A2A-Version") != "1.0" {
			t.Errorf("card request headers %v", r.Header)
		}
		if failCard.Load() {
			http.Error(w, "not yet", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"supportedInterfaces":[{"url":"` + srvURL + `/a2a/jsonrpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`))
	})
	mux.HandleFunc("/a2a/jsonrpc", func(w http.ResponseWriter, r *http.Request) {
		rpcs.Add(1)
		if r.Header.Get("Authorization") != "Bearer tok" || r.Header.Get("A2A-Version") != "1.0" {
			t.Errorf("rpc request headers %v", r.Header)
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"1","result":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_COMPLETED"}}}`))
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	srvURL = srv.URL
	c := New(srv.URL+"/", "tok", WithAgentCard())
	ctx := context.Background()
	var he *HTTPError
	if _, err := c.GetTask(ctx, "T", -1); !errors.As(err, &he) || he.StatusCode != 503 {
		t.Fatalf("GetTask with the card unavailable: %v", err)
	}
	failCard.Store(false)
	for range 2 {
		ev, err := c.GetTask(ctx, "T", -1)
		if err != nil || ev.TaskID != "T" {
			t.Fatalf("GetTask = %+v, %v", ev, err)
		}
	}
	if cards.Load() != 2 || rpcs.Load() != 2 {
		t.Fatalf("%d card reads and %d rpc calls, want 2 and 2", cards.Load(), rpcs.Load())
	}
}
