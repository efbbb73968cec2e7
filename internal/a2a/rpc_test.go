package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

func TestSendStreamingMessageRequestShape(t *testing.T) {
	c, reqs := newUpstream(t, sseFrames(frameIR))
	perm := map[string]any{"schemaVersion": 1, "kind": "permission", "requestTaskId": "T", "inputId": "I", "toolUseId": "U", "decision": "allow_once"}
	dataPart := a2asdk.NewDataPart(perm)
	dataPart.MediaType = "application/json"
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{
		MessageID: "m-1",
		ContextID: "agui-0123456789abcdef0123456789abcdef01234567",
		TaskID:    "T",
		Parts:     []*a2asdk.Part{a2asdk.NewTextPart("Create a VPC"), dataPart},
		Metadata:  map[string]any{"cwd": "/srv/iac/session-1", "cleanupOnly": false, "preferredLanguage": "en"},
	})
	if err != nil {
		t.Fatal(err)
	}
	readAllEvents(t, s)
	r := <-reqs
	if r.Method != "POST" || r.Path != "/" {
		t.Errorf("request line = %s %s", r.Method, r.Path)
	}
	for h, want := range map[string]string{
		"A2a-Version":   "1.0",
		"Content-Type":  "application/json",
		"Accept":        "text/event-stream",
		"Authorization": "Bearer " + testToken,
	} {
		if got := r.Header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	if r.RPC.JSONRPC != "2.0" || r.RPC.Method != "SendStreamingMessage" || len(r.RPC.ID) != 36 {
		t.Errorf("envelope = %+v", r.RPC)
	}
	var got any
	if err := json.Unmarshal(r.RPC.Params, &got); err != nil {
		t.Fatal(err)
	}
	var want any
	_ = json.Unmarshal([]byte(`{
	  "message":{"messageId":"m-1","role":"ROLE_USER",
	    "contextId":"agui-0123456789abcdef0123456789abcdef01234567","taskId":"T",
	    "parts":[{"text":"Create a VPC"},
	      {"data":{"schemaVersion":1,"kind":"permission","requestTaskId":"T","inputId":"I","toolUseId":"U","decision":"allow_once"},"mediaType":"application/json"}],
	    "metadata":{"iac_code":{"cwd":"/srv/iac/session-1","cleanupOnly":false,"preferredLanguage":"en"}}},
	  "configuration":{"acceptedOutputModes":["text/plain"]}}`), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("params =\n%s\nwant\n%s", mustJSON(t, got), mustJSON(t, want))
	}
}

func TestSendParamsDefaults(t *testing.T) {
	c, reqs := newUpstream(t, jsonAnswer(200, rpcResult(`{"message":{"messageId":"ack","role":"ROLE_AGENT","taskId":"T","contextId":"C","parts":[{"text":"ok"}],"metadata":{"iac_code":{"kind":"permission_ack"}}}}`)))
	c.token = "" // no bearer when the token is empty
	ev, err := c.SendMessage(context.Background(), &SendParams{Parts: []*a2asdk.Part{a2asdk.NewTextPart("1")}})
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != KindMessage || ev.TaskID != "T" || ev.ContextID != "C" || ev.Message.Text() != "ok" || ev.IacCode()["kind"] != "permission_ack" {
		t.Errorf("event = %+v", ev)
	}
	r := <-reqs
	if r.RPC.Method != "SendMessage" || r.Header.Get("Authorization") != "" || r.Header.Get("A2A-Version") != "1.0" {
		t.Errorf("method %q, headers %v", r.RPC.Method, r.Header)
	}
	var p struct {
		Message  map[string]any `json:"message"`
		Metadata map[string]any `json:"metadata"`
	}
	_ = json.Unmarshal(r.RPC.Params, &p)
	if id, _ := p.Message["messageId"].(string); len(id) != 36 {
		t.Errorf("generated messageId = %q", id)
	}
	for _, k := range []string{"contextId", "taskId", "metadata"} {
		if _, ok := p.Message[k]; ok {
			t.Errorf("message.%s sent although empty", k)
		}
	}
	if len(p.Metadata) != 0 {
		t.Errorf("params.metadata = %v, want empty", p.Metadata)
	}
}

func TestGetTaskAndCancelTask(t *testing.T) {
	task := `{"id":"T","contextId":"C","status":{"state":"TASK_STATE_CANCELED","message":{"messageId":"T-5","role":"ROLE_AGENT","parts":[{"text":"Task canceled."}]}},"artifacts":[{"artifactId":"a-1","parts":[]}],"history":[{"messageId":"m","role":"ROLE_USER","parts":[{"text":"x"}]},{"messageId":"T-message","role":"ROLE_AGENT","parts":[{"text":"y"}]}],"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}`
	c, reqs := newUpstream(t, jsonAnswer(200, rpcResult(task)))
	ev, err := c.GetTask(context.Background(), "T", 100)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Kind != KindTask || ev.TaskID != "T" || ev.State() != StateCanceled || len(ev.History) != 2 || ev.History[1].Text() != "y" ||
		ev.Status.Message.Text() != "Task canceled." || len(ev.Artifacts) != 1 || ev.IacCode()["iacCodeSessionId"] != "S" {
		t.Errorf("GetTask event = %+v", ev)
	}
	r := <-reqs
	if r.RPC.Method != "GetTask" || string(r.RPC.Params) != `{"id":"T","historyLength":100}` {
		t.Errorf("GetTask request %s %s", r.RPC.Method, r.RPC.Params)
	}
	if r.Header.Get("Accept") != "application/json" {
		t.Errorf("Accept = %q", r.Header.Get("Accept"))
	}
	ev, err = c.CancelTask(context.Background(), "T")
	if err != nil || ev.State() != StateCanceled {
		t.Fatalf("CancelTask = %+v, %v", ev, err)
	}
	r = <-reqs
	if r.RPC.Method != "CancelTask" || string(r.RPC.Params) != `{"id":"T"}` {
		t.Errorf("CancelTask request %s %s", r.RPC.Method, r.RPC.Params)
	}
}

