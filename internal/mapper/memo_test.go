package mapper

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a/frame"
	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

// The metadata memo (mapper.go) must not change any answer: frames decoded
// by one stream Decoder, which shares a metadata map between frames with
// identical metadata bytes, map exactly like the same frames each with
// its own maps, including a map of the same size that holds a key the
// memoised one did not, and another session.
func TestMetadataMemoSameAnswers(t *testing.T) {
	delta := func(text, iac string) string {
		return `{"statusUpdate":{"taskId":"task-1","contextId":"ctx-1","status":{"state":"TASK_STATE_WORKING","message":` +
			agentText("task-1-message", text) + `},"metadata":{"iac_code":` + iac + `}}}`
	}
	frames := []string{
		delta("a", `{"iacCodeSessionId":"S"}`),
		delta("b", `{"iacCodeSessionId":"S"}`),
		delta("c", `{"tool":{"status":"started","toolUseId":"toolu_1","name":"bash"}}`),
		delta("d", `{"iacCodeSessionId":"S"}`),
		delta("e", `{"iacCodeSessionId":"S2"}`),
		delta("f", `{"iacCodeSessionId":"S2"}`),
		delta("g", `{"input":{"inputId":"i1","required":true,"kind":"question"}}`),
		delta("h", `{"iacCodeSessionId":"S"}`),
	}
	shared, fresh := newTestMapper(Config{}), newTestMapper(Config{})
	var d frame.Decoder
	var got, want []agui.Event
	for _, f := range frames {
		ev, _, err := d.Decode([]byte(`{"jsonrpc":"2.0","id":1,"result":` + f + `}`))
		if err != nil {
			t.Fatal(err)
		}
		own := a2aEvent(t, f)
		got, want = shared.Map(got, ev), fresh.Map(want, own)
		if a, b := len(shared.RequiredInputs(ev)), len(fresh.RequiredInputs(own)); a != b {
			t.Fatalf("%s: %d required inputs, want %d", f, a, b)
		}
		if _, _, s := shared.Identity(ev); s != func() string { _, _, s := Identity(own); return s }() {
			t.Fatalf("%s: session %q", f, s)
		}
	}
	if g, w := render(t, got), render(t, want); g != w {
		t.Fatalf("shared maps\n%s\nown maps\n%s", g, w)
	}
}
