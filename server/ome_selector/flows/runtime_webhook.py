"""The ServingRuntime / ClusterServingRuntime validating webhooks (pure; no gRPC imports).

``validate_runtime(snapshot, kind, runtime, old)`` answers what OME's admission webhook
(``servingruntime.ome-webhook-server.validator`` or
``clusterservingruntime.ome-webhook-server.validator``) says when the runtime is created or
updated (``old``: the stored runtime) against the cluster described by ``snapshot``;
``deletion_verdict(kind)`` when it is deleted. The runtime is taken with the CRD defaults
applied (``ingest.apply_defaults``); when the cache already holds a runtime under the same key,
the new object replaces it for every check (so a chain that runs through the runtime itself is
resolved with its new annotation).

Operations: OME registers both webhooks for CREATE and UPDATE only (ome-selection-facts.md 5.3),
so a DELETE is allowed with nothing checked, even of a parent that children inherit from:
"Deleting or changing a parent later can still break the chains below it" (runtime-inheritance.md,
"What admission checks"). An UPDATE gets every check a CREATE gets, on the new object: "the
admission webhook rejects creating or updating an enabled runtime that lists [a deleted class]"
(accelerator-classes.md, "Change or delete a class"). The one rule that reads the old object is
the ``scalingPolicy`` ratchet (check 3).

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
3. **Scaling policy** (serving-runtimes.md, "Scaling policy"): any ``scalingPolicy.mode`` but
   ``Independent`` (the default; unset or empty counts as it) is rejected with the reason
   ``ScalingModeNotImplemented``. On UPDATE with the old object, only a policy this write sets or
   changes is checked, so a stored runtime that already carries one keeps accepting unrelated
   updates (OME's ratchet; ratios compared as quantities, ``1`` equals ``1000m``).
4. **autoscalerPolicyRef** (serving-runtimes.md, "The engine, decoder and router": "since v1.3 the
   webhook rejects ``autoscalerPolicyRef`` in a runtime"), in ``engineConfig``, ``decoderConfig``,
   ``routerConfig`` order.
5. **A disabled runtime stops here, allowed** (serving-runtimes.md, "Common errors": "For a
   disabled runtime, it checks only the inheritance, ``scalingPolicy`` and
   ``autoscalerPolicyRef``"). "Disabled" is the runtime's own ``spec.disabled``, as the profile
   rule reads it; a child that inherits ``disabled: true`` but does not set it counts as enabled
   here, as it does for auto-selection.
6. **Each component's autoscaler** (serving-runtimes.md, "Common errors"), ``engineConfig``,
   ``decoderConfig``, ``routerConfig``: ``class: KEDA`` needs at least one trigger; each
   ``hpa.metrics`` entry of ``class: HPA`` needs a known ``type`` and that source set; with
   ``class: KEDA``, ``keda.idleReplicaCount`` must be below the component's ``minReplicas`` when
   both are set. A ``class`` outside its enum never gets here: the CRD rejects it
   (``validation.runtime_spec_violations``).
7. **Accelerator classes** (accelerator-classes.md, "Change or delete a class";
   runtime-accelerator-class-matching.md): every name in the runtime's own
   ``acceleratorRequirements.acceleratorClasses`` must be a cached AcceleratorClass, else
   ``unknown accelerator classes referenced in AcceleratorRequirements: [a b]`` (missing names in
   list order, duplicates kept, Go list format). An update of an enabled runtime that still lists a
   deleted class is rejected the same way.
8. **Priorities within the runtime** (runtime-selection-scoring.md; serving-runtimes.md, "Common
   errors"; facts 5.3): ``autoSelect: true`` entries with the same entry ``name`` (an empty name
   is the key ``""``) that set priorities must set the same one; otherwise ``different priorities
   assigned for the model format <name> under the servingruntime <rt>`` (``clusterservingruntime``
   for the cluster kind). It always runs: the docs do not make it depend on other runtimes
   existing (the public code's loop quirk of facts 5.3 is not reproduced).

Why this order: the docs say a disabled runtime is checked only for its inheritance,
``scalingPolicy`` and ``autoscalerPolicyRef``, so those (1-4) come before the disabled cut (5),
and the spec checks (6-8) after it. The docs do not order 1 against 2, nor 7 against 8; this
module puts the profile marker first (a profile is then judged as a profile before its chain) and
classes before priorities (the order of the Common errors table and of facts 5.3); 3, 4 and 6
follow the order of the sentence that names them, which is also OME's.

Not reproduced: the public code's spec-level ``workers`` / ``DEPLOYMENT_MODE`` configuration check
(fields not in our protos, and not in the docs) and its cross-runtime ``same priority assigned``
check (not in the docs, ``protocolVersions`` "has no effect", and facts 5.3: it never fires).

``inheritance_chain`` (root first) is returned whenever the runtime names a parent and the chain
resolves, whatever the verdict; it is empty otherwise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import apply_defaults
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.domain.errors import RequestError
from ome_selector.domain.quantities import parse_quantity
from ome_selector.texts import messages
from ome_selector.texts.messages import go_list
from ome_selector.validation import COMPONENT_CONFIGS, object_key, validate_object

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


def _ratio(text: str) -> object:
    """A ratio as Kubernetes compares quantities: by value (``1`` and ``1000m`` are one ratio);
    text that is no quantity stays text."""
    value = parse_quantity(text)
    return text if value is None else value


def _same_policy(old: types_pb2.ServingRuntimeSpec, new: types_pb2.ServingRuntimeSpec) -> bool:
    """Whether the write leaves ``scalingPolicy`` as it was, with Kubernetes' semantic equality:
    a set policy differs from none, and so does a set ``proportional``; ``mode`` and ``anchor``
    are plain strings; ratios compare as quantities."""
    if old.HasField("scaling_policy") != new.HasField("scaling_policy"):
        return False
    a, b = old.scaling_policy, new.scaling_policy
    if a.mode != b.mode or a.HasField("proportional") != b.HasField("proportional"):
        return False
    p, q = a.proportional.ratios, b.proportional.ratios
    return (
        a.proportional.anchor == b.proportional.anchor
        and p.keys() == q.keys()
        and all(_ratio(p[k]) == _ratio(q[k]) for k in p)
    )


def scaling_policy_error(spec: types_pb2.ServingRuntimeSpec, old: types_pb2.ServingRuntimeSpec | None) -> str | None:
    """Check 3: ``ScalingModeNotImplemented`` for ``Proportional`` or ``Pinned`` (serving-runtimes.md,
    "Scaling policy"); on UPDATE (``old``: the stored spec) only when the write sets or changes
    the policy."""
    if old is not None and _same_policy(old, spec):
        return None
    mode = spec.scaling_policy.mode
    if mode in ("", "Independent"):
        return None
    return messages.SCALING_MODE_NOT_IMPLEMENTED.format(mode=mode)


def _json_name(message_type: type, field: str) -> str:
    """The manifest's name of ``field`` (``engine_config`` -> ``engineConfig``)."""
    return str(message_type.DESCRIPTOR.fields_by_name[field].json_name)  # type: ignore[attr-defined]


