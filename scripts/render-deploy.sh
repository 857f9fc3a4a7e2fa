#!/usr/bin/env bash
# Renders deploy/ the way an operator installs it, into OUTDIR (default: a new temporary folder,
# printed on stdout):
#   ome.yaml                        OME's config/default (v0.1.5) alone, to compare with
#   sidecar.yaml                    OME's config/default + deploy/sidecar (a manager with cachesync)
#   sidecar-sync.yaml               ... + deploy/sidecar-sync (an unmodified manager)
#   standalone.yaml                 deploy/standalone
#   standalone-servicemonitor.yaml  deploy/standalone + deploy/servicemonitor
# OME's config/ comes from its Go module (go mod download), read where the module cache keeps it;
# the overlays that combine it with deploy/ are written to OUTDIR/overlays. OME's
# CustomResourceDefinitions (5 MB, which deploy/ leaves as they are) are left out of the renders
# over OME's install. kubectl kustomize renders (kustomize v5: components).
#
#   out=$(scripts/render-deploy.sh) && kubernetes-validate --strict "$out"/*.yaml
set -euo pipefail

OME_MODULE=github.com/sgl-project/ome
OME_VERSION="${OME_VERSION:-v0.1.5}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
GO="${GO:-/usr/local/go/bin/go}"
[ -x "$GO" ] || GO="$(command -v go)"
out="${1:-$(mktemp -d)}"
mkdir -p "$out/overlays"
out="$(cd "$out" && pwd)"

ome="$(cd "$out" && GOFLAGS=-mod=mod GONOSUMDB="$OME_MODULE" GOWORK=off "$GO" mod download -json "$OME_MODULE@$OME_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p')"
[ -f "$ome/config/manager/manager.yaml" ] || { echo "render-deploy: no config/ in $OME_MODULE@$OME_VERSION ($ome)" >&2; exit 1; }

rel() { python3 -c 'import os, sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$1" "$2"; }

overlay() {  # overlay NAME RESOURCE COMPONENT...: write OUTDIR/overlays/NAME and render it to OUTDIR/NAME.yaml
    local name="$1" resource="$2" dir="$out/overlays/$1"
    shift 2
    mkdir -p "$dir"
    {
        echo "apiVersion: kustomize.config.k8s.io/v1beta1"
        echo "kind: Kustomization"
        echo "resources:"
        echo "  - $(rel "$resource" "$dir")"
        if [ $# -gt 0 ]; then
            echo "components:"
            for component in "$@"; do echo "  - $(rel "$component" "$dir")"; done
        fi
        case "$resource" in
        "$ome"/*)
            echo "patches:"
            echo "  - target:"
            echo "      kind: CustomResourceDefinition"
            echo "    patch: |"
            echo "      \$patch: delete"
            echo "      apiVersion: apiextensions.k8s.io/v1"
            echo "      kind: CustomResourceDefinition"
            echo "      metadata:"
            echo "        name: any"
            ;;
        esac
    } > "$dir/kustomization.yaml"
    kubectl kustomize "$dir" > "$out/$name.yaml"
}

overlay ome "$ome/config/default"
overlay sidecar "$ome/config/default" "$repo/deploy/sidecar"
overlay sidecar-sync "$ome/config/default" "$repo/deploy/sidecar" "$repo/deploy/sidecar-sync"
overlay standalone "$repo/deploy/standalone"
overlay standalone-servicemonitor "$repo/deploy/standalone" "$repo/deploy/servicemonitor"
echo "$out"
