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

import functools
from collections.abc import Callable, Iterator, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ome_selector.cache.groups import Edits, RuntimeGroup, SharedFits, mask_from_positions
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.domain.sizes import distance
from ome_selector.engine import memo as caches
from ome_selector.engine.bits import selector, set_positions
from ome_selector.engine.fits import FitBase, fit, fit_base, format_failure, format_passes
from ome_selector.engine.moves import Moves
from ome_selector.engine.ranking import (  # the types every answer reads, re-exported
    Evaluation,
    Picked,
    Ranked,
    RankedCandidates,
    TieBreak,
    Verdict,
    rank,
    rank_order,
    tie_break,
    total_order,
)
from ome_selector.rules.accelerator_class import check_accelerator_class
from ome_selector.rules.auto_select import auto_select_failure
from ome_selector.rules.checks import CHECKS
from ome_selector.rules.deployment_mode import check_deployment_mode
from ome_selector.rules.results import Check, Failure, ModelFit
from ome_selector.texts import messages

__all__ = [
    "AutoSelection",
    "Evaluated",
    "Evaluation",
    "Exclusion",
    "GroupResult",
    "Ranked",
    "RankedCandidates",
    "TieBreak",
    "Verdict",
    "auto_select",
    "evaluate",
    "exhaustive_auto_select",
    "fit",
    "format_failure",
    "named_error",
    "rank",
    "tie_break",
]

V = TypeVar("V")

_NO_FIT = ModelFit(None, 0, -1, None, None, None, None)  # for checks that do not read the fit


def evaluate(runtime: d.Runtime, spec: d.Compiled, model: d.Model, request: d.Request | None) -> Evaluation:
    """Run every check on ``spec`` (the runtime's own or merged spec) and decide the verdict: the
    exhaustive evaluation of one runtime (troubleshoot-runtime-selection.md, Step 2)."""
    model_fit = fit(spec, model)
    failures = tuple(f for check in CHECKS for f in check(spec, model_fit, request))
    return _verdict(runtime, spec, model_fit, failures, model)


def _evaluate_past_masks(runtime: d.Runtime, model: d.Model) -> Evaluation:
    """``evaluate`` of a runtime the group's masks passed (disabled, accelerator class, deployment
    mode) and whose entries match the model: only the model-size check can still fail. It reads
    the runtime and the model only, so it is kept in ``caches.EVALUATIONS``."""
    table = caches.EVALUATIONS.table(model.cache_key)
    found = table.get(id(runtime))
    if found is not None and found[0] is runtime:  # type: ignore[index]
        return found[1]  # type: ignore[index,no-any-return]
    made = _evaluate_fitting(runtime, model)
    caches.EVALUATIONS.add(model.cache_key, table, id(runtime), (runtime, made))
    return made


def _evaluate_fitting(runtime: d.Runtime, model: d.Model) -> Evaluation:
    spec = runtime.own
    model_fit = fit(spec, model)
    failures = () if model_fit.size_failure is None else (model_fit.size_failure,)
    return _verdict(runtime, spec, model_fit, failures, model)


def _verdict(
    runtime: d.Runtime, spec: d.Compiled, model_fit: ModelFit, failures: tuple[Failure, ...], model: d.Model
) -> Evaluation:
    """EXCLUDED with ``failures``; else COMPATIBLE_NOT_AUTO_SELECTABLE when auto-selection skips
    the runtime (``rules.auto_select``); else CANDIDATE. The size distance when the model has a size."""
    size = model.size
    dist = distance(size, model_fit.distance_low, model_fit.distance_high) if size is not None else None
    if failures:
        return Evaluation(runtime, spec, model_fit, failures, Verdict.EXCLUDED, dist)
    skipped = auto_select_failure(spec, model_fit, model)
    if skipped is not None:
        return Evaluation(runtime, spec, model_fit, (skipped,), Verdict.COMPATIBLE_NOT_AUTO_SELECTABLE, dist)
    return Evaluation(runtime, spec, model_fit, (), Verdict.CANDIDATE, dist)


