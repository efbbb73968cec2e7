package config

import (
	"net/url"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// The A2A profiles (--a2a-profile): what the agent behind the gateway is.
// ProfileIacCode is iac-code's A2A server with its metadata, side routes and
// input projections; ProfileGeneric is any A2A 1.0 agent, driven only
// through the protocol's own messages and task states (docs/upstream.md §10).
const (
	ProfileIacCode = "iac-code"
	ProfileGeneric = "generic"
)

// resolveProfile: explicit flag > IAC_CODE_AGUI_A2A_PROFILE > YAML
// a2a-profile > iac-code. Case and surrounding blanks are ignored.
func resolveProfile(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	raw, err := lookupString(fv, "a2a-profile", fv.profile, "IAC_CODE_AGUI_A2A_PROFILE", "a2a_profile", y, getenv, i18n.MsgA2AProfileInvalid, "")
	if err != nil {
		return err
	}
	switch p := strings.ToLower(strings.TrimSpace(raw)); p {
	case "", ProfileIacCode:
		cfg.A2AProfile = ProfileIacCode
		return nil
	case ProfileGeneric:
		cfg.A2AProfile = p
		return nil
	}
	return newError(i18n.MsgA2AProfileInvalid, nil)
}

// Generic reports whether the gateway fronts any A2A 1.0 agent.
func (c *Config) Generic() bool { return c.A2AProfile == ProfileGeneric }

// NormalizeAgentURL checks that raw is an http or https URL with a host and
// no credentials, the base URL of a generic agent (its card is read under
// /.well-known/), and returns it with exactly one trailing "/".
func NormalizeAgentURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" {
		return "", newError(i18n.MsgA2AURLInvalid, nil)
	}
	return strings.TrimRight(raw, "/") + "/", nil
}

// checkProfile: the generic profile has no managed child and no demo agent
// of its own, so it needs --a2a-url.
func checkProfile(cfg *Config, _ *flagValues, _ yamlFile, _ func(string) string) error {
	if cfg.Generic() && cfg.A2AURL == "" {
		return newError(i18n.MsgGenericNeedsA2AURL, nil)
	}
	return nil
}
