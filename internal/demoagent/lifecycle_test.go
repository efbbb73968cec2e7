package demoagent

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func permPart(data map[string]any) map[string]any {
	b, _ := json.Marshal(data)
	return map[string]any{"data": json.RawMessage(b), "mediaType": "application/json"}
}

func permParams(taskID, contextID string, parts ...any) map[string]any {
	return map[string]any{"message": map[string]any{"messageId": "reply-" + taskID, "role": "ROLE_USER",
		"taskId": taskID, "contextId": contextID, "parts": parts}}
}

func reply(tid, inputID, tu, decision string) map[string]any {
	return map[string]any{"schemaVersion": 1, "kind": "permission", "requestTaskId": tid, "inputId": inputID, "toolUseId": tu, "decision": decision}
}

func TestPermissionAllow(t *testing.T) {
	h := newHarness(t, Options{})
	s := h.stream("SendStreamingMessage", msgParams("run with permission", "ctx-p", "", cwdMeta("/srv/p")))
	evs := s.until(stateInputRequired)
	tid := taskIDOf(evs)
	iac := iacOf(evs[len(evs)-1])
	in := iac["input"].(map[string]any)
	inputID := in["inputId"].(string)
	if len(inputID) != len("permission-")+32 || !strings.HasPrefix(inputID, "permission-") || in["requestTaskId"] != tid ||
		in["contextId"] != "ctx-p" || in["toolUseId"] != "toolu_demo_bash" || in["prompt"] != "Run a local shell command Allow once?" ||
		in["schemaVersion"] != 1.0 || in["required"] != true || in["effect"] != "local_execution" {
		t.Fatalf("input %v", in)
	}
	if p := iac["permission"].(map[string]any); p["pending"] != true || p["autoApproved"] != false || p["toolName"] != "bash" {
		t.Fatalf("permission %v", p)
	}
	if !strings.Contains(evs[len(evs)-1].raw, `"schemaVersion":1.0`) {
		t.Fatalf("schemaVersion not a double: %s", evs[len(evs)-1].raw)
	}
	// Validation (upstream.md §4.2).
	good := reply(tid, inputID, "toolu_demo_bash", "allow_once")
	extra := reply(tid, inputID, "toolu_demo_bash", "allow_once")
	extra["note"] = "x"
	for _, tc := range []struct {
		params map[string]any
		msg    string
	}{
		{permParams(tid, "ctx-p", permPart(good), map[string]any{"text": "hi"}), errPermPart},
		{permParams(tid, "ctx-p", map[string]any{"data": good}), errPermPart},
		{permParams(tid, "ctx-p", permPart(extra)), errPermFields},
		{permParams(tid, "ctx-p", permPart(reply(tid, inputID, "toolu_demo_bash", "allow"))), errPermDecision},
		{permParams("other-task", "ctx-p", permPart(good)), errPermTask},
		{permParams(tid, "ctx-p", permPart(reply(tid, "permission-0000", "toolu_demo_bash", "deny"))), errPermStale},
		{permParams(tid, "ctx-p", permPart(reply(tid, inputID, "toolu_other", "deny"))), errPermMismatch},
	} {
		m := h.call("SendStreamingMessage", tc.params)
		if c, msg := errorOf(t, m); c != -32602 || msg != tc.msg {
			t.Errorf("want %q, got %v %q", tc.msg, c, msg)
		}
	}
	r := h.stream("SendStreamingMessage", permParams(tid, "ctx-p", permPart(good))).all()
	if len(r) != 1 || stateOf(r[0]) != stateWorking {
		t.Fatalf("reply stream: %d frames", len(r))
	}
	ir := iacOf(r[0])["inputReceived"].(map[string]any)
	if ir["kind"] != "permission" || ir["inputId"] != inputID || ir["decision"] != "allow_once" || iacOf(r[0])["iacCodeSessionId"] != nil {
		t.Fatalf("inputReceived %s", r[0].raw)
	}
	rest := s.all()
	var sawTool bool
	for _, ev := range rest {
		if tl, ok := iacOf(ev)["tool"].(map[string]any); ok && tl["status"] == "completed" && tl["result"] == "/srv/p\n" {
			sawTool = true
		}
	}
	if !sawTool || stateOf(rest[len(rest)-1]) != stateInputRequired || iacOf(rest[len(rest)-1])["input"] != nil {
		t.Fatalf("original stream after allow: tool %v, %d frames", sawTool, len(rest))
	}
	// A second answer is stale.
	m := h.call("SendStreamingMessage", permParams(tid, "ctx-p", permPart(good)))
	if c, msg := errorOf(t, m); c != -32602 || msg != errPermStale {
		t.Fatalf("second answer %v %q", c, msg)
	}
}

