package e2e

// TestNoSecretsInLogsOrState runs every behaviour of the embedded agent,
// the error paths and the cancellation route against the real binary at
// --debug, in text and in JSON logs, with distinctive values in every
// credential and in the user's text, and asserts that none of them appears
// in the log output (stdout and stderr, the adapter's and the standalone
// agent's), in any file of the state directory, or in any span exported
// to a real Jaeger (the gateway's and the embedded agent's).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// The distinctive values; none contains a demo-agent keyword.
const (
	secLLMKey     = "zqLLMKEYx0a1"
	secHeader1    = "zqHDRONEx0b2"
	secHeader2    = "zqHDRTWOx0c3"
	secAKID       = "zqAKIDx0d4"
	secAKSecret   = "zqAKSECRETx0e5"
	secSTS        = "zqSTSTOKENx0f6"
	secAuthToken  = "zqAUTHTOKENx107"
	secA2AToken   = "zqA2ATOKENx118"
	secWrongToken = "zqWRONGTOKENx129"
	secText       = "zqUSERTEXTx13a"
)

var allSecrets = []string{secLLMKey, secHeader1, secHeader2, secAKID, secAKSecret, secSTS, secAuthToken, secA2AToken, secWrongToken, secText}

// secretClient drives one adapter with the credentials above.
type secretClient struct {
	t    *testing.T
	url  string
	root string
}

func (c *secretClient) iacCode(cwd string, extra map[string]any) map[string]any {
	ic := map[string]any{
		"schemaVersion": 1, "rosInvocationId": "inv-1", "cwd": filepath.Join(c.root, cwd),
		"llmApiKey":  secLLMKey,
		"llmHeaders": map[string]any{"X-Provider-Auth": secHeader1, "X-Org": secHeader2},
		"alibabaCloud": map[string]any{"accessKeyId": secAKID, "accessKeySecret": secAKSecret,
			"securityToken": secSTS, "regionId": "cn-hangzhou"},
		"preferredLanguage": "en",
	}
	for k, v := range extra {
		ic[k] = v
	}
	return ic
}

func (c *secretClient) input(thread, run, text, cwd string, extra map[string]any, resume []any) map[string]any {
	msgs := []any{}
	if text != "" {
		msgs = append(msgs, map[string]any{"id": "m-" + run, "role": "user", "content": text + " " + secText})
	}
	b := map[string]any{"threadId": thread, "runId": run, "state": map[string]any{}, "messages": msgs,
		"tools": []any{}, "context": []any{}, "forwardedProps": map[string]any{"iacCode": c.iacCode(cwd, extra)}}
	if resume != nil {
		b["resume"] = resume
	}
	return b
}

// post sends body (a map, or raw bytes) with the right token unless token
// says otherwise, and returns the status and the SSE events.
func (c *secretClient) post(path string, body any, token string) (int, []map[string]any, string) {
	c.t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		raw, _ = json.Marshal(body)
	}
	req, _ := http.NewRequest(http.MethodPost, c.url+path, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	var all bytes.Buffer
	_, _ = all.ReadFrom(res.Body)
	evs := e2etest.Events(all.Bytes())
	e2etest.CheckEvents(c.t, evs)
	return res.StatusCode, evs, all.String()
}

// answerFor picks a valid answer for the demo agent's interrupt kinds,
// else free text (which carries the user's distinctive text).
func answerFor(it map[string]any) map[string]any {
	schema, _ := it["responseSchema"].(map[string]any)
	props, _ := schema["properties"].(map[string]any)
	md, _ := it["metadata"].(map[string]any)
	opts, _ := md["options"].([]any)
	std, _ := md["standardOptions"].([]any)
	first := func(list []any) map[string]any {
		m, _ := list[0].(map[string]any)
		return m
	}
	switch {
	case props["decision"] != nil:
		return map[string]any{"decision": "allow_once"}
	case strings.HasPrefix(fmt.Sprint(it["id"]), "resource-") && len(opts) > 0:
		o := first(opts)
		if len(opts) > 1 {
			o, _ = opts[1].(map[string]any)
		}
		return map[string]any{"value": o["id"], "label": o["label"]}
	case len(std) > 0:
		for _, o := range std {
			if m, _ := o.(map[string]any); m["id"] == "confirm" {
				return map[string]any{"selectedId": "confirm"}
			}
		}
		return map[string]any{"selectedId": first(std)["id"]}
	}
	return map[string]any{"freeText": "an answer " + secText}
}

