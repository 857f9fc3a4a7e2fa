"""Builders for the WatchSelections / PreviewCacheChange tests (docs/api.md "Watch selections and preview a change"): the real cluster of
../shared (the OME catalog's runtimes and ome-cluster, with its eight InferenceServices), the
writes the tests make to it, and a one-tuple-per-event reading of a stream.

Nothing here computes an expected answer: the tests compare these readings with literals.
"""

from __future__ import annotations

import copy
from functools import lru_cache
from typing import Any, Iterable

import yaml
from conftest import CATALOG_RUNTIMES, OME_CLUSTER
from helpers_docs import isvc, objects
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.manifests import load_manifests

HOPPER = "srt-llama-3-3-70b-instruct-hopper"
OMENATIVE = "srt-llama-3-3-70b-instruct-omenative"
CHILD = "team-llama-70b-child"
# A ClusterBaseModel of ome-cluster without a format (its fields were never recorded).
QWEN_32B = "qwen2-5-32b"


@lru_cache(maxsize=1)
def cluster_objects() -> tuple[cache_pb2.CacheObject, ...]:
    """Every object of ``ome-catalog/runtimes`` and ``ome-cluster``, as ``serve --manifests`` loads them."""
    result = load_manifests([str(CATALOG_RUNTIMES), str(OME_CLUSTER)])
    assert result.errors == []
    return tuple(result.objects)


def cluster() -> list[cache_pb2.CacheObject]:
    """``cluster_objects()`` plus an InferenceService ``demo/qwen-32b`` of the format-less model."""
    return [*cluster_objects(), *objects(isvc(QWEN_32B, namespace="demo", name="qwen-32b"))]


def _extra(name: str) -> dict[str, Any]:
    for doc in yaml.safe_load_all((OME_CLUSTER / "runtimes-extra.yaml").read_text()):
        if doc and doc["metadata"]["name"] == name:
            return doc  # type: ignore[no-any-return]
    raise KeyError(name)


def hopper(priority: int) -> dict[str, Any]:
    """ome-cluster's ``srt-llama-3-3-70b-instruct-hopper`` with its entry's priority set."""
    doc = copy.deepcopy(_extra(HOPPER))
    doc["spec"]["supportedModelFormats"][0]["priority"] = priority
    return doc


def child(size_range: tuple[str, str]) -> dict[str, Any]:
    """ome-cluster's ``team-a/team-llama-70b-child`` (it inherits from the hopper runtime) with
    its own ``modelSizeRange``."""
    doc = copy.deepcopy(_extra(CHILD))
    doc["spec"]["modelSizeRange"] = {"min": size_range[0], "max": size_range[1]}
    return doc


def demo_serving_runtime() -> dict[str, Any]:
    """``team-a/team-llama-70b`` copied to ``llama-demo`` as ``demo-llama-70b``."""
    doc = copy.deepcopy(_extra("team-llama-70b"))
    doc["metadata"] = {"name": "demo-llama-70b", "namespace": "llama-demo"}
    return doc


def nobody_serving_runtime() -> dict[str, Any]:
    """The same ServingRuntime in a namespace without InferenceServices."""
    doc = demo_serving_runtime()
    doc["metadata"]["namespace"] = "nobody"
    return doc


def qwen_32b_filled() -> dict[str, Any]:
    """The ClusterBaseModel ``qwen2-5-32b`` with what the model agent would record (the fields of
    the catalog's srt-qwen2-5-32b-instruct, 32B)."""
    for doc in yaml.safe_load_all((OME_CLUSTER / "clusterbasemodels-filled.yaml").read_text()):
        if doc and doc["metadata"]["name"] == QWEN_32B:
            filled = copy.deepcopy(doc)
            filled["spec"].update(
                {
                    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
                    "modelFramework": {"name": "transformers", "version": "4.43.1"},
                    "modelArchitecture": "Qwen2ForCausalLM",
                    "modelParameterSize": "32B",
                }
            )
            return filled
    raise KeyError(QWEN_32B)


def key(kind: str, name: str, namespace: str = "") -> cache_pb2.ObjectKey:
    """An ObjectKey: ``kind`` is the ObjectKind name without its prefix (``CLUSTER_SERVING_RUNTIME``)."""
    return cache_pb2.ObjectKey(kind=cache_pb2.ObjectKind.Value(f"OBJECT_KIND_{kind}"), namespace=namespace, name=name)


def runtime_name(outcome: selector_pb2.SelectionOutcome) -> str | None:
    """The outcome's runtime name, None for none."""
    return outcome.runtime.name if outcome.HasField("runtime") else None


def condition(outcome: selector_pb2.SelectionOutcome) -> tuple[str, str] | None:
    """(status, reason) of RuntimeReady, None when absent."""
    c = outcome.runtime_ready
    return (c.status, c.reason) if outcome.HasField("runtime_ready") else None


def change_row(change: selector_pb2.SelectionChange) -> tuple[Any, ...]:
    """(namespace/name, runtime before, runtime after, RuntimeReady after, [cause texts], step, reason text)."""
    return (
        f"{change.namespace}/{change.name}",
        runtime_name(change.before) if change.HasField("before") else "<absent>",
        runtime_name(change.after) if change.HasField("after") else "<absent>",
        condition(change.after) if change.HasField("after") else None,
        [c.text for c in change.causes],
        selector_pb2.ChangeStep.Name(change.reason.step),
        change.reason.text,
    )


def rows(events: Iterable[selector_pb2.WatchSelectionsResponse]) -> list[tuple[Any, ...]]:
    """One tuple per event: ``change_row`` for a change; ("write", version, reevaluated, changed,
    matched); ("current", namespace/name, runtime); ("initial_events_end", version, count);
    ("resync", reason)."""
    out: list[tuple[Any, ...]] = []
    for e in events:
        which = e.WhichOneof("event")
        if which == "change":
            out.append(change_row(e.change))
        elif which == "write":
            w = e.write
            out.append(("write", w.cache_version, w.reevaluated, w.changed, w.matched))
        elif which == "current":
            out.append(("current", f"{e.current.namespace}/{e.current.name}", runtime_name(e.current)))
        elif which == "initial_events_end":
            out.append(
                ("initial_events_end", e.initial_events_end.cache_version, e.initial_events_end.inference_services)
            )
        else:
            out.append(("resync", e.resync.reason))
    return out
