package state

import (
	"encoding/json"
	"errors"
	"testing"
)

// baseDoc returns a valid document of thread-1 as generic JSON.
func baseDoc() map[string]any {
	var m map[string]any
	err := json.Unmarshal([]byte(`{
	  "schemaVersion": 1, "threadId": "thread-1", "contextId": "agui-4b0a5fefc328e6b9257bc535e3c5d26fec36b52f",
	  "cwd": "/srv/iac/session-1", "userId": "user-1", "iacCodeSessionId": null,
	  "execution": {
	    "executionId": "exec-1", "rosInvocationId": "ros-1", "taskId": "task-1", "lastTaskId": null,
	    "pipelineSequence": 3, "pipelineOpenSteps": ["step:a"],
	    "textSnapshotDigests": ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"],
	    "pending": {"perm-1": {"value": {"inputId": "perm-1", "kind": "permission"}, "sideband": false}}
	  },
	  "runDigests": {"run-1": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"},
	  "appliedResumeDigests": [{"executionId": "exec-0", "interruptId": "perm-0", "digest": "d"}],
	  "terminalExecutionIds": ["exec-0"]
	}`), &m)
	if err != nil {
		panic(err)
	}
	return m
}

func execOf(m map[string]any) map[string]any { return m["execution"].(map[string]any) }
func pending1(m map[string]any) map[string]any {
	return execOf(m)["pending"].(map[string]any)["perm-1"].(map[string]any)
}

// loadRaw decodes data as thread-1's stored document, as every store
// loads it.
func loadRaw(t *testing.T, data []byte) (*Thread, error) {
	t.Helper()
	return Decode(data, "thread-1")
}

func loadDoc(t *testing.T, m map[string]any) (*Thread, error) {
	t.Helper()
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return loadRaw(t, data)
}

func TestLoadRejects(t *testing.T) {
	cases := map[string]func(m map[string]any){
		"schemaVersion 2":          func(m map[string]any) { m["schemaVersion"] = 2 },
		"schemaVersion string":     func(m map[string]any) { m["schemaVersion"] = "1" },
		"schemaVersion true":       func(m map[string]any) { m["schemaVersion"] = true },
		"schemaVersion missing":    func(m map[string]any) { delete(m, "schemaVersion") },
		"threadId mismatch":        func(m map[string]any) { m["threadId"] = "thread-2" },
		"threadId missing":         func(m map[string]any) { delete(m, "threadId") },
		"contextId empty":          func(m map[string]any) { m["contextId"] = "" },
		"cwd missing":              func(m map[string]any) { delete(m, "cwd") },
		"cwd number":               func(m map[string]any) { m["cwd"] = 1 },
		"executionId empty":        func(m map[string]any) { execOf(m)["executionId"] = "" },
		"rosInvocationId missing":  func(m map[string]any) { delete(execOf(m), "rosInvocationId") },
		"userId number":            func(m map[string]any) { m["userId"] = 5 },
		"iacCodeSessionId object":  func(m map[string]any) { m["iacCodeSessionId"] = map[string]any{} },
		"taskId bool":              func(m map[string]any) { execOf(m)["taskId"] = false },
		"lastTaskId number":        func(m map[string]any) { execOf(m)["lastTaskId"] = 3 },
		"pipelineSequence -1":      func(m map[string]any) { execOf(m)["pipelineSequence"] = -1 },
		"pipelineSequence 1.5":     func(m map[string]any) { execOf(m)["pipelineSequence"] = 1.5 },
		"pipelineSequence true":    func(m map[string]any) { execOf(m)["pipelineSequence"] = true },
		"pipelineSequence string":  func(m map[string]any) { execOf(m)["pipelineSequence"] = "3" },
		"pipelineSequence null":    func(m map[string]any) { execOf(m)["pipelineSequence"] = nil },
		"open step empty":          func(m map[string]any) { execOf(m)["pipelineOpenSteps"] = []any{""} },
		"open step number":         func(m map[string]any) { execOf(m)["pipelineOpenSteps"] = []any{1} },
		"open steps not a list":    func(m map[string]any) { execOf(m)["pipelineOpenSteps"] = "step:a" },
		"digest uppercase":         func(m map[string]any) { execOf(m)["textSnapshotDigests"] = []any{"A" + hex64('a')[1:]} },
		"digest 63 chars":          func(m map[string]any) { execOf(m)["textSnapshotDigests"] = []any{hex64('a')[1:]} },
		"digest non-hex":           func(m map[string]any) { execOf(m)["textSnapshotDigests"] = []any{"g" + hex64('a')[1:]} },
		"pending not an object":    func(m map[string]any) { execOf(m)["pending"] = []any{} },
		"pending entry not object": func(m map[string]any) { execOf(m)["pending"].(map[string]any)["perm-1"] = "x" },
		"pending value missing":    func(m map[string]any) { delete(pending1(m), "value") },
		"pending value list":       func(m map[string]any) { pending1(m)["value"] = []any{} },
		"pending inputId mismatch": func(m map[string]any) { pending1(m)["value"].(map[string]any)["inputId"] = "perm-2" },
		"pending inputId missing":  func(m map[string]any) { delete(pending1(m)["value"].(map[string]any), "inputId") },
		"pending sideband string":  func(m map[string]any) { pending1(m)["sideband"] = "no" },
		"pending sideband null":    func(m map[string]any) { pending1(m)["sideband"] = nil },
		"applied entry string":     func(m map[string]any) { m["appliedResumeDigests"] = []any{"x"} },
		"applied digest empty": func(m map[string]any) {
			m["appliedResumeDigests"].([]any)[0].(map[string]any)["digest"] = ""
		},
		"applied missing interruptId": func(m map[string]any) {
			delete(m["appliedResumeDigests"].([]any)[0].(map[string]any), "interruptId")
		},
		"applied not a list":      func(m map[string]any) { m["appliedResumeDigests"] = map[string]any{} },
		"runDigests list":         func(m map[string]any) { m["runDigests"] = []any{} },
		"runDigests missing":      func(m map[string]any) { delete(m, "runDigests") },
		"terminal missing":        func(m map[string]any) { delete(m, "terminalExecutionIds") },
		"terminal not a list":     func(m map[string]any) { m["terminalExecutionIds"] = "exec-0" },
		"execution missing":       func(m map[string]any) { delete(m, "execution") },
		"execution not an object": func(m map[string]any) { m["execution"] = "exec-1" },
	}
	for name, mutate := range cases {
		m := baseDoc()
		mutate(m)
		if th, err := loadDoc(t, m); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: Load = %+v, %v; want ErrUnavailable", name, th, err)
		}
	}
	raw := map[string]string{
		"empty file":      ``,
		"not JSON":        `{"schemaVersion": 1,`,
		"array":           `[]`,
		"null":            `null`,
		"trailing data":   `{"schemaVersion": 1} {}`,
		"invalid UTF-8":   "{\"schemaVersion\": 1, \"threadId\": \"thread-1\xff\"}",
		"NaN literal":     `{"schemaVersion": NaN}`,
		"byte order mark": "\ufeff{}",
	}
	for name, data := range raw {
		if th, err := loadRaw(t, []byte(data)); !errors.Is(err, ErrUnavailable) {
			t.Errorf("%s: Load = %+v, %v; want ErrUnavailable", name, th, err)
		}
	}
}

