"""The selection engine: rank the candidates, explain the rest.

Pure Python, no gRPC. Input: an immutable ``Snapshot``, a compiled ``Model`` and ``Request``.
``evaluate`` runs one runtime through ``checks.CHECKS`` in the documented order and keeps all
its failures (the first is primary); runtimes that pass every check are candidates when
auto-selection can choose them (an ``autoSelect: true`` entry and a score above 0). Candidates
are ranked as runtime-selection-scoring.md says: ServingRuntimes before ClusterServingRuntimes,
then higher score, then (for a model with a size) smaller size distance, then name.

``auto_select`` is the one evaluation path every RPC uses: it gives the same ranking, primary
reasons and texts as evaluating every runtime (``exhaustive_auto_select``, the reference the
property tests compare it with), at the cost of the runtimes that can match.
"""

from __future__ import annotations

import enum
import functools
import math
import re
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any, overload

from ome_selector.cache.snapshot import RuntimeGroup, Snapshot, mask_from_positions
from ome_selector.domain import objects as d
from ome_selector.domain.sizes import distance, distance_order
from ome_selector.engine import memo as caches
from ome_selector.rules.accelerator_class import check_accelerator_class
from ome_selector.rules.auto_select import auto_select_failure
from ome_selector.rules.checks import CHECKS
from ome_selector.rules.deployment_mode import check_deployment_mode
from ome_selector.rules.model_format import fit_model, format_match
from ome_selector.rules.results import Check, Failure, ModelFit
from ome_selector.rules.scoring import Weights, entry_weights, weighted
from ome_selector.texts import messages

_NO_FIT = ModelFit(None, 0, -1, None, None, None, None)  # for checks that do not read the fit


class Verdict(enum.Enum):
    """A runtime's verdict; the same names as the proto enum ``ome.selector.v1.Verdict``."""

    CANDIDATE = enum.auto()
    EXCLUDED = enum.auto()
    COMPATIBLE_NOT_AUTO_SELECTABLE = enum.auto()


class TieBreak(enum.Enum):
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


@dataclass(frozen=True, slots=True)
class _FitBase:
    """What a model's fit against a spec holds apart from the priorities, shared by every spec with
    the same ``fit_id``: the first strictly matching entry's position (-1: none), the check
    failures, the size range's bounds, and (position, weights) of each entry that can score."""

    match: int
    format_failure: Failure | None
    size_failure: Failure | None
    distance_low: float | None
    distance_high: float | None
    scoring: tuple[tuple[int, Weights], ...]
    # Every weight below 2**31 in size: with an int32 priority no sum or product leaves int64,
    # so the score needs no wrapping (rules.scoring.weighted).
    small: bool

    def scored(self, spec: d.Compiled) -> tuple[int, int]:
        """(score, index of the first entry with it) against ``spec`` (with this ``fit_id``), from
        its own priorities: (0, -1) when no entry scores above 0."""
        entries = spec.entries
        best, best_index = 0, -1
        small = self.small
        for position, weights in self.scoring:
            entry = entries[position]
            if small:
                fmt, fw = weights
                score = ((fmt or 0) + (fw or 0)) * entry.effective_priority
            else:
                score = weighted(weights, entry.effective_priority)
            if score > best:
                best, best_index = score, entry.index
        return best, best_index

    def score(self, spec: d.Compiled) -> int:
        """The score against ``spec``."""
        return self.scored(spec)[0]

    def fit_for(self, spec: d.Compiled) -> ModelFit:
        """The fit against ``spec`` (with this ``fit_id``): the score from its own priorities."""
        entries = spec.entries
        best, best_index = self.scored(spec)
        return ModelFit(
            entries[self.match] if self.match >= 0 else None,
            best,
            best_index,
            self.format_failure,
            self.size_failure,
            self.distance_low,
            self.distance_high,
        )


