// Command gen writes the files of internal/contract (schemas/*.json and
// schemas/ts/index.{d.ts,js}) under the repository root given as its
// only argument; `go generate ./internal/contract` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/iac-code-agui/iac-code-agui/internal/contract"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen <repository root>")
		os.Exit(2)
	}
	for name, data := range contract.Files() {
		p := filepath.Join(os.Args[1], filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
