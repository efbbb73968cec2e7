package request

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func userMsg(content string) []agui.Message {
	return []agui.Message{{ID: "message-1", Role: "user", Content: json.RawMessage(content)}}
}

func partsJSON(t *testing.T, in *UserInput) string {
	t.Helper()
	return marshal(t, in.Parts)
}

func wantContentErr(t *testing.T, content, msg string) {
	t.Helper()
	in, err := UserContent(userMsg(content))
	var ce *ContentError
	if !errors.As(err, &ce) || ce.Msg != msg || err.Error() != msg {
		short := content
		if len(short) > 80 {
			short = short[:80]
		}
		t.Fatalf("UserContent(%s) = %v, %v; want %q", short, in, err, msg)
	}
}

func imagePartJSON(mime, value, meta string) string {
	p := `{"type":"image","source":{"type":"data","value":"` + value + `","mimeType":"` + mime + `"}`
	if meta != "" {
		p += `,"metadata":` + meta
	}
	return p + `}`
}

func TestUserContentLatestUserMessage(t *testing.T) {
	msgs := []agui.Message{
		{ID: "u1", Role: "user", Content: json.RawMessage(`"old"`)},
		{ID: "a1", Role: "assistant", Content: json.RawMessage(`"reply"`)},
		{ID: "u2", Role: "user", Content: json.RawMessage(`"Create a VPC template"`)},
		{ID: "t1", Role: "tool", Content: json.RawMessage(`"result"`)},
	}
	in, err := UserContent(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if in.MessageID != "u2" || partsJSON(t, in) != `[{"text":"Create a VPC template"}]` {
		t.Fatalf("got %s %s", in.MessageID, partsJSON(t, in))
	}
}

func TestUserContentNoUserMessage(t *testing.T) {
	for _, msgs := range [][]agui.Message{nil, {{ID: "a", Role: "assistant", Content: json.RawMessage(`"x"`)}}} {
		_, err := UserContent(msgs)
		if !errors.Is(err, ErrNoUserMessage) || err.Error() != "A new run requires a user message." {
			t.Fatalf("err = %v", err)
		}
	}
}

func TestUserContentTextAndImages(t *testing.T) {
	content := `[{"type":"text","text":"look"},` +
		imagePartJSON("IMAGE/PNG", "iVBORw0KGgo=", "") + `,` +
		imagePartJSON("image/jpeg", "/9j/4A==", `{"filename":"diagram.jpg"}`) + `]`
	in, err := UserContent(userMsg(content))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"text":"look"},` +
		`{"data":{"bytes":"iVBORw0KGgo=","filename":"agui-image-2"},"mediaType":"image/png"},` +
		`{"data":{"bytes":"/9j/4A==","filename":"diagram.jpg"},"mediaType":"image/jpeg"}]`
	if got := partsJSON(t, in); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestUserContentFileNames(t *testing.T) {
	long255 := strings.Repeat("a", 251) + ".png"
	cases := map[string]string{
		`{"filename":"before.png"}`:       "before.png",
		`{"filename":".hidden png"}`:      ".hidden png",
		`{"filename":"` + long255 + `"}`:  long255,
		`{"filename":"a` + long255 + `"}`: "agui-image-1",
		`{"filename":"../before.png"}`:    "agui-image-1",
		`{"filename":"dir/x.png"}`:        "agui-image-1",
		`{"filename":"C:\\x.png"}`:        "agui-image-1",
		`{"filename":"CON"}`:              "agui-image-1",
		`{"filename":"con.tar.gz"}`:       "agui-image-1",
		`{"filename":"Lpt9.png"}`:         "agui-image-1",
		`{"filename":"COM\u00b9.png"}`:    "agui-image-1",
		`{"filename":"CONSOLE.png"}`:      "CONSOLE.png",
		`{"filename":"name."}`:            "agui-image-1",
		`{"filename":"name "}`:            "agui-image-1",
		`{"filename":"a?b.png"}`:          "agui-image-1",
		`{"filename":"tab\there.png"}`:    "agui-image-1",
		`{"filename":".."}`:               "agui-image-1",
		`{"filename":""}`:                 "agui-image-1",
		`{"filename":7}`:                  "agui-image-1",
		`"before.png"`:                    "agui-image-1",
		`{"name":"before.png"}`:           "agui-image-1",
	}
	for meta, want := range cases {
		in, err := UserContent(userMsg(`[` + imagePartJSON("image/png", "AAAA", meta) + `]`))
		if err != nil {
			t.Fatalf("%s: %v", meta, err)
		}
		if got := in.Parts[0].Data().(map[string]any)["filename"]; got != want {
			t.Errorf("metadata %s: filename %q, want %q", meta, got, want)
		}
	}
}

func TestUserContentErrors(t *testing.T) {
	cases := []struct{ content, msg string }{
		{`42`, i18n.MsgContentInvalid},
		{`{"type":"text","text":"x"}`, i18n.MsgContentInvalid},
		{`null`, i18n.MsgContentInvalid},
		{``, i18n.MsgContentInvalid},
		{`["x"]`, i18n.MsgContentInvalid},
		{`[null]`, i18n.MsgContentInvalid},
		{`[{"type":"text","text":5}]`, i18n.MsgContentInvalid},
		{`[{"type":"text"}]`, i18n.MsgContentInvalid},
		{`[{"type":"audio","source":{"type":"data","value":"AAAA","mimeType":"audio/wav"}}]`, i18n.MsgContentTypeUnsupported},
		{`[{"type":"video","source":{"type":"url","value":"https://x"}}]`, i18n.MsgContentTypeUnsupported},
		{`[{"type":"document","source":{"type":"data","value":"AAAA","mimeType":"application/pdf"}}]`, i18n.MsgContentTypeUnsupported},
		{`[{"type":"binary","mimeType":"image/png","data":"AAAA"}]`, i18n.MsgContentTypeUnsupported},
		{`[{"text":"no type"}]`, i18n.MsgContentTypeUnsupported},
		{`[{"type":"image","source":{"type":"url","value":"https://x/a.png","mimeType":"image/png"}}]`, i18n.MsgRemoteMediaUnsupported},
		{`[{"type":"image","source":{"type":"file","value":"h","provider":"p"}}]`, i18n.MsgRemoteMediaUnsupported},
		{`[{"type":"image"}]`, i18n.MsgRemoteMediaUnsupported},
		{`[` + imagePartJSON("image/svg+xml", "AAAA", "") + `]`, i18n.MsgImageMediaTypeUnsupported},
		{`[` + imagePartJSON("image/jpg", "AAAA", "") + `]`, i18n.MsgImageMediaTypeUnsupported},
		{`[` + imagePartJSON("\u0130mage/png", "AAAA", "") + `]`, i18n.MsgImageMediaTypeUnsupported},
		{`[` + imagePartJSON(" image/png", "AAAA", "") + `]`, i18n.MsgImageMediaTypeUnsupported},
		{`[{"type":"image","source":{"type":"data","value":"AAAA"}}]`, i18n.MsgImageMediaTypeUnsupported},
		{`[` + imagePartJSON("image/png", "QQ", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "QQ=", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "QQ===", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "QQ==QQ==", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "AA\\nAA", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "AA AA", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "-_-_", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "=AAA", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "AAAé", "") + `]`, i18n.MsgImageBase64Invalid},
		{`[{"type":"image","source":{"type":"data","value":5,"mimeType":"image/png"}}]`, i18n.MsgImageBase64Invalid},
		{`[` + imagePartJSON("image/png", "", "") + `]`, i18n.MsgImageInvalid},
		// The first failing part decides the message.
		{`[{"type":"audio"},` + imagePartJSON("image/bmp", "AAAA", "") + `]`, i18n.MsgContentTypeUnsupported},
	}
	for _, c := range cases {
		wantContentErr(t, c.content, c.msg)
	}
}

func TestUserContentBase64Tolerance(t *testing.T) {
	// Python's b64decode(validate=True) ignores non-zero trailing bits: "QR==" decodes to "A".
	in, err := UserContent(userMsg(`[` + imagePartJSON("image/gif", "QR==", "") + `]`))
	if err != nil || in.Parts[0].Data().(map[string]any)["bytes"] != "QR==" {
		t.Fatalf("got %v, %v", in, err)
	}
}

// b64 returns standard base64 of n zero bytes without building the bytes.
func b64(n int) string {
	s := strings.Repeat("AAAA", n/3)
	switch n % 3 {
	case 1:
		s += "AA=="
	case 2:
		s += "AAA="
	}
	return s
}

func imageValue(data string) map[string]any {
	return map[string]any{"type": "image", "source": map[string]any{"type": "data", "value": data, "mimeType": "image/png"}}
}

// The limits are exercised through convertList, the step right after JSON
// decoding, because decoding 30 MB of JSON under -race takes over a minute.
func TestUserContentSizeLimits(t *testing.T) {
	const mib = 1 << 20
	check := func(want string, images ...string) {
		t.Helper()
		list := make([]any, len(images))
		for i, d := range images {
			list[i] = imageValue(d)
		}
		_, err := convertList(list)
		var ce *ContentError
		switch {
		case want == "" && err != nil:
			t.Fatalf("unexpected %v", err)
		case want != "" && (!errors.As(err, &ce) || ce.Msg != want):
			t.Fatalf("got %v, want %q", err, want)
		}
	}
	img8, img2 := b64(8*mib), b64(2*mib)
	check("", img8, img2)                                  // 8 MiB image, 10 MiB total: accepted
	check(i18n.MsgImageTooLarge, b64(8*mib+1))             // one byte over per image
	check(i18n.MsgImagesTotalTooLarge, img8, img2, b64(1)) // one byte over in total
}
