"""``engine.moves.Moves`` composes a run of group edits into one move of the old positions: it
equals replaying the edits one at a time on a list of the group's runtimes, for random runs of
sets, deletes and inserts."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from ome_selector.engine.moves import Moves


@st.composite
def runs(draw: st.DrawFn) -> tuple[int, list[tuple[str, int, None]]]:
    """A group size and a run of edits, each at a position valid in the group as it is then."""
    size = draw(st.integers(0, 40))
    edits: list[tuple[str, int, None]] = []
    now = size
    for _ in range(draw(st.integers(0, 12))):
        ops = ["ins"] + (["set", "del"] if now else [])
        op = draw(st.sampled_from(ops))
        i = draw(st.integers(0, now if op == "ins" else now - 1))
        edits.append((op, i, None))
        now += {"ins": 1, "del": -1, "set": 0}[op]
    return size, edits


def _replayed(size: int, edits: list[tuple[str, int, None]]) -> dict[int, int]:
    """Old position -> position now, of the old runtimes still there, by editing a list."""
    order: list[object] = list(range(size))
    for op, i, _ in edits:
        if op == "set":
            order[i] = object()  # a new runtime in its place
        elif op == "del":
            del order[i]
        else:
            order.insert(i, object())
    return {old: now for now, old in enumerate(order) if isinstance(old, int)}


@settings(max_examples=500, deadline=None)
@given(runs())
def test_moves_equal_the_edits_replayed(run: tuple[int, list[tuple[str, int, None]]]) -> None:
    size, edits = run
    expected = _replayed(size, edits)
    moves = Moves(edits)
    keys = [(-p, 0.0, f"rt-{p}", p) for p in range(size)]
    assert moves.keys(keys) == [(-p, 0.0, f"rt-{p}", expected[p]) for p in range(size) if p in expected]
    assert moves.positions({p: f"e{p}" for p in range(size)}) == {now: f"e{old}" for old, now in expected.items()}
    assert moves.dropped == set(range(size)) - set(expected)


def test_an_insert_before_and_a_delete_after_cancel_between() -> None:
    moves = Moves([("ins", 2, None), ("del", 6, None)])  # old 5 is at 6 when deleted
    keys = [(0, 0.0, "a", p) for p in range(8)]
    assert [k[3] for k in moves.keys(keys)] == [0, 1, 3, 4, 5, 6, 7]
    assert moves.dropped == {5}


def test_no_edit_keeps_every_key_as_it_is() -> None:
    keys = [(0, 0.0, "a", 3), (-1, 0.5, "b", 1)]
    moved = Moves([]).keys(keys)
    assert moved == keys and moved is not keys and moved[0] is keys[0]


def test_one_insert_shifts_the_keys_at_and_after_it() -> None:
    keys = [(-1, 0.0, "c", 4), (-2, 0.0, "a", 1), (-3, 0.0, "b", 2)]
    moved = Moves([("ins", 2, None)]).keys(keys)
    assert moved == [(-1, 0.0, "c", 5), (-2, 0.0, "a", 1), (-3, 0.0, "b", 3)]
    assert moved[1] is keys[1]  # a key before the insert is kept as it is


def test_one_delete_drops_its_key_and_shifts_the_later_ones_back() -> None:
    keys = [(-1, 0.0, "c", 4), (-2, 0.0, "a", 1), (-3, 0.0, "b", 2)]
    moves = Moves([("del", 2, None)])
    assert moves.keys(keys) == [(-1, 0.0, "c", 3), (-2, 0.0, "a", 1)]
    assert moves.dropped == {2}
