"""``versions.parse_version`` and ``versions.entry_accepts``.

Sources: model-version-matching.md ("Accepted version formats", "Operators", "Examples") and
ome-selection-facts.md section 2 (parsing, comparison) and 3.7 (the matcher's comparison).
"""

from __future__ import annotations

import pytest
from helpers_docs import MODEL_VERSION_EXAMPLES
from ome_selector.domain.versions import Version, entry_accepts, parse_version


def _parsed(text: str) -> Version:
    version = parse_version(text)
    assert version is not None, text
    return version


# ---- "Accepted version formats" table, one test per listed version ---------------------------


class TestAcceptedVersionFormats:
    @pytest.mark.parametrize("text", ["1", "v1.12", "0.6.0", "v0.8.0"])
    def test_row_one_to_three_numbers_parse(self, text: str) -> None:
        version = _parsed(text)
        assert version.unofficial is False

    @pytest.mark.parametrize("text", ["4.51.3-SAM-HQ-preview", "4.43.0+build", "4.45.0.dev0", "1.2.3.4"])
    def test_row_parses_with_a_suffix(self, text: str) -> None:
        version = _parsed(text)
        assert version.unofficial is True

    @pytest.mark.parametrize("text", ["1.08.0", "V1.0.0", "1.2-beta", "1.0.0-", ""])
    def test_row_does_not_parse(self, text: str) -> None:
        assert parse_version(text) is None


# ---- facts 2.2: worked parses ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "prefix", "precision"),
    [
        ("1", (1, 0, 0, (), (), ()), "", 1),
        ("v1", (1, 0, 0, (), (), ()), "v", 1),
        ("1.12", (1, 12, 0, (), (), ()), "", 2),
        ("0.6.0", (0, 6, 0, (), (), ()), "", 3),
        ("v0.8.0", (0, 8, 0, (), (), ()), "v", 3),
        ("4.43.0.dev0", (4, 43, 0, (), (), ("dev0",)), "", 3),
        ("4.47.0.dev0", (4, 47, 0, (), (), ("dev0",)), "", 3),
        ("1.2.3.4", (1, 2, 3, (), (), ("4",)), "", 3),
        ("4.51.3-SAM-HQ-preview", (4, 51, 3, ("SAM-HQ-preview",), (), ()), "", 3),
        ("1.8.0-rc.1", (1, 8, 0, ("rc", "1"), (), ()), "", 3),
        ("1.2.3-rc1.dev0", (1, 2, 3, ("rc1", "dev0"), (), ()), "", 3),
        ("1.2.3.dev0-rc1", (1, 2, 3, ("rc1",), (), ("dev0",)), "", 3),
        ("4.43.0+build", (4, 43, 0, (), ("build",), ()), "", 3),
        ("1.0.0-alpha+b.5", (1, 0, 0, ("alpha",), ("b", "5"), ()), "", 3),
        ("18446744073709551615", (18446744073709551615, 0, 0, (), (), ()), "", 1),
    ],
)
def test_facts_worked_parses(text: str, key: tuple, prefix: str, precision: int) -> None:
    version = _parsed(text)
    assert (version.key, version.prefix, version.precision) == (key, prefix, precision)


@pytest.mark.parametrize(
    "text",
    [
        "1.2-beta",
        "1-beta",
        "V1.0",
        "01.0.0",
        "1..0",
        "1.",
        " 1.0",
        "",  # facts 2.2 errors
        "vv1",
        "v",
        "1.2.3+",
        "1.2.3.",
        "1.2.3-a..b",
        "1.2.3-",
        "1.0.0 ",
        "-1.0.0",
        "+1",
        "1.٣.0",  # a non-ASCII digit
        "18446744073709551616",  # does not fit in a uint64
    ],
)
def test_facts_parse_errors(text: str) -> None:
    assert parse_version(text) is None


# ---- facts 2.3: comparison (numbers, then pre, build, dev as string lists) -------------------


@pytest.mark.parametrize(
    ("a", "b", "equal", "greater"),
    [
        ("1.8.0", "1.8.0", True, False),
        ("2.0.0", "1.9.0", False, True),
        ("1.8.5", "1.8.0", False, True),
        ("1", "1.0.0", True, False),  # precision ignored
        ("v1.2", "1.2.0", True, False),  # prefix ignored
        ("1.8.0-beta", "1.8.0-alpha", False, True),
        ("1.0.0-alpha", "1.0.0", False, True),  # a pre-release is *greater* (not SemVer)
        ("v1.9.0", "v2.9.0", False, False),
        ("1.8.0+20240708", "1.8.0+20240707", False, True),  # build takes part
        ("1.0.0-10", "1.0.0-9", False, False),  # string order: "10" < "9"
    ],
)
def test_facts_comparison_table(a: str, b: str, equal: bool, greater: bool) -> None:
    va, vb = _parsed(a), _parsed(b)
    assert (va.key == vb.key, va.key > vb.key) == (equal, greater)


# ---- facts 3.7: the matcher's comparison (entry on the left) ---------------------------------


