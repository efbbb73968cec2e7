package i18n

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// msgConstants parses the package's non-test sources and returns every
// exported constant named Msg… with its value, so a constant added without a
// catalogue entry is caught.
func msgConstants(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, id := range vs.Names {
					if !strings.HasPrefix(id.Name, "Msg") {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s is not a string literal", id.Name)
					}
					v, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					out[id.Name] = v
				}
			}
		}
	}
	if len(out) < 70 {
		t.Fatalf("found only %d Msg constants; parsing is broken", len(out))
	}
	return out
}

func TestEveryConstantIsCatalogued(t *testing.T) {
	consts := msgConstants(t)
	listed := map[string]bool{}
	for _, m := range Messages() {
		if listed[m] {
			t.Errorf("Messages() lists %q twice", m)
		}
		listed[m] = true
	}
	seen := map[string]string{}
	for name, text := range consts {
		if other, dup := seen[text]; dup {
			t.Errorf("%s and %s share the text %q", name, other, text)
		}
		seen[text] = name
		if !listed[text] {
			t.Errorf("%s is missing from Messages()", name)
		}
		for lang, cat := range catalogues {
			if _, ok := cat[text]; !ok {
				t.Errorf("%s has no %s translation", name, lang)
			}
		}
	}
	if len(listed) != len(consts) {
		t.Errorf("Messages() has %d entries, source declares %d constants", len(listed), len(consts))
	}
	for lang, cat := range catalogues {
		for key := range cat {
			if _, ok := seen[key]; !ok {
				t.Errorf("%s catalogue has a key with no Msg constant: %q", lang, key)
			}
		}
	}
	if len(catalogues) != len(Supported())-1 {
		t.Errorf("catalogues cover %d languages, want %d", len(catalogues), len(Supported())-1)
	}
}

var verbRE = regexp.MustCompile(`%[-+# 0]*[0-9]*(\.[0-9]+)?[a-zA-Z%]`)

// identifiers that must survive translation unchanged when the English text
// contains them.
var identifiers = []string{
	"AG-UI", "A2A", "HTTP(S)", "Content-Type", "application/json", "threadId",
	"rosInvocationId", "iac-code", "RunAgentInput", "YAML", "JSON", "--port",
	"--state-dir", "--idle-shutdown", "--a2a-url", "auth_token", "a2a_token",
	"65535", "3",
}

func TestTranslations(t *testing.T) {
	for _, msg := range Messages() {
		wantVerbs := verbRE.FindAllString(msg, -1)
		for _, lang := range Supported()[1:] {
			tr := T(lang, msg)
			if strings.TrimSpace(tr) == "" {
				t.Errorf("%s: empty translation of %q", lang, msg)
				continue
			}
			if tr == msg {
				t.Errorf("%s: %q is not translated", lang, msg)
			}
			gotVerbs := verbRE.FindAllString(tr, -1)
			if strings.Join(gotVerbs, " ") != strings.Join(wantVerbs, " ") {
				t.Errorf("%s: %q has verbs %v, English has %v", lang, tr, gotVerbs, wantVerbs)
			}
			for _, id := range identifiers {
				if strings.Contains(msg, id) && !strings.Contains(tr, id) {
					t.Errorf("%s: %q lost the identifier %q", lang, tr, id)
				}
			}
		}
	}
}

func TestT(t *testing.T) {
	cases := []struct {
		lang Lang
		msg  string
		want string
	}{
		{EN, MsgThreadBusy, "The AG-UI thread already has an active run."},
		{ZH, MsgThreadBusy, "该 AG-UI 线程已有正在进行的运行。"},
		{ES, MsgUnauthorized, "Se requiere un token bearer válido."},
		{FR, MsgUnsupportedMediaType, "Content-Type doit être application/json."},
		{DE, MsgPortRange, "--port muss zwischen 1 und 65535 liegen."},
		{JA, MsgPermissionRequired, "権限が必要です"},
		{PT, MsgInputRequired, "Entrada necessária"},
		// Outside the allowlist: unchanged (protocol.md §2.8).
		{ZH, "Some upstream failure text.", "Some upstream failure text."},
		// Unknown language: unchanged.
		{Lang("it"), MsgThreadBusy, MsgThreadBusy},
		{Lang(""), MsgThreadBusy, MsgThreadBusy},
		// A region tag still finds its catalogue.
		{Lang("zh-CN"), MsgCancelled, "执行已取消。"},
	}
	for _, c := range cases {
		if got := T(c.lang, c.msg); got != c.want {
			t.Errorf("T(%q, %q) = %q, want %q", c.lang, c.msg, got, c.want)
		}
	}
}

func TestTf(t *testing.T) {
	if got, want := Tf(EN, MsgA2AExitedDuringStartup, 3), "The local A2A process exited during startup (exit code 3)."; got != want {
		t.Errorf("Tf(en) = %q, want %q", got, want)
	}
	if got, want := Tf(DE, MsgA2AExitedDuringStartup, -9), "Der lokale A2A-Prozess wurde während des Starts beendet (Exit-Code -9)."; got != want {
		t.Errorf("Tf(de) = %q, want %q", got, want)
	}
}

func TestSpecMessagesVerbatim(t *testing.T) {
	// A sample of the English texts quoted by protocol.md, checked literally so a
	// typo in a constant cannot pass unnoticed.
	want := map[string]string{
		MsgUnauthorized:           "A valid bearer token is required.",
		MsgThreadBusy:             "The AG-UI thread already has an active run.",
		MsgConfigNotMapping:       "AG-UI config file must contain a YAML mapping.",
		MsgConfigLoad:             "Unable to load the AG-UI config file.",
		MsgA2AURLNotLoopback:      "The AG-UI adapter may connect only to a loopback A2A HTTP(S) URL.",
		MsgSessionBackupNotReady:  "Session backup is still synchronizing. Retry after 3 seconds.",
		MsgCancelIdentityRequired: "threadId and rosInvocationId are required.",
		MsgInterruptForeign:       "An interrupt belongs to another A2A task/context.",
		MsgRunIDUsed:              "The AG-UI run id has already been used.",
		MsgIdleShutdownInvalid:    "--idle-shutdown must be a non-negative number.",
	}
	for got, w := range want {
		if got != w {
			t.Errorf("constant %q, spec text %q", got, w)
		}
	}
}

func BenchmarkT(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		T(JA, MsgResumeIncomplete)
	}
}
