#!/bin/sh
# Regenerate the Go message and gRPC stubs under client/go/ome/ from protos/ (the one command):
#
#   client/go/generate.sh            # rewrite the committed stubs in client/go/ome/
#   client/go/generate.sh OUT_DIR    # write them under OUT_DIR/ome/ instead (ci.sh's drift check)
#
# Tools: buf (protos/buf.sh: npm @bufbuild/buf at its pinned version) compiles protos/ with
# client/go/buf.gen.yaml; the plugins protoc-gen-go and protoc-gen-go-grpc are the `tool`
# directives of client/go/go.mod (versions pinned there), built into client/go/bin/tools.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here}
mkdir -p "$out"
out=$(cd "$out" && pwd)

tools="$here/bin/tools"
mkdir -p "$tools"
(cd "$here" && GOBIN="$tools" go install tool)

# Drop stubs of protos that no longer exist; generated files are never edited by hand.
if [ -d "$out/ome" ]; then
    find "$out/ome" -name '*.pb.go' -type f -delete
fi
PATH="$tools:$PATH" "$root/protos/buf.sh" generate --template client/go/buf.gen.yaml -o "$out"
echo "generate.sh: wrote $(find "$out/ome" -name '*.pb.go' -type f | wc -l) files under $out/ome"
