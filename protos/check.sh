#!/bin/sh
# Proto checks for CI and before every commit that touches protos/ (run from anywhere):
#   protos/check.sh
# 1. buf lint                      (rules in buf.yaml: STANDARD)
# 2. buf format -d --exit-code     (prints the diff; fix with: protos/buf.sh format -w)
# 3. buf breaking --against protos/baseline.binpb   (rules in buf.yaml: FILE)
# The baseline is a committed buf image of the last released API, so the check needs neither
# git history nor the network. For an intended breaking change, see protos/update-baseline.sh.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
buf="$here/buf.sh"
baseline=protos/baseline.binpb   # relative to the repo root, where buf.sh runs buf

[ -f "$here/baseline.binpb" ] || { echo "protos/check.sh: $baseline missing; create it with protos/update-baseline.sh" >&2; exit 1; }

status=0
echo "==> buf lint"
"$buf" lint || status=1
echo "==> buf format -d --exit-code"
"$buf" format -d --exit-code || status=1
echo "==> buf breaking --against $baseline"
"$buf" breaking --against "$baseline" || {
    status=1
    echo "protos/check.sh: breaking change against $baseline. If it is intended, follow protos/update-baseline.sh" >&2
}
[ "$status" = 0 ] && echo "protos/check.sh: OK"
exit "$status"