def _fit_base(spec: d.Compiled, model: d.Model) -> _FitBase:
    whole = fit_model(spec, model)
    scoring = tuple(
        (position, weights)
        for position, entry in enumerate(() if model.sharded else spec.entries)  # Sharded scores 0 (fit_model)
        if entry.auto_select is not False and (weights := entry_weights(entry, model)) is not None
    )
    return _FitBase(
        -1 if whole.match is None else spec.entries.index(whole.match),
        whole.format_failure,
        whole.size_failure,
        whole.distance_low,
        whole.distance_high,
        scoring,
        all(abs(w) < 2**31 for _, pair in scoring for w in pair if w is not None),
    )


def _base(spec: d.Compiled, model: d.Model) -> _FitBase:
    """The model's ``_FitBase`` for ``spec.fit_id``, from ``caches.FIT_BASES`` (made afresh for a
    spec without one)."""
    if not spec.fit_id:
        return _fit_base(spec, model)
    table = caches.FIT_BASES.table(model.cache_key)
    base = table.get(spec.fit_id)
    if base is None:
        base = caches.FIT_BASES.add(model.cache_key, table, spec.fit_id, _fit_base(spec, model))
    return base  # type: ignore[return-value]


def fit(spec: d.Compiled, model: d.Model) -> ModelFit:
    """The model's fit against ``spec`` (``rules.model_format.fit_model``): all but the score from
    ``caches.FIT_BASES``, shared by specs with the same ``fit_id`` (so runtimes that differ only in
    priorities share the work); a spec without one (``fit_id`` 0) is fitted whole."""
    return _base(spec, model).fit_for(spec)


def evaluate(runtime: d.Runtime, spec: d.Compiled, model: d.Model, request: d.Request | None) -> Evaluation:
    """Run every check on ``spec`` (the runtime's own or merged spec) and decide the verdict: the
    exhaustive evaluation of one runtime (troubleshoot-runtime-selection.md, Step 2)."""
    model_fit = fit(spec, model)
    failures = tuple(f for check in CHECKS for f in check(spec, model_fit, request))
    size = model.size
    dist = distance(size, model_fit.distance_low, model_fit.distance_high) if size is not None else None
    if failures:
        return Evaluation(runtime, spec, model_fit, failures, Verdict.EXCLUDED, dist)
    skipped = auto_select_failure(spec, model_fit, model)
    if skipped is not None:
        return Evaluation(runtime, spec, model_fit, (skipped,), Verdict.COMPATIBLE_NOT_AUTO_SELECTABLE, dist)
    return Evaluation(runtime, spec, model_fit, (), Verdict.CANDIDATE, dist)


def _evaluate_past_masks(runtime: d.Runtime, model: d.Model) -> Evaluation:
    """``evaluate`` of a runtime the group's masks passed (disabled, accelerator class, deployment
    mode) and whose entries match the model: only the model-size check can still fail."""
    spec = runtime.own
    model_fit = fit(spec, model)
    size = model.size
    dist = distance(size, model_fit.distance_low, model_fit.distance_high) if size is not None else None
    if model_fit.size_failure is not None:
        return Evaluation(runtime, spec, model_fit, (model_fit.size_failure,), Verdict.EXCLUDED, dist)
    skipped = auto_select_failure(spec, model_fit, model)
    if skipped is not None:
        return Evaluation(runtime, spec, model_fit, (skipped,), Verdict.COMPATIBLE_NOT_AUTO_SELECTABLE, dist)
    return Evaluation(runtime, spec, model_fit, (), Verdict.CANDIDATE, dist)


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
        for i in range(len(rows), min(stop, len(ordered))):
            rows.append(Ranked(ordered[i], i + 1, _tie_break(ordered[i - 1] if i else None, ordered[i])))

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
    return _total({_distance(e) for e in group})


def _total(distances: set[float]) -> bool:
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


