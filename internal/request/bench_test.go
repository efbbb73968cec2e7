package request

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

const benchBody = `{"threadId":"thread-1","runId":"run-1","state":{},"messages":[` +
	`{"id":"message-1","role":"user","content":"Crea una plantilla de VPC con dos vSwitch y un grupo de seguridad"},` +
	`{"id":"a-1","role":"assistant","content":"Claro. ¿En qué región?"},` +
	`{"id":"message-2","role":"user","content":"cn-hangzhou, por favor"}],` +
	`"tools":[],"context":[],"forwardedProps":{"iacCode":{"schemaVersion":1,"rosInvocationId":"invocation-1",` +
	`"cwd":"/workspace/session-1","runMode":"pipeline","pipelineName":"selling","llmHeaders":{"X-Trace":"abc"},` +
	`"thinking":{"enabled":true,"effort":"high","budget":2048},"preferredLanguage":"es"}}}`

func BenchmarkDigestSmall(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchBody)))
	for b.Loop() {
		if _, err := Digest([]byte(benchBody)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDigest8MiBImage(b *testing.B) {
	body := []byte(`{"messages":[{"id":"m","role":"user","content":[` + imagePartJSON("image/png", b64(8<<20), "") + `]}],"threadId":"t"}`)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if _, err := Digest(body); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseForwardedProps(b *testing.B) {
	var in struct {
		ForwardedProps json.RawMessage `json:"forwardedProps"`
	}
	if err := json.Unmarshal([]byte(benchBody), &in); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseForwardedProps(in.ForwardedProps); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPreferredLanguage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if PreferredLanguage([]byte(benchBody)) != "es" {
			b.Fatal("language")
		}
	}
}

func BenchmarkUserContentText(b *testing.B) {
	msgs := []agui.Message{{ID: "m", Role: "user", Content: json.RawMessage(`"Crea una plantilla de VPC"`)}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := UserContent(msgs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUserContent8MiBImage(b *testing.B) {
	content := `[{"type":"text","text":"` + strings.Repeat("x", 100) + `"},` + imagePartJSON("image/png", b64(8<<20), `{"filename":"a.png"}`) + `]`
	msgs := []agui.Message{{ID: "m", Role: "user", Content: json.RawMessage(content)}}
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		if _, err := UserContent(msgs); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMetadata(b *testing.B) {
	ic, err := ParseForwardedProps(json.RawMessage(`{"iacCode":{"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/w","model":"m","llmHeaders":{"a":"b"},"thinking":{"enabled":true}}}`))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Metadata(ic, "/srv/iac/session-1", "en")
	}
}
