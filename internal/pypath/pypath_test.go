package pypath

import (
	"slices"
	"testing"
)

func env(m map[string]string) Lookup {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// Expected values follow CPython's posixpath.expanduser and expandvars.
func TestExpand(t *testing.T) {
	e := env(map[string]string{"HOME": "/home/u/", "A": "x", "EMPTY": ""})
	cases := []struct{ fn, in, want string }{
		{"user", "~", "/home/u"},
		{"user", "~/work", "/home/u/work"},
		{"user", "/abs/~", "/abs/~"},
		{"user", "~no-such-user-agui/x", "~no-such-user-agui/x"},
		{"user", "~root/x", "/root/x"},
		{"vars", "$A/${A}/$B/${B}/$EMPTY/$/${", "x/x/$B/${B}//$/${"},
		{"vars", "a$A_b", "a$A_b"},
	}
	for _, c := range cases {
		got := ExpandUser(c.in, e)
		if c.fn == "vars" {
			got = ExpandVars(c.in, e)
		}
		if got != c.want {
			t.Errorf("%s(%q) = %q, want %q", c.fn, c.in, got, c.want)
		}
	}
	if got := ExpandUser("~", env(map[string]string{"HOME": "/"})); got != "/" {
		t.Errorf("home / gives %q", got)
	}
}

func TestReferences(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"/a/b", nil},
		{"/$A/${B}/$A", []string{"A", "B", "A"}},
		{"$", nil},
		{"a$-b$", nil},
		{"${}x", []string{""}},
		{"${open", nil},
		{"$1x_y.z", []string{"1x_y"}},
		{"$$A", []string{"A"}},
	} {
		if got := References(c.in); !slices.Equal(got, c.want) {
			t.Errorf("References(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
