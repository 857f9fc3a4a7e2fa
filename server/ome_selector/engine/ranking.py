"""Ranking the candidates (runtime-selection-scoring.md, "Tie-breaking"; ome-selection-facts.md
3.14): an ``Evaluation`` per runtime, its ``Verdict``, and the ranked rows with the tie-break
that placed each one. ServingRuntimes come before ClusterServingRuntimes; within each, the
higher score, then (for a model with a size) the smaller size distance, then the name."""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, overload

from ome_selector.domain import objects as d
from ome_selector.domain.enums import IdentityEnum
from ome_selector.domain.sizes import distance_order
from ome_selector.rules.results import Failure, ModelFit


class Verdict(IdentityEnum):
    """A runtime's verdict; the same names as the proto enum ``ome.selector.v1.Verdict``."""

    CANDIDATE = enum.auto()
    EXCLUDED = enum.auto()
    COMPATIBLE_NOT_AUTO_SELECTABLE = enum.auto()


class TieBreak(IdentityEnum):
    """What placed a candidate after the one above it (proto ``ome.selector.v1.TieBreak``)."""

    UNSPECIFIED = enum.auto()
    SCOPE = enum.auto()
    SCORE = enum.auto()
    SIZE_DISTANCE = enum.auto()
    NAME = enum.auto()


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


def _distance(e: Evaluation) -> float:
    """The size distance the ranking compares: 0 when the model has no size (then no candidate
    has a distance; ome-selection-facts.md 3.14)."""
    return e.distance if e.distance is not None else 0.0


def _compare(a: Evaluation, b: Evaluation) -> int:
    """Negative when ``a`` ranks before ``b``: the higher score, then the smaller size distance
    (sub-1.0 differences tie); 0 on a tie, which ``rank`` leaves in name order."""
    return b.fit.score - a.fit.score or distance_order(_distance(a), _distance(b))


def _tie_break(previous: Evaluation | None, current: Evaluation) -> TieBreak:
    if previous is None:
        return TieBreak.UNSPECIFIED
    if previous.runtime.is_cluster != current.runtime.is_cluster:
        return TieBreak.SCOPE
    if previous.fit.score != current.fit.score:
        return TieBreak.SCORE
    if distance_order(_distance(current), _distance(previous)):
        return TieBreak.SIZE_DISTANCE
    return TieBreak.NAME


def tie_break(above: Evaluation, below: Evaluation) -> TieBreak:
    """The ranking step that puts candidate ``above`` before ``below`` (runtime-selection-
    scoring.md, "Tie-breaking"): what ``rank`` records for ``below`` placed right after ``above``
    (``TieBreak.UNSPECIFIED`` never: it is only the first candidate's)."""
    return _tie_break(above, below)


_KEY = functools.cmp_to_key(_compare)
_NAME = attrgetter("runtime.name")


class RankedCandidates(Sequence[Ranked]):
    """The candidates in rank order, as ``Ranked`` rows made when read: ``len`` and the first
    rows cost nothing per candidate left unread (BASIC shows only the first few)."""

    __slots__ = ("_ordered", "_rows")

    def __init__(self, ordered: Sequence[Evaluation]) -> None:
        self._ordered = ordered
        self._rows: list[Ranked] = []

    def __len__(self) -> int:
        return len(self._ordered)

    def _upto(self, stop: int) -> None:
        rows, ordered = self._rows, self._ordered
        previous = rows[-1].evaluation if rows else None
        for i in range(len(rows), min(stop, len(ordered))):
            current = ordered[i]  # each read once: a Picked one is looked up
            rows.append(Ranked(current, i + 1, _tie_break(previous, current)))
            previous = current

    @overload
    def __getitem__(self, index: int) -> Ranked: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Ranked, ...]: ...

    def __getitem__(self, index: int | slice) -> Ranked | tuple[Ranked, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self._ordered))
            self._upto(stop)
            return tuple(self._rows[start:stop:step])
        position = index + len(self._ordered) if index < 0 else index
        if not 0 <= position < len(self._ordered):
            raise IndexError("candidate index out of range")
        self._upto(position + 1)
        return self._rows[position]

    def __iter__(self) -> Iterator[Ranked]:
        for i in range(len(self._ordered)):
            yield self[i]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RankedCandidates):
            return tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"RankedCandidates({tuple(self)!r})"


def _keyed(group: list[Evaluation]) -> bool:
    """True when ``_compare`` on ``group`` is a total order, so a key sort gives what its
    comparator sort gives."""
    return total_order({_distance(e) for e in group})


def total_order(distances: set[float]) -> bool:
    """True when ``distance_order`` is a total order on ``distances``: no NaN, and distinct finite
    distances at least 1.0 apart."""
    if any(math.isnan(x) for x in distances):
        return False
    finite = sorted(x for x in distances if not math.isinf(x))
    return all(b - a >= 1.0 for a, b in zip(finite, finite[1:]))


def _sorted(group: list[Evaluation]) -> list[Evaluation]:
    """``group`` (in name order) by higher score, then smaller size distance, ties in name order."""
    if _keyed(group):
        return sorted(group, key=lambda e: (-e.fit.score, _distance(e)))
    return sorted(group, key=_KEY)


class Picked(Sequence[Evaluation]):
    """Evaluations read through runs of ``(evaluations by position, candidate keys)``: item ``n``
    is the evaluation at the position (``key[3]``) of the ``n``-th key, counting through the runs
    in order; each made when read (``evaluation.Evaluated``). The keys are held as given (a sorted
    list per group), so thousands of candidates cost no per-candidate tuple."""

    __slots__ = ("_runs", "_len")

    def __init__(self, runs: Sequence[tuple[Mapping[int, Evaluation], Sequence[tuple[Any, ...]]]]) -> None:
        self._runs = runs
        self._len = sum(len(keys) for _, keys in runs)

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index):  # type: ignore[no-untyped-def]  # an int: RankedCandidates reads one at a time
        at = index + self._len if index < 0 else index
        for evaluated, keys in self._runs:
            if 0 <= at < len(keys):
                return evaluated[keys[at][3]]
            at -= len(keys)
        raise IndexError(index)


def rank(candidates: list[Evaluation]) -> RankedCandidates:
    """ServingRuntimes first whatever their scores, then ClusterServingRuntimes; within each,
    higher score, smaller size distance (model with a size; sub-1.0 differences tie), name
    (ome-selection-facts.md 3.14): the candidates in name order, then a stable sort on score
    and distance (a key sort when the distances make the comparison a total order)."""
    return RankedCandidates(rank_order(candidates))


def rank_order(candidates: list[Evaluation]) -> list[Evaluation]:
    """The candidates in ``rank``'s order."""
    by_name = sorted(candidates, key=_NAME)
    ordered = _sorted([e for e in by_name if not e.runtime.is_cluster])
    ordered += _sorted([e for e in by_name if e.runtime.is_cluster])
    return ordered
