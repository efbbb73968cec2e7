package config

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// TestValidationMessages: each invalid value gives the original's exact
// message (protocol.md §1.5), whatever source it comes from.
func TestValidationMessages(t *testing.T) {
	cases := []struct {
		name string
		args []string
		yaml string
		e    env
		msg  string
	}{
		{"port 0 flag", []string{"--port", "0"}, "", base(), i18n.MsgPortRange},
		{"port 65536 flag", []string{"--port=65536"}, "", base(), i18n.MsgPortRange},
		{"port text flag", []string{"--port", "http"}, "", base(), i18n.MsgPortRange},
		{"port negative flag", []string{"--port=-1"}, "", base(), i18n.MsgPortRange},
		{"port env text", nil, "", with(base(), "IAC_CODE_AGUI_PORT", "eighty"), i18n.MsgPortRange},
		{"port env float", nil, "", with(base(), "IAC_CODE_AGUI_PORT", "80.0"), i18n.MsgPortRange},
		{"port env zero", nil, "", with(base(), "IAC_CODE_AGUI_PORT", "0"), i18n.MsgPortRange},
		{"port yaml bool", nil, "port: true\n", base(), i18n.MsgPortRange},
		{"port yaml 1.1 bool", nil, "port: on\n", base(), i18n.MsgPortRange},
		{"port yaml string", nil, "port: \"8000\"\n", base(), i18n.MsgPortRange},
		{"port yaml float", nil, "port: 8000.5\n", base(), i18n.MsgPortRange},
		{"port yaml range", nil, "port: 70000\n", base(), i18n.MsgPortRange},
		{"port yaml huge", nil, "port: 99999999999999999999\n", base(), i18n.MsgPortRange},
		{"port yaml list", nil, "port: [1]\n", base(), i18n.MsgPortRange},
		{"state dir int", nil, "state_dir: 5\n", base(), i18n.MsgStateDirNotString},
		{"state dir bool", nil, "state-dir: yes\n", base(), i18n.MsgStateDirNotString},
		{"state dir map", nil, "state-dir: {a: b}\n", base(), i18n.MsgStateDirNotString},
		{"idle negative flag", []string{"--idle-shutdown", "-1"}, "", base(), i18n.MsgIdleShutdownInvalid},
		{"idle text flag", []string{"--idle-shutdown", "soon"}, "", base(), i18n.MsgIdleShutdownInvalid},
		{"idle nan flag", []string{"--idle-shutdown", "NaN"}, "", base(), i18n.MsgIdleShutdownInvalid},
		{"idle yaml bool", nil, "idle_shutdown: true\n", base(), i18n.MsgIdleShutdownInvalid},
		{"idle yaml negative", nil, "idle-shutdown: -0.5\n", base(), i18n.MsgIdleShutdownInvalid},
		{"idle yaml string", nil, "idle-shutdown: \"5\"\n", base(), i18n.MsgIdleShutdownInvalid},
		{"idle yaml inf", nil, "idle-shutdown: .inf\n", base(), i18n.MsgIdleShutdownInvalid},
		{"a2a url int", nil, "a2a_url: 41242\n", base(), i18n.MsgA2AURLNotString},
		{"a2a url list", nil, "a2a-url: [http://127.0.0.1/]\n", base(), i18n.MsgA2AURLNotString},
		{"auth token int", nil, "auth_token: 123\n", base(), i18n.MsgAuthTokenNotString},
		{"auth token bool", nil, "auth-token: true\n", base(), i18n.MsgAuthTokenNotString},
		{"a2a token map", nil, "a2a_token: {x: 1}\n", base(), i18n.MsgA2ATokenNotString},
		{"a2a url not loopback", []string{"--a2a-url", "http://10.0.0.1/"}, "", base(), i18n.MsgA2AURLNotLoopback},
		{"host not a string", nil, "host: [a]\n", base(), i18n.MsgConfigLoad},
		{"debug not a bool", nil, "debug: 1\n", base(), i18n.MsgConfigLoad},
		{"unknown flag value", []string{"--a2a-profile", "langgraph"}, "", base(), i18n.MsgA2AProfileInvalid},
		{"unknown env value", nil, "", with(base(), "IAC_CODE_AGUI_A2A_PROFILE", "x"), i18n.MsgA2AProfileInvalid},
		{"yaml not a string", nil, "a2a-profile: [generic]\n", base(), i18n.MsgA2AProfileInvalid},
		{"generic without url", []string{"--a2a-profile", "generic"}, "", base(), i18n.MsgGenericNeedsA2AURL},
		{"generic ftp url", []string{"--a2a-profile", "generic", "--a2a-url", "ftp://agent.example/"}, "", base(), i18n.MsgA2AURLInvalid},
		{"generic url without host", []string{"--a2a-profile", "generic", "--a2a-url", "http:///x"}, "", base(), i18n.MsgA2AURLInvalid},
		{"generic url with credentials", []string{"--a2a-profile", "generic", "--a2a-url", "https://u:p@agent.example/"}, "", base(), i18n.MsgA2AURLInvalid},
		{"generic url with query", []string{"--a2a-profile", "generic", "--a2a-url", "https://agent.example/?a=1"}, "", base(), i18n.MsgA2AURLInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.yaml != "" {
				args = append([]string{"--config", writeYAML(t, c.yaml)}, args...)
			}
			cfg, err := Load(args, c.e.get)
			if cfg != nil {
				t.Fatalf("got a config %+v with an error expected", *cfg)
			}
			wantError(t, err, c.msg)
		})
	}
}

