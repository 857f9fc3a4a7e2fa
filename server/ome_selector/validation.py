"""Validation of every input, in one place: each RPC's decode and every cache write call these,
so one input gets the same verdict everywhere. Violations are ``FieldViolation``s with proto
field paths (``texts/fieldpaths.py`` gives the manifest's camelCase).

- Cache objects: ``validate_object`` (kind, names, namespaces, metadata, bounds, CRD enums and
  required fields), ``validate_spec`` (the bounds under any spec), ``isvc_spec_violations``,
  ``model_spec_violations``, ``runtime_spec_violations``; the kinds a CacheObject holds.
- Requests: ``inference_service`` and ``model_spec`` (what a selection request carries).

Bounds: the API server's limits on Kubernetes objects, plus ours (README, "Bounds").

Kubernetes' own (k8s.io/apimachinery ``pkg/util/validation``, ``pkg/api/validation``):

- object names: DNS-1123 subdomain, at most ``MAX_NAME_LENGTH`` (253) characters;
- namespaces: DNS-1123 label, at most ``MAX_NAMESPACE_LENGTH`` (63);
- label keys: an optional DNS-1123 subdomain prefix (at most 253) and ``/``, then a name of at
  most ``MAX_LABEL_VALUE_LENGTH`` (63) alphanumerics, ``-``, ``_``, ``.``; label values: at most
  63 of the same, possibly empty;
- annotations: keys as label keys, keys and values together at most ``MAX_ANNOTATIONS_BYTES``
  (256 KiB);
- one object: at most ``MAX_OBJECT_BYTES`` (1.5 MiB, etcd's default request limit).

Ours: versions at most ``versions.MAX_VERSION_LENGTH`` (128) characters (anything longer is not
a version, and Python refuses to convert numbers of more than 4,300 digits); at most
``MAX_LIST_ITEMS`` (1,024) items in ``supportedModelFormats``, ``acceleratorClasses`` and the
other lists of a runtime; a manifest file at most ``MAX_FILE_BYTES`` (64 MiB).
"""

from __future__ import annotations

import re
from typing import Any

from google.protobuf import timestamp_pb2
from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation
from ome_selector.domain.versions import MAX_VERSION_LENGTH
from ome_selector.texts import requests

MAX_NAME_LENGTH = 253
MAX_NAMESPACE_LENGTH = 63
MAX_LABEL_VALUE_LENGTH = 63
MAX_ANNOTATIONS_BYTES = 256 * 1024
MAX_OBJECT_BYTES = 1536 * 1024
MAX_LIST_ITEMS = 1024
MAX_FILE_BYTES = 64 * 1024 * 1024
# Violations reported for one object at most (the rest are not looked for).
MAX_VIOLATIONS_PER_OBJECT = 16

_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")

SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lowercase alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character, with an optional DNS subdomain prefix and '/'"
)
LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _dns_problem(value: str, limit: int, pattern: re.Pattern[str], rule: str) -> str:
    """What is wrong with ``value`` as a DNS-1123 name of at most ``limit`` characters, as
    Kubernetes' ``IsDNS1123*`` says it (``must be no more than 253 characters``, or the rule;
    an empty value breaks the rule); ``""`` when nothing is."""
    if len(value) > limit:
        return f"must be no more than {limit} characters"
    return "" if pattern.match(value) else rule


def _dns(value: str, path: str, limit: int, pattern: re.Pattern[str], rule: str) -> list[FieldViolation]:
    """Violations of a required DNS-1123 name of at most ``limit`` characters."""
    if not value:
        return [FieldViolation(path, errors.required())]
    problem = _dns_problem(value, limit, pattern, rule)
    return [FieldViolation(path, errors.invalid_value(value, problem))] if problem else []


def name_problem(value: str) -> str:
    """What is wrong with ``value`` as an object name (a DNS-1123 subdomain of at most
    ``MAX_NAME_LENGTH`` characters): ``must be no more than 253 characters`` or
    ``SUBDOMAIN_RULE`` (also for ``""``); ``""`` for a valid name."""
    return _dns_problem(value, MAX_NAME_LENGTH, _SUBDOMAIN, SUBDOMAIN_RULE)


def subdomain(value: str, path: str) -> list[FieldViolation]:
    """Violations of a required DNS-1123 subdomain (an object name, at most 253 characters)."""
    return _dns(value, path, MAX_NAME_LENGTH, _SUBDOMAIN, SUBDOMAIN_RULE)


