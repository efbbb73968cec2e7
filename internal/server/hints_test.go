package server_test

import (
	"encoding/json"
	"testing"
)

// Errors that say what to do (issue 29): the spec's code, status and
// message, plus field, reason and a translated hint (protocol.md §2.4),
// and on RESUME_PAYLOAD_INVALID the failing member in RUN_ERROR.metadata
// (§5.7).

// errorHint decodes field, reason and hint of the error envelope.
func errorHint(t *testing.T, r *response) (field, reason, hint string) {
	t.Helper()
	var b struct {
		Error struct{ Field, Reason, Hint string }
	}
	if err := json.Unmarshal(r.Body, &b); err != nil {
		t.Fatalf("status %d, body %q: %v", r.Status, r.Body, err)
	}
	return b.Error.Field, b.Error.Reason, b.Error.Hint
}

func TestExecutionLostNamesTheIdentity(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-hint-ros"
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil), nil))[0]
	// A reload that made a new rosInvocationId.
	reloaded := resumeBody(e, th, "run-2", resolve(it["id"], map[string]any{"decision": "allow_once"}))
	reloaded["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["rosInvocationId"] = "invocation-after-reload"
	for _, c := range []struct{ lang, msg, hint string }{
		{"en", "The resume request does not match the interrupted run.",
			"Send the rosInvocationId of the run that raised the interrupts; keep it together with the threadId across page reloads."},
		{"es", "La solicitud de Resume no corresponde al run interrumpido.",
			"Envíe el rosInvocationId del run que generó los Interrupt; consérvelo junto con el threadId al recargar la página."},
	} {
		r := post(t, e.URL, reloaded, map[string]string{"Accept-Language": c.lang})
		code, msg := errorOf(t, r)
		field, reason, hint := errorHint(t, r)
		if r.Status != 409 || code != "EXECUTION_LOST" || msg != c.msg || field != "/forwardedProps/iacCode/rosInvocationId" ||
			reason != "does not match the interrupted run's rosInvocationId" || hint != c.hint {
			t.Fatalf("%s: got %d %s %q field %q reason %q hint %q", c.lang, r.Status, code, msg, field, reason, hint)
		}
	}
	// The interrupt is still answerable with the right identity.
	r := post(t, e.URL, resumeBody(e, th, "run-3", resolve(it["id"], map[string]any{"decision": "allow_once"})), nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("resume with the right identity: %v", fin)
	}

	// A resume of a thread this server does not know names the thread.
	r = post(t, e.URL, resumeBody(e, "thread-never-seen", "run-1", resolve("x", map[string]any{"decision": "deny"})), nil)
	code, msg := errorOf(t, r)
	field, reason, hint := errorHint(t, r)
	if r.Status != 409 || code != "EXECUTION_LOST" || msg != "The execution to resume is no longer available." ||
		field != "/threadId" || reason != "names no thread this server knows" || hint != "" {
		t.Fatalf("unknown thread: got %d %s %q field %q reason %q hint %q", r.Status, code, msg, field, reason, hint)
	}

	// Another workspace for a bound thread names cwd.
	moved := e.body(th, "run-4", "hello", map[string]any{"cwd": e.Root + "/elsewhere"})
	r = post(t, e.URL, moved, nil)
	code, _ = errorOf(t, r)
	field, reason, _ = errorHint(t, r)
	if r.Status != 409 || code != "THREAD_BINDING_CONFLICT" || field != "/forwardedProps/iacCode/cwd" || reason != "differs from the workspace the thread is bound to" {
		t.Fatalf("binding: got %d %s field %q reason %q", r.Status, code, field, reason)
	}
}

