package request

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// testRoot returns a resolved temporary root and the roots list for it.
func testRoot(t *testing.T) (string, *Roots) {
	t.Helper()
	roots := AllowedRoots([]string{t.TempDir()})
	if len(roots.List()) != 1 {
		t.Fatalf("roots = %v", roots.List())
	}
	return roots.List()[0], roots
}

func wantWorkspaceErr(t *testing.T, raw string, roots *Roots, msg string) {
	t.Helper()
	got, err := ResolveWorkspace(raw, roots)
	var we *WorkspaceError
	if !errors.As(err, &we) || we.Msg != msg || err.Error() != msg {
		t.Fatalf("ResolveWorkspace(%q) = %q, %v; want %q", raw, got, err, msg)
	}
}

func TestResolveWorkspaceCreatesMissing(t *testing.T) {
	root, roots := testRoot(t)
	got, err := ResolveWorkspace(root+"/a/./b/../c", roots)
	if err != nil || got != filepath.Join(root, "a", "c") {
		t.Fatalf("got %q, %v", got, err)
	}
	fi, err := os.Stat(got)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("stat %v %v", fi, err)
	}
	// Existing directory and the root itself are accepted unchanged.
	if again, err := ResolveWorkspace(got, roots); err != nil || again != got {
		t.Fatalf("again %q %v", again, err)
	}
	if r, err := ResolveWorkspace(root, roots); err != nil || r != root {
		t.Fatalf("root %q %v", r, err)
	}
}

func TestResolveWorkspaceExpansion(t *testing.T) {
	root, roots := testRoot(t)
	t.Setenv("HOME", root)
	if got, err := ResolveWorkspace("~/ws", roots); err != nil || got != filepath.Join(root, "ws") {
		t.Fatalf("~: %q %v", got, err)
	}
	// A "$" that starts no reference stays literal, as in Python.
	if got, err := ResolveWorkspace(root+"/a$-b/${c", roots); err != nil || got != root+"/a$-b/${c" {
		t.Fatalf("literal $: %q %v", got, err)
	}
}

// TestResolveWorkspaceRefusesServerEnvironment is the regression test for
// the finding that a cwd naming a server variable echoed its value (the
// A2A token) back to the caller: every variable reference is refused,
// set or unset, before anything is created.
func TestResolveWorkspaceRefusesServerEnvironment(t *testing.T) {
	root, roots := testRoot(t)
	t.Setenv("IAC_CODE_AGUI_A2A_TOKEN", "s3cret-token")
	t.Setenv("ALIBABA_CLOUD_ACCESS_KEY_SECRET", "ak-secret")
	for _, raw := range []string{
		root + "/${IAC_CODE_AGUI_A2A_TOKEN}",
		root + "/$IAC_CODE_AGUI_A2A_TOKEN",
		root + "/x/$ALIBABA_CLOUD_ACCESS_KEY_SECRET/y",
		root + "/$IAC_TEST_UNSET_VAR_X",
		root + "/${}",
		root + "/$HOME",
		root + "/${TMPDIR}/x",
	} {
		wantWorkspaceErr(t, raw, roots, i18n.MsgWorkspaceInvalid)
	}
	entries, err := os.ReadDir(root)
	if err != nil || len(entries) != 0 {
		t.Fatalf("refused workspaces created %v (%v)", entries, err)
	}
}

func TestResolveWorkspaceNotAbsolute(t *testing.T) {
	_, roots := testRoot(t)
	t.Setenv("IAC_TEST_ABS", "/tmp")
	for _, raw := range []string{"", "relative/dir", "./x", "$IAC_TEST_ABS/x", "~nosuchuser-iac-test/x"} {
		wantWorkspaceErr(t, raw, roots, i18n.MsgWorkspaceNotAbsolute)
	}
}

func TestResolveWorkspaceOutsideRoots(t *testing.T) {
	root, _ := testRoot(t)
	a := filepath.Join(root, "a")
	if err := os.Mkdir(a, 0o700); err != nil {
		t.Fatal(err)
	}
	roots := AllowedRoots([]string{a})
	// Path-boundary aware: <root>/ab is not inside <root>/a.
	wantWorkspaceErr(t, root+"/ab", roots, i18n.MsgWorkspaceOutsideRoots)
	wantWorkspaceErr(t, root, roots, i18n.MsgWorkspaceOutsideRoots)
	wantWorkspaceErr(t, a+"/../b", roots, i18n.MsgWorkspaceOutsideRoots)
	wantWorkspaceErr(t, "/x", nil, i18n.MsgWorkspaceOutsideRoots)
	if _, err := os.Stat(root + "/ab"); !os.IsNotExist(err) {
		t.Fatal("nothing may be created outside the roots")
	}
}

