package pyjson

import (
	"encoding/json"
	"math"
	"testing"
)

// Each want is what CPython 3 prints for json.dumps of the value with
// sort_keys=True, separators=(",", ":"), ensure_ascii=False.
func TestAppendMatchesPython(t *testing.T) {
	cases := []struct {
		name string
		v    any
		want string
	}{
		{"repr floats", []any{1.0, 0.1, 1e-05, 1e16, 1e15, 100.0, math.Copysign(0, -1), 1.5e300, 0.0001, 123456.789}, `[1.0,0.1,1e-05,1e+16,1000000000000000.0,100.0,-0.0,1.5e+300,0.0001,123456.789]`},
		{"non-finite", []any{math.Inf(1), math.Inf(-1), math.NaN()}, `[Infinity,-Infinity,NaN]`},
		{"number literals", []any{json.Number("1.0"), json.Number("1e2"), json.Number("-0"), json.Number("123456789012345678901234567890"), json.Number("1e400")}, `[1.0,100.0,0,123456789012345678901234567890,Infinity]`},
		{"sorted keys by code point", map[string]any{"b": 1, "a": 2, "ﬀ": 3, "😀": 4, "Z": 5}, `{"Z":5,"a":2,"b":1,"ﬀ":3,"😀":4}`},
		{"escaping", "\"\\\n\r\t\b\f\x01/<>&é\u2028", `"\"\\\n\r\t\b\f\u0001/<>&é` + "\u2028" + `"`},
		{"invalid utf-8", "a\xffb", "\"a\ufffdb\""},
		{"raw message", json.RawMessage(`{"b":[1.5,2],"a":null}`), `{"a":null,"b":[1.5,2]}`},
		{"struct via encoding/json", struct {
			B int    `json:"b"`
			A string `json:"a"`
		}{2, "x"}, `{"a":"x","b":2}`},
	}
	for _, c := range cases {
		got, err := Append(nil, c.v, Options{})
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %s (%v), want %s", c.name, got, err, c.want)
		}
	}
}

func TestIntegralFloatsAsInts(t *testing.T) {
	got, err := Append(nil, map[string]any{"n": 3.0, "f": 2.5, "big": 1e21}, Options{IntegralFloatsAsInts: true})
	if want := `{"big":1e+21,"f":2.5,"n":3}`; err != nil || string(got) != want {
		t.Fatalf("got %s (%v), want %s", got, err, want)
	}
}

func TestDecodeRejectsTrailingData(t *testing.T) {
	for _, in := range []string{`{}}`, `{} x`, `[1] [2]`} {
		if _, err := Decode([]byte(in)); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
	if v, err := Decode([]byte(` {"a":1.0} `)); err != nil || v.(map[string]any)["a"] != json.Number("1.0") {
		t.Fatalf("decode: %v %v", v, err)
	}
}
