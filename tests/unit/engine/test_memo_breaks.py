"""A write carries a group's per-position tables (``RuntimeGroup.changed``) while readers of the
same group, the current snapshot's, may derive a table on it for the first time: the write must
not fail because the group's tables grew meanwhile."""

from __future__ import annotations

from typing import Any

import pytest
from helpers_docs import objects, runtime
from ome_selector.cache import groups
from ome_selector.cache.store import CacheStore
from ome_selector.texts import messages


def test_a_table_derived_by_a_reader_while_a_write_carries_the_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    store = CacheStore()
    store.apply_snapshot("v1", objects(*[runtime(f"rt-{i}") for i in range(40)]))
    group = store.snapshot.cluster
    names = group.names()
    real = groups._element

    def element(key: object) -> Any:
        group.pieces(messages.RUNTIME_DISABLED)  # a reader's first ask, in the middle of the write
        return real(key)

    monkeypatch.setattr(groups, "_element", element)
    rt = store.snapshot.cluster_serving_runtimes["rt-5"]
    assert group.changed([rt], [rt]).names() == names
