"""The Dockerfile: multi-stage, non-root, OCI labels, and its exact entry command run outside a
container (no Docker engine here) with the image's ENV, binding loopback only: the addresses
are overridden through the same OME_SELECTOR_* variables a Deployment would set."""

from __future__ import annotations

import json
import re
import shlex
import stat
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT, ServerProcess
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector_client import SelectorClient
from sidecar_helpers import http_address, http_get

DOCKERFILE = REPO_ROOT / "Dockerfile"


def instructions(text: str) -> list[tuple[str, str]]:
    """``(INSTRUCTION, arguments)`` per Dockerfile instruction, continuations joined, comments dropped."""
    joined = re.sub(r"\\\n", " ", "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#")))
    out = []
    for line in joined.splitlines():
        if line.strip():
            keyword, _, rest = line.strip().partition(" ")
            out.append((keyword.upper(), rest.strip()))
    return out


def stages(text: str) -> list[list[tuple[str, str]]]:
    """The instructions of each stage; the global ARGs (before the first FROM) are left out."""
    found: list[list[tuple[str, str]]] = []
    for keyword, rest in instructions(text):
        if keyword == "FROM":
            found.append([])
        if found:
            found[-1].append((keyword, rest))
    return found


def global_args(text: str) -> dict[str, str]:
    """The ARGs before the first FROM, with their defaults."""
    found: dict[str, str] = {}
    for keyword, rest in instructions(text):
        if keyword == "FROM":
            break
        if keyword == "ARG":
            name, _, default = rest.partition("=")
            found[name] = default
    return found


def key_values(arguments: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in shlex.split(arguments))


FINAL = stages(DOCKERFILE.read_text())[-1]
ENV = {k: v for keyword, rest in FINAL if keyword == "ENV" for k, v in key_values(rest).items()}
[ENTRYPOINT] = [json.loads(rest) for keyword, rest in FINAL if keyword == "ENTRYPOINT"]
DIGEST = r"@sha256:[0-9a-f]{64}"
OCI_LABELS = sorted(f"org.opencontainers.image.{k}" for k in ("title", "description", "version", "licenses", "source"))


def labels_of(stage: list[tuple[str, str]]) -> dict[str, str]:
    return {k: v for keyword, rest in stage if keyword == "LABEL" for k, v in key_values(rest).items()}


def test_multi_stage_non_root_with_oci_labels() -> None:
    text = DOCKERFILE.read_text()
    assert re.fullmatch(rf"python:3\.11-slim{DIGEST}", global_args(text)["PYTHON_IMAGE"])  # pinned by digest
    build, final = stages(text)
    assert build[0] == ("FROM", "${PYTHON_IMAGE} AS build")
    assert ("RUN", "pip wheel --no-cache-dir --wheel-dir /wheels .") in build
    assert final[0] == ("FROM", "${PYTHON_IMAGE}")
    assert ("COPY", "--from=build /wheels /wheels") in final
    assert [rest for keyword, rest in final if keyword == "USER"] == ["65532:65532"]
    labels = labels_of(final)
    assert sorted(labels) == OCI_LABELS
    # The version label comes from the build argument, which the build checks against the wheel.
    assert (labels["org.opencontainers.image.version"], ("ARG", "VERSION")) == ("${VERSION}", final[1])
    [install] = [rest for keyword, rest in final if keyword == "RUN"]
    assert '[ "$installed" = "$VERSION" ] ||' in install
    assert ENTRYPOINT == ["ome-selector", "serve"]
    assert (ENV["OME_SELECTOR_LISTEN"], ENV["OME_SELECTOR_HTTP_LISTEN"]) == (
        "unix:/run/ome-selector/api.sock",
        "0.0.0.0:8090",
    )
    assert [rest for keyword, rest in final if keyword == "EXPOSE"] == ["8090 9090"]  # probes, metrics


def test_sync_image_is_static_distroless_non_root() -> None:
    text = (REPO_ROOT / "sync.Dockerfile").read_text()
    bases = global_args(text)
    assert re.fullmatch(rf"golang:1\.26{DIGEST}", bases["GO_IMAGE"])
    assert re.fullmatch(rf"gcr\.io/distroless/static:nonroot{DIGEST}", bases["BASE_IMAGE"])
    build, final = stages(text)
    assert build[0] == ("FROM", "${GO_IMAGE} AS build")
    assert (
        "RUN",
        'CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w" -o /out/ome-selector-sync'
        " ./cmd/ome-selector-sync",
    ) in build
    assert final[0] == ("FROM", "${BASE_IMAGE}")
    assert ("COPY", "--from=build /out/ome-selector-sync /ome-selector-sync") in final
    assert [rest for keyword, rest in final if keyword == "USER"] == ["65532:65532"]
    assert sorted(labels_of(final)) == OCI_LABELS
    assert [json.loads(rest) for keyword, rest in final if keyword == "ENTRYPOINT"] == [["/ome-selector-sync"]]
    assert [rest for keyword, rest in final if keyword == "EXPOSE"] == ["8091 8092"]


