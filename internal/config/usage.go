package config

import (
	"errors"
	"flag"
	"fmt"
	"strconv"
)

// DefaultDemoPort is the demo agent's default port, the one the iac-code A2A
// documentation uses.
const DefaultDemoPort = 41242

// Usage returns the help text for -h/--help.
func Usage() string { return usageText }

// DemoAgentUsage returns the help text of `demo-agent -h/--help`.
func DemoAgentUsage() string { return demoAgentUsageText }

const demoAgentUsageText = `Run the embedded demo agent alone: a scripted, iac-code-compatible A2A 1.0
server for trying AG-UI front ends and A2A clients without iac-code. Keywords
in the user text pick its behaviour (docs/demo-agent.md): "permission",
"question", "deploy", "pipeline", "fail", …; anything else writes vpc.yaml
into the request's workspace.

Usage:
  iac-code-agui demo-agent [--host HOST] [--port PORT]

Flags:
  --host HOST             Bind address. Default 127.0.0.1.
  --port PORT             Port, an integer 1..65535. Default 41242.
  -h, --help              Show this help and exit.

Environment:
  IACCODE_A2A_HTTP_TOKEN  Bearer token the agent requires; empty: no auth.

Point the adapter at it with: iac-code-agui --a2a-url http://127.0.0.1:41242
`

