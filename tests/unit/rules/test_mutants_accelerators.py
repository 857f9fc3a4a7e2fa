"""Boundaries of ``quantities`` and ``accelerators`` that no other test pinned down (found by ``scripts/mutation.py``).

Quantities follow Kubernetes rules (ome-selection-facts.md 4.2, "Quantities follow Kubernetes
rules"); the module documents its limits: an exponent beyond +-400 and a magnitude above what
an int64 holds (2**63 - 1) do not parse.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from google.protobuf import json_format
from ome.v1beta1 import types_pb2
from ome_selector.domain.quantities import parse_quantity, quantity_value
from ome_selector.rules.accelerators import (
    COMPONENT_OVERRIDE,
    NONE_NO_CANDIDATE,
    NONE_NOT_REQUESTED,
    NONE_ROUTER,
    NONE_RUNTIME_LISTS_NONE,
    POLICY,
    SELECTOR,
    Assignment,
    assign_accelerator,
    best_fit,
    cheapest,
    memory_gib,
    most_capable,
)

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


def _memory(memory: str) -> types_pb2.AcceleratorClass:
    return json_format.ParseDict({"spec": {"capabilities": {"memoryGB": memory}}}, types_pb2.AcceleratorClass())


@pytest.mark.parametrize(
    ("memory", "want"),
    [
        # accelerator-classes.md, "Write memoryGB in Gi": 80Gi is 80, 80G is 74, a plain 80 is 0.
        pytest.param("80Gi", 80, id="80Gi"),
        pytest.param("80G", 74, id="80G"),
        pytest.param("80", 0, id="80 bytes"),
        # Go's integer division truncates toward zero (facts 4.2): -1.5Gi is -1 GiB, not -2.
        pytest.param("-80Gi", -80, id="-80Gi"),
        pytest.param("-1.5Gi", -1, id="-1.5Gi truncates toward zero"),
    ],
)
def test_memory_gib(memory: str, want: int) -> None:
    assert memory_gib(_memory(memory)) == want


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


def test_best_fit_a_preferred_precision_of_1_tflops_is_a_hit() -> None:
    # facts 4.2: "The first precision with a value above 0 gives s(value) * penalty". "one" has
    # fp16 1 (s = 1, no requirement, penalty 1); "none" has no figure for fp16 (compute 0).
    # Memory fit is 1 for both, so "one" wins although it is later.
    constraints = types_pb2.AcceleratorConstraints(preferred_precisions=["fp16", "fp32"])
    candidates = [_class("none", {"int4Tops": 0}), _class("one", {"fp16Tflops": 1})]
    assert best_fit(candidates, constraints) == "one"


@pytest.mark.parametrize(
    ("precisions", "want"),
    [
        # bf16 gives 0 (a miss, penalty 0.5); fp16 is not in the list, so s(fp16) * 0.5 = 0.5 for
        # "fp16", 0 for "fp32" (no fp16): "fp16" wins although it is later.
        pytest.param(["bf16"], "fp16", id="fp16 not listed: the fp16 fallback"),
        # FP16 is in the list (case-insensitive) and "fp16" has it: a hit, s = 1.
        pytest.param(["FP16"], "fp16", id="FP16 listed: a hit"),
        # fp32 is a miss for "fp16"; fp16 comes next in the list, a hit at penalty 0.5; "fp32" hits
        # at once (s = 1): "fp32" wins.
        pytest.param(["fp32", "fp16"], "fp32", id="fp16 listed after a hit of the other class"),
    ],
)
def test_best_fit_fp16_fallback_only_when_fp16_is_not_preferred(precisions: list[str], want: str) -> None:
    constraints = types_pb2.AcceleratorConstraints(preferred_precisions=precisions)
    candidates = [_class("fp32", {"fp32Tflops": 100}), _class("fp16", {"fp16Tflops": 100})]
    assert best_fit(candidates, constraints) == want


@pytest.mark.parametrize(
    "performance",
    [{"fp32Tflops": 10}, {"fp16Tflops": 10}, {"int8Tops": 10}, {"int4Tops": 10}],
    ids=["fp32", "fp16", "int8", "int4"],
)
def test_best_fit_without_preferred_precisions_reads_the_largest_figure(performance: dict[str, int]) -> None:
    # facts 4.2: "if preferredPrecisions is empty, use s(max(fp32, fp16, int8, int4))": 10 of
    # any of them with no requirement gives s = 1, against 0 for a class without figures.
    candidates = [_class("none", {}), _class("some", performance)]
    assert best_fit(candidates, types_pb2.AcceleratorConstraints()) == "some"


def _sized(name: str, memory: str, performance: dict[str, int]) -> tuple[str, types_pb2.AcceleratorClass]:
    doc = {"metadata": {"name": name}, "spec": {"capabilities": {"memoryGB": memory, "performance": performance}}}
    return name, json_format.ParseDict(doc, types_pb2.AcceleratorClass())


@pytest.mark.parametrize(
    ("min_memory", "want"),
    [
        # minMemory 40: "exact" 40Gi has memory fit 1 and no compute: 0.7; "fast" 80Gi has 40/80 =
        # 0.5 and compute 1: 0.35 + 0.3 = 0.65. The memory weight wins.
        pytest.param(40, "exact", id="0.7 * 1 + 0.3 * 0 > 0.7 * 0.5 + 0.3 * 1"),
        # minMemory 50: "exact" 50Gi: 0.7 again; "fast" 80Gi has 50/80 = 0.625 and compute 1:
        # 0.4375 + 0.3 = 0.7375. Now the compute share wins.
        pytest.param(50, "fast", id="0.7 * 1 + 0.3 * 0 < 0.7 * 0.625 + 0.3 * 1"),
    ],
)
def test_best_fit_weighs_memory_0_7_and_compute_0_3(min_memory: int, want: str) -> None:
    candidates = [_sized("exact", f"{min_memory}Gi", {}), _sized("fast", "80Gi", {"fp16Tflops": 100})]
    assert best_fit(candidates, types_pb2.AcceleratorConstraints(min_memory=min_memory)) == want


def test_most_capable_divides_by_a_maximum_of_one() -> None:
    # facts 4.2 MostCapable: each figure divided by its maximum over the candidates (only a maximum
    # of 0 gives 0). Same memory and bandwidth; fp16 0 vs 1 TFLOPS: the second has the higher
    # score 0.2 * 1/1, so it wins although the first is earlier.
    candidates = [_class("none", {}), _class("one", {"fp16Tflops": 1})]
    assert most_capable(candidates, None) == "one"
    assert most_capable(list(reversed(candidates)), None) == "one"


def test_most_capable_tries_the_later_preferred_precisions() -> None:
    # facts 4.2 MostCapable: "tflops is the value for the first preferred precision ... If that is 0
    # and there are at least 2 preferred precisions, try the later ones in order. There is no fp16
    # fallback when precisions are given." "fp16only" has neither int4 nor int8 (0 TFLOPS); "int8"
    # has 1 int8 TOPS, the maximum, so it wins the 0.2 share although it is later.
    constraints = types_pb2.AcceleratorConstraints(preferred_precisions=["int4", "int8"])
    candidates = [_class("fp16only", {"fp16Tflops": 500}), _class("int8", {"int8Tops": 1})]
    assert most_capable(candidates, constraints) == "int8"


# ---- Cheapest's tier group (ome-selection-facts.md 4.2: "Tiers map to low=1, medium=2, high=3
# and anything else=2 (case-insensitive)"; the lowest wins, ties keep the earliest candidate)


def _tiered(tier: str) -> tuple[str, types_pb2.AcceleratorClass]:
    doc = {"metadata": {"name": tier}, "spec": {"cost": {"tier": tier}}}
    return tier, json_format.ParseDict(doc, types_pb2.AcceleratorClass())


@pytest.mark.parametrize(
    ("tiers", "want"),
    [
        pytest.param(["medium", "low"], "low", id="low below medium"),
        pytest.param(["premium", "Low"], "Low", id="low below anything else, case-insensitive"),
        pytest.param(["high", "medium"], "medium", id="medium below high"),
        pytest.param(["HIGH", "premium"], "premium", id="anything else below high"),
        pytest.param(["premium", "medium"], "premium", id="anything else ties with medium: the earlier"),
        pytest.param(["high", "low", "medium"], "low", id="three tiers"),
    ],
)
def test_cheapest_by_tier(tiers: list[str], want: str) -> None:
    assert cheapest([_tiered(t) for t in tiers]) == want


# ---- assign_accelerator: the whole Assignment (select-accelerators.md "How OME picks a class",
# "The InferenceService has an AcceleratorClassError event", "BestFit doesn't create or update the
# workload"; accelerator-classes.md "Change or delete a class")

H100 = {"metadata": {"name": "nvidia-h100"}, "spec": {"capabilities": {"memoryGB": "80Gi"}}}
H200 = {"metadata": {"name": "nvidia-h200"}, "spec": {"capabilities": {"memoryGB": "141Gi"}}}
CLASSES = {d["metadata"]["name"]: json_format.ParseDict(d, types_pb2.AcceleratorClass()) for d in (H100, H200)}  # type: ignore[index]
LISTED = ["nvidia-h100", "nvidia-h200"]


def _isvc(spec: dict[str, Any]) -> types_pb2.InferenceService:
    return json_format.ParseDict(
        {"metadata": {"name": "svc", "namespace": "demo"}, "spec": spec}, types_pb2.InferenceService()
    )


ASSIGNMENT_CASES = [
    pytest.param(
        {"acceleratorSelector": {"acceleratorClass": "nvidia-h100"}},
        "router",
        LISTED,
        Assignment("", NONE_ROUTER, policy="", error="", workload_blocked=False, log=""),
        id="the router never gets a class",
    ),
    pytest.param(
        {"acceleratorSelector": {"acceleratorClass": "nvidia-h100"}},
        "engine",
        [],
        Assignment("", NONE_RUNTIME_LISTS_NONE, policy="", error="", workload_blocked=False, log=""),
        id="the runtime lists none",
    ),
    pytest.param(
        {},
        "engine",
        LISTED,
        Assignment("", NONE_NOT_REQUESTED, policy="", error="", workload_blocked=False, log=""),
        id="neither: no class",
    ),
    pytest.param(
        {"acceleratorSelector": {"acceleratorClass": "nvidia-h200", "policy": "FirstAvailable"}},
        "engine",
        LISTED,
        Assignment("nvidia-h200", SELECTOR, policy="", error="", workload_blocked=False, log=""),
        id="a named class wins over a policy",
    ),
    pytest.param(
        {
            "acceleratorSelector": {"acceleratorClass": "nvidia-h100"},
            "engine": {"acceleratorOverride": {"acceleratorClass": "nvidia-h200"}},
        },
        "engine",
        LISTED,
        Assignment("nvidia-h200", COMPONENT_OVERRIDE, policy="", error="", workload_blocked=False, log=""),
        id="the override wins",
    ),
    pytest.param(
        {"acceleratorSelector": {"acceleratorClass": "nvidia-a100"}},
        "engine",
        LISTED,
        Assignment(
            "nvidia-a100",
            SELECTOR,
            policy="",
            error="accelerator class nvidia-a100 not found at cluster scope",
            workload_blocked=True,
            log="",
        ),
        id="a missing named class: the error, the workload left as it is",
    ),
    pytest.param(
        {"acceleratorSelector": {"policy": "FirstAvailable"}},
        "decoder",
        LISTED,
        Assignment("nvidia-h100", POLICY, policy="FirstAvailable", error="", workload_blocked=False, log=""),
        id="a policy picks",
    ),
    pytest.param(
        {"acceleratorSelector": {"policy": "FirstAvailable", "constraints": {"excludedClasses": LISTED}}},
        "engine",
        LISTED,
        Assignment("", NONE_NO_CANDIDATE, policy="FirstAvailable", error="", workload_blocked=False, log=""),
        id="no candidate",
    ),
    pytest.param(
        {"acceleratorSelector": {"policy": "BestFit"}},
        "engine",
        LISTED,
        Assignment(
            "",
            POLICY,
            policy="BestFit",
            error="",
            workload_blocked=True,
            log="invalid memory address or nil pointer dereference",
        ),
        id="BestFit without constraints and two candidates: the nil-pointer log",
    ),
]


@pytest.mark.parametrize(("spec", "component", "listed", "want"), ASSIGNMENT_CASES)
def test_assign_accelerator(spec: dict[str, Any], component: str, listed: list[str], want: Assignment) -> None:
    assert assign_accelerator(_isvc(spec), listed, CLASSES, component) == want
