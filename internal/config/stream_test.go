package config

import (
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func TestStreamWriteTimeout(t *testing.T) {
	if cfg := mustLoad(t, nil, base()); cfg.StreamWriteTimeout != 60*time.Second {
		t.Fatalf("default %v, want 60s", cfg.StreamWriteTimeout)
	}
	for _, c := range []struct {
		name string
		args []string
		e    env
		want time.Duration
	}{
		{"flag", []string{"--stream-write-timeout", "2.5"}, base(), 2500 * time.Millisecond},
		{"flag over env", []string{"--stream-write-timeout=3"}, with(base(), "IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT", "9"), 3 * time.Second},
		{"env", nil, with(base(), "IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT", " 9 "), 9 * time.Second},
		{"env over yaml", []string{"--config", writeYAML(t, "stream-write-timeout: 5\n")}, with(base(), "IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT", "7"), 7 * time.Second},
		{"yaml dash", []string{"--config", writeYAML(t, "stream-write-timeout: 5\n")}, base(), 5 * time.Second},
		{"yaml underscore, text", []string{"--config", writeYAML(t, "stream_write_timeout: \"0.25\"\n")}, base(), 250 * time.Millisecond},
		{"yaml null is unset", []string{"--config", writeYAML(t, "stream_write_timeout: null\n")}, base(), 60 * time.Second},
	} {
		cfg := mustLoad(t, c.args, c.e)
		if cfg.StreamWriteTimeout != c.want {
			t.Errorf("%s: %v, want %v", c.name, cfg.StreamWriteTimeout, c.want)
		}
	}
	for _, c := range []struct {
		args []string
		e    env
	}{
		{[]string{"--stream-write-timeout", "0"}, base()},
		{[]string{"--stream-write-timeout", "-1"}, base()},
		{[]string{"--stream-write-timeout", "x"}, base()},
		{[]string{"--stream-write-timeout", "NaN"}, base()},
		{[]string{"--stream-write-timeout", "Inf"}, base()},
		{[]string{"--stream-write-timeout", "1e-12"}, base()},
		{[]string{"--stream-write-timeout", "1e300"}, base()},
		{[]string{"--stream-write-timeout", ""}, base()},
		{nil, with(base(), "IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT", "0")},
		{[]string{"--config", writeYAML(t, "stream-write-timeout: 0\n")}, base()},
		{[]string{"--config", writeYAML(t, "stream-write-timeout: true\n")}, base()},
		{[]string{"--config", writeYAML(t, "stream-write-timeout: [1]\n")}, base()},
	} {
		_, err := Load(c.args, c.e.get)
		wantError(t, err, i18n.MsgStreamWriteTimeoutInvalid)
	}
}
