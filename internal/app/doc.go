// Package app owns the process: it turns the command line into a running
// server (configuration, logging, the choice of upstream A2A agent — an
// explicit URL, a managed `iac-code a2a` child, or the embedded agent —,
// the thread store, signals, graceful and idle shutdown) and runs the
// `demo-agent` sub-command.
//
// It only wires packages together; it must not implement protocol
// behaviour of its own.
package app
