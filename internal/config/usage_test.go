package config

import (
	"errors"
	"flag"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func TestUsage(t *testing.T) {
	u := Usage()
	if !strings.HasPrefix(u, "Run the AG-UI adapter backed by a local iac-code A2A process.\n") {
		t.Fatalf("help starts with %q", u[:60])
	}
	mustMention := []string{
		"--config", "--host", "--port", "--a2a-url", "--state-dir", "--idle-shutdown",
		"-d, --debug", "--log-format", "IAC_CODE_AGUI_LOG_FORMAT", "log_format", "--compat", "IAC_CODE_AGUI_COMPAT", "embedded demo agent", "--version", "healthcheck", "--log-stdout", "--no-log-stdout", "-h, --help",
		"IAC_CODE_AGUI_HOST", "IAC_CODE_AGUI_PORT", "IAC_CODE_AGUI_A2A_URL",
		"IAC_CODE_AGUI_A2A_TOKEN", "IAC_CODE_AGUI_AUTH_TOKEN", "IAC_CODE_AGUI_STATE_DIR",
		"IAC_CODE_AGUI_ALLOWED_CWDS", "IACCODE_A2A_ALLOWED_CWDS", "IAC_CODE_CONFIG_DIR", "HOME",
		"IACCODE_A2A_HTTP_TOKEN", "LC_ALL",
		"a2a-url", "a2a_url", "state-dir", "state_dir", "idle-shutdown", "idle_shutdown",
		"log-stdout", "log_stdout", "auth_token", "auth-token", "a2a_token", "a2a-token",
		"host:", "port:", "debug", "demo-agent", "41242", "Precedence", "127.0.0.1", "8000",
	}
	for _, s := range mustMention {
		if !strings.Contains(u, s) {
			t.Errorf("help does not mention %q", s)
		}
	}
	for _, line := range strings.Split(u, "\n") {
		if len(line) > 80 {
			t.Errorf("help line longer than 80 columns: %q", line)
		}
	}
}

func TestLoadDemoAgent(t *testing.T) {
	host, port, token, err := LoadDemoAgent(nil, env{}.get)
	if err != nil || host != "127.0.0.1" || port != 41242 || token != "" {
		t.Fatalf("defaults: %q %d %q %v", host, port, token, err)
	}
	host, port, token, err = LoadDemoAgent([]string{"--host", "localhost", "--port=5000"},
		env{"IACCODE_A2A_HTTP_TOKEN": "tok"}.get)
	if err != nil || host != "localhost" || port != 5000 || token != "tok" {
		t.Fatalf("flags: %q %d %q %v", host, port, token, err)
	}
	for _, p := range []string{"0", "65536", "x", ""} {
		_, _, _, err := LoadDemoAgent([]string{"--port", p}, env{}.get)
		wantError(t, err, i18n.MsgPortRange)
	}
	if _, _, _, err := LoadDemoAgent([]string{"--help"}, nil); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("help: %v", err)
	}
	if _, _, _, err := LoadDemoAgent([]string{"--debug"}, nil); err == nil {
		t.Fatal("unknown flag accepted")
	}
}