def label(value: str, path: str) -> list[FieldViolation]:
    """Violations of a required DNS-1123 label (a namespace, at most 63 characters)."""
    return _dns(value, path, MAX_NAMESPACE_LENGTH, _LABEL, LABEL_RULE)


def qualified_name(key: str, path: str) -> list[FieldViolation]:
    """Violations of a label or annotation key: ``[prefix/]name`` (prefix a DNS-1123
    subdomain of at most 253 characters, name at most 63)."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return [FieldViolation(path, errors.invalid_value(key, "prefix part must be non-empty"))]
    if slash:
        if len(prefix) > MAX_NAME_LENGTH:
            return [
                FieldViolation(
                    path, errors.invalid_value(key, f"prefix part must be no more than {MAX_NAME_LENGTH} characters")
                )
            ]
        if not _SUBDOMAIN.match(prefix):
            return [FieldViolation(path, errors.invalid_value(key, "prefix part " + SUBDOMAIN_RULE))]
    if not name:
        return [FieldViolation(path, errors.invalid_value(key, "name part must be non-empty"))]
    if len(name) > MAX_LABEL_VALUE_LENGTH:
        return [
            FieldViolation(
                path, errors.invalid_value(key, f"name part must be no more than {MAX_LABEL_VALUE_LENGTH} characters")
            )
        ]
    if not _QUALIFIED_NAME.match(name):
        return [FieldViolation(path, errors.invalid_value(key, QUALIFIED_NAME_RULE))]
    return []


def metadata(meta: Message, path: str) -> list[FieldViolation]:
    """Violations of ``labels`` and ``annotations`` under ``path`` (an ObjectMeta)."""
    out: list[FieldViolation] = []
    labels = meta.labels  # type: ignore[attr-defined]
    for key in sorted(labels):
        out += qualified_name(key, f"{path}.labels")
        value = labels[key]
        if len(value) > MAX_LABEL_VALUE_LENGTH:
            out.append(FieldViolation(f"{path}.labels", errors.too_long_value(value, MAX_LABEL_VALUE_LENGTH)))
        elif value and not _QUALIFIED_NAME.match(value):
            out.append(FieldViolation(f"{path}.labels", errors.invalid_value(value, LABEL_VALUE_RULE)))
        if len(out) >= MAX_VIOLATIONS_PER_OBJECT:
            return out
    annotations = meta.annotations  # type: ignore[attr-defined]
    total = 0
    for key in sorted(annotations):
        out += qualified_name(key, f"{path}.annotations")
        total += len(key.encode("utf-8", "surrogatepass")) + len(annotations[key].encode("utf-8", "surrogatepass"))
        if len(out) >= MAX_VIOLATIONS_PER_OBJECT:
            return out
    if total > MAX_ANNOTATIONS_BYTES:
        out.append(FieldViolation(f"{path}.annotations", errors.too_long_bytes(MAX_ANNOTATIONS_BYTES)))
    return out


MAX_CACHE_VERSION_LENGTH = 253


def cache_version(value: str, path: str) -> list[FieldViolation]:
    """A cache (snapshot) version longer than 253 characters or with control characters (it is
    echoed in every answer and written to the log)."""
    if len(value) > MAX_CACHE_VERSION_LENGTH:
        return [FieldViolation(path, errors.too_long_value(value, MAX_CACHE_VERSION_LENGTH))]
    if not value.isprintable():
        return [FieldViolation(path, errors.invalid_value(value, "must not contain control characters"))]
    return []


def version(value: str, path: str) -> FieldViolation:
    """The violation of a version longer than ``MAX_VERSION_LENGTH`` characters (the caller
    checks the length, so a path is formatted only for what is reported)."""
    return FieldViolation(path, errors.too_long_value(value, MAX_VERSION_LENGTH))


def items(count: int, path: str) -> FieldViolation:
    """The violation of a list or map of ``count`` items, more than ``MAX_LIST_ITEMS`` (the
    caller checks the count)."""
    return FieldViolation(path, errors.too_many(count, MAX_LIST_ITEMS))


def object_size(message: Message, path: str) -> list[FieldViolation]:
    """An object larger than ``MAX_OBJECT_BYTES`` once serialized."""
    size = message.ByteSize()
    if size > MAX_OBJECT_BYTES:
        return [FieldViolation(path, f"Too long: {size} bytes: may not be more than {MAX_OBJECT_BYTES} bytes")]
    return []


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


def validate_name(value: str, path: str, what: str = "name") -> list[FieldViolation]:
    """Violations for a Kubernetes object name (DNS-1123 subdomain, at most 253 characters), or
    for a namespace when ``what`` is ``namespace`` (DNS-1123 label, at most 63 characters).

    Texts are the API server's (``Required value``; ``Invalid value: "aaaa…" (20000 characters):
    must be no more than 63 characters``; ``Invalid value: "Bad_Name": a lowercase RFC 1123
    subdomain must ...``), the value cut to ``errors.VALUE_PREVIEW`` characters; see py.
    """
    return label(value, path) if what == "namespace" else subdomain(value, path)


_VERSIONED = frozenset({types_pb2.ModelFormat.DESCRIPTOR.full_name, types_pb2.ModelFrameworkSpec.DESCRIPTOR.full_name})


_MAP_ENTRY: dict[object, bool] = {}  # field descriptor -> whether it is a map (GetOptions is slow)


def _is_map(fd: Any) -> bool:
    found = _MAP_ENTRY.get(fd)
    if found is None:
        found = _MAP_ENTRY[fd] = fd.message_type is not None and fd.message_type.GetOptions().map_entry
    return found


# What the bounds walk does with a field: count a list's or map's items (and walk each message
# item), walk a message, measure a version, or measure the version of a ``modelFormat`` /
# ``modelFramework`` (a message whose only bound is its version: no call for it).
_LIST, _LIST_OF_MESSAGES, _MAP, _MAP_OF_MESSAGES, _MESSAGE, _VERSION, _VERSION_OF = range(7)
_PLANS: dict[str, dict[Any, int] | None] = {}  # message type -> field descriptor -> what to do
# Lists nothing reads item by item (a runner's command line is merged, hashed and copied whole):
# the object's size bounds them, and the walk never visits a runner for them.
_UNCOUNTED = frozenset(
    {(types_pb2.Container.DESCRIPTOR.full_name, "command"), (types_pb2.Container.DESCRIPTOR.full_name, "args")}
)


def _plan(desc: Any) -> dict[Any, int] | None:
    """The fields of message type ``desc`` that can hold a bounds violation, each with what the
    walk does there; a field whose type holds no list, map or version at any depth is left out,
    so the walk never visits it. ``None`` while a recursive type is being planned (visit it)."""
    if desc.full_name in _PLANS:
        return _PLANS[desc.full_name]
    _PLANS[desc.full_name] = None
    plan: dict[Any, int] = {}
    versioned = desc.full_name in _VERSIONED
    for fd in desc.fields:
        if _is_map(fd):
            value_type = fd.message_type.fields_by_name["value"].message_type
            plan[fd] = _MAP_OF_MESSAGES if value_type is not None and _plan(value_type) != {} else _MAP
        elif (desc.full_name, fd.name) in _UNCOUNTED:
            continue
        elif fd.is_repeated:
            plan[fd] = _LIST_OF_MESSAGES if fd.message_type is not None and _plan(fd.message_type) != {} else _LIST
        elif fd.message_type is not None:
            sub = _plan(fd.message_type)
            if sub is not None and list(sub.values()) == [_VERSION] and fd.message_type.full_name in _VERSIONED:
                plan[fd] = _VERSION_OF
            elif sub != {}:
                plan[fd] = _MESSAGE
        elif versioned and fd.name == "version":
            plan[fd] = _VERSION
    _PLANS[desc.full_name] = plan
    return plan


def _bounded(message: Message, path: str, out: list[FieldViolation]) -> None:
    """Length of versions and of every list and map under ``message`` (py), visiting only
    the fields ``_plan`` keeps. Field paths are formatted only for what is reported. Only specs
    are walked, so the maps met are never an object's metadata labels and annotations
    (``metadata`` bounds those)."""
    plan = _plan(message.DESCRIPTOR) or {}
    for fd, value in message.ListFields():
        action = plan.get(fd)
        if action is None:
            continue
        if len(out) >= MAX_VIOLATIONS_PER_OBJECT:
            return
        if action == _MESSAGE:
            _bounded(value, f"{path}.{fd.name}", out)
        elif action == _VERSION:
            if len(value) > MAX_VERSION_LENGTH:
                out.append(version(value, f"{path}.{fd.name}"))
        elif action == _VERSION_OF:
            if len(value.version) > MAX_VERSION_LENGTH:
                out.append(version(value.version, f"{path}.{fd.name}.version"))
        else:
            if len(value) > MAX_LIST_ITEMS:
                out.append(items(len(value), f"{path}.{fd.name}"))
            if action == _MAP_OF_MESSAGES:
                for key in sorted(value)[:MAX_LIST_ITEMS]:
                    _bounded(value[key], f"{path}.{fd.name}[{key}]", out)
            elif action == _LIST_OF_MESSAGES:
                for i, item in enumerate(value[:MAX_LIST_ITEMS]):
                    _bounded(item, f"{path}.{fd.name}[{i}]", out)


def validate_spec(message: Message, path: str) -> list[FieldViolation]:
    """Bounds violations under any spec message (a ``BaseModelSpec`` sent inline as
    ``SelectRuntimeRequest.model_spec``, a ``ServingRuntimeSpec`` ...): version lengths and list
    and map sizes (py), at most ``MAX_VIOLATIONS_PER_OBJECT``; ``path`` is the
    proto path of ``message`` (``model_spec``)."""
    out: list[FieldViolation] = []
    _bounded(message, path, out)
    return out[:MAX_VIOLATIONS_PER_OBJECT]


def policy_fields(isvc: types_pb2.InferenceService) -> list[tuple[str, types_pb2.AcceleratorSelector]]:
    """(proto path, selector) of each AcceleratorSelector with a ``policy`` set: the service's
    ``spec.acceleratorSelector`` and the engine's and decoder's ``acceleratorOverride``."""
    spec = isvc.spec
    out = [("spec.accelerator_selector", spec.accelerator_selector)]
    out += [(f"spec.{c}.accelerator_override", getattr(spec, c).accelerator_override) for c in ("engine", "decoder")]
    return [(f"{path}.policy", selector) for path, selector in out if selector.HasField("policy")]


def isvc_spec_violations(isvc: types_pb2.InferenceService, base: str) -> list[FieldViolation]:
    """Violations of the InferenceService CRD enums (``SERVICE_MODES``, ``POLICIES``), paths
    under ``base`` (``inference_service``); the selection RPCs and a cached InferenceService
    are checked alike."""
    spec = isvc.spec
    violations = []
    if spec.HasField("deployment_mode") and spec.deployment_mode not in SERVICE_MODES:
        violations.append(
            FieldViolation(f"{base}.spec.deployment_mode", errors.unsupported(spec.deployment_mode, SERVICE_MODES))
        )
    for path, selector in policy_fields(isvc):
        if selector.policy not in _POLICIES:
            violations.append(FieldViolation(f"{base}.{path}", errors.unsupported(selector.policy, POLICIES)))
    return violations


def validate_object(obj: cache_pb2.CacheObject, field_prefix: str = "") -> list[FieldViolation]:
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
    """
    unwrapped = unwrap(obj)
    if unwrapped is None:
        return [FieldViolation(field_prefix.rstrip(".") or "object", requests.ONE_KIND)]
    kind, message = unwrapped
    base = f"{field_prefix}{obj.WhichOneof('object')}"
    too_big = object_size(message, base)
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
    _bounded(getattr(message, body), f"{base}.{body}", out)
    if kind == d.INFERENCE_SERVICE:
        out += isvc_spec_violations(message, base)  # type: ignore[arg-type]
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


