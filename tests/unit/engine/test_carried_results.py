"""Group results kept on a runtime group and carried through a write (``engine.group_result``,
``RuntimeGroup.previous``) equal the results computed afresh on the new group: every mask, the
candidates' keys, the skipped counts and the evaluations, after random writes (upserts that
replace a runtime in place or move it, inserts and deletes) and random requests. So do the
message lists and the SelectRuntime answers the results keep.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any
from unittest.mock import patch

import grpc
import pytest
from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from hypothesis import given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2, selector_pb2_grpc
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.engine import evaluation as engine
from ome_selector.rpc import selection as rpc_selection
from ome_selector.rpc import servicers
from ome_selector.server.inprocess import InProcessServer
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


def _answers(store: CacheStore, docs: list[dict[str, Any]], limit: int | None) -> list[Any]:
    """SelectRuntime's BASIC answer to each request on the store's snapshot, as the servicer
    sends it (serialized when kept) and parsed, without its cache version; a NOT_FOUND as text."""
    out: list[Any] = []
    for doc in docs:
        request = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(doc), candidate_limit=limit)
        try:
            sent = rpc_selection.select_runtime(store.snapshot, request, True)
        except RequestError as error:
            out.append(str(error))
            continue
        answer = selector_pb2.SelectRuntimeResponse.FromString(sent) if isinstance(sent, bytes) else sent
        assert answer.cache_version == store.snapshot.version
        answer.ClearField("cache_version")
        out.append(answer)
    return out


_CREATED = "2025-01-01T00:00:00Z"
# Entries a runtime of ``_shaped`` gets: ones that can match model ``m`` (safetensors 1.0.0) with
# priorities, one that cannot, and one that names the format without the version.
_SHAPES = st.sampled_from(
    [
        entry(format={"name": "safetensors", "version": "1.0.0"}, priority=1),
        entry(format={"name": "safetensors", "version": "1.0.0"}, priority=5),
        entry(format={"name": "safetensors", "version": "1.0.0"}, priority=5, autoSelect=False),
        entry(format={"name": "gguf", "version": "1"}, priority=3),
        entry(format={"name": "safetensors"}, priority=2),
    ]
)


@st.composite
def _shaped(draw: Any) -> tuple[list[dict[str, Any]], list[tuple[str, Any]], dict[str, Any]]:
    """Up to 12 ClusterServingRuntimes with ``_SHAPES`` entries, up to 8 writes (most replace one
    of them in place, its name and creation time kept; some add or delete one), and model ``m``."""
    names = [f"rt-{i}" for i in range(draw(st.integers(1, 12)))]
    cluster = [runtime(n, draw(_SHAPES), created=_CREATED) for n in names]
    changes: list[tuple[str, Any]] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["replace", "replace", "replace", "add", "delete"]))
        if kind == "delete":
            key = cache_pb2.ObjectKey(
                kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name=draw(st.sampled_from(names))
            )
            changes.append(("delete", key))
        else:
            name = draw(st.sampled_from(names)) if kind == "replace" else f"rt-new-{len(changes)}"
            changes.append(("upsert", runtime(name, draw(_SHAPES), created=_CREATED)))
    return cluster, changes, model("m", namespace=None, format=("safetensors", "1.0.0"))


@SETTINGS
@given(
    st.one_of(st.tuples(clusters(), writes(), models()), _shaped()),
    st.lists(services(), min_size=1, max_size=3),
    st.sampled_from([None, 0, 1]),
)
def test_answers_kept_through_writes_equal_a_fresh_stores(
    written: tuple[list[dict[str, Any]], list[tuple[str, Any]], dict[str, Any]],
    asks: list[Any],
    limit: int | None,
) -> None:
    # A BASIC answer with a selected runtime is kept on the ClusterServingRuntimes' group result
    # and goes with it through writes that cannot change it (``engine._carried``): after
    # every write each answer equals the one a store built afresh from the same objects gives.
    cluster, changes, model_doc = written
    asks = [*asks, isvc("m", namespace="other")]  # a request the shaped runtimes can serve
    with patch.object(engine, "MEMO_MIN_RUNTIMES", 1):
        store = CacheStore()
        store.apply_snapshot("v1", objects(*cluster, model_doc))
        for i, (op, item) in enumerate([*changes, *changes]):  # again: the same docs replace in place
            _answers(store, asks, limit)
            if op == "upsert":
                store.upsert(f"v{i + 2}", objects(item))
            else:
                store.delete(f"v{i + 2}", [item])
            fresh = CacheStore()
            fresh.apply_snapshot("fresh", [store.snapshot.stored_object(key) for key in store.snapshot.objects])
            assert _answers(store, asks, limit) == _answers(fresh, asks, limit)


def _kept_answers(result: engine.GroupResult) -> list[bytes]:
    return [found[1] for key, found in result.memo.items() if isinstance(key, tuple) and key[0] == engine.ANSWER]


@pytest.mark.parametrize(
    ("write", "carried"),
    [
        ("a runtime that cannot match, its entry unchanged", True),
        ("a runtime that cannot match, new priority", True),
        ("a candidate, new priority", False),
        ("a runtime that cannot match, now a candidate", False),
        ("a new runtime that cannot match", False),
    ],
)
def test_a_kept_answer_goes_through_a_write_only_when_it_cannot_change(write: str, carried: bool) -> None:
    created = "2025-01-01T00:00:00Z"
    store = CacheStore()
    store.apply_snapshot("v1", objects(*_catalog(created)))
    request = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc("m", namespace="team-a")))
    first = rpc_selection.select_runtime(store.snapshot, request, True)
    assert isinstance(first, bytes)
    mdl = store.snapshot.cluster_models["m"]
    compiled = compile_request(request.inference_service)
    kept = _kept_answers(engine.group_result(store.snapshot.cluster, mdl, compiled))
    assert len(kept) == 1 and first.startswith(kept[0])
    fits = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=2)
    other = entry(format={"name": "gguf", "version": "1"}, priority=1)
    doc = {
        "a runtime that cannot match, its entry unchanged": runtime("rt-0", other, created=created),
        "a runtime that cannot match, new priority": runtime("rt-0", {**other, "priority": 7}, created=created),
        "a candidate, new priority": runtime("rt-1", {**fits, "priority": 9}, created=created),
        "a runtime that cannot match, now a candidate": runtime("rt-0", fits, created=created),
        "a new runtime that cannot match": runtime("rt-00", other, created=created),
    }[write]
    store.upsert("v2", objects(doc))
    second = rpc_selection.select_runtime(store.snapshot, request, True)
    assert isinstance(second, bytes)
    after = _kept_answers(engine.group_result(store.snapshot.cluster, mdl, compiled))
    assert (after[0] is kept[0]) is carried  # the same bytes, not built again
    fresh = CacheStore()
    fresh.apply_snapshot("v2", [store.snapshot.stored_object(key) for key in store.snapshot.objects])
    assert selector_pb2.SelectRuntimeResponse.FromString(second) == rpc_selection.select_runtime(
        fresh.snapshot, request
    )


def _upsert_non_candidate(store: CacheStore, version: str) -> None:
    # rt-0 cannot serve "m" (a gguf entry); a new priority leaves its primary check as it was.
    other = entry(format={"name": "gguf", "version": "1"}, priority=7)
    store.upsert(version, objects(runtime("rt-0", other, created="2025-01-01T00:00:00Z")))


def test_a_write_carries_the_answered_results_forward_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*_catalog("2025-01-01T00:00:00Z")))
    asked = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc("m", namespace="team-a")))
    full = selector_pb2.SelectRuntimeRequest(
        inference_service=inference_service(isvc("m", namespace="team-a", accelerator_class="c1")),
        view=selector_pb2.SELECT_RUNTIME_VIEW_FULL,
    )
    rpc_selection.select_runtime(store.snapshot, asked, True)
    rpc_selection.select_runtime(store.snapshot, full)  # a result without a kept answer: not carried
    _upsert_non_candidate(store, "v2")
    group = store.snapshot.cluster
    assert engine.carry_forward(group) == 1
    assert engine.carry_forward(group) == 0  # already on the group
    calls: list[str] = []
    fresh, carried = engine._group_result, engine._carried
    monkeypatch.setattr(engine, "_group_result", lambda g, *a: calls.append(f"fresh {len(g)}") or fresh(g, *a))
    monkeypatch.setattr(engine, "_carried", lambda *a: calls.append("carried") or carried(*a))
    second = rpc_selection.select_runtime(store.snapshot, asked)
    assert calls == ["fresh 0"]  # the empty namespaced group only: the cluster group's result was there
    monkeypatch.undo()
    again = CacheStore()
    again.apply_snapshot("v2", [store.snapshot.stored_object(key) for key in store.snapshot.objects])
    assert second == rpc_selection.select_runtime(again.snapshot, asked)
    assert second.selection.runtime.name == "rt-1"


def test_a_write_through_the_cache_service_carries_the_answered_results_forward() -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*_catalog("2025-01-01T00:00:00Z")))
    asked = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc("m", namespace="team-a")))
    other = entry(format={"name": "gguf", "version": "1"}, priority=7)
    with InProcessServer(store) as server, grpc.insecure_channel(server.address) as channel:
        first = selector_pb2_grpc.SelectionServiceStub(channel).SelectRuntime(asked, timeout=30)
        write = cache_pb2.UpsertObjectsRequest(
            version="v2", objects=objects(runtime("rt-0", other, created="2025-01-01T00:00:00Z"))
        )
        cache_pb2_grpc.CacheServiceStub(channel).UpsertObjects(write, timeout=30)
        # The event loop carried the result in the turn after the write's (before this later call).
        cache_pb2_grpc.CacheServiceStub(channel).GetCacheStatus(cache_pb2.GetCacheStatusRequest(), timeout=30)
        mdl = store.snapshot.cluster_models["m"]
        key = (mdl.cache_key, compile_request(asked.inference_service).checks_key)
        assert key in store.snapshot.cluster.memo
        second = selector_pb2_grpc.SelectionServiceStub(channel).SelectRuntime(asked, timeout=30)
    assert (first.selection.runtime.name, second.selection.runtime.name) == ("rt-1", "rt-1")
    assert (first.cache_version, second.cache_version) == ("v1", "v2")


@settings(max_examples=8, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 39), st.integers(1, 9), st.booleans()), min_size=1, max_size=12))
def test_answers_equal_a_fresh_stores_while_a_thread_carries_results_forward(
    rewrites: list[tuple[int, int, bool]],
) -> None:
    # The writes' thread rewrites runtimes (an entry that fits "m" or not, a priority) and
    # carries the answered results forward while this thread answers on whatever snapshot is
    # current: every answer equals a fresh store's over the same snapshot.
    created = "2025-01-01T00:00:00Z"
    store = CacheStore()
    store.apply_snapshot("v1", objects(*_catalog(created)))
    asks = [
        selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc("m", namespace=namespace)))
        for namespace in ("team-a", "team-b")
    ]
    done = threading.Event()

    def writer() -> None:
        try:
            for n, (i, priority, fits) in enumerate(rewrites):
                format_ = {"name": "safetensors", "version": "1.0.0"} if fits else {"name": "gguf", "version": "1"}
                store.upsert(
                    f"v{n + 2}", objects(runtime(f"rt-{i}", entry(format=format_, priority=priority), created=created))
                )
                engine.carry_forward(store.snapshot.cluster)
        finally:
            done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    answered: list[tuple[Any, selector_pb2.SelectRuntimeResponse]] = []
    while not done.is_set() or not answered:
        snapshot = store.snapshot
        for ask in asks:
            answered.append((snapshot, rpc_selection.select_runtime(snapshot, ask)))
    thread.join()
    answered += [(store.snapshot, rpc_selection.select_runtime(store.snapshot, ask)) for ask in asks]
    fresh: dict[int, CacheStore] = {}
    for snapshot, _ in answered:
        if id(snapshot) not in fresh:
            fresh[id(snapshot)] = CacheStore()
            fresh[id(snapshot)].apply_snapshot(
                snapshot.version, [snapshot.stored_object(key) for key in snapshot.objects]
            )
    for k, (snapshot, answer) in enumerate(answered):
        assert answer == rpc_selection.select_runtime(fresh[id(snapshot)].snapshot, asks[k % 2])


def test_the_event_loop_carries_the_answered_results_a_turn_at_a_time_until_a_later_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Three models of different sizes: three results, each holding an answer. With no time for
    # more, each turn of the loop carries one; a later write stops the rest (lazily carried).
    sizes = {"m": "3.21B", "m2": "7B", "m3": "13B"}
    store = CacheStore()
    docs = _catalog("2025-01-01T00:00:00Z")[:-1]
    docs += [model(name, namespace=None, format=("safetensors", "1.0.0"), size=size) for name, size in sizes.items()]
    store.apply_snapshot("v1", objects(*docs))
    asks = {
        name: selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc(name, namespace="team-a")))
        for name in sizes
    }
    for ask in asks.values():
        rpc_selection.select_runtime(store.snapshot, ask, True)
    monkeypatch.setattr(servicers, "CARRY_TURN_SECONDS", 0.0)
    monkeypatch.setattr(servicers, "CARRY_PAUSE_SECONDS", 0.0)
    carried: list[int] = []
    turn = servicers._carry_turn

    def counted(*args: Any) -> None:
        turn(*args)
        carried.append(sum(1 for key in group.memo if key != engine._USED))

    monkeypatch.setattr(servicers, "_carry_turn", counted)
    loop = asyncio.new_event_loop()
    try:
        _upsert_non_candidate(store, "v2")
        group = store.snapshot.cluster
        servicers._carry_forward(loop, store)
        loop.run_until_complete(asyncio.sleep(0.05))
        assert carried == [1, 2, 3, 3]  # the last turn finds nothing left
        _upsert_non_candidate(store, "v3")
        group = store.snapshot.cluster
        servicers._carry_forward(loop, store)
        loop.call_soon(_upsert_non_candidate, store, "v4")  # between the first turn and the second
        carried.clear()
        loop.run_until_complete(asyncio.sleep(0.05))
    finally:
        loop.close()
    assert carried == [1, 1]  # the second turn saw the later write and stopped
    fresh = CacheStore()
    fresh.apply_snapshot("v4", [store.snapshot.stored_object(key) for key in store.snapshot.objects])
    for ask in asks.values():
        assert rpc_selection.select_runtime(store.snapshot, ask) == rpc_selection.select_runtime(fresh.snapshot, ask)
