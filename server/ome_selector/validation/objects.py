"""Cache objects: the kinds a CacheObject holds, their keys, and ``validate_object`` (kind, names,
namespaces, metadata, bounds, the CRD enums and required fields), with the spec checks a
selection request's InferenceService and inline model spec share."""

from __future__ import annotations

from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation
from ome_selector.texts import requests
from ome_selector.validation.bounds import _bounded, object_size
from ome_selector.validation.names import MAX_LIST_ITEMS, metadata, validate_name

# ---- cache objects: kinds, names, CRD enums and bounds (every RPC and cache write) ------------

_ONEOF_KIND = {
    "serving_runtime": d.SERVING_RUNTIME,
    "cluster_serving_runtime": d.CLUSTER_SERVING_RUNTIME,
    "base_model": d.BASE_MODEL,
    "cluster_base_model": d.CLUSTER_BASE_MODEL,
    "accelerator_class": d.ACCELERATOR_CLASS,
    "inference_service": d.INFERENCE_SERVICE,
    "controller_revision": d.CONTROLLER_REVISION,
}
KIND_TO_FIELD = {kind: field for field, kind in _ONEOF_KIND.items()}  # kind -> CacheObject's oneof field
NAMESPACED = frozenset({d.SERVING_RUNTIME, d.BASE_MODEL, d.INFERENCE_SERVICE, d.CONTROLLER_REVISION})
KIND_TO_ENUM = {
    d.SERVING_RUNTIME: cache_pb2.OBJECT_KIND_SERVING_RUNTIME,
    d.CLUSTER_SERVING_RUNTIME: cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME,
    d.BASE_MODEL: cache_pb2.OBJECT_KIND_BASE_MODEL,
    d.CLUSTER_BASE_MODEL: cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL,
    d.ACCELERATOR_CLASS: cache_pb2.OBJECT_KIND_ACCELERATOR_CLASS,
    d.INFERENCE_SERVICE: cache_pb2.OBJECT_KIND_INFERENCE_SERVICE,
    d.CONTROLLER_REVISION: cache_pb2.OBJECT_KIND_CONTROLLER_REVISION,
}
RUNTIME_KINDS = (d.SERVING_RUNTIME, d.CLUSTER_SERVING_RUNTIME)
# Kind -> (apiVersion, the field holding what the object describes): a ControllerRevision of
# ``apps/v1`` holds a runtime spec in ``data``; the ome.io kinds hold ``spec``.
_API_VERSION = "ome.io/v1beta1"
_BODY = {d.CONTROLLER_REVISION: ("apps/v1", "data")}
ENUM_TO_KIND = {v: k for k, v in KIND_TO_ENUM.items()}
Key = tuple[str, str, str]
# The InferenceService CRD's enums the API server checks before OME sees an object:
# ``spec.deploymentMode`` (deployment-modes.md) and each ``acceleratorSelector.policy``
# (select-accelerators.md).
SERVICE_MODES = ("OMENative", "RawDeployment")
POLICIES = ("BestFit", "Cheapest", "MostCapable", "FirstAvailable")
_POLICIES = ("", *POLICIES)


def unwrap(obj: cache_pb2.CacheObject) -> tuple[str, Message] | None:
    """(kind, message) of a CacheObject, or None when no object is set."""
    which = obj.WhichOneof("object")
    if which is None:
        return None
    return _ONEOF_KIND[which], getattr(obj, which)


def object_key(obj: cache_pb2.CacheObject) -> Key:
    """(kind, namespace, name) of a valid CacheObject."""
    unwrapped = unwrap(obj)
    assert unwrapped is not None
    kind, message = unwrapped
    meta = message.metadata  # type: ignore[attr-defined]
    return (kind, meta.namespace if kind in NAMESPACED else "", meta.name)


def policy_fields(spec: types_pb2.InferenceServiceSpec) -> list[tuple[str, types_pb2.AcceleratorSelector]]:
    """(proto path, selector) of each AcceleratorSelector with a ``policy`` set: the service's
    ``spec.acceleratorSelector`` and the engine's and decoder's ``acceleratorOverride``."""
    out = [("spec.accelerator_selector", spec.accelerator_selector)]
    out += [(f"spec.{c}.accelerator_override", getattr(spec, c).accelerator_override) for c in ("engine", "decoder")]
    return [(f"{path}.policy", selector) for path, selector in out if selector.HasField("policy")]


