package config

import (
	"flag"
	"net/netip"
	"net/url"
	"strconv"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
	"go.yaml.in/yaml/v3"
)

// safetyFlags are the raw values of the options that keep a server safe
// by default: --allowed-hosts, --cors-origins and --demo.
type safetyFlags struct {
	allowedHosts, corsOrigins string
	demo                      bool
}

func (s *safetyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.allowedHosts, "allowed-hosts", "", "")
	fs.StringVar(&s.corsOrigins, "cors-origins", "", "")
	fs.BoolVar(&s.demo, "demo", false, "")
}

// resolveSafety reads --allowed-hosts, --cors-origins (each: flag >
// environment > YAML, comma-separated in a flag or variable, a list or a
// comma-separated string in YAML) and --demo (flag > IAC_CODE_AGUI_DEMO >
// YAML demo). --demo with an A2A URL is an error: the two name different
// upstreams.
func resolveSafety(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	hosts, err := listOption(fv.set["allowed-hosts"], fv.safety.allowedHosts, getenv("IAC_CODE_AGUI_ALLOWED_HOSTS"), y, "allowed_hosts", i18n.MsgAllowedHostsInvalid)
	if err != nil {
		return err
	}
	for _, h := range hosts {
		n, ok := hostEntry(h)
		if !ok {
			return newError(i18n.MsgAllowedHostsInvalid, nil)
		}
		cfg.AllowedHosts = append(cfg.AllowedHosts, n)
	}
	origins, err := listOption(fv.set["cors-origins"], fv.safety.corsOrigins, getenv("IAC_CODE_AGUI_CORS_ORIGINS"), y, "cors_origins", i18n.MsgCORSOriginsInvalid)
	if err != nil {
		return err
	}
	for _, o := range origins {
		n, ok := NormalizeOrigin(o)
		if !ok {
			return newError(i18n.MsgCORSOriginsInvalid, nil)
		}
		cfg.CORSOrigins = append(cfg.CORSOrigins, n)
	}
	switch {
	case fv.set["demo"]:
		cfg.Demo = fv.safety.demo
	case getenv("IAC_CODE_AGUI_DEMO") != "":
		b, err := strconv.ParseBool(strings.TrimSpace(getenv("IAC_CODE_AGUI_DEMO")))
		if err != nil {
			return newError(i18n.MsgDemoInvalid, nil)
		}
		cfg.Demo = b
	case y.value("demo") != nil:
		b, ok := asBool(y.value("demo"))
		if !ok {
			return newError(i18n.MsgDemoInvalid, nil)
		}
		cfg.Demo = b
	}
	if cfg.Demo && cfg.A2AURL != "" {
		return newError(i18n.MsgDemoWithA2AURL, nil)
	}
	return nil
}

// DemoFallback reports whether a missing iac-code may fall back to the
// demo agent without --demo: only in the zero-configuration case of the
// README's first command (no --config, the file store, no
// --advertise-url). Anywhere else an operator configured a real
// deployment, and a scripted agent would pass for it unnoticed.
func (c *Config) DemoFallback() bool {
	return c.ConfigPath == "" && c.StateStore == StateStoreFile && c.AdvertiseURL == ""
}

// listOption returns the entries of a list option from the first source
// that sets it: the flag, the variable, then the YAML key (a sequence of
// strings or one comma-separated string). Blank entries are dropped.
func listOption(flagSet bool, flagVal, envVal string, y yamlFile, key, msg string) ([]string, error) {
	switch {
	case flagSet:
		return splitList(flagVal), nil
	case envVal != "":
		return splitList(envVal), nil
	}
	n, ok := y[key]
	if !ok {
		return nil, nil
	}
	if n = deref(n); n.Kind == yaml.SequenceNode {
		var out []string
		for _, item := range n.Content {
			item = deref(item)
			if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
				return nil, newError(msg, nil)
			}
			out = append(out, splitList(item.Value)...)
		}
		return out, nil
	}
	switch v := y.value(key).(type) {
	case nil:
		return nil, nil
	case string:
		return splitList(v), nil
	}
	return nil, newError(msg, nil)
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// hostEntry checks an --allowed-hosts entry, a host name or an IP address
// (an IPv6 one with or without brackets), and returns it lowercased and
// without brackets or a trailing dot.
func hostEntry(s string) (string, bool) {
	s = strings.ToLower(s)
	if strings.HasPrefix(s, "[") && strings.HasSuffix(s, "]") {
		a, err := netip.ParseAddr(s[1 : len(s)-1])
		return a.String(), err == nil && a.Is6()
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return a.String(), true
	}
	s = strings.TrimSuffix(s, ".")
	if s == "" || len(s) > 253 {
		return "", false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return "", false
		}
		for _, r := range label {
			if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
				return "", false
			}
		}
	}
	return s, true
}

// NormalizeOrigin checks a web origin (http or https, a host, an optional
// port; nothing else but an optional trailing "/") and returns it as a
// browser sends it in Origin: lowercased, without a default port or a
// trailing "/".
func NormalizeOrigin(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSuffix(s, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#") {
		return "", false
	}
	host, port := strings.ToLower(u.Hostname()), u.Port()
	if _, ok := hostEntry(host); !ok {
		return "", false
	}
	if strings.Contains(u.Host, ":") && port == "" && !strings.HasSuffix(u.Host, "]") {
		return "", false // "host:" with an empty port
	}
	if port != "" {
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
			return "", false
		}
	}
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return u.Scheme + "://" + host, true
}