// TestUnusedSourceNotChecked: as in the original, a YAML or environment value
// is validated only when it is the one used.
func TestUnusedSourceNotChecked(t *testing.T) {
	p := writeYAML(t, "port: true\nauth_token: 5\n")
	cfg := mustLoad(t, []string{"--config", p, "--port", "9000"},
		with(base(), "IAC_CODE_AGUI_AUTH_TOKEN", "e"))
	if cfg.Port != 9000 || cfg.AuthToken != "e" {
		t.Fatalf("got port %d", cfg.Port)
	}
	cfg = mustLoad(t, []string{"--port", "9001"}, with(base(), "IAC_CODE_AGUI_PORT", "bad"))
	if cfg.Port != 9001 {
		t.Fatalf("got port %d", cfg.Port)
	}
}

func TestYAMLDocumentShape(t *testing.T) {
	for _, body := range []string{"- a\n- b\n", "just text\n", "42\n", "true\n", "[]\n", "''\n"} {
		_, err := Load([]string{"--config", writeYAML(t, body)}, base().get)
		wantError(t, err, i18n.MsgConfigNotMapping)
	}
	// Empty, comment-only and null documents count as {}.
	for _, body := range []string{"", "# nothing\n", "---\n", "~\n", "null\n", "{}\n"} {
		cfg := mustLoad(t, []string{"--config", writeYAML(t, body)}, base())
		if cfg.Port != 8000 || cfg.Host != "127.0.0.1" {
			t.Errorf("%q: got %+v", body, *cfg)
		}
	}
}

func TestYAMLUnreadable(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"missing":   filepath.Join(dir, "nope.yaml"),
		"directory": dir,
		"bad yaml":  writeYAML(t, "port: [1\n"),
		"bad tab":   writeYAML(t, "a:\n\t- b\n"),
		"two docs":  writeYAML(t, "port: 1\n---\nport: 2\n"),
	}
	for name, p := range cases {
		_, err := Load([]string{"--config", p}, base().get)
		var ce *Error
		if !errors.As(err, &ce) || ce.Msg != i18n.MsgConfigLoad || err.Error() != "Unable to load the AG-UI config file." {
			t.Errorf("%s: error %v", name, err)
		}
	}
	_, err := Load([]string{"--config", cases["missing"]}, base().get)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: cause not kept: %v", err)
	}
}

// TestNoSecretInErrors: a parse error in a file that holds a token must not
// echo the token.
func TestNoSecretInErrors(t *testing.T) {
	p := writeYAML(t, "auth_token: s3cr3t-value\nport: [\n")
	_, err := Load([]string{"--config", p}, base().get)
	wantError(t, err, i18n.MsgConfigLoad)
	if strings.Contains(err.Error(), "s3cr3t") {
		t.Fatal("token leaked into the error text")
	}
}

