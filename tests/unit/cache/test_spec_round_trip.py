"""Every catalog runtime's YAML -> proto -> JSON equals the YAML, after the CRD defaults the
cache applies (``operator: Equal`` and ``weight: 1`` on each ``modelFormat`` / ``modelFramework``):
the protos carry the whole runtime spec (protos/crdgen.py), so nothing is dropped on the way.

proto3 JSON writes 64-bit integers as strings; ``_numbers`` reads them back as numbers, as
Kubernetes writes them."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import CATALOG_RUNTIMES
from google.protobuf.descriptor import FieldDescriptor
from ome_selector.cache.ingest import apply_defaults
from ome_selector.cache.manifests import load_manifests
from ome_selector.cli.documents import document

FILES = sorted(p for p in CATALOG_RUNTIMES.rglob("*.yaml") if p.name != "kustomization.yaml")
SAMPLES = sorted((CATALOG_RUNTIMES.parent / "samples").rglob("*.yaml"))
_INT64 = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_SINT64}


def _numbers(descriptor: Any, tree: Any) -> Any:
    """``tree`` (the JSON of a message of type ``descriptor``) with int64 strings as ints."""
    if not isinstance(tree, dict) or descriptor.full_name.startswith("google.protobuf."):
        return tree
    by_json = {f.json_name: f for f in descriptor.fields}
    for key, value in tree.items():
        fd = by_json[key]
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            value_fd = fd.message_type.fields_by_name["value"]
            tree[key] = {k: _field(value_fd, v) for k, v in value.items()}
        elif fd.is_repeated:
            tree[key] = [_field(fd, v) for v in value]
        else:
            tree[key] = _field(fd, value)
    return tree


def _field(fd: Any, value: Any) -> Any:
    if fd.message_type is not None:
        return _numbers(fd.message_type, value)
    return int(value) if fd.type in _INT64 else value


def _with_loader_defaults(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    for entry in out.get("spec", {}).get("supportedModelFormats", []):
        for key in ("modelFormat", "modelFramework"):
            if key in entry:
                entry[key].setdefault("operator", "Equal")
                entry[key].setdefault("weight", 1)
    return out


def test_the_catalog_has_runtimes() -> None:
    assert len(FILES) >= 200


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(CATALOG_RUNTIMES)))
def test_yaml_to_proto_to_json_is_the_yaml(path: Path) -> None:
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    result = load_manifests([str(path)])
    assert (result.errors, result.warnings) == ([], [])
    assert len(result.objects) == len(docs)
    for doc, obj in zip(docs, result.objects):
        stored = apply_defaults(obj)  # as the cache holds it
        message = getattr(stored, stored.WhichOneof("object"))
        assert _numbers(message.DESCRIPTOR, document(message)) == _with_loader_defaults(doc)


def test_every_sample_inference_service_round_trips() -> None:
    """The catalog's sample InferenceServices (engine, decoder and router components): each one
    the loader reads without a warning comes back as written. Seven samples are malformed
    (`spec.modelRef`, `spec.model.modelName`, no namespace); they are left out by their warnings."""
    same = 0
    for path in SAMPLES:
        docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(path.read_text()) if d}
        result = load_manifests([str(path)])
        if result.warnings or result.errors:
            continue
        for obj in result.objects:
            stored = apply_defaults(obj)
            message = getattr(stored, stored.WhichOneof("object"))
            doc = docs[(message.kind, message.metadata.name)]
            assert _numbers(message.DESCRIPTOR, document(message)) == _with_loader_defaults(doc), path
            same += 1
    assert same >= 140
