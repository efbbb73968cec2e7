package bench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
)

// relayEnv is the real adapter and HTTP server, with a real file store,
// served on loopback in front of a fake upstream.
type relayEnv struct {
	URL      string
	Root     string
	Upstream *fakeUpstream
	hc       *http.Client
}

func newRelayEnv(t testing.TB, o upstreamOptions) *relayEnv {
	t.Helper()
	return newRelayEnvTraced(t, o, false, nil)
}

// newRelayEnvTraced is newRelayEnv with, when wire is set, trc wired as
// the app wires its tracing (store, A2A client, adapter, handler, log
// handler); trc is nil, tracing.Off, for a gateway whose tracing is off.
// Without wire none of it is wired, as before tracing existed.
func newRelayEnvTraced(t testing.TB, o upstreamOptions, wire bool, trc *tracing.Tracing) *relayEnv {
	t.Helper()
	up := newFakeUpstream(t, o)
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	// Warnings only: a run logs nothing on the happy path, and a failure
	// must stay visible.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if wire {
		logger = trc.Logger(logger)
	}
	var store state.Store = filestore.New(t.TempDir())
	var opts []a2a.Option
	if wire {
		store = trc.Store(store, "file")
		opts = append(opts, a2a.WithTracing(trc.TracerProvider(), trc.Propagator()))
	}
	ad := adapter.New(adapter.Options{
		Store:        store,
		Upstream:     adapter.A2A(a2a.New(up.URL, "", opts...)),
		AllowedRoots: request.AllowedRoots([]string{root}),
		Logger:       logger,
		Tracer:       trc.Tracer("internal/adapter"),
	})
	h := server.New(server.Options{Adapter: ad, Version: "bench", Logger: logger})
	var handler http.Handler = h
	if wire {
		handler = trc.Handler(h, h.SpanName, h.Traced)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	tr := &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &relayEnv{URL: srv.URL + "/", Root: root, Upstream: up, hc: &http.Client{Transport: tr}}
}

// body is a RunAgentInput as @ag-ui/client 1.0.0 sends it, with the
// forwardedProps.iacCode the adapter requires (protocol.md §3.3).
func (e *relayEnv) body(threadID, runID string) []byte {
	b, _ := json.Marshal(map[string]any{ // plain maps always marshal
		"threadId": threadID, "runId": runID, "protocolVersion": "1.0",
		"state": map[string]any{}, "tools": []any{}, "context": []any{},
		"messages": []any{map[string]any{"id": "m-" + runID, "role": "user", "content": "write a VPC template"}},
		"forwardedProps": map[string]any{"iacCode": map[string]any{
			"schemaVersion": 1, "rosInvocationId": "invocation-" + runID, "cwd": filepath.Join(e.Root, "ws"),
		}},
	})
	return b
}

// runResult is what the lean client counted on one run's SSE response.
type runResult struct {
	Frames   int    // `data: ` lines
	Contents int    // TEXT_MESSAGE_CONTENT frames
	Last     []byte // JSON of the last frame
	// Raw holds every frame's JSON when the caller asked to keep them.
	Raw [][]byte
}

var (
	dataPrefix    = []byte("data: ")
	contentPrefix = []byte(`data: {"type":"TEXT_MESSAGE_CONTENT"`)
	finishedOK    = []byte(`"type":"RUN_FINISHED"`)
	outcomeOK     = []byte(`"outcome":{"type":"success"}`)
)

// run posts one RunAgentInput and reads the SSE answer with a bufio.Reader.
// The hot loop only counts: a frame is recognised by its prefix, since
// "type" is always the first key (protocol.md §4.2), and is never decoded.
func (e *relayEnv) run(ctx context.Context, threadID, runID string, keep bool) (*runResult, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.URL, bytes.NewReader(e.body(threadID, runID)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	res, err := e.hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 4<<10))
		return nil, fmt.Errorf("status %d %q: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	br := bufio.NewReaderSize(res.Body, 64<<10)
	out := &runResult{}
	var last []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, errors.New("SSE line longer than 64 KiB")
		}
		if len(line) > 0 && bytes.HasPrefix(line, dataPrefix) {
			out.Frames++
			if bytes.HasPrefix(line, contentPrefix) {
				out.Contents++
			}
			payload := bytes.TrimRight(line[len(dataPrefix):], "\n")
			last = append(last[:0], payload...)
			if keep {
				out.Raw = append(out.Raw, bytes.Clone(payload))
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	out.Last = last
	return out, nil
}

// check verifies the counts of a run that relayed n deltas and ended with
// RUN_FINISHED success.
func (r *runResult) check(n int) error {
	if r.Contents != n {
		return fmt.Errorf("relayed %d TEXT_MESSAGE_CONTENT frames, want %d", r.Contents, n)
	}
	if !bytes.Contains(r.Last, finishedOK) || !bytes.Contains(r.Last, outcomeOK) {
		return fmt.Errorf("last frame is not RUN_FINISHED success: %.300s", r.Last)
	}
	return nil
}

func threadName(prefix string, i int) string {
	return prefix + "-" + strconv.Itoa(i)
}
