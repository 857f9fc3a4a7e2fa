#!/usr/bin/env bash
# Builds kube-apiserver and etcd from their Go modules at pinned versions and prints the folder that
# holds them (usable as KUBEBUILDER_ASSETS for controller-runtime's envtest).
#
#   scripts/kube-binaries.sh            # prints e.g. ~/.cache/ome-selector/kube/k8s-v1.33.13-etcd-v3.5.21
#   export KUBEBUILDER_ASSETS=$(scripts/kube-binaries.sh)
#
# The binaries are cached by version in ${OME_SELECTOR_KUBE_CACHE:-$XDG_CACHE_HOME/ome-selector/kube}
# (outside the repo); a warm run only checks the folder. Cold, the build needs the Go module proxy and
# takes about 15 minutes on 2 idle cores (29 minutes beside another Go build). The build uses a Go module
# cache of its own under the cache folder (go/mod, 0.7 GB, kept for the next version) and a build cache in
# its work folder (2.4 GB, removed with it), apart from the user's, so it does not depend on what else is
# cached.
# Safe to run concurrently: one build per version holds a lock, and the folder appears by an atomic rename
# only once both binaries have run `--version`.
#
# Versions: kube-apiserver v1.33.x with the etcd release its go.mod requires (3.5.21), a pair envtest
# supports for k8s.io/* v0.33 and controller-runtime v0.21.
set -euo pipefail

KUBE_VERSION="${OME_SELECTOR_KUBE_VERSION:-v1.33.13}"
ETCD_VERSION="${OME_SELECTOR_ETCD_VERSION:-v3.5.21}"
GO="${GO:-/usr/local/go/bin/go}"
[ -x "$GO" ] || GO="$(command -v go)"

cache="${OME_SELECTOR_KUBE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ome-selector/kube}"
name="k8s-$KUBE_VERSION-etcd-$ETCD_VERSION"
dest="$cache/$name"

log() { echo "kube-binaries: $*" >&2; }

ready() {  # ready: both binaries are in $dest and the folder was completed
    [ -f "$dest/.complete" ] && [ -x "$dest/kube-apiserver" ] && [ -x "$dest/etcd" ]
}

if ready; then
    echo "$dest"
    exit 0
fi

mkdir -p "$cache"
exec 9>"$cache/.$name.lock"
flock 9
if ready; then  # another run built it while this one waited for the lock
    echo "$dest"
    exit 0
fi

work="$(mktemp -d "$cache/.build-$name.XXXXXX")"
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
mkdir -p "$work/out" "$work/kube" "$work/etcd"

export GOMODCACHE="$cache/go/mod" GOCACHE="$work/gocache"
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" GOWORK=off
export GOPROXY="${GOPROXY:-$("$GO" env GOPROXY)}"
start=$(date +%s)

# kube-apiserver: k8s.io/kubernetes replaces every k8s.io/* staging module with ./staging/src/...; a module
# that requires it must replace each one with the published module of the same release (v0.Y.Z).
log "kube-apiserver $KUBE_VERSION (Go $("$GO" env GOVERSION))"
staging_version="v0.${KUBE_VERSION#v1.}"
kube_mod="$(cd "$work" && "$GO" mod download -json "k8s.io/kubernetes@$KUBE_VERSION" |
    sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
[ -f "$kube_mod" ] || { log "no go.mod for k8s.io/kubernetes@$KUBE_VERSION"; exit 1; }
{
    echo "module kube-binaries/kube"
    echo
    sed -n 's/^go \(.*\)$/go \1/p; s/^godebug \(.*\)$/godebug \1/p' "$kube_mod"
    echo
    echo "require k8s.io/kubernetes $KUBE_VERSION"
    echo
    echo "replace ("
    sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9.-]*\) => \./staging/src/.*$#\t\1 => \1 '"$staging_version"'#p' "$kube_mod"
    echo ")"
} > "$work/kube/go.mod"
grep -q "k8s.io/api => k8s.io/api $staging_version" "$work/kube/go.mod" ||
    { log "found no staging replace directives in $kube_mod"; exit 1; }
major="${KUBE_VERSION#v}"; major="${major%%.*}"
minor="${KUBE_VERSION#v*.}"; minor="${minor%%.*}"
pkg=k8s.io/component-base/version
(cd "$work/kube" && "$GO" build -trimpath -o "$work/out/kube-apiserver" -ldflags "-s -w \
    -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=$major -X $pkg.gitMinor=$minor \
    -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z" k8s.io/kubernetes/cmd/kube-apiserver)
log "kube-apiserver built in $(($(date +%s) - start)) s"

# etcd: the server module's own main package, in a module of its own so that its dependencies keep the
# versions etcd was released with.
log "etcd $ETCD_VERSION"
etcd_start=$(date +%s)
printf 'module kube-binaries/etcd\n\ngo 1.23\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$work/etcd/go.mod"
(cd "$work/etcd" && "$GO" build -trimpath -o "$work/out/etcd" -ldflags "-s -w" go.etcd.io/etcd/server/v3)
log "etcd built in $(($(date +%s) - etcd_start)) s"

"$work/out/kube-apiserver" --version >&2
"$work/out/etcd" --version >&2
printf 'kube-apiserver %s\netcd %s\ngo %s\nbuilt %s\n' "$KUBE_VERSION" "$ETCD_VERSION" \
    "$("$GO" env GOVERSION)" "$(date -u +%FT%TZ)" > "$work/out/VERSIONS"
touch "$work/out/.complete"
rm -rf "$dest"  # an incomplete folder left by an interrupted older script
mv -T "$work/out" "$dest"
log "built in $(($(date +%s) - start)) s: $dest"
echo "$dest"
