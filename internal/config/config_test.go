package config

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func TestDefaults(t *testing.T) {
	cfg := mustLoad(t, nil, base())
	want := Config{
		Host:     "127.0.0.1",
		Port:     8000,
		StateDir: "/home/tester/.iac-code/agui",
	}
	if !equalConfig(*cfg, want) {
		t.Fatalf("defaults = %+v, want %+v", *cfg, want)
	}
}

func equalConfig(a, b Config) bool {
	return a.Host == b.Host && a.Port == b.Port && a.A2AURL == b.A2AURL &&
		a.A2AToken == b.A2AToken && a.AuthToken == b.AuthToken && a.StateDir == b.StateDir &&
		a.IdleShutdown == b.IdleShutdown && a.Debug == b.Debug && a.LogStdout == b.LogStdout &&
		slices.Equal(a.AllowedCWDs, b.AllowedCWDs) && (a.AllowedCWDs == nil) == (b.AllowedCWDs == nil) &&
		a.ConfigPath == b.ConfigPath
}

// TestPrecedence covers every option against every source it has: explicit
// flag > environment > YAML > default (protocol.md §1.2, §1.4).
func TestPrecedence(t *testing.T) {
	full := "host: 10.1.1.1\nport: 9001\na2a-url: http://localhost:1/\nstate-dir: /yaml/state\n" +
		"idle-shutdown: 7.5\ndebug: true\nlog-stdout: true\nauth-token: yaml-auth\na2a-token: yaml-a2a\n"
	allEnv := with(base(),
		"IAC_CODE_AGUI_HOST", "10.2.2.2", "IAC_CODE_AGUI_PORT", "9002",
		"IAC_CODE_AGUI_A2A_URL", "http://127.0.0.1:2", "IAC_CODE_AGUI_STATE_DIR", "/env/state",
		"IAC_CODE_AGUI_AUTH_TOKEN", "env-auth", "IAC_CODE_AGUI_A2A_TOKEN", "env-a2a")
	flags := []string{"--host", "10.3.3.3", "--port", "9003", "--a2a-url", "https://[::1]:3",
		"--state-dir", "/flag/state", "--idle-shutdown", "2.25", "--debug=false", "--no-log-stdout"}

	cases := []struct {
		name  string
		args  []string
		yaml  string
		e     env
		check func(*Config) bool
		want  string
	}{
		{"yaml over default", nil, full, base(), func(c *Config) bool {
			return c.Host == "10.1.1.1" && c.Port == 9001 && c.A2AURL == "http://localhost:1/" &&
				c.StateDir == "/yaml/state" && c.IdleShutdown == 7500*time.Millisecond && c.Debug &&
				c.LogStdout && c.AuthToken == "yaml-auth" && c.A2AToken == "yaml-a2a"
		}, "all YAML values"},
		{"env over yaml", nil, full, allEnv, func(c *Config) bool {
			return c.Host == "10.2.2.2" && c.Port == 9002 && c.A2AURL == "http://127.0.0.1:2/" &&
				c.StateDir == "/env/state" && c.AuthToken == "env-auth" && c.A2AToken == "env-a2a" &&
				// no environment variable exists for these three
				c.IdleShutdown == 7500*time.Millisecond && c.Debug && c.LogStdout
		}, "env values, YAML for the rest"},
		{"flag over env and yaml", flags, full, allEnv, func(c *Config) bool {
			return c.Host == "10.3.3.3" && c.Port == 9003 && c.A2AURL == "https://[::1]:3/" &&
				c.StateDir == "/flag/state" && c.IdleShutdown == 2250*time.Millisecond && !c.Debug &&
				!c.LogStdout && c.AuthToken == "env-auth" && c.A2AToken == "env-a2a"
		}, "flag values"},
		{"flag over default", []string{"-d", "--log-stdout", "--port=1"}, "", base(), func(c *Config) bool {
			return c.Debug && c.LogStdout && c.Port == 1 && c.Host == "127.0.0.1"
		}, "-d, --log-stdout, --port=1"},
		{"env over default", nil, "", with(base(), "IAC_CODE_AGUI_PORT", " 65535 "), func(c *Config) bool {
			return c.Port == 65535
		}, "port 65535"},
		{"log-stdout last wins", []string{"--log-stdout", "--no-log-stdout", "--log-stdout"}, "", base(),
			func(c *Config) bool { return c.LogStdout }, "log-stdout true"},
		{"no-log-stdout beats yaml", []string{"--no-log-stdout"}, "log_stdout: true\n", base(),
			func(c *Config) bool { return !c.LogStdout }, "log-stdout false"},
		{"explicit default flag still wins", []string{"--port", "8000", "--host", "127.0.0.1"}, full, base(),
			func(c *Config) bool { return c.Port == 8000 && c.Host == "127.0.0.1" }, "8000 on 127.0.0.1"},
		{"empty a2a url env falls to yaml", nil, "a2a_url: http://127.0.0.1:5\n",
			with(base(), "IAC_CODE_AGUI_A2A_URL", ""), func(c *Config) bool { return c.A2AURL == "http://127.0.0.1:5/" }, "yaml URL"},
		{"explicit empty a2a url keeps managed child", []string{"--a2a-url", ""}, "a2a_url: http://127.0.0.1:5\n",
			base(), func(c *Config) bool { return c.A2AURL == "" }, "no URL"},
		{"idle zero from yaml integer", nil, "idle_shutdown: 0\n", base(),
			func(c *Config) bool { return c.IdleShutdown == 0 }, "0"},
		{"idle integer", nil, "idle_shutdown: 30\n", base(),
			func(c *Config) bool { return c.IdleShutdown == 30*time.Second }, "30s"},
		{"yaml 1.1 booleans", nil, "debug: yes\nlog_stdout: off\n", base(),
			func(c *Config) bool { return c.Debug && !c.LogStdout }, "debug on, log off"},
		{"yaml null is unset", nil, "port:\nhost: ~\nauth_token:\n", base(),
			func(c *Config) bool { return c.Port == 8000 && c.Host == "127.0.0.1" && c.AuthToken == "" }, "defaults"},
		{"later spelling wins", nil, "a2a-url: http://127.0.0.1:1\na2a_url: http://127.0.0.1:2\n", base(),
			func(c *Config) bool { return c.A2AURL == "http://127.0.0.1:2/" }, "second URL"},
		{"merge key", nil, "base: &b {port: 9100, debug: true}\n<<: *b\ndebug: false\n", base(),
			func(c *Config) bool { return c.Port == 9100 && !c.Debug }, "merged port, explicit debug"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := c.args
			if c.yaml != "" {
				args = append([]string{"--config", writeYAML(t, c.yaml)}, args...)
			}
			cfg := mustLoad(t, args, c.e)
			if !c.check(cfg) {
				t.Fatalf("got %+v, want %s", *cfg, c.want)
			}
		})
	}
}

