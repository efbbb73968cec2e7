package docrefs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepository keeps the references of this repository true.
func TestRepository(t *testing.T) {
	problems, err := Check(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
	for name, rel := range Docs {
		if _, err := os.Stat(filepath.Join("..", "..", filepath.FromSlash(rel))); err != nil {
			t.Errorf("%s (cited as %s) is missing: %v", rel, name, err)
		}
	}
}

func write(t *testing.T, root, rel, text string) {
	t.Helper()
	path := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCheckFindsProblems runs the check on a small tree with one problem
// of each kind next to references that are fine.
func TestCheckFindsProblems(t *testing.T) {
	root := t.TempDir()
	// The specification's file names are assembled so that this file does
	// not cite them itself.
	spec := "adapter" + ".md"
	write(t, root, "docs/protocol.md", strings.Join([]string{
		`<a id="s1"></a>`,
		`## 1. One`,
		`<a id="s1.2"></a>`,
		`### 1.2 Two`,
		`See §1.2 and §3.`, // line 5: §3 is missing
		`<!-- spec-provenance -->`,
		`| §1 | ` + spec + ` §9 |`, // named inside the provenance block: fine
		`<!-- /spec-provenance -->`,
		`[up](upstream.md#s2) [self](#s1.2) [gone](missing.md) [bad](#s7) [web](https://example.com/x.md)`, // line 9
		"```",
		`[in a code block](nowhere.md)`,
		"```",
		`<a id="s1"></a>`, // line 13: duplicate
		"",
	}, "\n"))
	write(t, root, "docs/upstream.md", `<a id="s2"></a>`+"\n## 2. Two\n")
	write(t, root, "docs/decisions.md", "- one (§1.2)\n- two (§4.1)\n") // line 2: missing
	write(t, root, "internal/x/x.go", strings.Join([]string{
		`package x`,
		`// fine (protocol.md §1.2, §1), across lines (protocol.md`,
		`// §1.2 step 3, §5.5), a link to [upstream.md](upstream.md) §2`, // line 3: §5.5
		`// cited by file name: ` + spec + ` §1`,                         // line 4
		`// a missing document: agui.md §1`,                              // line 5
		`// bare §8 in Go is not checked`,
		"",
	}, "\n"))
	write(t, root, "node_modules/y/README.md", "[x](nothing.md) "+spec+"\n")

	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`docs/decisions.md:2: docs/protocol.md has no section §4.1 (anchor #s4.1)`,
		`docs/protocol.md:5: docs/protocol.md has no section §3 (anchor #s3)`,
		`docs/protocol.md:9: link "missing.md": docs/missing.md does not exist`,
		`docs/protocol.md:9: link "#s7": docs/protocol.md has no anchor #s7`,
		`docs/protocol.md:13: duplicate anchor #s1`,
		`internal/x/x.go:3: docs/protocol.md has no section §5.5 (anchor #s5.5)`,
		`internal/x/x.go:4: "` + spec + `" points outside the repository; cite the documents under docs/`,
		`internal/x/x.go:5: agui.md §1: docs/agui.md does not exist`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestLinkOutsideRepository(t *testing.T) {
	root := t.TempDir()
	write(t, root, "docs/demo.md", "see [spec](../../elsewhere/spec.md) and [abs](/etc/passwd)\n")
	problems, err := Check(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 2 {
		t.Fatalf("got %v, want two links leaving the repository", problems)
	}
	for _, p := range problems {
		if !strings.Contains(p.Msg, "leaves the repository") {
			t.Errorf("got %v", p)
		}
	}
}