func TestResolveWorkspaceSymlinks(t *testing.T) {
	root, _ := testRoot(t)
	outside, _ := testRoot(t)
	allowed := filepath.Join(root, "allowed")
	real := filepath.Join(allowed, "real")
	for _, d := range []string{allowed, real} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	roots := AllowedRoots([]string{allowed})
	mustLink := func(target, link string) {
		if err := os.Symlink(target, link); err != nil {
			t.Fatal(err)
		}
	}
	mustLink("real", filepath.Join(allowed, "inside"))
	mustLink(outside, filepath.Join(allowed, "escape"))
	mustLink(filepath.Join(outside, "missing"), filepath.Join(allowed, "dangling"))
	mustLink("loop2", filepath.Join(allowed, "loop1"))
	mustLink("loop1", filepath.Join(allowed, "loop2"))

	if got, err := ResolveWorkspace(allowed+"/inside/new", roots); err != nil || got != filepath.Join(real, "new") {
		t.Fatalf("inside: %q %v", got, err)
	}
	wantWorkspaceErr(t, allowed+"/escape", roots, i18n.MsgWorkspaceOutsideRoots)
	wantWorkspaceErr(t, allowed+"/escape/x", roots, i18n.MsgWorkspaceOutsideRoots)
	// A dangling link resolves to its target even though it does not exist.
	wantWorkspaceErr(t, allowed+"/dangling/x", roots, i18n.MsgWorkspaceOutsideRoots)
	if _, err := os.Stat(filepath.Join(outside, "missing")); !os.IsNotExist(err) {
		t.Fatal("dangling target must not be created")
	}
	wantWorkspaceErr(t, allowed+"/loop1/x", roots, i18n.MsgWorkspaceInvalid)
}

func TestResolveWorkspaceNotDirectoryAndCannotCreate(t *testing.T) {
	root, roots := testRoot(t)
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantWorkspaceErr(t, file, roots, i18n.MsgWorkspaceNotDirectory)
	wantWorkspaceErr(t, file+"/sub", roots, i18n.MsgWorkspaceCreateFailed)
	wantWorkspaceErr(t, root+"/bad\x00name", roots, i18n.MsgWorkspaceInvalid)
}

func TestAllowedRoots(t *testing.T) {
	root, _ := testRoot(t)
	dir := filepath.Join(root, "dir")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	got := AllowedRoots([]string{"", link, file, root + "/missing", root + "/dir/../dir"}).List()
	if !slices.Equal(got, []string{dir, dir}) {
		t.Fatalf("roots = %v", got)
	}
	t.Chdir(dir)
	if got := AllowedRoots([]string{"."}).List(); !slices.Equal(got, []string{dir}) {
		t.Fatalf("relative roots = %v", got)
	}
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if got := AllowedRoots(nil).List(); !slices.Equal(got, []string{dir, tmp}) {
		t.Fatalf("default roots = %v, want [%s %s]", got, dir, tmp)
	}
}

// TestRootCreatedAfterStart: a configured root that did not exist when the
// roots were resolved is honoured once it exists, without a restart; one
// that is still missing, or a file, stays refused (protocol.md §3.4).
func TestRootCreatedAfterStart(t *testing.T) {
	base, _ := testRoot(t)
	later := filepath.Join(base, "later")
	roots := AllowedRoots([]string{filepath.Join(base, "first"), later})
	if err := os.Mkdir(filepath.Join(base, "first"), 0o700); err != nil {
		t.Fatal(err)
	}
	if len(roots.List()) != 0 {
		t.Fatalf("roots = %v", roots.List())
	}
	wantWorkspaceErr(t, later+"/ws", roots, i18n.MsgWorkspaceOutsideRoots)
	if err := os.WriteFile(later, nil, 0o600); err != nil { // a file is no root
		t.Fatal(err)
	}
	wantWorkspaceErr(t, later+"/ws", roots, i18n.MsgWorkspaceOutsideRoots)
	if err := os.Remove(later); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(later, 0o700); err != nil {
		t.Fatal(err)
	}
	if got, err := ResolveWorkspace(later+"/ws", roots); err != nil || got != filepath.Join(later, "ws") {
		t.Fatalf("after the root was created: %q, %v", got, err)
	}
	// Both were resolved by that admission; nothing waits any more.
	if got := roots.List(); !slices.Equal(got, []string{filepath.Join(base, "first"), later}) {
		t.Fatalf("roots = %v", got)
	}
}

// TestResolveWorkspaceRefusesTheStateDirectory: with a root that holds the
// state directory, a cwd in it or below it (directly or through a
// symlink) is refused (issue 15 finding 10); its siblings are not.
func TestResolveWorkspaceRefusesTheStateDirectory(t *testing.T) {
	root := t.TempDir()
	stateDir := filepath.Join(root, "state")
	if err := os.MkdirAll(filepath.Join(stateDir, "threads"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(filepath.Join(stateDir, "threads"), link); err != nil {
		t.Fatal(err)
	}
	roots := AllowedRoots([]string{root})
	for _, cwd := range []string{stateDir, filepath.Join(stateDir, "threads"), filepath.Join(stateDir, "threads", "new"), link, root + "/ws/../state"} {
		_, err := ResolveWorkspace(cwd, roots, stateDir)
		var we *WorkspaceError
		if !errors.As(err, &we) || we.Msg != i18n.MsgWorkspaceOutsideRoots {
			t.Errorf("%s: %v", cwd, err)
		}
	}
	// A state directory given through a symlink is resolved too.
	stateLink := filepath.Join(root, "state-link")
	if err := os.Symlink(stateDir, stateLink); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveWorkspace(filepath.Join(stateDir, "x"), roots, stateLink); err == nil {
		t.Error("state directory named through a symlink: accepted")
	}
	for _, cwd := range []string{filepath.Join(root, "ws"), filepath.Join(root, "state-other")} {
		if _, err := ResolveWorkspace(cwd, roots, stateDir); err != nil {
			t.Errorf("%s: %v", cwd, err)
		}
	}
}
