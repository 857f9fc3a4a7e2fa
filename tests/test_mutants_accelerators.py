"""Boundaries of ``quantities`` and ``accelerators`` that no other test pinned down (found by ``scripts/mutation.py``).

Quantities follow Kubernetes rules (ome-selection-facts.md 4.2, "Quantities follow Kubernetes
rules"); the module documents its limits: an exponent beyond +-400 and a magnitude above what
an int64 holds (2**63 - 1) do not parse.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from google.protobuf import json_format

from ome.v1beta1 import types_pb2
from ome_selector.accelerators import best_fit, most_capable
from ome_selector.quantities import parse_quantity, quantity_value

INT64_MAX = 9223372036854775807

QUANTITY_CASES = [
    pytest.param("9223372036854775807", Decimal(INT64_MAX), id="int64 max parses"),
    pytest.param("9223372036854775808", None, id="int64 max + 1 does not"),
    pytest.param("-9223372036854775807", Decimal(-INT64_MAX), id="-int64 max parses"),
    pytest.param("-9223372036854775808", None, id="a magnitude above int64 max does not"),
    pytest.param("7Ei", Decimal(7 * 2**60), id="7Ei fits"),
    pytest.param("8Ei", None, id="8Ei is 2**63: too large"),
    pytest.param("9E", Decimal(9 * 10**18), id="9E fits"),
    pytest.param("10E", None, id="10E is too large"),
    pytest.param("1e-400", Decimal("1e-400"), id="exponent -400 parses"),
    pytest.param("1e-401", None, id="exponent -401 does not"),
    pytest.param("0e400", Decimal(0), id="exponent 400 parses (0 fits)"),
    pytest.param("0e401", None, id="exponent 401 does not"),
]


@pytest.mark.parametrize(("text", "want"), QUANTITY_CASES)
def test_parse_quantity_limits(text: str, want: Decimal | None) -> None:
    assert parse_quantity(text) == want


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(Decimal("0.5"), 1, id="500m rounds up to 1"),
        pytest.param(Decimal("-0.5"), -1, id="away from zero"),
        pytest.param(Decimal(3), 3, id="whole numbers stay"),
    ],
)
def test_quantity_value_rounds_away_from_zero(value: Decimal, want: int) -> None:
    assert quantity_value(value) == want


# ---- BestFit's compute score (ome-selection-facts.md 4.2: ``s(t) = 0 if t == 0 else (1 if req
# == 0 else min(1, t/req))``; without a hit among the preferred precisions and without fp16 among
# them, ``s(fp16) * penalty``, the penalty halving for each miss)


def _class(name: str, performance: dict[str, int]) -> tuple[str, types_pb2.AcceleratorClass]:
    doc = {"metadata": {"name": name}, "spec": {"capabilities": {"memoryGB": "80Gi", "performance": performance}}}
    return name, json_format.ParseDict(doc, types_pb2.AcceleratorClass())


def test_best_fit_zero_tflops_scores_zero_even_without_a_requirement() -> None:
    # All-zero performance gives s(0) = 0; 1 TFLOPS with no requirement gives s = 1.
    candidates = [_class("zeros", {}), _class("one", {"fp16Tflops": 1})]
    assert best_fit(candidates, types_pb2.AcceleratorConstraints()) == "one"


def test_best_fit_fp16_fallback_is_multiplied_by_the_penalty() -> None:
    # Preferred int4 only, 200 TFLOPS required. "fallback" has no int4: s(fp16=400) = 1 times the
    # penalty 0.5 = 0.5; "int4" has s(120) = 0.6. Memory fit is 1 for both (no minMemory).
    constraints = types_pb2.AcceleratorConstraints(preferred_precisions=["int4"], min_compute_performance_tflops=200)
    candidates = [_class("fallback", {"fp16Tflops": 400}), _class("int4", {"int4Tops": 120})]
    assert best_fit(candidates, constraints) == "int4"


def test_most_capable_divides_by_a_maximum_of_one() -> None:
    # facts 4.2 MostCapable: each figure divided by its maximum over the candidates (only a maximum
    # of 0 gives 0). Same memory and bandwidth; fp16 0 vs 1 TFLOPS: the second has the higher
    # score 0.2 * 1/1, so it wins although the first is earlier.
    candidates = [_class("none", {}), _class("one", {"fp16Tflops": 1})]
    assert most_capable(candidates, None) == "one"
    assert most_capable(list(reversed(candidates)), None) == "one"
