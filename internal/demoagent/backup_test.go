package demoagent

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Two agents share one backup directory (backup.go), as two iac-code
// replicas share IAC_CODE_CONFIG_BACKUP_DIR.

const (
	llmSecret  = "llm-header-secret-value"
	userMarker = "zebra-marker-7"
)

func backupPair(t *testing.T) (dir string, a, b *harness) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "backup")
	return dir, newHarness(t, Options{BackupDir: dir}), newHarness(t, Options{BackupDir: dir})
}

func sessionOf(task map[string]any) string {
	return task["metadata"].(map[string]any)["iac_code"].(map[string]any)["iacCodeSessionId"].(string)
}

func (h *harness) getTask(tid string) map[string]any {
	h.t.Helper()
	return h.call("GetTask", map[string]any{"id": tid, "historyLength": 100})
}

// rawTask is the GetTask answer without history, as bytes.
func (h *harness) rawTask(tid string) string {
	h.t.Helper()
	resp := h.raw([]byte(`{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"`+tid+`","historyLength":0}}`), map[string]string{"A2A-Version": "1.0"})
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// assertBackupClean checks modes and that no secret or user text was
// written.
func assertBackupClean(t *testing.T, dir string) {
	t.Helper()
	fi, err := os.Stat(dir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("backup dir: %v %v", fi.Mode(), err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) == 0 {
		t.Fatal("nothing backed up")
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		info, _ := e.Info()
		if strings.HasPrefix(e.Name(), ".") || !strings.HasSuffix(e.Name(), ".json") || info.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v (want a 0600 .json file, no temporary left)", e.Name(), info.Mode())
		}
		raw, _ := os.ReadFile(p)
		for _, bad := range []string{llmSecret, userMarker, testToken, "ROLE_USER", "history"} {
			if strings.Contains(string(raw), bad) {
				t.Errorf("%s contains %q", e.Name(), bad)
			}
		}
	}
}

// TestBackupQuestionContinuesOnAnotherAgent: a pipeline question raised on
// agent A is restored on agent B with the same task, input and journal, and
// B's answer completes the pipeline as A's would have.
func TestBackupQuestionContinuesOnAnotherAgent(t *testing.T) {
	dir, a, b := backupPair(t)
	iac := map[string]any{"cwd": "/w", "llm_headers": map[string]any{"X-Llm-Key": llmSecret}}
	evs := a.stream("SendStreamingMessage", msgParams("ask me a question about "+userMarker, "ctx-bk", "", iac)).all()
	tid := taskIDOf(evs)
	onA := a.getTask(tid)["result"].(map[string]any)
	rawA := a.rawTask(tid)
	sid := sessionOf(onA)
	_, stateA := a.get("/iac-code/pipeline/state?taskId=" + tid)
	if err := a.srv.Close(); err != nil {
		t.Fatal(err)
	}

	// B knows nothing until the session is restored.
	if c, _ := errorOf(t, b.getTask(tid)); c != -32001 {
		t.Fatalf("GetTask before restore: %v", c)
	}
	if code, body := b.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/elsewhere", "sessionId": sid, "taskId": tid}); code != 404 ||
		body["error"].(map[string]any)["code"] != "SESSION_NOT_FOUND" {
		t.Fatalf("other cwd: %d %v", code, body)
	}
	for i, want := range []string{"restored", "current"} {
		code, body := b.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": sid, "taskId": tid})
		if code != 200 || len(body) != 1 || body["status"] != want {
			t.Fatalf("ensure-restored #%d: %d %v", i, code, body)
		}
	}
	onB := b.getTask(tid)["result"].(map[string]any)
	if onB["id"] != tid || onB["contextId"] != "ctx-bk" || !reflect.DeepEqual(onB["status"], onA["status"]) || !reflect.DeepEqual(onB["metadata"], onA["metadata"]) {
		t.Fatalf("restored task\n%v\nwant\n%v", onB, onA)
	}
	// Byte for byte: the numbers keep their protobuf double form (1.0).
	if rawB := b.rawTask(tid); rawB != rawA || !strings.Contains(rawB, `"schemaVersion":1.0`) {
		t.Fatalf("restored GetTask\n%s\nwant\n%s", rawB, rawA)
	}
	in := onB["metadata"].(map[string]any)["iac_code"].(map[string]any)["input"].(map[string]any)
	if onB["status"].(map[string]any)["state"] != stateInputRequired || in["inputId"] != "ask-toolu_demo_ask" || in["requestTaskId"] != tid {
		t.Fatalf("restored wait %v", onB)
	}
	_, stateB := b.get("/iac-code/pipeline/state?taskId=" + tid)
	for _, m := range []map[string]any{stateA, stateB} {
		delete(m["snapshot"].(map[string]any), "generatedAt")
	}
	if !reflect.DeepEqual(stateA, stateB) {
		t.Fatalf("pipeline state\n%v\nwant\n%v", stateB, stateA)
	}

	ans := b.stream("SendStreamingMessage", msgParams("2", "ctx-bk", tid, cwdMeta("/w"))).all()
	if got := strings.Join(eventTypes(ans), ","); got != "input_received,step_completed,pipeline_completed,backup_committed,pipeline_handoff_ready,backup_committed" {
		t.Fatalf("after the answer: %s", got)
	}
	first := envelopes(ans[0])[0]
	last := stateA["snapshot"].(map[string]any)["lastSequence"].(float64)
	if first["sequence"] != last+1 || first["data"].(map[string]any)["selectedId"] != "vpc_ecs" || first["taskId"] != tid || first["iacCodeSessionId"] != sid {
		t.Fatalf("input_received %v (last sequence %v)", first, last)
	}
	if stateOf(ans[len(ans)-1]) != stateCompleted {
		t.Fatalf("final %s", ans[len(ans)-1].raw)
	}
	assertBackupClean(t, dir)

	// The completion was written too: a third agent restores a finished task.
	c := newHarness(t, Options{BackupDir: dir})
	if code, body := c.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": sid, "taskId": tid}); code != 200 || body["status"] != "restored" {
		t.Fatalf("third agent: %d %v", code, body)
	}
	if st := c.getTask(tid)["result"].(map[string]any)["status"].(map[string]any)["state"]; st != stateCompleted {
		t.Fatalf("third agent state %v", st)
	}
	if m := c.call("SendStreamingMessage", msgParams("3", "ctx-bk", tid, cwdMeta("/w"))); m["error"].(map[string]any)["message"] != "Task "+tid+" is in terminal state: 3" {
		t.Fatalf("answer to a finished task %v", m)
	}
}