def policy_ref_error(spec: types_pb2.ServingRuntimeSpec) -> str | None:
    """Check 4: the first component config with an ``autoscalerPolicyRef`` (serving-runtimes.md,
    "The engine, decoder and router")."""
    for name in COMPONENT_CONFIGS:
        if getattr(spec, name).HasField("autoscaler_policy_ref"):
            return messages.RUNTIME_AUTOSCALER_POLICY_REF.format(
                component=_json_name(types_pb2.ServingRuntimeSpec, name)
            )
    return None


# hpa.metrics[].type -> the MetricSpec field that holds that source.
_METRIC_SOURCES: dict[str, Literal["resource", "pods", "object", "external", "container_resource"]] = {
    "Resource": "resource",
    "Pods": "pods",
    "Object": "object",
    "External": "external",
    "ContainerResource": "container_resource",
}


def _autoscaler_error(
    component: types_pb2.EngineSpec | types_pb2.DecoderSpec | types_pb2.RouterSpec,
) -> str | None:
    """One component's autoscaler block: KEDA triggers, HPA metric entries, KEDA idle replicas
    below ``minReplicas``, in that order; None when it passes or there is no block."""
    if not component.HasField("autoscaler"):
        return None
    autoscaler = component.autoscaler
    cls, keda = autoscaler.autoscaler_class, autoscaler.keda
    if cls == "KEDA" and not keda.triggers:
        return messages.KEDA_TRIGGERS_REQUIRED
    if cls == "HPA":
        for i, metric in enumerate(autoscaler.hpa.metrics):
            if not metric.type:
                return messages.HPA_METRIC_TYPE_EMPTY.format(index=i)
            source = _METRIC_SOURCES.get(metric.type)
            if source is None:
                return messages.hpa_metric_type_unknown(i, metric.type)
            if not metric.HasField(source):
                return messages.HPA_METRIC_SOURCE_MISSING.format(
                    index=i, type=metric.type, source=_json_name(types_pb2.MetricSpec, source)
                )
    if cls == "KEDA" and keda.HasField("idle_replica_count") and component.HasField("min_replicas"):
        if keda.idle_replica_count >= component.min_replicas:
            return messages.KEDA_IDLE_BELOW_MIN.format(idle=keda.idle_replica_count, min=component.min_replicas)
    return None


