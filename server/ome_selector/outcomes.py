"""The outcome of every cached InferenceService, kept beside each snapshot, and how a cache write
changes them (issue 8: WatchSelections, PreviewCacheChange, the runtime webhook's warning). Pure
Python, no gRPC.

- ``evaluate(snapshot, isvc)`` -> ``Tracked``: the InferenceService's ``Outcome`` (the runtime, the
  ``RuntimeReady`` condition, the Warning events, each component's configuration) computed by
  ``reconcile.reconcile``, the one evaluation path, and what that outcome depends on.
- ``Selections``: the outcomes and the dependency index of one snapshot (a cache beside it, never
  inside it). ``build`` evaluates every InferenceService; ``advance(old, new)`` re-evaluates only
  those that the difference between two snapshots can move, found through the index.
- ``selections_for(snapshot)``: the Selections registered for ``snapshot`` (the watch tracker
  registers each one it computes), else built from scratch and registered.
- ``reason(old, new, change)``: which step made one outcome change (``ChangeStep``, with the check
  or tie-break of the engine); ``causes(...)``: the objects of the write behind it.

The outcome is reconciled as for an InferenceService that already carries a ``RuntimeReady``
condition, so a resolved runtime reads ``True``/``RuntimeResolved`` (OME writes the condition only
once a selection has failed; a watcher follows it across changes).

What an outcome depends on (its index keys), and what a write touches:

- ``("object", key)``: the model keys the resolution reads (a BaseModel in the namespace, a
  ClusterBaseModel), the runtime keys ``spec.runtime.name`` can resolve to, the AcceleratorClasses
  the component configuration reads, and for a pinned InferenceService (``autoSync: false``) the
  revisions ``spec.runtime.revision`` and ``status.pinnedRevisionName`` name (in ``ome``); a write
  touches the key of every object it creates, replaces with a different object or deletes, and of
  every runtime whose inheritance chain can reach a touched runtime (``snapshot.chain_can_reach``,
  the rule the snapshot re-resolves chains by).
- ``("format", scope, (format, architecture, quantization))``: an auto-selected runtime can only
  lose its place to a runtime with an entry of the model's format key in the same scope (the
  namespace, or None for cluster scope): ``domain.Compiled.index_keys``, the masks of the fast path.
- ``("scope", scope)``: without a candidate, OME's ``no runtime found`` message lists every runtime
  in scope, so any runtime write in the namespace (or at cluster scope) can change it.
"""

from __future__ import annotations

import enum
import threading
import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import chain

from ome.v1beta1 import types_pb2

from . import domain as d
from . import engine, messages, reconcile
from .changes import object_name
from .checks import Check, Failure
from .components import ComponentConfig
from .engine import TieBreak, Verdict
from .ingest import Key, compile_request
from .pinning import PinOutcome, pinned
from .pinning import resolve as resolve_pin
from .resolution import Decision, ModelResolution, decide, resolve_model
from .snapshot import Snapshot, chain_can_reach

IsvcKey = tuple[str, str]  # (namespace, name)
IndexKey = tuple[object, ...]
_RUNTIME_KINDS = (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME)


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the controller does about one InferenceService's runtime (compared by value).

    ``runtime``: the key of the runtime it uses, or None; ``named``: whether ``spec.runtime.name``
    names it; ``condition``: ``RuntimeReady`` (None where OME sets none); ``warnings``: the Warning
    events, in order; ``components``: each declared component's mode and accelerator class.
    """

    runtime: Key | None
    named: bool
    condition: reconcile.ConditionValue | None
    warnings: tuple[reconcile.Event, ...]
    components: tuple[ComponentConfig, ...]


@dataclass(frozen=True, slots=True)
class Tracked:
    """One InferenceService's outcome and the index keys it depends on."""

    outcome: Outcome
    deps: frozenset[IndexKey]


@dataclass(frozen=True, slots=True)
class Change:
    """An outcome a write changed: ``before`` None for a new InferenceService, ``after`` None for a
    deleted one."""

    key: IsvcKey
    before: Outcome | None
    after: Outcome | None


@dataclass(frozen=True, slots=True)
class Advance:
    """``Selections.advance``'s result: the next Selections, the changed outcomes (sorted by
    namespace and name), how many InferenceServices were evaluated again, and the object keys
    the write touched."""

    selections: Selections
    changes: tuple[Change, ...]
    reevaluated: int
    touched: frozenset[Key]


def _requested_classes(isvc: types_pb2.InferenceService) -> set[str]:
    """Every AcceleratorClass name the InferenceService itself names (select-accelerators.md)."""
    spec = isvc.spec
    names = {s.accelerator_class for s in (spec.accelerator_selector, spec.engine.accelerator_override)}
    names.add(spec.decoder.accelerator_override.accelerator_class)
    annotation = isvc.metadata.annotations.get(d.ACCELERATOR_CLASS_ANNOTATION)
    if annotation:
        names.add(annotation)
    names.discard("")
    return names