func TestRunIDConflictOnResumeHints(t *testing.T) {
	for _, c := range []struct {
		name       string
		copilotKit bool
		lang, hint string
	}{
		{"protocol", false, "en", "Each run needs a new runId, a resume too. CopilotKit reuses the interrupted run's id for its resume: start the server with --compat copilotkit."},
		{"protocol ja", false, "ja", "実行ごとに新しい runId が必要です（再開リクエストも同様です）。CopilotKit は再開リクエストに中断された実行の ID を再利用するため、サーバーを --compat copilotkit で起動してください。"},
		{"compat after restart", true, "en", "Send the resume with a new runId: the interrupted run's id is accepted for its resume only until the server restarts, and only when the resume answers every pending interrupt."},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, envOptions{copilotKit: c.copilotKit})
			const th = "thread-hint-runid"
			it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil), nil))[0]
			if c.copilotKit {
				e = e.restart(t) // the interrupted run's id is known in memory only
			}
			// CopilotKit's useInterrupt resumes under the interrupted run's id.
			r := post(t, e.URL, resumeBody(e, th, "run-1", resolve(it["id"], map[string]any{"decision": "allow_once"})), map[string]string{"Accept-Language": c.lang})
			code, _ := errorOf(t, r)
			field, reason, hint := errorHint(t, r)
			if r.Status != 409 || code != "RUN_ID_CONFLICT" || field != "/runId" ||
				reason != "was used by an earlier run of this thread; a resume needs a new runId" || hint != c.hint {
				t.Fatalf("got %d %s field %q reason %q hint %q", r.Status, code, field, reason, hint)
			}
		})
	}
	// A new turn that reuses a run id gets field and reason, no hint.
	e := newEnv(t, envOptions{})
	post(t, e.URL, e.body("thread-hint-new", "run-1", "hello", nil), nil)
	r := post(t, e.URL, e.body("thread-hint-new", "run-1", "hello again", nil), nil)
	code, _ := errorOf(t, r)
	field, reason, hint := errorHint(t, r)
	if r.Status != 409 || code != "RUN_ID_CONFLICT" || field != "/runId" || reason != "was used by an earlier run of this thread" || hint != "" {
		t.Fatalf("new turn: got %d %s field %q reason %q hint %q", r.Status, code, field, reason, hint)
	}
}

// payloadRefusal returns the RUN_ERROR of r and its metadata.
func payloadRefusal(t *testing.T, r *response) (msg, field, reason string) {
	t.Helper()
	fin := last(r.Events)
	if r.Status != 200 || fin["type"] != "RUN_ERROR" || fin["code"] != "RESUME_PAYLOAD_INVALID" {
		t.Fatalf("want RUN_ERROR RESUME_PAYLOAD_INVALID, got %d %v", r.Status, fin)
	}
	md, _ := fin["metadata"].(map[string]any)
	f, _ := md["field"].(string)
	rs, _ := md["reason"].(string)
	return fin["message"].(string), f, rs
}

func TestResumePayloadInvalidNamesTheSchemaPath(t *testing.T) {
	e := newEnv(t, envOptions{})
	const th = "thread-hint-payload"
	it := interrupts(t, post(t, e.URL, e.body(th, "run-1", "Deploy it (permission)", nil), nil))[0]
	cases := []struct {
		lang          string
		payload       any
		msg           string
		field, reason string
	}{
		{"en", map[string]any{"decision": "allow"}, "The interrupt response payload is invalid.", "/resume/0/payload/decision", `must be one of: "allow_once", "deny"`},
		{"de", map[string]any{"text": "yes"}, "Der Payload der Antwort auf die Unterbrechung ist ungültig.", "/resume/0/payload/decision", "is required"},
		{"en", nil, "A resolved interrupt requires a payload.", "/resume/0/payload", "is required"},
	}
	for i, c := range cases {
		entry := map[string]any{"interruptId": it["id"], "status": "resolved"}
		if c.payload != nil {
			entry["payload"] = c.payload
		}
		r := post(t, e.URL, resumeBody(e, th, "run-bad-"+string(rune('a'+i)), entry), map[string]string{"Accept-Language": c.lang})
		msg, field, reason := payloadRefusal(t, r)
		if msg != c.msg || field != c.field || reason != c.reason {
			t.Errorf("%v (%s): got %q field %q reason %q; want %q %q %q", c.payload, c.lang, msg, field, reason, c.msg, c.field, c.reason)
		}
	}

	// A question answered as {text} (what a wrong recipe sends): the reason
	// names the keys that would have selected a branch.
	const q = "thread-hint-question"
	qi := interrupts(t, post(t, e.URL, e.body(q, "run-1", "ask me a question", map[string]any{"runMode": "pipeline"}), nil))[0]
	r := post(t, e.URL, resumeBody(e, q, "run-2", resolve(qi["id"], map[string]any{"text": "the first one"})), nil)
	msg, field, reason := payloadRefusal(t, r)
	schema, _ := json.Marshal(qi["responseSchema"])
	if msg != "The interrupt response payload is invalid." || field != "/resume/0/payload" || reason != "must have selectedId or freeText" {
		t.Fatalf("question: got %q field %q reason %q (schema %s)", msg, field, reason, schema)
	}
	// The interrupt stays answerable: the corrected answer is accepted.
	r = post(t, e.URL, resumeBody(e, q, "run-3", resolve(qi["id"], map[string]any{"freeText": "the first one"})), nil)
	if fin := last(r.Events); fin["type"] != "RUN_FINISHED" {
		t.Fatalf("corrected answer: %v", fin)
	}
}
