package state

import (
	"errors"
	"strings"
	"testing"
)

func TestFileKey(t *testing.T) {
	// Expected keys computed with the original's Python algorithm.
	cases := []struct{ id, want string }{
		{"Thread-1", "aguiid~5468726561642d31"},
		{"thread-1", "thread-1"},
		{"con", "aguiid~636f6e"},
		{"Con", "aguiid~436f6e"},
		{"com1.txt", "aguiid~636f6d312e747874"},
		{"nul.tar.gz", "aguiid~6e756c2e7461722e677a"},
		{"lpt9", "aguiid~6c707439"},
		{"com0", "com0"},
		{"console", "console"},
		{"a.b", "a.b"},
		{"a.", "aguiid~612e"},
		{"x..", "aguiid~782e2e"},
		{".", "aguiid~2e"},
		{"..", "aguiid~2e2e"},
		{"Ünïcode", "aguiid~c39c6ec3af636f6465"},
		{"../external/thread", "aguiid~2e2e2f65787465726e616c2f746872656164"},
		{strings.Repeat("T", 115), "aguihash~2eb2ea958853877e419adce7d78cc7fc5e28da6310a964d27bee9ca936c2d972"},
		{strings.Repeat("会话", 40), "aguihash~bbe0656457adafa823fccfc16a90974dd63d01b7132e0a2d14b550bdd32e9510"},
		// The 200-character limit counts the prefix: 7+2*96 = 199 fits,
		// 7+2*97 = 201 does not.
		{strings.Repeat("A", 96), "aguiid~" + strings.Repeat("41", 96)},
		{strings.Repeat("A", 97), "aguihash~eb9f8b69313e19e14b1043b3cac05d18d40321536ad485be8145007aefa9295d"},
	}
	for _, c := range cases {
		got, err := FileKey(c.id)
		if err != nil || got != c.want {
			t.Errorf("FileKey(%q) = %q, %v; want %q", c.id, got, err, c.want)
		}
	}
}

func TestFileKeyNamesStayShort(t *testing.T) {
	for _, id := range []string{strings.Repeat("T", 115), strings.Repeat("会话", 40)} {
		key, _ := FileKey(id)
		if name := key + ".json"; len(name) >= 100 || !strings.HasPrefix(key, "aguihash~") {
			t.Errorf("FileKey(%.10q…) = %q (%d chars), want an aguihash~ name under 100 chars", id, name, len(name))
		}
	}
}

func TestFileKeyLongPlainIDs(t *testing.T) {
	fits := strings.Repeat("a", maxPlainKeyLen)
	if got, _ := FileKey(fits); got != fits {
		t.Errorf("236-char plain id: got %q", got)
	}
	// 237 characters would overflow NAME_MAX in the temp file name.
	got, _ := FileKey(fits + "a")
	if !strings.HasPrefix(got, "aguihash~") || len(got) != len("aguihash~")+64 {
		t.Errorf("237-char plain id: got %q, want an aguihash~ key", got)
	}
}

func TestFileKeyEmpty(t *testing.T) {
	if _, err := FileKey(""); !errors.Is(err, ErrInvalidThreadID) {
		t.Fatalf("FileKey(\"\") error = %v, want ErrInvalidThreadID", err)
	}
}

func TestContextIDFor(t *testing.T) {
	if got := ContextIDFor("thread-1"); got != "agui-4b0a5fefc328e6b9257bc535e3c5d26fec36b52f" {
		t.Errorf("ContextIDFor(thread-1) = %q", got)
	}
	if got := ContextIDFor("会话-1"); got != "agui-611a498b849c24419ba931a77442e24f85a776ed" {
		t.Errorf("ContextIDFor(会话-1) = %q", got)
	}
}
