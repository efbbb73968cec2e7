package config

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/pypath"
)

// Defaults of the original (protocol.md §1.2).
const (
	DefaultHost = "127.0.0.1"
	DefaultPort = 8000
)

// Config is the resolved adapter configuration.
type Config struct {
	Host         string
	Port         int
	A2AURL       string // "" (managed child) or normalised with exactly one trailing "/"
	A2AToken     string // secret: never log
	AuthToken    string // secret: never log
	StateDir     string // resolved absolute
	IdleShutdown time.Duration
	Debug        bool
	LogStdout    bool
	LogFormat    string // LogFormatText or LogFormatJSON
	// StateStore is StateStoreFile or a redis:// / rediss:// URL (which
	// may hold a password: never log it).
	StateStore     string
	RedisPassword  string // secret: never log
	RedisKeyPrefix string // with a Redis store
	// AdvertiseURL is this replica's base URL for the other replicas ("":
	// no forwarding; one replica per thread set). With a Redis store it
	// turns on thread ownership (docs/scale-out.md).
	AdvertiseURL string
	ReplicaToken string // secret shared by the replicas: never log
	LeaseTTL     time.Duration
	// StreamWriteTimeout bounds how long a client may take to accept one
	// write of its stream (stream.go).
	StreamWriteTimeout time.Duration
	// ReplicaURLs are the other replicas' base URLs (normalised, each
	// ending in "/"): the only owners a request is forwarded to.
	ReplicaURLs []string
	// AllowedCWDs holds the entries of IAC_CODE_AGUI_ALLOWED_CWDS, else
	// IACCODE_A2A_ALLOWED_CWDS, split on os.PathListSeparator with empty
	// entries dropped; nil when neither variable is set (non-empty).
	AllowedCWDs []string
	ConfigPath  string // the --config path after "~" expansion, or ""
	// StateDirDefault reports that no source named the state directory, so
	// StateDir is the default (the caller may keep a demo's state apart).
	StateDirDefault bool
	// Compat names the client compatibility mode: "" (none, the protocol
	// as written) or CompatCopilotKit (compat.go).
	Compat string
	// AllowedHosts are the Host names and addresses the operator allows
	// besides loopback (lowercased, no brackets); CORSOrigins the origins
	// allowed to call from a browser (normalised as NormalizeOrigin does);
	// Demo asks for the embedded demo agent (safety.go).
	AllowedHosts []string
	CORSOrigins  []string
	Demo         bool
	// A2AProfile is ProfileIacCode (the default) or ProfileGeneric
	// (profile.go).
	A2AProfile string
}

// flagValues are the raw command-line values; set records which flags were
// given explicitly (flag.Visit), which is what the precedence rule needs.
type flagValues struct {
	config, host, port, a2aURL, stateDir, idle string
	logFormat, stateStore, redisPrefix, compat string
	advertiseURL, leaseTTL, replicaURLs        string
	streamWriteTimeout, profile                string
	debug, logStdout, version                  bool
	safety                                     safetyFlags
	set                                        map[string]bool
}

// ErrHelp-wrapping errors are returned for -h/--help; the caller prints
// Usage() and exits 0.
func helpError() error { return fmt.Errorf("config: help requested: %w", flag.ErrHelp) }

// ErrVersion is returned for --version; the caller prints the build
// identity and exits 0.
var ErrVersion = errors.New("config: version requested")

func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The caller prints Usage() itself and translates our errors.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

func parseFlags(args []string) (*flagValues, error) {
	fv := &flagValues{set: map[string]bool{}}
	fs := newFlagSet("iac-code-agui")
	fs.StringVar(&fv.config, "config", "", "")
	fs.StringVar(&fv.host, "host", DefaultHost, "")
	// Numbers are read as text so that a bad value gets the original's
	// message instead of the flag package's.
	fs.StringVar(&fv.port, "port", strconv.Itoa(DefaultPort), "")
	fs.StringVar(&fv.a2aURL, "a2a-url", "", "")
	fs.StringVar(&fv.stateDir, "state-dir", "", "")
	fs.StringVar(&fv.idle, "idle-shutdown", "0", "")
	fs.BoolVar(&fv.debug, "debug", false, "")
	fs.BoolVar(&fv.debug, "d", false, "")
	fs.StringVar(&fv.logFormat, "log-format", LogFormatText, "")
	fs.StringVar(&fv.stateStore, "state-store", StateStoreFile, "")
	fs.StringVar(&fv.redisPrefix, "redis-key-prefix", DefaultRedisKeyPrefix, "")
	fs.StringVar(&fv.advertiseURL, "advertise-url", "", "")
	fs.StringVar(&fv.leaseTTL, "lease-ttl", "", "")
	fs.StringVar(&fv.streamWriteTimeout, "stream-write-timeout", "", "")
	fs.StringVar(&fv.replicaURLs, "replica-urls", "", "")
	fs.StringVar(&fv.compat, "compat", "", "")
	fs.StringVar(&fv.profile, "a2a-profile", "", "")
	fs.BoolVar(&fv.version, "version", false, "")
	fv.safety.register(fs)
	// --log-stdout and --no-log-stdout share one value; the last one given
	// wins, as with Click's on/off flag pair.
	fs.BoolFunc("log-stdout", "", func(s string) error {
		b, err := strconv.ParseBool(s)
		fv.logStdout = b
		return err
	})
	fs.BoolFunc("no-log-stdout", "", func(s string) error {
		b, err := strconv.ParseBool(s)
		fv.logStdout = !b
		return err
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, helpError()
		}
		return nil, fmt.Errorf("config: %w", err)
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	if fv.version {
		return nil, ErrVersion
	}
	fs.Visit(func(f *flag.Flag) {
		name := f.Name
		switch name {
		case "d":
			name = "debug"
		case "no-log-stdout":
			name = "log-stdout"
		}
		fv.set[name] = true
	})
	return fv, nil
}

// Load parses args (without the program name) and the environment, reads the
// YAML file named by --config, and applies the precedence explicit flag >
// environment > YAML > default (protocol.md §1.4). A YAML or environment value
// is type-checked only when it is the one used, as in the original. Validation
// failures are *Error; -h/--help gives an error wrapping flag.ErrHelp; an
// unknown flag or a positional argument gives a plain error; --version gives
// ErrVersion.
func Load(args []string, getenv func(string) string) (*Config, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	fv, err := parseFlags(args)
	if err != nil {
		return nil, err
	}
	cfg := &Config{}
	y := yamlFile{}
	if fv.config != "" {
		cfg.ConfigPath = pypath.ExpandUser(fv.config, lookup(getenv))
		if y, err = readYAML(cfg.ConfigPath); err != nil {
			return nil, err
		}
	}
	steps := []func(*Config, *flagValues, yamlFile, func(string) string) error{
		resolveHost, resolvePort, resolveProfile, resolveA2AURL, resolveStateDir, resolveIdle,
		resolveBools, resolveLogFormat, resolveTokens, resolveStateStore,
		resolveCluster, resolveCompat, resolveStreamWriteTimeout, resolveSafety,
		checkProfile,
	}
	for _, step := range steps {
		if err := step(cfg, fv, y, getenv); err != nil {
			return nil, err
		}
	}
	cfg.AllowedCWDs = allowedCWDs(getenv)
	return cfg, nil
}