class _Picked(Sequence[Evaluation]):
    """Evaluations read through ``(group result, position)`` references, made when read."""

    __slots__ = ("_refs",)

    def __init__(self, refs: list[tuple[Evaluated, int]]) -> None:
        self._refs = refs

    def __len__(self) -> int:
        return len(self._refs)

    def __getitem__(self, index):  # type: ignore[no-untyped-def]
        if isinstance(index, slice):
            return [evaluated[i] for evaluated, i in self._refs[index]]
        evaluated, i = self._refs[index]
        return evaluated[i]


def _rank_candidates(results: tuple[GroupResult, GroupResult]) -> RankedCandidates:
    """``rank`` of the candidates of ``results`` (ServingRuntimes, ClusterServingRuntimes) by
    their keys, with no evaluation made; when the distances do not make the order total, the
    candidates are evaluated and ranked by ``rank``."""
    ordered: list[tuple[Evaluated, int]] = []
    for result in results:
        if not _total({key[1] for key in result.keys}):
            return rank([r.evaluated[key[3]] for r in results for key in r.keys])
        ordered += [(result.evaluated, key[3]) for key in sorted(result.keys)]
    return RankedCandidates(_Picked(ordered))


def rank(candidates: list[Evaluation]) -> RankedCandidates:
    """ServingRuntimes first whatever their scores, then ClusterServingRuntimes; within each,
    higher score, smaller size distance (model with a size; sub-1.0 differences tie), name
    (ome-selection-facts.md 3.14): the candidates in name order, then a stable sort on score
    and distance (a key sort when the distances make the comparison a total order)."""
    by_name = sorted(candidates, key=_NAME)
    ordered = _sorted([e for e in by_name if not e.runtime.is_cluster])
    ordered += _sorted([e for e in by_name if e.runtime.is_cluster])
    return RankedCandidates(ordered)


# ---- auto-selection: the fast path ----------------------------------------------------------
#
# Each runtime group (snapshot.RuntimeGroup) answers the request-side checks with bit masks: the
# runtimes a check rejects first are found with integer operations, counted, and given a reason
# text only when an answer shows it. Only the runtimes that can match the model strictly (an
# entry with its format name, architecture and quantization) are evaluated one by one.

_DISABLED_FAILURE = Failure(Check.DISABLED, messages.RUNTIME_DISABLED, runtime_value="true", requested_value="false")
# Primary-reason codes of a position (bytes of GroupResult.codes).
_DISABLED, _CLASS, _MODE, _FORMAT, _EVALUATED = 1, 2, 3, 4, 5
_SPREAD = tuple(bytes((b >> k) & 1 for k in range(8)) for b in range(256))


_SET_BYTE = re.compile(b"[^\x00]")