def _rank_candidates(results: tuple[GroupResult, GroupResult]) -> RankedCandidates:
    """``rank`` of the candidates of ``results`` (ServingRuntimes, ClusterServingRuntimes) by
    their keys, with no evaluation made; when the distances do not make the order total, the
    candidates are evaluated and ranked by ``rank``. The order is kept on the second result for
    the first (``GroupResult.memo``): requests that share both results share it."""
    namespaced, cluster = results
    partner = namespaced if namespaced.keys else None  # without candidates it changes nothing
    key = id(partner) if partner is not None else 0
    ordered = cluster.kept(key, partner)
    if ordered is None:
        ordered = cluster.keep(key, partner, _candidate_order(results))
    return RankedCandidates(ordered)


def _candidate_order(results: tuple[GroupResult, GroupResult]) -> Sequence[Evaluation]:
    runs: list[tuple[Evaluated, list[tuple[int, float, str, int]]]] = []
    for result in results:
        if not total_order({key[1] for key in result.keys}):
            return tuple(rank_order([r.evaluated[key[3]] for r in results for key in r.keys]))
        if result.keys:
            runs.append((result.evaluated, sorted(result.keys)))
    return Picked(runs)


# ---- auto-selection: the fast path ----------------------------------------------------------
#
# Each runtime group (cache.groups.RuntimeGroup) answers the request-side checks with bit masks: the
# runtimes a check rejects first are found with integer operations, counted, and given a reason
# text only when an answer shows it. Only the runtimes that can match the model strictly (an
# entry with its format name, architecture and quantization) are evaluated one by one.

_DISABLED_FAILURE = Failure(Check.DISABLED, messages.RUNTIME_DISABLED, runtime_value="true", requested_value="false")
# Primary-reason codes of a position (bytes of GroupResult.codes).
_DISABLED, _CLASS, _MODE, _FORMAT, _EVALUATED = 1, 2, 3, 4, 5


class Evaluated(Mapping[int, Evaluation]):
    """The exhaustive evaluation of the runtimes a group's masks and the model-format check
    passed, by position (fetch order: bit i of ``mask``), each made when first read: a request
    that shows only a few candidates never builds the others. ``made`` holds those made so far
    (given ones are kept: the same runtimes, model and positions)."""

    __slots__ = ("_order", "_model", "_mask", "_len", "made")

    def __init__(
        self, order: tuple[d.Runtime, ...], model: d.Model, mask: int, made: dict[int, Evaluation] | None = None
    ) -> None:
        self._order = order
        self._model = model
        self._mask = mask
        self._len = mask.bit_count()
        self.made: dict[int, Evaluation] = {} if made is None else made

    def _has(self, position: object) -> bool:
        return isinstance(position, int) and position >= 0 and bool(self._mask >> position & 1)

    def __getitem__(self, position: int) -> Evaluation:
        found = self.made.get(position)
        if found is None:
            if not self._has(position):
                raise KeyError(position)
            found = self.made[position] = _evaluate_past_masks(self._order[position], self._model)
        return found

    def __iter__(self) -> Iterator[int]:
        return set_positions(self._mask)

    def __len__(self) -> int:
        return self._len

    def __contains__(self, position: object) -> bool:
        return self._has(position)

    @property
    def model(self) -> d.Model:
        return self._model

    def replaced(self, order: tuple[d.Runtime, ...], replaced: set[int]) -> Evaluated:
        """The same positions over ``order`` (the group after in-place edits at ``replaced``,
        whose runtimes keep their standing), without the evaluations made of replaced runtimes."""
        made = self.made.copy()  # one C-level step: another thread may be adding to it
        for i in replaced.intersection(made):
            del made[i]
        return Evaluated(order, self._model, self._mask, made)


