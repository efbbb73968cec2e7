// Package scaleout proves the scale-out's behaviour under its own faults
// (docs/scale-out.md, "Proofs with real parts") with real parts only:
// three real binaries over loopback, one real redis-server that each
// replica reaches through its own toxiproxy listener (latency, a
// partition, a connection cut mid-pipeline), and one demo agent process
// shared by the replicas as their A2A upstream, behind a recording front
// per replica, so that a test knows which replica served each request and
// counts the interrupt answers that reached A2A.
//
// Every test records what its clients observed and what reached A2A in a
// history (history_test.go) and checks it as a whole: each interrupt is
// answered at most once upstream, none the clients saw is lost, and no
// two replicas stream one thread at once.
//
// It owns only its tests and their helpers. Sizes are bounded for CI; set
// IAC_CODE_AGUI_LONG=1 for the long mode.
package scaleout

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

// binary is the server under test, built without the race detector (as
// in e2e/reliability): three of them run at once under load and are
// restarted many times; e2e runs a race-enabled build.
var binary string

func TestMain(m *testing.M) { e2etest.Main(m, &binary, "../../cmd/iac-code-agui") }
