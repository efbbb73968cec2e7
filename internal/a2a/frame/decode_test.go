package frame

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// Frames as iac-code sends them (upstream.md §3.4).
const (
	frameTask = `{"jsonrpc":"2.0","id":"1","result":{"task":{"id":"T","contextId":"C","status":{"state":"TASK_STATE_SUBMITTED"},"history":[{"messageId":"m-1","contextId":"C","taskId":"T","role":"ROLE_USER","parts":[{"text":"Create a VPC"}]}]}}}`
	frameText = `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"T-message","contextId":"C","taskId":"T","role":"ROLE_AGENT","parts":[{"text":"Here is the "}]}},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}}}`
	frameArt  = `{"jsonrpc":"2.0","id":"1","result":{"artifactUpdate":{"taskId":"T","contextId":"C","artifact":{"artifactId":"a-1","name":"main.tf","parts":[{"url":"iac-code-artifact://a-1","mediaType":"text/plain"}],"metadata":{"byteSize":812.0}},"lastChunk":true}}}`
	frameIR   = `{"jsonrpc":"2.0","id":"1","result":{"statusUpdate":{"taskId":"T","contextId":"C","status":{"state":"TASK_STATE_INPUT_REQUIRED","timestamp":"2026-08-21T07:00:00.123456Z"},"metadata":{"iac_code":{"iacCodeSessionId":"S"}}}}}`
)

func rpcResult(result string) string {
	return `{"jsonrpc":"2.0","id":"1","result":` + result + `}`
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// answer is one decoder's answer to a frame, comparable as a whole: an
// invalid frame compares by the fact only, not by the error's text.
type answer struct {
	Event   *Event
	RPC     *RPCError
	Invalid bool
}

func answerOf(ev *Event, rpcErr *RPCError, err error) answer {
	return answer{Event: ev, RPC: rpcErr, Invalid: err != nil}
}

// checkSame fails unless got and want are the same answer.
func checkSame(t *testing.T, frame []byte, got, want answer, what string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q:\n got %s\n%s %s", frame, mustJSON(t, got), what, mustJSON(t, want))
	}
}

// checkFrame holds Decode to the reference decoder on one frame.
func checkFrame(t *testing.T, frame []byte) answer {
	t.Helper()
	got := answerOf(Decode(frame))
	checkSame(t, frame, got, answerOf(refDecode(frame)), "reference")
	return got
}

var decodeCorpus = []string{
	frameTask, frameText, frameArt, frameIR, benchFrame,
	rpcResult(`{"message":{"messageId":"a","role":"ROLE_AGENT","parts":[],"metadata":{"iac_code":{"kind":"permission_ack"}}}}`),
	rpcResult(`{"statusUpdate":{"taskId":"T","status":{"state":"TASK_STATE_WORKING","message":null},"metadata":{"iac_code":{"tool":{"status":"input_complete","inputSummary":{"fields":{"a":[1,2.5,-3e2,true,false,null,{}]}}}}}}}`),
	rpcResult(`{"statusUpdate":{"taskId":"T","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","parts":[{"text":"esc \" \\ \/ \b\f\n\r\t \u00e9 \ud83d\ude00 \ud800 x \udc00 中文 ` + "\xff\xfe" + `"}]}}}}`),
	rpcResult(`{"statusUpdate":{"taskId":"T","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"m","parts":[{"data":{"bytes":"aGk=", "filename" : "x.png"},"mediaType":"image/png"},{"raw":"aGk=","url":"file:///x","filename":"f","metadata":{"k":"v"}}]}}}}`),
	rpcResult(`{"id":"T","contextId":"C","status":{"state":"TASK_STATE_FAILED"},"history":[],"artifacts":null,"metadata":{}}`),
	rpcResult(`{"artifact":{"artifactId":"a"},"taskId":"T"}`),
	rpcResult(`{"message":{"messageId":"m","parts":null},"task":{"id":"T"}}`),
	` { "jsonrpc" : "2.0" , "id" : 7 , "result" : { "statusUpdate" : { "taskId" : "T" , "status" : { "state" : "TASK_STATE_COMPLETED" } , "extra" : [ { } , [ ] ] } } } `,
	`{"jsonrpc":"2.0","id":"1","error":{"code":-32602,"message":"bad","data":[{"@type":"x","metadata":{}}]}}`,
	`{"jsonrpc":"2.0","id":"1","error":{"code":-32001,"message":"Task T is not active","data":"text"}}`,
	`{"jsonrpc":"2.0","id":"1","result":{}}`,
	// Repeated members: the last wins whole.
	`{"result":{"statusUpdate":{"taskId":"A"},"statusUpdate":{"taskId":"B"}}}`,
	`{"result":{"statusUpdate":{"taskId":"A","contextId":"C"},"statusUpdate":{"taskId":"B"}}}`,
	`{"result":{"task":{"id":"A"},"task":null,"message":{"messageId":"m"}}}`,
	`{"result":{"taskId":"A"},"result":null,"error":{"code":1}}`,
	`{"error":{"code":1,"message":"a"},"error":null,"result":{"taskId":"T"}}`,
	`{"error":{"code":1,"message":"a"},"error":{"code":2.0,"code":3e0}}`,
	`{"error":{"code":null,"message":null,"data":null}}`,
	`{"Result":{"taskId":"T"},"result":{"TaskId":"X","taskId":"T"}}`,
}

func TestDecodeMatchesReference(t *testing.T) {
	for _, frame := range decodeCorpus {
		checkFrame(t, []byte(frame))
	}
}