def ignored(relative: str, patterns: list[str]) -> bool:
    """Whether Docker's .dockerignore rules leave ``relative`` (a path under the context) out:
    a pattern matches the path or one of its parent folders; ``**`` spans folders; ``!`` re-includes."""
    parts = relative.split("/")
    out = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = raw.removeprefix("!").strip("/")
        regex = "".join(
            ".*" if piece == "**" else re.escape(piece).replace(r"\*", "[^/]*").replace(r"\?", "[^/]")
            for piece in re.split(r"(\*\*)", pattern)
        ).replace(".*/", "(?:.*/)?")
        if any(re.fullmatch(regex, "/".join(parts[:n])) for n in range(1, len(parts) + 1)):
            out = not negate
    return out


def test_dockerignore_keeps_the_context_small() -> None:
    patterns = [
        line.strip()
        for line in (REPO_ROOT / ".dockerignore").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert not ignored("README.md", patterns) and not ignored("server/ome_selector/cli.py", patterns)
    for path in (
        ".venv/bin/python",
        ".git/HEAD",
        "server/ome_selector/__pycache__/cli.cpython-311.pyc",
        "client/go/bin/selectorexample",
        "ome_selector.egg-info/PKG-INFO",
        "tests/conftest.py",
    ):
        assert ignored(path, patterns), path
    # Everything the two Dockerfiles COPY from the context is in it.
    for dockerfile in ("Dockerfile", "sync.Dockerfile"):
        for keyword, rest in instructions((REPO_ROOT / dockerfile).read_text()):
            if keyword == "COPY" and not rest.startswith("--from"):
                for source in rest.split()[:-1]:
                    for path in REPO_ROOT.glob(source):
                        assert not ignored(str(path.relative_to(REPO_ROOT)), patterns), (dockerfile, source)
    context = [p for p in REPO_ROOT.rglob("*") if p.is_file() and not ignored(str(p.relative_to(REPO_ROOT)), patterns)]
    size = sum(p.stat().st_size for p in context)
    assert size < 8 * 2**20, f"build context {size / 2**20:.1f} MiB"


def test_the_entry_command_runs_outside_a_container(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    socket_path = tmp_path / "api.sock"
    for name, value in {
        **ENV,
        "OME_SELECTOR_LISTEN": f"unix:{socket_path}",  # instead of /run/ome-selector/api.sock
        "OME_SELECTOR_HTTP_LISTEN": "127.0.0.1:0",  # instead of 0.0.0.0:8090
        "OME_SELECTOR_DRAIN_DELAY": "0",
    }.items():
        monkeypatch.setenv(name, value)
    command = [str(Path(sys.executable).parent / ENTRYPOINT[0]), *ENTRYPOINT[1:]]
    server = ServerProcess(command)
    try:
        server.address = server.wait_for_line(r"listening on ([^\s\"]+)").group(1)
        assert server.address == f"unix:{socket_path}"
        http = http_address(server)
        assert re.fullmatch(r"127\.0\.0\.1:\d+", http)
        assert stat.S_IMODE(socket_path.stat().st_mode) == 0o600
        assert http_get(http, "/healthz") == (200, "ok\n")
        assert http_get(http, "/readyz") == (503, "cache not synced\n")  # OME_SELECTOR_WAIT_FOR_SYNC=true
        with SelectorClient(server.address) as client:
            model = types_pb2.ClusterBaseModel(metadata=types_pb2.ObjectMeta(name="m"))
            assert client.apply_snapshot("controller-1", [cache_pb2.CacheObject(cluster_base_model=model)]).synced
        assert http_get(http, "/readyz") == (200, "ready\n")
    finally:
        code = server.stop()
    assert code == 0
    entries = [json.loads(line) for line in server.lines]  # OME_SELECTOR_LOG_FORMAT=json
    assert entries[-1]["message"] == "stopped"