// TestYAMLSpellings checks each key in both spellings (protocol.md §1.3).
func TestYAMLSpellings(t *testing.T) {
	for _, sep := range []string{"-", "_"} {
		body := "a2a" + sep + "url: http://127.0.0.1:41242\nstate" + sep + "dir: /s\nidle" + sep +
			"shutdown: 1.5\nlog" + sep + "stdout: true\nauth" + sep + "token: t1\na2a" + sep + "token: t2\n"
		cfg := mustLoad(t, []string{"--config", writeYAML(t, body)}, base())
		if cfg.A2AURL != "http://127.0.0.1:41242/" || cfg.StateDir != "/s" ||
			cfg.IdleShutdown != 1500*time.Millisecond || !cfg.LogStdout ||
			cfg.AuthToken != "t1" || cfg.A2AToken != "t2" {
			t.Errorf("separator %q: got %+v", sep, *cfg)
		}
	}
}

func TestStateDir(t *testing.T) {
	cases := []struct {
		name string
		args []string
		e    env
		want string
	}{
		{"config dir", nil, with(base(), "IAC_CODE_CONFIG_DIR", "/etc/iac"), "/etc/iac/agui"},
		{"config dir with tilde", nil, with(base(), "IAC_CODE_CONFIG_DIR", "~/cfg"), "/home/tester/cfg/agui"},
		{"home default", nil, base(), "/home/tester/.iac-code/agui"},
		{"tilde flag", []string{"--state-dir", "~/st"}, base(), "/home/tester/st"},
		{"env var", []string{"--state-dir", "$DATA/st"}, with(base(), "DATA", "/data"), "/data/st"},
		{"braced env var", []string{"--state-dir", "${DATA}x/st"}, with(base(), "DATA", "/data"), "/datax/st"},
		{"unknown var kept", []string{"--state-dir", "/a/$NOPE/b"}, base(), "/a/$NOPE/b"},
		{"cleaned", []string{"--state-dir", "/a/./b/../c//"}, base(), "/a/c"},
		{"env state dir", nil, with(base(), "IAC_CODE_AGUI_STATE_DIR", "$HOME/x"), "/home/tester/x"},
		{"empty flag falls through", []string{"--state-dir="}, with(base(), "IAC_CODE_AGUI_STATE_DIR", "/e"), "/e"},
	}
	for _, c := range cases {
		if got := mustLoad(t, c.args, c.e).StateDir; got != c.want {
			t.Errorf("%s: StateDir = %q, want %q", c.name, got, c.want)
		}
	}
	// A relative path becomes absolute under the working directory.
	cfg := mustLoad(t, []string{"--state-dir", "rel/dir"}, base())
	if cfg.StateDir[0] != '/' || !strings.HasSuffix(cfg.StateDir, "/rel/dir") {
		t.Errorf("relative state dir resolved to %q", cfg.StateDir)
	}
}

