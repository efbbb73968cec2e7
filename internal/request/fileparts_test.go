package request

import (
	"encoding/json"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

func TestFileParts(t *testing.T) {
	content := `[{"type":"text","text":"look"},{"type":"image","source":{"type":"data","mimeType":"image/png","value":"iVBORw0KGgo="},"metadata":{"filename":"a.png"}}]`
	ui, err := UserContent([]agui.Message{{ID: "m", Role: "user", Content: json.RawMessage(content)}})
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(FileParts(ui.Parts))
	if err != nil {
		t.Fatal(err)
	}
	const want = `[{"text":"look"},{"raw":"iVBORw0KGgo=","filename":"a.png","mediaType":"image/png"}]`
	if string(got) != want {
		t.Fatalf("parts %s\nwant  %s", got, want)
	}
	if _, ok := ui.Parts[1].Data().(map[string]any); !ok {
		t.Fatal("FileParts changed its input")
	}
}
