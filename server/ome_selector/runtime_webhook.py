"""The ServingRuntime / ClusterServingRuntime validating webhooks (pure; no gRPC imports).

``validate_runtime(snapshot, kind, runtime)`` answers what OME's admission webhook
(``servingruntime.ome-webhook-server.validator`` or
``clusterservingruntime.ome-webhook-server.validator``) says when the runtime is created or
updated against the cluster described by ``snapshot``. The runtime is taken with the CRD defaults
applied (``ingest.apply_defaults``); when the cache already holds a runtime under the same key,
the new object replaces it for every check (so a chain that runs through the runtime itself is
resolved with its new annotation).

Checks, in order; the first failure is the denial:

1. **Profile marker** (runtime-inheritance.md, "What admission checks"): the annotation
   ``ome.io/runtime-profile: "true"`` (exactly that string) requires the runtime's own
   ``spec.disabled: true``.
2. **Inheritance** (runtime-inheritance.md, "Chain limits" and "What admission checks"; facts
   8.7): a non-empty ``ome.io/inherit-from`` must resolve. A ClusterServingRuntime's parents are
   ClusterServingRuntimes; a ServingRuntime's are looked up in its namespace, then among the
   ClusterServingRuntimes, for the whole walk. At most five runtimes, names unique by name only;
   depth is checked before cycles and missing parents. The walk is the snapshot's own
   (``Snapshot._resolve_inheritance`` run on a temporary snapshot of the runtimes in scope with the
   new object in place), so the webhook and the ``InheritanceReady`` / named-runtime paths agree.
3. **A disabled runtime stops here, allowed** (serving-runtimes.md, "Common errors": "For a
   disabled runtime, it checks only the inheritance ..."). "Disabled" is the runtime's own
   ``spec.disabled``, as the profile rule reads it; a child that inherits ``disabled: true`` but
   does not set it counts as enabled here, as it does for auto-selection.
4. **Accelerator classes** (accelerator-classes.md, "Change or delete a class";
   runtime-accelerator-class-matching.md): every name in the runtime's own
   ``acceleratorRequirements.acceleratorClasses`` must be a cached AcceleratorClass, else
   ``unknown accelerator classes referenced in AcceleratorRequirements: [a b]`` (missing names in
   list order, duplicates kept, Go list format). An update of an enabled runtime that still lists a
   deleted class is rejected the same way.
5. **Priorities within the runtime** (runtime-selection-scoring.md; serving-runtimes.md, "Common
   errors"; facts 5.3): ``autoSelect: true`` entries with the same entry ``name`` (an empty name
   is the key ``""``) that set priorities must set the same one; otherwise ``different priorities
   assigned for the model format <name> under the servingruntime <rt>`` (``clusterservingruntime``
   for the cluster kind). It always runs: the docs do not make it depend on other runtimes
   existing (the public code's loop quirk of facts 5.3 is not reproduced).

Why this order: the docs say a disabled runtime is checked only for its inheritance, so both
inheritance checks (1, 2) come before the disabled cut (3), and the spec checks (4, 5) after it.
The docs do not order 1 against 2, nor 4 against 5; this module puts the profile marker first (a
profile is then judged as a profile before its chain) and classes before priorities (the order of
the Common errors table and of facts 5.3).

Not expressible with our protos, so not checked: ``scalingPolicy``, ``autoscalerPolicyRef`` and
each component's ``autoscaler`` (serving-runtimes.md, "Common errors"). Also not reproduced: the
public code's spec-level ``workers`` / ``DEPLOYMENT_MODE`` configuration check (fields not in our
protos, and not in the docs) and its cross-runtime ``same priority assigned`` check (not in the
docs, ``protocolVersions`` "has no effect", and facts 5.3: it never fires).

``inheritance_chain`` (root first) is returned whenever the runtime names a parent and the chain
resolves, whatever the verdict; it is empty otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from . import domain as d
from .errors import RequestError
from .ingest import apply_defaults, object_key, validate_object
from .messages import go_list
from .snapshot import Snapshot

SERVING_RUNTIME_WEBHOOK = "servingruntime.ome-webhook-server.validator"
CLUSTER_SERVING_RUNTIME_WEBHOOK = "clusterservingruntime.ome-webhook-server.validator"
RUNTIME_PROFILE_ANNOTATION = "ome.io/runtime-profile"

# runtime-inheritance.md, "What admission checks" (the table's last row).
PROFILE_NOT_DISABLED = 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'

_WEBHOOKS = {d.SERVING_RUNTIME: SERVING_RUNTIME_WEBHOOK, d.CLUSTER_SERVING_RUNTIME: CLUSTER_SERVING_RUNTIME_WEBHOOK}
_MESSAGE_TYPES = {
    d.SERVING_RUNTIME: types_pb2.ServingRuntime,
    d.CLUSTER_SERVING_RUNTIME: types_pb2.ClusterServingRuntime,
}
_ONEOF_FIELDS = {d.SERVING_RUNTIME: "serving_runtime", d.CLUSTER_SERVING_RUNTIME: "cluster_serving_runtime"}


def unknown_accelerator_classes(missing: Sequence[str]) -> str:
    """accelerator-classes.md / runtime-accelerator-class-matching.md: classes that don't exist."""
    return f"unknown accelerator classes referenced in AcceleratorRequirements: {go_list(missing)}"