def set_positions(mask: int) -> Iterator[int]:
    """The set bits of ``mask``, lowest first, found lazily: zero bytes are skipped in C, so the
    cost follows the bits set, not the group's size."""
    data = mask.to_bytes(-(-mask.bit_length() // 8), "little")
    for found in _SET_BYTE.finditer(data):
        base, byte = found.start() * 8, data[found.start()]
        for k in range(8):
            if byte >> k & 1:
                yield base + k


def _selector(mask: int, size: int) -> bytes:
    """Byte i is 1 where bit i of ``mask`` is set: an ``itertools.compress`` selector."""
    whole_bytes = -(-size // 8)  # size / 8 rounded up
    return b"".join(map(_SPREAD.__getitem__, mask.to_bytes(whole_bytes, "little")))[:size]


def format_failure(
    spec: d.Compiled, model: d.Model, table: MutableMapping[object, Any] | None = None
) -> Failure | None:
    """The model-format check's failure of ``model`` against ``spec``'s entries, shared by every
    spec with the same ``format_id`` (``caches.FORMAT_FAILURES``; ``table`` is the model's table
    when the caller holds it, so that what it reads next is what was stored)."""
    if table is None:
        table = caches.FORMAT_FAILURES.table(model.cache_key)
    found = table.get(spec.format_id, table)
    if found is not table:
        return found  # type: ignore[return-value]
    return caches.FORMAT_FAILURES.add(model.cache_key, table, spec.format_id, format_match(spec, model)[1])  # type: ignore[return-value]


class Evaluated(Mapping[int, Evaluation]):
    """The exhaustive evaluation of the runtimes a group's masks and the model-format check
    passed, by position (fetch order), each made when first read: a request that shows only a
    few candidates never builds the others."""

    __slots__ = ("_order", "_model", "_positions", "_made")

    def __init__(self, order: tuple[d.Runtime, ...], model: d.Model, positions: list[int]) -> None:
        self._order = order
        self._model = model
        self._positions = positions
        self._made: dict[int, Evaluation] = {}

    def __getitem__(self, position: int) -> Evaluation:
        found = self._made.get(position)
        if found is None:
            if position not in self._positions:
                raise KeyError(position)
            found = self._made[position] = _evaluate_past_masks(self._order[position], self._model)
        return found

    def __iter__(self) -> Iterator[int]:
        return iter(self._positions)

    def __len__(self) -> int:
        return len(self._positions)

    def __contains__(self, position: object) -> bool:
        return position in self._made or position in self._positions


@dataclass(frozen=True, slots=True)
class GroupResult:
    """One group's runtimes split by primary reason: bit masks for the runtimes rejected by the
    disabled, accelerator-class and deployment-mode checks and by the model-format check without
    a possible entry; ``evaluated`` holds the exhaustive evaluation of every other runtime, by
    position, in fetch order. ``keys`` are the candidates among them as (-score, size distance
    or 0 without a model size, name, position), in fetch order, and
    ``skipped`` counts the others by primary reason (model size, or why auto-selection skips a
    compatible runtime): both known without an evaluation."""

    group: RuntimeGroup
    disabled: int
    accelerator_class: int
    deployment_mode: int
    model_format: int
    evaluated: Evaluated
    keys: list[tuple[int, float, str, int]]
    skipped: dict[Check, int]

    def codes(self) -> bytes:
        """The primary-reason code of each position, in fetch order."""
        size = len(self.group)
        total = 0
        for code, mask in (
            (_DISABLED, self.disabled),
            (_CLASS, self.accelerator_class),
            (_MODE, self.deployment_mode),
            (_FORMAT, self.model_format),
        ):
            if mask:
                total |= int.from_bytes(_selector(mask, size), "little") * code
        codes = bytearray(total.to_bytes(size, "little"))
        for i in self.evaluated:
            codes[i] = _EVALUATED
        return bytes(codes)


def _group_result(group: RuntimeGroup, model: d.Model, request: d.Request | None) -> GroupResult:
    """Apply the checks in the documented order (troubleshoot-runtime-selection.md, Step 2) to a
    group: each runtime's primary reason is the first check it fails."""
    rest = group.all
    disabled = rest & group.mask(("disabled",))
    rest &= ~disabled
    accelerator = mode = 0
    if request is not None:
        if request.required_classes:  # runtime-accelerator-class-matching.md, "The matching rule"
            listing = group.mask(("classes",))
            for name in request.required_classes:
                listing &= group.mask(("class", name))
            accelerator = rest & ~listing
            rest &= listing
        mismatch = 0  # runtime-deployment-mode-matching.md, "The matching rule"
        if request.engine_mode is not None:
            mismatch |= group.mask(("engine*",)) & ~group.mask(("engine", request.engine_mode))
        if request.has_decoder and request.decoder_mode is not None:
            mismatch |= group.mask(("decoder*",)) & ~group.mask(("decoder", request.decoder_mode))
        mode = rest & mismatch
        rest &= ~mode
    possible = group.mask(("format", (model.model_format.name, model.architecture, model.quantization)))
    model_format = rest & ~possible
    rest &= possible
    passed: list[int] = []
    keys: list[tuple[int, float, str, int]] = []
    skipped = dict.fromkeys((Check.MODEL_SIZE, Check.AUTO_SELECT, Check.SCORE), 0)
    order = group.order
    if rest:
        # The model-format check depends only on the entries (format_id): runtimes with entries
        # already known not to match are rejected with one lookup. The others pass it; only the
        # model-size check (the fit's, shared by ``fit_id``) and the score are left.
        size, format_ids = len(group), group.format_ids()
        texts = caches.FORMAT_FAILURES.table(model.cache_key)
        rejected = []
        for i in set_positions(rest):
            rt = order[i]
            failure = texts.get(format_ids[i], texts)
            if failure is texts:
                failure = format_failure(rt.own, model, texts)
            if failure is not None:
                rejected.append(i)
                continue
            passed.append(i)
            spec = rt.own
            base = _base(spec, model)
            if base.size_failure is not None:
                skipped[Check.MODEL_SIZE] += 1
                continue
            score = base.score(spec) if spec.any_auto_select else 0
            if score > 0:
                dist = 0.0 if model.size is None else distance(model.size, base.distance_low, base.distance_high)
                keys.append((-score, dist, rt.name, i))
            else:  # the reason of rules.auto_select.auto_select_failure
                match = spec.entries[base.match] if spec.any_auto_select and base.match >= 0 else None
                skipped[Check.SCORE if match is not None and match.auto_select is True else Check.AUTO_SELECT] += 1
        if rejected:
            model_format |= mask_from_positions(rejected, size)
    return GroupResult(group, disabled, accelerator, mode, model_format, Evaluated(order, model, passed), keys, skipped)


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A runtime in scope that is not a candidate, with its primary reason."""

    runtime: d.Runtime
    verdict: Verdict
    primary: Failure


class AutoSelection:
    """The outcome of auto-selection for one model and request over the ServingRuntimes of a
    namespace and every ClusterServingRuntime (runtime-selection-scoring.md).

    ``ranked``: the candidates, ranked. ``namespaced`` / ``cluster``: runtimes in scope per kind.
    ``counts``: runtimes per primary reason (``Check``), candidates left out. ``no_runtime_message``
    (OME's text within ``max_message_bytes``, capped past it; None when there is a candidate) and
    ``exclusions()`` (every non-candidate with its primary reason, fetch order) are built only
    when asked for. ``evaluations()`` is the exhaustive evaluation of every runtime in scope
    (ExplainRuntimes).
    """

    def __init__(
        self,
        model: d.Model,
        request: d.Request | None,
        namespace: str,
        results: tuple[GroupResult, GroupResult],
        max_message_bytes: int = 0,
    ) -> None:
        self.max_message_bytes = max_message_bytes
        self.model = model
        self.request = request
        self.namespace = namespace
        self.results = results
        self.namespaced = len(results[0].group)
        self.cluster = len(results[1].group)
        self.ranked = _rank_candidates(results)
        counts = dict.fromkeys(Check, 0)
        for r in results:
            counts[Check.DISABLED] += r.disabled.bit_count()
            counts[Check.ACCELERATOR_CLASS] += r.accelerator_class.bit_count()
            counts[Check.DEPLOYMENT_MODE] += r.deployment_mode.bit_count()
            counts[Check.MODEL_FORMAT] += r.model_format.bit_count()
            for check, count in r.skipped.items():
                counts[check] += count
        self.counts = counts
        self._message: str | None = None

    @property
    def selected(self) -> Evaluation | None:
        """The first-ranked candidate, or None."""
        return self.ranked[0].evaluation if self.ranked else None

    @property
    def total(self) -> int:
        """Runtimes in scope."""
        return self.namespaced + self.cluster

    @property
    def no_runtime_message(self) -> str | None:
        """OME's ``no runtime found`` message (troubleshoot-runtime-selection.md, Step 2) when no
        runtime is a candidate, else None: every excluded runtime with its primary reason, in
        fetch order (compatible runtimes that auto-selection skips are not listed), when that fits
        ``max_message_bytes`` (or it is 0); else capped (``no_runtime.message``)."""
        if self.ranked:
            return None
        if self._message is None:
            from ome_selector.engine import no_runtime  # it reads this module's group results

            self._message = no_runtime.message(self)
        return self._message

    def exclusions(self) -> list[Exclusion]:
        """Every runtime in scope that is not a candidate, with its primary reason, in fetch order
        (SelectRuntime's FULL view)."""
        return [Exclusion(rt, verdict, failure) for rt, verdict, failure in self._primaries()]

    def _primaries(self) -> Iterator[tuple[d.Runtime, Verdict, Failure]]:
        """(runtime, verdict, primary failure) of every non-candidate, in fetch order."""
        model, request = self.model, self.request
        for result in self.results:
            order, evaluated = result.group.order, result.evaluated
            for i, code in enumerate(result.codes()):
                rt = order[i]
                if code == _EVALUATED:
                    e = evaluated[i]
                    if e.verdict is not Verdict.CANDIDATE:
                        yield rt, e.verdict, e.failures[0]
                elif code == _DISABLED:
                    yield rt, Verdict.EXCLUDED, _DISABLED_FAILURE
                elif code == _CLASS:
                    yield rt, Verdict.EXCLUDED, check_accelerator_class(rt.own, _NO_FIT, request)[0]
                elif code == _MODE:
                    yield rt, Verdict.EXCLUDED, check_deployment_mode(rt.own, _NO_FIT, request)[0]
                else:
                    failure = format_failure(rt.own, model)
                    assert failure is not None
                    yield rt, Verdict.EXCLUDED, failure

    def evaluations(self) -> tuple[Evaluation, ...]:
        """The exhaustive evaluation of every runtime in scope, in fetch order."""
        out = []
        for result in self.results:
            for i, rt in enumerate(result.group.order):
                found = result.evaluated.get(i)
                out.append(found if found is not None else evaluate(rt, rt.own, self.model, self.request))
        return tuple(out)


def auto_select(snapshot: Snapshot, model: d.Model, request: d.Request | None, namespace: str) -> AutoSelection:
    """Auto-selection over the ServingRuntimes of ``namespace`` and all ClusterServingRuntimes,
    each matched on its own spec, never what it inherits (runtime-selection-scoring.md, "Steer
    the choice"). Costs the runtimes that can match the model plus a few integer operations per
    check; texts for the others are built only when an answer shows them."""
    namespaced, cluster = snapshot.runtimes_in_scope(namespace)
    return AutoSelection(
        model,
        request,
        namespace,
        (_group_result(namespaced, model, request), _group_result(cluster, model, request)),
        snapshot.max_message_bytes,
    )


def exhaustive_auto_select(
    snapshot: Snapshot, model: d.Model, request: d.Request | None, namespace: str
) -> tuple[tuple[Evaluation, ...], RankedCandidates, str | None]:
    """The reference the fast path must equal (tests): every runtime in scope evaluated one by
    one. Returns (evaluations in fetch order, ranked candidates, no-runtime message or None)."""
    namespaced, cluster = snapshot.runtimes_in_scope(namespace)
    evaluations = tuple(evaluate(rt, rt.own, model, request) for rt in (*namespaced.order, *cluster.order))
    ranked = rank([e for e in evaluations if e.verdict is Verdict.CANDIDATE])
    message = None
    if not ranked:
        excluded = [
            messages.excluded_runtime(e.runtime.name, e.failures[0].message)
            for e in evaluations
            if e.verdict is Verdict.EXCLUDED
        ]
        message = messages.no_runtime_found(model.model_format.name, namespace, len(namespaced), len(cluster), excluded)
    return evaluations, ranked, message


def named_error(runtime: d.Runtime, failures: tuple[Failure, ...], model: d.Model) -> str:
    """The ValidateRuntime error for a named runtime's first failure: the model name is empty
    for the accelerator-class and deployment-mode checks, the format name otherwise."""
    primary = failures[0]
    model_name = "" if primary.check in (Check.ACCELERATOR_CLASS, Check.DEPLOYMENT_MODE) else model.model_format.name
    return messages.runtime_does_not_support(runtime.name, model_name, primary.message)
