// Command iac-code-agui serves the AG-UI 1.0 protocol in front of the
// iac-code A2A 1.0 agent; see README.md. All behaviour lives in internal/app.
package main

import (
	"os"

	"github.com/iac-code-agui/iac-code-agui/internal/app"
)

func main() {
	os.Exit(app.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}
