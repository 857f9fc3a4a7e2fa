"""The Go example as the controller would connect: the Python client's service config, a unix
socket (the sidecar's), and mTLS, against the real server. Built by client/go/ci.sh; skipped
without the binary, except under CI."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Callable

import pytest
from conftest import REPO_ROOT, ServerProcess
from ome_selector_client import service_config
from test_sidecar_grpc import Pki

MAIN_GO = REPO_ROOT / "client" / "go" / "cmd" / "selectorexample" / "main.go"
BINARY = REPO_ROOT / "client" / "go" / "bin" / "selectorexample"
SELECTED = "selected: ClusterServingRuntime/llama-3-3-70b-hopper score=2"


def test_go_example_uses_the_python_clients_service_config() -> None:
    [text] = re.findall(r"const serviceConfig = `([^`]*)`", MAIN_GO.read_text())
    assert json.loads(text) == service_config(3, 0.1)


@pytest.fixture(scope="module")
def binary() -> Path:
    if not BINARY.is_file():
        if os.environ.get("CI"):
            pytest.fail("client/go/bin/selectorexample is missing: .ci/run builds it with client/go/ci.sh")
        pytest.skip("client/go/bin/selectorexample not built (run client/go/ci.sh)")
    return BINARY


def run(binary: Path, *args: str) -> list[str]:
    env = {**os.environ, "GRPC_GO_RETRY": "on"}
    result = subprocess.run(
        [str(binary), *args, "-timeout", "20s"], capture_output=True, text=True, timeout=60, env=env
    )
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_go_example_over_the_unix_socket(
    binary: Path, running_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = running_server(listen=f"unix:{tmp_path}/api.sock")
    assert SELECTED in run(binary, "-addr", server.address)


def test_go_example_over_mtls(binary: Path, running_server: Callable[..., ServerProcess], tmp_path: Path) -> None:
    pki = Pki(tmp_path)
    server = running_server(
        extra_args=[
            "--tls-cert",
            str(pki.server_cert),
            "--tls-key",
            str(pki.server_key),
            "--tls-client-ca",
            str(pki.ca),
        ]
    )
    lines = run(
        binary, "-addr", server.address, "-ca", str(pki.ca), "-cert", str(pki.client_cert), "-key", str(pki.client_key)
    )
    assert SELECTED in lines
