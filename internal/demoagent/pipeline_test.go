package demoagent

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// envelopes returns every pipeline envelope of a frame, batch or single.
func envelopes(ev sseEvent) []map[string]any {
	iac := iacOf(ev)
	if p, ok := iac["pipeline"].(map[string]any); ok {
		return []map[string]any{p}
	}
	if b, ok := iac["pipelineBatch"].(map[string]any); ok {
		var out []map[string]any
		for _, e := range b["events"].([]any) {
			out = append(out, e.(map[string]any))
		}
		return out
	}
	return nil
}

func eventTypes(evs []sseEvent) []string {
	var out []string
	for _, ev := range evs {
		for _, env := range envelopes(ev) {
			out = append(out, env["eventType"].(string))
		}
	}
	return out
}

func TestQuestionFlow(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("ask me a question", "ctx-q", "", cwdMeta("/w"))).all()
	last := evs[len(evs)-1]
	tid := taskIDOf(evs)
	in := iacOf(last)["input"].(map[string]any)
	if stateOf(last) != stateInputRequired || in["inputId"] != "ask-toolu_demo_ask" || in["kind"] != "ask_user_question" || in["requestTaskId"] != tid {
		t.Fatalf("question frame %s", last.raw)
	}
	if _, has := in["toolUseId"]; has {
		t.Fatalf("projection has toolUseId: %v", in)
	}
	env := envelopes(last)[0]
	if env["data"].(map[string]any)["toolUseId"] != "toolu_demo_ask" || env["input"].(map[string]any)["toolUseId"] != "toolu_demo_ask" {
		t.Fatalf("envelope %v", env)
	}
	if c, _ := errorOf(t, h.call("SubscribeToTask", map[string]any{"id": tid})); c != -32001 {
		t.Fatalf("parked question is active")
	}
	// The answer omits the task id: the context's waiting task is used.
	ans := h.stream("SendStreamingMessage", msgParams("2", "ctx-q", "", cwdMeta("/w"))).all()
	if k, _ := result(ans[0]); k == "task" || taskIDOf(ans) != tid {
		t.Fatalf("answer went to %s (first %s)", taskIDOf(ans), k)
	}
	got := envelopes(ans[0])[0]
	d := got["data"].(map[string]any)
	if got["eventType"] != "input_received" || d["selectedId"] != "vpc_ecs" || d["selectedLabel"] != "VPC with ECS" || d["answerTextLength"] != 1.0 {
		t.Fatalf("input_received %v", got)
	}
	if stateOf(ans[len(ans)-1]) != stateCompleted {
		t.Fatalf("final %s", ans[len(ans)-1].raw)
	}
	if c, msg := errorOf(t, h.call("SendStreamingMessage", msgParams("more", "ctx-q", tid, cwdMeta("/w")))); c != -32602 || msg != "Task "+tid+" is in terminal state: 3" {
		t.Fatalf("%v %q", c, msg)
	}
	// After the handoff, a message without task id is a new normal turn.
	next := h.stream("SendStreamingMessage", msgParams("Create a VPC", "ctx-q", "", cwdMeta("/w"))).all()
	if k, _ := result(next[0]); k != "task" || taskIDOf(next) == tid || stateOf(next[len(next)-1]) != stateInputRequired {
		t.Fatalf("follow-up: %s", next[0].raw)
	}
}

func TestMatchOption(t *testing.T) {
	opts := []any{map[string]any{"id": "a", "label": "Alpha"}, map[string]any{"id": "b", "label": "Beta"}}
	for in, want := range map[string][3]string{"1": {"a", "Alpha", ""}, "b": {"b", "Beta", ""}, "Alpha": {"a", "Alpha", ""}, "3": {"", "", "3"}, "my own": {"", "", "my own"}} {
		id, label, free := matchOption(in, opts)
		if [3]string{id, label, free} != want {
			t.Errorf("%q → %q %q %q", in, id, label, free)
		}
	}
}

