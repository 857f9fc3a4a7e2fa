#!/usr/bin/env bash
# Regenerate the committed Python stubs (messages, gRPC, mypy-protobuf typing) from protos/.
# Usage (from anywhere, with the project's dev dependencies installed): bash protos/generate.sh
# tests/test_stubs_drift.py runs the same generation into a temp dir and fails on any difference.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/client/python}"
py="${PYTHON:-python3}"
bindir="$(dirname "$(command -v "$py")")"
# mypy-protobuf's plugins must be on PATH.
export PATH="$bindir:$PATH"
protos=$(cd "$root/protos" && find ome -name '*.proto' | LC_ALL=C sort)
rm -rf "$out/ome"
(cd "$root/protos" && "$py" -m grpc_tools.protoc -I . \
  --python_out="$out" --grpc_python_out="$out" \
  --mypy_out="$out" --mypy_grpc_out="$out" $protos)
# Package markers so the stubs import as regular packages.
find "$out/ome" -type d -exec touch {}/__init__.py \;
touch "$out/ome/py.typed"