def isvc_spec_violations(spec: types_pb2.InferenceServiceSpec, base: str) -> list[FieldViolation]:
    """Violations of an InferenceService's spec against the CRD enums (``SERVICE_MODES``,
    ``POLICIES``), paths under ``base`` (``inference_service``); the selection RPCs and a cached
    InferenceService are checked alike."""
    violations = []
    if spec.HasField("deployment_mode") and spec.deployment_mode not in SERVICE_MODES:
        violations.append(
            FieldViolation(f"{base}.spec.deployment_mode", errors.unsupported(spec.deployment_mode, SERVICE_MODES))
        )
    for path, selector in policy_fields(spec):
        if selector.policy not in _POLICIES:
            violations.append(FieldViolation(f"{base}.{path}", errors.unsupported(selector.policy, POLICIES)))
    return violations


def validate_object(
    obj: cache_pb2.CacheObject, field_prefix: str = "", *, spec_checked: bool = False, size: int | None = None
) -> list[FieldViolation]:
    """Every violation of one CacheObject (at most ``MAX_VIOLATIONS_PER_OBJECT`` of the
    bounds); paths are proto field paths under ``field_prefix`` (``fieldpaths.json_path`` gives
    the manifest's camelCase).

    Checked: exactly one kind set; the object's size (``MAX_OBJECT_BYTES``); the name
    (DNS-1123 subdomain) and namespace (DNS-1123 label; none for cluster-scoped kinds); label and
    annotation keys and sizes; ``kind`` and ``apiVersion`` when set; version lengths and list
    lengths (py); for runtimes, ``priority`` at least 1 and the CRD-required
    ``modelFormat`` and ``modelFramework`` (each with a name) of every supportedModelFormats
    entry, and ``runtime_spec_violations``; for models, ``model_spec_violations``; for
    InferenceServices, the CRD enums (``isvc_spec_violations``); for runtime revisions, ``data``
    (checked as a runtime spec) and a non-negative ``revision``.

    ``spec_checked``: the caller knows a runtime's spec passes the spec checks (the bounds under
    it and the runtime CRD's; ``cache.specs`` remembers the specs that did), so only the object's
    own fields are checked. Those checks add nothing to a spec that passes them, so the
    violations are the same. ``size``: the object's ``ByteSize()`` when ``obj`` was decoded
    without its spec (``cache.wire_objects``), else measured here.
    """
    which = obj.WhichOneof("object")
    if which is None:
        return [FieldViolation(field_prefix.rstrip(".") or "object", requests.ONE_KIND)]
    kind, message = _ONEOF_KIND[which], getattr(obj, which)
    base = f"{field_prefix}{which}"
    too_big = object_size(message, base, size)
    if too_big:
        return too_big  # nothing else of it is read
    meta = message.metadata  # type: ignore[attr-defined]
    out = validate_name(meta.name, f"{base}.metadata.name")
    if kind in NAMESPACED:
        out += validate_name(meta.namespace, f"{base}.metadata.namespace", "namespace")
    elif meta.namespace:
        out.append(FieldViolation(f"{base}.metadata.namespace", errors.forbidden(requests.cluster_scoped(kind))))
    out += metadata(meta, f"{base}.metadata")
    api_version, body = _BODY.get(kind, (_API_VERSION, "spec"))
    if message.kind and message.kind != kind:  # type: ignore[attr-defined]
        out.append(FieldViolation(f"{base}.kind", errors.unsupported(message.kind, (kind,))))  # type: ignore[attr-defined]
    if message.api_version and message.api_version != api_version:  # type: ignore[attr-defined]
        out.append(FieldViolation(f"{base}.api_version", errors.unsupported(message.api_version, (api_version,))))  # type: ignore[attr-defined]
    if spec_checked and kind in RUNTIME_KINDS:
        return out
    _bounded(getattr(message, body), f"{base}.{body}", out)
    if kind == d.INFERENCE_SERVICE:
        out += isvc_spec_violations(message.spec, base)  # type: ignore[attr-defined]
    if kind in RUNTIME_KINDS:
        out += _crd_runtime_violations(message.spec, f"{base}.spec")  # type: ignore[attr-defined]
    elif kind in (d.BASE_MODEL, d.CLUSTER_BASE_MODEL):
        out += model_spec_violations(message.spec, f"{base}.spec")  # type: ignore[attr-defined]
    elif kind == d.CONTROLLER_REVISION:
        out += _revision_violations(message, base)  # type: ignore[arg-type]
    return out


