package app

import (
	"io"
	"log/slog"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
)

// newLogger builds the process logger: text (slog's key=value lines) or
// JSON (one object per line), at info or, with debug, at debug level, to
// stderr and, with toStdout, to stdout as well. Every line carries the
// original's session id.
func newLogger(format string, debug, toStdout bool, stdout, stderr io.Writer) *slog.Logger {
	level := slog.LevelInfo
	if debug {
		level = slog.LevelDebug
	}
	w := stderr
	if toStdout {
		w = io.MultiWriter(stderr, stdout)
	}
	opts := &slog.HandlerOptions{Level: level}
	var h slog.Handler
	if format == config.LogFormatJSON {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(h).With("session", "agui-adapter")
}
