"""Group results kept on a runtime group and carried through a write (``engine.group_result``,
``RuntimeGroup.previous``) equal the results computed afresh on the new group: every mask, the
candidates' keys, the skipped counts and the evaluations, after random writes (upserts that
replace a runtime in place or move it, inserts and deletes) and random requests.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import patch

import pytest
from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from hypothesis import given
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from test_fast_path import SETTINGS, clusters, models, services, writes


def _view(result: engine.GroupResult) -> tuple[Any, ...]:
    """Everything a group result answers with, comparable across two results."""
    return (
        [rt.key for rt in result.group.order],
        result.disabled,
        result.accelerator_class,
        result.deployment_mode,
        result.model_format,
        sorted(result.keys),
        result.skipped,
        result.format_rejected,
        result.size_failed,
        result.not_auto,
        result.not_scored,
        [_evaluation_view(result, i) for i in result.evaluated],
    )


def _evaluation_view(result: engine.GroupResult, i: int) -> tuple[Any, ...]:
    e = result.evaluated[i]
    assert e.runtime is result.group.order[i]  # of the runtime at that position now
    return (i, e.runtime.key, e.verdict, e.failures, e.fit.score, e.fit.score_index, e.distance)


def _ask(store: CacheStore, docs: list[dict[str, Any]]) -> None:
    """Every request against the store's groups, compared with a fresh result, and the answer
    with the exhaustive evaluation's."""
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    for doc in docs:
        request = compile_request(inference_service(doc))
        namespace = doc["metadata"]["namespace"]
        for group in snapshot.runtimes_in_scope(namespace):
            assert _view(engine.group_result(group, mdl, request)) == _view(engine._group_result(group, mdl, request))
        fast = engine.auto_select(snapshot, mdl, request, namespace)
        _, ranked, message = engine.exhaustive_auto_select(snapshot, mdl, request, namespace)
        assert [(r.evaluation.runtime.key, r.rank, r.tie_break) for r in fast.ranked] == [
            (r.evaluation.runtime.key, r.rank, r.tie_break) for r in ranked
        ]
        assert fast.no_runtime_message == message


@SETTINGS
@given(clusters(), writes(), models(), st.lists(services(), min_size=1, max_size=3))
def test_results_carried_through_writes_equal_fresh_ones(
    cluster: list[dict[str, Any]], changes: list[tuple[str, Any]], model_doc: dict[str, Any], asks: list[Any]
) -> None:
    with patch.object(engine, "MEMO_MIN_RUNTIMES", 1):  # the random groups are small: keep theirs too
        _write_and_ask(cluster, changes, model_doc, asks)


def _write_and_ask(
    cluster: list[dict[str, Any]], changes: list[tuple[str, Any]], model_doc: dict[str, Any], asks: list[Any]
) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*cluster, model_doc))
    for i, (op, item) in enumerate(changes):
        _ask(store, asks)  # keeps results on the groups, which the write then carries
        if op == "upsert":
            store.upsert(f"v{i + 2}", objects(item))
        else:
            store.delete(f"v{i + 2}", [item])
    _ask(store, asks)


def _catalog(created: str) -> list[Any]:
    fits = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=2)
    other = entry(format={"name": "gguf", "version": "1"}, priority=1)
    docs = [runtime(f"rt-{i}", fits if i % 3 else other, created=created) for i in range(40)]
    return [*docs, model("m", namespace=None, format=("safetensors", "1.0.0"))]


@pytest.mark.parametrize(
    ("write", "carried_edits"),
    [
        ("replace in place", ("set",)),
        ("insert", ("ins",)),
        ("delete", ("del",)),
    ],
)
def test_a_write_carries_the_kept_result_instead_of_computing_it_again(
    write: str, carried_edits: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*_catalog("2025-01-01T00:00:00Z")))
    request = compile_request(inference_service(isvc("m", namespace="team-a")))
    before = engine.auto_select(store.snapshot, store.snapshot.cluster_models["m"], request, "team-a")
    assert len(before.ranked) == 26
    if write == "delete":
        store.delete("v2", [cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="rt-7")])
    else:  # rt-7 again (its fetch key unchanged: in place), or a new name (inserted)
        favoured = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=9)
        name = "rt-7" if write == "replace in place" else "rt-7b"
        store.upsert("v2", objects(runtime(name, favoured, created="2025-01-01T00:00:00Z")))
    group = store.snapshot.cluster
    assert group.previous is not None
    assert tuple(op for op, _, _ in group.previous[1]) == carried_edits
    calls: list[str] = []
    fresh, carried = engine._group_result, engine._carried
    monkeypatch.setattr(engine, "_group_result", lambda *a: calls.append("fresh") or fresh(*a))
    monkeypatch.setattr(engine, "_carried", lambda *a: calls.append("carried") or carried(*a))
    mdl = store.snapshot.cluster_models["m"]
    after = engine.auto_select(store.snapshot, mdl, request, "team-a")
    assert calls == ["fresh", "carried"]  # the empty namespaced group, then the cluster group
    ranked = [r.evaluation.runtime.name for r in after.ranked]
    expected = {"replace in place": ("rt-7", 26), "insert": ("rt-7b", 27), "delete": ("rt-1", 25)}[write]
    assert (ranked[0], len(ranked)) == expected
    monkeypatch.undo()
    assert _view(engine.group_result(group, mdl, request)) == _view(engine._group_result(group, mdl, request))


