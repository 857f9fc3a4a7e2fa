#!/bin/sh
# Run the pinned buf (npm @bufbuild/buf) from the repo root, installing it first if needed:
#   protos/buf.sh lint
# buf is installed with `npm install --prefix .ci/.tools @bufbuild/buf@$BUF_VERSION` (git-ignored).
# Set BUF=/path/to/buf to use another binary.
set -eu
BUF_VERSION=${BUF_VERSION:-1.75.0}
root=$(cd "$(dirname "$0")/.." && pwd)
tools="$root/.ci/.tools"
buf=${BUF:-$tools/node_modules/.bin/buf}

if [ ! -x "$buf" ] || { [ -z "${BUF:-}" ] && ! "$buf" --version 2>/dev/null | grep -qx "$BUF_VERSION"; }; then
    [ -z "${BUF:-}" ] || { echo "protos/buf.sh: BUF=$BUF is not executable" >&2; exit 1; }
    command -v npm >/dev/null 2>&1 || { echo "protos/buf.sh: npm not found (apt-get install -y npm), or set BUF=/path/to/buf" >&2; exit 1; }
    echo "protos/buf.sh: installing @bufbuild/buf@$BUF_VERSION into $tools" >&2
    mkdir -p "$tools"
    npm install --prefix "$tools" --no-audit --no-fund --silent "@bufbuild/buf@$BUF_VERSION" >&2
fi
cd "$root"
exec "$buf" "$@"
