"""What ``groups`` does that no other test pinned down (found by ``scripts/mutation.py``):
``RuntimeGroup.changed`` edits a group instead of rebuilding it for a small write, and carries
the per-position tables through the edits ("so the first answer after a write does not rebuild
them"; the name order only when no runtime moved); above ``(len(removed) + len(added)) * 8 >
len(group) + 64`` it rebuilds (``_REBUILD_FRACTION``). Either way the group equals one built from
scratch.
"""

from __future__ import annotations

import pytest
from helpers_docs import cache_object, entry, runtime
from ome_selector.cache import groups, ingest
from ome_selector.cache.groups import RuntimeGroup
from ome_selector.domain import objects as d


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
    assert groups._element(("pieces", "x"))(_runtimes("rt", 1)[0]) == "rt-000 (x)"
    with pytest.raises(AssertionError):
        groups._element(("names", "x"))


def test_replacing_runtimes_in_place_carries_the_name_order() -> None:
    # A runtime replaced by one with the same fetch key keeps its position ("set" edits only):
    # the name order is carried too, with the new runtime objects.
    before = _runtimes("rt", 8)
    group = RuntimeGroup.build(before)
    assert group.by_name() == tuple(before)
    replaced = _runtimes("rt", 2)
    after = group.changed(before[:2], replaced)
    assert "by_name" in after._derived
    assert after.by_name() == (*replaced, *before[2:])
    assert after.by_name()[0] is replaced[0]


def test_an_in_place_write_shares_the_tables_it_leaves_as_they_were() -> None:
    # A runtime replaced in place keeps its fetch key and name: the keys, the names and the
    # reason pieces are the group's before (no copy); a table whose element changes is copied.
    before = _runtimes("rt", 8)
    group = RuntimeGroup.build(before)
    names, pieces, format_ids = group.names(), group.pieces("x"), group.format_ids()
    other_format = ingest.compile_runtime(
        d.CLUSTER_SERVING_RUNTIME,
        cache_object(runtime("rt-003", entry(format=("onnx", "1.0.0")))).cluster_serving_runtime,
    )
    after = group.changed([before[3]], [other_format])
    assert after.keys is group.keys
    assert after.names() is names and after.pieces("x") is pieces
    assert after.format_ids() is not format_ids
    assert after.format_ids() == RuntimeGroup.build([*before[:3], other_format, *before[4:]]).format_ids()
    assert after.format_ids()[3] != format_ids[3] and after.format_ids()[:3] == format_ids[:3]
