"""The AcceleratorClass each component gets (ome-docs/guides/deploy-models/select-accelerators.md).

``assign_accelerator(isvc, runtime_classes, classes, component)`` reproduces OME v1.3:

* The router never gets a class; a runtime that lists no classes gives none to any component
  (select-accelerators.md, "How OME picks a class").
* A class name wins over any policy: the component's ``acceleratorOverride.acceleratorClass``,
  else ``spec.acceleratorSelector.acceleratorClass``. A present-but-empty override still takes the
  override's place, so it hides the selector's name and the policy step runs
  (ome-selection-facts.md 4.1). The name need not be in the runtime's list. A missing class gives
  OME's error and leaves the workload as it is (select-accelerators.md, "The InferenceService has
  an AcceleratorClassError event").
* Otherwise a policy (override first, then selector) picks from the runtime's list, de-duplicated,
  skipping classes that do not exist (accelerator-classes.md, "Change or delete a class", since
  v1.3), after the constraints of ``spec.acceleratorSelector`` (select-accelerators.md,
  "Narrow the choice with constraints"). Ties go to the earlier class of the runtime's list.
* ``BestFit`` without selector constraints and with two or more candidates is OME's known bug:
  no class, no event, a nil-pointer log line, the workload untouched (select-accelerators.md,
  "BestFit doesn't create or update the workload").

Quantities (``memoryGB``, ``memoryBandwidthGBps``, costs) are parsed by ``quantities.py``; one that
does not parse counts as absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Mapping, Sequence

from ome.v1beta1 import types_pb2

from ome_selector.domain.quantities import parse_quantity, quantity_value
from ome_selector.texts import messages

# Sources; the same names as the proto enum ``ome.selector.v1.AcceleratorSource`` without prefix.
COMPONENT_OVERRIDE = "COMPONENT_OVERRIDE"
SELECTOR = "SELECTOR"
POLICY = "POLICY"
NONE_RUNTIME_LISTS_NONE = "NONE_RUNTIME_LISTS_NONE"
NONE_NOT_REQUESTED = "NONE_NOT_REQUESTED"
NONE_NO_CANDIDATE = "NONE_NO_CANDIDATE"
NONE_ROUTER = "NONE_ROUTER"

ENGINE = "engine"
DECODER = "decoder"
ROUTER = "router"

BEST_FIT = "BestFit"
CHEAPEST = "Cheapest"
MOST_CAPABLE = "MostCapable"
FIRST_AVAILABLE = "FirstAvailable"

_GIB = 2**30

Candidate = tuple[str, types_pb2.AcceleratorClass]


@dataclass(frozen=True, slots=True)
class Assignment:
    """The class one component gets, and why.

    ``accelerator_class`` is "" for none; for a named class that is missing it is the name, with
    ``error`` set. ``policy`` is the policy that picked (``POLICY``) or found no candidate
    (``NONE_NO_CANDIDATE``). ``workload_blocked`` is True when OME leaves the serving workload as
    it is; ``log`` is the manager log text OME writes instead of an event.
    """

    accelerator_class: str
    source: str
    policy: str = ""
    error: str = ""
    workload_blocked: bool = False
    log: str = ""


def _quantity_field(message: Any, field: str) -> Decimal | None:
    """A quantity field of ``message``, or None when absent or unparsable."""
    if not message.HasField(field):
        return None
    return parse_quantity(getattr(message, field))


# ---- figures of one class ---------------------------------------------------------------------


def memory_bytes(cls: types_pb2.AcceleratorClass) -> int | None:
    """``capabilities.memoryGB`` as whole bytes (``Value()``), or None when absent."""
    value = _quantity_field(cls.spec.capabilities, "memory_gb")
    return None if value is None else quantity_value(value)


def memory_gib(cls: types_pb2.AcceleratorClass) -> int | None:
    """``memoryGB`` in whole GiB, rounded down, as the constraints read it: ``80Gi`` is 80,
    ``80G`` is 74, ``80`` is 0 (accelerator-classes.md, "Write memoryGB in Gi")."""
    total = memory_bytes(cls)
    if total is None:
        return None
    whole = abs(total) // _GIB  # Go's integer division truncates toward zero
    return whole if total >= 0 else -whole


def _memory_gib_float(cls: types_pb2.AcceleratorClass) -> float | None:
    total = memory_bytes(cls)
    return None if total is None else float(total) / _GIB


def _bandwidth(cls: types_pb2.AcceleratorClass) -> float:
    value = _quantity_field(cls.spec.capabilities, "memory_bandwidth_gbps")
    return 0.0 if value is None else float(quantity_value(value))


def tflops_for(cls: types_pb2.AcceleratorClass, precision: str) -> int:
    """The performance figure for a precision: ``fp32``, ``fp16``, ``int8``/``fp8`` (int8Tops),
    ``int4``; case-insensitive; anything else (``bf16``) is 0 (select-accelerators.md, constraints
    table, ``preferredPrecisions``)."""
    if not cls.spec.capabilities.HasField("performance"):
        return 0
    perf = cls.spec.capabilities.performance
    field = {
        "fp32": "fp32_tflops",
        "fp16": "fp16_tflops",
        "int8": "int8_tops",
        "fp8": "int8_tops",
        "int4": "int4_tops",
    }.get(precision.lower())
    return getattr(perf, field) if field else 0


def _max_tflops(cls: types_pb2.AcceleratorClass) -> int:
    return max([0, *(tflops_for(cls, p) for p in ("fp32", "fp16", "int8", "int4"))])


# ---- constraints ------------------------------------------------------------------------------


def _family_matches(cls: types_pb2.AcceleratorClass, allowed: Sequence[str]) -> bool:
    family = cls.spec.family.lower()
    vendor_family = f"{cls.spec.vendor.lower()}-{family}"
    return any(entry.lower() == (vendor_family if "-" in entry else family) for entry in allowed)


def _memory_in_range(cls: types_pb2.AcceleratorClass, constraints: types_pb2.AcceleratorConstraints) -> bool:
    has_min, has_max = constraints.HasField("min_memory"), constraints.HasField("max_memory")
    if not (has_min or has_max):
        return True
    gib = memory_gib(cls)
    if gib is None:
        return False
    return (not has_min or gib >= constraints.min_memory) and (not has_max or gib <= constraints.max_memory)


def passes_constraints(
    name: str, cls: types_pb2.AcceleratorClass, constraints: types_pb2.AcceleratorConstraints | None
) -> bool:
    """Whether a class passes the constraints (select-accelerators.md, "Narrow the choice with
    constraints"). ``minComputePerformanceTFLOPS`` and ``preferredPrecisions`` never filter; None
    (no constraints) passes every class."""
    if constraints is None:
        return True
    if name in constraints.excluded_classes:
        return False
    if constraints.architecture_families and not _family_matches(cls, constraints.architecture_families):
        return False
    if not _memory_in_range(cls, constraints):
        return False
    features = {feature.lower() for feature in cls.spec.capabilities.features}
    if any(required.lower() not in features for required in constraints.required_features):
        return False
    if constraints.HasField("min_architecture_version"):
        version = cls.spec.capabilities.compute_capability
        # Compared as text: "10.0" is lower than "9.0".
        if not version or version < constraints.min_architecture_version:
            return False
    return True


# ---- policies (select-accelerators.md, "Policies") --------------------------------------------


def _best(candidates: Sequence[Candidate], scores: Sequence[float]) -> str:
    """The highest score; ties go to the earlier candidate (runtime-list order)."""
    best = 0
    for index in range(1, len(candidates)):
        if scores[index] > scores[best]:
            best = index
    return candidates[best][0]


def first_available(candidates: Sequence[Candidate]) -> str | None:
    """``FirstAvailable``: the first class in the runtime's list that passes the constraints."""
    return candidates[0][0] if candidates else None


def _cheapest_in(group: Sequence[tuple[str, Decimal]]) -> str:
    best_name, best_cost = group[0]
    for name, cost in group[1:]:
        if cost < best_cost:
            best_name, best_cost = name, cost
    return best_name


def cheapest(candidates: Sequence[Candidate]) -> str | None:
    """``Cheapest``: the lowest ``spotPerHour``, else ``perHour``; if no class has either, the
    lowest ``perMillionTokens``; then the lowest ``tier`` (low < medium < high, anything else
    counts as medium). Classes without ``cost`` are left out, a lone candidate too
    (select-accelerators.md, Policies and "The pods don't get the class's node selector": "For
    Cheapest, at least one class sets cost"). None when no class has a usable cost."""
    hourly: list[tuple[str, Decimal]] = []
    token: list[tuple[str, Decimal]] = []
    tier: list[tuple[str, Decimal]] = []
    for name, cls in candidates:
        if not cls.spec.HasField("cost"):
            continue
        cost = cls.spec.cost
        spot, per_hour = _quantity_field(cost, "spot_per_hour"), _quantity_field(cost, "per_hour")
        hourly_cost = spot if spot is not None else per_hour
        if hourly_cost is not None:
            hourly.append((name, hourly_cost))
        per_tokens = _quantity_field(cost, "per_million_tokens")
        if per_tokens is not None:
            token.append((name, per_tokens))
        if cost.tier:
            # low < medium = anything else < high (facts 4.2: low=1, medium=2, high=3, else 2).
            level = cost.tier.lower()
            tier.append((name, Decimal((level == "high") - (level == "low"))))
    for group in (hourly, token, tier):
        if group:
            return _cheapest_in(group)
    return None


def _score_tflops(tflops: int, required: int) -> float:
    if tflops == 0:
        return 0.0
    if required == 0:
        return 1.0
    return min(1.0, float(tflops) / float(required))


def _memory_fit_score(cls: types_pb2.AcceleratorClass, constraints: types_pb2.AcceleratorConstraints) -> float:
    if not constraints.HasField("min_memory"):
        return 1.0
    memory = _memory_gib_float(cls)
    if memory is None:
        return 0.0
    required = float(constraints.min_memory)
    if memory < required:
        return 0.0
    if memory == required:
        return 1.0
    return 1.0 / (memory / required)


def _compute_score(cls: types_pb2.AcceleratorClass, constraints: types_pb2.AcceleratorConstraints) -> float:
    if not cls.spec.capabilities.HasField("performance"):
        return 0.0
    required = constraints.min_compute_performance_tflops
    precisions = constraints.preferred_precisions
    if not precisions:
        return _score_tflops(_max_tflops(cls), required)
    penalty = 1.0
    for precision in precisions:
        tflops = tflops_for(cls, precision)
        if tflops > 0:
            return _score_tflops(tflops, required) * penalty
        penalty *= 0.5
    # fp16 as a fallback when it is not among the precisions (facts 4.2); when it is, it was a miss
    # (0), so the fallback gives 0 then too.
    fp16 = tflops_for(cls, "fp16")
    if fp16 > 0:
        return _score_tflops(fp16, required) * penalty
    return 0.0


def best_fit(candidates: Sequence[Candidate], constraints: types_pb2.AcceleratorConstraints | None) -> str | None:
    """``BestFit``: the highest ``0.7 * memory fit + 0.3 * compute`` (ome-selection-facts.md 4.2).

    Memory fit is 1 without ``minMemory``, else ``minMemory / memory`` (1 on an exact fit);
    compute reads the first preferred precision a class has, halving for each miss, against
    ``minComputePerformanceTFLOPS``. A single candidate is returned as it is. With two or more,
    ``constraints`` must be set: None is OME's nil-pointer bug, which ``assign_accelerator``
    reports as an outcome; here it raises ValueError.
    """
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0][0]
    if constraints is None:
        raise ValueError(messages.NIL_POINTER_LOG)
    scores = [
        0.7 * _memory_fit_score(cls, constraints) + 0.3 * _compute_score(cls, constraints) for _, cls in candidates
    ]
    return _best(candidates, scores)


