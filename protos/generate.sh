#!/usr/bin/env bash
# Regenerate the committed Python stubs (messages, gRPC, mypy-protobuf typing) from protos/.
# Usage (from anywhere, with the project's dev dependencies installed): bash protos/generate.sh
# tests/test_stubs_drift.py runs the same generation into a temp dir and fails on any difference.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/client/python}"
# The project's venv when there is one (grpcio-tools and mypy-protobuf come with the dev extra).
default_py=python3
[ -x "$root/.venv/bin/python" ] && default_py="$root/.venv/bin/python"
py="${PYTHON:-$default_py}"
bindir="$(dirname "$(command -v "$py")")"
# mypy-protobuf's plugins must be on PATH.
export PATH="$bindir:$PATH"
protos=$(cd "$root/protos" && find ome -name '*.proto' | LC_ALL=C sort)
# Generate into a temp dir first, so a failure leaves the committed stubs as they are.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
(cd "$root/protos" && "$py" -m grpc_tools.protoc -I . \
  --python_out="$tmp" --grpc_python_out="$tmp" \
  --mypy_out="$tmp" --mypy_grpc_out="$tmp" $protos)
# Package markers so the stubs import as regular packages.
find "$tmp/ome" -type d -exec touch {}/__init__.py \;
touch "$tmp/ome/py.typed"
rm -rf "$out/ome"
cp -R "$tmp/ome" "$out/ome"
