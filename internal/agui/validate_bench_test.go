package agui

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// runBody is a new turn as the suite sends it: one user message, empty
// state, tools and context, iac-code forwardedProps.
var runBody = []byte(`{"threadId":"b-file-r0-90-1796159010061719056","runId":"5db0e7f1-28be-4045-81c7-146fb6200000","state":{},"tools":[],"context":[],"messages":[{"id":"m-5db0e7f1-28be-4045-81c7-146fb6200000","role":"user","content":"write a VPC template"}],"forwardedProps":{"iacCode":{"schemaVersion":1,"rosInvocationId":"invocation-5db0e7f1-28be-4045-81c7-146fb6200000","cwd":"/srv/iac/workspace"}}}`)

// BenchmarkDecodeRunAgentInput is the envelope's share of a request's
// admission (docs/benchmarks.md, "(b) turn latency"): the server's
// validity checks, then the decode.
func BenchmarkDecodeRunAgentInput(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if !utf8.Valid(runBody) || !json.Valid(runBody) {
			b.Fatal("invalid body")
		}
		if _, err := DecodeRunAgentInput(runBody); err != nil {
			b.Fatal(err)
		}
	}
}