func TestCancelTaskNotCancelable(t *testing.T) {
	c, _ := newUpstream(t, jsonAnswer(200, `{"jsonrpc":"2.0","id":"1","error":{"code":-32002,"message":"Task cannot be canceled"}}`))
	_, err := c.CancelTask(context.Background(), "T")
	var re *RPCError
	if !errors.As(err, &re) || re.Code != CodeTaskNotCancelable {
		t.Fatalf("err = %v", err)
	}
}

func TestRPCErrorData(t *testing.T) {
	cases := []struct {
		name, data string
		want       any
		backup     bool
	}{
		{"array", `[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"INVALID_PARAMS","domain":"a2a-protocol.org","metadata":{}}]`,
			[]any{map[string]any{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "INVALID_PARAMS", "domain": "a2a-protocol.org", "metadata": map[string]any{}}}, false},
		{"object", `{"code":"SESSION_BACKUP_NOT_READY","retryable":true}`,
			map[string]any{"code": "SESSION_BACKUP_NOT_READY", "retryable": true}, true},
		{"object not retryable", `{"code":"SESSION_BACKUP_NOT_READY","retryable":false}`,
			map[string]any{"code": "SESSION_BACKUP_NOT_READY", "retryable": false}, false},
		{"recoverable", `{"recoverableTaskId":"T0","contextId":"C","sidecarStatus":"waiting_input"}`,
			map[string]any{"recoverableTaskId": "T0", "contextId": "C", "sidecarStatus": "waiting_input"}, false},
		{"string", `"Task T is in terminal state: 3"`, "Task T is in terminal state: 3", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":"1","error":{"code":-32602,"message":"Invalid params","data":` + tc.data + `}}`
			c, _ := newUpstream(t, jsonAnswer(200, body))
			_, err := c.SendMessage(context.Background(), &SendParams{})
			var re *RPCError
			if !errors.As(err, &re) {
				t.Fatalf("err = %v, want *RPCError", err)
			}
			if re.Code != -32602 || re.Message != "Invalid params" || !reflect.DeepEqual(re.Data, tc.want) {
				t.Errorf("RPCError = %+v", re)
			}
			if re.BackupNotReady() != tc.backup {
				t.Errorf("BackupNotReady = %v, want %v", re.BackupNotReady(), tc.backup)
			}
			if re.Error() != "a2a: JSON-RPC error -32602: Invalid params" {
				t.Errorf("Error() = %q", re.Error())
			}
		})
	}
}

func TestBareResultShape(t *testing.T) {
	// The original's FakeA2AClient puts the update fields directly in
	// result (protocol.md §4.6).
	c, _ := newUpstream(t, sseFrames(
		rpcResult(`{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"T-message","role":"ROLE_AGENT","parts":[{"text":"hi"}]}},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}`),
		rpcResult(`{"id":"T","contextId":"C","status":{"state":"input-required"}}`),
	))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	evs := readAllEvents(t, s)
	if len(evs) != 2 {
		t.Fatalf("got %d events", len(evs))
	}
	if e := evs[0]; e.Kind != KindStatusUpdate || e.TaskID != "T" || e.ContextID != "C" || e.Status.Message.Text() != "hi" || e.IacCode()["iacCodeSessionId"] != "S" {
		t.Errorf("bare update = %+v", e)
	}
	if e := evs[1]; e.Kind != KindTask || e.TaskID != "T" || e.State() != StateInputRequired {
		t.Errorf("bare task = %+v", e)
	}
}

func TestMetadataFloatNumbers(t *testing.T) {
	frame := rpcResult(`{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"usage":{"inputTokens":812.0,"outputTokens":3.0,"totalTokens":815},"pipeline":{"sequence":3.0,"step":{"attempt":2.5}}}}}}`)
	c, _ := newUpstream(t, sseFrames(frame))
	s, err := c.SendStreamingMessage(context.Background(), &SendParams{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ev := readAllEvents(t, s)[0]
	usage := ev.IacCode()["usage"].(map[string]any)
	for k, want := range map[string]int64{"inputTokens": 812, "outputTokens": 3, "totalTokens": 815} {
		if n, ok := Int(usage[k]); !ok || n != want {
			t.Errorf("%s = %d, %v; want %d", k, n, ok, want)
		}
	}
	p := ev.IacCode()["pipeline"].(map[string]any)
	if n, ok := Int(p["sequence"]); !ok || n != 3 {
		t.Errorf("sequence = %d %v", n, ok)
	}
	if _, ok := Int(p["step"].(map[string]any)["attempt"]); ok {
		t.Error("2.5 accepted as an integer")
	}
}

func TestInt(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want int64
		ok   bool
	}{
		{3, 3, true}, {int64(-7), -7, true}, {3.0, 3, true}, {json.Number("42"), 42, true},
		{json.Number("3.0"), 3, true}, {3.5, 0, false}, {json.Number("3.5"), 0, false},
		{true, 0, false}, {"3", 0, false}, {nil, 0, false}, {1e300, 0, false},
	} {
		if got, ok := Int(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("Int(%#v) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