// TestBackupNormalPermissionIsLost: a normal-mode permission wait lives in
// its agent's memory only; the session comes back on B, the task does not.
func TestBackupNormalPermissionIsLost(t *testing.T) {
	dir, a, b := backupPair(t)
	s := a.stream("SendStreamingMessage", msgParams("permission please "+userMarker, "ctx-np", "", map[string]any{"cwd": "/w", "llm_headers": map[string]any{"X-Llm-Key": llmSecret}}))
	evs := s.until(stateInputRequired)
	tid := taskIDOf(evs)
	sid := iacOf(evs[len(evs)-1])["iacCodeSessionId"].(string)
	_ = a.srv.Close()
	s.close()
	if code, body := b.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": sid, "taskId": tid}); code != 200 || body["status"] != "restored" {
		t.Fatalf("ensure-restored: %d %v", code, body)
	}
	if c, msg := errorOf(t, b.getTask(tid)); c != -32001 || msg != "Task not found" {
		t.Fatalf("GetTask on B: %v %q", c, msg)
	}
	assertBackupClean(t, dir)
}

// TestBackupPipelinePermissionContinues: a parent-scope pipeline
// permission is restored holding its wait; the reply on B resumes it.
func TestBackupPipelinePermissionContinues(t *testing.T) {
	_, a, b := backupPair(t)
	s := a.stream("SendStreamingMessage", msgParams("pipeline permission", "ctx-bpp", "", cwdMeta("/w")))
	evs := s.until(stateInputRequired)
	tid := taskIDOf(evs)
	in := iacOf(evs[len(evs)-1])["input"].(map[string]any)
	sid := envelopes(evs[len(evs)-1])[0]["iacCodeSessionId"].(string)
	_ = a.srv.Close()
	s.close()
	if code, body := b.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": sid, "taskId": tid}); code != 200 || body["status"] != "restored" {
		t.Fatalf("ensure-restored: %d %v", code, body)
	}
	task := b.getTask(tid)["result"].(map[string]any)
	if got := task["metadata"].(map[string]any)["iac_code"].(map[string]any)["input"].(map[string]any)["inputId"]; got != in["inputId"] {
		t.Fatalf("restored input %v, want %v", got, in["inputId"])
	}
	r := b.stream("SendStreamingMessage", permParams(tid, "ctx-bpp", permPart(reply(tid, in["inputId"].(string), "toolu_pipe_deploy", "allow_once")))).all()
	if len(r) != 1 || iacOf(r[0])["inputReceived"] == nil {
		t.Fatalf("reply stream %d", len(r))
	}
	rest := b.stream("SubscribeToTask", map[string]any{"id": tid}).all()
	if got := strings.Join(eventTypes(rest), ","); !strings.HasPrefix(got, "permission_resolved,tool_result,step_completed,pipeline_completed") || stateOf(rest[len(rest)-1]) != stateCompleted {
		t.Fatalf("after allow: %s", got)
	}
}

