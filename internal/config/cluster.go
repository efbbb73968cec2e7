package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// DefaultLeaseTTL is how long a thread's ownership outlives its owner's
// last renewal.
const DefaultLeaseTTL = 15 * time.Second

// resolveCluster reads the replica settings, which matter only with a
// Redis store: --advertise-url (flag > IAC_CODE_AGUI_ADVERTISE_URL > YAML
// advertise-url), the replicas' shared token (IAC_CODE_AGUI_REPLICA_TOKEN >
// YAML replica_token; never a flag), and --lease-ttl in seconds.
func resolveCluster(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	switch {
	case fv.set["advertise-url"]:
		cfg.AdvertiseURL = fv.advertiseURL
	case getenv("IAC_CODE_AGUI_ADVERTISE_URL") != "":
		cfg.AdvertiseURL = getenv("IAC_CODE_AGUI_ADVERTISE_URL")
	case y.value("advertise_url") != nil:
		s, ok := asString(y.value("advertise_url"))
		if !ok {
			return newError(i18n.MsgAdvertiseURLInvalid, nil)
		}
		cfg.AdvertiseURL = s
	}
	cfg.AdvertiseURL = strings.TrimSpace(cfg.AdvertiseURL)
	if cfg.AdvertiseURL != "" {
		u, err := url.Parse(cfg.AdvertiseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
			return newError(i18n.MsgAdvertiseURLInvalid, nil)
		}
		cfg.AdvertiseURL = strings.TrimRight(cfg.AdvertiseURL, "/") + "/"
	}
	switch {
	case getenv("IAC_CODE_AGUI_REPLICA_TOKEN") != "":
		cfg.ReplicaToken = getenv("IAC_CODE_AGUI_REPLICA_TOKEN")
	case y.value("replica_token") != nil:
		s, err := y.stringAt("replica_token")
		if err != nil {
			return err
		}
		cfg.ReplicaToken = s
	}
	cfg.LeaseTTL = DefaultLeaseTTL
	secs, set, ok := 0.0, true, true
	switch {
	case fv.set["lease-ttl"]:
		secs, ok = parseSeconds(fv.leaseTTL)
	case getenv("IAC_CODE_AGUI_LEASE_TTL") != "":
		secs, ok = parseSeconds(getenv("IAC_CODE_AGUI_LEASE_TTL"))
	case y.value("lease_ttl") != nil:
		if s, isString := asString(y.value("lease_ttl")); isString {
			secs, ok = parseSeconds(s)
		} else {
			secs, ok = asSeconds(y.value("lease_ttl"))
		}
	default:
		set = false
	}
	if set {
		// Written so that NaN fails too.
		if !ok || !(secs >= 1 && secs <= 3600) {
			return newError(i18n.MsgLeaseTTLInvalid, nil)
		}
		cfg.LeaseTTL = time.Duration(secs * float64(time.Second))
	}
	if cfg.AdvertiseURL != "" && cfg.StateStore != StateStoreFile && cfg.ReplicaToken == "" {
		return newError(i18n.MsgReplicaTokenRequired, nil)
	}
	return nil
}

// parseSeconds reads a number of seconds given as text.
func parseSeconds(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}
