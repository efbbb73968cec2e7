package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestLdflagsWin(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v9.9.9"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, true
	}
	in := get("1.2.3", "deadbeef", read)
	if in.Version != "1.2.3" || in.Commit != "deadbeef" || in.GoVersion != "go1.26.0" {
		t.Fatalf("info = %+v", in)
	}
}

func TestBuildInfoFallback(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "v1.4.0"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0123abcd"}, {Key: "vcs.modified", Value: "true"}}}, true
	}
	in := get("", "", read)
	if in.Version != "v1.4.0" || in.Commit != "0123abcd+dirty" || in.GoVersion != "go1.26.1" {
		t.Fatalf("info = %+v", in)
	}
	if s := in.String(); s != "iac-code-agui v1.4.0 (commit 0123abcd+dirty, go1.26.1 "+in.Platform+")" {
		t.Fatalf("String = %q", s)
	}
}

func TestDevelFallback(t *testing.T) {
	read := func() (*debug.BuildInfo, bool) {
		return &debug.BuildInfo{GoVersion: "go1.26.1", Main: debug.Module{Version: "(devel)"}}, true
	}
	if in := get("", "", read); in.Version != devVersion || in.Commit != "unknown" {
		t.Fatalf("info = %+v", in)
	}
	if in := get("", "", func() (*debug.BuildInfo, bool) { return nil, false }); in.Version != devVersion || in.GoVersion == "" {
		t.Fatalf("info without build info = %+v", in)
	}
}
