"""Version suffixes cut at the *first* ``+``, ``-`` and ``.`` (ome-selection-facts.md 2.2, step 6:
"everything after the **first** ``+`` is split on ``.`` to give ``build``", and likewise for
``pre`` and ``dev``); found by ``scripts/mutation.py``."""

from __future__ import annotations

import pytest
from ome_selector.domain.versions import parse_version


@pytest.mark.parametrize(
    ("text", "key"),
    [
        pytest.param("1.0.0+a+b", (1, 0, 0, (), ("a+b",), ()), id="two plus signs: one build part"),
        pytest.param("1.0.0+a.b+c", (1, 0, 0, (), ("a", "b+c"), ()), id="the build split on dots"),
        pytest.param("1.2.3.4.5", (1, 2, 3, (), (), ("4", "5")), id="two dev parts"),
        pytest.param("1.0.0-a-b+c+d", (1, 0, 0, ("a-b",), ("c+d",), ()), id="pre and build"),
    ],
)
def test_suffixes_are_cut_at_the_first_separator(text: str, key: tuple[object, ...]) -> None:
    version = parse_version(text)
    assert version is not None and (version.key, version.prefix, version.precision) == (key, "", 3)
