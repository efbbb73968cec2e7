package config

import (
	"errors"
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
		s, ok := asString(y.value("replica_token"))
		if !ok {
			return newError(i18n.MsgConfigLoad, errors.New("replica_token must be a string"))
		}
		cfg.ReplicaToken = s
	}
	raw := ""
	switch {
	case fv.set["lease-ttl"]:
		raw = fv.leaseTTL
	case getenv("IAC_CODE_AGUI_LEASE_TTL") != "":
		raw = getenv("IAC_CODE_AGUI_LEASE_TTL")
	case y.value("lease_ttl") != nil:
		switch v := y.value("lease_ttl").(type) {
		case string:
			raw = v
		case int, int64, float64:
			raw = strconv.FormatFloat(toFloat(v), 'f', -1, 64)
		default:
			return newError(i18n.MsgLeaseTTLInvalid, nil)
		}
	}
	cfg.LeaseTTL = DefaultLeaseTTL
	if raw != "" {
		f, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
		if err != nil || f < 1 || f > 3600 {
			return newError(i18n.MsgLeaseTTLInvalid, nil)
		}
		cfg.LeaseTTL = time.Duration(f * float64(time.Second))
	}
	if cfg.AdvertiseURL != "" && cfg.StateStore != StateStoreFile && cfg.ReplicaToken == "" {
		return newError(i18n.MsgReplicaTokenRequired, nil)
	}
	return nil
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}