// converse runs a turn and answers its interrupts until the thread ends or
// four rounds have passed; it returns the terminal events in order.
func (c *secretClient) converse(thread, text string, extra map[string]any) []string {
	c.t.Helper()
	var ends []string
	var lastResume []any
	status, evs, raw := c.post("", c.input(thread, "run-1", text, "ws-"+thread, extra, nil), secAuthToken)
	for round := 2; ; round++ {
		if status != 200 || len(evs) == 0 {
			c.t.Fatalf("%s: status %d: %s", thread, status, raw)
		}
		fin := evs[len(evs)-1]
		o, _ := fin["outcome"].(map[string]any)
		end := fmt.Sprint(fin["type"], "/", o["type"], fin["code"])
		ends = append(ends, end)
		its, _ := o["interrupts"].([]any)
		if fin["code"] == "SESSION_BACKUP_NOT_READY" && round <= 5 {
			// Retryable: the same answer again, under a new run id.
			status, evs, raw = c.post("", c.input(thread, "run-"+strconv.Itoa(round), "", "ws-"+thread, extra, lastResume), secAuthToken)
			continue
		}
		if len(its) == 0 || round > 5 {
			return ends
		}
		var resume []any
		for _, x := range its {
			it, _ := x.(map[string]any)
			answer := answerFor(it)
			if strings.HasSuffix(thread, "-freetext") {
				answer = map[string]any{"freeText": "my own answer " + secText}
			}
			resume = append(resume, map[string]any{"interruptId": it["id"], "status": "resolved", "payload": answer})
		}
		lastResume = resume
		status, evs, raw = c.post("", c.input(thread, "run-"+strconv.Itoa(round), "", "ws-"+thread, extra, resume), secAuthToken)
	}
}

// openRun starts a streaming run and returns its session custom event's
// executionId and a function that closes the connection.
func (c *secretClient) openRun(thread, run, text string) (string, *bufio.Scanner, func()) {
	c.t.Helper()
	raw, _ := json.Marshal(c.input(thread, run, text, "ws-"+thread, nil, nil))
	req, _ := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secAuthToken)
	req.Header.Set("X-Request-Id", "req-"+thread)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != 200 {
		c.t.Fatalf("open %s: %v %v", thread, err, res)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		_ = json.Unmarshal([]byte(line), &ev)
		if ev["type"] == "CUSTOM" && ev["name"] == "iac-code.session.v1" {
			v, _ := ev["value"].(map[string]any)
			id, _ := v["executionId"].(string)
			return id, sc, func() { res.Body.Close() }
		}
	}
	c.t.Fatalf("%s: no session event", thread)
	return "", nil, nil
}

func drain(sc *bufio.Scanner) string {
	last := ""
	for sc.Scan() {
		if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			last = line
		}
	}
	return last
}