@dataclass(frozen=True, slots=True)
class GroupResult:
    """One group's runtimes split by primary reason: bit masks for the runtimes rejected by the
    disabled, accelerator-class and deployment-mode checks and by the model-format check without
    a possible entry; ``evaluated`` holds the exhaustive evaluation of every other runtime, by
    position, in fetch order. ``keys`` are the candidates among them as (-score, size distance
    or 0 without a model size, name, position), in no set order, and
    ``skipped`` counts the others by primary reason (model size, or why auto-selection skips a
    compatible runtime): both known without an evaluation. The last four masks split the
    runtimes past the masks that are not candidates: rejected by the model-format check on their
    entries (also in ``model_format``), model size, auto-selection skipping them for
    ``autoSelect`` or for the score (``_classify``)."""

    group: RuntimeGroup
    disabled: int
    accelerator_class: int
    deployment_mode: int
    model_format: int
    evaluated: Evaluated
    keys: list[tuple[int, float, str, int]]
    format_rejected: int
    size_failed: int
    not_auto: int
    not_scored: int
    # What requests sharing this result share (``keep``): {id(other result) or 0: (it or None,
    # candidate order)} (``_rank_candidates``), {("message", ...): (other result or None,
    # list)} (``no_runtime.message``) and {(ANSWER, ...): (None, serialized answer)}
    # (``rpc.selection.encode_select``).
    memo: dict[object, tuple[GroupResult | None, Any]] = field(default_factory=dict, compare=False, repr=False)
    # The request the result answers (its checked fields; ``carry_forward`` asks again with it).
    request: d.Request | None = field(default=None, compare=False, repr=False)

    @property
    def skipped(self) -> dict[Check, int]:
        """The runtimes past the masks that are not candidates, by primary reason, past the
        model-format check."""
        return {
            Check.MODEL_SIZE: self.size_failed.bit_count(),
            Check.AUTO_SELECT: self.not_auto.bit_count(),
            Check.SCORE: self.not_scored.bit_count(),
        }

    def kept(self, key: object, partner: GroupResult | None) -> Any:
        """What ``keep`` stored under ``key`` with ``partner`` (None: any partner), or None."""
        found = self.memo.get(key)
        if found is None or (partner is not None and found[0] is not partner):
            return None
        return found[1]

    def keep(self, key: object, partner: GroupResult | None, value: V) -> V:
        """Store ``value`` under ``key`` (which may hold ``id(partner)``: the entry holds the
        partner, so the id is not reused while it is kept); at most ORDERS_PER_RESULT entries."""
        if len(self.memo) >= ORDERS_PER_RESULT:
            self.memo.clear()
        self.memo[key] = (partner, value)
        return value

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
                total |= int.from_bytes(selector(mask, size), "little") * code
        codes = bytearray(total.to_bytes(size, "little"))
        for i in self.evaluated:
            codes[i] = _EVALUATED
        return bytes(codes)


# Group results kept per group (``RuntimeGroup.memo``), keyed by the model's content and the
# request's checked fields: the requests for one model and the same checks between two writes
# share one. Only groups of MEMO_MIN_RUNTIMES or more keep them (a smaller one costs a few
# microseconds to check again). At most RESULTS_PER_GROUP per group, and about
# MEMO_BYTES_PER_RUNTIME bytes per runtime of the group up to MEMO_BYTES (an estimate:
# ``_result_bytes``), so what is kept stays proportional to the cache; past either the group's
# are dropped. A result keeps the candidate orders of at most ORDERS_PER_RESULT other results
# (``_rank_candidates``) and messages (``no_runtime.message``), together.
MEMO_MIN_RUNTIMES = 32
RESULTS_PER_GROUP = 128
MEMO_BYTES = 8 << 20
MEMO_BYTES_PER_RUNTIME = 2 << 10
ORDERS_PER_RESULT = 16
_USED = "bytes"  # the memo's own entry: the estimated bytes of the results it holds


def group_result(group: RuntimeGroup, model: d.Model, request: d.Request | None) -> GroupResult:
    """``_group_result``, kept on ``group`` (an immutable group, so the result stays true while
    the group lives)."""
    if len(group.order) < MEMO_MIN_RUNTIMES:
        return _group_result(group, model, request)
    key = (model.cache_key, None if request is None else request.checks_key)
    memo = group.memo
    found = memo.get(key)
    if found is None:
        before, edits = _kept_before(group, key)
        if before is not None:
            found = _carried(before, group, edits, model, request)
        else:
            found = _group_result(group, model, request)
        size = _result_bytes(found)
        used = memo.get(_USED, 0) + size
        if used > min(MEMO_BYTES, MEMO_BYTES_PER_RUNTIME * len(group.order)) or len(memo) > RESULTS_PER_GROUP:
            memo.clear()
            used = size
        memo[key] = found
        memo[_USED] = used
    return found  # type: ignore[no-any-return]


# ``carry_forward`` carries at most this many results of a group onto the group a write made of it.
CARRIED_FORWARD = 128


def carry_forward(group: RuntimeGroup) -> int:
    """Carry onto ``group``, just made by a write from ``group.previous``, the results the earlier
    group keeps that hold an answer (``rpc.selection``: requests that were asked and answered
    whole): the first request after the write then finds them as an unchanged group's
    (``group_result``). At most ``CARRIED_FORWARD``. Returns how many were carried."""
    return sum(carrying_forward(group))


