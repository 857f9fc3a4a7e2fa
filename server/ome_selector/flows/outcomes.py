"""The outcome of every cached InferenceService, kept beside each snapshot, and how a cache write
changes them (README "Watch selections and preview a change": WatchSelections,
PreviewCacheChange, the runtime webhook's warning). Pure Python, no gRPC.

- ``evaluate(snapshot, isvc)`` -> ``Tracked``: the InferenceService's ``Outcome`` (the runtime, the
  ``RuntimeReady`` condition, the Warning events, each component's configuration) computed by
  ``reconcile.reconcile``, the one evaluation path, and what that outcome depends on.
- ``Evaluations(snapshot).tracked(isvc)``: the same, each distinct evaluation done once:
  InferenceServices with the same ``inputs`` (spec and the annotations the evaluation reads) share
  one ``reconcile`` in a namespace, and across the namespaces that hold nothing it reads (no
  ServingRuntime, no BaseModel of the model; never for a pinned one), evaluated in ``_PROBE`` with
  the namespace put back into OME's texts. A write costs its distinct evaluations, not its
  InferenceServices.
- ``Selections``: the outcomes and the dependency index of one snapshot (a cache beside it, never
  inside it). ``build`` evaluates every InferenceService; ``advance(old, new)`` re-evaluates only
  those that the difference between two snapshots can move, found through the index (both
  through ``Evaluations``).
- ``selections_for(snapshot)``: the Selections registered for ``snapshot`` (the watch tracker
  registers each one it computes), else built from scratch and registered.
- ``reason(old, new, change)``: which step made one outcome change (``ChangeStep``, with the check
  or tie-break of the engine); ``Explanations``: the reasons of one write's changes (each
  distinct one computed once) and the objects of the write behind each (``causes``).

The ``RuntimeReady`` condition is OME's (troubleshoot-runtime-selection.md Step 1 and Step 5;
ome-selection-facts.md 8.6): absent on an InferenceService that never failed to resolve a runtime,
``False``/``RuntimeNotFound`` once one failed, and ``True``/``RuntimeResolved`` on a later success.
It counts as written when the InferenceService's ``status.conditions`` holds one, or when its
previous outcome (``advance``) had one: a watcher follows the condition across writes.

What an outcome depends on (its index keys), and what a write touches:

- ``("object", key)``: the model keys the resolution reads (a BaseModel in the namespace, a
  ClusterBaseModel), the runtime keys ``spec.runtime.name`` can resolve to, the AcceleratorClasses
  the component configuration reads, and for a pinned InferenceService (``autoSync: false``) the
  revisions ``spec.runtime.revision`` and ``status.pinnedRevisionName`` name (in ``ome``); a write
  touches the key of every object it creates, replaces with a different object or deletes, and of
  every runtime whose inheritance chain can reach a touched runtime (``chains.chain_can_reach``,
  the rule the snapshot re-resolves chains by).
- ``("format", scope, (format, architecture, quantization))``: an auto-selected runtime can only
  lose its place to a runtime with an entry of the model's format key in the same scope (the
  namespace, or None for cluster scope), and only such a runtime can become a candidate:
  ``domain.Compiled.index_keys``, the masks of the fast path. Every outcome of auto-selection, with
  or without a candidate, depends on its model's key.
- ``("scope", scope)``: without a candidate, OME's ``no runtime found`` message lists every runtime
  in scope, so a runtime write in the namespace (or at cluster scope) can change it; not one that
  changes only its entries' priorities (``index_keys_of``): a priority (at least 1) only scales a
  score (ome-selection-facts.md 3.12), so it changes no primary reason and no runtime's candidacy."""

from __future__ import annotations

import secrets
import threading
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field, fields, replace

from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector.cache.chains import chain_can_reach
from ome_selector.cache.snapshot import Snapshot, fields_but_spec
from ome_selector.domain import objects as d
from ome_selector.flows import reconcile
from ome_selector.flows.components import ComponentConfig
from ome_selector.flows.revisions import pinned
from ome_selector.validation import Key

IsvcKey = tuple[str, str]  # (namespace, name)
IndexKey = tuple[object, ...]
Inputs = tuple[object, ...]  # inputs(isvc)
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
    warnings: tuple[d.Event, ...]
    components: tuple[ComponentConfig, ...]