// exercise drives every behaviour and error path through c.
func exercise(t *testing.T, c *secretClient) {
	behaviours := []struct {
		name, text string
		extra      map[string]any
	}{
		{"normal", "Create a VPC template", nil},
		{"bucket", "Create an OSS bucket", nil},
		{"terraform", "Write terraform for a VPC", nil},
		{"flood", "flood 300", nil},
		{"slow", "slow please", nil},
		{"retryable", "retryable please", nil},
		{"streamerror", "stream error please", nil},
		{"fail", "fail please", nil},
		{"sideband", "sideband please", map[string]any{"runMode": "pipeline"}},
		{"pipelineperm", "pipeline permission please", map[string]any{"runMode": "pipeline"}},
		{"question", "ask me a question", map[string]any{"runMode": "pipeline"}},
		{"question-freetext", "ask me a question", map[string]any{"runMode": "pipeline"}},
		{"backup", "backup not ready; ask me a question", map[string]any{"runMode": "pipeline"}},
		{"resource", "select a vswitch", nil},
		{"candidate", "candidate please", map[string]any{"runMode": "pipeline"}},
		{"deploy", "deploy the stack", map[string]any{"runMode": "pipeline"}},
		{"pipeline", "run the pipeline", map[string]any{"runMode": "pipeline", "pipelineName": "selling", "candidatePresentation": "rich"}},
		{"permission", "permission please", nil},
		{"thinking", "Create a VPC", map[string]any{"model": "m", "thinking": map[string]any{"enabled": true, "budget": 10}}},
	}
	finished := 0
	for _, b := range behaviours {
		ends := c.converse("th-"+b.name, b.text, b.extra)
		t.Logf("%s: %v", b.name, ends)
		if strings.HasPrefix(ends[len(ends)-1], "RUN_FINISHED/success") {
			finished++
		}
	}
	if finished < len(behaviours)-2 {
		t.Fatalf("only %d behaviours finished successfully", finished)
	}

	// Error paths before the stream.
	c.expect("wrong token", 401, "", c.input("th-err", "r1", "hello", "ws-err", nil, nil), secWrongToken)
	c.expect("bad JSON", 400, "", []byte(`{"threadId":"th-err","messages":[{"content":"`+secText+` `+secLLMKey), secAuthToken)
	c.expect("not an object", 400, "", []byte(`["`+secText+`"]`), secAuthToken)
	bad := c.input("th-err", "r1", "hello", "ws-err", nil, nil)
	bad["messages"] = "not a list " + secText
	c.expect("bad envelope", 400, "", bad, secAuthToken)
	outside := c.input("th-err", "r1", "hello", "ws-err", nil, nil)
	outside["forwardedProps"].(map[string]any)["iacCode"].(map[string]any)["cwd"] = "/proc/" + secText
	c.expect("workspace outside", 400, "", outside, secAuthToken)
	tools := c.input("th-err", "r1", "hello", "ws-err", nil, nil)
	tools["tools"] = []any{map[string]any{"name": "t", "description": secText, "parameters": map[string]any{}}}
	c.expect("client tools", 400, "", tools, secAuthToken)
	// 409s: a reused run id (same and different body), a new turn while an
	// interrupt is pending, a binding conflict, a busy thread.
	first := c.input("th-409", "r1", "Create a VPC", "ws-409", nil, nil)
	c.expect("first run", 200, "", first, secAuthToken)
	c.expect("duplicate run id", 409, "", first, secAuthToken)
	c.expect("run id conflict", 409, "", c.input("th-409", "r1", "other text", "ws-409", nil, nil), secAuthToken)
	c.expect("binding conflict", 409, "", c.input("th-409", "r2", "Create a VPC", "ws-other", nil, nil), secAuthToken)
	c.expect("interrupt", 200, "", c.input("th-409", "r3", "permission please", "ws-409", nil, nil), secAuthToken)
	c.expect("resume required", 409, "", c.input("th-409", "r4", "Create a VPC", "ws-409", nil, nil), secAuthToken)
	c.expect("unknown interrupt", 200, "RUN_ERROR", c.input("th-409", "r5", "", "ws-409", nil,
		[]any{map[string]any{"interruptId": "permission-" + secText, "status": "cancelled"}}), secAuthToken)
	c.expect("bad payload", 200, "RUN_ERROR", c.input("th-409", "r6", "", "ws-409", nil,
		[]any{map[string]any{"interruptId": "x", "status": "resolved", "payload": map[string]any{"decision": secText}}}), secAuthToken)
	c.expect("resume of a lost thread", 409, "", c.input("th-none", "r1", "", "ws-none", nil,
		[]any{map[string]any{"interruptId": "x", "status": "cancelled"}}), secAuthToken)

	// A stalled run: THREAD_BUSY while it runs, then the cancel route.
	exec, sc, closeRun := c.openRun("th-stall", "r1", "stall please")
	defer closeRun()
	c.expect("thread busy", 409, "", c.input("th-stall", "r2", "Create a VPC", "ws-th-stall", nil, nil), secAuthToken)
	cancelPath := "extensions/iac-code/v1/executions/" + exec + "/cancel"
	ident := map[string]any{"threadId": "th-stall", "rosInvocationId": "inv-1"}
	c.expect("cancel wrong token", 401, "", ident, secWrongToken)
	c.expectPath("cancel bad JSON", cancelPath, 400, []byte(`{"threadId":"`+secText), secAuthToken)
	c.expectPath("cancel unknown", "extensions/iac-code/v1/executions/nope/cancel", 404, ident, secAuthToken)
	c.expectPath("cancel", cancelPath, 200, ident, secAuthToken)
	if last := drain(sc); !strings.Contains(last, `"RUN_ERROR"`) {
		t.Fatalf("the cancelled run ended with %s", last)
	}
	c.expectPath("cancel again", cancelPath, 200, ident, secAuthToken)
	// A client that disconnects mid-run.
	_, _, closeSlow := c.openRun("th-disconnect", "r1", "cancel me")
	closeSlow()
	// Metrics with and without the token.
	for _, tok := range []string{secAuthToken, secWrongToken} {
		req, _ := http.NewRequest(http.MethodGet, c.url+"metrics", nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
	}
}

// expect posts a run; end, when set, is the type its last event must have.
func (c *secretClient) expect(name string, status int, end string, body any, token string) {
	c.t.Helper()
	evs := c.expectPath(name, "", status, body, token)
	if end != "" && (len(evs) == 0 || evs[len(evs)-1]["type"] != end) {
		c.t.Fatalf("%s: events %v, want a final %s", name, evs, end)
	}
}

func (c *secretClient) expectPath(name, path string, status int, body any, token string) []map[string]any {
	c.t.Helper()
	got, evs, raw := c.post(path, body, token)
	if got != status {
		c.t.Fatalf("%s: status %d, want %d: %s", name, got, status, raw)
	}
	if status == 200 && path == "" && len(evs) == 0 {
		c.t.Fatalf("%s: no events", name)
	}
	return evs
}

// scan fails the test for every secret found in text or in the files of
// dir.
func scan(t *testing.T, what, text string) {
	t.Helper()
	for _, s := range allSecrets {
		if i := strings.Index(text, s); i >= 0 {
			lo, hi := max(0, i-200), min(len(text), i+100)
			t.Errorf("%s holds %q: …%s…", what, s, text[lo:hi])
		}
	}
}

func scanDir(t *testing.T, dir string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		scan(t, path, string(b))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d state files", files)
	}
}

