package a2a_test

// Integration tests: the client against the embedded demo agent over real
// loopback HTTP, for every method and behaviour of upstream.md that the
// adapter relies on (issue 3). Expected values come from the spec and the
// demo agent's documented script (docs/demo-agent.md).

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
)

// pipelineEnvelopes returns the envelopes of a frame (pipeline or batch)
// and which key carried them.
func pipelineEnvelopes(ev *a2a.Event) ([]map[string]any, string) {
	iac := ev.IacCode()
	if p, ok := iac["pipeline"].(map[string]any); ok {
		return []map[string]any{p}, "pipeline"
	}
	b, _ := iac["pipelineBatch"].(map[string]any)
	if b == nil {
		return nil, ""
	}
	var out []map[string]any
	for _, x := range b["events"].([]any) {
		out = append(out, x.(map[string]any))
	}
	return out, "pipelineBatch"
}

func TestAgentPipelineStreamAndState(t *testing.T) {
	e := newEnv(t)
	evs := drainOK(t, e.stream(t, e.msg("run the pipeline")))
	tid := evs[0].TaskID
	keys := map[string]int{}
	seen := map[string]bool{}
	var types []string
	dup, gap := false, false
	var maxSeq int64
	for _, ev := range evs[1:] {
		envs, key := pipelineEnvelopes(ev)
		keys[key]++
		if b, ok := ev.IacCode()["pipelineBatch"].(map[string]any); ok && (b["schemaVersion"] != "1.0" || b["extensionUri"] != "urn:iac-code:a2a:pipeline-events:v1") {
			t.Fatalf("batch header = %#v", b)
		}
		for _, env := range envs {
			seq, ok := a2a.Int(env["sequence"])
			if !ok {
				t.Fatalf("sequence %#v is not integral", env["sequence"])
			}
			id := env["eventId"].(string)
			dup = dup || seen[id]
			seen[id] = true
			gap = gap || seq > maxSeq+1
			maxSeq = max(maxSeq, seq)
			types = append(types, env["eventType"].(string))
		}
	}
	last := evs[len(evs)-1]
	if keys["pipeline"] == 0 || keys["pipelineBatch"] == 0 || keys[""] != 0 || !dup || !gap || last.State() != a2a.StateCompleted {
		t.Fatalf("frames by key %v, duplicate %v, gap %v, last state %s", keys, dup, gap, last.State())
	}
	if tail := strings.Join(types[len(types)-4:], " "); tail != "pipeline_completed backup_committed pipeline_handoff_ready backup_committed" {
		t.Fatalf("last envelopes = %s", tail)
	}
	// Recovery: the journal after afterSequence, plain JSON integers.
	ps, err := e.c.PipelineState(e.ctx, tid, 0)
	if err != nil {
		t.Fatal(err)
	}
	lastSeq, _ := a2a.Int(ps.Snapshot["lastSequence"])
	if ps.Snapshot["schemaVersion"] != "1.1" || ps.Snapshot["taskId"] != tid || lastSeq != maxSeq || int64(len(ps.Events)) != maxSeq {
		t.Fatalf("snapshot lastSequence %d (live max %d), %d journal events", lastSeq, maxSeq, len(ps.Events))
	}
	hidden := 0
	for i, ev := range ps.Events {
		if s, _ := a2a.Int(ev["sequence"]); s != int64(i+1) {
			t.Fatalf("journal event %d has sequence %v", i, ev["sequence"])
		}
		if ev["visibility"] == "pending_backup" {
			hidden++
		}
	}
	if hidden != 1 {
		t.Fatalf("pending_backup journal events = %d, want 1", hidden)
	}
	after, err := e.c.PipelineState(e.ctx, tid, maxSeq-3)
	if err != nil || len(after.Events) != 3 {
		t.Fatalf("afterSequence %d: %d events, %v", maxSeq-3, len(after.Events), err)
	}
	if s, _ := a2a.Int(after.Events[0]["sequence"]); s != maxSeq-2 {
		t.Fatalf("first event after %d has sequence %d", maxSeq-3, s)
	}
	if def, err := e.c.PipelineState(e.ctx, tid, -1); err != nil || len(def.Events) != 0 {
		t.Fatalf("default afterSequence: %+v, %v; want no events", def, err)
	}
	if _, err := e.c.PipelineState(e.ctx, "no-such-task", -1); !errors.Is(err, a2a.ErrNotFound) {
		t.Fatalf("unknown task: %v, want ErrNotFound", err)
	}
}

