"""cli/tables.py: kubectl's table layout, --no-headers, and the two ways a long cell keeps
within its column (reference/kubectl-ome/runtime.md, effective and tree)."""

from __future__ import annotations

from ome_selector.cli import tables

HEADERS = ("NAME", "SCOPE", "REASON")
ROWS = [("team-llama", "Namespaced", "-"), ("vllm", "Cluster", "model format")]


def test_columns_are_as_wide_as_their_widest_cell_three_spaces_apart() -> None:
    assert tables.format_table(HEADERS, ROWS) == (
        "NAME         SCOPE        REASON\nteam-llama   Namespaced   -\nvllm         Cluster      model format"
    )
    assert tables.format_table(HEADERS, []) == "NAME   SCOPE   REASON"


def test_without_headers_the_rows_set_the_widths() -> None:
    with tables.without_headers():
        assert not tables.headers_shown()
        assert tables.format_table(("A-LONG-HEADER", "B"), [("x", "1"), ("yy", "2")]) == "x    1\nyy   2"
        assert tables.format_table(HEADERS, []) == ""
    assert tables.headers_shown()
    with tables.without_headers(enabled=False):
        assert tables.format_table(("A", "B"), [("x", "1")]) == "A   B\nx   1"


def test_shorten_name_keeps_both_ends_and_a_fingerprint() -> None:
    name = "srt-llama-3-3-70b-instruct-omenative"
    assert tables.fingerprint(name) == "#d086cfa0"
    assert tables.shorten_name(name, 28) == "srt-llam...menative#d086cfa0"
    assert len(tables.shorten_name(name, 28)) == 28
    assert tables.shorten_name(name, 36) == name
    assert tables.shorten_name("abcdefgh", 5) == "a...h#" + tables.fingerprint("abcdefgh")[1:]  # at least two kept


def test_cut_ends_in_three_dots() -> None:
    assert tables.cut("none (RuntimeValidationError)", 28) == "none (RuntimeValidationEr..."
    assert tables.cut("short", 28) == "short"
