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
    found: list[list[tuple[str, str]]] = []
    for keyword, rest in instructions(text):
        if keyword == "FROM":
            found.append([])
        found[-1].append((keyword, rest))
    return found


def key_values(arguments: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in shlex.split(arguments))


FINAL = stages(DOCKERFILE.read_text())[-1]
ENV = {k: v for keyword, rest in FINAL if keyword == "ENV" for k, v in key_values(rest).items()}
[ENTRYPOINT] = [json.loads(rest) for keyword, rest in FINAL if keyword == "ENTRYPOINT"]


def test_multi_stage_non_root_with_oci_labels() -> None:
    build, final = stages(DOCKERFILE.read_text())
    assert build[0] == ("FROM", "python:3.11-slim AS build")
    assert ("RUN", "pip wheel --no-cache-dir --wheel-dir /wheels .") in build
    assert final[0] == ("FROM", "python:3.11-slim")
    assert ("COPY", "--from=build /wheels /wheels") in final
    assert [rest for keyword, rest in final if keyword == "USER"] == ["65532:65532"]
    labels = {k: v for keyword, rest in final if keyword == "LABEL" for k, v in key_values(rest).items()}
    assert sorted(labels) == sorted(
        f"org.opencontainers.image.{k}" for k in ("title", "description", "version", "licenses", "source")
    )
    assert ENTRYPOINT == ["ome-selector", "serve"]
    assert (ENV["OME_SELECTOR_LISTEN"], ENV["OME_SELECTOR_HTTP_LISTEN"]) == (
        "unix:/run/ome-selector/api.sock",
        "0.0.0.0:8081",
    )


def test_the_entry_command_runs_outside_a_container(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    socket_path = tmp_path / "api.sock"
    for name, value in {
        **ENV,
        "OME_SELECTOR_LISTEN": f"unix:{socket_path}",  # instead of /run/ome-selector/api.sock
        "OME_SELECTOR_HTTP_LISTEN": "127.0.0.1:0",  # instead of 0.0.0.0:8081
        "OME_SELECTOR_METRICS_LISTEN": "127.0.0.1:0",  # instead of 0.0.0.0:9090
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