def _crd_runtime_violations(spec: types_pb2.ServingRuntimeSpec, path: str) -> list[FieldViolation]:
    """What the runtime CRDs require of a ServingRuntimeSpec: every supportedModelFormats entry
    has a ``priority`` of at least 1 when set, and a ``modelFormat`` and ``modelFramework``, each
    with a name; then ``runtime_spec_violations`` (the scaling fields)."""
    out: list[FieldViolation] = []
    for i, entry in enumerate(spec.supported_model_formats[:MAX_LIST_ITEMS]):
        entry_path = f"{path}.supported_model_formats[{i}]"
        if entry.HasField("priority") and entry.priority < 1:
            out.append(
                FieldViolation(
                    f"{entry_path}.priority", errors.invalid_value(entry.priority, "must be greater than or equal to 1")
                )
            )
        for field in ("model_format", "model_framework"):
            if not entry.HasField(field):
                out.append(FieldViolation(f"{entry_path}.{field}", errors.required()))
            elif not getattr(entry, field).name:
                out.append(FieldViolation(f"{entry_path}.{field}.name", errors.required()))
    return out + runtime_spec_violations(spec, path)


def _revision_violations(revision: types_pb2.ControllerRevision, base: str) -> list[FieldViolation]:
    """What the API server requires of a ControllerRevision (``data`` is mandatory, ``revision``
    non-negative), and of the runtime spec OME stores in ``data`` what the runtime CRDs require."""
    out: list[FieldViolation] = []
    if not revision.HasField("data"):
        out.append(FieldViolation(f"{base}.data", errors.required("data is mandatory")))
    else:
        out += _crd_runtime_violations(revision.data, f"{base}.data")
    if revision.revision < 0:
        out.append(
            FieldViolation(
                f"{base}.revision", errors.invalid_value(revision.revision, "must be greater than or equal to 0")
            )
        )
    return out


# CRD enums the API server checks before any webhook, of the v1.3 fields the protos model
# (ome-docs/reference/api/ome.v1beta1.md, "Allowed values" of ScalingMode, AutoscalerClass and
# AutoscalerPolicyRef.kind; Distribution is ``domain.DISTRIBUTIONS``).
SCALING_MODES = ("Independent", "Proportional", "Pinned")
AUTOSCALER_CLASSES = ("HPA", "KEDA", "External", "None")
AUTOSCALER_POLICY_KINDS = ("AutoscalerPolicy", "ClusterAutoscalerPolicy")
COMPONENT_CONFIGS = ("engine_config", "decoder_config", "router_config")


def _enum(owner: Message, field: str, allowed: tuple[str, ...], path: str) -> list[FieldViolation]:
    """``<path>.<field>: Unsupported value: ...`` when ``owner`` sets ``field`` outside ``allowed``."""
    value = getattr(owner, field)
    if owner.HasField(field) and value not in allowed:
        return [FieldViolation(f"{path}.{field}", errors.unsupported(value, allowed))]
    return []


def model_spec_violations(spec: types_pb2.BaseModelSpec, path: str) -> list[FieldViolation]:
    """``distribution`` outside its CRD enum (``PerNode``, ``Sharded``; base-models.md,
    "Distribution"); ``path`` is the proto path of ``spec``."""
    return _enum(spec, "distribution", d.DISTRIBUTIONS, path)


def runtime_spec_violations(spec: types_pb2.ServingRuntimeSpec, path: str) -> list[FieldViolation]:
    """What the CRD checks of a runtime's v1.3 scaling fields: ``scalingPolicy.mode`` in its
    enum; in each of ``engineConfig``, ``decoderConfig`` and ``routerConfig``, an ``autoscaler``
    with its required ``class`` in its enum, and an ``autoscalerPolicyRef`` with its required
    ``name`` and ``kind`` in its enum. ``path`` is the proto path of ``spec``."""
    out = _enum(spec.scaling_policy, "mode", SCALING_MODES, f"{path}.scaling_policy")
    for name in COMPONENT_CONFIGS:
        component = getattr(spec, name)
        base = f"{path}.{name}"
        if component.HasField("autoscaler"):
            if not component.autoscaler.HasField("autoscaler_class"):
                out.append(FieldViolation(f"{base}.autoscaler.autoscaler_class", errors.required()))
            out += _enum(component.autoscaler, "autoscaler_class", AUTOSCALER_CLASSES, f"{base}.autoscaler")
        if component.HasField("autoscaler_policy_ref"):
            ref = component.autoscaler_policy_ref
            if not ref.name:
                out.append(FieldViolation(f"{base}.autoscaler_policy_ref.name", errors.required()))
            out += _enum(ref, "kind", AUTOSCALER_POLICY_KINDS, f"{base}.autoscaler_policy_ref")
    return out
