package server_test

import (
	"fmt"
	"testing"
)

// TestContinuationLost: after an accepted answer, a continuation that ends
// while the task still works (subscription and GetTask both say working)
// ends A2A_UNAVAILABLE and cancels the task (protocol.md §5.12). Scripted: a
// task stuck in WORKING behind a silent subscription happens only when
// iac-code loses its connection mid-turn.
func TestContinuationLost(t *testing.T) {
	s := &script{answer: func(method string, n int, ctxID string) (bool, []string) {
		working := fmt.Sprintf(`{"id":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"}}`, ctxID)
		waiting := waitingTask(ctxID, permissionInput("task-1", ctxID))
		switch {
		case method == "SendStreamingMessage" && n == 0:
			return true, []string{`{"task":` + waiting + `}`}
		case method == "SendStreamingMessage":
			return true, []string{fmt.Sprintf(`{"statusUpdate":{"taskId":"task-1","contextId":%q,"status":{"state":"TASK_STATE_WORKING"},"metadata":{"iac_code":{"inputReceived":{"kind":"permission","inputId":"permission-1"}}}}}`, ctxID)}
		case method == "SubscribeToTask":
			return true, []string{`{"task":` + working + `}`}
		case method == "GetTask" && n == 0:
			return false, []string{waiting}
		}
		return false, []string{working} // GetTask after the continuation, CancelTask
	}}
	url, e := scriptedEnv(t, s)
	it := interrupts(t, post(t, url, e.body("thread-s", "run-1", "hi", nil), nil))[0]
	r := post(t, url, resumeBody(e, "thread-s", "run-2", allow(it["id"])), nil)
	if fin := last(r.Events); fin["code"] != "A2A_UNAVAILABLE" {
		t.Fatalf("got %v (%v)", fin, types(r.Events))
	}
	if got := s.calls(); got != "[SendStreamingMessage GetTask SendStreamingMessage SubscribeToTask GetTask CancelTask]" {
		t.Fatalf("A2A calls %s", got)
	}
}
