#!/usr/bin/env bash
# requirements/dev.lock: every package the server and its dev tools need (pyproject.toml's
# dependencies and its dev extra), pinned with hashes by uv, for any platform, Python 3.11+.
#   bash scripts/lock.sh            write the lock again (the versions it has are kept where
#                                   pyproject.toml still allows them; --upgrade takes the newest)
#   bash scripts/lock.sh --upgrade  newest versions pyproject.toml allows
#   bash scripts/lock.sh --check    exit 1, with the diff, when the lock no longer matches
#                                   pyproject.toml (what CI runs)
# Install from it: pip install --require-hashes -r requirements/dev.lock && pip install --no-deps -e .
# uv comes from the lock itself (the dev extra); UV=/path/to/uv to use another.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
lock=requirements/dev.lock
uv="${UV:-}"
if [ -z "$uv" ]; then
    if [ -x .venv/bin/uv ]; then uv=.venv/bin/uv; else uv=uv; fi
fi
compile() {  # compile OUTPUT [uv options]: resolve into OUTPUT, keeping the pins OUTPUT has
    local out="$1"
    shift
    "$uv" pip compile pyproject.toml --extra dev --universal --python-version 3.11 \
        --generate-hashes --custom-compile-command "bash scripts/lock.sh" --annotation-style split --quiet --output-file "$out" "$@"
}
case "${1:-}" in
--check)
    [ -f "$lock" ] || { echo "scripts/lock.sh: $lock missing; write it with: bash scripts/lock.sh" >&2; exit 1; }
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    cp "$lock" "$tmp/dev.lock"
    # The lock's pins are the preferences, so a newer release on PyPI changes nothing; only a
    # pyproject.toml change that the pins no longer satisfy (or a new or dropped package) does.
    # Without PyPI, uv's cache answers (--offline) when it holds what the resolution reads.
    if ! compile "$tmp/dev.lock" 2>"$tmp/err"; then
        if ! grep -qiE "network|connect|dns|timed out|failed to fetch|request failed" "$tmp/err"; then
            cat "$tmp/err" >&2
            echo "scripts/lock.sh: pyproject.toml's requirements do not resolve (above)" >&2
            exit 1
        fi
        echo "scripts/lock.sh: uv could not reach PyPI ($(grep -m 1 -iE 'network|connect|dns|timed out|fetch|request' "$tmp/err")); resolving from uv's cache" >&2
        cp "$lock" "$tmp/dev.lock"
        compile "$tmp/dev.lock" --offline
    fi
    if ! diff -u "$lock" "$tmp/dev.lock"; then
        echo "scripts/lock.sh: $lock is stale against pyproject.toml; write it again with: bash scripts/lock.sh" >&2
        exit 1
    fi
    echo "scripts/lock.sh: $lock matches pyproject.toml"
    ;;
--upgrade) compile "$lock" --upgrade ;;
"") compile "$lock" ;;
*) echo "usage: bash scripts/lock.sh [--check|--upgrade]" >&2; exit 2 ;;
esac
