package suite

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/google/uuid"
)

// Target is what a load generator talks to: an AG-UI server (ours or the
// peer) or the A2A upstream itself (the direct reader).
type Target struct {
	URL string
	// A2A makes the client a direct A2A reader: it sends
	// SendStreamingMessage and counts the upstream's frames.
	A2A bool
	// Peer relaxes the end check: the peer's RUN_FINISHED has no outcome.
	Peer bool
	// Workspace is the cwd our adapter's forwardedProps name.
	Workspace string
	// End is the task state the direct reader's last frame must carry:
	// "" for iac-code's TASK_STATE_INPUT_REQUIRED.
	End string
}

// Result is what the lean client saw of one run.
type Result struct {
	Frames     int           // `data:` lines
	Heartbeats int           // SSE comment lines
	First      time.Duration // request start to the first frame
	Total      time.Duration
	Err        error
}

var (
	dataPrefix = []byte("data: ")
	finished   = []byte(`"type":"RUN_FINISHED"`)
	successOK  = []byte(`"outcome":{"type":"success"}`)
	inputReq   = []byte(`INPUT_REQUIRED`)
)

// body is the request of one run on threadID.
func (t Target) body(threadID string) []byte {
	runID := uuid.NewString()
	if t.A2A {
		b, _ := json.Marshal(map[string]any{ // plain maps always marshal
			"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
			"params": map[string]any{"message": map[string]any{
				"messageId": "m-" + runID, "contextId": threadID, "role": "ROLE_USER",
				"parts": []any{map[string]any{"text": "write a VPC template"}},
			}},
		})
		return b
	}
	b, _ := json.Marshal(map[string]any{ // plain maps always marshal
		"threadId": threadID, "runId": runID,
		"state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages": []any{map[string]any{"id": "m-" + runID, "role": "user", "content": "write a VPC template"}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{
			"schemaVersion": 1, "rosInvocationId": "invocation-" + runID, "cwd": t.Workspace,
		}},
	})
	return b
}

// Run makes one run on threadID and reads its SSE answer to the end,
// counting frames by prefix without decoding them. firstFrame, when set,
// is called once the first frame arrived (the open-streams test).
func (t Target) Run(ctx context.Context, hc *http.Client, threadID string, firstFrame func()) Result {
	start := time.Now()
	var res Result
	res.Err = t.run(ctx, hc, threadID, start, &res, firstFrame)
	res.Total = time.Since(start)
	return res
}

func (t Target) run(ctx context.Context, hc *http.Client, threadID string, start time.Time, res *Result, firstFrame func()) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(t.body(threadID)))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	if t.A2A {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
		return fmt.Errorf("status %d: %s", resp.StatusCode, b)
	}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var last []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return errors.New("SSE line longer than 64 KiB")
		}
		switch {
		case bytes.HasPrefix(line, dataPrefix):
			if res.Frames == 0 {
				res.First = time.Since(start)
				if firstFrame != nil {
					firstFrame()
				}
			}
			res.Frames++
			last = append(last[:0], line...)
		case len(line) > 0 && line[0] == ':':
			res.Heartbeats++
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil // the caller ended the stream on purpose
			}
			return err
		}
	}
	switch {
	case t.A2A:
		want := inputReq
		if t.End != "" {
			want = []byte(t.End)
		}
		if !bytes.Contains(last, want) {
			return fmt.Errorf("last A2A frame is not %s: %.200s", want, last)
		}
	case t.Peer:
		if !bytes.Contains(last, finished) {
			return fmt.Errorf("last frame is not RUN_FINISHED: %.200s", last)
		}
	default:
		if !bytes.Contains(last, finished) || !bytes.Contains(last, successOK) {
			return fmt.Errorf("last frame is not RUN_FINISHED success: %.200s", last)
		}
	}
	return nil
}

// NewHTTPClient returns a client that keeps up to n connections to one
// host, never compressing (SSE is not compressed by either server).
func NewHTTPClient(n int) *http.Client {
	return &http.Client{Transport: &http.Transport{
		MaxIdleConns: n, MaxIdleConnsPerHost: n, DisableCompression: true,
		IdleConnTimeout: 30 * time.Second,
	}}
}
