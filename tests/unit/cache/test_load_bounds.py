"""Bounded loads: YAML aliases, nodes and nesting are counted while a document is composed, so a
hostile file is refused before anything is built from it (peak RSS measured in a subprocess); a
load and a cache write have object-count bounds; an unreadable folder is a warning (fatal with
--strict)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest
from ome.selector.v1 import cache_pb2
from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError

# Peak RSS of a process that loads any one manifest file up to 64 MiB (docs/api.md, "Bounds").
LOAD_RSS_BOUND_MB = 1024

CSR_HEAD = "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata:\n  name: bomb\n  annotations:\n"


def _alias_bomb() -> str:
    """The finding's file: 1.0 MB that aliases a 1,000,000-character string into 500 entries."""
    lines = [f"    a0: &big {'x' * 1_000_000}", *(f"    a{i}: *big" for i in range(1, 500))]
    return CSR_HEAD + "\n".join(lines) + "\nspec: {}\n"


def _laughs() -> str:
    """Twelve levels of ten aliases each: 10^12 scalars once expanded."""
    lines = ["a0: &a0 [" + ",".join(["lol"] * 10) + "]"]
    lines += [f"a{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 12)]
    return "\n".join(lines) + "\n"


HOSTILE = {
    "alias-bomb": (
        _alias_bomb,
        "document 0: invalid YAML: document expands to more than 67108864 bytes with its YAML aliases; "
        "not loaded (line 73, column 10)",
    ),
    "laughs": (
        _laughs,
        "document 0: invalid YAML: document expands to more than 67108864 bytes with its YAML aliases; "
        "not loaded (line 8, column 10)",
    ),
    "self-alias": (
        lambda: "a: &a [1, *a]\n",
        "document 0: invalid YAML: alias *a is inside the node it names (a document without end) (line 1, column 11)",
    ),
    "deep": (
        lambda: "[" * 100_000 + "]" * 100_000 + "\n",
        "document 0: invalid YAML: while increasing flow level: exceeded maximum nesting depth (line 1, column 1001)",
    ),
    "tiny-scalars": (
        lambda: "[" + "a," * (4 * 1024 * 1024) + "a]\n",
        "document 0: invalid YAML: document has more than 1000000 YAML nodes; not loaded (line 1, column 2000000)",
    ),
}

_CHILD = """
import json, sys
from ome_selector.cache.manifests import load_manifests
result = load_manifests([sys.argv[1]])
# VmHWM: this process's own peak (ru_maxrss keeps the forking parent's peak across exec).
status = open("/proc/self/status").read().split("VmHWM:")[1]
peak_mb = int(status.split()[0]) // 1024
print(json.dumps({"errors": result.errors, "objects": len(result.objects), "peak_mb": peak_mb}))
"""


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_document_is_refused_before_it_is_built(tmp_path: Path, case: str) -> None:
    make, reason = HOSTILE[case]
    good = (
        "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: after}\nspec: {modelFormat: {name: x}}\n"
    )
    path = tmp_path / f"{case}.yaml"
    path.write_text(make() + "---\n" + good, encoding="utf-8")
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=600, check=True
    )
    found = json.loads(child.stdout)
    assert (found["errors"], found["objects"]) == ([f"{path}: {reason}"], 1)  # the next document still loads
    assert found["peak_mb"] < LOAD_RSS_BOUND_MB, found["peak_mb"]


def test_the_alias_bomb_stays_small(tmp_path: Path) -> None:
    """Before, this 1 MB file cost gigabytes; now it is refused after ~70 MB of expansion."""
    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb(), encoding="utf-8")
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(path)], capture_output=True, text=True, timeout=600, check=True
    )
    assert json.loads(child.stdout)["peak_mb"] < 256


def _models(count: int) -> list[cache_pb2.CacheObject]:
    out = []
    for i in range(count):
        obj = cache_pb2.CacheObject()
        obj.cluster_base_model.metadata.name = f"m{i}"
        obj.cluster_base_model.spec.model_format.name = "safetensors"
        out.append(obj)
    return out


def test_a_load_past_its_object_bound_is_refused(tmp_path: Path) -> None:
    doc = "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {{name: m{i}}}\nspec: {{modelFormat: {{name: x}}}}\n"
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text("---\n".join(doc.format(i=i) for i in range(3)), encoding="utf-8")
    second.write_text("---\n".join(doc.format(i=i) for i in range(3, 6)), encoding="utf-8")
    assert len(load_manifests([str(first), str(second)], max_objects=6).objects) == 6
    result = load_manifests([str(first), str(second)], max_objects=4)
    line = f"{second}: document 1: more than 4 objects in one load (--max-objects); the load is refused"
    assert (result.over_limit, result.errors, result.clean) == (line, [line], False)


@pytest.mark.parametrize("write", ["upsert", "delete", "apply"])
def test_a_write_past_its_object_bound_is_invalid_and_changes_nothing(write: str) -> None:
    store = CacheStore(max_objects=3, max_write_objects=2)
    store.apply_snapshot("v1", _models(3))
    before = store.snapshot
    keys = [cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL, name=f"m{i}") for i in range(3)]
    with pytest.raises(RequestError) as refused:
        if write == "upsert":
            store.upsert("", _models(3))
        elif write == "delete":
            store.delete("", keys)
        else:
            store.apply_snapshot("v2", _models(4))
    field, limit, flag = {
        "upsert": ("objects", 2, "--max-write-objects"),
        "delete": ("keys", 2, "--max-write-objects"),
        "apply": ("objects", 3, "--max-objects"),
    }[write]
    count = 4 if write == "apply" else 3
    assert [(v.field, v.description) for v in refused.value.violations] == [
        (field, f"Too many: {count}: must have at most {limit} items (the server's {flag})")
    ]
    assert store.snapshot is before


@pytest.fixture
def folder_with_an_unreadable_part(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, Path]]:
    """(root, its sub-folder that cannot be listed) beside a good manifest. Root reads any folder
    whatever its mode, so as root listing it fails as it does for anyone else on a mode-0 folder."""
    root = Path(tempfile.mkdtemp(prefix="ome-unreadable-"))
    (root / "good.yaml").write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterBaseModel\nmetadata: {name: good}\nspec: {modelFormat: {name: x}}\n",
        encoding="utf-8",
    )
    hidden = root / "hidden"
    hidden.mkdir()
    (hidden / "more.yaml").write_text("kind: Nothing\n", encoding="utf-8")
    hidden.chmod(0)
    if os.geteuid() == 0:
        scandir = os.scandir

        def refuse(path: Any = ".") -> Any:
            if isinstance(path, (str, os.PathLike)) and os.fspath(path) == str(hidden):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return scandir(path)

        monkeypatch.setattr(os, "scandir", refuse)
    yield root, hidden
    hidden.chmod(0o755)
    shutil.rmtree(root)


def test_an_unreadable_folder_is_a_warning_that_strict_refuses(
    folder_with_an_unreadable_part: tuple[Path, Path],
) -> None:
    root, hidden = folder_with_an_unreadable_part
    result = load_manifests([str(root)])
    assert result.warnings == [f"{hidden}: cannot read folder: Permission denied; its files are not loaded"]
    assert (result.errors, result.clean) == ([], False)  # --strict refuses it
    assert [o.cluster_base_model.metadata.name for o in result.objects] == ["good"]
