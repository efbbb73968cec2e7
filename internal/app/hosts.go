package app

import (
	"net/netip"
	"net/url"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
)

// allowedHosts are the Host names the server answers to besides loopback
// (server.Options.AllowedHosts): the configured ones, the bind address
// when it is one address (the operator named it), and the host of
// --advertise-url, under which the other replicas forward requests here.
func allowedHosts(cfg *config.Config) []string {
	hosts := append([]string(nil), cfg.AllowedHosts...)
	if !listensOnAll(cfg.Host) {
		hosts = append(hosts, cfg.Host)
	}
	if cfg.AdvertiseURL != "" {
		if u, err := url.Parse(cfg.AdvertiseURL); err == nil && u.Hostname() != "" {
			hosts = append(hosts, u.Hostname())
		}
	}
	return hosts
}

// listensOnAll reports whether the bind address is every interface
// (0.0.0.0, ::, or empty).
func listensOnAll(host string) bool {
	if host == "" {
		return true
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	return err == nil && a.IsUnspecified()
}
