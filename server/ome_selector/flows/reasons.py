"""Why a cached InferenceService's outcome changed after a cache write: the step of the
selection that changed it (``ChangeStep``), a one-line ``Reason`` from the engine's checks and
tie-breaks, computed once per write (``Explanations``)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import compile_request
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import TieBreak, Verdict
from ome_selector.flows.changes import object_name
from ome_selector.flows.outcomes import Advance, Change, IndexKey, Outcome, Selections, _runtime, index_keys_of
from ome_selector.flows.resolution import Decision, ModelResolution, SelectQuery, decide, resolve_model
from ome_selector.flows.revisions import PinOutcome, pinned
from ome_selector.flows.revisions import resolve as resolve_pin
from ome_selector.rules.results import Check, Failure
from ome_selector.texts import messages
from ome_selector.validation import Key

# ---- why an outcome changed ----------------------------------------------------------------------

# Which step made an outcome change; the same names as the proto enum ``ome.selector.v1.ChangeStep``.
ChangeStep = enum.Enum(
    "ChangeStep",
    "INFERENCE_SERVICE MODEL RUNTIME_ADDED RUNTIME_DELETED CHECK_FAILED CHECK_PASSED RANKING NAMED_RUNTIME "
    "CONFIGURATION",
)


@dataclass(frozen=True, slots=True)
class Reason:
    """Why one outcome changed: the step, one line of text, and the runtime, check or tie-break
    the step is about."""

    step: ChangeStep
    text: str
    runtime: Key | None = None
    check: Check | None = None
    tie_break: TieBreak | None = None


def _model_state(resolution: ModelResolution) -> str:
    if resolution.not_found:
        return "not found"
    if resolution.error:
        return resolution.error
    model = resolution.model
    if model is None:
        return messages.ABSENT
    if model.size_text is None:
        return messages.MODEL_USABLE.format(label=model.label)
    return messages.MODEL_USABLE_SIZED.format(label=model.label, size=model.size_text)


def _configuration(before: Outcome, after: Outcome) -> Reason:
    parts = [text for part, text in messages.OUTCOME_PARTS.items() if getattr(before, part) != getattr(after, part)]
    if after.runtime is None:
        text = messages.REASON_CONFIGURATION_NONE.format(parts=", ".join(parts))
    else:
        text = messages.REASON_CONFIGURATION.format(runtime=object_name(after.runtime), parts=", ".join(parts))
    return Reason(ChangeStep.CONFIGURATION, text, runtime=after.runtime)


def _check(step: ChangeStep, key: Key, failure: Failure) -> Reason:
    """CHECK_FAILED (``failure`` is the runtime's primary reason now) or CHECK_PASSED (before)."""
    template = messages.REASON_CHECK_FAILED if step is ChangeStep.CHECK_FAILED else messages.REASON_CHECK_PASSED
    text = template.format(
        runtime=object_name(key), check=messages.CHECK_NAMES[failure.check.name], message=failure.message
    )
    return Reason(step, text, runtime=key, check=failure.check)


def _added(key: Key) -> Reason:
    return Reason(ChangeStep.RUNTIME_ADDED, messages.REASON_RUNTIME_ADDED.format(runtime=object_name(key)), runtime=key)


def _deleted(key: Key) -> Reason:
    return Reason(
        ChangeStep.RUNTIME_DELETED, messages.REASON_RUNTIME_DELETED.format(runtime=object_name(key)), runtime=key
    )


def _ranking(model: d.Model, above: engine.Evaluation, below: engine.Evaluation) -> Reason:
    step = engine.tie_break(above, below)
    values = {
        TieBreak.SCORE: (above.fit.score, below.fit.score),
        TieBreak.SIZE_DISTANCE: (above.distance, below.distance),
        TieBreak.NAME: (above.runtime.name, below.runtime.name),
    }.get(step, ("", ""))
    text = messages.REASON_RANKING.format(
        runtime=object_name(above.runtime.key),
        other=object_name(below.runtime.key),
        tie_break=messages.TIE_BREAKS[step.name].format(above=values[0], below=values[1]),
    )
    return Reason(ChangeStep.RANKING, text, runtime=above.runtime.key, tie_break=step)


def _evaluated(snapshot: Snapshot, key: Key, model: d.Model, request: d.Request) -> engine.Evaluation | None:
    """The runtime ``key`` of ``snapshot`` evaluated on its own spec (auto-selection), or None."""
    rt = _runtime(snapshot, key)
    return None if rt is None else engine.evaluate(rt, rt.own, model, request)


def _auto_reason(
    old: Snapshot,
    new: Snapshot,
    isvc: types_pb2.InferenceService,
    models: tuple[d.Model, d.Model],
    change: Change,
) -> Reason:
    """Auto-selection: the old runtime is gone or fails a check now, or the new one is new, passes
    a check now, or ranks above the old one (troubleshoot-runtime-selection.md Step 2 order;
    runtime-selection-scoring.md tie-breaks). Evaluates the two runtimes only, never the scope."""
    assert change.before is not None and change.after is not None
    was, now = change.before.runtime, change.after.runtime
    if was == now:
        return _configuration(change.before, change.after)
    request = compile_request(isvc)
    model0, model1 = models
    still: engine.Evaluation | None = None
    if was is not None:
        still = _evaluated(new, was, model1, request)
        if still is None:
            return _deleted(was)
        if still.verdict is not Verdict.CANDIDATE:
            return _check(ChangeStep.CHECK_FAILED, was, still.failures[0])
    if now is None:
        return _configuration(change.before, change.after)
    before = _evaluated(old, now, model0, request)
    if before is None:
        return _added(now)
    if before.verdict is not Verdict.CANDIDATE:
        return _check(ChangeStep.CHECK_PASSED, now, before.failures[0])
    after = _evaluated(new, now, model1, request)
    if still is None or after is None:
        return _configuration(change.before, change.after)
    return _ranking(model1, after, still)


def _named_reason(name: str, d0: Decision, d1: Decision, change: Change) -> Reason:
    """A named runtime: found or missing, usable or not (disabled, broken chain), resolved to
    another runtime, or its compatibility warning (reference-a-runtime-explicitly.md)."""
    assert change.before is not None and change.after is not None
    if bool(d0.runtime_not_found) != bool(d1.runtime_not_found):
        if d1.runtime_not_found and d0.runtime is not None:
            return _deleted(d0.runtime.key)
        if d1.runtime is not None:
            return _added(d1.runtime.key)
    keys = [dec.runtime.key if dec.runtime is not None else None for dec in (d0, d1)]
    if d0.runtime_error != d1.runtime_error or keys[0] != keys[1]:
        states = [
            dec.runtime_error or (object_name(key) if key is not None else messages.NO_RUNTIME)
            for dec, key in zip((d0, d1), keys)
        ]
        text = messages.REASON_NAMED_RUNTIME.format(runtime=name, before=states[0], after=states[1])
        return Reason(ChangeStep.NAMED_RUNTIME, text, runtime=keys[1])
    if d0.compatibility_error != d1.compatibility_error and keys[1] is not None:
        if d1.compatibility_error and d1.evaluation is not None:
            return _check(ChangeStep.CHECK_FAILED, keys[1], d1.evaluation.failures[0])
        if d0.evaluation is not None and d0.evaluation.failures:
            return _check(ChangeStep.CHECK_PASSED, keys[1], d0.evaluation.failures[0])
    return _configuration(change.before, change.after)


def _pin_state(outcome: PinOutcome) -> str:
    """A pinned InferenceService's state for a reason's text: the pin error, the drift that
    pauses it, or the revision (or live spec) it renders from, with a drift that does not."""
    if outcome.error:
        return messages.PIN_ERROR.format(message=outcome.error)
    drift = (
        messages.PIN_DRIFTED.format(reason=outcome.drift.value, message=outcome.drift_message)
        if outcome.drift is not None
        else ""
    )
    if outcome.paused:
        return drift
    template = messages.PIN_SERVES_REVISION if outcome.from_revision else messages.PIN_SERVES_LIVE
    served = template.format(revision=outcome.pinned)
    return f"{served}; {drift}" if drift else served


def _pin_reason(old: Snapshot, new: Snapshot, isvc: types_pb2.InferenceService) -> Reason | None:
    """A pinned InferenceService whose pin changed (a revision created, replaced or deleted, drift
    set or cleared, runtime-revisions.md): NAMED_RUNTIME with the states before and after; None
    when the pin reads the same on both snapshots."""
    p0, p1 = (_pin_state(resolve_pin(s, isvc, d.DEFAULT_OME_NAMESPACE)) for s in (old, new))
    if p0 == p1:
        return None
    after = resolve_pin(new, isvc, d.DEFAULT_OME_NAMESPACE).runtime
    text = messages.REASON_NAMED_RUNTIME.format(runtime=isvc.spec.runtime.name, before=p0, after=p1)
    return Reason(ChangeStep.NAMED_RUNTIME, text, runtime=after.key if after is not None else None)


def reason(old: Snapshot, new: Snapshot, change: Change) -> Reason:
    """Why ``change`` (a change of ``Selections.advance`` from ``old`` to ``new``) happened: the
    InferenceService itself, its model, or the runtime step (see ``ChangeStep``)."""
    isvc0, isvc1 = old.inference_services.get(change.key), new.inference_services.get(change.key)
    if isvc0 is None or isvc1 is None or isvc0 != isvc1:
        text = (
            messages.REASON_CREATED
            if isvc0 is None
            else messages.REASON_DELETED
            if isvc1 is None
            else messages.REASON_UPDATED
        )
        return Reason(ChangeStep.INFERENCE_SERVICE, text)
    r0, r1 = resolve_model(old, isvc1), resolve_model(new, isvc1)
    m0, m1 = _model_state(r0), _model_state(r1)
    if m0 != m1:
        return Reason(ChangeStep.MODEL, messages.REASON_MODEL.format(model=isvc1.spec.model.name, before=m0, after=m1))
    pin = _pin_reason(old, new, isvc1) if pinned(isvc1) else None
    if pin is not None:
        return pin
    if isvc1.spec.runtime.name:  # resolving a named runtime costs one evaluation
        query = SelectQuery(isvc1)
        return _named_reason(isvc1.spec.runtime.name, decide(old, query), decide(new, query), change)
    assert change.before is not None and change.after is not None
    if r0.model is None or r1.model is None or r0.error or r1.error:
        return _configuration(change.before, change.after)
    return _auto_reason(old, new, isvc1, (r0.model, r1.model), change)


class Explanations:
    """The reasons and causes of the changes of one advance (``before.advance(old, new)``), each
    distinct reason computed once: InferenceServices of one namespace with the same inputs before
    and after and the same two outcomes change for the same reason (``reason`` reads nothing
    else of them)."""

    def __init__(self, old: Snapshot, new: Snapshot, before: Selections, advance: Advance) -> None:
        self.old, self.new, self.before, self.advance = old, new, before, advance
        self._reasons: dict[tuple[object, ...], Reason] = {}
        self._touched = sorted(advance.touched)
        self._by_index: dict[IndexKey, list[Key]] = {}  # index key -> the touched objects with it
        for key in self._touched:
            keys = advance.index_keys[key] if key in advance.index_keys else index_keys_of(old, new, key)
            for index_key in keys:
                self._by_index.setdefault(index_key, []).append(key)

    def deps(self, change: Change) -> frozenset[IndexKey]:
        """The dependencies of ``change``'s InferenceService before and after the write."""
        found = (self.before.tracked.get(change.key), self.advance.selections.tracked.get(change.key))
        return frozenset().union(*(t.deps for t in found if t is not None))

    def causes(self, change: Change) -> list[Key]:
        """The objects of the write behind ``change``, sorted: those whose index keys meet the
        InferenceService's dependencies before and after (``deps``), and the InferenceService
        itself; every touched object when none does (a chain re-resolved through a parent)."""
        found = {key for dep in self.deps(change) for key in self._by_index.get(dep, ())}
        own = (d.INFERENCE_SERVICE, *change.key)
        if own in self.advance.touched:
            found.add(own)
        return sorted(found) if found else self._touched

    def reason(self, change: Change) -> Reason:
        """``reason`` of ``change``, shared as the class docstring says."""
        was, now = self.before.tracked.get(change.key), self.advance.selections.tracked.get(change.key)
        if was is None or now is None:
            return reason(self.old, self.new, change)
        isvc0, isvc1 = self.old.inference_services.get(change.key), self.new.inference_services.get(change.key)
        same = isvc0 is isvc1 or isvc0 == isvc1
        key = (was.inputs, now.inputs, same, change.key[0], change.before, change.after)
        found = self._reasons.get(key)
        if found is None:
            found = self._reasons[key] = reason(self.old, self.new, change)
        return found
