#!/bin/sh
# The cachesync tests against a real kube-apiserver and etcd (controller-runtime envtest, OME's CRDs
# from ../shared/ome-catalog/crd) and the real Python service (.venv/bin/ome-selector), then the
# commands of docs/run-with-ome.md (client/go/run-with-ome.sh).
#
# Usage (repository root, after `python3 -m venv .venv && .venv/bin/pip install -e '.[dev]'`):
#   KUBEBUILDER_ASSETS="$(scripts/kube-binaries.sh)" client/go/envtest.sh
# Without KUBEBUILDER_ASSETS it runs scripts/kube-binaries.sh itself. The tests fail (never skip)
# when the binaries or the service are missing. Prints the sync figures (lines with BENCH).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
command -v go >/dev/null 2>&1 || PATH="/usr/local/go/bin:$PATH"
if [ -z "${KUBEBUILDER_ASSETS:-}" ]; then
    KUBEBUILDER_ASSETS=$(bash "$here/../../scripts/kube-binaries.sh")
    export KUBEBUILDER_ASSETS
fi
export GOTOOLCHAIN=local GONOSUMDB=github.com/sgl-project/ome
t0=$(date +%s)
cd "$here"
go test -tags envtest -count=1 -timeout 30m -v ./cachesync/ 2>&1 | tee "${TMPDIR:-/tmp}/cachesync-envtest.log" |
    grep -E '^(--- |ok |FAIL|PASS)|BENCH|first snapshot|cache full again|WatchSelections change' || true
# grep drops go test's status: read it from the log.
if grep -qE '^(FAIL|--- FAIL)' "${TMPDIR:-/tmp}/cachesync-envtest.log" || ! grep -q '^ok ' "${TMPDIR:-/tmp}/cachesync-envtest.log"; then
    echo "client/go/envtest.sh: cachesync envtest failed (log: ${TMPDIR:-/tmp}/cachesync-envtest.log)" >&2
    tail -n 60 "${TMPDIR:-/tmp}/cachesync-envtest.log" >&2
    exit 1
fi
echo "client/go/envtest.sh: cachesync envtest passed in $(( $(date +%s) - t0 ))s"
sh "$here/run-with-ome.sh"
