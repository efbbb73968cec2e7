// Package tracing proves the gateway's OpenTelemetry tracing against a real
// backend: the real binary, its embedded demo agent, and Jaeger v2 (built
// from the module proxy as a tool of e2e/tracing/tools, started on
// loopback with its in-memory store by internal/e2etest). Without the
// Jaeger binary the tests skip, and fail under CI=true.
package tracing

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/e2etest"
)

var binary string

func TestMain(m *testing.M) { e2etest.Main(m, &binary, "../../cmd/iac-code-agui") }