@dataclass(frozen=True, slots=True)
class Tracked:
    """One InferenceService's outcome, the index keys it depends on, and ``inputs``
    (``inputs(isvc)``: what of the InferenceService besides its namespace the outcome reads).
    InferenceServices of one namespace with the same inputs share one ``Tracked``. ``probe``: the
    outcome as evaluated in ``_PROBE``, before ``outcome`` named the namespace in it (an
    evaluation shared between namespaces), else None."""

    outcome: Outcome
    deps: frozenset[IndexKey]
    inputs: Inputs = ()
    probe: Outcome | None = field(default=None, compare=False)


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
    namespace and name), how many InferenceServices were evaluated again (``reevaluated``) and
    how many distinct evaluations that took (``evaluations``: InferenceServices with the same
    inputs share one), the object keys the write touched and the index keys each of them
    touches (``index_keys_of``)."""

    selections: Selections
    changes: tuple[Change, ...]
    reevaluated: int
    touched: frozenset[Key]
    evaluations: int = 0
    index_keys: dict[Key, frozenset[IndexKey]] = field(default_factory=dict)


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
        model = auto.model
        key = (model.model_format.name, model.architecture, model.quantization)
        deps |= {("format", namespace, key), ("format", None, key)}  # a runtime that can become a candidate
        if not auto.ranked:
            deps |= {("scope", namespace), ("scope", None)}
    runtime = result.runtime
    if runtime is not None:
        runtime_spec = runtime.named_spec if spec.runtime.name else runtime.spec
        classes = set(runtime_spec.accelerator_requirements.accelerator_classes) | _requested_classes(isvc)
        deps |= {("object", (d.ACCELERATOR_CLASS, "", name)) for name in classes}
    return frozenset(deps)


def _outcome(isvc: types_pb2.InferenceService, result: reconcile.Reconcile) -> Outcome:
    return Outcome(
        runtime=result.runtime.key if result.runtime is not None else None,
        named=bool(isvc.spec.runtime.name),
        condition=result.condition,
        warnings=result.events,
        components=result.components,
    )


def evaluate(snapshot: Snapshot, isvc: types_pb2.InferenceService, written: bool = False) -> Tracked:
    """The outcome of ``isvc`` on ``snapshot`` (``reconcile.reconcile``, with a ``RuntimeReady``
    condition present when ``isvc``'s status holds one or ``written``: a previous outcome had one)
    and its dependencies, evaluated for this InferenceService alone (the reference
    ``Evaluations`` is held to by the tests)."""
    result = reconcile.reconcile(snapshot, isvc, written or reconcile.has_runtime_ready(isvc))
    return Tracked(_outcome(isvc, result), _dependencies(isvc, result), inputs(isvc))


# ---- evaluations shared between InferenceServices with the same inputs --------------------------

# What of an InferenceService the evaluation path (``reconcile.reconcile`` and everything it
# calls) reads besides the namespace: ``spec``, these annotations and, for a pinned one
# (``autoSync: false``, pinning.py), its ``status`` (the revision it reports, the last sync token);
# never its name, labels or other annotations. InferenceServices with the same inputs get the same
# outcome in the same namespace, and (unless pinned: revisions are labelled with the namespace
# of their ServingRuntime) in any two namespaces that hold no ServingRuntime and no BaseModel of
# their model's name, up to the texts that name the namespace.
_READ_ANNOTATIONS = (d.DEPLOYMENT_MODE_ANNOTATION, d.ACCELERATOR_CLASS_ANNOTATION, d.RUNTIME_SYNC_ANNOTATION)
# The namespace an evaluation shared between namespaces runs in: no object can be in it (not a
# DNS label) and no text can hold it by chance (random per process), so where an outcome's text
# holds it, it stands for the namespace of the InferenceService.
_PROBE = f"\x00namespace-{secrets.token_hex(8)}\x00"


def inputs(isvc: types_pb2.InferenceService) -> Inputs:
    """What ``reconcile.reconcile`` reads of ``isvc`` besides its namespace: the serialized spec,
    the ``ome.io/deploymentMode``, ``ome.io/accelerator-class`` and ``ome.io/runtime-sync``
    annotations (present or not, and their values), whether its status holds a ``RuntimeReady``
    condition and, when it is pinned, its serialized status."""
    annotations = isvc.metadata.annotations
    read = tuple((name, annotations[name]) for name in _READ_ANNOTATIONS if name in annotations)
    status = isvc.status.SerializeToString(deterministic=True) if pinned(isvc) else None
    return (isvc.spec.SerializeToString(deterministic=True), read, status, reconcile.has_runtime_ready(isvc))


def _scope(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> str | None:
    """The namespace when the evaluation may read something of it: the snapshot holds a
    ServingRuntime there or a BaseModel of the InferenceService's model name, or the
    InferenceService is pinned (its revisions name namespaces); else None: every such namespace
    evaluates the same."""
    namespace = isvc.metadata.namespace
    if namespace in snapshot.namespaced or (namespace, isvc.spec.model.name) in snapshot.base_models or pinned(isvc):
        return namespace
    return None


def _mentions_probe(value: object) -> bool:
    """Whether any text in ``value`` (an outcome: dataclasses, tuples, strings) holds ``_PROBE``."""
    if isinstance(value, str):
        return _PROBE in value
    if isinstance(value, tuple):
        return any(_mentions_probe(v) for v in value)
    if hasattr(value, "__dataclass_fields__"):
        return any(_mentions_probe(getattr(value, f.name)) for f in fields(value))  # type: ignore[arg-type]
    return False


def _localized(value: object, namespace: str) -> object:
    """``value`` with ``_PROBE`` replaced by ``namespace`` in every text (the parts that hold
    none are kept as they are)."""
    if isinstance(value, str):
        return value.replace(_PROBE, namespace) if _PROBE in value else value
    if isinstance(value, tuple):
        items = tuple(_localized(v, namespace) for v in value)
        return value if all(a is b for a, b in zip(items, value)) else items
    if hasattr(value, "__dataclass_fields__"):
        changes = {}
        for f in fields(value):  # type: ignore[arg-type]
            old = getattr(value, f.name)
            new = _localized(old, namespace)
            if new is not old:
                changes[f.name] = new
        return replace(value, **changes) if changes else value  # type: ignore[type-var]
    return value


def _probe_fields(value: object) -> tuple[str, ...]:
    """The names of the fields of the dataclass ``value`` whose texts hold ``_PROBE``."""
    return tuple(f.name for f in fields(value) if _mentions_probe(getattr(value, f.name)))  # type: ignore[arg-type]


def _localized_fields(value: object, names: tuple[str, ...], namespace: str) -> object:
    """The dataclass ``value`` with ``_PROBE`` replaced by ``namespace`` in the fields ``names``."""
    if not names:
        return value
    return replace(value, **{name: _localized(getattr(value, name), namespace) for name in names})  # type: ignore[type-var]


class Evaluations:
    """The outcomes of the InferenceServices of one snapshot, each distinct evaluation done once.

    ``tracked(isvc)`` equals ``evaluate(snapshot, isvc)`` (the tests hold it to that), at the cost
    of one ``reconcile.reconcile`` per distinct (``inputs``, scope): the namespace when it holds a
    ServingRuntime or a BaseModel of the model's name, else every namespace together, evaluated
    once in ``_PROBE`` (where such an outcome names the namespace, in OME's ``no runtime found``
    or not-found texts, ``_PROBE`` is replaced by it). InferenceServices of one namespace with the
    same inputs get the same ``Tracked``. ``count``: the evaluations done."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.count = 0
        # (inputs, scope, condition) -> (result, outcome, the outcome's fields that hold _PROBE)
        self._results: dict[tuple[Inputs, str | None, bool], tuple[reconcile.Reconcile, Outcome, tuple[str, ...]]] = {}
        self._tracked: dict[tuple[Inputs, str, bool], Tracked] = {}

    def tracked(
        self,
        isvc: types_pb2.InferenceService,
        known: Inputs | None = None,
        written: bool = False,
        previous: Tracked | None = None,
    ) -> Tracked:
        """The outcome of ``isvc`` and its dependencies; ``known``: its ``inputs`` when the caller
        has them; ``written``: a previous outcome had a ``RuntimeReady`` condition (``evaluate``);
        ``previous``: its ``Tracked`` of an earlier snapshot, whose outcome is reused when the
        shared evaluation gives the same one (its texts, a ``no runtime found`` message is up to
        ``--max-message-bytes``, are not rewritten for the namespace again)."""
        found_inputs = known if known is not None else inputs(isvc)
        has_condition = written or bool(found_inputs[-1])
        namespace = isvc.metadata.namespace
        found = self._tracked.get((found_inputs, namespace, has_condition))
        if found is not None:
            return found
        scope = _scope(self.snapshot, isvc)
        shared = self._results.get((found_inputs, scope, has_condition))
        if shared is None:
            subject = isvc
            if scope is None:
                subject = types_pb2.InferenceService()
                subject.CopyFrom(isvc)
                subject.metadata.namespace = _PROBE
            result = reconcile.reconcile(self.snapshot, subject, has_condition)
            outcome = _outcome(isvc, result)
            shared = self._results[(found_inputs, scope, has_condition)] = (result, outcome, _probe_fields(outcome))
            self.count += 1
        result, outcome, mentions = shared
        probe = None
        if mentions:
            probe = outcome
            if previous is not None and previous.probe is not None and previous.probe == probe:
                outcome = previous.outcome  # the same key: the same namespace
            else:
                outcome = _localized_fields(outcome, mentions, namespace)  # type: ignore[assignment]
        tracked = Tracked(outcome, _dependencies(isvc, result), found_inputs, probe)
        found = self._tracked[(found_inputs, namespace, has_condition)] = tracked
        return found


def _runtime(snapshot: Snapshot, key: Key) -> d.Runtime | None:
    if key[0] == d.CLUSTER_SERVING_RUNTIME:
        return snapshot.cluster_serving_runtimes.get(key[2])
    return snapshot.serving_runtimes.get((key[1], key[2]))


def diff(old: Snapshot, new: Snapshot, written: Iterable[Key] | None = None) -> tuple[frozenset[Key], frozenset[Key]]:
    """(touched, rechained): the keys of the objects that differ between the snapshots (created,
    replaced by a different object, or deleted), and of the runtimes whose inheritance chain can
    reach a touched runtime, in either snapshot. ``written``: every key the writes from ``old`` to
    ``new`` carried (``Snapshot.written``), when known: only those are compared."""
    old_objects, new_objects = old.objects, new.objects
    if written is None:
        touched = {key for key, obj in new_objects.items() if old_objects.get(key) is not obj}
        touched = {key for key in touched if not _same_object(old, new, key)}
        touched.update(key for key in old_objects if key not in new_objects)
    else:
        touched = {key for key in written if not _same_object(old, new, key)}
    runtimes = {key for key in touched if key[0] in _RUNTIME_KINDS}
    rechained: set[Key] = set()
    if runtimes:
        names = {key[2] for key in runtimes}
        for snapshot in (old, new):
            rechained.update(rt.key for rt in snapshot.runtimes_with_parent() if chain_can_reach(rt, runtimes, names))
    return frozenset(touched), frozenset(rechained - touched)


def _same_runtime_fields(a: cache_pb2.CacheObject, b: cache_pb2.CacheObject) -> bool:
    """Whether two runtime objects are equal but for their spec (a stored runtime holds none:
    ``store.prepare_write``; a proposed one may)."""
    which = a.WhichOneof("object")
    if which is None or which != b.WhichOneof("object"):
        return False
    return fields_but_spec(getattr(a, which)) == fields_but_spec(getattr(b, which))


def _same_object(old: Snapshot, new: Snapshot, key: Key) -> bool:
    """Whether the object ``key`` is the same in both snapshots (absent from both counts as the
    same); a runtime's spec is its compiled runtime's (``Runtime.spec``)."""
    a, b = old.objects.get(key), new.objects.get(key)
    if a is b:
        return True
    if a is None or b is None:
        return False
    if key[0] not in _RUNTIME_KINDS:
        return a == b
    x, y = _runtime(old, key), _runtime(new, key)
    if x is None or y is None:
        return a == b
    return (x.spec is y.spec or x.spec == y.spec) and _same_runtime_fields(a, b)


def _priorities_only(old: Snapshot, new: Snapshot, key: Key) -> bool:
    """Whether the runtime ``key`` is in both snapshots and differs only in its
    supportedModelFormats entries' ``priority``."""
    a, b = old.objects.get(key), new.objects.get(key)
    x, y = _runtime(old, key), _runtime(new, key)
    if a is None or b is None or x is None or y is None or not _same_runtime_fields(a, b):
        return False
    a_spec, b_spec = x.spec, y.spec
    if len(a_spec.supported_model_formats) != len(b_spec.supported_model_formats):
        return False
    if all(p.priority == q.priority for p, q in zip(a_spec.supported_model_formats, b_spec.supported_model_formats)):
        return False  # a change elsewhere
    unprioritized = []
    for spec in (a_spec, b_spec):
        copy = types_pb2.ServingRuntimeSpec()
        copy.CopyFrom(spec)
        for entry in copy.supported_model_formats:
            entry.ClearField("priority")
        unprioritized.append(copy)
    return unprioritized[0] == unprioritized[1]


def index_keys_of(old: Snapshot, new: Snapshot, key: Key) -> set[IndexKey]:
    """The index keys a write of the object ``key`` touches (its old and new version); a
    runtime's scope key only when more than its entries' priorities changed (see the module
    docstring)."""
    out: set[IndexKey] = {("object", key)}
    if key[0] in _RUNTIME_KINDS:
        scope = key[1] if key[0] == d.SERVING_RUNTIME else None
        if not _priorities_only(old, new, key):
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
        """Evaluate every InferenceService of ``snapshot`` (each distinct evaluation once,
        ``Evaluations``)."""
        evaluations = Evaluations(snapshot)
        tracked = {key: evaluations.tracked(isvc) for key, isvc in sorted(snapshot.inference_services.items())}
        index: dict[IndexKey, set[IsvcKey]] = {}
        for key, entry in tracked.items():
            for dep in entry.deps:
                index.setdefault(dep, set()).add(key)
        return cls(tracked, index)

    def outcomes(self) -> dict[IsvcKey, Outcome]:
        """(namespace, name) -> outcome, sorted."""
        return {key: entry.outcome for key, entry in self.tracked.items()}

    def affected(
        self, touched: Iterable[Key], rechained: Iterable[Key], index_keys: dict[Key, frozenset[IndexKey]]
    ) -> set[IsvcKey]:
        """The InferenceServices whose outcome a write can change: those it touches, and those
        the index holds under ``("object", key)`` of a ``rechained`` runtime or under the index
        keys of a touched object (``index_keys``, from ``index_keys_of``)."""
        out = {(key[1], key[2]) for key in touched if key[0] == d.INFERENCE_SERVICE}
        keys: set[IndexKey] = {("object", key) for key in rechained}
        for key in touched:
            keys |= index_keys[key]
        for index_key in keys:
            found = self.index.get(index_key)
            if found:
                out |= found
        return out

    def advance(self, old: Snapshot, new: Snapshot, written: Iterable[Key] | None = None) -> Advance:
        """The Selections of ``new``, given that this is ``old``'s: only the InferenceServices the
        difference can move are evaluated again (on ``new``), each distinct evaluation once
        (``Evaluations``). ``written``: as for ``diff``. ``new`` follows ``old`` in one store: a
        ``RuntimeReady`` condition an outcome holds stays written."""
        if not self.tracked and not new.inference_services:
            return Advance(self, (), 0, frozenset())
        touched, rechained = diff(old, new, written)
        index_keys = {key: frozenset(index_keys_of(old, new, key)) for key in touched}
        affected = self.affected(touched, rechained, index_keys)
        if not affected:
            return Advance(self, (), 0, touched, 0, index_keys)
        tracked, index = dict(self.tracked), dict(self.index)
        copied: set[IndexKey] = set()

        def members(index_key: IndexKey) -> set[IsvcKey]:
            if index_key not in copied:
                copied.add(index_key)
                index[index_key] = set(index.get(index_key, ()))
            return index[index_key]

        changes = []
        added = False  # a new key: ``tracked`` is sorted again (replacing or deleting keeps the order)
        evaluations = Evaluations(new)
        for key in sorted(affected):
            before = self.tracked.get(key)
            isvc = new.inference_services.get(key)
            if isvc is None:
                after = None
            else:
                same = before is not None and old.inference_services.get(key) is isvc
                had_condition = before is not None and before.outcome.condition is not None
                known = before.inputs if same and before is not None else None
                after = evaluations.tracked(isvc, known, had_condition, before)
            if after is None:
                tracked.pop(key, None)
            else:
                added = added or before is None
                tracked[key] = after
            old_deps = before.deps if before is not None else frozenset()
            new_deps = after.deps if after is not None else frozenset()
            if old_deps != new_deps:
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
        return Advance(
            Selections(dict(sorted(tracked.items())) if added else tracked, index),
            tuple(changes),
            reevaluated,
            touched,
            evaluations.count,
            index_keys,
        )


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
    """The Selections of ``snapshot``: the registered ones; else, when the last registered
    snapshot is one of the same store (``Snapshot.lineage``), those advanced to it (``advance``
    holds between any two snapshots of a store, so a caller that reads the store's newest
    snapshot before the watch tracker has processed it gets, at the cost of the write, what the
    tracker will give: a ``RuntimeReady`` condition once written stays written); else built from
    scratch (another store's outcomes, and the conditions they wrote, never carry over). The
    result is registered."""
    with _REGISTRY_LOCK:
        found = _REGISTRY.get(snapshot)
        latest = _latest
    if found is not None:
        return found
    base = latest[0]() if latest is not None else None
    if base is not None and latest is not None and base.lineage is snapshot.lineage:
        found = latest[1].advance(base, snapshot).selections
    else:
        found = Selections.build(snapshot)
    register(snapshot, found)
    return found
