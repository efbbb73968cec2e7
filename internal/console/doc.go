// Package console owns the browser console served at /console: the static
// page, its stylesheet and ES modules (embedded with go:embed, no build
// step), and the handler that serves them with a content security policy
// that lets the page talk only to the origin that served it.
//
// The console is a client of the public AG-UI protocol like any other: it
// must not import or know the adapter's internals, and it serves no API
// of its own; the one read-only call it makes besides the protocol, GET
// /console/workspace-roots, is served by internal/server. It must not
// require the bearer token, which the page asks the user for and sends
// only on its own API calls. Its own labels are in assets/messages.json,
// one set per language the server speaks.
package console