def _capability_tflops(cls: types_pb2.AcceleratorClass, precisions: Sequence[str]) -> float:
    tflops = tflops_for(cls, precisions[0] if precisions else "fp16")
    if tflops == 0:
        tflops = next((t for t in (tflops_for(cls, p) for p in precisions[1:]) if t > 0), 0)
    return float(tflops)


def most_capable(candidates: Sequence[Candidate], constraints: types_pb2.AcceleratorConstraints | None) -> str | None:
    """``MostCapable``: the highest ``0.5 * memory + 0.3 * bandwidth + 0.2 * TFLOPS``, each divided
    by its maximum over the candidates. TFLOPS is fp16's, or the first preferred precision the
    class has (no fp16 fallback then). A single candidate is returned as it is."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0][0]
    precisions = list(constraints.preferred_precisions) if constraints is not None else []
    raw = [
        (_capability_tflops(cls, precisions), _memory_gib_float(cls) or 0.0, _bandwidth(cls)) for _, cls in candidates
    ]
    top_tflops, top_memory, top_bandwidth = (max(0.0, *column) for column in zip(*raw))

    def share(value: float, top: float) -> float:
        return value / top if top > 0 else 0.0

    scores = [
        0.5 * share(memory, top_memory) + 0.3 * share(bandwidth, top_bandwidth) + 0.2 * share(tflops, top_tflops)
        for tflops, memory, bandwidth in raw
    ]
    return _best(candidates, scores)


# ---- assignment -------------------------------------------------------------------------------


def _override(spec: types_pb2.InferenceServiceSpec, component: str) -> types_pb2.AcceleratorSelector | None:
    owner = spec.engine if component == ENGINE else spec.decoder
    return owner.accelerator_override if owner.HasField("accelerator_override") else None


def _named_class(
    spec: types_pb2.InferenceServiceSpec, override: types_pb2.AcceleratorSelector | None
) -> tuple[str, str] | None:
    """(name, source) of the class the InferenceService names, or None for none.

    A present override class wins even when it is "", which then names nothing (facts 4.1).
    """
    selector = spec.accelerator_selector
    if override is not None and override.HasField("accelerator_class"):
        name, source = override.accelerator_class, COMPONENT_OVERRIDE
    elif spec.HasField("accelerator_selector") and selector.HasField("accelerator_class"):
        name, source = selector.accelerator_class, SELECTOR
    else:
        return None
    return (name, source) if name else None


def _policy(spec: types_pb2.InferenceServiceSpec, override: types_pb2.AcceleratorSelector | None) -> str:
    if override is not None and override.policy:
        return override.policy
    return spec.accelerator_selector.policy if spec.HasField("accelerator_selector") else ""


def candidates_for(
    runtime_classes: Sequence[str], classes: Mapping[str, types_pb2.AcceleratorClass]
) -> list[Candidate]:
    """The runtime's classes in order, without repeats (the first kept), skipping missing ones
    (accelerator-classes.md, "Change or delete a class", since v1.3)."""
    seen: set[str] = set()
    out: list[Candidate] = []
    for name in runtime_classes:
        if name in seen:
            continue
        seen.add(name)
        cls = classes.get(name)
        if cls is not None:
            out.append((name, cls))
    return out


def _by_policy(
    policy: str,
    spec: types_pb2.InferenceServiceSpec,
    runtime_classes: Sequence[str],
    classes: Mapping[str, types_pb2.AcceleratorClass],
) -> Assignment:
    constraints = spec.accelerator_selector.constraints if spec.accelerator_selector.HasField("constraints") else None
    candidates = [c for c in candidates_for(runtime_classes, classes) if passes_constraints(c[0], c[1], constraints)]
    if policy == BEST_FIT and constraints is None and len(candidates) >= 2:
        return Assignment("", POLICY, policy=policy, workload_blocked=True, log=messages.NIL_POINTER_LOG)
    picked: str | None = None
    if candidates:
        if policy == FIRST_AVAILABLE:
            picked = first_available(candidates)
        elif policy == CHEAPEST:
            picked = cheapest(candidates)
        elif policy == BEST_FIT:
            picked = best_fit(candidates, constraints)
        elif policy == MOST_CAPABLE:
            picked = most_capable(candidates, constraints)
    if picked is None:
        return Assignment("", NONE_NO_CANDIDATE, policy=policy)
    return Assignment(picked, POLICY, policy=policy)


def assign_accelerator(
    isvc: types_pb2.InferenceService,
    runtime_classes: Sequence[str],
    classes: Mapping[str, types_pb2.AcceleratorClass],
    component: str,
) -> Assignment:
    """The class ``component`` (``engine``, ``decoder`` or ``router``) gets
    (select-accelerators.md, "How OME picks a class"; accelerator-classes.md, "How InferenceServices
    use a class").

    ``runtime_classes`` is the runtime's ``acceleratorRequirements.acceleratorClasses`` (merged
    for a named runtime); ``classes`` the AcceleratorClasses by name. The
    ``ome.io/accelerator-class`` annotation is never read here.
    """
    if component == ROUTER:
        return Assignment("", NONE_ROUTER)
    if component not in (ENGINE, DECODER):
        raise ValueError(f"unknown component {component!r}")
    if not runtime_classes:
        return Assignment("", NONE_RUNTIME_LISTS_NONE)
    spec = isvc.spec
    override = _override(spec, component)
    named = _named_class(spec, override)
    if named is not None:
        name, source = named
        if name not in classes:
            return Assignment(name, source, error=messages.accelerator_class_not_found(name), workload_blocked=True)
        return Assignment(name, source)
    policy = _policy(spec, override)
    if not policy:
        return Assignment("", NONE_NOT_REQUESTED)
    return _by_policy(policy, spec, runtime_classes, classes)