func TestPermissionDenyAfterDisconnect(t *testing.T) {
	h := newHarness(t, Options{StepDelay: 30 * time.Millisecond})
	s := h.stream("SendStreamingMessage", msgParams("permission please", "ctx-d", "", map[string]any{"cwd": "/srv/d", "preferredLanguage": "es"}))
	evs := s.until(stateInputRequired)
	s.close() // the client goes away; the task keeps waiting
	tid := taskIDOf(evs)
	in := iacOf(evs[len(evs)-1])["input"].(map[string]any)
	if in["prompt"] != "Ejecutar un comando de shell local ¿Permitir una vez?" || in["language"] != "es" {
		t.Fatalf("es prompt %v", in["prompt"])
	}
	sub := h.stream("SubscribeToTask", map[string]any{"id": tid}).all()
	if len(sub) != 1 || stateOf(sub[0]) != stateInputRequired {
		t.Fatalf("subscribe while waiting: %d frames", len(sub))
	}
	if k, task := result(sub[0]); k != "task" || task["metadata"].(map[string]any)["iac_code"].(map[string]any)["input"] == nil {
		t.Fatalf("subscribe task frame %s", sub[0].raw)
	}
	res := h.call("SendMessage", permParams(tid, "ctx-d", permPart(reply(tid, in["inputId"].(string), "toolu_demo_bash", "deny"))))
	if st := res["result"].(map[string]any)["task"].(map[string]any)["status"].(map[string]any)["state"]; st != stateWorking {
		t.Fatalf("SendMessage reply result %v", res)
	}
	rest := h.stream("SubscribeToTask", map[string]any{"id": tid}).all()
	var denied bool
	for _, ev := range rest {
		if tl, ok := iacOf(ev)["tool"].(map[string]any); ok && tl["status"] == "failed" && tl["result"] == "Permission denied by user." {
			denied = true
		}
	}
	if k, _ := result(rest[0]); k != "task" || !denied || stateOf(rest[len(rest)-1]) != stateInputRequired {
		t.Fatalf("subscribe after deny: denied=%v frames=%d", denied, len(rest))
	}
}