# ---- requests: what a selection request carries ----------------------------------------------


def inference_service(isvc: types_pb2.InferenceService, base: str = "inference_service") -> list[FieldViolation]:
    """Violations of what the API server validates before OME sees an InferenceService: its
    namespace and name (when set), the ``spec.deploymentMode`` and ``acceleratorSelector.policy``
    enums (``isvc_spec_violations``, which a cached InferenceService gets too)."""
    violations = validate_name(isvc.metadata.namespace, f"{base}.metadata.namespace", "namespace")
    if isvc.metadata.name:
        violations += validate_name(isvc.metadata.name, f"{base}.metadata.name")
    return violations + isvc_spec_violations(isvc, base)


def model_spec(spec: types_pb2.BaseModelSpec, path: str = "model_spec") -> list[FieldViolation]:
    """Violations of an inline ``BaseModelSpec``: the bounds (``validate_spec``), then the CRD
    enums (``model_spec_violations``), as a cached BaseModel's spec is checked."""
    return validate_spec(spec, path) + model_spec_violations(spec, path)


def select_request(request: pb.SelectRuntimeRequest) -> list[FieldViolation]:
    """Every violation of a SelectRuntimeRequest: the InferenceService (required; ``inference_service``),
    a model (required without ``spec.runtime.name``, and with ``model_spec``), ``model_spec``,
    ``candidate_limit`` (0 or more)."""
    if not request.HasField("inference_service"):
        return [FieldViolation("inference_service", errors.required())]
    limit = []
    if request.HasField("candidate_limit") and request.candidate_limit < 0:
        limit = [FieldViolation("candidate_limit", requests.CANDIDATE_LIMIT.format(limit=request.candidate_limit))]
    isvc = request.inference_service
    violations = inference_service(isvc)
    has_spec = request.HasField("model_spec")
    if not isvc.spec.model.name and (has_spec or not isvc.spec.runtime.name):
        problem = requests.REQUIRED_WITH_MODEL_SPEC if has_spec else requests.MODEL_REQUIRED
        violations.append(FieldViolation("inference_service.spec.model.name", problem))
    return violations + (model_spec(request.model_spec) if has_spec else []) + limit


