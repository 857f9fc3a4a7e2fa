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


def test_the_spec_messages_match_the_crds() -> None:
    """The generated part of types.proto is what `python protos/crdgen.py` writes from the CRDs in
    ../shared (the check fails on drift, and on a CRD field a hand-written message lacks)."""
    got = subprocess.run(
        [sys.executable, str(ROOT / "protos" / "crdgen.py"), "--check"], capture_output=True, text=True
    )
    assert (got.returncode, got.stderr) == (0, "")


def test_the_spec_check_fails_on_a_lost_field() -> None:
    """The gate can fail: a types.proto without Container's generated `env` field is not what the
    generator writes, and a hand-written message without a CRD field is an error."""
    sys.path.insert(0, str(ROOT / "protos"))
    import crdgen

    text = crdgen.PROTO.read_text()
    lost = text.replace("  repeated EnvVar env = 5;\n", "", 1)
    assert lost != text
    out, errors = crdgen.generate(crdgen.DEFAULT_CRDS, lost)
    assert (errors, out != lost) == ([], True)
    handwritten = text.replace("  map<string, AcceleratorModelConfig> accelerator_config = 12;\n", "", 1)
    assert handwritten != text
    _, errors = crdgen.generate(crdgen.DEFAULT_CRDS, handwritten)
    assert errors == [
        "ServingRuntime.spec.supportedModelFormats[].acceleratorConfig: "
        "the hand-written SupportedModelFormat has no field for it"
    ]
