package mapper

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// wireObject is the union of the A2A 1.0 Task, TaskStatusUpdateEvent and
// TaskArtifactUpdateEvent fields the tests use.
type wireObject struct {
	ID        string         `json:"id"`
	TaskID    string         `json:"taskId"`
	ContextID string         `json:"contextId"`
	Status    *a2a.Status    `json:"status"`
	History   []a2a.Message  `json:"history"`
	Artifact  map[string]any `json:"artifact"`
	Metadata  map[string]any `json:"metadata"`
}

// a2aEvent decodes a StreamResponse JSON literal ({"task":…},
// {"statusUpdate":…} or {"artifactUpdate":…}) into an a2a.Event, without
// the A2A client.
func a2aEvent(t testing.TB, js string) *a2a.Event {
	t.Helper()
	var r map[string]wireObject
	if err := json.Unmarshal([]byte(js), &r); err != nil {
		t.Fatalf("bad test JSON %s: %v", js, err)
	}
	if len(r) != 1 {
		t.Fatalf("want one StreamResponse member in %s", js)
	}
	for k, o := range r {
		ev := &a2a.Event{Kind: a2a.Kind(k), TaskID: o.TaskID, ContextID: o.ContextID, Status: o.Status,
			History: o.History, Artifact: o.Artifact, Metadata: o.Metadata}
		if ev.TaskID == "" {
			ev.TaskID = o.ID
		}
		return ev
	}
	return nil
}

// status builds a statusUpdate frame with the given iac_code metadata and
// optional status message JSON.
func status(t testing.TB, state, message, iacCode string) *a2a.Event {
	msg := ""
	if message != "" {
		msg = `,"message":` + message
	}
	md := ""
	if iacCode != "" {
		md = `,"metadata":{"iac_code":` + iacCode + `}`
	}
	return a2aEvent(t, `{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_`+state+`"`+msg+`}`+md+`}}`)
}

// agentText is a status message JSON with one text part.
func agentText(id, text string) string {
	b, _ := json.Marshal(text)
	return `{"messageId":"` + id + `","role":"ROLE_AGENT","parts":[{"text":` + string(b) + `}]}`
}

// render marshals each event with encoding/json, its type first.
func render(t testing.TB, evs []agui.Event) string {
	t.Helper()
	lines := make([]string, len(evs))
	for i, e := range evs {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // keep "<" readable in expectations
		if err := enc.Encode(e); err != nil {
			t.Fatalf("marshal %T: %v", e, err)
		}
		body := strings.TrimSuffix(buf.String(), "\n")[1:]
		if body != "}" {
			body = "," + body
		}
		lines[i] = `{"type":"` + string(e.EventType()) + `"` + body
	}
	return strings.Join(lines, "\n")
}

func expectEvents(t testing.TB, got []agui.Event, want ...string) {
	t.Helper()
	if g, w := render(t, got), strings.Join(want, "\n"); g != w {
		t.Fatalf("events differ\n--- got\n%s\n--- want\n%s", g, w)
	}
}

// seqIDs returns a deterministic NewID: 000…001, 000…002, ….
func seqIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("%032x", n) }
}

func newTestMapper(c Config) *Mapper {
	if c.ThreadID == "" {
		c.ThreadID = "thread-1"
	}
	if c.RunID == "" {
		c.RunID = "run-1"
	}
	if c.NewID == nil {
		c.NewID = seqIDs()
	}
	return New(c)
}

// verify mirrors the @ag-ui/client 1.0 verifier (agui.md §4 step 4)
// for the events a mapper emits, and finally checks that nothing is open,
// as RUN_FINISHED requires.
func verify(evs []agui.Event) error {
	text, tool, span, rmsg, step := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	open := func(set map[string]bool, kind, id string) error {
		if set[id] {
			return fmt.Errorf("%s %q started while open", kind, id)
		}
		set[id] = true
		return nil
	}
	need := func(set map[string]bool, kind, id string, end bool) error {
		if !set[id] {
			return fmt.Errorf("%s %q used while not open", kind, id)
		}
		if end {
			delete(set, id)
		}
		return nil
	}
	for i, e := range evs {
		var err error
		switch x := e.(type) {
		case *agui.TextMessageStart:
			err = open(text, "text", x.MessageID)
		case *agui.TextMessageContent:
			err = need(text, "text", x.MessageID, false)
		case *agui.TextMessageEnd:
			err = need(text, "text", x.MessageID, true)
		case *agui.ToolCallStart:
			err = open(tool, "tool", x.ToolCallID)
		case *agui.ToolCallArgs:
			err = need(tool, "tool", x.ToolCallID, false)
		case *agui.ToolCallEnd:
			err = need(tool, "tool", x.ToolCallID, true)
		case *agui.ReasoningStart:
			err = open(span, "reasoning span", x.MessageID)
		case *agui.ReasoningEnd:
			err = need(span, "reasoning span", x.MessageID, true)
		case *agui.ReasoningMessageStart:
			err = open(rmsg, "reasoning message", x.MessageID)
		case *agui.ReasoningMessageContent:
			err = need(rmsg, "reasoning message", x.MessageID, false)
		case *agui.ReasoningMessageEnd:
			err = need(rmsg, "reasoning message", x.MessageID, true)
		case *agui.StepStarted:
			err = open(step, "step", x.StepName)
		case *agui.StepFinished:
			err = need(step, "step", x.StepName, true)
		}
		if err != nil {
			return fmt.Errorf("event %d: %w", i, err)
		}
	}
	for kind, set := range map[string]map[string]bool{"text": text, "tool": tool, "reasoning span": span, "reasoning message": rmsg, "step": step} {
		if len(set) > 0 {
			return fmt.Errorf("RUN_FINISHED while %s still open: %v", kind, set)
		}
	}
	return nil
}
