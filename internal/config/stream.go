package config

import (
	"math"
	"time"

	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// DefaultStreamWriteTimeout is how long a client may take to accept one
// write of its SSE stream before it is disconnected.
const DefaultStreamWriteTimeout = 60 * time.Second

// maxDurationSeconds is the largest number of seconds a time.Duration holds.
const maxDurationSeconds = float64(math.MaxInt64 / int64(time.Second))

// resolveStreamWriteTimeout reads --stream-write-timeout in seconds (flag >
// IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT > YAML stream-write-timeout), parsed
// and checked as --lease-ttl is; it must be more than 0.
func resolveStreamWriteTimeout(cfg *Config, fv *flagValues, y yamlFile, getenv func(string) string) error {
	cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	secs, set, ok := lookupSeconds(fv, "stream-write-timeout", fv.streamWriteTimeout,
		"IAC_CODE_AGUI_STREAM_WRITE_TIMEOUT", "stream_write_timeout", y, getenv)
	if !set {
		return nil
	}
	// Written so that NaN fails too; a value too small for a nanosecond
	// or too large for a Duration is refused like 0.
	d := time.Duration(secs * float64(time.Second))
	if !ok || !(secs > 0 && secs <= maxDurationSeconds) || d <= 0 {
		return newError(i18n.MsgStreamWriteTimeoutInvalid, nil)
	}
	cfg.StreamWriteTimeout = d
	return nil
}
