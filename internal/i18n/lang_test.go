package i18n

import (
	"slices"
	"testing"
)

func TestSupported(t *testing.T) {
	want := []Lang{"en", "zh", "es", "fr", "de", "ja", "pt"}
	got := Supported()
	if !slices.Equal(got, want) {
		t.Fatalf("Supported() = %v, want %v", got, want)
	}
	got[0] = "xx" // a caller's change must not leak into the package
	if Supported()[0] != EN {
		t.Fatal("Supported() returned the package's own slice")
	}
	if Default != EN {
		t.Fatalf("Default = %q, want en", Default)
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct {
		in   string
		want Lang
		ok   bool
	}{
		{"en", EN, true},
		{"zh-CN", ZH, true},
		{"zh_TW", ZH, true},
		{"  ES-mx ", ES, true},
		{"FR", FR, true},
		{"de-DE-1996", DE, true},
		{"ja-JP", JA, true},
		{"pt_BR", PT, true},
		{"it", EN, false},
		{"", EN, false},
		{"*", EN, false},
		{"-zh", EN, false},
		{"zhx", EN, false},
		{"e n", EN, false},
	}
	for _, c := range cases {
		got, ok := Normalize(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("Normalize(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestFromAcceptLanguage(t *testing.T) {
	cases := []struct {
		header string
		want   Lang
	}{
		// The two examples of protocol.md §2.9.
		{"ja-JP, en;q=0.5", JA},
		{"zh;q=0, en;q=0.2, ja;q=1", JA},
		{"", EN},
		{"fr", FR},
		{"it, de;q=0.1", DE},                // unsupported dropped
		{"de;q=0.5, fr;q=0.5", DE},          // tie: earliest wins
		{"de;q=0.5, fr;q=0.8", FR},          // highest q wins
		{"*;q=0.9, ja;q=0.8", EN},           // * is the server default
		{"ja;q=0.5, *", EN},                 // * with implicit q=1
		{"zh;q=abc, pt;q=0.1", PT},          // invalid q counts as 0
		{"zh;q=1.5, pt;q=0.1", PT},          // q > 1 dropped
		{"zh;q=-1, pt;q=0.1", PT},           // negative dropped
		{"zh;q=NaN, pt;q=0.1", PT},          // non-finite dropped
		{"zh;q=inf, pt;q=0.1", PT},          // non-finite dropped
		{"zh;q=0x1p-1, pt;q=0.1", PT},       // hex float is not a q-value
		{"zh;q=, pt;q=0.1", PT},             // empty q is invalid
		{"zh; Q=0.9 ,pt ; q = 0.95", PT},    // spaces and upper-case Q
		{"zh;level=1, ja;q=0.9", ZH},        // other params ignored
		{",,, ;q=1, es", ES},                // empty entries dropped
		{"pt-BR;q=0.3, es-ES;q=0.3000", PT}, // equal after parsing
		{"en-US,en;q=0.9,zh-CN;q=0.8", EN},  // browser style
		{"zh-CN,zh;q=0.9,en;q=0.8", ZH},
		{"xx, yy;q=0.4", EN}, // none supported
		{"ja;q=0.001", JA},
		{";;;", EN},
		{"de;q=1;q=0", EN}, // the last q decides; 0 drops it
	}
	for _, c := range cases {
		if got := FromAcceptLanguage(c.header); got != c.want {
			t.Errorf("FromAcceptLanguage(%q) = %q, want %q", c.header, got, c.want)
		}
	}
}

func TestResolve(t *testing.T) {
	cases := []struct {
		preferred, accept string
		want              Lang
	}{
		{"es", "ja", ES},
		{"zh-CN", "", ZH},
		{"it", "de", DE}, // unsupported preference falls back to the header
		{"", "fr;q=0.4", FR},
		{"", "", EN},
		{"  ", "xx", EN},
	}
	for _, c := range cases {
		if got := Resolve(c.preferred, c.accept); got != c.want {
			t.Errorf("Resolve(%q, %q) = %q, want %q", c.preferred, c.accept, got, c.want)
		}
	}
}

func TestFromLocaleEnv(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want Lang
	}{
		{map[string]string{"LANG": "zh_CN.UTF-8"}, ZH},
		{map[string]string{"LANG": "de_DE@euro"}, DE},
		{map[string]string{"LANG": "C"}, EN},
		{map[string]string{"LANG": "POSIX"}, EN},
		{map[string]string{"LANG": "C.UTF-8"}, EN},
		{map[string]string{"LANG": "it_IT.UTF-8"}, EN},
		{map[string]string{}, EN},
		{map[string]string{"LC_MESSAGES": "ja_JP.UTF-8", "LANG": "fr_FR.UTF-8"}, JA},
		{map[string]string{"LC_ALL": "pt_BR.UTF-8", "LC_MESSAGES": "ja_JP", "LANG": "fr_FR"}, PT},
		// The first set variable decides even when unsupported, as setlocale does.
		{map[string]string{"LC_ALL": "C", "LANG": "es_ES.UTF-8"}, EN},
		{map[string]string{"LC_ALL": "", "LANG": "es_ES.UTF-8"}, ES},
	}
	for _, c := range cases {
		getenv := func(k string) string { return c.env[k] }
		if got := FromLocaleEnv(getenv); got != c.want {
			t.Errorf("FromLocaleEnv(%v) = %q, want %q", c.env, got, c.want)
		}
	}
	if got := FromLocaleEnv(nil); got != EN {
		t.Errorf("FromLocaleEnv(nil) = %q, want en", got)
	}
}

func FuzzFromAcceptLanguage(f *testing.F) {
	for _, s := range []string{"ja-JP, en;q=0.5", "zh;q=0, en;q=0.2, ja;q=1", "*", "", ";q=", "de;q=1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		got := FromAcceptLanguage(header)
		if !slices.Contains(Supported(), got) {
			t.Fatalf("FromAcceptLanguage(%q) = %q, not supported", header, got)
		}
	})
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"zh_CN", " EN-us ", "", "-", "\u00e9s"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, tag string) {
		got, ok := Normalize(tag)
		if !slices.Contains(Supported(), got) {
			t.Fatalf("Normalize(%q) = %q, not supported", tag, got)
		}
		if !ok && got != Default {
			t.Fatalf("Normalize(%q) = %q, false; want the default", tag, got)
		}
		if again, ok2 := Normalize(string(got)); again != got || !ok2 {
			t.Fatalf("Normalize is not idempotent on %q: %q", got, again)
		}
	})
}

func BenchmarkFromAcceptLanguage(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		FromAcceptLanguage("en-US,en;q=0.9,zh-CN;q=0.8,ja;q=0.7,*;q=0.1")
	}
}
