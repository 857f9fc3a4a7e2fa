#!/bin/sh
# CI for the Go client, offline except for Debian apt:
#   1. install the Debian Go toolchain, protoc and Go libraries (skipped when already installed);
#   2. regenerate the stubs into a temp dir and fail on drift from the committed client/go/ome/;
#   3. recreate client/go/vendor/ from /usr/share/gocode (fails if go.mod's requires drifted);
#   4. gofmt check, `go vet ./...`, and build client/go/bin/selectorexample with GOPROXY=off.
#
# Usage (from anywhere; idempotent):   client/go/ci.sh
# Env: CI_GO_SKIP_APT=1 never calls apt-get (fails instead if something is missing).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
APT_PACKAGES="golang-go protobuf-compiler protoc-gen-go protoc-gen-go-grpc golang-google-grpc-dev golang-google-protobuf-dev golang-github-golang-protobuf-1-5-dev"

now() { date +%s; }
step() { echo "==> client/go/ci.sh: $*"; }
t0=$(now)

# 1. Debian packages ------------------------------------------------------------------------
missing=""
for p in $APT_PACKAGES; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "${CI_GO_SKIP_APT:-}" = 1 ]; then
        echo "client/go/ci.sh: missing Debian packages:$missing (CI_GO_SKIP_APT=1)" >&2
        exit 1
    fi
    step "apt-get install:$missing"
    SUDO=""
    [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO apt-get update -q
    # Install the full list so apt resolves golang-github-golang-protobuf-1-5-dev instead of the
    # APIv1 golang-goprotobuf-dev alternative.
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $APT_PACKAGES
    step "apt done in $(( $(now) - t0 ))s"
else
    step "Debian packages already installed"
fi
go version

# 2. Stub drift -----------------------------------------------------------------------------
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
step "regenerating stubs into $tmp"
"$here/generate.sh" "$tmp" >/dev/null
if ! diff -ru "$here/ome" "$tmp/ome"; then
    echo "client/go/ci.sh: generated Go code in client/go/ome is out of date with protos/; run client/go/generate.sh and commit the result" >&2
    exit 1
fi

# 3. vendor/ from Debian --------------------------------------------------------------------
t1=$(now)
python3 "$here/vendor_from_debian.py" --check

# 4. gofmt, vet, build (module mode, vendor only, no network) --------------------------------
export GOFLAGS=-mod=vendor GOPROXY=off GOSUMDB=off GONOSUMDB= GOTOOLCHAIN=local GO111MODULE=on CGO_ENABLED=0
[ -n "${HOME:-}" ] || export GOCACHE="${GOCACHE:-$tmp/gocache}"
cd "$here"
unformatted=$(gofmt -l cmd ome)
if [ -n "$unformatted" ]; then
    echo "client/go/ci.sh: gofmt needed on: $unformatted" >&2
    exit 1
fi
step "go vet ./..."
go vet ./...
step "go build -o bin/selectorexample ./cmd/selectorexample"
mkdir -p bin
go build -trimpath -o bin/selectorexample ./cmd/selectorexample
step "built $here/bin/selectorexample (vendor+vet+build $(( $(now) - t1 ))s, total $(( $(now) - t0 ))s)"
