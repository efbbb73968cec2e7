package server_test

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// TestPreStreamErrors covers every check of protocol.md §2.5 that answers
// before the stream, with its status, code and message in English and
// Spanish.
func TestPreStreamErrors(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "s3cret"})
	auth := map[string]string{"Authorization": "Bearer s3cret"}
	with := func(h map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range h {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	valid := e.body("thread-pre", "run-1", "Create a VPC template", nil)
	missingState := e.body("thread-pre", "run-1", "hi", nil)
	delete(missingState, "state")
	unknownField := e.body("thread-pre", "run-1", "hi", map[string]any{"surprise": true})
	tools := e.body("thread-pre", "run-1", "hi", nil)
	tools["tools"] = []any{map[string]any{"name": "t", "description": "d"}}
	outside := e.body("thread-pre", "run-1", "hi", map[string]any{"cwd": "/etc"})
	relative := e.body("thread-pre", "run-1", "hi", map[string]any{"cwd": "relative/dir"})
	// A cwd naming a server variable must not echo its value (reliability
	// finding 2): the variable is refused, set or not.
	t.Setenv("IAC_CODE_AGUI_A2A_TOKEN", "upstream-s3cret")
	envVar := e.body("thread-pre", "run-1", "hi", map[string]any{"cwd": e.Root + "/${IAC_CODE_AGUI_A2A_TOKEN}"})
	longInvocation := e.body("thread-pre", "run-1", "hi", map[string]any{"rosInvocationId": strings.Repeat("x", 257)})
	emptyThread := e.body("", "run-1", "hi", nil)
	resumeUnknown := e.body("thread-never-seen", "run-1", "", nil)
	resumeUnknown["resume"] = []any{map[string]any{"interruptId": "x", "status": "cancelled"}}

	cases := []struct {
		name    string
		body    any
		headers map[string]string
		status  int
		code    string
		en      string
		es      string
	}{
		{"no token", valid, nil, 401, "UNAUTHORIZED", "A valid bearer token is required.", "Se requiere un token bearer válido."},
		{"wrong token", valid, map[string]string{"Authorization": "Bearer nope"}, 401, "UNAUTHORIZED", "A valid bearer token is required.", ""},
		{"basic scheme", valid, map[string]string{"Authorization": "Basic s3cret"}, 401, "UNAUTHORIZED", "A valid bearer token is required.", ""},
		{"media type", valid, with(auth, "Content-Type", "text/plain"), 415, "UNSUPPORTED_MEDIA_TYPE", "Content-Type must be application/json.", ""},
		{"bad json", `{"threadId":`, auth, 400, "INVALID_JSON", "The request body is not valid JSON.", "El cuerpo de la solicitud no es JSON válido."},
		{"invalid utf-8", []byte("{\"threadId\":\"\xff\"}"), auth, 400, "INVALID_JSON", "The request body is not valid JSON.", ""},
		{"not an object", `[1,2]`, auth, 400, "INVALID_INPUT", "RunAgentInput must be a JSON object.", ""},
		{"envelope", missingState, auth, 400, "INVALID_INPUT", "Invalid AG-UI RunAgentInput envelope.", ""},
		{"unknown iacCode field", unknownField, auth, 400, "INVALID_INPUT", "Invalid iac-code forwarded properties.", ""},
		{"client tools", tools, auth, 400, "INVALID_INPUT", "Client-provided tools are not supported.", "No se admiten herramientas proporcionadas por el cliente."},
		{"cwd outside roots", outside, auth, 400, "INVALID_INPUT", "Invalid iac-code forwarded properties.", ""},
		{"cwd names an environment variable", envVar, auth, 400, "INVALID_INPUT", "Invalid iac-code forwarded properties.", ""},
		{"relative cwd", relative, auth, 400, "INVALID_INPUT", "Invalid iac-code forwarded properties.", ""},
		{"rosInvocationId too long", longInvocation, auth, 400, "INVALID_INPUT", "Invalid iac-code forwarded properties.", ""},
		{"empty thread id", emptyThread, auth, 503, "STATE_UNAVAILABLE", "The AG-UI adapter state is unavailable.", ""},
		{"resume of unknown thread", resumeUnknown, auth, 409, "EXECUTION_LOST", "The execution to resume is no longer available.", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, lang := range []string{"en", "es"} {
				want := c.en
				if lang == "es" {
					want = c.es
					if want == "" {
						want = i18n.T(i18n.ES, c.en)
					}
				}
				h := with(c.headers, "Accept-Language", lang+";q=0.9, fr;q=0.1")
				r := post(t, e.URL, c.body, h)
				code, msg := errorOf(t, r)
				if r.Status != c.status || code != c.code || msg != want {
					t.Errorf("%s: got %d %s %q; want %d %s %q", lang, r.Status, code, msg, c.status, c.code, want)
				}
				if ct := r.Header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
			}
		})
	}
}