func TestA2AURL(t *testing.T) {
	ok := map[string]string{
		"http://127.0.0.1:41242":     "http://127.0.0.1:41242/",
		"http://127.0.0.1:41242/":    "http://127.0.0.1:41242/",
		"http://[::1]:1/x//":         "http://[::1]:1/x/",
		"https://localhost":          "https://localhost/",
		"https://LOCALHOST:8443/a2a": "https://LOCALHOST:8443/a2a/",
		"HTTP://127.0.0.1:1///":      "HTTP://127.0.0.1:1/",
	}
	for in, want := range ok {
		got, err := NormalizeA2AURL(in)
		if err != nil || got != want {
			t.Errorf("NormalizeA2AURL(%q) = %q, %v; want %q", in, got, err, want)
		}
		cfg := mustLoad(t, nil, with(base(), "IAC_CODE_AGUI_A2A_URL", in))
		if cfg.A2AURL != want {
			t.Errorf("Load with %q: A2AURL %q, want %q", in, cfg.A2AURL, want)
		}
	}
	bad := []string{
		"http://10.0.0.1/", "ftp://127.0.0.1/", "127.0.0.1:41242", "http://127.0.0.2/",
		"http://localhost.evil.com/", "http://127.0.0.1@evil.com/", "ws://localhost/",
		"http://[::2]/", "http://127.0.0.1:port/", "://", "http:///path", "file:///tmp/x",
	}
	for _, in := range bad {
		if got, err := NormalizeA2AURL(in); err == nil {
			t.Errorf("NormalizeA2AURL(%q) = %q, want an error", in, got)
		} else {
			wantError(t, err, i18n.MsgA2AURLNotLoopback)
		}
	}
}

func TestFlagErrors(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"--port", "1", "-help"}} {
		_, err := Load(args, base().get)
		if !errors.Is(err, flag.ErrHelp) {
			t.Errorf("Load(%q) = %v, want flag.ErrHelp", args, err)
		}
	}
	for _, args := range [][]string{{"--bogus"}, {"serve"}, {"--port"}} {
		_, err := Load(args, base().get)
		var ce *Error
		if err == nil || errors.As(err, &ce) || errors.Is(err, flag.ErrHelp) {
			t.Errorf("Load(%q) = %v, want a plain usage error", args, err)
		}
	}
}

func TestErrorLocalized(t *testing.T) {
	e := &Error{Msg: i18n.MsgPortRange}
	if got := e.Localized(i18n.ZH); got != "--port 必须介于 1 到 65535 之间。" {
		t.Errorf("zh = %q", got)
	}
	e = &Error{Msg: i18n.MsgA2AExitedDuringStartup, Args: []any{2}}
	if got := e.Error(); got != "The local A2A process exited during startup (exit code 2)." {
		t.Errorf("en = %q", got)
	}
	if got := e.Localized(i18n.FR); got != "Le processus A2A local s'est arrêté pendant le démarrage (code de sortie 2)." {
		t.Errorf("fr = %q", got)
	}
}

func FuzzLoadYAML(f *testing.F) {
	for _, s := range []string{"", "port: 1\n", "- a\n", "a: [", "<<: *x\n", "x: &a [*a]\n",
		"port: 0x1F90\nhost: h\nidle-shutdown: 1e308\n", "!!binary AAA=\n", "a: !!float x\n"} {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	p := filepath.Join(dir, "c.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := Load([]string{"--config", p}, base().get)
		if err != nil {
			var ce *Error
			if !errors.As(err, &ce) || cfg != nil {
				t.Fatalf("Load returned %v (%T) with config %v", err, err, cfg)
			}
			return
		}
		if cfg == nil || cfg.Port < 1 || cfg.Port > 65535 || cfg.IdleShutdown < 0 || cfg.StateDir == "" {
			t.Fatalf("invalid config %+v", cfg)
		}
	})
}
