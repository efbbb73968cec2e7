package bench

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"

	"github.com/google/uuid"
)

// upstreamOptions shapes the turn the fake upstream streams.
type upstreamOptions struct {
	// deltas is the number of text-delta frames of one turn.
	deltas int
	// numbered makes delta i carry the text "d<i> " so a test can check
	// order; otherwise every delta is "tok " and the frame is written as one
	// pre-encoded block.
	numbered bool
	// assistantFinal adds the WORKING frame that repeats the whole text
	// (upstream.md §3.3 step 6) before the final INPUT_REQUIRED.
	assistantFinal bool
}

// seen is what the fake recorded of the last request it answered.
type seen struct {
	contextID, taskID, sessionID string
	a2aVersion                   string
}

// fakeUpstream is a DELIBERATE FAKE of the iac-code A2A server. It exists
// to measure the adapter, not to emulate iac-code: it answers every
// SendStreamingMessage with one normal-mode turn (upstream.md §3.3,
// §3.4.1) made of frames encoded once per request and written through a
// large bufio.Writer, so the upstream costs a memcpy per frame and is never
// the bottleneck. dependencies.md §1.6(g) rules out the embedded demo agent
// for load tests: its per-frame JSON encoding and task deep copies are
// slower than the adapter.
type fakeUpstream struct {
	URL  string
	opts upstreamOptions

	mu   sync.Mutex
	last seen
}

func newFakeUpstream(t testing.TB, o upstreamOptions) *fakeUpstream {
	t.Helper()
	f := &fakeUpstream{opts: o}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func (f *fakeUpstream) lastSeen() seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last
}

// rpcIn is the part of a JSON-RPC SendStreamingMessage request the fake
// needs: the id to echo, and the message to echo in the task history and
// whose contextId every frame must carry (the adapter checks the context
// identity on every event, protocol.md §4.6).
type rpcIn struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Message json.RawMessage `json:"message"`
	} `json:"params"`
}

func (f *fakeUpstream) serve(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var in rpcIn
	if err == nil {
		err = json.Unmarshal(raw, &in)
	}
	var msg struct {
		ContextID string `json:"contextId"`
	}
	if err == nil {
		err = json.Unmarshal(in.Params.Message, &msg)
	}
	if err != nil || in.Method != "SendStreamingMessage" || len(in.ID) == 0 || msg.ContextID == "" {
		// Plain JSON error before the stream (upstream.md §1.5).
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bench fake: unexpected request"}}`)
		return
	}
	taskID, sessionID := uuid.NewString(), uuid.NewString()
	f.mu.Lock()
	f.last = seen{contextID: msg.ContextID, taskID: taskID, sessionID: sessionID, a2aVersion: r.Header.Get("A2A-Version")}
	f.mu.Unlock()

	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	fr := newFrames(string(in.ID), taskID, msg.ContextID, sessionID)
	_, _ = bw.WriteString(fr.task(in.Params.Message))
	_, _ = bw.WriteString(fr.status("TASK_STATE_SUBMITTED", true))
	_, _ = bw.WriteString(fr.status("TASK_STATE_WORKING", true))
	// Flush the opening frames at once so the adapter binds the task and
	// session before the bulk arrives; the bulk then goes out in 64 KiB
	// writes as the buffer fills.
	if bw.Flush() != nil {
		return
	}
	if f.opts.numbered {
		var num []byte
		for i := 0; i < f.opts.deltas; i++ {
			num = strconv.AppendInt(append(num[:0], 'd'), int64(i), 10)
			_, _ = bw.WriteString(fr.deltaHead)
			_, _ = bw.Write(num)
			_, err = bw.WriteString(fr.deltaTail)
			if err != nil {
				return // the adapter went away
			}
		}
	} else {
		whole := fr.deltaHead + "tok" + fr.deltaTail
		for i := 0; i < f.opts.deltas; i++ {
			if _, err := bw.WriteString(whole); err != nil {
				return
			}
		}
	}
	if f.opts.assistantFinal {
		_, _ = bw.WriteString(fr.final(f.opts))
	}
	_, _ = bw.WriteString(fr.status("TASK_STATE_INPUT_REQUIRED", true))
	_ = bw.Flush()
}

// frames holds the per-request encoded pieces of the turn.
type frames struct {
	head      string // `data: {"jsonrpc":"2.0","id":<id>,"result":`
	taskID    string
	contextID string // JSON string, quoted
	sessionID string
	// A delta frame is deltaHead + text + deltaTail; the text needs no
	// escaping ("d<digits>" or "tok") and gets its trailing space in the tail.
	deltaHead, deltaTail string
}

func newFrames(id, taskID, contextID, sessionID string) *frames {
	ctx := quote(contextID)
	head := `data: {"jsonrpc":"2.0","id":` + id + `,"result":`
	return &frames{
		head: head, taskID: taskID, contextID: ctx, sessionID: sessionID,
		deltaHead: head + `{"statusUpdate":{"taskId":"` + taskID + `","contextId":` + ctx +
			`,"status":{"state":"TASK_STATE_WORKING","message":{"messageId":"` + taskID + `-message","contextId":` + ctx +
			`,"taskId":"` + taskID + `","role":"ROLE_AGENT","parts":[{"text":"`,
		deltaTail: ` "}]}},"metadata":{"iac_code":{"iacCodeSessionId":"` + sessionID + `"}}}}}` + "\n\n",
	}
}

// task is the initial frame: SUBMITTED, the user message echoed in
// history, no timestamp and no metadata (upstream.md §3.3 step 1).
func (f *frames) task(userMsg json.RawMessage) string {
	return f.head + `{"task":{"id":"` + f.taskID + `","contextId":` + f.contextID +
		`,"status":{"state":"TASK_STATE_SUBMITTED"},"history":[` + string(userMsg) + `]}}}` + "\n\n"
}

// status is an executor status update without a message, with a
// timestamp and the session id (§3.3 steps 2, 3 and 7).
func (f *frames) status(state string, withSession bool) string {
	meta := ""
	if withSession {
		meta = `,"metadata":{"iac_code":{"iacCodeSessionId":"` + f.sessionID + `"}}`
	}
	return f.head + `{"statusUpdate":{"taskId":"` + f.taskID + `","contextId":` + f.contextID +
		`,"status":{"state":"` + state + `","timestamp":"2026-01-01T00:00:00.000000+00:00"}` + meta + `}}}` + "\n\n"
}

// final is the WORKING frame repeating the whole streamed text with
// assistantFinal (§3.3 step 6, §3.4.9); the adapter must drop it.
func (f *frames) final(o upstreamOptions) string {
	text := make([]byte, 0, 8*o.deltas)
	for i := 0; i < o.deltas; i++ {
		if o.numbered {
			text = strconv.AppendInt(append(text, 'd'), int64(i), 10)
		} else {
			text = append(text, "tok"...)
		}
		text = append(text, ' ')
	}
	return f.head + `{"statusUpdate":{"taskId":"` + f.taskID + `","contextId":` + f.contextID +
		`,"status":{"state":"TASK_STATE_WORKING","message":{"messageId":"` + f.taskID + `-2","contextId":` + f.contextID +
		`,"taskId":"` + f.taskID + `","role":"ROLE_AGENT","parts":[{"text":` + quote(string(text)) + `}]},"timestamp":"2026-01-01T00:00:00.000000+00:00"}` +
		`,"metadata":{"iac_code":{"assistantFinal":{"complete":true},"iacCodeSessionId":"` + f.sessionID + `"}}}}}` + "\n\n"
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