def test_a_kept_candidate_order_without_a_total_order_is_ranked_as_rank_ranks_it() -> None:
    # Distances 2.0 and 1.5 tie (they differ by less than 1.0, ome-selection-facts.md 3.14), so
    # the candidates are ranked by the comparator; the second answer reads the kept order.
    fits = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=2)
    docs = [
        runtime("rt-a", fits, size=("9", "11")),
        runtime("rt-b", fits, size=("9.5", "11")),
        runtime("rt-c", fits, size=("1", "30")),
        model("m", namespace=None, format=("safetensors", "1.0.0"), size="10"),
    ]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    request = compile_request(inference_service(isvc("m", namespace="team-a")))
    expected = [
        ("rt-a", 1, engine.TieBreak.UNSPECIFIED, 2.0),
        ("rt-b", 2, engine.TieBreak.NAME, 1.5),
        ("rt-c", 3, engine.TieBreak.SIZE_DISTANCE, 29.0),
    ]
    for _ in range(2):
        with patch.object(engine, "MEMO_MIN_RUNTIMES", 1):
            ranked = engine.auto_select(snapshot, mdl, request, "team-a").ranked
        assert [(r.evaluation.runtime.name, r.rank, r.tie_break, r.evaluation.distance) for r in ranked] == expected
    assert len(snapshot.cluster.memo) == 2  # the result, and the estimate of its bytes: the order was kept


def test_what_a_group_keeps_is_bounded_by_its_size() -> None:
    docs = [*_catalog("2025-01-01T00:00:00Z"), runtime("rt-ns", namespace="team-a")]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    plain = compile_request(inference_service(isvc("m", namespace="team-a")))
    with_class = compile_request(inference_service(isvc("m", namespace="team-a", accelerator_class="h100")))
    namespaced, cluster = snapshot.runtimes_in_scope("team-a")
    engine.auto_select(snapshot, mdl, plain, "team-a")
    assert (len(namespaced), namespaced.memo) == (1, {})  # below MEMO_MIN_RUNTIMES: nothing kept
    first = engine.group_result(cluster, mdl, plain)
    assert cluster.memo[(mdl.cache_key, plain.checks_key)] is first
    budget = engine._result_bytes(first) // len(cluster.order) + 1  # room for one result, not two
    with patch.object(engine, "MEMO_BYTES_PER_RUNTIME", budget):
        second = engine.group_result(cluster, mdl, with_class)
    assert cluster.memo == {(mdl.cache_key, with_class.checks_key): second, "bytes": engine._result_bytes(second)}


def _messages(store: CacheStore, docs: list[dict[str, Any]]) -> list[str | None]:
    """The ``no runtime found`` message of each request on the store's snapshot."""
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    return [
        engine.auto_select(
            snapshot, mdl, compile_request(inference_service(doc)), doc["metadata"]["namespace"]
        ).no_runtime_message
        for doc in docs
    ]


@SETTINGS
@given(clusters(), writes(), models(), st.lists(services(), min_size=1, max_size=3), st.sampled_from([0, 150, 300]))
def test_message_lists_carried_through_writes_equal_a_fresh_stores(
    cluster: list[dict[str, Any]],
    changes: list[tuple[str, Any]],
    model_doc: dict[str, Any],
    asks: list[Any],
    cap: int,
) -> None:
    # A list kept on a group result goes with the result through a write that replaces runtimes
    # in place without changing their entries (``no_runtime.carry_lists``): with and without a
    # cap, every message then equals the one a store built afresh from the same objects gives.
    with patch.object(engine, "MEMO_MIN_RUNTIMES", 1):
        store = CacheStore(max_message_bytes=cap)
        store.apply_snapshot("v1", objects(*cluster, model_doc))
        for i, (op, item) in enumerate([*changes, *changes]):  # again: the same docs replace in place
            _messages(store, asks)
            if op == "upsert":
                store.upsert(f"v{i + 2}", objects(item))
            else:
                store.delete(f"v{i + 2}", [item])
            fresh = CacheStore(max_message_bytes=cap)
            fresh.apply_snapshot("fresh", [store.snapshot.stored_object(key) for key in store.snapshot.objects])
            assert _messages(store, asks) == _messages(fresh, asks)
