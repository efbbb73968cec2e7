package jsonstr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendEscaping(t *testing.T) {
	cases := []struct{ in, want string }{
		{`say "hi"`, `"say \"hi\""`},
		{`C:\path`, `"C:\\path"`},
		{"line1\nline2\r\n", `"line1\nline2\r\n"`},
		{"tab\tbs\bff\f", `"tab\tbs\bff\f"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"bad\xffutf8\xc3", `"bad\ufffdutf8\ufffd"`},
		{"<html>&amp;", `"<html>&amp;"`},
		{"emoji 🚀 and 中文 and é", `"emoji 🚀 and 中文 and é"`},
		{`\u2028 as text`, `"\\u2028 as text"`},
		{"", `""`},
	}
	for _, tc := range cases {
		if got := string(Append(nil, tc.in)); got != tc.want {
			t.Errorf("Append(%q) = %s, want %s", tc.in, got, tc.want)
		}
		checkMatchesEncodingJSON(t, tc.in)
	}
}

// Each want is what CPython 3 prints for json.dumps(s, ensure_ascii=False);
// the invalid-UTF-8 case is what it prints for the str that
// bytes.decode("utf-8", "replace") gives.
func TestAppendPythonEscaping(t *testing.T) {
	cases := []struct{ in, want string }{
		{"\"\\\n\r\t\b\f\x01/<>&é\u2028", `"\"\\\n\r\t\b\f\u0001/<>&é` + "\u2028" + `"`},
		{"a\u2029b", "\"a\u2029b\""},
		{"\x00\x1f\x7f", `"\u0000\u001f` + "\x7f" + `"`},
		{"bad\xffutf8\xc3", "\"bad\ufffdutf8\ufffd\""},
		{"emoji 🚀 中文", `"emoji 🚀 中文"`},
		{"", `""`},
	}
	for _, tc := range cases {
		if got := string(AppendPython(nil, tc.in)); got != tc.want {
			t.Errorf("AppendPython(%q) = %s, want %s", tc.in, got, tc.want)
		}
		checkMatchesPython(t, tc.in)
	}
}

func TestAppendKeepsPrefixAndDoesNotAllocate(t *testing.T) {
	buf := make([]byte, 0, 256)
	buf = append(buf, "x:"...)
	if got := string(Append(buf, "a\nb")); got != `x:"a\nb"` {
		t.Fatalf("Append kept no prefix: %s", got)
	}
	s := "text with \"quotes\", a \u2028, 中文 and \xff"
	if n := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], s) }); n != 0 {
		t.Errorf("Append allocates %v times into a large enough buffer", n)
	}
	if n := testing.AllocsPerRun(100, func() { buf = AppendPython(buf[:0], s) }); n != 0 {
		t.Errorf("AppendPython allocates %v times into a large enough buffer", n)
	}
}

// checkMatchesEncodingJSON compares Append with encoding/json (HTML
// escaping off), the reference for the AG-UI wire.
func checkMatchesEncodingJSON(t *testing.T, s string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(buf.String(), "\n")
	got := string(Append(nil, s))
	if got != want {
		t.Fatalf("Append(%q) = %s, encoding/json = %s", s, got, want)
	}
	if strings.ContainsAny(got, "\n\r\u2028\u2029") || !utf8.ValidString(got) {
		t.Fatalf("unsafe output %q", got)
	}
}

// pythonReference is CPython's py_encode_basestring (json/encoder.py,
// ESCAPE_DCT) applied to the str Python would hold: ranging over a Go
// string decodes each invalid byte to U+FFFD, as errors="replace" does.
func pythonReference(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 {
				fmt.Fprintf(&b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

func checkMatchesPython(t *testing.T, s string) {
	t.Helper()
	got := string(AppendPython(nil, s))
	if want := pythonReference(s); got != want {
		t.Fatalf("AppendPython(%q) = %s, Python = %s", s, got, want)
	}
	// Both forms denote the same string.
	var a, p string
	if err := json.Unmarshal(Append(nil, s), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(got), &p); err != nil || p != a {
		t.Fatalf("AppendPython(%q) decodes to %q (%v), Append to %q", s, p, err, a)
	}
}

func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\n", "\u2028", "\xff", "🚀", "\x00<>&", `\u2028`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMatchesEncodingJSON(t, s)
	})
}

func FuzzAppendPython(f *testing.F) {
	for _, s := range []string{"", "a\"b", "\n", "\u2028", "\xff", "🚀", "\x00<>&", "\x7f\xc3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkMatchesPython(t, s)
	})
}

func FuzzAppendSanitized(f *testing.F) {
	f.Add(`{"a":"b"}`)
	f.Add("\"\u2028\xff\"")
	f.Fuzz(func(t *testing.T, s string) {
		if !json.Valid([]byte(s)) {
			return
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, []byte(s)); err != nil {
			t.Fatal(err)
		}
		out := AppendSanitized(nil, compact.Bytes())
		if !json.Valid(out) || !utf8.Valid(out) || bytes.Contains(out, []byte("\u2028")) || bytes.ContainsAny(out, "\r\n") {
			t.Fatalf("sanitized %q -> %q", s, out)
		}
	})
}

var (
	benchASCII = strings.Repeat("Hello, world! terraform plan -out=tfplan 12345 ", 8)
	benchMixed = strings.Repeat("部署 VPC \"vpc-1\" 到 cn-hangzhou\n", 8)
)

func BenchmarkAppend(b *testing.B) {
	for _, c := range []struct{ name, s string }{{"ascii", benchASCII}, {"mixed", benchMixed}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			for b.Loop() {
				buf = Append(buf[:0], c.s)
			}
		})
	}
}

func BenchmarkAppendPython(b *testing.B) {
	for _, c := range []struct{ name, s string }{{"ascii", benchASCII}, {"mixed", benchMixed}} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(len(c.s)))
			b.ReportAllocs()
			for b.Loop() {
				buf = AppendPython(buf[:0], c.s)
			}
		})
	}
}
