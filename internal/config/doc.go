// Package config owns the adapter's command line, environment variables and
// YAML file, compatible with the original `iac-code agui` (protocol.md §1,
// §8.1): parsing, precedence (explicit flag > environment > YAML > default),
// strict type checks with the original's messages, the loopback rule for the
// A2A URL and the state-directory resolution. It also parses the `demo-agent`
// sub-command's flags.
//
// It must not start servers, touch the state files, resolve workspaces or
// print anything: it returns a *Config or an error, and the caller translates
// an *Error with i18n. It never returns or formats a token's value in an
// error.
package config
