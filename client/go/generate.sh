#!/bin/sh
# Regenerate the Go message and gRPC stubs under client/go/ome/ from protos/.
#
#   client/go/generate.sh            # rewrite the committed stubs in client/go/ome/
#   client/go/generate.sh OUT_DIR    # write them under OUT_DIR/ome/ instead (ci.sh uses this for the drift check)
#
# Tools: Debian bookworm's protoc (protobuf-compiler 3.21.12, which ships google/protobuf/*.proto
# in /usr/include), protoc-gen-go 1.28.1 and protoc-gen-go-grpc 1.33.3. The generated headers name
# the protoc version, so regenerate with these exact packages or ci.sh reports drift.
set -eu

MODULE=github.com/ome-selector/ome-selector/client/go
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:-$here}
wkt_include=${PROTOC_WKT_INCLUDE:-/usr/include}

for tool in protoc protoc-gen-go protoc-gen-go-grpc; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "generate.sh: $tool not found; run: apt-get install -y --no-install-recommends protobuf-compiler protoc-gen-go protoc-gen-go-grpc" >&2
        exit 1
    }
done
[ -f "$wkt_include/google/protobuf/timestamp.proto" ] || {
    echo "generate.sh: $wkt_include/google/protobuf/timestamp.proto missing (Debian protobuf-compiler/libprotobuf-dev ships it)" >&2
    exit 1
}

mkdir -p "$out"
out=$(cd "$out" && pwd)
# Drop stubs of protos that no longer exist; generated files are never edited by hand.
if [ -d "$out/ome" ]; then
    find "$out/ome" -name '*.pb.go' -type f -delete
fi

cd "$root/protos"
# shellcheck disable=SC2046  # proto paths contain no spaces
protoc -I . -I "$wkt_include" \
    --go_out="$out" --go_opt=module="$MODULE" \
    --go-grpc_out="$out" --go-grpc_opt=module="$MODULE" \
    $(find ome -name '*.proto' -type f | LC_ALL=C sort)

echo "generate.sh: wrote $(find "$out/ome" -name '*.pb.go' -type f | wc -l) files under $out/ome"