func TestSelectionFlow(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("select a candidate", "ctx-sel", "", map[string]any{"cwd": "/w", "candidatePresentation": "rich-v1"})).all()
	last := evs[len(evs)-1]
	tid := taskIDOf(evs)
	in := iacOf(last)["input"].(map[string]any)
	env := envelopes(last)[0]
	if in["inputId"] != "input-"+env["eventId"].(string) || in["kind"] != "candidate_selection" {
		t.Fatalf("selection input %v", in)
	}
	opt := in["options"].([]any)[1].(map[string]any)
	if opt["id"] != "1" || opt["label"] != "Plan B: dual zone" || opt["totalMonthlyCost"] != "¥240" {
		t.Fatalf("option %v", opt)
	}
	again := h.stream("SendStreamingMessage", msgParams(`{"selected_candidate_index":9}`, "ctx-sel", tid, cwdMeta("/w"))).all()
	re := envelopes(again[len(again)-1])[0]
	if stateOf(again[len(again)-1]) != stateInputRequired || re["data"].(map[string]any)["validation_error"] != "invalid_candidate_selection" {
		t.Fatalf("re-ask %s", again[len(again)-1].raw)
	}
	done := h.stream("SendStreamingMessage", msgParams("plan 2", "ctx-sel", tid, cwdMeta("/w"))).all()
	d := envelopes(done[0])[0]["data"].(map[string]any)
	if d["selectedIndex"] != 1.0 || d["selectedValue"] != "Plan B: dual zone" || stateOf(done[len(done)-1]) != stateCompleted {
		t.Fatalf("selection answer %v", d)
	}
	for in, want := range map[string]int{`{"selected_evaluated_candidate_index":0}`: 0, "方案2": 1, "选 1": 0, "Plan A: single zone": 0} {
		if got, ok := pickCandidate(in, []string{"Plan A: single zone", "Plan B: dual zone"}); !ok || got != want {
			t.Errorf("%q → %d %v", in, got, ok)
		}
	}
}

