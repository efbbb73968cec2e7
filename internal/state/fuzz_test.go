package state

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// addDocuments seeds f with the original's files and the test base
// document.
func addDocuments(f *testing.F) {
	for _, name := range []string{"original-thread-1.json", "original-thread-1.resaved.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	base, _ := json.Marshal(baseDoc())
	f.Add(base)
}

func FuzzLoad(f *testing.F) {
	addDocuments(f)
	f.Add([]byte(`{"schemaVersion":1,"threadId":"thread-1"}`))
	f.Add([]byte(`[{"schemaVersion":1}]`))
	f.Add([]byte("\xff\xfe"))

	f.Fuzz(func(t *testing.T, data []byte) {
		th, err := Decode(data, "thread-1")
		if err != nil {
			if !errors.Is(err, ErrUnavailable) || th != nil {
				t.Fatalf("Decode = %v, %v; want nil and ErrUnavailable", th, err)
			}
			return
		}
		if th.ThreadID != "thread-1" || th.SchemaVersion != 1 {
			t.Fatalf("accepted a document of %q v%d", th.ThreadID, th.SchemaVersion)
		}
		// Whatever Decode accepts, Encode writes and Decode reads back
		// unchanged.
		again, err := Encode(th)
		if err != nil {
			t.Fatalf("Encode of a decoded document: %v", err)
		}
		back, err := Decode(again, "thread-1")
		if err != nil || !reflect.DeepEqual(back, th) {
			t.Fatalf("reload = %+v, %v; want %+v", back, err, th)
		}
	})
}

func FuzzFileKey(f *testing.F) {
	for _, s := range []string{"Thread-1", "thread-1", "con", "com1.txt", "a.", ".", "..", "Ünïcode",
		"../external/thread", strings.Repeat("T", 115), strings.Repeat("会话", 40), "a\x00b", "\xff"} {
		f.Add(s, strings.ToLower(s))
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		ka, errA := FileKey(a)
		kb, errB := FileKey(b)
		for _, c := range []struct {
			id, key string
			err     error
		}{{a, ka, errA}, {b, kb, errB}} {
			if c.id == "" {
				if !errors.Is(c.err, ErrInvalidThreadID) {
					t.Fatalf("FileKey(\"\") = %q, %v", c.key, c.err)
				}
				continue
			}
			checkKey(t, c.id, c.key, c.err)
		}
		if a != "" && b != "" && a != b && ka == kb {
			t.Fatalf("distinct ids %q and %q share key %q", a, b, ka)
		}
		if a != "" && b != "" && a != b && strings.EqualFold(ka, kb) {
			t.Fatalf("keys %q and %q differ only by case", ka, kb)
		}
	})
}

func checkKey(t *testing.T, id, key string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("FileKey(%q): %v", id, err)
	}
	// Room for ".<key>.json.<8 random>.tmp" within NAME_MAX.
	if key == "" || len(key) > maxPlainKeyLen || key == "." || key == ".." || strings.HasSuffix(key, ".") {
		t.Fatalf("FileKey(%q) = %q: unsafe name", id, key)
	}
	for _, c := range []byte(key) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_.~-", c) >= 0) {
			t.Fatalf("FileKey(%q) = %q: byte %q", id, key, c)
		}
	}
	switch {
	case strings.HasPrefix(key, encodedKeyPrefix):
		if raw, err := hex.DecodeString(key[len(encodedKeyPrefix):]); err != nil || string(raw) != id {
			t.Fatalf("FileKey(%q) = %q does not decode back", id, key)
		}
	case strings.HasPrefix(key, hashedKeyPrefix):
		if len(key) != len(hashedKeyPrefix)+64 {
			t.Fatalf("FileKey(%q) = %q: bad hash key", id, key)
		}
	case key != id:
		t.Fatalf("FileKey(%q) = %q: plain key differs from the id", id, key)
	}
}