def _dependencies(isvc: types_pb2.InferenceService, result: reconcile.Reconcile) -> frozenset[IndexKey]:
    """The index keys of everything ``result`` read (see the module docstring)."""
    namespace, spec = isvc.metadata.namespace, isvc.spec
    deps: set[IndexKey] = set()
    if spec.model.name:
        deps.add(("object", (d.BASE_MODEL, namespace, spec.model.name)))
        deps.add(("object", (d.CLUSTER_BASE_MODEL, "", spec.model.name)))
    if spec.runtime.name:
        deps.add(("object", (d.SERVING_RUNTIME, namespace, spec.runtime.name)))
        deps.add(("object", (d.CLUSTER_SERVING_RUNTIME, "", spec.runtime.name)))
    if pinned(isvc):  # the revisions a pinned InferenceService renders from, or finds missing
        for revision in (spec.runtime.revision, isvc.status.pinned_revision_name):
            if revision:
                deps.add(("object", (d.CONTROLLER_REVISION, d.DEFAULT_OME_NAMESPACE, revision)))
    auto = result.decision.auto if result.decision is not None else None
    if auto is not None:
        if auto.ranked:
            model = auto.model
            key = (model.model_format.name, model.architecture, model.quantization)
            deps |= {("format", namespace, key), ("format", None, key)}
        else:
            deps |= {("scope", namespace), ("scope", None)}
    runtime = result.runtime
    if runtime is not None:
        runtime_spec = runtime.named_spec if spec.runtime.name else runtime.spec
        classes = set(runtime_spec.accelerator_requirements.accelerator_classes) | _requested_classes(isvc)
        deps |= {("object", (d.ACCELERATOR_CLASS, "", name)) for name in classes}
    return frozenset(deps)


