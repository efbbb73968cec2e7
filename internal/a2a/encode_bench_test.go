package a2a

import (
	"encoding/json"
	"testing"

	a2asdk "github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/google/uuid"
)

// benchSend is a first turn: one text part and the iac_code metadata of
// a request with thinking and LLM headers.
func benchSend() *a2asdk.SendMessageRequest {
	return sendRequest(&SendParams{
		ContextID: "ctx-1",
		Parts:     []*a2asdk.Part{a2asdk.NewTextPart("write a VPC template")},
		Metadata: map[string]any{
			"cleanupOnly": false, "cwd": "/work/ws", "rosInvocationId": "invocation-1",
			"preferredLanguage": "en", "thinking": map[string]any{"enabled": true, "budget": int64(2048)},
			"llm_headers": map[string]any{"x-a": "b"},
		},
	})
}

// BenchmarkEncodeRequest compares encodeRequest (the message in pieces)
// with json.Marshal of the whole request.
func BenchmarkEncodeRequest(b *testing.B) {
	p := benchSend()
	b.Run("pieces", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeRequest(MethodSendStreamingMessage, p); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(rpcRequest{JSONRPC: "2.0", ID: uuid.NewString(), Method: MethodSendStreamingMessage, Params: p}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
