package a2a

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const (
	frameTask = `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"messageId":"m-1","contextId":"C","taskId":"T","role":"ROLE_USER","parts":[{"text":"Create a VPC"}]}]}}}`
	frameText = `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"T-message","contextId":"C","taskId":"T","role":"ROLE_AGENT","parts":[{"text":"Here is the "}]}},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}}}`
	frameArt  = `{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"taskId":"T","contextId":"C","artifact":{"artifactId":"a-1","name":"main.tf","parts":[{"url":"iac-code-artifact://a-1","mediaType":"text/plain"}],"metadata":{"byteSize":812.0}},"lastChunk":true}}}`
	frameIR   = `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-08-21T07:00:00.123456Z"},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}}}`
)

func TestStreamHappyPath(t *testing.T) {
	c, _ := newUpstream(t, sseFrames(frameTask, frameText, frameArt, frameIR))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{Parts: nil})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs := readAllEvents(t, s)
	if len(evs) != 4 {
		t.Fatalf("got %d events, want 4", len(evs))
	}
	task, text, art, ir := evs[0], evs[1], evs[2], evs[3]
	if task.Kind != KindTask || task.TaskID != "T" || task.ContextID != "C" || task.State() != StateSubmitted {
		t.Errorf("task event = %+v", task)
	}
	if len(task.History) != 1 || task.History[0].Role != RoleUser || task.History[0].Text() != "Create a VPC" {
		t.Errorf("task history = %+v", task.History)
	}
	if text.Kind != KindStatusUpdate || text.State() != StateWorking || text.Status.Message.Text() != "Here is the " ||
		text.Status.Message.MessageID != "T-message" || text.Status.Message.Role != RoleAgent {
		t.Errorf("text event = %+v / %+v", text, text.Status)
	}
	if got := text.IacCode()["iacCodeSessionId"]; got != "S" {
		t.Errorf("iacCodeSessionId = %v", got)
	}
	if art.Kind != KindArtifactUpdate || art.TaskID != "T" || art.Artifact["artifactId"] != "a-1" || art.Artifact["name"] != "main.tf" {
		t.Errorf("artifact event = %+v", art)
	}
	if n, ok := Int(art.Artifact["metadata"].(map[string]any)["byteSize"]); !ok || n != 812 {
		t.Errorf("byteSize = %d %v", n, ok)
	}
	if ir.State() != StateInputRequired || ir.Status.Timestamp != "2026-08-21T07:00:00.123456Z" || ir.Status.Message != nil {
		t.Errorf("input-required event = %+v", ir.Status)
	}
	if _, err := s.Next(); err != io.EOF {
		t.Errorf("Next after EOF = %v, want io.EOF", err)
	}
}

func TestStreamCRLFAndPings(t *testing.T) {
	// Injects sse-starlette's CRLF framing, ping comments and an event
	// name on a normal frame.
	c, _ := newUpstream(t, func(w http.ResponseWriter, _ *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
		writeSSE(w, ": ping - 2026-08-21 07:00:00\r\n\r\n")
		writeSSE(w, "event: message\r\ndata: "+frameTask+"\r\n\r\n: ping\r\n")
		writeSSE(w, "\r\ndata: "+frameText[:40])
		writeSSE(w, frameText[40:]+"\r")
		writeSSE(w, "\n\r\n")
	})
	s, err := c.SubscribeToTask(context.Background(), "T")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs := readAllEvents(t, s)
	if len(evs) != 2 || evs[0].Kind != KindTask || evs[1].Status.Message.Text() != "Here is the " {
		t.Fatalf("events = %+v", evs)
	}
}

func TestStreamErrorEventFrame(t *testing.T) {
	// Injects a mid-stream failure as the server does: event: error.
	c, _ := newUpstream(t, func(w http.ResponseWriter, _ *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\r\n\r\n")
		writeSSE(w, "event: error\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"error\":{\"code\":-32603,\"message\":\"Internal error\"}}\r\n\r\n")
		writeSSE(w, "data: {\"jsonrpc\":\"2.0\",\"id\":\"1\",\"error\":{\"code\":-32006,\"message\":\"bad\"}}\n\n")
	})
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	for _, want := range []int{-32603, -32006} {
		_, err = s.Next()
		var re *RPCError
		if !errors.As(err, &re) || re.Code != want {
			t.Fatalf("Next = %v, want *RPCError %d", err, want)
		}
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("Next = %v, want io.EOF", err)
	}
}

func TestStreamFrameWithoutResultOrError(t *testing.T) {
	c, _ := newUpstream(t, sseFrames(`{"jsonrpc":"2.0","id":"1"}`, `{"jsonrpc":`))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := 0; i < 2; i++ {
		if _, err := s.Next(); !errors.Is(err, ErrProtocol) {
			t.Fatalf("frame %d: Next = %v, want ErrProtocol", i, err)
		}
	}
}

func TestSubscribeInactiveTaskPlainJSONError(t *testing.T) {
	// Injects the plain-JSON answer the server gives before the first
	// stream event (upstream.md §1.5, §5.2).
	c, _ := newUpstream(t, jsonAnswer(200, `{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"Task T is not active"}}`))
	s, err := c.SubscribeToTask(context.Background(), "T")
	var re *RPCError
	if s != nil || !errors.As(err, &re) || re.Code != -32001 || re.Message != "Task T is not active" {
		t.Fatalf("SubscribeToTask = %v, %v; want *RPCError -32001", s, err)
	}
}