const usageText = `Run the AG-UI adapter backed by a local iac-code A2A process.

Run AG-UI as a protocol adapter; all execution remains in A2A.

Upstream: --a2a-url when set; the embedded demo agent with --demo; else a
managed "iac-code a2a" child when iac-code is on PATH; else, only when
nothing else is configured (no --config, the file store, no
--advertise-url), the demo agent (scripted, in-process, loopback only; its
threads are kept apart from ~/.iac-code unless --state-dir says otherwise).
Otherwise a missing iac-code stops the server. The log's "upstream" field
and /health's "upstream" member say which (demo, managed, url).

Every route but /health refuses a Host that is not localhost, 127.0.0.0/8,
::1, the bind address, the --advertise-url host, an --allowed-hosts name or
(when listening on 0.0.0.0 or ::) an IP address, and a browser Origin that
is neither the server's own nor a --cors-origins entry (403).

Usage:
  iac-code-agui [flags]
  iac-code-agui demo-agent [--host HOST] [--port PORT]  (the demo agent alone)
  iac-code-agui healthcheck [--url URL]
  iac-code-agui version
  iac-code-agui help

Flags:
  --config PATH         YAML configuration file (see below).
  --host HOST           HTTP bind address. Default 127.0.0.1.
                        Environment: IAC_CODE_AGUI_HOST. YAML: host.
  --port PORT           HTTP port, an integer 1..65535. Default 8000.
                        Environment: IAC_CODE_AGUI_PORT. YAML: port.
  --allowed-hosts LIST  Comma-separated Host names or IP addresses served
                        besides loopback (e.g. the proxy's public name).
                        Environment: IAC_CODE_AGUI_ALLOWED_HOSTS.
                        YAML: allowed-hosts, allowed_hosts (list or string).
  --cors-origins LIST   Comma-separated browser origins allowed by CORS,
                        e.g. http://localhost:5173. Default: none.
                        Environment: IAC_CODE_AGUI_CORS_ORIGINS.
                        YAML: cors-origins, cors_origins (list or string).
  --a2a-url URL         A2A server URL; must be http(s) on 127.0.0.1,
                        localhost or ::1. Empty: start a local A2A process.
                        With --a2a-profile generic: any http(s) URL.
                        Environment: IAC_CODE_AGUI_A2A_URL.
                        YAML: a2a-url, a2a_url.
  --a2a-profile P       The agent behind the gateway: iac-code (the
                        default) or generic, any A2A 1.0 agent, whose card
                        at /.well-known/agent-card.json names its JSON-RPC
                        URL (needs --a2a-url). Environment:
                        IAC_CODE_AGUI_A2A_PROFILE. YAML: a2a-profile.
  --demo                Use the embedded, scripted demo agent (not with
                        --a2a-url). Environment: IAC_CODE_AGUI_DEMO=1.
                        YAML: demo.
  --state-dir DIR       Directory of the adapter's thread mapping files.
                        Default: $IAC_CODE_CONFIG_DIR/agui,
                        else ~/.iac-code/agui. "~" and $VARS are expanded.
                        Environment: IAC_CODE_AGUI_STATE_DIR.
                        YAML: state-dir, state_dir.
  --idle-shutdown SECS  Stop after this many idle seconds, a non-negative
                        number; 0 (the default) disables it.
                        YAML: idle-shutdown, idle_shutdown.
  -d, --debug           Log at debug level instead of info, with a line
                        per A2A frame and per batch of AG-UI events
                        (kinds, ids and sizes; never content). YAML: debug.
  --log-format FORMAT   Log line format: text (the default) or json.
                        Environment: IAC_CODE_AGUI_LOG_FORMAT.
                        YAML: log-format, log_format.
  --state-store STORE   Where thread state lives: file (the default, under
                        --state-dir) or a redis:// or rediss:// URL shared
                        by several replicas (no password here).
                        Environment: IAC_CODE_AGUI_STATE_STORE.
                        YAML: state-store, state_store.
  --redis-key-prefix P  Prefix of every Redis key (default iac-code-agui:).
                        Environment: IAC_CODE_AGUI_REDIS_KEY_PREFIX.
                        YAML: redis-key-prefix, redis_key_prefix.
  --advertise-url URL   This replica's base URL as the other replicas reach
                        it; with a Redis store, turns on thread ownership
                        and forwarding. Needs IAC_CODE_AGUI_REPLICA_TOKEN.
                        Environment: IAC_CODE_AGUI_ADVERTISE_URL.
                        YAML: advertise-url, advertise_url.
  --lease-ttl SECS      How long a thread's ownership outlives its owner's
                        last renewal (default 15). Environment:
                        IAC_CODE_AGUI_LEASE_TTL. YAML: lease-ttl, lease_ttl.
  --replica-urls URLS   The other replicas' base URLs, comma-separated: the
                        only places a request is forwarded to. Required
                        with --advertise-url and a Redis store.
                        Environment: IAC_CODE_AGUI_REPLICA_URLS.
                        YAML: replica-urls, replica_urls (string or list).
  --stream-write-timeout SECS
                        Disconnect a client that has not accepted a write
                        of its stream (an event or a heartbeat) within this
                        many seconds, a number > 0 (default 60).
                        Environment: IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT.
                        YAML: stream-write-timeout, stream_write_timeout.
  --log-stdout          Copy logs to stdout. YAML: log-stdout, log_stdout.
  --compat MODE         Client compatibility: none (the default) or
                        copilotkit (docs/copilotkit.md).
                        Environment: IAC_CODE_AGUI_COMPAT. YAML: compat.
  --no-log-stdout       Do not copy logs to stdout (the default).
  --version             Print the version, commit and Go version; exit.
  -h, --help            Show this help and exit.

Environment only (never pass tokens on the command line):
  IAC_CODE_AGUI_AUTH_TOKEN    Bearer token required on POST / and on the
                              cancel route. Empty: no authentication.
                              YAML: auth_token, auth-token (env wins).
  IAC_CODE_AGUI_REDIS_PASSWORD  Password of the Redis state store.
                              YAML: redis_password, redis-password.
  IAC_CODE_AGUI_REPLICA_TOKEN   Secret the replicas share to forward
                              requests to each other. YAML: replica_token.
  IAC_CODE_AGUI_A2A_TOKEN     Bearer token sent to the A2A server.
                              YAML: a2a_token, a2a-token (env wins).
  IAC_CODE_AGUI_ALLOWED_CWDS  Allowed workspace roots, separated by the OS
                              path-list separator (":" on Unix). Falls
                              back to IACCODE_A2A_ALLOWED_CWDS; if neither
                              is set: the current directory and the system
                              temporary directory.
  IAC_CODE_CONFIG_DIR         iac-code configuration root (default
                              ~/.iac-code); the default state directory is
                              <root>/agui.
  HOME                        Used to expand "~".
  LC_ALL, LC_MESSAGES, LANG   Language of these command-line messages
                              (en, zh, es, fr, de, ja, pt; else en).

Precedence: an explicit flag, then the environment variable, then the YAML
value, then the default. A YAML or environment value is checked only when it
is the one used.

YAML file (--config): a mapping; an empty file counts as {}. In keys "-" and
"_" are the same, so both spellings work. Example:

  host: 0.0.0.0
  port: 41243
  a2a-url: http://127.0.0.1:41242
  state-dir: /var/lib/iac-code/agui
  idle-shutdown: 0
  debug: false
  log-format: json
  log-stdout: true

Keys: host (string), port (integer, not a boolean),
allowed-hosts/allowed_hosts (list or comma-separated string),
cors-origins/cors_origins (list or comma-separated string), a2a-url/a2a_url
(string), demo (boolean), state-dir/state_dir (string),
idle-shutdown/idle_shutdown (number
>= 0, not a boolean), debug (boolean), log-format/log_format (text or json),
log-stdout/log_stdout (boolean), compat (copilotkit or none),
a2a-profile/a2a_profile (iac-code or generic),
auth-token/auth_token (string), a2a-token/a2a_token (string),
state-store/state_store (file or a Redis URL), redis-key-prefix/redis_key_prefix
(string), redis-password/redis_password (string), advertise-url/advertise_url
(string), lease-ttl/lease_ttl (seconds), replica-urls/replica_urls (string or
list), replica-token/replica_token (string),
stream-write-timeout/stream_write_timeout (seconds > 0).

Sub-command import-state:
  Copy every thread file under --state-dir (this adapter's or the original's)
  into the Redis store named by --state-store; threads already there are
  left alone. Takes the server's flags, environment and YAML.

Sub-command export-state:
  The way back: write every thread of the Redis store named by --state-store
  (under --redis-key-prefix) to --state-dir/threads/ in the file format the
  file store and the original write; thread files already there are left
  alone. Takes the server's flags, environment and YAML.

Sub-command demo-agent:
  Run the embedded, scripted iac-code-compatible A2A agent on its own.
  --host HOST             Bind address. Default 127.0.0.1.
  --port PORT             Port, an integer 1..65535. Default 41242.
  IACCODE_A2A_HTTP_TOKEN  Bearer token the agent requires; empty: no auth.

Sub-command healthcheck (for container HEALTHCHECK and probes):
  GET the adapter's /health; exit 0 when it answers 200 with status "ok",
  else 1.
  --url URL               Default http://127.0.0.1:$IAC_CODE_AGUI_PORT/health
                          (port 8000 when the variable is unset).

Sub-command version: the same as --version.

Errors go to stderr and the exit status is 1.
`

