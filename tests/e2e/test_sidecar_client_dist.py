"""The Python client as its own distribution (client/python/pyproject.toml): compatible ranges,
a wheel with the client and the stubs but none of the server, and a caller's script that
type-checks against that wheel with ``mypy --strict``."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from conftest import REPO_ROOT

CLIENT = REPO_ROOT / "client" / "python"

USER_SCRIPT = '''\
"""A caller's own script."""
import grpc

from ome.v1beta1 import types_pb2
from ome_selector_client import SelectorClient, SelectorError, channel_options


def pick(target: str, namespace: str, model: str) -> str | None:
    isvc = types_pb2.InferenceService()
    isvc.metadata.namespace = namespace
    isvc.spec.model.name = model
    with SelectorClient(target, timeout=5.0, retries=2, backoff=0.1) as client:
        try:
            response = client.select_runtime(isvc)
        except SelectorError as error:
            if error.code == grpc.StatusCode.NOT_FOUND:
                return None
            raise
    if response.HasField("selection"):
        return response.selection.runtime.name
    return None


def channel(target: str) -> grpc.Channel:
    return grpc.insecure_channel(target, options=channel_options(retries=1))
'''

WRONG_SCRIPT = """\
from ome.v1beta1 import types_pb2
from ome_selector_client import SelectorClient

with SelectorClient("127.0.0.1:50051") as client:
    score: str = client.select_runtime(types_pb2.InferenceService()).selection.score
"""


def test_dependencies_are_compatible_ranges() -> None:
    project = tomllib.loads((CLIENT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "ome-selector-client"
    names = {re.split(r"[<>=!~ ]", d, maxsplit=1)[0] for d in project["dependencies"]}
    assert names == {"grpcio", "grpcio-health-checking", "grpcio-status", "googleapis-common-protos", "protobuf"}
    for dependency in project["dependencies"]:
        assert "==" not in dependency and ">=" in dependency and ",<" in dependency, dependency


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("client-dist")
    source = work / "src"
    shutil.copytree(CLIENT, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            str(source),
            "-w",
            str(work / "dist"),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    [built] = (work / "dist").glob("*.whl")
    return built


def test_wheel_has_the_client_and_stubs_only(wheel: Path) -> None:
    assert wheel.name == "ome_selector_client-0.1.0-py3-none-any.whl"
    files = set(zipfile.ZipFile(wheel).namelist())
    assert {
        "ome_selector_client/client.py",
        "ome_selector_client/py.typed",
        "ome/selector/v1/selector_pb2.pyi",
        "ome/selector/v1/selector_pb2_grpc.pyi",
        "ome/v1beta1/types_pb2.pyi",
    } <= files
    assert not [name for name in files if name.startswith("ome_selector/")]


def test_a_callers_script_type_checks_with_mypy_strict(wheel: Path, tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    site = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(site), str(wheel)],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    (tmp_path / "good.py").write_text(USER_SCRIPT)
    (tmp_path / "wrong.py").write_text(WRONG_SCRIPT)
    env = {**os.environ, "MYPYPATH": str(site)}  # the wheel's copy, ahead of the repository's

    checked = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            os.devnull,
            "good.py",
            "wrong.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 1
    assert checked.stdout.splitlines() == [  # good.py is clean; the one error is wrong.py's
        'wrong.py:5: error: Incompatible types in assignment (expression has type "int", variable has type "str")  [assignment]',
        "Found 1 error in 1 file (checked 2 source files)",
    ], checked.stdout + checked.stderr
