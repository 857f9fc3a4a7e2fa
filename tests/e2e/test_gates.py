"""The lint gates of .ci/run can fail: ``ruff check`` and ``ruff format --check`` with the
project's configuration reject a seeded error, and pass on the tree itself."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO_ROOT

RUFF = Path(sys.executable).parent / "ruff"


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    if not RUFF.exists() and shutil.which("ruff") is None:
        pytest.skip("ruff is not installed (the dev extra installs it)")
    return subprocess.run([str(RUFF), *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=120)


CONFIG = str(REPO_ROOT / "pyproject.toml")


def test_ruff_check_fails_on_a_seeded_error(tmp_path: Path) -> None:
    seeded = tmp_path / "seeded_lint_error.py"
    seeded.write_text("import os\n\n\ndef f() -> None:\n    return None\n")
    result = _ruff("check", "--config", CONFIG, "--output-format", "concise", str(seeded))
    assert result.returncode == 1
    assert "F401 [*] `os` imported but unused" in result.stdout


def test_ruff_format_check_fails_on_a_seeded_error(tmp_path: Path) -> None:
    seeded = tmp_path / "seeded_format_error.py"
    seeded.write_text("x = {  'a':1 }\n")
    result = _ruff("format", "--config", CONFIG, "--check", str(seeded))
    assert result.returncode == 1
    assert "1 file would be reformatted" in result.stdout


def test_the_tree_passes_both_gates() -> None:
    assert _ruff("check", ".").returncode == 0
    assert _ruff("format", "--check", ".").returncode == 0
