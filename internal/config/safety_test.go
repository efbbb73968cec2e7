package config

import (
	"slices"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func TestSafetyOptions(t *testing.T) {
	cfg := mustLoad(t, []string{"--allowed-hosts", " agui.example.com, [FD00::7],10.0.0.5 ", "--cors-origins", "http://LOCALHOST:5173/,https://app.example:443", "--demo"}, base())
	if !slices.Equal(cfg.AllowedHosts, []string{"agui.example.com", "fd00::7", "10.0.0.5"}) ||
		!slices.Equal(cfg.CORSOrigins, []string{"http://localhost:5173", "https://app.example"}) || !cfg.Demo {
		t.Fatalf("%q %q %v", cfg.AllowedHosts, cfg.CORSOrigins, cfg.Demo)
	}
	cfg = mustLoad(t, nil, with(base(), "IAC_CODE_AGUI_ALLOWED_HOSTS", "a.example", "IAC_CODE_AGUI_CORS_ORIGINS", "http://127.0.0.1:3000", "IAC_CODE_AGUI_DEMO", "1"))
	if !slices.Equal(cfg.AllowedHosts, []string{"a.example"}) || !slices.Equal(cfg.CORSOrigins, []string{"http://127.0.0.1:3000"}) || !cfg.Demo {
		t.Fatalf("env: %q %q %v", cfg.AllowedHosts, cfg.CORSOrigins, cfg.Demo)
	}
	y := writeYAML(t, "allowed-hosts: [a.example, b.example]\ncors_origins: http://localhost:5173, http://localhost:5174\ndemo: true\n")
	cfg = mustLoad(t, []string{"--config", y}, base())
	if !slices.Equal(cfg.AllowedHosts, []string{"a.example", "b.example"}) || len(cfg.CORSOrigins) != 2 || !cfg.Demo || cfg.DemoFallback() {
		t.Fatalf("yaml: %q %q %v", cfg.AllowedHosts, cfg.CORSOrigins, cfg.Demo)
	}
	if cfg := mustLoad(t, nil, base()); cfg.AllowedHosts != nil || cfg.CORSOrigins != nil || cfg.Demo || !cfg.DemoFallback() {
		t.Fatalf("defaults: %+v", cfg)
	}
	if cfg := mustLoad(t, []string{"--advertise-url", "http://127.0.0.1:9/"}, base()); cfg.DemoFallback() {
		t.Fatal("an advertised replica falls back to the demo")
	}

	for _, c := range []struct {
		args []string
		env  env
		msg  string
	}{
		{[]string{"--allowed-hosts", "http://a.example"}, base(), i18n.MsgAllowedHostsInvalid},
		{[]string{"--allowed-hosts", "a.example:8000"}, base(), i18n.MsgAllowedHostsInvalid},
		{[]string{"--allowed-hosts", "*"}, base(), i18n.MsgAllowedHostsInvalid},
		{[]string{"--cors-origins", "*"}, base(), i18n.MsgCORSOriginsInvalid},
		{[]string{"--cors-origins", "localhost:5173"}, base(), i18n.MsgCORSOriginsInvalid},
		{[]string{"--cors-origins", "http://localhost:5173/app"}, base(), i18n.MsgCORSOriginsInvalid},
		{[]string{"--cors-origins", "http://u:p@localhost:5173"}, base(), i18n.MsgCORSOriginsInvalid},
		{[]string{"--cors-origins", "null"}, base(), i18n.MsgCORSOriginsInvalid},
		{nil, with(base(), "IAC_CODE_AGUI_DEMO", "maybe"), i18n.MsgDemoInvalid},
		{[]string{"--demo", "--a2a-url", "http://127.0.0.1:41242"}, base(), i18n.MsgDemoWithA2AURL},
		{[]string{"--config", writeYAML(t, "demo: 1\n")}, base(), i18n.MsgDemoInvalid},
		{[]string{"--config", writeYAML(t, "allowed-hosts: [1, 2]\n")}, base(), i18n.MsgAllowedHostsInvalid},
		{[]string{"--config", writeYAML(t, "cors-origins: {a: b}\n")}, base(), i18n.MsgCORSOriginsInvalid},
	} {
		_, err := Load(c.args, c.env.get)
		wantError(t, err, c.msg)
	}
}
