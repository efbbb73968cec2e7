package a2a

import (
	"context"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/reqid"
)

// TestRequestIDHeader: the AG-UI request id in the context goes upstream
// as X-Request-Id on every call; without one, no header is sent.
func TestRequestIDHeader(t *testing.T) {
	c, reqs := newUpstream(t, jsonAnswer(200, rpcResult(`{"id":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_CANCELED"}}`)))
	if _, err := c.CancelTask(reqid.With(context.Background(), "req-42"), "task-1"); err != nil {
		t.Fatal(err)
	}
	if got := (<-reqs).Header.Values(reqid.Header); len(got) != 1 || got[0] != "req-42" {
		t.Fatalf("X-Request-Id = %q", got)
	}
	if _, err := c.CancelTask(context.Background(), "task-1"); err != nil {
		t.Fatal(err)
	}
	if got := (<-reqs).Header.Values(reqid.Header); len(got) != 0 {
		t.Fatalf("X-Request-Id without an id = %q", got)
	}
}
