package mapper

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

func genericMapper() *Mapper {
	n := 0
	return New(Config{ThreadID: "th", RunID: "run", Generic: true, NewID: func() string {
		n++
		return "id" + string(rune('0'+n))
	}})
}

func gstatus(kind a2a.Kind, state, role, text string) *a2a.Event {
	ev := &a2a.Event{Kind: kind, TaskID: "T", ContextID: "C", Status: &a2a.Status{State: state}}
	if text != "" {
		ev.Status.Message = &a2a.Message{MessageID: "m-" + text, Role: role, Parts: []a2a.Part{{Text: text}}}
	}
	return ev
}

// types lists the events' types with their text, for comparison.
func types(evs []agui.Event) []string {
	var out []string
	for _, e := range evs {
		b, _ := json.Marshal(e)
		var m map[string]any
		_ = json.Unmarshal(b, &m)
		s := string(e.EventType())
		if d, ok := m["delta"].(string); ok {
			s += ":" + d
		}
		if id, ok := m["messageId"].(string); ok {
			s += "@" + id
		}
		if n, ok := m["name"].(string); ok {
			s += ":" + n
		}
		out = append(out, s)
	}
	return out
}

// TestGenericText: status chunks with their own message ids form one
// message, each chunk once; a Task (history included) and the message of
// a waiting or failed task are not output; artifact text is a message of
// its own, other parts a CUSTOM event; no iac_code metadata is read.
func TestGenericText(t *testing.T) {
	m := genericMapper()
	var dst []agui.Event
	task := gstatus(a2a.KindTask, "TASK_STATE_INPUT_REQUIRED", a2a.RoleAgent, "earlier question")
	task.History = []a2a.Message{{MessageID: "h", Role: a2a.RoleAgent, Parts: []a2a.Part{{Text: "earlier answer"}}}}
	dst = m.Map(dst, task)
	dst = m.Map(dst, gstatus(a2a.KindStatusUpdate, "TASK_STATE_WORKING", a2a.RoleAgent, "Hello"))
	withMeta := gstatus(a2a.KindStatusUpdate, "TASK_STATE_WORKING", a2a.RoleAgent, ", world")
	withMeta.Metadata = map[string]any{"iac_code": map[string]any{"thinking": map[string]any{"type": "raw_thinking", "text": "x"}, "tool": map[string]any{"id": "t"}}}
	dst = m.Map(dst, withMeta)
	dst = m.Map(dst, gstatus(a2a.KindStatusUpdate, "TASK_STATE_WORKING", a2a.RoleUser, "user echo"))
	dst = m.Map(dst, &a2a.Event{Kind: a2a.KindArtifactUpdate, TaskID: "T", Artifact: map[string]any{
		"artifactId": "A", "parts": []any{map[string]any{"text": "art"}, map[string]any{"data": map[string]any{"k": 1.0}}},
	}})
	dst = m.Map(dst, &a2a.Event{Kind: a2a.KindArtifactUpdate, TaskID: "T", Artifact: map[string]any{"artifactId": "A", "parts": []any{map[string]any{"text": "ifact"}}}})
	dst = m.Map(dst, gstatus(a2a.KindStatusUpdate, "TASK_STATE_FAILED", a2a.RoleAgent, "boom"))
	dst = m.Map(dst, gstatus(a2a.KindStatusUpdate, "TASK_STATE_INPUT_REQUIRED", a2a.RoleAgent, "name?"))
	dst = m.CloseAll(dst)
	want := []string{
		"TEXT_MESSAGE_START@assistant-id1", "TEXT_MESSAGE_CONTENT:Hello@assistant-id1", "TEXT_MESSAGE_CONTENT:, world@assistant-id1",
		"TEXT_MESSAGE_END@assistant-id1", "TEXT_MESSAGE_START@artifact-id2", "TEXT_MESSAGE_CONTENT:art@artifact-id2", "CUSTOM:" + ArtifactEventName,
		"TEXT_MESSAGE_CONTENT:ifact@artifact-id2", "TEXT_MESSAGE_END@artifact-id2",
	}
	if got := types(dst); !reflect.DeepEqual(got, want) {
		t.Fatalf("events\n got %q\nwant %q", got, want)
	}
	custom := dst[6].(*agui.Custom).Value.(map[string]any)
	if parts := custom["parts"].([]any); len(parts) != 1 || custom["artifactId"] != "A" || custom["schemaVersion"] != 1 {
		t.Fatalf("artifact event %v", custom)
	}
}

// TestGenericInputs: a waiting task gives one input per run with the status
// message as prompt, and its interrupt accepts {"text": string}.
func TestGenericInputs(t *testing.T) {
	m := genericMapper()
	if in := m.RequiredInputs(gstatus(a2a.KindStatusUpdate, "TASK_STATE_WORKING", a2a.RoleAgent, "x")); in != nil {
		t.Fatalf("inputs of a working task: %v", in)
	}
	in := m.RequiredInputs(gstatus(a2a.KindStatusUpdate, "TASK_STATE_INPUT_REQUIRED", a2a.RoleAgent, "What is your name?"))
	if len(in) != 1 || in[0].ID != "input-id1" {
		t.Fatalf("inputs %+v", in)
	}
	if again := m.RequiredInputs(gstatus(a2a.KindTask, "TASK_STATE_INPUT_REQUIRED", a2a.RoleAgent, "What is your name?")); again != nil {
		t.Fatalf("second input in one run: %+v", again)
	}
	it := BuildInterrupt(in[0].Projection)
	if it.ID != "input-id1" || it.Reason != "input_required" || it.Message != "What is your name?" || !reflect.DeepEqual(it.ResponseSchema, TextAnswerSchema()) {
		t.Fatalf("interrupt %+v", it)
	}
	auth := genericMapper().RequiredInputs(gstatus(a2a.KindStatusUpdate, "TASK_STATE_AUTH_REQUIRED", a2a.RoleAgent, ""))
	if it := BuildInterrupt(auth[0].Projection); it.Reason != "auth_required" || it.Message != "Input required" {
		t.Fatalf("auth interrupt %+v", it)
	}
}