// TestBackupDeploymentKeepsAdjustedParameters: the parameters of an
// adjusted deployment confirmation survive the move to another agent.
func TestBackupDeploymentKeepsAdjustedParameters(t *testing.T) {
	_, a, b := backupPair(t)
	evs := a.stream("SendStreamingMessage", msgParams("deploy the VPC", "ctx-bd", "", cwdMeta("/w"))).all()
	tid := taskIDOf(evs)
	again := a.stream("SendStreamingMessage", msgParams(`{"action":"adjust","parameter_overrides":{"InstanceType":"ecs.g8.large","Count":2}}`, "ctx-bd", tid, cwdMeta("/w"))).all()
	in, _ := deployInput(t, again[len(again)-1])
	_ = a.srv.Close()
	// A message naming the context restores it too (no ensure-restored).
	done := b.stream("SendStreamingMessage", msgParams("confirm", "ctx-bd", tid, cwdMeta("/w"))).all()
	if got := strings.Join(eventTypes(done), ","); !strings.HasPrefix(got, "input_received,step_completed,step_started,stack_progress") || stateOf(done[len(done)-1]) != stateCompleted {
		t.Fatalf("after confirm: %s", got)
	}
	params := in["deploymentSummary"].(map[string]any)["parameters"].(map[string]any)
	if params["InstanceType"] != "ecs.g8.large" || params["Count"] != 2.0 {
		t.Fatalf("asked with %v", params)
	}
}

// TestBackupRefusesBadSessionIDs: the session id names a file; anything but
// a canonical UUID is simply unknown.
func TestBackupRefusesBadSessionIDs(t *testing.T) {
	dir, _, b := backupPair(t)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "x.json"), []byte(`{"version":1}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, sid := range []string{"../x", "X", sessionFor("ctx-none"), strings.ToUpper(sessionFor("ctx-none"))} {
		if code, _ := b.postJSON("/iac-code/session/ensure-restored", map[string]any{"sessionId": sid}); code != 404 {
			t.Fatalf("%q: %d", sid, code)
		}
	}
}