def explain_request(request: pb.ExplainRuntimesRequest) -> list[FieldViolation]:
    """The violations of an ExplainRuntimesRequest, the first kind found: exactly one of ``model``
    and ``inference_service``; ``model_spec`` only with an InferenceService; then the model's
    names, or the InferenceService (``inference_service``), its model and ``model_spec``."""
    by_model = request.HasField("model")
    if by_model == request.HasField("inference_service"):
        return [FieldViolation("model", requests.MODEL_OR_ISVC)]
    if by_model:
        if request.HasField("model_spec"):
            return [FieldViolation("model_spec", requests.MODEL_SPEC_WITH_ISVC)]
        lookup = request.model
        return validate_name(lookup.namespace, "model.namespace", "namespace") + validate_name(
            lookup.name, "model.name"
        )
    isvc = request.inference_service
    has_spec = request.HasField("model_spec")
    violations = inference_service(isvc)
    if violations:
        return violations
    if not isvc.spec.model.name and not has_spec:
        return [FieldViolation("inference_service.spec.model.name", requests.no_spec_model(isvc.metadata.name))]
    return model_spec(request.model_spec) if has_spec else []


# An RFC 3339 time with nanoseconds and an offset is 35 characters.
MAX_TIME_LENGTH = 64


def revision_gc_request(request: pb.PlanRevisionGCRequest) -> list[FieldViolation]:
    """PlanRevisionGC's fields: ``ome_namespace`` (a namespace name, or empty), ``runtime`` (a
    name; a namespace with ``SERVING_RUNTIME``, none with ``CLUSTER_SERVING_RUNTIME``),
    ``keep_newest`` and ``grace_period_seconds`` (0 or more), ``now`` (empty, or an RFC 3339
    time as ``google.protobuf.Timestamp`` parses it)."""
    out: list[FieldViolation] = []
    if request.ome_namespace:
        out += validate_name(request.ome_namespace, "ome_namespace", "namespace")
    if request.HasField("runtime"):
        ref = request.runtime
        out += validate_name(ref.name, "runtime.name")
        if ref.kind == pb.RUNTIME_KIND_SERVING_RUNTIME:
            out += validate_name(ref.namespace, "runtime.namespace", "namespace")
        elif ref.namespace:
            problem = errors.invalid_value(ref.namespace, requests.ONLY_SR_NAMESPACE)
            out.append(FieldViolation("runtime.namespace", problem))
    for field in ("keep_newest", "grace_period_seconds"):
        value = getattr(request, field)
        if value < 0:
            out.append(FieldViolation(field, errors.invalid_value(value, requests.NOT_NEGATIVE)))
    if len(request.now) > MAX_TIME_LENGTH:
        out.append(FieldViolation("now", errors.too_long_value(request.now, MAX_TIME_LENGTH)))
    elif request.now:
        try:
            timestamp_pb2.Timestamp().FromJsonString(request.now)
        except ValueError:
            out.append(FieldViolation("now", errors.invalid_value(request.now, requests.NOT_RFC3339)))
    return out
