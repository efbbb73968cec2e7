package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Each resolver applies explicit flag > environment > YAML > default for one
// option and type-checks only the source it uses (protocol.md §1.4).

// lookupString reads a text setting from the flag named flag (its value
// flagValue), else the environment variable env, else the YAML key
// yamlKey, which must be a string (else the error of msg invalid), else
// def.
func lookupString(fv *flagValues, flag, flagValue, env, yamlKey string, y yamlFile, getenv func(string) string, invalid, def string) (string, error) {
	switch {
	case fv.set[flag]:
		return flagValue, nil
	case getenv(env) != "":
		return getenv(env), nil
	case y.value(yamlKey) != nil:
		s, ok := asString(y.value(yamlKey))
		if !ok {
			return "", newError(invalid, nil)
		}
		return s, nil
	}
	return def, nil
}

func resolveHost(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	switch {
	case fv.set["host"] && fv.host != "":
		cfg.Host = fv.host
	case getenv("IAC_CODE_AGUI_HOST") != "":
		cfg.Host = getenv("IAC_CODE_AGUI_HOST")
	case y.value("host") != nil:
		// The spec has no message for a non-string host; the file is wrong.
		s, ok := asString(y.value("host"))
		if !ok || s == "" {
			return newError(i18n.MsgConfigLoad, errors.New("host must be a string"))
		}
		cfg.Host = s
	default:
		cfg.Host = DefaultHost
	}
	return nil
}

func resolvePort(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	switch {
	case fv.set["port"]:
		return setPortText(cfg, fv.port)
	case getenv("IAC_CODE_AGUI_PORT") != "":
		return setPortText(cfg, getenv("IAC_CODE_AGUI_PORT"))
	case y.value("port") != nil:
		p, ok := asPort(y.value("port"))
		if !ok {
			return newError(i18n.MsgPortRange, nil)
		}
		cfg.Port = p
	default:
		cfg.Port = DefaultPort
	}
	return nil
}

func setPortText(cfg *Config, s string) error {
	p, err := parsePort(s)
	if err != nil {
		return err
	}
	cfg.Port = p
	return nil
}

// parsePort reads a decimal port from a flag or environment value.
func parsePort(s string) (int, error) {
	p, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || p < 1 || p > 65535 {
		return 0, newError(i18n.MsgPortRange, nil)
	}
	return p, nil
}

func resolveA2AURL(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	raw, err := lookupString(fv, "a2a-url", fv.a2aURL, "IAC_CODE_AGUI_A2A_URL", "a2a_url", y, getenv, i18n.MsgA2AURLNotString, "")
	if err != nil {
		return err
	}
	if raw == "" {
		return nil
	}
	normalize := NormalizeA2AURL
	if cfg.Generic() {
		normalize = NormalizeAgentURL
	}
	u, err := normalize(raw)
	if err != nil {
		return err
	}
	cfg.A2AURL = u
	return nil
}

// resolveStateDir: explicit > IAC_CODE_AGUI_STATE_DIR > YAML >
// <IAC_CODE_CONFIG_DIR>/agui > ~/.iac-code/agui (protocol.md §8.1). An empty
// value at any level means "not set", as the original's default is "".
func resolveStateDir(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	dir := ""
	switch {
	case fv.set["state-dir"] && fv.stateDir != "":
		dir = fv.stateDir
	case getenv("IAC_CODE_AGUI_STATE_DIR") != "":
		dir = getenv("IAC_CODE_AGUI_STATE_DIR")
	case y.value("state_dir") != nil:
		s, ok := asString(y.value("state_dir"))
		if !ok {
			return newError(i18n.MsgStateDirNotString, nil)
		}
		dir = s
	}
	if dir == "" {
		cfg.StateDirDefault = true
		if root := getenv("IAC_CODE_CONFIG_DIR"); root != "" {
			dir = filepath.Join(root, "agui")
		} else {
			dir = filepath.Join("~", ".iac-code", "agui")
		}
	}
	abs, err := expandPath(dir, getenv)
	if err != nil {
		// Only a relative path with no working directory gets here; there is
		// no public message for it.
		return fmt.Errorf("config: cannot make the state directory absolute: %w", err)
	}
	cfg.StateDir = abs
	return nil
}