@pytest.mark.parametrize(
    ("entry", "operator", "model", "accepted"),
    [
        ("1.0.0", None, "1", True),
        ("1.8.0", "GreaterThan", "1.7.0", True),
        ("1.7.0", "GreaterThan", "1.7.0", False),
        ("1.7.0", "GreaterThan", "1.8.0", False),
        ("1.8.0", "GreaterThanOrEqual", "1.8.0", True),
        ("1.9.0", "GreaterThanOrEqual", "1.8.0", True),
        ("1.8", "GreaterThan", "1.7.0", False),
        ("v2.0.0", "GreaterThan", "1.0.0", False),
        ("1.8.0-dev", "GreaterThan", "1.8.0-dev", True),
        ("1.8.0-dev", "GreaterThan", "1.8.0-alpha", False),
        ("4.48.0", "GreaterThan", "4.47.0.dev0", False),
        ("1.0", "LessThan", "1.0.0", False),
        ("1.0.0", "LessThan", "1.0.0", True),
        ("1.0.0", "Equal", "abc", False),
        ("abc", "Equal", "abc", False),
    ],
)
def test_facts_matcher_table(entry: str, operator: str | None, model: str, accepted: bool) -> None:
    assert entry_accepts(parse_version(entry), operator, parse_version(model)) is accepted


# ---- model-version-matching.md: "Operators" table, one test per row --------------------------


class TestOperatorsTable:
    @pytest.mark.parametrize(
        ("entry", "model", "accepted"),
        [
            ("1.0.0", "1.0.0", True),  # the versions are equal
            ("1.0", "1.0.0", True),  # a missing part counts as 0
            ("1", "1.0.0", True),
            ("v1.0.0", "1.0.0", True),  # the v is ignored
            ("4.43.0+build", "4.43.0+build", True),
            ("4.43.0+build", "4.43.0+other", False),  # suffixes identical, the build included
            ("4.43.0+build", "4.43.0", False),
            ("4.45.0.dev0", "4.45.0.dev1", False),
            ("1.0.0", "1.0.1", False),
        ],
    )
    def test_row_equal_the_default(self, entry: str, model: str, accepted: bool) -> None:
        assert entry_accepts(parse_version(entry), "Equal", parse_version(model)) is accepted
        # "Equal, the default": an entry without an operator behaves the same.
        assert entry_accepts(parse_version(entry), None, parse_version(model)) is accepted

    @pytest.mark.parametrize(
        ("entry", "model", "accepted"),
        [("1.8.0", "1.7.0", True), ("1.8.0", "1.8.0", False), ("1.8.0", "1.9.0", False)],
    )
    def test_row_greater_than(self, entry: str, model: str, accepted: bool) -> None:
        assert entry_accepts(parse_version(entry), "GreaterThan", parse_version(model)) is accepted

    @pytest.mark.parametrize(
        ("entry", "model", "accepted"),
        [("1.8.0", "1.7.0", True), ("1.8.0", "1.8.0", True), ("1.8.0", "1.9.0", False)],
    )
    def test_row_greater_than_or_equal(self, entry: str, model: str, accepted: bool) -> None:
        assert entry_accepts(parse_version(entry), "GreaterThanOrEqual", parse_version(model)) is accepted

    @pytest.mark.parametrize("operator", ["LessThan", "equal", "greaterthan"])
    @pytest.mark.parametrize(
        ("entry", "model", "accepted"),
        [
            ("1.0.0", "1.0.0", True),
            ("1.0.0", "0.9.0", False),  # no ordering: only equal versions
            ("1.0.0", "1.1.0", False),
            ("1.0", "1.0.0", False),  # must have the same number of parts
            ("v1.0.0", "1.0.0", False),  # and the same v
            ("v1.0.0", "v1.0.0", True),
            ("4.45.0.dev0", "4.45.0.dev0", True),  # with suffixes: as for Equal
        ],
    )
    def test_row_any_other_value(self, operator: str, entry: str, model: str, accepted: bool) -> None:
        assert entry_accepts(parse_version(entry), operator, parse_version(model)) is accepted

    @pytest.mark.parametrize("operator", ["GreaterThan", "GreaterThanOrEqual"])
    @pytest.mark.parametrize(
        ("entry", "model", "accepted"),
        [
            ("1.8.0-dev", "1.8.0-dev", True),  # with a suffix only an equal version matches
            ("1.8.0-dev", "1.7.0", False),
            ("1.8.0", "1.7.0-dev", False),
            ("1.8", "1.7", True),  # same number of parts
            ("1.8", "1.7.0", False),
            ("v1.8.0", "v1.7.0", True),  # the v on both
            ("v1.8.0", "1.7.0", False),  # or neither
            ("1.8.0", "v1.7.0", False),
        ],
    )
    def test_ordering_operators_need_same_shape(self, operator: str, entry: str, model: str, accepted: bool) -> None:
        assert entry_accepts(parse_version(entry), operator, parse_version(model)) is accepted

    def test_entry_version_is_the_newest_that_greater_than_or_equal_accepts(self) -> None:
        entry = parse_version("4.46.0")
        assert [
            entry_accepts(entry, "GreaterThanOrEqual", parse_version(m))
            for m in ("4.44.2", "4.46.0", "4.46.1", "4.45.0.dev0")
        ] == [
            True,
            True,
            False,
            False,
        ]


# ---- "Examples" table at the unit level (the engine-level test is in test_matching_docs.py) ---


@pytest.mark.parametrize(("entry", "operator", "model", "matches"), MODEL_VERSION_EXAMPLES)
def test_examples_table_unit(entry: str, operator: str | None, model: str, matches: bool) -> None:
    assert entry_accepts(parse_version(entry), operator, parse_version(model)) is matches


@pytest.mark.parametrize(
    ("entry", "model"), [("1.08.0", "1.08.0"), ("1.0.0", "V1.0.0"), ("1.2-beta", "1.2-beta"), ("", "")]
)
@pytest.mark.parametrize("operator", ["Equal", "GreaterThanOrEqual", "LessThan"])
def test_a_version_that_does_not_parse_never_matches(entry: str, model: str, operator: str) -> None:
    assert entry_accepts(parse_version(entry), operator, parse_version(model)) is False