def evaluate(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> Tracked:
    """The outcome of ``isvc`` on ``snapshot`` (``reconcile.reconcile`` with a ``RuntimeReady``
    condition present) and its dependencies."""
    result = reconcile.reconcile(snapshot, isvc, True)
    outcome = Outcome(
        runtime=result.runtime.key if result.runtime is not None else None,
        named=bool(isvc.spec.runtime.name),
        condition=result.condition,
        warnings=result.events,
        components=result.components,
    )
    return Tracked(outcome, _dependencies(isvc, result))


def _runtime(snapshot: Snapshot, key: Key) -> d.Runtime | None:
    if key[0] == d.CLUSTER_SERVING_RUNTIME:
        return snapshot.cluster_serving_runtimes.get(key[2])
    return snapshot.serving_runtimes.get((key[1], key[2]))


def _all_runtimes(snapshot: Snapshot) -> Iterator[d.Runtime]:
    return chain(snapshot.serving_runtimes.values(), snapshot.cluster_serving_runtimes.values())


def diff(old: Snapshot, new: Snapshot) -> tuple[frozenset[Key], frozenset[Key]]:
    """(touched, rechained): the keys of the objects that differ between the snapshots (created,
    replaced by a different object, or deleted), and of the runtimes whose inheritance chain can
    reach a touched runtime, in either snapshot."""
    old_objects, new_objects = old.objects, new.objects
    touched = {key for key, obj in new_objects.items() if old_objects.get(key) is not obj}
    touched = {key for key in touched if old_objects.get(key) != new_objects[key]}
    touched.update(key for key in old_objects if key not in new_objects)
    runtimes = {key for key in touched if key[0] in _RUNTIME_KINDS}
    rechained: set[Key] = set()
    if runtimes:
        names = {key[2] for key in runtimes}
        for snapshot in (old, new):
            rechained.update(
                rt.key
                for rt in _all_runtimes(snapshot)
                if rt.parent is not None and chain_can_reach(rt, runtimes, names)
            )
    return frozenset(touched), frozenset(rechained - touched)


def index_keys_of(old: Snapshot, new: Snapshot, key: Key) -> set[IndexKey]:
    """The index keys a write of the object ``key`` touches (its old and new version)."""
    out: set[IndexKey] = {("object", key)}
    if key[0] in _RUNTIME_KINDS:
        scope = key[1] if key[0] == d.SERVING_RUNTIME else None
        out.add(("scope", scope))
        for snapshot in (old, new):
            rt = _runtime(snapshot, key)
            if rt is not None:
                out.update(("format", scope, k[1]) for k in rt.own.index_keys if k[0] == "format")
    return out


class Selections:
    """The outcome of every InferenceService of one snapshot, and the index from what a write can
    touch to the InferenceServices whose outcome it can change. Never changed after it is built
    (``advance`` returns the next one); holds no reference to its snapshot."""

    __slots__ = ("tracked", "index", "__weakref__")

    def __init__(self, tracked: dict[IsvcKey, Tracked], index: dict[IndexKey, set[IsvcKey]]) -> None:
        self.tracked = tracked
        self.index = index

    @classmethod
    def build(cls, snapshot: Snapshot) -> Selections:
        """Evaluate every InferenceService of ``snapshot``."""
        tracked = {key: evaluate(snapshot, isvc) for key, isvc in sorted(snapshot.inference_services.items())}
        index: dict[IndexKey, set[IsvcKey]] = {}
        for key, entry in tracked.items():
            for dep in entry.deps:
                index.setdefault(dep, set()).add(key)
        return cls(tracked, index)

    def outcomes(self) -> dict[IsvcKey, Outcome]:
        """(namespace, name) -> outcome, sorted."""
        return {key: entry.outcome for key, entry in self.tracked.items()}

    def affected(self, old: Snapshot, new: Snapshot, touched: Iterable[Key], rechained: Iterable[Key]) -> set[IsvcKey]:
        """The InferenceServices whose outcome the write from ``old`` to ``new`` can change."""
        out = {(key[1], key[2]) for key in touched if key[0] == d.INFERENCE_SERVICE}
        keys: set[IndexKey] = {("object", key) for key in rechained}
        for key in touched:
            keys |= index_keys_of(old, new, key)
        for index_key in keys:
            found = self.index.get(index_key)
            if found:
                out |= found
        return out

    def advance(self, old: Snapshot, new: Snapshot) -> Advance:
        """The Selections of ``new``, given that this is ``old``'s: only the InferenceServices the
        difference can move are evaluated again (on ``new``)."""
        if not self.tracked and not new.inference_services:
            return Advance(self, (), 0, frozenset())
        touched, rechained = diff(old, new)
        affected = self.affected(old, new, touched, rechained)
        if not affected:
            return Advance(self, (), 0, touched)
        tracked, index = dict(self.tracked), dict(self.index)
        copied: set[IndexKey] = set()

        def members(index_key: IndexKey) -> set[IsvcKey]:
            if index_key not in copied:
                copied.add(index_key)
                index[index_key] = set(index.get(index_key, ()))
            return index[index_key]

        changes = []
        for key in sorted(affected):
            before = self.tracked.get(key)
            isvc = new.inference_services.get(key)
            after = evaluate(new, isvc) if isvc is not None else None
            if after is None:
                tracked.pop(key, None)
            else:
                tracked[key] = after
            old_deps = before.deps if before is not None else frozenset()
            new_deps = after.deps if after is not None else frozenset()
            for index_key in old_deps - new_deps:
                members(index_key).discard(key)
            for index_key in new_deps - old_deps:
                members(index_key).add(key)
            was = before.outcome if before is not None else None
            now = after.outcome if after is not None else None
            if was != now:
                changes.append(Change(key, was, now))
        for index_key in copied:
            if not index[index_key]:
                del index[index_key]
        reevaluated = sum(1 for key in affected if key in new.inference_services)
        return Advance(Selections(dict(sorted(tracked.items())), index), tuple(changes), reevaluated, touched)


_REGISTRY: weakref.WeakKeyDictionary[Snapshot, Selections] = weakref.WeakKeyDictionary()
_REGISTRY_LOCK = threading.Lock()
_latest: tuple[weakref.ref[Snapshot], Selections] | None = None  # the last one registered


def register(snapshot: Snapshot, selections: Selections) -> None:
    """Keep ``selections`` (those of ``snapshot``) beside ``snapshot``, for as long as it lives."""
    global _latest
    with _REGISTRY_LOCK:
        _REGISTRY[snapshot] = selections
        _latest = (weakref.ref(snapshot), selections)


def selections_for(snapshot: Snapshot) -> Selections:
    """The Selections of ``snapshot``: the registered ones; else those of the last registered
    snapshot advanced to it (``advance`` holds between any two snapshots, so a caller that reads
    the store's newest snapshot before the watch tracker has processed it gets them at the cost
    of the write); else built from scratch. The result is registered."""
    with _REGISTRY_LOCK:
        found = _REGISTRY.get(snapshot)
        latest = _latest
    if found is not None:
        return found
    base = latest[0]() if latest is not None else None
    if base is not None and latest is not None:
        found = latest[1].advance(base, snapshot).selections
    else:
        found = Selections.build(snapshot)
    register(snapshot, found)
    return found


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
    step = engine.tie_break(model, above, below)
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
        return _named_reason(isvc1.spec.runtime.name, decide(old, isvc1), decide(new, isvc1), change)
    assert change.before is not None and change.after is not None
    if r0.model is None or r1.model is None or r0.error or r1.error:
        return _configuration(change.before, change.after)
    return _auto_reason(old, new, isvc1, (r0.model, r1.model), change)


def causes(old: Snapshot, new: Snapshot, advance: Advance, deps: frozenset[IndexKey], key: IsvcKey) -> list[Key]:
    """The objects of the write behind the change of ``key``: those whose index keys meet
    ``deps`` (the outcome's dependencies before and after), the InferenceService itself; every
    touched object when none does (a chain re-resolved through a parent)."""
    own = (d.INFERENCE_SERVICE, key[0], key[1])
    found = [k for k in sorted(advance.touched) if k == own or not deps.isdisjoint(index_keys_of(old, new, k))]
    return found or sorted(advance.touched)
