"""The selection engine: evaluate every runtime in scope, rank the candidates, explain the rest.

Pure Python, no gRPC. Input: an immutable ``Snapshot``, a compiled ``Model`` and ``Request``.
Every runtime runs through ``checks.CHECKS`` in the documented order and keeps all its failures
(the first is primary); runtimes that pass every check are candidates when auto-selection can
choose them (an ``autoSelect: true`` entry and a score above 0). Candidates are ranked as
runtime-selection-scoring.md says: ServingRuntimes before ClusterServingRuntimes, then higher
score, then (for a model with a size) smaller size distance, then name.
"""
from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

from . import domain as d
from . import messages
from .checks import CHECKS, Check, Failure, ModelFit, auto_select_failure, check_accelerator_class, check_deployment_mode, entry_matches
from .sizes import distance, distance_order
from .snapshot import Snapshot


_NO_FIT = ModelFit(None, 0, -1, None, None, None, None)  # for checks that do not read the fit


class Verdict(enum.Enum):
    """Same names as the proto enum ``ome.selector.v1.Verdict``."""

    CANDIDATE = "CANDIDATE"
    EXCLUDED = "EXCLUDED"
    COMPATIBLE_NOT_AUTO_SELECTABLE = "COMPATIBLE_NOT_AUTO_SELECTABLE"


class TieBreak(enum.Enum):
    """What placed a candidate after the one above it (proto ``ome.selector.v1.TieBreak``)."""

    UNSPECIFIED = "UNSPECIFIED"
    SCOPE = "SCOPE"
    SCORE = "SCORE"
    SIZE_DISTANCE = "SIZE_DISTANCE"
    NAME = "NAME"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """One runtime's result: its failures in canonical order (empty for a candidate)."""

    runtime: d.Runtime
    spec: d.Compiled
    fit: ModelFit
    failures: tuple[Failure, ...]
    verdict: Verdict
    distance: float | None


@dataclass(frozen=True, slots=True)
class Ranked:
    """A candidate with its 1-based rank and the tie-break that placed it."""

    evaluation: Evaluation
    rank: int
    tie_break: TieBreak


@dataclass(frozen=True, slots=True)
class AutoSelection:
    """The outcome of auto-selection for one model and request."""

    evaluations: tuple[Evaluation, ...]  # fetch order: ServingRuntimes, then ClusterServingRuntimes
    ranked: tuple[Ranked, ...]
    namespaced: int
    cluster: int
    no_runtime_message: str | None

    @property
    def selected(self) -> Evaluation | None:
        """The first-ranked candidate, or None."""
        return self.ranked[0].evaluation if self.ranked else None


def evaluate(snapshot: Snapshot, runtime: d.Runtime, spec: d.Compiled, model: d.Model, request: d.Request | None) -> Evaluation:
    """Run every check on ``spec`` (the runtime's own or merged spec) and decide the verdict."""
    fit = snapshot.fit(spec, model)
    failures = tuple(f for check in CHECKS for f in check(spec, fit, request))
    size = model.size
    dist = distance(size, fit.distance_low, fit.distance_high) if size is not None else None
    if failures:
        return Evaluation(runtime, spec, fit, failures, Verdict.EXCLUDED, dist)
    skipped = auto_select_failure(spec, fit, model)
    if skipped is not None:
        return Evaluation(runtime, spec, fit, (skipped,), Verdict.COMPATIBLE_NOT_AUTO_SELECTABLE, dist)
    return Evaluation(runtime, spec, fit, (), Verdict.CANDIDATE, dist)


def _compare(has_size: bool, a: Evaluation, b: Evaluation) -> int:
    if a.fit.score != b.fit.score:
        return -1 if a.fit.score > b.fit.score else 1
    if has_size and a.distance is not None and b.distance is not None:
        order = distance_order(a.distance, b.distance)
        if order:
            return order
    return (a.runtime.name > b.runtime.name) - (a.runtime.name < b.runtime.name)


def _tie_break(has_size: bool, previous: Evaluation | None, current: Evaluation) -> TieBreak:
    if previous is None:
        return TieBreak.UNSPECIFIED
    if previous.runtime.is_cluster != current.runtime.is_cluster:
        return TieBreak.SCOPE
    if previous.fit.score != current.fit.score:
        return TieBreak.SCORE
    if has_size and previous.distance is not None and current.distance is not None and distance_order(current.distance, previous.distance):
        return TieBreak.SIZE_DISTANCE
    return TieBreak.NAME


