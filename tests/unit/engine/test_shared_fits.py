"""Runtimes that share a ``fit_id`` (specs that differ only in priorities) are classified a fit_id
at a time (``RuntimeGroup.shared_fits``, ``engine.evaluation._Past.classify_shared``): the group
results equal those of classifying runtime by runtime, the answers equal the exhaustive
evaluation's, and the table carried through writes stays exact (each mask the positions of its
fit_id, ``unshared`` the others).

Property tests on random snapshots whose runtimes are cloned with new priorities, with the
thresholds lowered so that the small random groups use the shared path.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest.mock import patch

from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from hypothesis import given
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2
from ome_selector.cache import groups
from ome_selector.cache.groups import RuntimeGroup, SharedFits
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from ome_selector.rules.model_format import format_match, format_matches
from test_carried_results import _view
from test_fast_path import NS, SETTINGS, assert_fast_path, assert_fast_path_on, clusters, models, runtimes, services

PRIORITIES = st.sampled_from([None, 1, 2, 3, 7])


@contextmanager
def shared_path() -> Iterator[None]:
    """Every group classifies a fit_id shared by 2 runtimes or more a fit_id at a time."""
    with patch.object(groups, "SHARED_FITS_MIN_RUNTIMES", 1), patch.object(groups, "FIT_MASK_MIN", 2):
        yield


@contextmanager
def per_runtime() -> Iterator[None]:
    """No group uses the shared path."""
    with patch.object(groups, "SHARED_FITS_MIN_RUNTIMES", 10**9):
        yield


def _repriced(draw: Any, doc: dict[str, Any], name: str) -> dict[str, Any]:
    """``doc`` named ``name`` with new priorities (the same fit_id)."""
    clone = copy.deepcopy(doc)
    clone["metadata"]["name"] = name
    for e in clone["spec"]["supportedModelFormats"]:
        e.pop("priority", None)
        if (priority := draw(PRIORITIES)) is not None:
            e["priority"] = priority
    return clone


@st.composite
def cloned_clusters(draw: Any) -> list[dict[str, Any]]:
    """``clusters()`` with each runtime cloned 0 to 3 times (``<name>-c<j>``), new priorities."""
    out = []
    for doc in draw(clusters()):
        out.append(doc)
        out += [_repriced(draw, doc, f"{doc['metadata']['name']}-c{j}") for j in range(draw(st.integers(0, 3)))]
    return out


@st.composite
def clone_writes(draw: Any, cluster: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    """Upserts (a runtime repriced in place or under a new name, or a new random one) and deletes."""
    out: list[tuple[str, Any]] = []
    names = [d["metadata"]["name"] for d in cluster if "namespace" not in d["metadata"]]
    for i in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(["reprice", "copy", "new", "delete"]))
        if kind in ("reprice", "copy") and names:
            picked = draw(st.sampled_from(names))
            doc = next(d for d in cluster if d["metadata"]["name"] == picked and "namespace" not in d["metadata"])
            name = doc["metadata"]["name"] if kind == "reprice" else f"w{i}"
            out.append(("upsert", _repriced(draw, doc, name)))
        elif kind == "new":
            out.append(("upsert", draw(runtimes(draw(st.sampled_from([*names, "w-new"])) if names else "w-new", None))))
        elif names:
            key = cache_pb2.ObjectKey(
                kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name=draw(st.sampled_from(names))
            )
            out.append(("delete", key))
    return out


def _assert_exact(group: RuntimeGroup) -> None:
    """The table of ``group`` (derived or carried) says what its runtimes are."""
    fits = group.shared_fits()
    if fits is None:
        assert len(group) < groups.SHARED_FITS_MIN_RUNTIMES
        return
    by_fit: dict[int, int] = {}
    for i, rt in enumerate(group.order):
        by_fit[rt.own.fit_id] = by_fit.get(rt.own.fit_id, 0) | 1 << i
    assert 0 not in fits.masks
    for fit_id, mask in fits.masks.items():
        assert mask == by_fit.get(fit_id, 0)
        assert fits.specs[fit_id].fit_id == fit_id
    assert fits.unshared == sum(m for f, m in by_fit.items() if f not in fits.masks)
    for key, ids in fits.by_format.items():
        assert set(ids) == {f for f, spec in fits.specs.items() if key in spec.index_keys}
    assert {f for ids in fits.by_format.values() for f in ids} <= set(fits.masks)


@SETTINGS
@given(cloned_clusters(), models(), services())
def test_fast_path_with_shared_fits_equals_the_exhaustive_evaluation(
    cluster: list[dict[str, Any]], model_doc: dict[str, Any], service: dict[str, Any]
) -> None:
    with shared_path():
        assert_fast_path(cluster, model_doc, service)


@SETTINGS
@given(cloned_clusters(), models(), services())
def test_shared_fits_classify_as_runtime_by_runtime(
    cluster: list[dict[str, Any]], model_doc: dict[str, Any], service: dict[str, Any]
) -> None:
    with shared_path():  # the tables built with the groups
        store = CacheStore()
        store.apply_snapshot("v1", objects(*cluster, model_doc))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    request = compile_request(inference_service(service))
    for group in snapshot.runtimes_in_scope(service["metadata"]["namespace"]):
        with shared_path():
            shared = _view(engine._group_result(group, mdl, request))
        with per_runtime():
            alone = _view(engine._group_result(group, mdl, request))
        assert shared == alone


@SETTINGS
@given(st.data())
def test_the_table_carried_through_writes_stays_exact(data: Any) -> None:
    cluster = data.draw(cloned_clusters())
    changes = data.draw(clone_writes(cluster))
    service = data.draw(services())
    model_doc = data.draw(models())
    with shared_path():
        store = CacheStore(max_message_bytes=0)  # the exhaustive message is never capped
        store.apply_snapshot("v1", objects(*cluster, model_doc))
        request = compile_request(inference_service(service))
        for i, (op, item) in enumerate(changes):
            store.snapshot.cluster.shared_fits()  # derived, so that the write carries it
            engine.group_result(store.snapshot.cluster, store.snapshot.cluster_models["m"], request)
            if op == "upsert":
                store.upsert(f"v{i + 2}", objects(item))
            else:
                store.delete(f"v{i + 2}", [item])
            _assert_exact(store.snapshot.cluster)
        assert_fast_path_on(store, service)


def _group(docs: list[dict[str, Any]]) -> tuple[CacheStore, RuntimeGroup]:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs, model("m", namespace=None, format=("safetensors", "1.0.0"))))
    return store, store.snapshot.cluster


def _table(group: RuntimeGroup) -> SharedFits:
    fits = group.shared_fits()
    assert fits is not None
    return fits


def _fits(priority: int) -> dict[str, Any]:
    return entry(format={"name": "safetensors", "version": "1.0.0"}, priority=priority)


def _names_of(group: RuntimeGroup, mask: int) -> list[str]:
    return [rt.name for i, rt in enumerate(group.order) if mask >> i & 1]


def test_a_fit_id_shared_by_enough_runtimes_gets_a_mask_and_keeps_it_through_writes() -> None:
    # 20 runtimes that differ only in priorities (one fit_id), 4 of another spec (too few).
    docs = [runtime(f"a-{i:02}", _fits(1 + i % 3), created="2025-01-01T00:00:00Z") for i in range(20)]
    docs += [runtime(f"b-{i}", _fits(2), size=("1B", "8B"), created="2025-01-01T00:00:00Z") for i in range(4)]
    docs += [runtime(f"c-{i}", _fits(2), size=("1B", f"{9 + i}B")) for i in range(8)]  # 32 runtimes in all
    store, group = _group(docs)
    assert "shared_fits" in group._derived  # built with the group
    fits = _table(group)
    (fit_id,) = fits.masks
    assert _names_of(group, fits.masks[fit_id]) == [f"a-{i:02}" for i in range(20)]
    assert _names_of(group, fits.unshared) == ["b-0", "b-1", "b-2", "b-3", *(f"c-{i}" for i in range(8))]
    assert fits.by_format == {("format", ("safetensors", "LlamaForCausalLM", None)): (fit_id,)}

    # New priorities in place: the same table. A new spec in place, a new runtime, a delete:
    # the bits move and the changed runtime leaves the mask.
    store.upsert("v2", objects(runtime("a-03", _fits(9), created="2025-01-01T00:00:00Z")))
    assert _table(store.snapshot.cluster) is fits
    store.upsert("v3", objects(runtime("a-04", _fits(2), size=("1B", "8B"), created="2025-01-01T00:00:00Z")))
    store.upsert("v4", objects(runtime("a-00b", _fits(5), created="2025-01-01T00:00:00Z")))
    store.delete("v5", [cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="a-01")])
    after = store.snapshot.cluster
    carried = _table(after)
    assert _names_of(after, carried.masks[fit_id]) == ["a-00", "a-00b", *(f"a-{i:02}" for i in range(2, 20) if i != 4)]
    assert _names_of(after, carried.unshared) == ["a-04", "b-0", "b-1", "b-2", "b-3", *(f"c-{i}" for i in range(8))]
    _assert_exact(after)


def test_the_shared_path_classifies_each_reason_as_the_runtimes_do() -> None:
    # One fit_id per reason: candidates (priorities 1 to 4: scores 2 to 8, weights 1 + 1), a
    # format failure (version 2.0.0), a size failure, autoSelect false, a score of 0 (weights
    # -1 + 1): the same masks and keys as runtime by runtime, and the ranking by score then name.
    zero = entry(format={"name": "safetensors", "version": "1.0.0", "weight": -1})
    docs = [runtime(f"a-{i:02}", _fits(1 + i % 4), created="2025-01-01T00:00:00Z") for i in range(8)]
    docs += [runtime(f"v-{i}", entry(format={"name": "safetensors", "version": "2.0.0"})) for i in range(3)]
    docs += [runtime(f"s-{i}", _fits(1), size=("70B", "75B")) for i in range(3)]
    docs += [runtime(f"n-{i}", entry(format=("safetensors", "1.0.0"), auto_select=False)) for i in range(3)]
    docs += [runtime(f"z-{i}", zero) for i in range(2)]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs, model("m", namespace=None, format=("safetensors", "1.0.0"))))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    request = compile_request(inference_service(isvc("m", namespace=NS)))
    group = snapshot.cluster
    with shared_path():
        assert len(_table(group).masks) == 5
        shared = engine._group_result(group, mdl, request)
        answer = engine.auto_select(snapshot, mdl, request, NS)
    with per_runtime():
        alone = engine._group_result(group, mdl, request)
    assert _view(shared) == _view(alone)
    assert shared.skipped == {engine.Check.MODEL_SIZE: 3, engine.Check.AUTO_SELECT: 3, engine.Check.SCORE: 2}
    assert _names_of(group, shared.format_rejected) == ["v-0", "v-1", "v-2"]
    assert _names_of(group, shared.not_scored) == ["z-0", "z-1"]
    assert [(r.evaluation.runtime.name, r.evaluation.fit.score) for r in answer.ranked] == [
        ("a-03", 8),
        ("a-07", 8),
        ("a-02", 6),
        ("a-06", 6),
        ("a-01", 4),
        ("a-05", 4),
        ("a-00", 2),
        ("a-04", 2),
    ]


@SETTINGS
@given(clusters(), models())
def test_format_matches_is_format_match_without_its_texts(
    cluster: list[dict[str, Any]], model_doc: dict[str, Any]
) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*cluster, model_doc))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    for rt in (*snapshot.cluster_serving_runtimes.values(), *snapshot.serving_runtimes.values()):
        assert format_matches(rt.own, mdl) is (format_match(rt.own, mdl)[1] is None)


def test_format_matches_on_each_difference() -> None:
    # The model: safetensors 1.0.0, transformers 4.45.0.dev0, LlamaForCausalLM, no quantization.
    cases = [
        (entry(), True),
        (entry(format={"name": "safetensors", "version": "1.0.0", "operator": "GreaterThan"}), False),
        (entry(format={"name": "safetensors", "version": "2.0.0", "operator": "GreaterThan"}), True),
        (entry(format=("gguf", "1.0.0")), False),
        (entry(format={"name": "safetensors"}), False),  # the model has a version, the entry none
        (entry(framework=("vllm", "0.6")), False),
        (entry(architecture=None), False),
        (entry(quantization="fp8"), False),
    ]
    docs = [runtime(f"rt-{i}", e) for i, (e, _) in enumerate(cases)]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs, model("m", namespace=None)))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    found = [format_matches(snapshot.cluster_serving_runtimes[f"rt-{i}"].own, mdl) for i in range(len(cases))]
    assert found == [expected for _, expected in cases]
    assert found == [
        format_match(snapshot.cluster_serving_runtimes[f"rt-{i}"].own, mdl)[1] is None for i in range(len(cases))
    ]
