#!/bin/sh
# Move the `buf breaking` baseline (protos/baseline.binpb) to the current protos/.
#
# When: after a release, or when a breaking change is intended and agreed (a removed or
# renumbered field, a renamed message or RPC, a changed type...). Normal additive changes
# pass protos/check.sh without touching the baseline.
#
# How:
#   protos/update-baseline.sh      # shows what breaks against the old baseline, then rewrites it
#   git add protos/baseline.binpb  # commit it with the proto change; say why in the commit message
#
# It runs `buf build -o protos/baseline.binpb` with the pinned buf (protos/buf.sh), after
# `buf lint` so that a baseline never records protos that fail lint.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
buf="$here/buf.sh"
"$buf" lint
if [ -f "$here/baseline.binpb" ]; then
    echo "==> changes against the old baseline (these become accepted):"
    "$buf" breaking --against protos/baseline.binpb || true
fi
"$buf" build -o protos/baseline.binpb
echo "protos/update-baseline.sh: wrote protos/baseline.binpb; commit it together with the proto change"
