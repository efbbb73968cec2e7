package config

import (
	"fmt"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

func TestStateStore(t *testing.T) {
	cfg := mustLoad(t, nil, base())
	if cfg.StateStore != StateStoreFile || cfg.RedisPassword != "" {
		t.Fatalf("default = %q", cfg.StateStore)
	}
	yml := writeYAML(t, "state-store: redis://127.0.0.1:6379/2\nredis_password: from-yaml\nredis-key-prefix: \"team-a:\"\n")
	for _, c := range []struct {
		name                   string
		args                   []string
		e                      env
		store, password, prefx string
	}{
		{"flag", []string{"--state-store", "redis://127.0.0.1:6379/0"}, base(), "redis://127.0.0.1:6379/0", "", DefaultRedisKeyPrefix},
		{"flag file", []string{"--state-store", "file"}, base(), StateStoreFile, "", ""},
		{"env with a password in the URL", nil, with(base(), "IAC_CODE_AGUI_STATE_STORE", "rediss://:pw@cache:6380"), "rediss://:pw@cache:6380", "", DefaultRedisKeyPrefix},
		{"yaml", []string{"--config", yml}, base(), "redis://127.0.0.1:6379/2", "from-yaml", "team-a:"},
		{"env password wins", []string{"--config", yml}, with(base(), "IAC_CODE_AGUI_REDIS_PASSWORD", "from-env"), "redis://127.0.0.1:6379/2", "from-env", "team-a:"},
		{"flag wins", []string{"--config", yml, "--state-store", "file"}, with(base(), "IAC_CODE_AGUI_STATE_STORE", "redis://x:1"), StateStoreFile, "", ""},
		{"prefix flag", []string{"--state-store", "redis://h:1", "--redis-key-prefix", "p:"}, base(), "redis://h:1", "", "p:"},
	} {
		cfg := mustLoad(t, c.args, c.e)
		if cfg.StateStore != c.store || cfg.RedisPassword != c.password || cfg.RedisKeyPrefix != c.prefx {
			t.Errorf("%s: store %q password %q prefix %q", c.name, cfg.StateStore, cfg.RedisPassword, cfg.RedisKeyPrefix)
		}
	}
	for _, c := range []struct {
		args []string
		e    env
		msg  string
	}{
		{[]string{"--state-store", "memcached://h:1"}, base(), i18n.MsgStateStoreInvalid},
		{[]string{"--state-store", "redis://"}, base(), i18n.MsgStateStoreInvalid},
		{nil, with(base(), "IAC_CODE_AGUI_STATE_STORE", "/var/lib/x"), i18n.MsgStateStoreInvalid},
		{[]string{"--config", writeYAML(t, "state-store: 5\n")}, base(), i18n.MsgStateStoreInvalid},
		// A password on the command line is refused, and not echoed.
		{[]string{"--state-store", "redis://:s3cret@h:1"}, base(), i18n.MsgRedisPasswordOnFlag},
	} {
		_, err := Load(c.args, c.e.get)
		wantError(t, err, c.msg)
	}
}

func TestClusterSettings(t *testing.T) {
	cfg := mustLoad(t, nil, base())
	if cfg.AdvertiseURL != "" || cfg.LeaseTTL != DefaultLeaseTTL {
		t.Fatalf("defaults: %q %v", cfg.AdvertiseURL, cfg.LeaseTTL)
	}
	redis := with(base(), "IAC_CODE_AGUI_STATE_STORE", "redis://127.0.0.1:6379/0")
	cfg = mustLoad(t, []string{"--advertise-url", "http://10.0.0.5:8000", "--lease-ttl", "2.5", "--replica-urls", " http://10.0.0.6:8000, https://r3.example/x/,"},
		with(redis, "IAC_CODE_AGUI_REPLICA_TOKEN", "shared"))
	if cfg.AdvertiseURL != "http://10.0.0.5:8000/" || cfg.ReplicaToken != "shared" || cfg.LeaseTTL.Milliseconds() != 2500 ||
		fmt.Sprint(cfg.ReplicaURLs) != "[http://10.0.0.6:8000/ https://r3.example/x/]" {
		t.Fatalf("got %q %q %v %q", cfg.AdvertiseURL, cfg.ReplicaToken, cfg.LeaseTTL, cfg.ReplicaURLs)
	}
	cfg = mustLoad(t, []string{"--config", writeYAML(t, "advertise_url: https://a.example:8443/\nlease-ttl: 30\nreplica_token: y\nreplica-urls:\n  - https://b.example:8443\n  - https://c.example:8443/\n")}, redis)
	if cfg.AdvertiseURL != "https://a.example:8443/" || cfg.LeaseTTL.Seconds() != 30 || cfg.ReplicaToken != "y" ||
		fmt.Sprint(cfg.ReplicaURLs) != "[https://b.example:8443/ https://c.example:8443/]" {
		t.Fatalf("yaml: %q %v %q %q", cfg.AdvertiseURL, cfg.LeaseTTL, cfg.ReplicaToken, cfg.ReplicaURLs)
	}
	withURLs := with(with(redis, "IAC_CODE_AGUI_REPLICA_TOKEN", "shared"), "IAC_CODE_AGUI_REPLICA_URLS", "http://h:2/")
	if cfg = mustLoad(t, []string{"--advertise-url", "http://h:1/"}, withURLs); fmt.Sprint(cfg.ReplicaURLs) != "[http://h:2/]" {
		t.Fatalf("environment: %q", cfg.ReplicaURLs)
	}
	for _, c := range []struct {
		args []string
		e    env
		msg  string
	}{
		{[]string{"--advertise-url", "ftp://x"}, base(), i18n.MsgAdvertiseURLInvalid},
		{[]string{"--advertise-url", "http://u:p@h:1/"}, base(), i18n.MsgAdvertiseURLInvalid},
		{[]string{"--lease-ttl", "0.5"}, base(), i18n.MsgLeaseTTLInvalid},
		{[]string{"--lease-ttl", "x"}, base(), i18n.MsgLeaseTTLInvalid},
		{[]string{"--lease-ttl", "NaN"}, base(), i18n.MsgLeaseTTLInvalid},
		{[]string{"--advertise-url", "http://h:1/"}, redis, i18n.MsgReplicaTokenRequired},
		// Forwarding needs the list of replicas it may reach.
		{[]string{"--advertise-url", "http://h:1/"}, with(redis, "IAC_CODE_AGUI_REPLICA_TOKEN", "s"), i18n.MsgReplicaURLsInvalid},
		{[]string{"--replica-urls", "http://h:2/,ftp://h:3/"}, base(), i18n.MsgReplicaURLsInvalid},
		{[]string{"--replica-urls", "http://u:p@h:2/"}, base(), i18n.MsgReplicaURLsInvalid},
		{[]string{"--config", writeYAML(t, "replica_urls: [5]\n")}, base(), i18n.MsgReplicaURLsInvalid},
		{[]string{"--config", writeYAML(t, "replica_urls: {a: b}\n")}, base(), i18n.MsgReplicaURLsInvalid},
	} {
		_, err := Load(c.args, c.e.get)
		wantError(t, err, c.msg)
	}
}
