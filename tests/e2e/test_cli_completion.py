"""``ome-selector completion``: the installed console script answers argcomplete's completion
protocol (what the printed bash/zsh/fish scripts call) from its parser."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = shutil.which("ome-selector", path=str(Path(sys.executable).parent))


def complete(line: str, tmp_path: Path) -> list[str]:
    """The candidates ``ome-selector`` offers for the cursor at the end of ``line``."""
    assert SCRIPT is not None
    answer = tmp_path / "answer"
    env = {
        **os.environ,
        "_ARGCOMPLETE": "1",
        "_ARGCOMPLETE_IFS": "\n",
        "COMP_LINE": line,
        "COMP_POINT": str(len(line)),
        "_ARGCOMPLETE_STDOUT_FILENAME": str(answer),
    }
    process = subprocess.run([SCRIPT], env=env, capture_output=True, text=True, timeout=60)
    assert (process.returncode, process.stdout) == (0, ""), process.stderr
    return answer.read_text().split("\n")


def test_a_subcommand_prefix_completes(tmp_path: Path) -> None:
    assert complete("ome-selector sel", tmp_path) == ["select "]
    assert complete("ome-selector ver", tmp_path) == ["version "]


def test_an_output_flag_completes_its_choices(tmp_path: Path) -> None:
    assert complete("ome-selector explain -o ", tmp_path) == ["table", "wide", "json", "yaml", "name"]
    assert complete("ome-selector completion ", tmp_path) == ["-h", "--help", "bash", "zsh", "fish"]


@pytest.mark.parametrize("shell, first_line", [("bash", "#compdef ome-selector"), ("fish", "")])
def test_the_scripts_name_the_command(shell: str, first_line: str) -> None:
    assert SCRIPT is not None
    process = subprocess.run([SCRIPT, "completion", shell], capture_output=True, text=True, timeout=60)
    assert (process.returncode, process.stderr) == (0, "")
    assert process.stdout.splitlines()[0] == first_line
    assert "ome-selector" in process.stdout
    assert "_ARGCOMPLETE" in process.stdout