def rank(candidates: list[Evaluation], model: d.Model) -> tuple[Ranked, ...]:
    """ServingRuntimes first whatever their scores, then ClusterServingRuntimes; within each,
    higher score, smaller size distance (model with a size; sub-1.0 differences tie), name."""
    has_size = model.size is not None
    key = functools.cmp_to_key(functools.partial(_compare, has_size))
    ordered = sorted((e for e in candidates if not e.runtime.is_cluster), key=key)
    ordered += sorted((e for e in candidates if e.runtime.is_cluster), key=key)
    out = []
    previous = None
    for i, evaluation in enumerate(ordered, start=1):
        out.append(Ranked(evaluation, i, _tie_break(has_size, previous, evaluation)))
        previous = evaluation
    return tuple(out)


def auto_select(snapshot: Snapshot, model: d.Model, request: d.Request | None, namespace: str) -> AutoSelection:
    """Auto-selection over the ServingRuntimes of ``namespace`` and all ClusterServingRuntimes.

    Auto-selection matches each runtime's own spec, never what it inherits
    (runtime-selection-scoring.md, "Steer the choice"). Memoised per snapshot.
    """
    memo_key = ("auto", model.cache_key, namespace, None if request is None else request.cache_key)
    cached = snapshot.memo.get(memo_key)
    if cached is not None:
        return cached  # type: ignore[return-value]
    namespaced, cluster = snapshot.runtimes_in_scope(namespace)
    evaluations = tuple(evaluate(snapshot, rt, rt.own, model, request) for rt in (*namespaced, *cluster))
    ranked = rank([e for e in evaluations if e.verdict is Verdict.CANDIDATE], model)
    message = None
    if not ranked:
        excluded = [(e.runtime.name, e.failures[0].message) for e in evaluations if e.verdict is Verdict.EXCLUDED]
        message = messages.no_runtime_found(model.model_format.name, namespace, len(namespaced), len(cluster), excluded)
    result = AutoSelection(evaluations, ranked, len(namespaced), len(cluster), message)
    snapshot.remember(memo_key, result)
    return result


def choose(snapshot: Snapshot, model: d.Model, request: d.Request | None, namespace: str) -> tuple[Ranked, ...]:
    """The ranked candidates only, without explaining the other runtimes.

    Uses the snapshot's match index: a runtime can match strictly only if one of its entries has
    the model's format name, architecture and quantization, so only those runtimes are checked.
    Gives the same ranking as ``auto_select`` (tested), in time proportional to the runtimes that
    could match rather than to all runtimes.
    """
    possible = snapshot.match_index.get((model.model_format.name, model.architecture, model.quantization), ())
    evaluations = [
        evaluate(snapshot, rt, rt.own, model, request)
        for rt in possible
        if (rt.is_cluster or rt.namespace == namespace) and _may_be_candidate(rt.own, model, request)
    ]
    return rank([e for e in evaluations if e.verdict is Verdict.CANDIDATE], model)


def _may_be_candidate(spec: d.Compiled, model: d.Model, request: d.Request | None) -> bool:
    """A cheap pre-check without any message text: disabled, accelerator class, deployment mode,
    a strictly matching entry, and an ``autoSelect: true`` entry."""
    if spec.disabled or not spec.any_auto_select:
        return False
    for check in (check_accelerator_class, check_deployment_mode):
        if check(spec, _NO_FIT, request):
            return False
    return any(entry_matches(entry, model) for entry in spec.entries)


def named_error(runtime: d.Runtime, failures: tuple[Failure, ...], model: d.Model) -> str:
    """The ValidateRuntime error for a named runtime's first failure: the model name is empty
    for the accelerator-class and deployment-mode checks, the format name otherwise."""
    primary = failures[0]
    model_name = "" if primary.check in (Check.ACCELERATOR_CLASS, Check.DEPLOYMENT_MODE) else model.model_format.name
    return messages.runtime_does_not_support(runtime.name, model_name, primary.message)