func TestPipelineFullAndState(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("run the pipeline", "ctx-pl", "", map[string]any{"cwd": "/w", "pipeline_name": "selling"})).all()
	tid := taskIDOf(evs)
	var single, batch bool
	seen := map[string]int{}
	var seqs []float64
	var coalesced bool
	for _, ev := range evs[1:] {
		iac := iacOf(ev)
		if _, ok := iac["pipeline"]; ok {
			single = true
		}
		if _, ok := iac["pipelineBatch"]; ok {
			batch = true
		}
		if iac["iacCodeSessionId"] != nil || strings.Contains(ev.raw, `"message":{`) {
			t.Fatalf("pipeline frame with session id or status message: %s", ev.raw)
		}
		for _, env := range envelopes(ev) {
			seen[env["eventId"].(string)]++
			seqs = append(seqs, env["sequence"].(float64))
			if env["eventType"] == "text_delta" && env["data"].(map[string]any)["text"] == "Analysing requirements in /w." {
				coalesced = true
			}
		}
	}
	dups := 0
	for _, n := range seen {
		if n > 1 {
			dups++
		}
	}
	gap := false
	for i := 1; i < len(seqs); i++ {
		if seqs[i] > seqs[i-1]+1 {
			gap = true
		}
	}
	types := strings.Join(eventTypes(evs), ",")
	for _, want := range []string{"pipeline_started", "step_started", "message_started", "thinking_delta", "tool_started", "tool_result", "usage",
		"context_usage", "pipeline_progress", "candidate_started", "candidate_step_started", "candidate_step_completed", "stack_progress",
		"candidate_completed", "step_completed", "pipeline_completed", "backup_committed", "pipeline_handoff_ready"} {
		if !strings.Contains(types, want) {
			t.Errorf("missing %s", want)
		}
	}
	if !single || !batch || dups != 1 || !gap || !coalesced || stateOf(evs[len(evs)-1]) != stateCompleted {
		t.Fatalf("single=%v batch=%v dups=%d gap=%v coalesced=%v final=%s", single, batch, dups, gap, coalesced, stateOf(evs[len(evs)-1]))
	}
	if !strings.Contains(evs[1].raw, `"sequence":1.0`) {
		t.Fatalf("sequence not a double: %s", evs[1].raw)
	}
	// State endpoint: journal as plain JSON integers, afterSequence filters.
	code, st := h.get("/iac-code/pipeline/state?taskId=" + tid + "&afterSequence=0")
	snap := st["snapshot"].(map[string]any)
	events := st["events"].([]any)
	last := snap["lastSequence"].(float64)
	if code != 200 || snap["schemaVersion"] != "1.1" || snap["status"] != "completed" || snap["taskId"] != tid || int(last) != len(events) {
		t.Fatalf("state %d %v (events %d)", code, snap, len(events))
	}
	code, st = h.get("/iac-code/pipeline/state?contextId=ctx-pl&afterSequence=" + itoa(int(last)-2))
	if got := st["events"].([]any); code != 200 || len(got) != 2 || got[0].(map[string]any)["sequence"] != last-1 {
		t.Fatalf("after last-2: %d %v", code, got)
	}
	if _, st = h.get("/iac-code/pipeline/state?taskId=" + tid); len(st["events"].([]any)) != 0 {
		t.Fatalf("default afterSequence = lastSequence")
	}
	for path, want := range map[string]struct {
		code int
		err  string
	}{
		"/iac-code/pipeline/state":                                                   {400, "contextId or taskId is required"},
		"/iac-code/pipeline/state?taskId=x&afterSequence=-1":                         {400, "afterSequence must be a non-negative integer"},
		"/iac-code/pipeline/state?taskId=x&afterSequence=1.5":                        {400, "afterSequence must be a non-negative integer"},
		"/iac-code/pipeline/state?taskId=x&afterSequence=" + strings.Repeat("1", 21): {400, "afterSequence must be a non-negative integer"},
		"/iac-code/pipeline/state?taskId=nope":                                       {404, "A2A pipeline state not found"},
		"/iac-code/pipeline/state?taskId=" + tid + "&contextId=other":                {404, "A2A task/context mismatch"},
	} {
		if code, body := h.get(path); code != want.code || body["error"] != want.err {
			t.Errorf("%s: %d %v", path, code, body)
		}
	}
}

func TestPipelineParentPermission(t *testing.T) {
	h := newHarness(t, Options{})
	s := h.stream("SendStreamingMessage", msgParams("pipeline permission", "ctx-pp", "", cwdMeta("/w")))
	evs := s.until(stateInputRequired)
	tid := taskIDOf(evs)
	env := envelopes(evs[len(evs)-1])[0]
	in := iacOf(evs[len(evs)-1])["input"].(map[string]any)
	if env["eventType"] != "permission_requested" || env["status"] != "input_required" || env["permission"].(map[string]any)["permissionId"] != "perm-toolu_pipe_deploy" {
		t.Fatalf("envelope %v", env)
	}
	keys := []string{}
	for k := range in {
		keys = append(keys, k)
	}
	if len(keys) != 17 {
		t.Fatalf("projection keys %v", keys)
	}
	r := h.stream("SendStreamingMessage", permParams(tid, "ctx-pp", permPart(reply(tid, in["inputId"].(string), "toolu_pipe_deploy", "allow_once")))).all()
	if len(r) != 1 || iacOf(r[0])["inputReceived"] == nil {
		t.Fatalf("reply stream %d", len(r))
	}
	rest := s.all()
	types := strings.Join(eventTypes(rest), ",")
	if !strings.HasPrefix(types, "permission_resolved,tool_result,step_completed,pipeline_completed") || stateOf(rest[len(rest)-1]) != stateCompleted {
		t.Fatalf("after allow: %s", types)
	}
}

