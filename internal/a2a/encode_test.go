package a2a

import (
	"bytes"
	"encoding/json"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
)

// TestEncodeRequestBytes holds the pieced message encoding to json.Marshal
// of the whole request, byte for byte.
func TestEncodeRequestBytes(t *testing.T) {
	tricky := "a <b> & \"c\" \u2028 é \x01 \\"
	params := []*SendParams{
		{},
		{MessageID: "m-1", ContextID: "ctx", TaskID: "task", Parts: []*a2asdk.Part{a2asdk.NewTextPart(tricky)}},
		{Parts: []*a2asdk.Part{a2asdk.NewTextPart("one"), a2asdk.NewTextPart("two")}, Metadata: map[string]any{}},
		{ContextID: tricky, Metadata: map[string]any{
			"cleanupOnly": true, "cwd": tricky, "user_id": "u",
			"thinking":    map[string]any{"enabled": true, "effort": "high", "budget": int64(1024)},
			"llm_headers": map[string]any{"x-<h>": tricky},
		}},
	}
	for i, p := range params {
		req := sendRequest(p)
		if !piecewise(MethodSendMessage, "id", req) {
			t.Errorf("params %d: not written in pieces", i)
		}
		for _, method := range []string{MethodSendStreamingMessage, MethodSendMessage} {
			got, err := encodeRequestID(method, "3f1c2a9e-7b7d-4c55-9a51-0d2f1e6b8c11", req)
			if err != nil {
				t.Fatal(err)
			}
			want, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: "3f1c2a9e-7b7d-4c55-9a51-0d2f1e6b8c11", Method: method, Params: req})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("params %d, %s:\n got %s\nwant %s", i, method, got, want)
			}
		}
	}
	// Other shapes: without configuration, nil or empty parts, a nil part
	// are written in pieces; with tenant, params metadata, extensions,
	// referenced tasks or an id that needs escaping, the whole request is
	// marshalled as before.
	noCfg := sendRequest(&SendParams{})
	noCfg.Config = nil
	nilParts := sendRequest(&SendParams{})
	nilParts.Message.Parts = nil
	nilPart := sendRequest(&SendParams{Parts: []*a2asdk.Part{nil, a2asdk.NewTextPart("x")}})
	withData := sendRequest(&SendParams{Parts: []*a2asdk.Part{
		a2asdk.NewDataPart(map[string]any{"a": []any{map[string]any{"b": "<c>"}}}),
		a2asdk.NewRawPart([]byte{0, 1, 2, 0xff}),
	}})
	withMeta := sendRequest(&SendParams{})
	withMeta.Metadata = map[string]any{"k": "v"}
	withTenant := sendRequest(&SendParams{})
	withTenant.Tenant = "t"
	withExt := sendRequest(&SendParams{})
	withExt.Message.Extensions = []string{"e"}
	withRefs := sendRequest(&SendParams{})
	withRefs.Message.ReferenceTasks = []a2asdk.TaskID{"t"}
	for _, c := range []struct {
		id  string
		req *a2asdk.SendMessageRequest
	}{
		{"id", noCfg}, {"id", nilParts}, {"id", nilPart}, {"id", withData}, {"id", withMeta},
		{"id", withTenant}, {"id", withExt}, {"id", withRefs}, {`i"d`, sendRequest(&SendParams{})},
	} {
		got, err := encodeRequestID(MethodSendMessage, c.id, c.req)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: c.id, Method: MethodSendMessage, Params: c.req})
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", c.id, got, want)
		}
	}
}