func TestAgentQuestionAnsweredByText(t *testing.T) {
	e := newEnv(t)
	evs := drainOK(t, e.stream(t, e.msg("ask me a question")))
	task, last := evs[0], evs[len(evs)-1]
	proj, _ := last.IacCode()["input"].(map[string]any)
	if last.State() != a2a.StateInputRequired || proj["kind"] != "ask_user_question" || proj["inputId"] != "ask-toolu_demo_ask" ||
		proj["toolUseId"] != nil || proj["requestTaskId"] != task.TaskID {
		t.Fatalf("question frame: state %s, input %#v", last.State(), proj)
	}
	// The stream ended, so the parked task is not active.
	_, err := e.c.SubscribeToTask(e.ctx, task.TaskID)
	wantRPC(t, err, a2a.CodeTaskNotFound, "Task "+task.TaskID+" is not active")
	p := e.msg("2")
	p.TaskID, p.ContextID = task.TaskID, task.ContextID
	evs = drainOK(t, e.stream(t, p))
	envs, _ := pipelineEnvelopes(evs[0])
	data, _ := envs[0]["data"].(map[string]any)
	if envs[0]["eventType"] != "input_received" || data["selectedId"] != "vpc_ecs" || data["selectedLabel"] != "VPC with ECS" {
		t.Fatalf("first frame after the answer = %#v", envs[0])
	}
	if evs[len(evs)-1].State() != a2a.StateCompleted {
		t.Fatalf("answered question ended in %s", evs[len(evs)-1].State())
	}
	_, err = e.c.SendMessage(e.ctx, p)
	wantRPC(t, err, a2a.CodeInvalidParams, "Task "+task.TaskID+" is in terminal state")
}

func TestAgentSidebandPermission(t *testing.T) {
	e := newEnv(t)
	st := e.stream(t, e.msg("sideband; backup not ready"))
	evs := until(t, st, hasInput)
	ev := evs[len(evs)-1]
	input, _ := ev.IacCode()["input"].(map[string]any)
	if ev.State() != a2a.StateWorking || input["kind"] != "permission" || input["scope"] != "candidate" {
		t.Fatalf("candidate permission frame: state %s input %#v", ev.State(), input)
	}
	got, err := e.c.GetTask(e.ctx, ev.TaskID, 0)
	if pend, _ := got.IacCode()["pendingPermissions"].([]any); err != nil || len(pend) != 1 {
		t.Fatalf("GetTask pendingPermissions = %#v, %v", got.IacCode()["pendingPermissions"], err)
	}
	// The armed fault: one JSON-RPC error with object data.
	_, err = e.c.SendMessage(e.ctx, permReply(ev.TaskID, ev.ContextID, input, "allow_once"))
	re := wantRPC(t, err, a2a.CodeInternalError, "Session backup is not ready.")
	if !re.BackupNotReady() {
		t.Fatalf("BackupNotReady() false for data %#v", re.Data)
	}
	ack, err := e.c.SendMessage(e.ctx, permReply(ev.TaskID, ev.ContextID, input, "allow_once"))
	if err != nil || ack.Kind != a2a.KindMessage || ack.Message.Role != a2a.RoleAgent || ack.TaskID != ev.TaskID ||
		!strings.HasPrefix(ack.Message.MessageID, "permission-ack-") || len(ack.Message.Parts) != 1 ||
		ack.Message.Parts[0].MediaType != "application/json" {
		t.Fatalf("ack = %+v, %v", ack, err)
	}
	var data map[string]any
	if err := json.Unmarshal(ack.Message.Parts[0].Data, &data); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"schemaVersion": 1.0, "kind": "permission_ack", "inputId": input["inputId"],
		"toolUseId": "toolu_cand_bash", "decision": "allow_once", "accepted": true}
	if len(data) != len(want) {
		t.Fatalf("ack data = %#v", data)
	}
	for k, v := range want {
		if data[k] != v {
			t.Fatalf("ack data[%s] = %#v, want %#v", k, data[k], v)
		}
	}
	rest := drainOK(t, st)
	envs, _ := pipelineEnvelopes(rest[0])
	if rest[len(rest)-1].State() != a2a.StateCompleted || envs[0]["eventType"] != "candidate_step_started" {
		t.Fatalf("stream after the ack: first %v, last state %s", envs[0]["eventType"], rest[len(rest)-1].State())
	}
	resolved := false
	for _, ev := range rest {
		envs, _ := pipelineEnvelopes(ev)
		for _, env := range envs {
			resolved = resolved || env["eventType"] == "permission_resolved"
		}
	}
	if !resolved {
		t.Fatal("no permission_resolved envelope after the ack")
	}
}