func resolveIdle(cfg *Config, fv *flagValues, y yamlFile, _ func(string) string) error {
	var secs float64
	switch {
	case fv.set["idle-shutdown"]:
		f, err := strconv.ParseFloat(strings.TrimSpace(fv.idle), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
			return newError(i18n.MsgIdleShutdownInvalid, nil)
		}
		secs = f
	case y.value("idle_shutdown") != nil:
		f, ok := asSeconds(y.value("idle_shutdown"))
		if !ok {
			return newError(i18n.MsgIdleShutdownInvalid, nil)
		}
		secs = f
	}
	// A huge value means "practically never"; clamp instead of overflowing.
	if secs >= float64(math.MaxInt64)/float64(time.Second) {
		cfg.IdleShutdown = time.Duration(math.MaxInt64)
	} else {
		cfg.IdleShutdown = time.Duration(secs * float64(time.Second))
	}
	return nil
}

func resolveBools(cfg *Config, fv *flagValues, y yamlFile, _ func(string) string) error {
	for _, b := range []struct {
		flag, key string
		flagVal   bool
		dst       *bool
	}{
		{"debug", "debug", fv.debug, &cfg.Debug},
		{"log-stdout", "log_stdout", fv.logStdout, &cfg.LogStdout},
	} {
		switch {
		case fv.set[b.flag]:
			*b.dst = b.flagVal
		case y.value(b.key) != nil:
			v, ok := asBool(y.value(b.key))
			if !ok {
				// No message in the spec; the file is wrong.
				return newError(i18n.MsgConfigLoad, fmt.Errorf("%s must be a boolean", b.key))
			}
			*b.dst = v
		}
	}
	return nil
}

// Log formats (--log-format). Text is the default, as the original's.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// resolveLogFormat: explicit flag > IAC_CODE_AGUI_LOG_FORMAT > YAML >
// text. Case and surrounding blanks are ignored.
func resolveLogFormat(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	raw, err := lookupString(fv, "log-format", fv.logFormat, "IAC_CODE_AGUI_LOG_FORMAT", "log_format", y, getenv, i18n.MsgLogFormatInvalid, LogFormatText)
	if err != nil {
		return err
	}
	switch f := strings.ToLower(strings.TrimSpace(raw)); f {
	case LogFormatText, LogFormatJSON:
		cfg.LogFormat = f
		return nil
	}
	return newError(i18n.MsgLogFormatInvalid, nil)
}

// resolveTokens: the environment wins over YAML; there is no flag, so a token
// never shows up in a process listing.
func resolveTokens(cfg *Config, _ *flagValues, y yamlFile, getenv func(string) string) error {
	for _, t := range []struct {
		env, key, msg string
		dst           *string
	}{
		{"IAC_CODE_AGUI_AUTH_TOKEN", "auth_token", i18n.MsgAuthTokenNotString, &cfg.AuthToken},
		{"IAC_CODE_AGUI_A2A_TOKEN", "a2a_token", i18n.MsgA2ATokenNotString, &cfg.A2AToken},
	} {
		if v := getenv(t.env); v != "" {
			*t.dst = v
			continue
		}
		if v := y.value(t.key); v != nil {
			s, ok := asString(v)
			if !ok {
				return newError(t.msg, nil)
			}
			*t.dst = s
		}
	}
	return nil
}

func allowedCWDs(getenv func(string) string) []string {
	raw := getenv("IAC_CODE_AGUI_ALLOWED_CWDS")
	if raw == "" {
		raw = getenv("IACCODE_A2A_ALLOWED_CWDS")
	}
	if raw == "" {
		return nil
	}
	out := []string{}
	for _, p := range strings.Split(raw, string(os.PathListSeparator)) {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}
