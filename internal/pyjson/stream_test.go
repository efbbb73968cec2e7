package pyjson

import (
	"bytes"
	"testing"
)

// TestAppendTextMatchesAppend: the streaming form is byte-equal to
// decoding then appending, on the shapes that matter for digests.
func TestAppendTextMatchesAppend(t *testing.T) {
	for _, raw := range []string{
		`null`, `true`, `false`, `"a\u00e9\ud83d\ude00<>&\u2028"`, `0`, `-0`, `1.0`, `1e5`, `1E+2`, `12345678901234567890`, `1.5e-7`,
		`[]`, `{}`, `[1,[2,[3,{}]],"x"]`,
		`{"b":1,"a":{"d":[1,2],"c":null},"é":"v","A":true}`,
		`{"k":1,"k":{"z":2},"j":0}`, // duplicate: the last wins
		` { "threadId" : "t" , "extra" : [1,2,3] } `,
		`"\ud800"`, // lone surrogate: U+FFFD, as encoding/json decodes it
	} {
		v, err := Decode([]byte(raw))
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		want, err := Append(nil, v, Options{})
		if err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		got, err := AppendText(nil, []byte(raw))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: got %s (%v), want %s", raw, got, err, want)
		}
	}
	for _, bad := range []string{`{"a":1} x`, `[1,`, `{"a"}`, ``} {
		if _, err := AppendText(nil, []byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

func FuzzAppendText(f *testing.F) {
	for _, s := range []string{`{"b":[1,2.50,{"x":null}],"a":"é"}`, `[1e400]`, `{"a":1,"a":2}`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		v, err := Decode(raw)
		got, gerr := AppendText(nil, raw)
		if err != nil {
			if gerr == nil {
				t.Fatalf("AppendText accepted what Decode refused: %q", raw)
			}
			return
		}
		want, werr := Append(nil, v, Options{})
		if (werr != nil) != (gerr != nil) || werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("%q: got %q %v, want %q %v", raw, got, gerr, want, werr)
		}
	})
}
