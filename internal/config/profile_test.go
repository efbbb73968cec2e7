package config

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// TestProfileDefault: without any source the profile is iac-code, and the
// loopback rule for --a2a-url holds as before.
func TestProfileDefault(t *testing.T) {
	cfg := mustLoad(t, nil, base())
	if cfg.A2AProfile != ProfileIacCode || cfg.Generic() {
		t.Fatalf("profile %q", cfg.A2AProfile)
	}
	_, err := Load([]string{"--a2a-url", "http://agent.example:9000/"}, base().get)
	wantError(t, err, i18n.MsgA2AURLNotLoopback)
}

// TestProfileSources: flag > environment > YAML, case and blanks ignored,
// and the generic profile takes any http(s) URL.
func TestProfileSources(t *testing.T) {
	url := "http://agent.example:9000/a2a//"
	cases := []struct {
		name string
		args []string
		yaml string
		e    env
		want string
	}{
		{"flag", []string{"--a2a-profile", "generic", "--a2a-url", url}, "", base(), ProfileGeneric},
		{"env", []string{"--a2a-url", url}, "", with(base(), "IAC_CODE_AGUI_A2A_PROFILE", " Generic "), ProfileGeneric},
		{"yaml dash", nil, "a2a-profile: generic\na2a-url: " + url + "\n", base(), ProfileGeneric},
		{"yaml underscore", nil, "a2a_profile: generic\na2a_url: " + url + "\n", base(), ProfileGeneric},
		{"flag over env", []string{"--a2a-profile", "iac-code"}, "", with(base(), "IAC_CODE_AGUI_A2A_PROFILE", "generic"), ProfileIacCode},
		{"env over yaml", []string{"--a2a-url", url}, "a2a-profile: iac-code\n", with(base(), "IAC_CODE_AGUI_A2A_PROFILE", "generic"), ProfileGeneric},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.yaml != "" {
				args = append([]string{"--config", writeYAML(t, c.yaml)}, args...)
			}
			cfg := mustLoad(t, args, c.e)
			if cfg.A2AProfile != c.want {
				t.Fatalf("profile %q, want %q", cfg.A2AProfile, c.want)
			}
			if c.want == ProfileGeneric && cfg.A2AURL != "http://agent.example:9000/a2a/" {
				t.Fatalf("a2a url %q", cfg.A2AURL)
			}
		})
	}
}
