package config

import (
	"errors"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func TestLogFormat(t *testing.T) {
	if cfg := mustLoad(t, nil, base()); cfg.LogFormat != LogFormatText {
		t.Fatalf("default = %q", cfg.LogFormat)
	}
	yml := writeYAML(t, "log-format: json\n")
	for _, c := range []struct {
		args []string
		e    env
		want string
	}{
		{[]string{"--log-format", "json"}, base(), "json"},
		{[]string{"--log-format=JSON "}, base(), "json"},
		{nil, with(base(), "IAC_CODE_AGUI_LOG_FORMAT", "json"), "json"},
		{[]string{"--config", yml}, base(), "json"},
		{[]string{"--config", writeYAML(t, "log_format: text\n")}, base(), "text"},
		// Precedence: flag > environment > YAML.
		{[]string{"--config", yml, "--log-format", "text"}, with(base(), "IAC_CODE_AGUI_LOG_FORMAT", "json"), "text"},
		{[]string{"--config", yml}, with(base(), "IAC_CODE_AGUI_LOG_FORMAT", "text"), "text"},
	} {
		if got := mustLoad(t, c.args, c.e).LogFormat; got != c.want {
			t.Errorf("Load(%q) LogFormat = %q, want %q", c.args, got, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		e    env
	}{
		{[]string{"--log-format", "xml"}, base()},
		{[]string{"--log-format", ""}, base()},
		{nil, with(base(), "IAC_CODE_AGUI_LOG_FORMAT", "logfmt")},
		{[]string{"--config", writeYAML(t, "log-format: true\n")}, base()},
		{[]string{"--config", writeYAML(t, "log-format: [json]\n")}, base()},
	} {
		_, err := Load(c.args, c.e.get)
		wantError(t, err, i18n.MsgLogFormatInvalid)
	}
}

func TestVersionFlag(t *testing.T) {
	if _, err := Load([]string{"--version"}, base().get); !errors.Is(err, ErrVersion) {
		t.Fatalf("--version: %v", err)
	}
	if _, err := Load([]string{"--version", "extra"}, base().get); err == nil || errors.Is(err, ErrVersion) {
		t.Fatalf("--version with an argument: %v", err)
	}
}

func TestLoadHealthcheck(t *testing.T) {
	if u, err := LoadHealthcheck(nil, base().get); err != nil || u != "http://127.0.0.1:8000/health" {
		t.Fatalf("default: %q %v", u, err)
	}
	if u, err := LoadHealthcheck(nil, with(base(), "IAC_CODE_AGUI_PORT", "9001").get); err != nil || u != "http://127.0.0.1:9001/health" {
		t.Fatalf("env port: %q %v", u, err)
	}
	if u, err := LoadHealthcheck([]string{"--url", "http://[::1]:1/health"}, base().get); err != nil || u != "http://[::1]:1/health" {
		t.Fatalf("--url: %q %v", u, err)
	}
	_, err := LoadHealthcheck(nil, with(base(), "IAC_CODE_AGUI_PORT", "0").get)
	wantError(t, err, i18n.MsgPortRange)
	if _, err := LoadHealthcheck([]string{"x"}, base().get); err == nil {
		t.Fatal("stray argument accepted")
	}
}
