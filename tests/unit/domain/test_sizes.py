"""``sizes.parse_size``, ``range_label``, ``outside``, ``distance`` and ``distance_order``.

Sources: model-size-range-matching.md ("Units and format", the warning about ``4b``, "Examples",
"Where a rejection shows up"), runtime-selection-scoring.md ("Tie-breaks") and
ome-selection-facts.md 3.8, 3.14 and 8.9.
"""

from __future__ import annotations

import math

import pytest
from ome_selector.domain.sizes import distance, distance_order, outside, parse_size, range_label


class TestUnitsTable:
    """One test per row of the "Units and format" table."""

    @pytest.mark.parametrize(
        ("suffix", "example", "parameters"),
        [
            ("M", "500M", 500_000_000),
            ("B", "3.21B", 3_210_000_000),
            ("T", "1.5T", 1_500_000_000_000),
            ("None", "999", 999),
        ],
    )
    def test_row(self, suffix: str, example: str, parameters: int) -> None:
        assert parse_size(example) == parameters

    def test_counts_are_compared_so_0_5b_equals_500m(self) -> None:
        assert parse_size("0.5B") == parse_size("500M") == 500_000_000

    def test_1500m_passes_min_1b(self) -> None:
        assert outside(parse_size("1500M"), parse_size("1B"), None) is False

    def test_ome_writes_sizes_the_same_way(self) -> None:
        assert parse_size("685B") == 685_000_000_000


class TestUnparseableReadsAsZero:
    """The warning "OME reads a value it can't parse as 0"."""

    @pytest.mark.parametrize(
        "text", ["4b", "2b", "7b", "7 B", "7K", "7BB", "", "abc", " 7B", "7B ", "B", "1,5B", "1_000"]
    )
    def test_unparseable_is_zero(self, text: str) -> None:
        assert parse_size(text) == 0.0

    def test_max_4b_rejects_every_model_with_a_valid_size(self) -> None:
        for size in ("1M", "3.21B", "2B", "4B"):
            assert outside(parse_size(size), parse_size("2B"), parse_size("4b")) is True

    def test_min_2b_sets_no_lower_limit(self) -> None:
        assert outside(parse_size("1M"), parse_size("2b"), parse_size("4B")) is False

    def test_reason_shows_values_as_written(self) -> None:
        assert range_label("2B", "4b") == "[2B, 4b]"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("7B", 7e9),
        ("70B", 7e10),
        ("1.5T", 1.5e12),
        ("500M", 5e8),
        ("70", 70.0),
        ("-1B", -1e9),
        ("1e3B", 1e12),
        (".5B", 5e8),
        ("5.B", 5e9),
        ("+2M", 2e6),
        ("2E1", 20.0),
        ("infB", math.inf),
        ("-Infinity", -math.inf),
    ],
)
def test_facts_parse_examples(text: str, value: float) -> None:
    assert parse_size(text) == value


def test_facts_nan_parses_as_nan() -> None:
    assert math.isnan(parse_size("nan"))


class TestRangeLabel:
    @pytest.mark.parametrize(
        ("minimum", "maximum", "label"),
        [
            ("500M", "2B", "[500M, 2B]"),  # model size 3.21B is outside supported range [500M, 2B]
            ("2B", "4b", "[2B, 4b]"),
            ("70B", None, "[70B, inf)"),
            (None, "13B", "(-inf, 13B]"),
            (None, None, "(-inf, inf)"),
        ],
    )
    def test_label(self, minimum: str | None, maximum: str | None, label: str) -> None:
        assert range_label(minimum, maximum) == label


class TestExamplesTable:
    """model-size-range-matching.md "Examples", at the unit level ("Not set" = None)."""

    @pytest.mark.parametrize(
        ("minimum", "maximum", "size", "passes"),
        [
            ("2B", "4B", "3.21B", True),
            ("2B", "4B", "4B", True),
            ("500M", "2B", "3.21B", False),
            ("1B", "4B", "1500M", True),
            ("70B", None, "405B", True),
            (None, "13B", "3.21B", True),
        ],
    )
    def test_row(self, minimum: str | None, maximum: str | None, size: str, passes: bool) -> None:
        low = parse_size(minimum) if minimum is not None else None
        high = parse_size(maximum) if maximum is not None else None
        assert outside(parse_size(size), low, high) is (not passes)

    # Row 7 (a model without a size always passes) is an engine rule: see test_matching_docs.py.


class TestOutside:
    @pytest.mark.parametrize("size", ["2B", "4B"])
    def test_bounds_are_inclusive(self, size: str) -> None:
        assert outside(parse_size(size), 2e9, 4e9) is False

    @pytest.mark.parametrize(("size", "result"), [("1999999999", True), ("4000000001", True), ("3B", False)])
    def test_just_outside(self, size: str, result: bool) -> None:
        assert outside(parse_size(size), 2e9, 4e9) is result

    def test_min_above_max_rejects_any_size(self) -> None:
        assert [outside(parse_size(s), 4e9, 2e9) for s in ("1B", "3B", "5B")] == [True, True, True]

    def test_nan_size_passes(self) -> None:
        assert outside(math.nan, 2e9, 4e9) is False

    def test_no_bounds_pass(self) -> None:
        assert outside(1e15, None, None) is False


class TestDistance:
    """runtime-selection-scoring.md "Tie-breaks"."""

    def test_both_bounds_give_the_width(self) -> None:
        assert distance(3.21e9, 1e9, 8e9) == 7e9
        assert distance(3.21e9, 1e9, 70e9) == 69e9

    def test_no_range_is_zero(self) -> None:
        assert distance(3.21e9, None, None) == 0.0

    def test_one_bound_counts_the_distance_to_it(self) -> None:
        assert distance(3.21e9, 3e9, None) == 210_000_000
        assert distance(3.21e9, None, 13e9) == 9_790_000_000

    def test_facts_3_19_distance(self) -> None:
        assert distance(70e9, 60e9, 75e9) == 15e9


class TestDistanceOrder:
    @pytest.mark.parametrize(
        ("a", "b", "order"),
        [
            (7e9, 69e9, -62_000_000_000),
            (69e9, 7e9, 62_000_000_000),
            (2.0, 2.5, 0),  # differences below 1.0 count as equal
            (2.5, 2.0, 0),
            (3.0, 1.5, 1),  # truncated toward zero
            (1.5, 3.0, -1),
            (math.inf, math.inf, 0),
        ],
    )
    def test_order(self, a: float, b: float, order: int) -> None:
        assert distance_order(a, b) == order
