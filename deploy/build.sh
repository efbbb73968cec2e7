#!/bin/sh
# Static release build, as the Dockerfile runs it:
#   deploy/build.sh OUT [VERSION] [COMMIT]
set -eu
out=$1
version=${2:-}
commit=${3:-}
pkg=github.com/iac-code-agui/iac-code-agui/internal/buildinfo
CGO_ENABLED=0 go build -trimpath \
  -ldflags "-s -w -X $pkg.version=$version -X $pkg.commit=$commit" \
  -o "$out" ./cmd/iac-code-agui