func TestStreamPlainJSONResult(t *testing.T) {
	c, _ := newUpstream(t, jsonAnswer(200, frameTask))
	s, err := c.SubscribeToTask(context.Background(), "T")
	if err != nil {
		t.Fatal(err)
	}
	evs := readAllEvents(t, s)
	if len(evs) != 1 || evs[0].Kind != KindTask || evs[0].TaskID != "T" {
		t.Fatalf("events = %+v", evs)
	}
}

func TestStreamUnexpectedContentType(t *testing.T) {
	c, _ := newUpstream(t, func(w http.ResponseWriter, _ *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>proxy error</html>"))
	})
	if _, err := c.SubscribeToTask(context.Background(), "T"); !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
}

func TestStreamHTTP401(t *testing.T) {
	c, _ := newUpstream(t, jsonAnswer(401, `{"error":"Unauthorized"}`))
	_, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 401 || he.Body != `{"error":"Unauthorized"}` {
		t.Fatalf("err = %#v, want *HTTPError 401", err)
	}
	noToken(t, err)
}

func TestHTTPErrorBodyCappedAt4KiB(t *testing.T) {
	c, _ := newUpstream(t, jsonAnswer(502, strings.Repeat("x", 10000)))
	_, err := c.GetTask(context.Background(), "T", 1)
	var he *HTTPError
	if !errors.As(err, &he) || he.StatusCode != 502 || len(he.Body) != 4096 {
		t.Fatalf("err = %v (body %d bytes), want 502 with 4096 bytes", err, len(he.Body))
	}
}

func TestStreamLargeTextFrame(t *testing.T) {
	big := strings.Repeat("terraform ", 6<<20/10) // 6 MiB of text
	frame := strings.Replace(frameText, "Here is the ", big, 1)
	c, _ := newUpstream(t, sseFrames(frame, frameIR))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs := readAllEvents(t, s)
	if len(evs) != 2 || evs[0].Status.Message.Text() != big || evs[1].State() != StateInputRequired {
		t.Fatalf("got %d events", len(evs))
	}
}

func TestStreamFrameOverLimit(t *testing.T) {
	// Injects an oversized frame and then keeps the connection open, so a
	// reader without a cap would hang.
	c, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\n\n")
		writeSSE(w, "data: \""+strings.Repeat("a", 2<<20))
		<-r.Context().Done()
	}, WithMaxFrameBytes(1<<20))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Next = %v, want ErrFrameTooLarge", err)
	}
	if _, err := s.Next(); !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("Next after failure = %v, want the sticky ErrFrameTooLarge", err)
	}
}

func TestStreamIdleTimeout(t *testing.T) {
	// Injects a stalled upstream: one frame, then silence.
	c, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\n\n")
		<-r.Context().Done()
	}, WithIdleTimeout(150*time.Millisecond))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Next(); !errors.Is(err, ErrIdleTimeout) {
		t.Fatalf("Next = %v, want ErrIdleTimeout", err)
	}
}

func TestStreamIdleTimeoutKeptAliveByPings(t *testing.T) {
	// Injects pings that keep a slow stream alive past the idle timeout.
	c, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < 10; i++ {
			writeSSE(w, ": ping\r\n\r\n")
			time.Sleep(40 * time.Millisecond)
		}
		writeSSE(w, "data: "+frameIR+"\r\n\r\n")
	}, WithIdleTimeout(300*time.Millisecond))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if evs := readAllEvents(t, s); len(evs) != 1 || evs[0].State() != StateInputRequired {
		t.Fatalf("events = %+v", evs)
	}
}

func TestStreamContextCancel(t *testing.T) {
	gone := make(chan struct{})
	c, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		writeSSE(w, "data: "+frameText+"\n\n")
		<-r.Context().Done()
		close(gone)
	})
	ctx, cancel := context.WithCancel(context.Background())
	s, err := c.SendStreamingMessage(ctx, &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Next(); err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(20 * time.Millisecond); cancel() }()
	if _, err := s.Next(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next = %v, want context.Canceled", err)
	}
	select {
	case <-gone:
	case <-time.After(5 * time.Second):
		t.Fatal("upstream connection still open after cancel")
	}
}

func TestStreamCloseUnblocksNext(t *testing.T) {
	c, _ := newUpstream(t, func(w http.ResponseWriter, r *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	s, err := c.SubscribeToTask(context.Background(), "T")
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(20 * time.Millisecond); s.Close() }()
	if _, err := s.Next(); !errors.Is(err, ErrStreamClosed) {
		t.Fatalf("Next = %v, want ErrStreamClosed", err)
	}
}

// An "event: error" frame must carry a JSON-RPC error, even when its data
// is a text delta the stream's decoder would answer from its template.
func TestStreamErrorEventWithResult(t *testing.T) {
	c, _ := newUpstream(t, func(w http.ResponseWriter, _ *http.Request, _ *captured) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(200)
		writeSSE(w, "data: "+frameText+"\r\n\r\n")
		writeSSE(w, "event: error\r\ndata: "+frameText+"\r\n\r\n")
		writeSSE(w, "data: "+frameIR+"\r\n\r\n")
	})
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if ev, err := s.Next(); err != nil || ev.Status.Message.Text() != "Here is the " {
		t.Fatalf("frame 0: %v, %v", ev, err)
	}
	if ev, err := s.Next(); !errors.Is(err, ErrProtocol) {
		t.Fatalf("error event with a result: %v, %v; want ErrProtocol", ev, err)
	}
	if ev, err := s.Next(); err != nil || ev.State() != StateInputRequired {
		t.Fatalf("frame 2: %v, %v", ev, err)
	}
}
