"""The ServingRuntime / ClusterServingRuntime validating webhooks (pure; no gRPC imports).

``validate_runtime(snapshot, kind, runtime, old)``: OME's admission verdict on a CREATE or UPDATE
(``old``: the stored runtime) against ``snapshot``, the runtime taken with the CRD defaults and in
place of a cached runtime of the same key; ``deletion_verdict(kind)``: a DELETE is allowed with
nothing checked (OME registers the webhooks for CREATE and UPDATE only, ome-selection-facts.md
5.3). ``inheritance_chain`` (root first) is returned whenever a named parent chain resolves.

Checks, in order; the first failure is the denial (the docs order 1-4 before the disabled cut
and 6-8 after it; where they are silent, the order of the Common errors table and facts 5.3):

1. profile marker: ``ome.io/runtime-profile: "true"`` needs ``spec.disabled: true``
   (runtime-inheritance.md, "What admission checks");
2. inheritance: ``ome.io/inherit-from`` resolves, at most five runtimes, through the snapshot's
   own walk (runtime-inheritance.md, "Chain limits");
3. ``scalingPolicy.mode`` other than ``Independent``: ``ScalingModeNotImplemented``; on UPDATE
   only a policy this write sets or changes (serving-runtimes.md, "Scaling policy");
4. ``autoscalerPolicyRef`` in any component config (serving-runtimes.md, "The engine, decoder
   and router");
5. a runtime whose own ``spec.disabled`` is true stops here, allowed (serving-runtimes.md,
   "Common errors");
6. each component's autoscaler: KEDA triggers, HPA metrics, ``idleReplicaCount`` below
   ``minReplicas`` (serving-runtimes.md, "Common errors");
7. every own ``acceleratorClasses`` name is a cached AcceleratorClass (accelerator-classes.md,
   "Change or delete a class");
8. ``autoSelect`` entries of one name set one priority (runtime-selection-scoring.md; facts 5.3).

Not reproduced: the public code's ``workers`` / ``DEPLOYMENT_MODE`` check and its cross-runtime
``same priority assigned`` check (neither is in the docs; facts 5.3).
"""

from __future__ import annotations

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
from ome_selector.validation import COMPONENT_CONFIGS, KIND_TO_FIELD, object_key, validate_object

SERVING_RUNTIME_WEBHOOK = "servingruntime.ome-webhook-server.validator"
CLUSTER_SERVING_RUNTIME_WEBHOOK = "clusterservingruntime.ome-webhook-server.validator"
RUNTIME_PROFILE_ANNOTATION = "ome.io/runtime-profile"

_WEBHOOKS = {d.SERVING_RUNTIME: SERVING_RUNTIME_WEBHOOK, d.CLUSTER_SERVING_RUNTIME: CLUSTER_SERVING_RUNTIME_WEBHOOK}
_MESSAGE_TYPES = {
    d.SERVING_RUNTIME: types_pb2.ServingRuntime,
    d.CLUSTER_SERVING_RUNTIME: types_pb2.ClusterServingRuntime,
}


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
    getattr(obj, KIND_TO_FIELD[kind]).CopyFrom(runtime)
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
    message = getattr(obj, KIND_TO_FIELD[kind])
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
        return deny(messages.PROFILE_NOT_DISABLED)
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
        return deny(messages.unknown_accelerator_classes(missing))
    format_name = _priority_error(spec)
    if format_name is not None:
        return deny(messages.different_priorities(format_name, kind, message.metadata.name))
    return RuntimeVerdict(True, "", webhook, chain)
