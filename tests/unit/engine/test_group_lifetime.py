"""A runtime group that no snapshot and no ``RuntimeGroup.previous`` link holds any more is freed
by reference counting alone, with the engine's results kept on it: the cyclic collector never has
to find it (a full collection walks every live object: tens of milliseconds at 50,000 runtimes)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from ome_selector.cache.groups import PREVIOUS_DEPTH, RuntimeGroup
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine


@pytest.fixture
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _groups() -> int:
    return sum(1 for o in gc.get_objects() if type(o) is RuntimeGroup)


def test_groups_past_the_previous_links_are_freed_without_the_cyclic_collector(collector_off: None) -> None:
    fits = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=2)
    count = engine.MEMO_MIN_RUNTIMES + 8  # large enough to keep results
    docs = [runtime(f"rt-{i}", fits, created="2025-01-01T00:00:00Z") for i in range(count)]
    store = CacheStore()
    store.apply_snapshot("v1", objects(*docs, model("m", namespace=None, format=("safetensors", "1.0.0"))))
    request = compile_request(inference_service(isvc("m", namespace="team-a")))
    held = []
    for i in range(PREVIOUS_DEPTH + 6):
        snapshot = store.snapshot
        engine.auto_select(snapshot, snapshot.cluster_models["m"], request, "team-a")
        assert snapshot.cluster.memo  # a result is kept on the group
        del snapshot
        priority = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=3 + i)
        store.upsert(f"v{i + 2}", objects(runtime(f"rt-{i}", priority, created="2025-01-01T00:00:00Z")))
        held.append(_groups())
    # The current cluster group and the PREVIOUS_DEPTH groups its links reach, each with the
    # namespace groups of its snapshot: the count stops growing once the links are full.
    assert held[-1] == held[PREVIOUS_DEPTH + 1], held
