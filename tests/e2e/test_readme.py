"""docs/api.md's caller sections run as written: "Calling from Python" and "Debugging with
grpcurl", against a real server on 127.0.0.1 serving the embedded example catalog (the address in
the page is replaced by the test server's). docs/go.md's program ("Calling from Go") is run by
the Go tests (client/go/cmd/selectordoc)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from pathlib import Path

from conftest import REPO_ROOT
from helpers_markdown import page, section

API_PAGE = page("docs/api.md")
README_ADDRESS = "127.0.0.1:50051"


def _section(title: str) -> str:
    return section(API_PAGE, title)


def _blocks(title: str, lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", _section(title), re.S)


def test_python_section_runs_as_written(running_server) -> None:  # type: ignore[no-untyped-def]
    server = running_server()
    [code] = _blocks("Calling from Python", "python")
    expected = [line.strip()[2:] for line in code.splitlines() if line.strip().startswith("# ")]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.replace(README_ADDRESS, server.address), "docs/api.md", "exec"), {})
    assert out.getvalue().splitlines() == expected


def test_grpcurl_section_runs_as_written(running_server) -> None:  # type: ignore[no-untyped-def]
    server = running_server()
    [block] = _blocks("Debugging with grpcurl", "sh")
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block.replace(README_ADDRESS, server.address)],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    for service in (
        "ome.selector.v1.SelectionService",
        "ome.selector.v1.CacheService",
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
    ):
        assert f"\n{service}\n" in f"\n{out}"
    assert '"status": "SERVING"' in out
    assert '"name": "llama-3-3-70b-hopper"' in out
    assert "Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct" in out
    # The BASIC and the FULL SelectRuntime: both carry the summary, only FULL the exclusions.
    assert out.count('"text": "1/7 runtimes are candidates: 6 accelerator class"') == 2
    assert out.count('"exclusions": [') == 1
    # GetRuntimeTree: the report of `tree team-llama -n llama-demo --show-unattributed-users`.
    assert '"kind": "RuntimeTreeReport"' in out
    assert '"snapshot": "RUNTIME_TREE_SNAPSHOT_COMPLETE"' in out
