package request

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/pyjson"
)

// canonical returns the bytes Digest hashes.
func canonical(t *testing.T, body string) string {
	t.Helper()
	v, err := decodeJSON([]byte(body))
	if err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	b, err := pyjson.Append(nil, v, pyjson.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each want is the output of
// json.dumps(json.loads(in), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
// derived by hand from CPython's rules (and spot-checked with CPython 3).
func TestCanonicalMatchesPython(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"sorted keys, literals", `{"b":1,"a":[true,false,null]}`, `{"a":[true,false,null],"b":1}`},
		{"whitespace and nesting",
			` { "a" : { "c" : [ 1 , { "e" : "f" , "d" : "g" } ] , "b" : {} } , "0" : [ ] } `,
			`{"0":[],"a":{"b":{},"c":[1,{"d":"g","e":"f"}]}}`},
		{"duplicate key keeps last", `{"a":1,"a":2}`, `{"a":2}`},
		{"integers as written, -0 is 0",
			`{"n":123456789012345678901234567890,"m":-0,"k":-17,"j":0}`,
			`{"j":0,"k":-17,"m":0,"n":123456789012345678901234567890}`},
		// repr(float): 1.0, 0.1, 1e-05, 1e+16, 100.0 ...
		{"float repr",
			`{"x":1.0,"y":1e2,"z":0.1,"w":1e-5,"v":1e16,"u":-0.0,"t":1E+2,"s":1e15,"r":0.0001,"q":123.456e1}`,
			`{"q":1234.56,"r":0.0001,"s":1000000000000000.0,"t":100.0,"u":-0.0,"v":1e+16,"w":1e-05,"x":1.0,"y":100.0,"z":0.1}`},
		{"float repr extremes",
			`[5e-324,1.7976931348623157e308,2.5e-5,1.5e16,9999999999999998.0,0.30000000000000004,1e-400,-1e-400,-2.5,1e22,123456789.125]`,
			`[5e-324,1.7976931348623157e+308,2.5e-05,1.5e+16,9999999999999998.0,0.30000000000000004,0.0,-0.0,-2.5,1e+22,123456789.125]`},
		// float('1e400') is inf; json.dumps writes Infinity (allow_nan=True).
		{"overflow", `{"a":1e400,"b":-1e400}`, `{"a":Infinity,"b":-Infinity}`},
		// ensure_ascii=False: only " \ and C0 controls are escaped; / < > & U+007F U+2028 stay raw.
		{"string escaping",
			`{"s":"a\"b\\c\/d<e>&\u00e9\u4e2d\n\r\t\b\f\u0001\u001f\u007f\u2028\ud83d\ude00"}`,
			"{\"s\":\"a\\\"b\\\\c/d<e>&é中\\n\\r\\t\\b\\f\\u0001\\u001f\x7f\u2028😀\"}"},
		// Python sorts by code point: U+FB00 before U+1F600 (UTF-16 order would differ).
		{"key order by code point",
			`{"é":1,"z":2,"Z":3,"a":4,"中":5,"😀":6,"ﬀ":7,"":8}`,
			`{"":8,"Z":3,"a":4,"z":2,"é":1,"中":5,"ﬀ":7,"😀":6}`},
		{"escaped key", `{"k\"ey\u0000":"v"}`, `{"k\"ey\u0000":"v"}`},
		{"scalar top level", `"x"`, `"x"`},
	}
	for _, c := range cases {
		if got := canonical(t, c.in); got != c.want {
			t.Errorf("%s:\n got  %s\n want %s", c.name, got, c.want)
		}
	}
}

func TestDigestKnownValues(t *testing.T) {
	cases := []struct{ in, want string }{
		// hashlib.sha256(b"{}").hexdigest()
		{`{ }`, "44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a"},
	}
	for _, c := range cases {
		got, err := Digest([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("Digest(%s) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	// The digest is SHA-256 of the canonical form.
	body := `{"threadId":"thread-1","runId":"run-1","state":{},"messages":[{"id":"message-1","role":"user","content":"Crea una plantilla de VPC"}],"tools":[],"context":[],"forwardedProps":{"iacCode":{"schemaVersion":1,"rosInvocationId":"invocation-1","cwd":"/workspace/session-1","runMode":"normal"}}}`
	sum := sha256.Sum256([]byte(canonical(t, body)))
	got, err := Digest([]byte(body))
	if err != nil || got != hex.EncodeToString(sum[:]) {
		t.Fatalf("Digest = %s, %v", got, err)
	}
	// hashlib.sha256(json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()).hexdigest()
	if want := "1b4c52ff37aecc5126668f0b066deeaca472aad5dd8c0f961207f5454ab4a5a5"; got != want {
		t.Fatalf("Digest = %s, want %s", got, want)
	}
}

func TestDigestReorderedKeysEqual(t *testing.T) {
	a, _ := Digest([]byte(`{"runId":"r","threadId":"t","x":{"b":[1,2.50],"a":"é"}}`))
	b, _ := Digest([]byte("{\n \"x\": {\"a\": \"\\u00e9\", \"b\": [1, 2.5]},\n \"threadId\": \"t\", \"runId\": \"r\"\n}"))
	if a == "" || a != b {
		t.Fatalf("digests differ: %s vs %s", a, b)
	}
	c, _ := Digest([]byte(`{"runId":"r","threadId":"t","x":{"b":[2.5,1],"a":"é"}}`))
	if c == a {
		t.Fatal("array order must change the digest")
	}
}

func TestDigestRejectsInvalidJSON(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1}{}`, `{"a":NaN}`, `[1,]`} {
		if d, err := Digest([]byte(in)); err == nil {
			t.Errorf("Digest(%q) = %s, want error", in, d)
		}
	}
}
