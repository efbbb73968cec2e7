package agui

import (
	"errors"
	"strings"
	"testing"
)

func TestIDLimits(t *testing.T) {
	body := func(thread, run, msgID, interruptID string) []byte {
		s := `{"threadId":` + q(thread) + `,"runId":` + q(run) + `,"state":{},"tools":[],"context":[],"forwardedProps":{},` +
			`"messages":[{"id":` + q(msgID) + `,"role":"user","content":"hi"}]`
		if interruptID != "" {
			s += `,"resume":[{"interruptId":` + q(interruptID) + `,"status":"cancelled"}]`
		}
		return []byte(s + "}")
	}
	ok := strings.Repeat("é", MaxIDLength)
	if _, err := DecodeRunAgentInput(body(ok, ok, ok, ok)); err != nil {
		t.Fatalf("ids of %d characters: %v", MaxIDLength, err)
	}
	long := strings.Repeat("x", MaxIDLength+1)
	for name, b := range map[string][]byte{
		"threadId":    body(long, "r", "m", ""),
		"runId":       body("t", long, "m", ""),
		"message id":  body("t", "r", long, ""),
		"interruptId": body("t", "r", "m", long),
		"NUL":         body(`t\u0000`, "r", "m", ""),
		"newline":     body("t", `r\n`, "m", ""),
		"DEL":         body("t", "r", "m\u007f", ""),
		"C1":          body("t", "r", "m", `i\u0085`),
		"toolCallId": []byte(`{"threadId":"t","runId":"r","state":{},"tools":[],"context":[],"forwardedProps":{},` +
			`"messages":[{"id":"m","role":"tool","toolCallId":"` + long + `","content":"x"}]}`),
		"parentRunId": []byte(`{"threadId":"t","runId":"r","parentRunId":"` + long + `","state":{},"tools":[],"context":[],"forwardedProps":{},"messages":[]}`),
	} {
		if _, err := DecodeRunAgentInput(b); !errors.Is(err, ErrInvalidEnvelope) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// q quotes s as a JSON string, leaving escapes written by the caller.
func q(s string) string { return `"` + s + `"` }
