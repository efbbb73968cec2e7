package config

import (
	"net/url"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// Thread stores (--state-store). File is the default and the original's
// behaviour; a redis:// or rediss:// URL shares threads between replicas.
const (
	StateStoreFile = "file"
	// DefaultRedisKeyPrefix starts every key the Redis store writes.
	DefaultRedisKeyPrefix = "iac-code-agui:"
)

// resolveStateStore: explicit flag > IAC_CODE_AGUI_STATE_STORE > YAML
// state-store > "file". A password may come from the environment or the
// YAML file (in the URL there, or as redis_password), never from a flag,
// which other users of the machine can read in the process list.
func resolveStateStore(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	raw, err := lookupString(fv, "state-store", fv.stateStore, "IAC_CODE_AGUI_STATE_STORE", "state_store", y, getenv, i18n.MsgStateStoreInvalid, StateStoreFile)
	if err != nil {
		return err
	}
	fromFlag := fv.set["state-store"]
	raw = strings.TrimSpace(raw)
	if raw == "" || raw == StateStoreFile {
		cfg.StateStore = StateStoreFile
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		// The URL may hold a password: never echo it.
		return newError(i18n.MsgStateStoreInvalid, nil)
	}
	if _, has := u.User.Password(); has && fromFlag {
		return newError(i18n.MsgRedisPasswordOnFlag, nil)
	}
	cfg.StateStore = raw
	switch {
	case getenv("IAC_CODE_AGUI_REDIS_PASSWORD") != "":
		cfg.RedisPassword = getenv("IAC_CODE_AGUI_REDIS_PASSWORD")
	case y.value("redis_password") != nil:
		s, err := y.stringAt("redis_password")
		if err != nil {
			return err
		}
		cfg.RedisPassword = s
	}
	switch {
	case fv.set["redis-key-prefix"]:
		cfg.RedisKeyPrefix = fv.redisPrefix
	case getenv("IAC_CODE_AGUI_REDIS_KEY_PREFIX") != "":
		cfg.RedisKeyPrefix = getenv("IAC_CODE_AGUI_REDIS_KEY_PREFIX")
	case y.value("redis_key_prefix") != nil:
		s, err := y.stringAt("redis_key_prefix")
		if err != nil {
			return err
		}
		cfg.RedisKeyPrefix = s
	default:
		cfg.RedisKeyPrefix = DefaultRedisKeyPrefix
	}
	return nil
}
