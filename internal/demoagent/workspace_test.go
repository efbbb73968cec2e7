package demoagent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteWorkspaceFile: the normal turn writes what it claims, never
// overwrites other content, and says what it did.
func TestWriteWorkspaceFile(t *testing.T) {
	ws := t.TempDir()
	path := filepath.Join(ws, "vpc.yaml")
	if got := writeWorkspaceFile(ws, "vpc.yaml", "a: 1\n"); got != "Wrote 5 bytes to "+path {
		t.Fatalf("first write: %q", got)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "a: 1\n" {
		t.Fatalf("file %q %v", b, err)
	}
	if got := writeWorkspaceFile(ws, "vpc.yaml", "a: 1\n"); !strings.HasSuffix(got, "(unchanged)") {
		t.Fatalf("same content: %q", got)
	}
	if got := writeWorkspaceFile(ws, "vpc.yaml", "b: 2\n"); !strings.Contains(got, "never overwrites") {
		t.Fatalf("other content: %q", got)
	}
	if b, _ := os.ReadFile(path); string(b) != "a: 1\n" {
		t.Fatalf("the user's file changed: %q", b)
	}
	if got := writeWorkspaceFile("relative", "vpc.yaml", "x"); !strings.HasPrefix(got, "Did not write") {
		t.Fatalf("relative workspace: %q", got)
	}
	if got := writeWorkspaceFile(filepath.Join(ws, "missing"), "vpc.yaml", "x"); got != "Did not write "+filepath.Join(ws, "missing", "vpc.yaml")+": no such file or directory" {
		t.Fatalf("missing workspace: %q", got)
	}
}
