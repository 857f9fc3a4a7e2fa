#!/bin/sh
# Runs the commands of docs/run-with-ome.md that need no cluster: the patch against OME v0.1.5's
# files from the Go module cache (applied, then gofmt), and the ome-selector-sync build and flags.
# Needs the Go module proxy (or a warm module cache).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"
cd "$root"
export GOTOOLCHAIN=local GONOSUMDB=github.com/sgl-project/ome
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
dir=$(cd client/go && go mod download -json github.com/sgl-project/ome@v0.1.5 | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
[ -n "$dir" ] && [ -f "$dir/cmd/manager/main.go" ] || { echo "run-with-ome.sh: no OME v0.1.5 module dir ($dir)" >&2; exit 1; }
mkdir -p "$tmp/ome" && cp -r "$dir"/cmd "$dir"/pkg "$tmp/ome/" && chmod -R u+w "$tmp/ome"
sed -n '/^```diff$/,/^```$/p' docs/run-with-ome.md | sed '1d;$d' > "$tmp/run-with-ome.patch"
[ -s "$tmp/run-with-ome.patch" ] || { echo "run-with-ome.sh: no diff block in docs/run-with-ome.md" >&2; exit 1; }
patch -d "$tmp/ome" -p1 --dry-run < "$tmp/run-with-ome.patch"
patch -d "$tmp/ome" -p1 --quiet < "$tmp/run-with-ome.patch"
bad=$(gofmt -l "$tmp/ome/cmd/manager/main.go" "$tmp/ome/pkg/controller/v1beta1/inferenceservice/controller.go")
[ -z "$bad" ] || { echo "run-with-ome.sh: the patched files need gofmt: $bad" >&2; exit 1; }
grep -q 'omeadapter.New(mgr.GetClient())' "$tmp/ome/cmd/manager/main.go"
grep -q 'cachesync.Add(mgr' "$tmp/ome/cmd/manager/main.go"
echo "run-with-ome.sh: the patch applies to OME v0.1.5 ($dir) and the result is gofmt-clean"
cd client/go
go build -o bin/ome-selector-sync ./cmd/ome-selector-sync
bin/ome-selector-sync --help 2>&1 | grep -q -- '--selector-address' || bin/ome-selector-sync --help 2>&1 | grep -q -- '-selector-address'
echo "run-with-ome.sh: built client/go/bin/ome-selector-sync"
