package a2a

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// refDecode is the straightforward encoding/json decoder the hand-written
// scanner replaces; the differential tests hold the two to the same
// answers.
func refDecode(b []byte) (*Event, error) {
	type obj struct {
		ID        string           `json:"id"`
		TaskID    string           `json:"taskId"`
		ContextID string           `json:"contextId"`
		Status    *Status          `json:"status"`
		History   []Message        `json:"history"`
		Artifact  map[string]any   `json:"artifact"`
		Artifacts []map[string]any `json:"artifacts"`
		Metadata  map[string]any   `json:"metadata"`
	}
	var f struct {
		Result *struct {
			Task, StatusUpdate, ArtifactUpdate *obj
			Message                            *Message
			obj
		}
		Error *struct {
			Code    int
			Message string
			Data    any
		}
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, ErrProtocol
	}
	if f.Error != nil {
		return nil, &RPCError{Code: f.Error.Code, Message: f.Error.Message, Data: f.Error.Data}
	}
	if f.Result == nil {
		return nil, ErrProtocol
	}
	r := f.Result
	mk := func(k Kind, o *obj) *Event {
		id := o.TaskID
		if id == "" {
			id = o.ID
		}
		return &Event{Kind: k, TaskID: id, ContextID: o.ContextID, Status: o.Status, History: o.History,
			Artifact: o.Artifact, Artifacts: o.Artifacts, Metadata: o.Metadata}
	}
	switch {
	case r.Task != nil:
		return mk(KindTask, r.Task), nil
	case r.StatusUpdate != nil:
		return mk(KindStatusUpdate, r.StatusUpdate), nil
	case r.ArtifactUpdate != nil:
		return mk(KindArtifactUpdate, r.ArtifactUpdate), nil
	case r.Message != nil:
		return &Event{Kind: KindMessage, TaskID: r.Message.TaskID, ContextID: r.Message.ContextID, Message: r.Message, Metadata: r.Message.Metadata}, nil
	}
	k := KindStatusUpdate
	if r.Artifact != nil {
		k = KindArtifactUpdate
	} else if r.TaskID == "" && r.ID != "" {
		k = KindTask
	}
	return mk(k, &r.obj), nil
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
}

func TestDecodeMatchesEncodingJSON(t *testing.T) {
	for i, frame := range decodeCorpus {
		got, gerr := decodeFrameWith(&scanner{intern: map[string]string{}}, []byte(frame), false)
		want, werr := refDecode([]byte(frame))
		if !reflect.DeepEqual(got, want) || !sameErr(gerr, werr) {
			t.Errorf("frame %d:\n got %s %v\nwant %s %v", i, mustJSON(t, got), gerr, mustJSON(t, want), werr)
		}
	}
}

func TestDecodeRejectsMalformed(t *testing.T) {
	for _, frame := range []string{
		``, `{`, `[]`, `{"result":}`, `{"result":{"taskId":5}}`, `{"result":{}} x`, `{"result":{"task":"T"}}`,
		`{"result":{"metadata":[1]}}`, `{"error":{"code":1.5}}`, `{"result":{"id":"a` + "\x01" + `"}}`,
		`{"result":{"id":"\x"}}`, `{"result":{"id":"\u12"}}`, `{"result":{"metadata":{"a":tru}}}`, `{"result":{"metadata":{"a":+1}}}`,
		`{"result":{"a":1,}}`, `{"jsonrpc":"2.0","id":"1"}`, `{"result":null}`,
		// A high surrogate then a broken \u escape used to loop forever.
		`{"result":{"status":{"message":{"parts":[{"text":"\ud83d\ude` + "\x0e" + `0"}]}}}}`,
		`{"result":{"id":"\ud83d\u12"}}`, `{"result":{"id":"\ud83d\u"}}`,
	} {
		if _, err := decodeFrame([]byte(frame), false); !errors.Is(err, ErrProtocol) {
			t.Errorf("decodeFrame(%q) = %v, want ErrProtocol", frame, err)
		}
	}
}

func TestDecodeDeepNesting(t *testing.T) {
	deep := make([]byte, 0, 40020)
	deep = append(deep, `{"result":{"metadata":{"a":`...)
	for i := 0; i < 20000; i++ {
		deep = append(deep, '[')
	}
	if _, err := decodeFrame(deep, false); !errors.Is(err, ErrProtocol) {
		t.Fatalf("err = %v, want ErrProtocol", err)
	}
}

func sameErr(a, b error) bool {
	var ra, rb *RPCError
	if errors.As(a, &ra) || errors.As(b, &rb) {
		return errors.As(a, &ra) && errors.As(b, &rb) && reflect.DeepEqual(ra, rb)
	}
	return (a == nil) == (b == nil)
}

func FuzzDecodeFrame(f *testing.F) {
	for _, c := range decodeCorpus {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if caseFoldedKey(b) {
			t.Skip("encoding/json matches keys case-insensitively; proto JSON keys are exact")
		}
		got, gerr := decodeFrame(b, false)
		want, werr := refDecode(b)
		if werr == nil && gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("mismatch on %q", b)
		}
	})
}

var knownKeys = []string{"result", "error", "code", "message", "data", "task", "statusUpdate", "artifactUpdate",
	"id", "taskId", "contextId", "status", "history", "artifact", "artifacts", "metadata", "state", "timestamp",
	"messageId", "role", "parts", "text", "raw", "url", "mediaType", "filename"}

// caseFoldedKey reports whether some object key differs from a known key
// only by case.
func caseFoldedKey(b []byte) bool {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	var walk func(any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				for _, kk := range knownKeys {
					if k != kk && strings.EqualFold(k, kk) {
						return true
					}
				}
				if walk(e) {
					return true
				}
			}
		case []any:
			for _, e := range x {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	return walk(v)
}