def carrying_forward(group: RuntimeGroup) -> Iterator[int]:
    """``carry_forward`` one result at a time: yields 1 after each result carried, so a caller
    can spread the work (``rpc.servicers`` carries on the event loop between calls). A result a
    request carried first is skipped; one never carried is carried by the request that asks."""
    if group.previous is None or len(group.order) < MEMO_MIN_RUNTIMES:
        return
    earlier, memo, carried = group.previous[0], group.memo, 0
    for key, result in list(earlier.memo.items()):
        if carried >= CARRIED_FORWARD:
            return
        if key == _USED or key in memo or not any(_kept_as(k, ANSWER) for k in tuple(result.memo)):
            continue
        group_result(group, result.evaluated.model, result.request)
        carried += 1
        yield 1


def _kept_before(group: RuntimeGroup, key: object) -> tuple[GroupResult | None, Edits]:
    """The result kept under ``key`` on the nearest earlier group (``RuntimeGroup.previous``)
    and the edits from that group to ``group``, in order; (None, ()) when none is kept."""
    edits: Edits = ()
    link = group.previous
    while link is not None:
        earlier, step = link
        edits = step + edits
        found = earlier.memo.get(key)
        if found is not None:
            return found, edits
        link = earlier.previous
    return None, ()


def _result_bytes(result: GroupResult) -> int:
    """About what ``result`` holds: its four masks, a candidate key and a passed position each,
    and its candidate order and evaluations when made (a share of the candidates)."""
    return 4 * (len(result.group) // 8) + 256 * len(result.keys) + 64 * len(result.evaluated) + 512


def _request_masks(group: RuntimeGroup, model: d.Model, request: d.Request | None) -> tuple[int, int, int, int, int]:
    """The checks the group's masks answer, in the documented order (troubleshoot-runtime-
    selection.md, Step 2): (disabled, accelerator class, deployment mode, model format without a
    possible entry, the rest), each runtime in the mask of the first check it fails."""
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
    possible = group.mask(_format_key(model))
    return disabled, accelerator, mode, rest & ~possible, rest & possible


def _format_key(model: d.Model) -> tuple[object, ...]:
    """The mask key of the runtimes with an entry that can match ``model`` strictly."""
    return ("format", (model.model_format.name, model.architecture, model.quantization))


# What ``_classify`` finds of a runtime past the masks: the index of its bit mask in
# ``_Past.masks``, or CANDIDATE.
_REJECTED, _SIZE, _NOT_AUTO, _NOT_SCORED, CANDIDATE = 0, 1, 2, 3, 4


class _Past:
    """The runtimes past the masks, by what ``_classify`` found: ``masks[code]`` for the four
    non-candidate codes, ``keys`` for the candidates; filled in place, then frozen in a
    ``GroupResult``. ``candidates``: the positions of ``keys[:counted]`` (the rest are counted
    from the keys by ``_result``)."""

    __slots__ = ("masks", "keys", "model", "texts", "bases", "format_ids", "order", "candidates", "counted")

    def __init__(self, group: RuntimeGroup, model: d.Model, masks: list[int], keys: list[tuple[int, float, str, int]]):
        self.masks, self.keys, self.model, self.order = masks, keys, model, group.order
        self.candidates, self.counted = 0, 0
        self.texts = caches.FORMAT_FAILURES.table(model.cache_key)
        self.bases = caches.FIT_BASES.table(model.cache_key)
        self.format_ids = group.format_ids()

    def classify(self, positions: Iterator[int] | list[int]) -> None:
        """Add each position (ascending, or any order) to its mask or to the keys."""
        found: list[list[int]] = [[], [], [], []]
        keys, order, format_ids, texts, bases, model = (
            self.keys,
            self.order,
            self.format_ids,
            self.texts,
            self.bases,
            self.model,
        )
        for i in positions:
            rt = order[i]
            code, key = _classify(rt, i, format_ids[i], model, texts, bases)
            if key is not None:
                keys.append(key)
            else:
                found[code].append(i)
        size = len(order)
        for code, positions_found in enumerate(found):
            if positions_found:
                self.masks[code] |= mask_from_positions(positions_found, size)

    def classify_shared(self, fits: SharedFits, key: tuple[object, ...], rest: int) -> int:
        """``classify`` of the positions of ``rest`` whose fit_id has a mask in ``fits`` (``key``:
        the model's format mask key, the one ``rest`` is within), a fit_id at a time: the format
        and size checks read one spec per fit_id, only the score is read per runtime; the
        format-rejected ones are what is left of them. Returns the positions left to classify."""
        masks, keys, order, model, texts = self.masks, self.keys, self.order, self.model, self.texts
        counted = len(keys) == self.counted  # the keys so far are in ``candidates``: keep it so
        passed = 0  # the positions past the model-format check
        rejected: set[int] = set()  # format_ids found to fail here (their texts are not built)
        for fit_id in fits.by_format.get(key, ()):
            spec = fits.specs[fit_id]
            failure = texts.get(spec.format_id, texts)
            if (failure is not None and failure is not texts) or spec.format_id in rejected:
                continue  # rejected (known without its positions)
            positions = rest & fits.masks[fit_id]
            if not positions:
                continue
            if failure is texts and not format_passes(spec, model, texts):
                rejected.add(spec.format_id)
                continue
            passed |= positions
            base: FitBase | None = self.bases.get(fit_id)  # type: ignore[assignment]
            if base is None:
                base = fit_base(spec, model)
            if base.size_failure is not None:
                masks[_SIZE] |= positions
                continue
            if not spec.any_auto_select:  # every entry's autoSelect is in the fit_id: score 0
                masks[_NOT_AUTO] |= positions
                continue
            unscored = _unscored(spec, base)
            dist = 0.0 if model.size is None else distance(model.size, base.distance_low, base.distance_high)
            whole = fits.masks[fit_id]
            found = _positions(fits, fit_id) if positions == whole else tuple(set_positions(positions))
            runtimes = [order[i] for i in found]
            zero = []
            for i, rt, score in zip(found, runtimes, base.scores([rt.own for rt in runtimes])):
                if score > 0:
                    keys.append((-score, dist, rt.name, i))
                else:
                    zero.append(i)
            if zero:
                unscored_positions = mask_from_positions(zero, len(order))
                masks[unscored] |= unscored_positions
                positions &= ~unscored_positions
            self.candidates |= positions
        if counted:
            self.counted = len(keys)
        # Every shared position of ``rest`` has a fit_id of ``by_format[key]``.
        masks[_REJECTED] |= rest & ~fits.unshared & ~passed
        return rest & fits.unshared


def _positions(fits: SharedFits, fit_id: int) -> tuple[int, ...]:
    """The set positions of ``fits.masks[fit_id]``, found once per ``SharedFits``."""
    found = fits.found.get(fit_id)
    if found is None:
        found = fits.found[fit_id] = tuple(set_positions(fits.masks[fit_id]))
    return found


def _classify(
    rt: d.Runtime,
    i: int,
    format_id: int,
    model: d.Model,
    texts: MutableMapping[object, Any],
    bases: MutableMapping[object, Any],
) -> tuple[int, tuple[int, float, str, int] | None]:
    """A runtime at position ``i`` that the group's masks passed: the model-format check (it
    depends only on the entries, ``format_id``: one lookup once known), then the model-size check
    (the fit's, shared by ``fit_id``) and the score. (code, None), or (CANDIDATE, its key)."""
    failure = texts.get(format_id, texts)
    if failure is texts:
        failure = format_failure(rt.own, model, texts)
    if failure is not None:
        return _REJECTED, None
    spec = rt.own
    base = bases.get(spec.fit_id) if spec.fit_id else None  # fit_base, its table read once
    if base is None:
        base = fit_base(spec, model)
    if base.size_failure is not None:
        return _SIZE, None
    score = base.score(spec) if spec.any_auto_select else 0
    if score > 0:
        dist = 0.0 if model.size is None else distance(model.size, base.distance_low, base.distance_high)
        return CANDIDATE, (-score, dist, rt.name, i)
    return _unscored(spec, base), None


def _unscored(spec: d.Compiled, base: FitBase) -> int:
    """The code of a runtime that auto-selection skips with a score of 0: the reason of
    ``rules.auto_select.auto_select_failure`` (its matching entry has ``autoSelect: true``, or not)."""
    match = spec.entries[base.match] if spec.any_auto_select and base.match >= 0 else None
    return _NOT_SCORED if match is not None and match.auto_select is True else _NOT_AUTO


def _group_result(group: RuntimeGroup, model: d.Model, request: d.Request | None) -> GroupResult:
    """Apply the checks in the documented order (troubleshoot-runtime-selection.md, Step 2) to a
    group: each runtime's primary reason is the first check it fails."""
    if not group.order:  # a namespace without ServingRuntimes: nothing to check
        return GroupResult(group, 0, 0, 0, 0, Evaluated((), model, 0), [], 0, 0, 0, 0, request=request)
    disabled, accelerator, mode, no_entry, rest = _request_masks(group, model, request)
    past = _Past(group, model, [0, 0, 0, 0], [])
    fits = group.shared_fits() if rest else None  # None for a small group
    if fits is not None:
        rest = past.classify_shared(fits, _format_key(model), rest)
    if rest:
        past.classify(set_positions(rest))
    return _result(group, model, request, (disabled, accelerator, mode, no_entry), past, {})


def _carried(
    before: GroupResult,
    group: RuntimeGroup,
    edits: Edits,
    model: d.Model,
    request: d.Request | None,
) -> GroupResult:
    """``_group_result`` of ``group``, made from ``before`` (the same model and request checks
    over the group ``changed`` made ``group`` from, with ``edits``): the masks are asked again
    (a few integer operations), the runtimes of the other positions keep what ``before`` found
    (their bits and keys move with the inserts and deletes), and only the edited positions past
    the masks are classified. What ``before`` keeps goes with it where the edits cannot change
    it: the message lists (``no_runtime.carry_lists``), and for a result carried in place
    (``_carried_in_place``) the candidate orders and answers too."""
    after = _carried_in_place(before, group, edits, model, request) if _in_place(edits) else None
    in_place = after is not None
    if after is None:
        after = _carried_moving(before, group, edits, model, request)
    if before.memo:
        from ome_selector.engine import no_runtime  # it reads this module's group results

        if in_place:  # the same candidates and counts: every candidate order and answer holds
            listed = no_runtime.MESSAGE
            after.memo.update((k, v) for k, v in tuple(before.memo.items()) if not _kept_as(k, listed))
        no_runtime.carry_lists(before, after, edits, model, request)
    return after


def _in_place(edits: Edits) -> bool:
    """Whether every edit replaces a runtime in place (no position moves)."""
    return all(op == "set" for op, _, _ in edits)


def _kept_as(key: object, kind: str) -> bool:
    """Whether ``key`` of ``GroupResult.memo`` is one of the keys ``(kind, ...)``."""
    return isinstance(key, tuple) and key[0] == kind


def _carried_moving(
    before: GroupResult,
    group: RuntimeGroup,
    edits: Edits,
    model: d.Model,
    request: d.Request | None,
) -> GroupResult:
    """``_carried``'s result through any edits, without what ``before`` keeps."""
    masks = [before.format_rejected, before.size_failed, before.not_auto, before.not_scored]
    dirty: set[int] = set()  # the edited positions, as the group is after each edit
    for op, i, _ in edits:
        bit, low = 1 << i, (1 << i) - 1
        if op == "set":
            masks = [m & ~bit for m in masks]
            dirty.add(i)
        elif op == "del":
            masks = [(m & low) | ((m >> (i + 1)) << i) for m in masks]
            dirty = {j if j < i else j - 1 for j in dirty if j != i}
        else:  # "ins"
            masks = [(m & low) | ((m >> i) << (i + 1)) for m in masks]
            dirty = {j if j < i else j + 1 for j in dirty}
            dirty.add(i)
    # The candidate keys and evaluations (thousands at 50,000 runtimes) move once for all edits.
    moves = Moves(edits)
    keys = moves.keys(before.keys)
    made = moves.positions(before.evaluated.made)
    disabled, accelerator, mode, no_entry, rest = _request_masks(group, model, request)
    past = _Past(group, model, masks, keys)
    past.classify(sorted(i for i in dirty if rest >> i & 1))
    return _result(group, model, request, (disabled, accelerator, mode, no_entry), past, made)


def _carried_in_place(
    before: GroupResult,
    group: RuntimeGroup,
    edits: Edits,
    model: d.Model,
    request: d.Request | None,
) -> GroupResult | None:
    """``_carried``'s result through edits that each replace a runtime in place, when every
    replaced runtime is no candidate and has the same primary check before and after: every
    mask, key and count is ``before``'s (the model-format split apart). None when an edit makes
    or unmakes a candidate or moves a runtime to another check."""
    replaced = {i for _, i, _ in edits}
    disabled, accelerator, mode, no_entry, rest = _request_masks(group, model, request)
    past = _Past(group, model, [0, 0, 0, 0], [])
    past.classify(sorted(i for i in replaced if rest >> i & 1))
    if past.keys:
        return None
    rejected, size, not_auto, not_scored = past.masks
    now, was = (disabled, accelerator, mode, no_entry | rejected, size, not_auto, not_scored), _standing_masks(before)
    for i in replaced:
        standing = _standing(was, i)
        if standing is None or _standing(now, i) != standing:
            return None
    bits = mask_from_positions(sorted(replaced), len(group))
    return GroupResult(
        group,
        before.disabled,
        before.accelerator_class,
        before.deployment_mode,
        before.model_format,
        before.evaluated.replaced(group.order, replaced),
        before.keys,
        (before.format_rejected & ~bits) | rejected,
        before.size_failed,
        before.not_auto,
        before.not_scored,
        request=request,
    )


# The key of an encoded answer a group result keeps (``GroupResult.keep``) starts with this.
ANSWER = "answer"


def carry_kept(
    before: GroupResult,
    after: GroupResult,
    edits: Edits,
    kind: str,
    unchanged: Callable[[int], bool],
) -> None:
    """Keep on ``after`` what ``before`` keeps under the keys ``(kind, ...)`` when every edit
    replaces a runtime in place (no position moves) and ``unchanged(i)`` holds for each edited
    position ``i`` (the kept value cannot depend on what changed there)."""
    kept = [(key, found) for key, found in tuple(before.memo.items()) if _kept_as(key, kind)]
    if not kept or not _in_place(edits):
        return
    if all(unchanged(i) for i in {i for _, i, _ in edits}):
        for key, (partner, value) in kept:
            after.keep(key, partner, value)


def _standing(masks: tuple[int, ...], i: int) -> int | None:
    """The index of the first of ``masks`` (``_standing_masks``' order) that holds position
    ``i`` (its primary check), or None for a candidate."""
    bit = 1 << i
    for index, mask in enumerate(masks):
        if mask & bit:
            return index
    return None


def _standing_masks(result: GroupResult) -> tuple[int, int, int, int, int, int, int]:
    """``result``'s masks in the check order: disabled, accelerator class, deployment mode, model
    format, model size, not autoSelect, not scored."""
    return (
        result.disabled,
        result.accelerator_class,
        result.deployment_mode,
        result.model_format,
        result.size_failed,
        result.not_auto,
        result.not_scored,
    )


def _result(
    group: RuntimeGroup,
    model: d.Model,
    request: d.Request | None,
    masked: tuple[int, int, int, int],
    past: _Past,
    made: dict[int, Evaluation],
) -> GroupResult:
    disabled, accelerator, mode, no_entry = masked
    rejected, size, not_auto, not_scored = past.masks
    candidates = past.candidates
    if len(past.keys) > past.counted:
        candidates |= mask_from_positions([k[3] for k in past.keys[past.counted :]], len(group))
    evaluated = Evaluated(group.order, model, size | not_auto | not_scored | candidates, made)
    return GroupResult(
        group,
        disabled,
        accelerator,
        mode,
        no_entry | rejected,
        evaluated,
        past.keys,
        rejected,
        size,
        not_auto,
        not_scored,
        request=request,
    )


@dataclass(frozen=True, slots=True)
class Exclusion:
    """A runtime in scope that is not a candidate, with its primary reason."""

    runtime: d.Runtime
    verdict: Verdict
    primary: Failure


# Every check, in canonical order (iterating the enum class each time costs more).
_ALL_CHECKS = tuple(Check)


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
        self._message: str | None = None

    @functools.cached_property
    def counts(self) -> dict[Check, int]:
        """Runtimes in scope per primary reason (``Check``), candidates left out: counted when
        first read (an answer kept serialized never reads them)."""
        counts = dict.fromkeys(_ALL_CHECKS, 0)
        for r in self.results:
            counts[Check.DISABLED] += r.disabled.bit_count()
            counts[Check.ACCELERATOR_CLASS] += r.accelerator_class.bit_count()
            counts[Check.DEPLOYMENT_MODE] += r.deployment_mode.bit_count()
            counts[Check.MODEL_FORMAT] += r.model_format.bit_count()
            for check, count in r.skipped.items():
                counts[check] += count
        return counts

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
        (group_result(namespaced, model, request), group_result(cluster, model, request)),
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
