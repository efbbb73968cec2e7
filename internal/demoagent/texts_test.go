package demoagent

import (
	"strings"
	"testing"
)

// TestTextsCoverSevenLanguages: every text has all seven languages, except
// the ones iac-code itself keeps English, and keeps its format verbs.
func TestTextsCoverSevenLanguages(t *testing.T) {
	englishOnly := map[textKey]bool{msgBackupBlocked: true}
	for k, m := range texts {
		if englishOnly[k] {
			continue
		}
		for _, lang := range []string{"en", "zh", "es", "fr", "de", "ja", "pt"} {
			s, ok := m[lang]
			if !ok || s == "" {
				t.Errorf("text %d has no %s", k, lang)
				continue
			}
			if strings.Count(s, "%") != strings.Count(m["en"], "%") {
				t.Errorf("text %d in %s changes the format verbs: %q", k, lang, s)
			}
		}
	}
	if got := tr("ko", msgReplyOutro); got != "The template is ready to deploy." {
		t.Fatalf("fallback %q", got)
	}
}

// TestScenarioLanguages: the question, the permission and the deployment
// confirmation are asked in the request's language.
func TestScenarioLanguages(t *testing.T) {
	h := newHarness(t, Options{})
	for i, c := range []struct{ text, lang, want string }{
		{"ask me a question", "ja", "どのアーキテクチャにしますか？"},
		{"ask me a question", "pt", "Qual arquitetura você quer?"},
		{"permission please", "fr", "Exécuter une commande shell locale Autoriser une fois ?"},
		{"permission please", "de", "Einen lokalen Shell-Befehl ausführen Einmal erlauben?"},
		{"deploy it", "zh", "将资源栈 demo-vpc 部署到 cn-hangzhou？"},
		{"select a vswitch", "es", "Selecciona el VSwitch para la instancia ECS"},
	} {
		s := h.stream("SendStreamingMessage", msgParams(c.text, "ctx-lang2-"+itoa(i), "", map[string]any{"cwd": "/w", "preferredLanguage": c.lang}))
		ev := s.until(stateInputRequired)
		s.close()
		in, _ := iacOf(ev[len(ev)-1])["input"].(map[string]any)
		if in["prompt"] != c.want {
			t.Errorf("%s/%s: prompt %q", c.text, c.lang, in["prompt"])
		}
	}
}