// LoadHealthcheck parses the healthcheck sub-command's arguments (after
// "healthcheck") and returns the URL to probe. -h/--help gives an error
// wrapping flag.ErrHelp; a bad port in IAC_CODE_AGUI_PORT is an *Error
// with MsgPortRange.
func LoadHealthcheck(args []string, getenv func(string) string) (string, error) {
	fs := newFlagSet("healthcheck")
	url := fs.String("url", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", helpError()
		}
		return "", fmt.Errorf("config: %w", err)
	}
	if fs.NArg() > 0 {
		return "", fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	if *url != "" {
		return *url, nil
	}
	port := DefaultPort
	if getenv != nil && getenv("IAC_CODE_AGUI_PORT") != "" {
		p, err := parsePort(getenv("IAC_CODE_AGUI_PORT"))
		if err != nil {
			return "", err
		}
		port = p
	}
	return "http://127.0.0.1:" + strconv.Itoa(port) + "/health", nil
}

// LoadDemoAgent parses the demo-agent sub-command's arguments (after
// "demo-agent"). The token comes from IACCODE_A2A_HTTP_TOKEN, like the real
// A2A server's; empty means no authentication. A bad port is an *Error with
// MsgPortRange; -h/--help gives an error wrapping flag.ErrHelp.
func LoadDemoAgent(args []string, getenv func(string) string) (host string, port int, token string, err error) {
	fs := newFlagSet("demo-agent")
	fs.StringVar(&host, "host", DefaultHost, "")
	portText := fs.String("port", strconv.Itoa(DefaultDemoPort), "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return "", 0, "", helpError()
		}
		return "", 0, "", fmt.Errorf("config: %w", err)
	}
	if fs.NArg() > 0 {
		return "", 0, "", fmt.Errorf("config: unexpected argument %q", fs.Arg(0))
	}
	if port, err = parsePort(*portText); err != nil {
		return "", 0, "", err
	}
	if getenv != nil {
		token = getenv("IACCODE_A2A_HTTP_TOKEN")
	}
	return host, port, token, nil
}
