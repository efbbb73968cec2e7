package server_test

import (
	"path/filepath"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// TestAdmissionErrorsTranslated: each 409 of protocol.md §2.6 answers with
// its code and its message in the request language (English and Spanish
// here; the catalogue test covers the other five languages).
func TestAdmissionErrorsTranslated(t *testing.T) {
	e := newEnv(t, envOptions{})
	done := e.body("thread-tr-done", "run-1", "Create a VPC template", nil)
	if r := post(t, e.URL, done, nil); r.Status != 200 {
		t.Fatalf("setup: %d", r.Status)
	}
	waiting := interrupts(t, post(t, e.URL, e.body("thread-tr-wait", "run-1", "permission", nil), nil))[0]
	busy := openStream(t, e.URL, e.body("thread-tr-busy", "run-1", "slow", nil))
	busy.waitFor(t, "TEXT_MESSAGE_CONTENT")

	conflict := e.body("thread-tr-done", "run-1", "Something else", nil)
	otherCwd := e.body("thread-tr-done", "run-2", "hi", map[string]any{"cwd": filepath.Join(e.Root, "other")})
	newTurn := e.body("thread-tr-wait", "run-2", "hi", nil)
	mismatch := resumeBody(e, "thread-tr-wait", "run-3", allow(waiting["id"]))
	mismatch["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["rosInvocationId"] = "invocation-other"
	probe := e.body("thread-tr-busy", "run-2", "hi", nil)

	cases := []struct {
		name string
		body any
		code string
		en   string
		es   string
	}{
		{"duplicate", done, "DUPLICATE_RUN_ID", "The AG-UI run id has already been used.", "El id de run de AG-UI ya se ha utilizado."},
		{"conflict", conflict, "RUN_ID_CONFLICT", "The AG-UI run id has already been used.", "El id de run de AG-UI ya se ha utilizado."},
		{"busy", probe, "THREAD_BUSY", "The AG-UI thread already has an active run.", "El thread AG-UI ya tiene un run activo."},
		{"binding", otherCwd, "THREAD_BINDING_CONFLICT", "The AG-UI thread is already bound to another workspace or caller.", ""},
		{"resume required", newTurn, "RESUME_REQUIRED", "The AG-UI thread is waiting for interrupt responses.", ""},
		{"resume mismatch", mismatch, "EXECUTION_LOST", "The resume request does not match the interrupted run.", ""},
	}
	for _, c := range cases {
		for _, lang := range []string{"en", "es-ES"} {
			want := c.en
			if lang != "en" {
				want = c.es
				if want == "" {
					want = i18n.T(i18n.ES, c.en)
				}
				if want == c.en {
					t.Fatalf("%s: no Spanish translation", c.name)
				}
			}
			r := post(t, e.URL, c.body, map[string]string{"Accept-Language": lang})
			if code, msg := errorOf(t, r); r.Status != 409 || code != c.code || msg != want {
				t.Errorf("%s/%s: %d %s %q; want 409 %s %q", c.name, lang, r.Status, code, msg, c.code, want)
			}
		}
	}
	busy.rest(t)
}
