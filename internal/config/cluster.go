package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

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
	adv, err := lookupString(fv, "advertise-url", fv.advertiseURL, "IAC_CODE_AGUI_ADVERTISE_URL", "advertise_url", y, getenv, i18n.MsgAdvertiseURLInvalid, "")
	if err != nil {
		return err
	}
	cfg.AdvertiseURL = strings.TrimSpace(adv)
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
	secs, set, ok := lookupSeconds(fv, "lease-ttl", fv.leaseTTL, "IAC_CODE_AGUI_LEASE_TTL", "lease_ttl", y, getenv)
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
	return resolveReplicaURLs(cfg, fv, y, getenv)
}

// resolveReplicaURLs reads --replica-urls (flag > IAC_CODE_AGUI_REPLICA_URLS
// > YAML replica-urls, a comma-separated string or a list): the only URLs
// requests are forwarded to, whatever a lease in Redis says. With
// --advertise-url and a Redis store it is required (docs/decisions.md,
// "Forwarding only to configured replicas").
func resolveReplicaURLs(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	var raw []string
	switch {
	case fv.set["replica-urls"]:
		raw = strings.Split(fv.replicaURLs, ",")
	case getenv("IAC_CODE_AGUI_REPLICA_URLS") != "":
		raw = strings.Split(getenv("IAC_CODE_AGUI_REPLICA_URLS"), ",")
	case y["replica_urls"] != nil:
		n := deref(y["replica_urls"])
		switch {
		case n.Kind == yaml.SequenceNode:
			for _, item := range n.Content {
				item = deref(item)
				if item.Kind != yaml.ScalarNode || item.Tag != "!!str" {
					return newError(i18n.MsgReplicaURLsInvalid, nil)
				}
				raw = append(raw, item.Value)
			}
		default:
			s, ok := asString(y.value("replica_urls"))
			if !ok {
				return newError(i18n.MsgReplicaURLsInvalid, nil)
			}
			raw = strings.Split(s, ",")
		}
	}
	cfg.ReplicaURLs = nil
	for _, r := range raw {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return newError(i18n.MsgReplicaURLsInvalid, nil)
		}
		cfg.ReplicaURLs = append(cfg.ReplicaURLs, strings.TrimRight(r, "/")+"/")
	}
	if cfg.AdvertiseURL != "" && cfg.StateStore != StateStoreFile && len(cfg.ReplicaURLs) == 0 {
		return newError(i18n.MsgReplicaURLsInvalid, nil)
	}
	return nil
}

// parseSeconds reads a number of seconds given as text.
// lookupSeconds reads a number of seconds from the flag named flag (its
// value flagValue), else the environment variable env, else the YAML key
// yamlKey (a number or a string). set is false when none of them is given;
// ok is false when the value given does not parse.
func lookupSeconds(fv *flagValues, flag, flagValue, env, yamlKey string, y yamlFile, getenv func(string) string) (secs float64, set, ok bool) {
	switch {
	case fv.set[flag]:
		secs, ok = parseSeconds(flagValue)
	case getenv(env) != "":
		secs, ok = parseSeconds(getenv(env))
	case y.value(yamlKey) != nil:
		if s, isString := asString(y.value(yamlKey)); isString {
			secs, ok = parseSeconds(s)
		} else {
			secs, ok = asSeconds(y.value(yamlKey))
		}
	default:
		return 0, false, true
	}
	return secs, true, ok
}

func parseSeconds(s string) (float64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return f, err == nil
}