func TestAllowedCWDs(t *testing.T) {
	cases := []struct {
		e    env
		want []string
	}{
		{base(), nil},
		{with(base(), "IAC_CODE_AGUI_ALLOWED_CWDS", "/a:/b"), []string{"/a", "/b"}},
		{with(base(), "IACCODE_A2A_ALLOWED_CWDS", "/c"), []string{"/c"}},
		{with(base(), "IAC_CODE_AGUI_ALLOWED_CWDS", "/a", "IACCODE_A2A_ALLOWED_CWDS", "/c"), []string{"/a"}},
		{with(base(), "IAC_CODE_AGUI_ALLOWED_CWDS", "/a::~/b: "), []string{"/a", "~/b"}},
		// Set but holding only separators: no roots at all, not the defaults.
		{with(base(), "IAC_CODE_AGUI_ALLOWED_CWDS", ":"), []string{}},
	}
	for _, c := range cases {
		got := mustLoad(t, nil, c.e).AllowedCWDs
		if !slices.Equal(got, c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("env %v: AllowedCWDs = %#v, want %#v", c.e, got, c.want)
		}
	}
}

func TestConfigPathExpanded(t *testing.T) {
	p := writeYAML(t, "port: 1234\n")
	cfg := mustLoad(t, []string{"--config", p}, base())
	if cfg.ConfigPath != p || cfg.Port != 1234 {
		t.Fatalf("ConfigPath %q port %d", cfg.ConfigPath, cfg.Port)
	}
	cfg = mustLoad(t, []string{"--config", "~/agui.yaml"}, env{"HOME": filepath.Dir(p)})
	if cfg.ConfigPath != p || cfg.Port != 1234 {
		t.Fatalf("tilde: ConfigPath %q port %d", cfg.ConfigPath, cfg.Port)
	}
}

// TestCompat: --compat > IAC_CODE_AGUI_COMPAT > YAML compat > none; only
// copilotkit and none are accepted.
func TestCompat(t *testing.T) {
	dir := t.TempDir()
	yamlPath := dir + "/c.yaml"
	if err := os.WriteFile(yamlPath, []byte("compat: CopilotKit\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == "IAC_CODE_AGUI_COMPAT" {
				return v
			}
			return ""
		}
	}
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{nil, "", ""},
		{[]string{"--compat", "copilotkit"}, "", CompatCopilotKit},
		{[]string{"--compat", "none"}, "copilotkit", ""},
		{nil, " copilotkit ", CompatCopilotKit},
		{[]string{"--config", yamlPath}, "", CompatCopilotKit},
		{[]string{"--config", yamlPath}, "none", ""},
	} {
		cfg, err := Load(c.args, env(c.env))
		if err != nil || cfg.Compat != c.want {
			t.Errorf("%q env %q: got %+v %v; want %q", c.args, c.env, cfg, err, c.want)
		}
	}
	_, err := Load([]string{"--compat", "react"}, env(""))
	var ce *Error
	if !errors.As(err, &ce) || ce.Msg != i18n.MsgCompatInvalid {
		t.Fatalf("bad value: %v", err)
	}
}
