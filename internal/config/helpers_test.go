package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// env is a fake environment for getenv.
type env map[string]string

func (e env) get(k string) string { return e[k] }

// base is an environment with only HOME, so defaults are predictable.
func base() env { return env{"HOME": "/home/tester"} }

func with(e env, kv ...string) env {
	out := env{}
	for k, v := range e {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// writeYAML writes body to a fresh config file and returns its path.
func writeYAML(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "agui.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, args []string, e env) *Config {
	t.Helper()
	cfg, err := Load(args, e.get)
	if err != nil {
		t.Fatalf("Load(%q) failed: %v", args, err)
	}
	return cfg
}

// wantError checks that err is a *Error carrying msg with the exact English
// text msg.
func wantError(t *testing.T, err error, msg string) {
	t.Helper()
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v (%T) is not a *config.Error", err, err)
	}
	if ce.Msg != msg || err.Error() != msg {
		t.Fatalf("error = %q (Msg %q), want %q", err.Error(), ce.Msg, msg)
	}
}