func TestSubscribeCancelGet(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("Create a VPC template", "ctx-s", "", cwdMeta("/w"))).all()
	tid := taskIDOf(evs)
	resp := h.post("SubscribeToTask", map[string]any{"id": tid})
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	resp.Body.Close()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		t.Fatalf("subscribe inactive content type %q", resp.Header.Get("Content-Type"))
	}
	if c, msg := errorOf(t, m); c != -32001 || msg != "Task "+tid+" is not active" {
		t.Fatalf("%v %q", c, msg)
	}
	if c, msg := errorOf(t, h.call("CancelTask", map[string]any{"id": tid})); c != -32002 || msg != "Task cannot be canceled" {
		t.Fatalf("cancel finished: %v %q", c, msg)
	}
	task := h.call("GetTask", map[string]any{"id": tid, "historyLength": 2})["result"].(map[string]any)
	if hist := task["history"].([]any); len(hist) != 2 || hist[1].(map[string]any)["messageId"] != tid+"-2" {
		t.Fatalf("history(2) %v", hist)
	}
	full := h.call("GetTask", map[string]any{"id": tid})["result"].(map[string]any)
	// user echo + 5 replaced deltas + the replaced assistantFinal message
	if hist := full["history"].([]any); len(hist) != 7 || hist[0].(map[string]any)["role"] != "ROLE_USER" {
		t.Fatalf("full history %d", len(hist))
	}
	iac := full["metadata"].(map[string]any)["iac_code"].(map[string]any)
	if iac["iacCodeSessionId"] == "" || full["status"].(map[string]any)["state"] != stateInputRequired || len(full["artifacts"].([]any)) != 1 {
		t.Fatalf("task %v", full)
	}
	// Active task: subscriber and original stream both see CANCELED.
	s := h.stream("SendStreamingMessage", msgParams("cancel me", "ctx-s", "", cwdMeta("/w")))
	first := s.until(stateWorking)
	ctid := taskIDOf(first)
	sub := h.stream("SubscribeToTask", map[string]any{"id": ctid})
	if ev, _ := sub.next(); stateOf(ev) != stateWorking {
		t.Fatalf("subscribe first frame %s", ev.raw)
	}
	res := h.call("CancelTask", map[string]any{"id": ctid})["result"].(map[string]any)
	if res["status"].(map[string]any)["state"] != stateCanceled {
		t.Fatalf("cancel result %v", res)
	}
	for name, st := range map[string]*stream{"original": s, "subscriber": sub} {
		rest := st.all()
		last := rest[len(rest)-1]
		if _, tx := textOf(last); stateOf(last) != stateCanceled || tx != "Task canceled." {
			t.Fatalf("%s last frame %s", name, last.raw)
		}
	}
	if c, msg := errorOf(t, h.call("SendStreamingMessage", msgParams("more", "ctx-s", ctid, cwdMeta("/w")))); c != -32602 || msg != "Task "+ctid+" is in terminal state: 5" {
		t.Fatalf("message to canceled: %v %q", c, msg)
	}
}

func TestSlowThenCancel(t *testing.T) {
	h := newHarness(t, Options{})
	s := h.stream("SendStreamingMessage", msgParams("be slow", "ctx-slow", "", cwdMeta("/w")))
	evs := s.until(stateWorking)
	ev, _ := s.next()
	if _, tx := textOf(ev); tx != "Step 1 of 8. " {
		t.Fatalf("first slow delta %s", ev.raw)
	}
	h.call("CancelTask", map[string]any{"id": taskIDOf(evs)})
	rest := s.all()
	if stateOf(rest[len(rest)-1]) != stateCanceled || len(rest) > 2 {
		t.Fatalf("slow after cancel: %d frames", len(rest))
	}
}

func TestLLMHeadersBinding(t *testing.T) {
	h := newHarness(t, Options{})
	send := func(iac map[string]any) {
		iac["cwd"] = "/w"
		h.stream("SendStreamingMessage", msgParams("hello", "ctx-h", "", iac)).all()
	}
	headers := h.srv.Agent.contextHeaders
	send(map[string]any{"llm_headers": map[string]any{"X-Tenant": "t1", "Authorization": "Bearer llm-secret"}})
	if got := headers("ctx-h"); len(got) != 2 || got["X-Tenant"] != "t1" {
		t.Fatalf("bound %v", got)
	}
	send(map[string]any{})
	if got := headers("ctx-h"); len(got) != 2 {
		t.Fatalf("inherit %v", got)
	}
	send(map[string]any{"llm_headers": map[string]any{"X-Other": "o"}})
	if got := headers("ctx-h"); len(got) != 1 || got["X-Other"] != "o" {
		t.Fatalf("replace %v", got)
	}
	send(map[string]any{"llm_headers": map[string]any{}})
	if got := headers("ctx-h"); got != nil {
		t.Fatalf("clear %v", got)
	}
}

func TestListTasks(t *testing.T) {
	h := newHarness(t, Options{})
	evs := h.stream("SendStreamingMessage", msgParams("Create a VPC", "ctx-l", "", cwdMeta("/w"))).all()
	h.stream("SendStreamingMessage", msgParams("Create a VPC", "ctx-other", "", cwdMeta("/w"))).all()
	res := h.call("ListTasks", map[string]any{"contextId": "ctx-l"})["result"].(map[string]any)
	tasks := res["tasks"].([]any)
	if res["totalSize"] != 1.0 || len(tasks) != 1 || tasks[0].(map[string]any)["id"] != taskIDOf(evs) || tasks[0].(map[string]any)["history"] != nil {
		t.Fatalf("ListTasks %v", res)
	}
}
