// Package demoagenttest runs the embedded demo agent (internal/demoagent)
// for tests, the way net/http/httptest sits beside net/http: it serves the
// real agent over loopback HTTP and records, in front of it, the JSON-RPC
// calls the agent received, so a test can check what the adapter sent.
//
// It owns the recorder (Call, Part, Server.Calls, Server.ContextHeaders)
// and the test server around the agent. It must not change what the agent
// answers, reach into the agent's state, or be imported by non-test code:
// the product agent keeps no record of calls.
package demoagenttest
