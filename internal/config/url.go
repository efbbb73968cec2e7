package config

import (
	"net/url"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// loopbackHosts are the only A2A hosts the adapter may use (protocol.md §1.7).
var loopbackHosts = map[string]bool{"127.0.0.1": true, "localhost": true, "::1": true}

// NormalizeA2AURL checks that raw is an http or https URL whose host is
// 127.0.0.1, localhost or ::1, and returns it with exactly one trailing "/".
// Anything else, including an unparsable URL, is MsgA2AURLNotLoopback.
func NormalizeA2AURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", newError(i18n.MsgA2AURLNotLoopback, nil)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", newError(i18n.MsgA2AURLNotLoopback, nil)
	}
	if !loopbackHosts[strings.ToLower(u.Hostname())] {
		return "", newError(i18n.MsgA2AURLNotLoopback, nil)
	}
	// The original strips trailing slashes from the text and adds one; it does
	// not re-serialise the URL.
	return strings.TrimRight(raw, "/") + "/", nil
}
