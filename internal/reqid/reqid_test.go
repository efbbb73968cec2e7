package reqid

import (
	"context"
	"strings"
	"testing"
)

func TestSane(t *testing.T) {
	for _, id := range []string{"a", "req-1", "4bf92f3577b34da6a3ce929d0e0e4736", "trace:span/1+x=@y_z.0", strings.Repeat("x", MaxLen)} {
		if !Sane(id) {
			t.Errorf("Sane(%q) = false", id)
		}
	}
	for _, id := range []string{"", " ", "a b", "x\ny", `q"uote`, "é", "a\x00", "<script>", strings.Repeat("x", MaxLen+1)} {
		if Sane(id) {
			t.Errorf("Sane(%q) = true", id)
		}
	}
}

func TestFromClient(t *testing.T) {
	if got := FromClient("client-7"); got != "client-7" {
		t.Fatalf("FromClient(sane) = %q", got)
	}
	got := FromClient("has space")
	if len(got) != 36 || got == FromClient("has space") || !Sane(got) {
		t.Fatalf("FromClient(insane) = %q, want a fresh UUID", got)
	}
}

func TestContext(t *testing.T) {
	if From(context.Background()) != "" {
		t.Fatal("empty context has an id")
	}
	if got := From(With(context.Background(), "r-1")); got != "r-1" {
		t.Fatalf("From = %q", got)
	}
}