def different_priorities(format_name: str, kind: str, runtime: str) -> str:
    """runtime-selection-scoring.md (the prefix) and facts 5.3 (the whole text). An empty entry
    name leaves a double space: ``model format  under``."""
    return f"different priorities assigned for the model format {format_name} under the {kind.lower()} {runtime}"


@dataclass(frozen=True, slots=True)
class RuntimeVerdict:
    """The webhook's answer. ``denial_message`` is OME's exact text ("" when allowed);
    ``inheritance_chain`` is root first, when the runtime names a parent and the chain resolves."""

    allowed: bool
    denial_message: str
    webhook: str
    inheritance_chain: tuple[str, ...]


def as_cache_object(
    kind: str, runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime
) -> cache_pb2.CacheObject:
    """``runtime`` as the CacheObject a write would store: validated (``RequestError``) and
    defaulted. ``ValueError`` / ``TypeError`` for an unknown ``kind`` or a message of the other kind."""
    expected = _MESSAGE_TYPES.get(kind)
    if expected is None:
        raise ValueError(f"kind must be ServingRuntime or ClusterServingRuntime, not {kind!r}")
    if not isinstance(runtime, expected):
        raise TypeError(f"a {kind} needs a {expected.__name__} message, not {type(runtime).__name__}")
    obj = cache_pb2.CacheObject()
    getattr(obj, _ONEOF_FIELDS[kind]).CopyFrom(runtime)
    violations = validate_object(obj)
    if violations:
        raise RequestError.invalid(violations)
    return apply_defaults(obj)


def _resolve_chain(snapshot: Snapshot, kind: str, obj: cache_pb2.CacheObject) -> d.Runtime:
    """The new runtime as the snapshot's inheritance resolution sees it, with the new object in
    place of any stored copy (a derived snapshot that is never stored)."""
    key = object_key(obj)
    namespace = key[1]
    scoped = snapshot.with_changes(snapshot.version, {key: obj}, synced=snapshot.synced, generation=snapshot.generation)
    if kind == d.SERVING_RUNTIME:
        return scoped.serving_runtimes[(namespace, key[2])]
    return scoped.cluster_serving_runtimes[key[2]]


def _priority_error(spec: types_pb2.ServingRuntimeSpec) -> str | None:
    """The entry name whose ``autoSelect: true`` entries set different priorities, or None.
    runtime-selection-scoring.md: such entries "can't set different priorities", so any two set
    priorities of one name that differ clash (also when the first such entry sets none)."""
    seen: dict[str, int] = {}
    for entry in spec.supported_model_formats:
        if not (entry.HasField("auto_select") and entry.auto_select) or not entry.HasField("priority"):
            continue
        if seen.setdefault(entry.name, entry.priority) != entry.priority:
            return entry.name
    return None


def validate_runtime(
    snapshot: Snapshot, kind: str, runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime
) -> RuntimeVerdict:
    """The webhook's verdict on creating or updating ``runtime`` (see the module docstring for
    the checks and their order). Raises ``RequestError`` (INVALID_ARGUMENT) for an object the API
    server would not accept (bad name or namespace, priority below 1, ...), ``ValueError`` /
    ``TypeError`` for an unknown ``kind`` or a message of the other kind."""
    obj = as_cache_object(kind, runtime)
    message = getattr(obj, _ONEOF_FIELDS[kind])
    webhook = _WEBHOOKS[kind]
    spec = message.spec
    disabled = spec.HasField("disabled") and spec.disabled

    chain: tuple[str, ...] = ()
    chain_error: str | None = None
    if message.metadata.annotations.get(d.INHERIT_FROM_ANNOTATION):
        resolved = _resolve_chain(snapshot, kind, obj)
        chain, chain_error = resolved.chain, resolved.inheritance_error

    def deny(text: str) -> RuntimeVerdict:
        return RuntimeVerdict(False, text, webhook, chain)

    if message.metadata.annotations.get(RUNTIME_PROFILE_ANNOTATION) == "true" and not disabled:
        return deny(PROFILE_NOT_DISABLED)
    if chain_error is not None:
        return deny(chain_error)
    if disabled:
        return RuntimeVerdict(True, "", webhook, chain)
    missing = [
        name for name in spec.accelerator_requirements.accelerator_classes if name not in snapshot.accelerator_classes
    ]
    if missing:
        return deny(unknown_accelerator_classes(missing))
    format_name = _priority_error(spec)
    if format_name is not None:
        return deny(different_priorities(format_name, kind, message.metadata.name))
    return RuntimeVerdict(True, "", webhook, chain)
