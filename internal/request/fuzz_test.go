package request

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"sort"
	"testing"
	"unicode/utf8"

	"github.com/iac-code-agui/iac-code-agui/internal/agui"
)

func FuzzParseForwardedProps(f *testing.F) {
	f.Add([]byte(`{"iacCode":` + minimal + `}`))
	f.Add([]byte(`{"iac_code":{"schema_version":1,"ros_invocation_id":"r","cwd":"/w","thinking":{"budget":3},"llm_headers":{}}}`))
	f.Add([]byte(`{"iacCode":{"schemaVersion":1.0}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		ic, err := ParseForwardedProps(raw)
		if err != nil {
			if ic != nil || !errors.Is(err, ErrInvalidForwardedProps) {
				t.Fatalf("got %v, %v", ic, err)
			}
			return
		}
		if n := utf8.RuneCountInString(ic.RosInvocationID); ic.SchemaVersion != 1 || n < 1 || n > 256 {
			t.Fatalf("accepted invalid %+v", *ic)
		}
		if ic.Thinking != nil && ic.Thinking.Budget < 0 {
			t.Fatalf("negative budget %d", ic.Thinking.Budget)
		}
		_ = Metadata(ic, ic.CWD, "en")
		_ = Redacted(ic)
	})
}

func FuzzUserContent(f *testing.F) {
	f.Add([]byte(`"hello"`))
	f.Add([]byte(`[{"type":"text","text":"a"},{"type":"image","source":{"type":"data","value":"AAAA","mimeType":"image/png"},"metadata":{"filename":"x.png"}}]`))
	f.Add([]byte(`[{"type":"image","source":{"type":"url","value":"http://x"}}]`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, content []byte) {
		in, err := UserContent([]agui.Message{{ID: "m", Role: "user", Content: content}})
		if err != nil {
			var ce *ContentError
			if in != nil || !errors.As(err, &ce) || ce.Msg == "" {
				t.Fatalf("got %v, %v", in, err)
			}
			return
		}
		if in.MessageID != "m" {
			t.Fatalf("message id %q", in.MessageID)
		}
		for _, p := range in.Parts {
			if _, err := json.Marshal(p); err != nil {
				t.Fatalf("part does not marshal: %v", err)
			}
		}
	})
}

// writeReordered writes v with keys in reverse order and extra whitespace,
// keeping number literals unchanged.
func writeReordered(w *bufio.Writer, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Sort(sort.Reverse(sort.StringSlice(keys)))
		w.WriteString("{ ")
		for i, k := range keys {
			if i > 0 {
				w.WriteString(" ,\n")
			}
			b, _ := json.Marshal(k)
			w.Write(b)
			w.WriteString(" : ")
			writeReordered(w, x[k])
		}
		w.WriteString(" }")
	case []any:
		w.WriteString("[ ")
		for i, e := range x {
			if i > 0 {
				w.WriteString(" , ")
			}
			writeReordered(w, e)
		}
		w.WriteString(" ]")
	case json.Number:
		w.WriteString(x.String())
	default:
		b, _ := json.Marshal(x)
		w.Write(b)
	}
}

func FuzzDigest(f *testing.F) {
	f.Add([]byte(`{"b":1,"a":{"d":[1.0,2e5,"x\u00e9"],"c":null}}`))
	f.Add([]byte(`[1e400,-0,-0.0,"\u0000<>&"]`))
	f.Add([]byte(`{"é":1,"😀":2,"ﬀ":3}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) {
			// The server refuses such a body before its digest (INVALID_JSON);
			// decoding would merge keys whose bytes differ ("\xa9", "\x80"
			// both become U+FFFD), so the reordered body is another request.
			t.Skip()
		}
		d1, err := Digest(body)
		v, perr := decodeJSON(body)
		if (err == nil) != (perr == nil) {
			t.Fatalf("Digest err %v, decode err %v", err, perr)
		}
		if err != nil {
			return
		}
		if len(d1) != 64 {
			t.Fatalf("digest %q", d1)
		}
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		writeReordered(w, v)
		_ = w.Flush()
		d2, err := Digest(buf.Bytes())
		if err != nil || d1 != d2 {
			t.Fatalf("reordered digest %s, %v; want %s\n%s", d2, err, d1, buf.Bytes())
		}
	})
}
