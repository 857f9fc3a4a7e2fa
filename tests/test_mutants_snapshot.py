"""``snapshot.RuntimeGroup.changed`` edits a group in place of rebuilding it for a small write,
and carries the per-position tables through the edits ("so the first answer after a write does
not rebuild them"); above ``(len(removed) + len(added)) * 8 > len(group) + 64`` it rebuilds
(``_REBUILD_FRACTION``). Either way the group equals one built from scratch. Found by
``scripts/mutation.py``.
"""

from __future__ import annotations

import pytest
from helpers_docs import cache_object, runtime
from ome_selector import domain as d
from ome_selector import ingest, snapshot
from ome_selector.snapshot import RuntimeGroup


def _runtimes(prefix: str, count: int) -> list[d.Runtime]:
    return [
        ingest.compile_runtime(
            d.CLUSTER_SERVING_RUNTIME, cache_object(runtime(f"{prefix}-{i:03}")).cluster_serving_runtime
        )
        for i in range(count)
    ]


@pytest.mark.parametrize(
    ("size", "removed", "added", "edited"),
    [
        pytest.param(64, 0, 16, True, id="16 * 8 = 64 + 64: edited"),
        pytest.param(64, 0, 17, False, id="17 * 8 > 64 + 64: rebuilt"),
        pytest.param(63, 0, 16, False, id="16 * 8 > 63 + 64: rebuilt"),
        pytest.param(64, 8, 8, True, id="(8 + 8) * 8 = 64 + 64: edited"),
        pytest.param(64, 8, 9, False, id="(8 + 9) * 8 > 64 + 64: rebuilt"),
    ],
)
def test_a_small_write_edits_the_group_and_carries_its_tables(
    size: int, removed: int, added: int, edited: bool
) -> None:
    before = _runtimes("rt", size)
    group = RuntimeGroup.build(before)
    names = group.names()  # computed once, then carried by an edit
    new = _runtimes("new", added)
    after = group.changed(before[:removed], new)
    rebuilt = RuntimeGroup.build([*before[removed:], *new])
    assert (after.order, after.keys, after.masks) == (rebuilt.order, rebuilt.keys, rebuilt.masks)
    assert ("names" in after._derived) is edited
    assert after.names() == tuple(rt.name for rt in rebuilt.order)
    assert len(names) == size


def test_an_unknown_per_position_table_is_a_programming_error() -> None:
    # _element knows "names", "format_ids" and ("pieces", reason) only.
    assert snapshot._element(("pieces", "x"))(_runtimes("rt", 1)[0]) == "rt-000 (x)"
    with pytest.raises(AssertionError):
        snapshot._element(("names", "x"))
