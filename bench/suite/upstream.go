package suite

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/google/uuid"
)

// Upstream is a DELIBERATE FAKE of the iac-code A2A server, for load only
// (dependencies.md §1.6(g) rules out the embedded demo agent for load
// tests): every streaming request gets one normal-mode turn, the task frame,
// SUBMITTED and WORKING with the session id, Deltas text deltas ("t<i> "),
// then INPUT_REQUIRED (upstream.md §3.3). Frames are encoded once per
// request and written through a 64 KiB buffer, so the fake costs a memcpy a
// frame. The same turn is served in the A2A 1.0 shape (SendStreamingMessage)
// for the adapter and the direct reader, and in the A2A 0.3 shape
// (message/stream, "kind" objects) for the TypeScript peer, whose
// @a2a-js/sdk 0.2 client speaks only that.
type Upstream struct {
	Deltas int
	// Stall holds every stream open after the WORKING frame until the
	// client leaves, sending nothing more (the open-streams test).
	Stall bool
	// BaseURL is what the 0.3 agent card advertises as the JSON-RPC URL.
	BaseURL string
	// End is the state that ends every turn: "" for iac-code's
	// INPUT_REQUIRED, "completed" for the turn of a generic A2A agent
	// (--a2a-profile generic), which INPUT_REQUIRED would interrupt.
	End string

	open atomic.Int64 // streams currently held open
}

// Open reports the streams currently being served.
func (u *Upstream) Open() int64 { return u.open.Load() }

func (u *Upstream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet {
		u.card(w)
		return
	}
	raw, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var in struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Message json.RawMessage `json:"message"`
		} `json:"params"`
	}
	if err == nil {
		err = json.Unmarshal(raw, &in)
	}
	var msg struct {
		ContextID string `json:"contextId"`
	}
	if err == nil && len(in.Params.Message) > 0 {
		err = json.Unmarshal(in.Params.Message, &msg)
	}
	v03 := in.Method == "message/stream"
	if err != nil || (in.Method != "SendStreamingMessage" && !v03) || len(in.ID) == 0 {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"bench fake: unexpected request"}}`)
		return
	}
	if msg.ContextID == "" {
		msg.ContextID = uuid.NewString()
	}
	u.open.Add(1)
	defer u.open.Add(-1)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 64<<10)
	var fr turn
	if v03 {
		fr = newTurn03(string(in.ID), uuid.NewString(), msg.ContextID, uuid.NewString())
	} else {
		fr = newTurn10(string(in.ID), uuid.NewString(), msg.ContextID, uuid.NewString())
	}
	_, _ = bw.WriteString(fr.task(in.Params.Message))
	_, _ = bw.WriteString(fr.status("submitted", false))
	_, _ = bw.WriteString(fr.status("working", false))
	if bw.Flush() != nil {
		return
	}
	// Through the ResponseWriter's own buffer too: the adapter binds the
	// task and session before the bulk arrives, and a stalled turn shows.
	if f, ok := w.(http.Flusher); ok {
		f.Flush()
	}
	if u.Stall {
		<-r.Context().Done()
		return
	}
	var num []byte
	for i := 0; i < u.Deltas; i++ {
		num = strconv.AppendInt(append(num[:0], 't'), int64(i), 10)
		_, _ = bw.WriteString(fr.deltaHead)
		_, _ = bw.Write(num)
		if _, err := bw.WriteString(fr.deltaTail); err != nil {
			return
		}
	}
	end := u.End
	if end == "" {
		end = "input-required"
	}
	_, _ = bw.WriteString(fr.status(end, true))
	_ = bw.Flush()
}

// card is the A2A 0.3 agent card the @a2a-js/sdk client reads first.
func (u *Upstream) card(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]any{ // plain maps always marshal
		"name": "bench", "description": "bench fake", "url": u.BaseURL + "/", "version": "0.0.0",
		"protocolVersion": "0.3.0", "preferredTransport": "JSONRPC",
		"capabilities":       map[string]any{"streaming": true},
		"defaultInputModes":  []string{"text"},
		"defaultOutputModes": []string{"text"},
		"skills":             []any{},
	})
	_, _ = w.Write(b)
}

// turn holds one request's encoded frames.
type turn struct {
	task   func(userMsg json.RawMessage) string
	status func(state string, final bool) string
	// A delta frame is deltaHead, "t<i>", deltaTail: every text differs,
	// because the peer treats a status message equal to the text so far
	// as a repetition and drops it.
	deltaHead, deltaTail string
}

var states10 = map[string]string{
	"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING", "input-required": "TASK_STATE_INPUT_REQUIRED",
	"completed": "TASK_STATE_COMPLETED",
}

// newTurn10 encodes the A2A 1.0 shape iac-code sends (upstream.md §3.3).
func newTurn10(id, taskID, contextID, sessionID string) turn {
	ctx := quote(contextID)
	head := `data: {"jsonrpc":"2.0","id":` + id + `,"result":`
	meta := `"metadata":{"iac_code":{"iacCodeSessionId":"` + sessionID + `"}}`
	return turn{
		task: func(userMsg json.RawMessage) string {
			return head + `{"task":{"id":"` + taskID + `","contextId":` + ctx +
				`,"status":{"state":"TASK_STATE_SUBMITTED"},"history":[` + string(userMsg) + `]}}}` + "\n\n"
		},
		status: func(state string, _ bool) string {
			return head + `{"statusUpdate":{"taskId":"` + taskID + `","contextId":` + ctx +
				`,"status":{"state":"` + states10[state] + `","timestamp":"2026-01-01T00:00:00.000000+00:00"},` + meta + `}}}` + "\n\n"
		},
		deltaHead: head + `{"statusUpdate":{"taskId":"` + taskID + `","contextId":` + ctx +
			`,"status":{"state":"TASK_STATE_WORKING","message":{"messageId":"` + taskID + `-message","contextId":` + ctx +
			`,"taskId":"` + taskID + `","role":"ROLE_AGENT","parts":[{"text":"`,
		deltaTail: ` "}]}},` + meta + `}}}` + "\n\n",
	}
}

// newTurn03 encodes the same turn in the A2A 0.3 shape.
func newTurn03(id, taskID, contextID, sessionID string) turn {
	ctx := quote(contextID)
	head := `data: {"jsonrpc":"2.0","id":` + id + `,"result":`
	meta := `"metadata":{"iac_code":{"iacCodeSessionId":"` + sessionID + `"}}`
	return turn{
		task: func(userMsg json.RawMessage) string {
			return head + `{"kind":"task","id":"` + taskID + `","contextId":` + ctx +
				`,"status":{"state":"submitted"},"history":[` + string(userMsg) + `]}}` + "\n\n"
		},
		status: func(state string, final bool) string {
			return head + `{"kind":"status-update","taskId":"` + taskID + `","contextId":` + ctx +
				`,"status":{"state":"` + state + `","timestamp":"2026-01-01T00:00:00.000000+00:00"},"final":` + strconv.FormatBool(final) + `,` + meta + `}}` + "\n\n"
		},
		deltaHead: head + `{"kind":"status-update","taskId":"` + taskID + `","contextId":` + ctx +
			`,"status":{"state":"working","message":{"kind":"message","messageId":"` + taskID + `-message","contextId":` + ctx +
			`,"taskId":"` + taskID + `","role":"agent","parts":[{"kind":"text","text":"`,
		deltaTail: ` "}]}},"final":false,` + meta + `}}` + "\n\n",
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}