func TestLoadAccepts(t *testing.T) {
	m := baseDoc()
	m["schemaVersion"] = 1.0 // Python: 1.0 == 1
	m["futureKey"] = []any{1, 2}
	m["userId"] = nil
	delete(m, "iacCodeSessionId")
	e := execOf(m)
	delete(e, "pipelineSequence")
	delete(e, "pipelineOpenSteps")
	delete(e, "textSnapshotDigests")
	delete(e, "lastTaskId")
	e["pending"] = map[string]any{
		"perm-1": map[string]any{"value": map[string]any{"inputId": "perm-1", "apiKey": "sk"}, "expiresAt": "2020-01-01T00:00:00Z"},
	}
	m["runDigests"] = map[string]any{"run-1": "d1", "run-2": 7, "": "d3", "run-4": ""}
	m["terminalExecutionIds"] = []any{"exec-2", "", 3, nil, "exec-1", "exec-2"}
	m["appliedResumeDigests"] = []any{
		map[string]any{"executionId": "e", "interruptId": "i", "digest": "old"},
		map[string]any{"executionId": "e", "interruptId": "i", "digest": "new"},
	}
	th, err := loadDoc(t, m)
	if err != nil {
		t.Fatal(err)
	}
	x := th.Execution
	switch {
	case th.UserID != nil || th.IacCodeSessionID != nil || x.LastTaskID != nil:
		t.Errorf("nullable fields: %v %v %v", th.UserID, th.IacCodeSessionID, x.LastTaskID)
	case x.PipelineSequence != 0 || len(x.PipelineOpenSteps) != 0 || len(x.TextSnapshotDigests) != 0:
		t.Errorf("defaults: %+v", x)
	case x.Pending["perm-1"].Sideband || len(x.Pending["perm-1"].Value) != 1:
		t.Errorf("pending: %+v", x.Pending)
	case len(th.RunDigests) != 1 || th.RunDigests["run-1"] != "d1":
		t.Errorf("runDigests: %v", th.RunDigests)
	case len(th.TerminalExecutionIDs) != 2 || th.TerminalExecutionIDs[0] != "exec-1" || th.TerminalExecutionIDs[1] != "exec-2":
		t.Errorf("terminal: %v", th.TerminalExecutionIDs)
	case len(th.AppliedResumeDigests) != 1 || th.AppliedResumeDigests[0].Digest != "new":
		t.Errorf("applied (last wins, as in a Python dict): %v", th.AppliedResumeDigests)
	}
}