// The divergence issue 8 reported: the decoder took the first of repeated
// wrapper members where encoding/json and Python's json take the last.
func TestDecodeRepeatedWrapperLastWins(t *testing.T) {
	got := checkFrame(t, []byte(`{"result":{"statusUpdate":{"taskId":"A"},"statusUpdate":{"taskId":"B"}}}`))
	if got.Event == nil || got.Event.Kind != KindStatusUpdate || got.Event.TaskID != "B" {
		t.Fatalf("got %s, want the statusUpdate of task B", mustJSON(t, got))
	}
}

// Every level of the frame replaces a repeated member whole.
func TestDecodeRepeatedMembersEveryLevel(t *testing.T) {
	for frame, want := range map[string]string{
		`{"result":{"taskId":"A"},"result":{"taskId":"B"}}`:                                                  `"TaskID":"B"`,
		`{"result":{"task":{"id":"A","contextId":"C"},"task":{"id":"B"}}}`:                                   `"Kind":"task","TaskID":"B","ContextID":""`,
		`{"result":{"artifactUpdate":{"taskId":"A","artifact":{"x":1}},"artifactUpdate":{"taskId":"B"}}}`:    `"TaskID":"B","ContextID":"","Status":null,"History":null,"Artifact":null`,
		`{"result":{"message":{"messageId":"A","taskId":"T"},"message":{"messageId":"B"}}}`:                  `"Kind":"message","TaskID":""`,
		`{"result":{"taskId":"T","status":{"state":"A","timestamp":"t"},"status":{"state":"B"}}}`:            `"Status":{"state":"B"}`,
		`{"result":{"taskId":"T","status":{"message":{"messageId":"A","role":"R"},"message":{"parts":[]}}}}`: `"message":{"messageId":"","parts":[]}`,
		`{"result":{"taskId":"T","metadata":{"a":1,"b":2},"metadata":{"a":3}}}`:                              `"Metadata":{"a":3}`,
		`{"result":{"taskId":"T","metadata":{"iac_code":{"a":1},"iac_code":{"b":2}}}}`:                       `"Metadata":{"iac_code":{"b":2}}`,
		`{"result":{"message":{"parts":[{"text":"A"}],"parts":[{"url":"u"}]}}}`:                              `"parts":[{"url":"u"}]`,
		`{"result":{"message":{"parts":[{"text":"A","text":"B","data":{"x":1},"data":null}]}}}`:              `"parts":[{"text":"B","data":null}]`,
		`{"result":{"id":"T","history":[{"messageId":"A"}],"history":[]}}`:                                   `"History":[]`,
		`{"result":{"id":"T","artifacts":[{"a":1}],"artifacts":null}}`:                                       `"Artifacts":null`,
		`{"error":{"code":1,"data":{"a":1,"b":2},"data":{"a":3}},"result":{}}`:                               `"Code":1,"Message":"","Data":{"a":3}`,
	} {
		if got := mustJSON(t, checkFrame(t, []byte(frame))); !strings.Contains(got, want) {
			t.Errorf("%s decodes to %s, want %s", frame, got, want)
		}
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	for _, frame := range []string{
		``, `{`, `[]`, `null`, `"x"`, `{"result":}`, `{"result":{"taskId":5}}`, `{"result":{}} x`, `{"result":{"task":"T"}}`,
		`{"result":{"metadata":[1]}}`, `{"error":{"code":1.5}}`, `{"error":{"code":"1"}}`, `{"error":{"code":1e300}}`,
		`{"result":{"id":"a` + "\x01" + `"}}`, `{"result":{"id":"\x"}}`, `{"result":{"id":"\u12"}}`,
		`{"result":{"metadata":{"a":tru}}}`, `{"result":{"metadata":{"a":+1}}}`, `{"result":{"metadata":{"a":1e400}}}`,
		`{"result":{"a":1,}}`, `{"jsonrpc":"2.0","id":"1"}`, `{"result":null}`, `{"Result":{}}`,
		`{"error":null,"result":null}`, `{"result":[]}`, `{"error":"e"}`,
		// Each occurrence of a repeated member is type-checked.
		`{"result":{"taskId":5,"taskId":"T"}}`, `{"result":{"task":5,"task":{}}}`, `{"result":{},"result":5}`,
		`{"result":{"taskId":"T"},"error":{"code":"x"}}`, `{"error":{"code":1},"result":{"status":[]}}`,
		// A high surrogate then a broken \u escape used to loop forever.
		`{"result":{"status":{"message":{"parts":[{"text":"\ud83d\ude` + "\x0e" + `0"}]}}}}`,
		`{"result":{"id":"\ud83d\u12"}}`, `{"result":{"id":"\ud83d\u"}}`,
	} {
		if got := checkFrame(t, []byte(frame)); !got.Invalid {
			t.Errorf("Decode(%q) = %s, want invalid", frame, mustJSON(t, got))
		}
	}
}

func TestDecodeDeepNesting(t *testing.T) {
	for _, n := range []int{9996, 9997, 20000} {
		deep := []byte(`{"result":{"metadata":{"a":`)
		deep = append(deep, strings.Repeat("[", n)...)
		deep = append(deep, strings.Repeat("]", n)...)
		deep = append(deep, "}}}"...)
		// 9997 arrays in three objects are the 10000 levels encoding/json
		// allows; one more is too deep.
		if got := checkFrame(t, deep); got.Invalid != (n > 9997) {
			t.Fatalf("%d arrays: invalid = %v", n, got.Invalid)
		}
	}
}

// FuzzDecode holds Decode to the reference decoder on any bytes: both must
// take and refuse the same frames, and give equal answers to those they
// take (reference_test.go defines a valid frame).
func FuzzDecode(f *testing.F) {
	for _, c := range decodeCorpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkFrame(t, b)
	})
}
