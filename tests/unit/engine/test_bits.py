"""Bit masks over a runtime group's positions (``engine.bits``): the set positions of any mask,
dense (runs of non-zero bytes, expanded in C) or sparse (one byte at a time), lowest first."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from ome_selector.engine.bits import selector, set_positions


def _positions(mask: int) -> list[int]:
    return [i for i in range(mask.bit_length()) if mask >> i & 1]


@given(st.lists(st.tuples(st.integers(0, 3000), st.integers(1, 700)), max_size=12))
def test_the_set_positions_of_runs_of_bits_are_each_bit_set_lowest_first(runs: list[tuple[int, int]]) -> None:
    mask = 0
    for start, length in runs:  # runs longer than one regular-expression run (32 bytes) too
        mask |= ((1 << length) - 1) << start
    assert list(set_positions(mask)) == _positions(mask)


@given(st.integers(0, 1 << 4000))
def test_the_set_positions_of_any_mask_are_each_bit_set_lowest_first(mask: int) -> None:
    assert list(set_positions(mask)) == _positions(mask)
    assert list(set_positions(mask)) == [i for i, b in enumerate(selector(mask, mask.bit_length())) if b]


def test_sparse_and_dense_masks_and_none() -> None:
    assert list(set_positions(0)) == []
    assert list(set_positions(1 << 50_000 | 1)) == [0, 50_000]  # sparse: 2 bits in 50,001
    assert list(set_positions((1 << 300) - 1)) == list(range(300))  # dense: more than one run
    assert list(set_positions(0b1011 << 8)) == [8, 9, 11]
