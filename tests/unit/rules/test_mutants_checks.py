"""The lenient scorer's entry index that no other test pinned down (found by ``scripts/mutation.py``).

runtime-selection-scoring.md, "How the score is computed": a runtime's score is the highest score
among its entries; ``autoSelect: false`` leaves an entry out of the score; "A weight can be
negative, which lowers the score". ome-selection-facts.md 3.12: "The maximum starts at 0, so the
result is never below 0"; 3.17: keep the first entry with the strictly highest score (ties go to
the earlier entry). The proto's ``Selection`` carries the index of the winning entry, "or -1 when
none matches"; ``checks.ModelFit`` documents the same.
"""

from __future__ import annotations

import pytest
from helpers_docs import domain_entry, domain_model, domain_runtime_spec, domain_spec
from ome_selector.domain import objects as d
from ome_selector.rules.model_format import fit_model

NEGATIVE = domain_spec("safetensors", "1.0.0", weight=-3)  # (-3 + 1) x 1 = -2


@pytest.mark.parametrize(
    ("entries", "want"),
    [
        pytest.param((domain_entry(0, auto_select=False),), (0, -1), id="only an autoSelect: false entry"),
        pytest.param((domain_entry(0, format=NEGATIVE),), (0, -1), id="only a negative score"),
        pytest.param(
            (domain_entry(0, format=NEGATIVE), domain_entry(1, auto_select=False)),
            (0, -1),
            id="a negative score and an entry left out",
        ),
        pytest.param((domain_entry(0, format=NEGATIVE), domain_entry(1)), (2, 1), id="the entry above 0 wins"),
        pytest.param((domain_entry(0), domain_entry(1)), (2, 0), id="a tie goes to the earlier entry"),
        pytest.param((domain_entry(0), domain_entry(1, priority=2)), (4, 1), id="the higher priority wins"),
    ],
)
def test_score_and_score_index(entries: tuple[d.Entry, ...], want: tuple[int, int]) -> None:
    fit = fit_model(domain_runtime_spec(*entries), domain_model())
    assert (fit.score, fit.score_index) == want