// startLogged starts the binary with args and env, output captured apart
// for stdout and stderr, and waits for /health.
func startLogged(t *testing.T, args, env []string) (string, *e2etest.Buffer, *e2etest.Buffer, *exec.Cmd) {
	t.Helper()
	port := e2etest.FreePort(t)
	cmd := exec.Command(binary, append([]string{"--port", strconv.Itoa(port)}, args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "HOME=" + t.TempDir()}, env...)
	stdout, stderr := &e2etest.Buffer{}, &e2etest.Buffer{}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopProcess(t, cmd) }) // also after a failure
	url := fmt.Sprintf("http://127.0.0.1:%d/", port)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if res, err := http.Get(url + "health"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return url, stdout, stderr, cmd
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	_ = cmd.Process.Kill()
	t.Fatalf("not ready:\n%s", stderr)
	return "", nil, nil, nil
}

// stopProcess stops cmd with SIGINT (SIGKILL after 15 s); a second call
// does nothing.
func stopProcess(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Error("process did not stop on SIGINT")
	}
}

func TestNoSecretsInLogsOrState(t *testing.T) {
	t.Run("text-embedded", func(t *testing.T) {
		t.Parallel()
		root, stateDir := t.TempDir(), t.TempDir()
		url, stdout, stderr, cmd := startLogged(t, []string{"--debug", "--log-stdout", "--state-dir", stateDir},
			[]string{"IAC_CODE_AGUI_ALLOWED_CWDS=" + root, "IAC_CODE_AGUI_AUTH_TOKEN=" + secAuthToken})
		exercise(t, &secretClient{t: t, url: url, root: root})
		stopProcess(t, cmd)
		checkLogs(t, stderr.String(), false)
		if stdout.String() != stderr.String() {
			t.Error("--log-stdout: stdout differs from stderr")
		}
		scan(t, "stdout", stdout.String())
		scanDir(t, stateDir)
	})
	t.Run("spans", func(t *testing.T) {
		t.Parallel()
		j := e2etest.StartJaeger(t)
		root, stateDir := t.TempDir(), t.TempDir()
		url, _, stderr, cmd := startLogged(t, []string{"--debug", "--state-dir", stateDir},
			[]string{"IAC_CODE_AGUI_ALLOWED_CWDS=" + root, "IAC_CODE_AGUI_AUTH_TOKEN=" + secAuthToken,
				"OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT=" + j.OTLPHTTP})
		exercise(t, &secretClient{t: t, url: url, root: root})
		// Stopping flushes the spans still queued.
		stopProcess(t, cmd)
		scan(t, "log output", stderr.String())
		runs := 0
		for _, service := range []string{"iac-code-agui", "iac-code-agui-demo-agent"} {
			raw := string(j.Raw(t, "/api/traces?service="+service+"&limit=10000&lookback=1h"))
			scan(t, service+" spans", raw)
			if service == "iac-code-agui" {
				runs = strings.Count(raw, `"operationName":"agui.run"`)
			} else if !strings.Contains(raw, `"operationName":"demo-agent SendStreamingMessage"`) {
				t.Errorf("no agent spans exported: %.300s", raw)
			}
		}
		t.Logf("%d run spans exported", runs)
		// Every behaviour's runs, the error paths' and the stalled one.
		if runs < 30 {
			t.Errorf("only %d run spans exported", runs)
		}
	})
	t.Run("json-external-agent", func(t *testing.T) {
		t.Parallel()
		root, stateDir := t.TempDir(), t.TempDir()
		agentPort := e2etest.FreePort(t)
		agent := exec.Command(binary, "demo-agent", "--host", "127.0.0.1", "--port", strconv.Itoa(agentPort))
		agent.Env = []string{"PATH=/usr/bin:/bin", "IACCODE_A2A_HTTP_TOKEN=" + secA2AToken}
		agentOut := &e2etest.Buffer{}
		agent.Stdout, agent.Stderr = agentOut, agentOut
		if err := agent.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stopProcess(t, agent) })
		// Tokens from the YAML file; the file lives outside the state
		// directory.
		cfg := filepath.Join(t.TempDir(), "agui.yaml")
		yml := fmt.Sprintf("a2a-url: http://127.0.0.1:%d/\nauth-token: %s\na2a_token: %s\nlog-format: json\ndebug: true\nstate-dir: %s\n",
			agentPort, secAuthToken, secA2AToken, stateDir)
		if err := os.WriteFile(cfg, []byte(yml), 0o600); err != nil {
			t.Fatal(err)
		}
		// The agent binds its port.
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(agentPort))
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the demo agent did not listen: %v\n%s", err, agentOut.String())
			}
		}
		url, _, stderr, cmd := startLogged(t, []string{"--config", cfg}, []string{"IAC_CODE_AGUI_ALLOWED_CWDS=" + root})
		exercise(t, &secretClient{t: t, url: url, root: root})
		stopProcess(t, cmd)
		stopProcess(t, agent)
		checkLogs(t, stderr.String(), true)
		scan(t, "demo agent output", agentOut.String())
		scanDir(t, stateDir)
	})
}

// checkLogs scans the log output and checks that it is the debug output
// it claims to be, so the scan cannot pass on an empty log.
func checkLogs(t *testing.T, logs string, jsonFormat bool) {
	t.Helper()
	scan(t, "log output", logs)
	lines := strings.Split(strings.TrimSpace(logs), "\n")
	if jsonFormat {
		for _, l := range lines {
			if !json.Valid([]byte(l)) {
				t.Fatalf("not a JSON log line: %q", l)
			}
		}
	}
	for _, want := range []string{"a2a frame", "agui events", "http request", "run started", "run ended", "req-th-stall", "AG-UI A2A adapter run failed"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log output lacks %q", want)
		}
	}
	if len(lines) < 300 {
		t.Errorf("only %d log lines", len(lines))
	}
}