// TestPreferredLanguageWins: forwardedProps.iacCode.preferredLanguage beats
// Accept-Language, also for errors found after the language step.
func TestPreferredLanguageWins(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := e.body("thread-lang", "run-1", "hi", map[string]any{"preferredLanguage": "ja-JP"})
	delete(b, "context")
	r := post(t, e.URL, b, map[string]string{"Accept-Language": "es"})
	code, msg := errorOf(t, r)
	if r.Status != 400 || code != "INVALID_INPUT" || msg != i18n.T(i18n.JA, "Invalid AG-UI RunAgentInput envelope.") {
		t.Fatalf("got %d %s %q", r.Status, code, msg)
	}
	if msg == "Invalid AG-UI RunAgentInput envelope." {
		t.Fatal("message not translated")
	}
}

// TestBodyLimit: 12 MiB, by Content-Length and while reading a chunked body.
func TestBodyLimit(t *testing.T) {
	e := newEnv(t, envOptions{})
	big := bytes.Repeat([]byte(" "), 12<<20+1)
	r := post(t, e.URL, big, nil)
	if code, msg := errorOf(t, r); r.Status != 413 || code != "REQUEST_TOO_LARGE" || msg != "The AG-UI request body is too large." {
		t.Fatalf("content-length: %d %s %q", r.Status, code, msg)
	}
	req, _ := http.NewRequest(http.MethodPost, e.URL, struct{ *bytes.Reader }{bytes.NewReader(big)})
	req.Header.Set("Content-Type", "application/json")
	req.ContentLength = -1 // chunked: the limit must hold while reading
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 413 {
		t.Fatalf("chunked: status %d", res.StatusCode)
	}
}

// TestRunIDIdempotency: a replay gets DUPLICATE_RUN_ID, a different body
// with the same runId RUN_ID_CONFLICT; neither is replayed.
func TestRunIDIdempotency(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := e.body("thread-idem", "run-1", "Create a VPC template", nil)
	if r := post(t, e.URL, b, nil); r.Status != 200 || last(r.Events)["type"] != "RUN_FINISHED" {
		t.Fatalf("first run: %d %v", r.Status, types(r.Events))
	}
	r := post(t, e.URL, b, nil)
	if code, msg := errorOf(t, r); r.Status != 409 || code != "DUPLICATE_RUN_ID" || msg != "The AG-UI run id has already been used." {
		t.Fatalf("replay: %d %s %q", r.Status, code, msg)
	}
	b2 := e.body("thread-idem", "run-1", "Something else", nil)
	r = post(t, e.URL, b2, nil)
	if code, _ := errorOf(t, r); r.Status != 409 || code != "RUN_ID_CONFLICT" {
		t.Fatalf("conflict: %d %s", r.Status, code)
	}
}

// TestThreadBusyAndBinding: one active run per thread; a thread stays bound
// to its first cwd and userId.
func TestThreadBusyAndBinding(t *testing.T) {
	e := newEnv(t, envOptions{})
	slow := openStream(t, e.URL, e.body("thread-busy", "run-1", "slow", nil))
	slow.waitFor(t, "TEXT_MESSAGE_CONTENT")
	r := post(t, e.URL, e.body("thread-busy", "run-probe", "hi", nil), nil)
	if code, msg := errorOf(t, r); r.Status != 409 || code != "THREAD_BUSY" || msg != "The AG-UI thread already has an active run." {
		t.Fatalf("busy: %d %s %q", r.Status, code, msg)
	}
	if got := slow.rest(t); got["type"] != "RUN_FINISHED" {
		t.Fatalf("slow run ended with %v", got)
	}
	other := e.body("thread-busy", "run-2", "hi", map[string]any{"cwd": filepath.Join(e.Root, "elsewhere")})
	r = post(t, e.URL, other, nil)
	if code, msg := errorOf(t, r); r.Status != 409 || code != "THREAD_BINDING_CONFLICT" || msg != "The AG-UI thread is already bound to another workspace or caller." {
		t.Fatalf("binding: %d %s %q", r.Status, code, msg)
	}
	user := e.body("thread-busy", "run-3", "hi", map[string]any{"userId": "alice"})
	if r := post(t, e.URL, user, nil); r.Status != 409 {
		t.Fatalf("userId binding: %d", r.Status)
	}
}

// TestCorruptThreadIsolated: a corrupt file gives 503 for its thread alone.
func TestCorruptThreadIsolated(t *testing.T) {
	e := newEnv(t, envOptions{})
	key, err := state.FileKey("thread-corrupt")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(e.StateDir, "threads")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, key+".json"), []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := post(t, e.URL, e.body("thread-corrupt", "run-1", "hi", nil), nil)
	if code, _ := errorOf(t, r); r.Status != 503 || code != "STATE_UNAVAILABLE" {
		t.Fatalf("corrupt: %d %s", r.Status, code)
	}
	if r := post(t, e.URL, e.body("thread-healthy", "run-1", "Create a VPC template", nil), nil); r.Status != 200 {
		t.Fatalf("healthy thread: %d", r.Status)
	}
}

func TestHealth(t *testing.T) {
	e := newEnv(t, envOptions{authToken: "s3cret"})
	res, err := http.Get(e.URL + "health")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	_, _ = buf.ReadFrom(res.Body)
	want := `{"executionKernel":"a2a-1.0","protocol":"ag-ui","protocolPackageVersion":"1.0","serverVersion":"test","status":"ok"}` + "\n"
	if res.StatusCode != 200 || buf.String() != want {
		t.Fatalf("health: %d %s", res.StatusCode, buf.String())
	}
}
