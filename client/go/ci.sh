#!/bin/sh
# CI for the Go module client/go (run from anywhere; .ci/run calls it after the Python .venv is
# built, since the Go tests start the real service, .venv/bin/ome-selector):
#   1. go.mod / go.sum tidy (`go mod tidy -diff`), modules from the Go module proxy;
#   2. regenerate the stubs into a temp dir (client/go/generate.sh) and fail on drift;
#   3. gofmt, `go vet ./...`;
#   4. `go test ./...` (selectorclient against the real service, omeadapter and the differential
#      against OME's own runtimeselector, the example and docs/go.md's program);
#   5. build client/go/bin/selectorexample.
#
# Go: 1.26 (GOTOOLCHAIN=local; /usr/local/go/bin is added to PATH when go is not on it).
# github.com/sgl-project/ome is served by the module proxy (v0.1.5) but unknown to the checksum
# database (sum.golang.org), so GONOSUMDB names it; its hashes are pinned in go.sum.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"
export GOTOOLCHAIN=local GONOSUMDB=github.com/sgl-project/ome GOFLAGS="${GOFLAGS:--mod=readonly}"

now() { date +%s; }
step() { echo "==> client/go/ci.sh: $*"; }
t0=$(now)
cd "$here"
go version

step "go mod tidy -diff"
go mod tidy -diff

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
step "regenerating stubs into $tmp"
"$here/generate.sh" "$tmp" >/dev/null
if ! diff -ru "$here/ome" "$tmp/ome"; then
    echo "client/go/ci.sh: generated Go code in client/go/ome is out of date with protos/; run client/go/generate.sh and commit the result" >&2
    exit 1
fi

step "gofmt -l"
unformatted=$(gofmt -l .)
if [ -n "$unformatted" ]; then
    echo "client/go/ci.sh: gofmt needed on: $unformatted" >&2
    exit 1
fi
step "go vet ./..."
go vet ./...
step "go test ./..."
go test -count=1 ./...
step "go build -o bin/selectorexample ./cmd/selectorexample"
go build -trimpath -o bin/selectorexample ./cmd/selectorexample
step "OK in $(( $(now) - t0 ))s"