func TestSidebandPermissionAndBackupNotReady(t *testing.T) {
	h := newHarness(t, Options{})
	s := h.stream("SendStreamingMessage", msgParams("sideband backup not ready", "ctx-sb", "", cwdMeta("/w")))
	var in map[string]any
	var tid string
	for in == nil {
		ev, ok := s.next()
		if !ok {
			t.Fatal("stream ended before the sideband input")
		}
		tid = taskIDOf([]sseEvent{ev})
		if x, ok := iacOf(ev)["input"].(map[string]any); ok {
			in = x
			if stateOf(ev) != stateWorking {
				t.Fatalf("sideband frame state %s", stateOf(ev))
			}
		}
	}
	if in["scope"] != "candidate" || in["subPipelineId"] != "cand-1" {
		t.Fatalf("projection %v", in)
	}
	task := h.call("GetTask", map[string]any{"id": tid})["result"].(map[string]any)
	pend, _ := task["metadata"].(map[string]any)["iac_code"].(map[string]any)["pendingPermissions"].([]any)
	// pendingPermissions lists permission envelopes (upstream.md §4.1).
	if len(pend) != 1 || pend[0].(map[string]any)["inputId"] != in["inputId"] || pend[0].(map[string]any)["required"] != true {
		t.Fatalf("pendingPermissions %v", task["metadata"])
	}
	// ensure-restored: 409 once, then restored; unknown session 404.
	sid := task["metadata"].(map[string]any)["iac_code"].(map[string]any)["iacCodeSessionId"].(string)
	for i, want := range []int{409, 200} {
		code, body := h.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": sid, "taskId": tid})
		if code != want || (i == 0 && body["error"].(map[string]any)["code"] != "SESSION_BACKUP_NOT_READY") || (i == 0 && body["error"].(map[string]any)["retryable"] != true) || (i == 1 && body["status"] != "restored") {
			t.Fatalf("ensure-restored #%d: %d %v", i, code, body)
		}
	}
	if code, body := h.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": sid, "taskId": tid}); code != 200 || body["status"] != "current" {
		t.Fatalf("current: %d %v", code, body)
	}
	if code, _ := h.postJSON("/iac-code/session/ensure-restored", map[string]any{"cwd": "/w", "sessionId": "nope"}); code != 404 {
		t.Fatalf("unknown session %d", code)
	}
	rp := permParams(tid, "ctx-sb", permPart(reply(tid, in["inputId"].(string), "toolu_cand_bash", "allow_once")))
	m := h.call("SendMessage", rp)
	e := m["error"].(map[string]any)
	if d, ok := e["data"].(map[string]any); !ok || d["code"] != "SESSION_BACKUP_NOT_READY" || d["retryable"] != true {
		t.Fatalf("backup error %v", m)
	}
	ack := h.call("SendMessage", rp)["result"].(map[string]any)["message"].(map[string]any)
	var data map[string]any
	_ = json.Unmarshal(mustJSON(ack["parts"].([]any)[0].(map[string]any)["data"]), &data)
	if !strings.HasPrefix(ack["messageId"].(string), "permission-ack-") || data["kind"] != "permission_ack" || data["accepted"] != true ||
		data["decision"] != "allow_once" || data["inputId"] != in["inputId"] {
		t.Fatalf("ack %v", ack)
	}
	rest := s.all()
	types := strings.Join(eventTypes(rest), ",")
	if !strings.Contains(types, "permission_resolved") || stateOf(rest[len(rest)-1]) != stateCompleted {
		t.Fatalf("after sideband: %s", types)
	}
	for _, ev := range rest {
		if iacOf(ev)["inputReceived"] != nil {
			t.Fatalf("sideband produced inputReceived")
		}
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func (h *harness) postJSON(path string, body any) (int, map[string]any) {
	h.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, strings.TrimSuffix(h.srv.URL, "/")+path, bytes.NewReader(mustJSON(body)))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}
