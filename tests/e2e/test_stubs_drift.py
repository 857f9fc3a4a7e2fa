"""The committed Python stubs must be exactly what `bash protos/generate.sh` produces."""

from __future__ import annotations

import filecmp
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _files(base: Path) -> dict[str, Path]:
    return {
        str(p.relative_to(base)): p for p in sorted(base.rglob("*")) if p.is_file() and "__pycache__" not in p.parts
    }


def test_generated_python_stubs_match_protos(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHON=sys.executable)
    subprocess.run(
        ["bash", str(ROOT / "protos" / "generate.sh"), str(tmp_path)], check=True, env=env, capture_output=True
    )
    fresh = _files(tmp_path / "ome")
    committed = _files(ROOT / "client" / "python" / "ome")
    assert sorted(fresh) == sorted(committed), "stub files differ: run `bash protos/generate.sh`"
    stale = [name for name in fresh if not filecmp.cmp(fresh[name], committed[name], shallow=False)]
    assert stale == [], f"stubs drifted from protos/: {stale}; run `bash protos/generate.sh`"