def autoscaler_error(spec: types_pb2.ServingRuntimeSpec) -> str | None:
    """Check 6: the first component config whose ``autoscaler`` fails, as ``<config>: <reason>``
    (serving-runtimes.md, "Common errors")."""
    for name in COMPONENT_CONFIGS:
        error = _autoscaler_error(getattr(spec, name))
        if error is not None:
            return messages.COMPONENT_AUTOSCALER.format(
                component=_json_name(types_pb2.ServingRuntimeSpec, name), error=error
            )
    return None


def deletion_verdict(kind: str) -> RuntimeVerdict:
    """The webhook's answer to deleting a ``kind`` runtime: allowed, nothing checked (the webhooks
    are not registered for DELETE; see the module docstring). Raises ``ValueError`` for an unknown
    ``kind``."""
    webhook = _WEBHOOKS.get(kind)
    if webhook is None:
        raise ValueError(f"kind must be ServingRuntime or ClusterServingRuntime, not {kind!r}")
    return RuntimeVerdict(True, "", webhook, ())


def validate_runtime(
    snapshot: Snapshot,
    kind: str,
    runtime: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime,
    old: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime | None = None,
) -> RuntimeVerdict:
    """The webhook's verdict on creating (``old`` None) or updating ``runtime`` (``old``: the
    stored runtime, when the caller has it; without it an update is checked as a create). See the
    module docstring for the checks and their order. Raises ``RequestError`` (INVALID_ARGUMENT)
    for an object the API server would not accept (bad name or namespace, priority below 1, an
    enum value outside the CRD's, ...), ``ValueError`` / ``TypeError`` for an unknown ``kind`` or
    a message of the other kind."""
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
    error = scaling_policy_error(spec, old.spec if old is not None else None) or policy_ref_error(spec)
    if error is not None:
        return deny(error)
    if disabled:
        return RuntimeVerdict(True, "", webhook, chain)
    error = autoscaler_error(spec)
    if error is not None:
        return deny(error)
    missing = [
        name for name in spec.accelerator_requirements.accelerator_classes if name not in snapshot.accelerator_classes
    ]
    if missing:
        return deny(unknown_accelerator_classes(missing))
    format_name = _priority_error(spec)
    if format_name is not None:
        return deny(different_priorities(format_name, kind, message.metadata.name))
    return RuntimeVerdict(True, "", webhook, chain)
