package frame

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchFrame is a realistic text-delta frame (upstream.md §3.4.1) with
// uuid-sized ids.
const benchFrame = `{"jsonrpc":"2.0","id":"6f1c2a9e-3b4d-4e5f-8a6b-7c8d9e0f1a2b","result":{"statusUpdate":{"taskId":"0198c7e2-5a1b-7c3d-9e4f-a0b1c2d3e4f5","contextId":"agui-3f2a9c0d1e8b7a6f5c4d3e2f1a0b9c8d7e6f5a4b","status":{"state":"TASK_STATE_WORKING","message":{"messageId":"0198c7e2-5a1b-7c3d-9e4f-a0b1c2d3e4f5-message","contextId":"agui-3f2a9c0d1e8b7a6f5c4d3e2f1a0b9c8d7e6f5a4b","taskId":"0198c7e2-5a1b-7c3d-9e4f-a0b1c2d3e4f5","role":"ROLE_AGENT","parts":[{"text":"Here is the Terraform template for the VPC "}]}},"metadata":{"iac_code":{"iacCodeSessionId":"5b8e1f0a-2c3d-4e5f-9a8b-7c6d5e4f3a2b"}}}}}`

func BenchmarkDecodeTextDeltaFrame(b *testing.B) {
	data := []byte(benchFrame)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ev, _, err := Decode(data)
		if err != nil || ev.Status == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTextDeltaStream decodes the frame the way a Stream does,
// with the per-stream string table warmed up by earlier frames.
func BenchmarkDecodeTextDeltaStream(b *testing.B) {
	data := []byte(benchFrame)
	var d Decoder
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		ev, _, err := d.Decode(data)
		if err != nil || ev.Status == nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkDecodeTextDeltaStreamTexts decodes text deltas that differ
// only in their text, as a stream's do.
func BenchmarkDecodeTextDeltaStreamTexts(b *testing.B) {
	var data [][]byte
	for _, text := range []string{"Here is ", "the Terraform ", "template for ", "the VPC:\n", "```hcl\n", "resource \"alicloud_vpc\" "} {
		q, _ := json.Marshal(text)
		data = append(data, []byte(strings.Replace(benchFrame, `"Here is the Terraform template for the VPC "`, string(q), 1)))
	}
	var d Decoder
	b.ReportAllocs()
	b.SetBytes(int64(len(data[0])))
	i := 0
	for b.Loop() {
		ev, _, err := d.Decode(data[i%len(data)])
		if err != nil || ev.Status == nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkDecodeTextDeltaStreamFull is the stream decode when a frame
// does not match the previous one around its text (here the JSON-RPC id
// alternates), so every frame takes the full path with the stream's id
// slots, intern table and metadata memo warm.
func BenchmarkDecodeTextDeltaStreamFull(b *testing.B) {
	data := [][]byte{[]byte(benchFrame), []byte(strings.Replace(benchFrame, `"id":"6f1c`, `"id":"7f1c`, 1))}
	var d Decoder
	b.ReportAllocs()
	b.SetBytes(int64(len(data[0])))
	i := 0
	for b.Loop() {
		ev, _, err := d.Decode(data[i%2])
		if err != nil || ev.Status == nil {
			b.Fatal(err)
		}
		i++
	}
}
