package server_test

import (
	"strings"
	"testing"
)

// messageTexts joins the text deltas of evs by message id, as a client
// that appends them (the console, CopilotKit) shows them.
func messageTexts(evs ...[]map[string]any) map[string]string {
	out := map[string]string{}
	for _, list := range evs {
		for _, ev := range list {
			if ev["type"] == "TEXT_MESSAGE_CONTENT" {
				out[ev["messageId"].(string)] += ev["delta"].(string)
			}
		}
	}
	return out
}

// TestTextAPersonReads (issue 29, "Text"): a continuation after an
// interrupt is a new paragraph of the message shown before, not glued to
// its last word (protocol.md §4.7); the permission message ends its
// title's sentence (§5.2), in the projection's language; a cancelled run
// shows no "Task canceled." beside its "cancelled" error.
func TestTextAPersonReads(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-texts"
	first := post(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil), nil)
	it := interrupts(t, first)[0]
	if it["message"] != "Run a local shell command. Allow once?" {
		t.Fatalf("permission message %q", it["message"])
	}
	resumed := post(t, e.URL, resumeBody(e, th, "run-2", resolve(it["id"], map[string]any{"decision": "allow_once"})), nil)
	if fin := last(resumed.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume: %v", fin)
	}
	want := "I need to inspect the workspace first.\n\nThe workspace is " + e.Root + "/ws."
	found := false
	for _, text := range messageTexts(first.Events, resumed.Events) {
		if strings.Contains(text, "The workspace is") {
			found = true
			if text != want {
				t.Fatalf("message shown as %q, want %q", text, want)
			}
		}
	}
	if !found {
		t.Fatalf("no continuation text: %v", messageTexts(first.Events, resumed.Events))
	}

	es := post(t, e.URL, e.body("thread-texts-es", "run-1", "Deploy it (permission)", map[string]any{"preferredLanguage": "es"}), nil)
	if m := interrupts(t, es)[0]["message"]; m != "Ejecutar un comando de shell local. ¿Permitir una vez?" {
		t.Fatalf("Spanish permission message %q", m)
	}

	s := openStream(t, e.URL, e.body("thread-texts-cancel", "run-1", "cancel me", nil))
	exec := s.waitFor(t, "CUSTOM")["value"].(map[string]any)["executionId"].(string)
	if r := postCancel(t, e, exec, map[string]any{"threadId": "thread-texts-cancel", "rosInvocationId": "invocation-1"}); r.Status != 200 {
		t.Fatalf("cancel: %d %s", r.Status, r.Body)
	}
	fin := s.rest(t)
	if fin["type"] != "RUN_ERROR" || fin["code"] != "CANCELLED" {
		t.Fatalf("cancelled run ended %v", fin)
	}
	for _, text := range messageTexts(s.events) {
		if strings.Contains(text, "anceled") {
			t.Fatalf("a cancelled run shows %q", text)
		}
	}
}
