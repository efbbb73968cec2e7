// Package buildinfo owns the product's version identity: the version and
// commit stamped with -ldflags by release builds, else what the Go
// toolchain recorded in the binary (runtime/debug.ReadBuildInfo), and the
// Go version it was built with.
//
// It must not depend on any other package of the module.
package buildinfo

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set by release builds:
//
//	go build -ldflags "-X github.com/iac-code-agui/iac-code-agui/internal/buildinfo.version=1.2.3 \
//	  -X github.com/iac-code-agui/iac-code-agui/internal/buildinfo.commit=$(git rev-parse HEAD)"
var (
	version string
	commit  string
)

// devVersion is reported when neither -ldflags nor the module system gives
// a version (a plain `go build` in a work tree says "(devel)").
const devVersion = "0.1.0-dev"

// Info is the build identity.
type Info struct {
	Version   string
	Commit    string // "unknown" when not recorded; "+dirty" marks local changes
	GoVersion string
	Platform  string // GOOS/GOARCH
}

// Get returns the build identity.
func Get() Info {
	return get(version, commit, debug.ReadBuildInfo)
}

func get(v, c string, read func() (*debug.BuildInfo, bool)) Info {
	in := Info{Version: v, Commit: c, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := read(); ok {
		in.GoVersion = bi.GoVersion
		if in.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			in.Version = bi.Main.Version
		}
		if in.Commit == "" {
			rev, dirty := "", false
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					rev = s.Value
				case "vcs.modified":
					dirty = s.Value == "true"
				}
			}
			if rev != "" && dirty {
				rev += "+dirty"
			}
			in.Commit = rev
		}
	}
	if in.Version == "" {
		in.Version = devVersion
	}
	if in.Commit == "" {
		in.Commit = "unknown"
	}
	return in
}

// String is the one-line form printed by `iac-code-agui version`.
func (i Info) String() string {
	return fmt.Sprintf("iac-code-agui %s (commit %s, %s %s)", i.Version, i.Commit, i.GoVersion, i.Platform)
}
