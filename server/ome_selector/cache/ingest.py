"""Proto -> domain, once: validation, the CRD defaults the API server applies, compilation.

- ``validate_object``: field violations of one CacheObject (names, namespaces, kinds, priority).
- ``apply_defaults``: a copy with the CRD defaults (``operator: Equal``, ``weight: 1`` on
  ``modelFormat``/``modelFramework``; AcceleratorClass resource ``quantity: "1"``), so objects
  loaded from YAML select exactly as in a cluster.
- ``compile_runtime`` / ``compile_revision`` / ``compile_model`` / ``compile_request``: the domain
  objects of domain.py.
- ``merge_specs``: the inheritance merge of a parent spec and a child spec (runtime-inheritance.md).
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation
from ome_selector.domain.sizes import parse_size, range_label
from ome_selector.domain.versions import parse_version

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
    subdomain must ...``), the value cut to ``errors.VALUE_PREVIEW`` characters; see bounds.py.
    """
    return bounds.label(value, path) if what == "namespace" else bounds.subdomain(value, path)


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
    """Length of versions and of every list and map under ``message`` (bounds.py), visiting only
    the fields ``_plan`` keeps. Field paths are formatted only for what is reported. Only specs
    are walked, so the maps met are never an object's metadata labels and annotations
    (``bounds.metadata`` bounds those)."""
    plan = _plan(message.DESCRIPTOR) or {}
    for fd, value in message.ListFields():
        action = plan.get(fd)
        if action is None:
            continue
        if len(out) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
            return
        if action == _MESSAGE:
            _bounded(value, f"{path}.{fd.name}", out)
        elif action == _VERSION:
            if len(value) > bounds.MAX_VERSION_LENGTH:
                out.append(bounds.version(value, f"{path}.{fd.name}"))
        elif action == _VERSION_OF:
            if len(value.version) > bounds.MAX_VERSION_LENGTH:
                out.append(bounds.version(value.version, f"{path}.{fd.name}.version"))
        else:
            if len(value) > bounds.MAX_LIST_ITEMS:
                out.append(bounds.items(len(value), f"{path}.{fd.name}"))
            if action == _MAP_OF_MESSAGES:
                for key in sorted(value)[: bounds.MAX_LIST_ITEMS]:
                    _bounded(value[key], f"{path}.{fd.name}[{key}]", out)
            elif action == _LIST_OF_MESSAGES:
                for i, item in enumerate(value[: bounds.MAX_LIST_ITEMS]):
                    _bounded(item, f"{path}.{fd.name}[{i}]", out)


def validate_spec(message: Message, path: str) -> list[FieldViolation]:
    """Bounds violations under any spec message (a ``BaseModelSpec`` sent inline as
    ``SelectRuntimeRequest.model_spec``, a ``ServingRuntimeSpec`` ...): version lengths and list
    and map sizes (bounds.py), at most ``bounds.MAX_VIOLATIONS_PER_OBJECT``; ``path`` is the
    proto path of ``message`` (``model_spec``)."""
    out: list[FieldViolation] = []
    _bounded(message, path, out)
    return out[: bounds.MAX_VIOLATIONS_PER_OBJECT]


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
    """Every violation of one CacheObject (at most ``bounds.MAX_VIOLATIONS_PER_OBJECT`` of the
    bounds); paths are proto field paths under ``field_prefix`` (``fieldpaths.json_path`` gives
    the manifest's camelCase).

    Checked: exactly one kind set; the object's size (``bounds.MAX_OBJECT_BYTES``); the name
    (DNS-1123 subdomain) and namespace (DNS-1123 label; none for cluster-scoped kinds); label and
    annotation keys and sizes; ``kind`` and ``apiVersion`` when set; version lengths and list
    lengths (bounds.py); for runtimes, ``priority`` at least 1 and the CRD-required
    ``modelFormat`` and ``modelFramework`` (each with a name) of every supportedModelFormats
    entry, and ``runtime_spec_violations``; for models, ``model_spec_violations``; for
    InferenceServices, the CRD enums (``isvc_spec_violations``); for runtime revisions, ``data``
    (checked as a runtime spec) and a non-negative ``revision``.
    """
    unwrapped = unwrap(obj)
    if unwrapped is None:
        return [FieldViolation(field_prefix.rstrip(".") or "object", "exactly one object kind must be set")]
    kind, message = unwrapped
    base = f"{field_prefix}{obj.WhichOneof('object')}"
    too_big = bounds.object_size(message, base)
    if too_big:
        return too_big  # nothing else of it is read
    meta = message.metadata  # type: ignore[attr-defined]
    out = validate_name(meta.name, f"{base}.metadata.name")
    if kind in NAMESPACED:
        out += validate_name(meta.namespace, f"{base}.metadata.namespace", "namespace")
    elif meta.namespace:
        out.append(
            FieldViolation(
                f"{base}.metadata.namespace", errors.forbidden(f"{kind} is cluster-scoped and takes no namespace")
            )
        )
    out += bounds.metadata(meta, f"{base}.metadata")
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
    for i, entry in enumerate(spec.supported_model_formats[: bounds.MAX_LIST_ITEMS]):
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


def _default_format(message: Message, owner: Message, field: str) -> None:
    if owner.HasField(field):
        sub = getattr(owner, field)
        if not sub.HasField("operator"):
            sub.operator = "Equal"
        if not sub.HasField("weight"):
            sub.weight = 1


def apply_defaults(obj: cache_pb2.CacheObject) -> cache_pb2.CacheObject:
    """A copy of ``obj`` with the CRD defaults applied (see the module docstring)."""
    out = cache_pb2.CacheObject()
    out.CopyFrom(obj)
    unwrapped = unwrap(out)
    assert unwrapped is not None
    kind, message = unwrapped
    if kind in RUNTIME_KINDS or kind == d.CONTROLLER_REVISION:
        # A revision holds a spec OME copied from defaulted runtimes: the same defaults, so a
        # revision and the runtime it was taken from hash alike.
        spec = message.data if kind == d.CONTROLLER_REVISION else message.spec  # type: ignore[attr-defined]
        for entry in spec.supported_model_formats:
            _default_format(message, entry, "model_format")
            _default_format(message, entry, "model_framework")
    elif kind in (d.BASE_MODEL, d.CLUSTER_BASE_MODEL):
        _default_format(message, message.spec, "model_format")  # type: ignore[attr-defined]
        _default_format(message, message.spec, "model_framework")  # type: ignore[attr-defined]
    elif kind == d.ACCELERATOR_CLASS:
        for resource in message.spec.resources:  # type: ignore[attr-defined]
            if not resource.HasField("quantity"):
                resource.quantity = "1"
    return out


_SPECS: dict[tuple[str, str | None, str | None, int], d.Spec] = {}
_SPECS_MAX = 50_000


def _spec(message: Message, owner: Message, field: str) -> d.Spec | None:
    """The compiled ``modelFormat`` / ``modelFramework`` of ``owner``, shared between equal ones
    (runtimes repeat the same few, and parsing the version is most of the cost). The table holds
    at most ``_SPECS_MAX`` (50,000) specs; a new one when it is full starts it afresh."""
    if not owner.HasField(field):
        return None
    sub = getattr(owner, field)
    key = (
        sub.name,
        sub.version if sub.HasField("version") else None,
        sub.operator if sub.HasField("operator") else None,
        sub.weight if sub.HasField("weight") else 1,
    )
    found = _SPECS.get(key)
    if found is None:
        if len(_SPECS) >= _SPECS_MAX:
            _SPECS.clear()
        version = key[1]
        found = _SPECS[key] = d.Spec(
            name=key[0],
            version=version,
            parsed=parse_version(version) if version is not None else None,
            operator=key[2],
            weight=key[3],
        )
    return found


def _opt(message: Message, field: str) -> str | None:
    return getattr(message, field) if message.HasField(field) else None


def _mode(annotations: object) -> str | None:
    value = annotations.get(d.DEPLOYMENT_MODE_ANNOTATION)  # type: ignore[attr-defined]
    return value if value in d.VALID_MODES else None


def compile_spec(spec: types_pb2.ServingRuntimeSpec) -> d.Compiled:
    """Compile a ServingRuntimeSpec: entries, size range, class set and declared modes.

    Modes come only from ``engineConfig.annotations`` and ``decoderConfig.annotations``, and
    only valid values count (runtime-deployment-mode-matching.md, "Where each side declares").
    """
    entries = tuple(
        d.Entry(
            index=i,
            model_format=_spec(e, e, "model_format"),
            model_framework=_spec(e, e, "model_framework"),
            architecture=_opt(e, "model_architecture"),
            quantization=_opt(e, "quantization"),
            pipeline=e.diffusion_pipeline if e.HasField("diffusion_pipeline") else None,
            auto_select=e.auto_select if e.HasField("auto_select") else None,
            priority=e.priority if e.HasField("priority") else None,
        )
        for i, e in enumerate(spec.supported_model_formats)
    )
    size_range = None
    if spec.HasField("model_size_range"):
        r = spec.model_size_range
        minimum, maximum = _opt(r, "min"), _opt(r, "max")
        size_range = d.SizeRange(
            minimum,
            maximum,
            parse_size(minimum) if minimum is not None else None,
            parse_size(maximum) if maximum is not None else None,
            range_label(minimum, maximum),
        )
    classes = tuple(spec.accelerator_requirements.accelerator_classes)
    engine_mode = _mode(spec.engine_config.annotations)
    decoder_mode = _mode(spec.decoder_config.annotations)
    return d.Compiled(
        disabled=spec.disabled,
        entries=entries,
        size_range=size_range,
        classes=classes,
        class_set=frozenset(classes),
        engine_mode=engine_mode,
        decoder_mode=decoder_mode,
        any_auto_select=any(e.auto_select is True for e in entries),
        router_mode=_mode(spec.router_config.annotations),
        engine_multi_node=spec.engine_config.HasField("leader") or spec.engine_config.HasField("worker"),
        decoder_multi_node=spec.decoder_config.HasField("leader") or spec.decoder_config.HasField("worker"),
        index_keys=_index_keys(spec.disabled, classes, engine_mode, decoder_mode, entries),
        format_id=_format_id(entries),
    )


def _index_keys(
    disabled: bool,
    classes: tuple[str, ...],
    engine_mode: str | None,
    decoder_mode: str | None,
    entries: tuple[d.Entry, ...],
) -> tuple[tuple[object, ...], ...]:
    """The mask keys of ``domain.Compiled.index_keys``: what the request-side checks read
    (disabled, accelerator classes, declared modes), and each (format name, architecture,
    quantization) an entry with a ``modelFormat`` has, since only such an entry can match a model
    with exactly those strictly (serving-runtimes.md, "Supported model formats")."""
    keys: list[tuple[object, ...]] = []
    if disabled:
        keys.append(("disabled",))
    if classes:
        keys.append(("classes",))
        keys += [("class", c) for c in sorted(set(classes))]
    for component, mode in (("engine", engine_mode), ("decoder", decoder_mode)):
        if mode is not None:
            keys += [(component + "*",), (component, mode)]
    formats = {(e.model_format.name, e.architecture, e.quantization) for e in entries if e.model_format is not None}
    keys += [("format", f) for f in sorted(formats, key=repr)]
    return tuple(keys)


_FORMAT_IDS: dict[tuple[object, ...], int] = {}
_FORMAT_IDS_MAX = 200_000
_next_format_id = 0


def _spec_key(spec: d.Spec | None) -> tuple[object, ...] | None:
    return None if spec is None else (spec.name, spec.version, spec.operator)


def _format_id(entries: tuple[d.Entry, ...]) -> int:
    """An id for what the model-format check reads of ``entries`` (``domain.Compiled.format_id``).
    Ids count up by one from 1 as new keys come (0 is ``Compiled``'s default) and are never
    reused; when the table is full (``_FORMAT_IDS_MAX``, 200,000 keys) a new key starts it afresh,
    so equal entries may then get a new id (a cache miss), never a wrong one."""
    global _next_format_id
    key = tuple(
        (
            _spec_key(e.model_format),
            _spec_key(e.model_framework),
            e.architecture,
            e.quantization,
            None if e.pipeline is None else e.pipeline.SerializeToString(deterministic=True),
        )
        for e in entries
    )
    found = _FORMAT_IDS.get(key)
    if found is None:
        if len(_FORMAT_IDS) >= _FORMAT_IDS_MAX:
            _FORMAT_IDS.clear()
        _next_format_id += 1
        found = _FORMAT_IDS[key] = _next_format_id
    return found


def _created(meta: types_pb2.ObjectMeta) -> float | None:
    if not meta.HasField("creation_timestamp"):
        return None
    ts = meta.creation_timestamp
    return ts.seconds + ts.nanos / 1e9


def compile_runtime(kind: str, message: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime) -> d.Runtime:
    """Compile a (defaulted, validated) runtime object."""
    meta = message.metadata
    parent = meta.annotations.get(d.INHERIT_FROM_ANNOTATION) or None
    return d.Runtime(
        kind=kind,
        namespace=meta.namespace if kind == d.SERVING_RUNTIME else "",
        name=meta.name,
        created=_created(meta),
        parent=parent,
        own=compile_spec(message.spec),
        spec=message.spec,
        last_chain=tuple(message.status.inheritance_chain),
    )


def compile_revision(message: types_pb2.ControllerRevision) -> d.Revision:
    """Compile a (defaulted, validated) ControllerRevision: its owner from the ``ome.io/runtime-of*``
    labels, the spec it holds compiled as a runtime of the owner's kind and name (an owner kind
    other than ServingRuntime counts as ClusterServingRuntime), its content hash."""
    meta = message.metadata
    labels = meta.labels
    owner_kind = labels.get(d.RUNTIME_OF_KIND_LABEL, "")
    owner_namespace = labels.get(d.RUNTIME_OF_NAMESPACE_LABEL, "")
    kind = d.SERVING_RUNTIME if owner_kind == d.SERVING_RUNTIME else d.CLUSTER_SERVING_RUNTIME
    full_hash = d.spec_hash(message.data)
    runtime = d.Runtime(
        kind=kind,
        namespace=owner_namespace if kind == d.SERVING_RUNTIME else "",
        name=labels.get(d.RUNTIME_OF_LABEL, ""),
        created=_created(meta),
        parent=None,
        own=compile_spec(message.data),
        spec=message.data,
    )
    return d.Revision(
        namespace=meta.namespace,
        name=meta.name,
        owner_name=runtime.name,
        owner_kind=owner_kind,
        owner_namespace=owner_namespace,
        created=runtime.created,
        number=message.revision,
        ome_managed=meta.annotations.get(d.CREATED_BY_ANNOTATION) == d.CREATED_BY_OME,
        runtime=runtime,
        full_hash=full_hash,
        hash_label=labels.get(d.REVISION_HASH_LABEL, ""),
    )


def model_label(spec: types_pb2.BaseModelSpec) -> str:
    """OME's model format label: ``mt:<format>[:<version>][:<arch>][:<quant>][:<framework>[:<version>]]``."""
    parts = ["mt:" + spec.model_format.name]
    if spec.model_format.HasField("version"):
        parts.append(spec.model_format.version)
    if spec.HasField("model_architecture"):
        parts.append(spec.model_architecture)
    if spec.HasField("quantization"):
        parts.append(spec.quantization)
    if spec.HasField("model_framework"):
        parts.append(spec.model_framework.name)
        if spec.model_framework.HasField("version"):
            parts.append(spec.model_framework.version)
    return ":".join(parts)


def compile_model(kind: str, namespace: str, name: str, spec: types_pb2.BaseModelSpec) -> d.Model:
    """Compile a model spec (a BaseModel's, a ClusterBaseModel's or an inline one); its
    ``cache_key`` is the serialized spec."""
    size_text = _opt(spec, "model_parameter_size")
    model_format = _spec(spec, spec, "model_format") or d.Spec("", None, None, None, 1)
    return d.Model(
        kind=kind,
        namespace=namespace,
        name=name,
        model_format=model_format,
        model_framework=_spec(spec, spec, "model_framework"),
        architecture=_opt(spec, "model_architecture"),
        quantization=_opt(spec, "quantization"),
        size_text=size_text,
        size=parse_size(size_text) if size_text is not None else None,
        pipeline=spec.diffusion_pipeline if spec.HasField("diffusion_pipeline") else None,
        disabled=spec.disabled,
        label=model_label(spec),
        cache_key=spec.SerializeToString(deterministic=True),
        sharded=spec.distribution == d.SHARDED,
    )


def requested_mode(isvc: types_pb2.InferenceService, component: str) -> str | None:
    """The mode the InferenceService itself asks for ``component`` (``engine`` or ``decoder``):
    its own ``ome.io/deploymentMode`` annotation when valid, else ``spec.deploymentMode``; None
    for none. ``metadata.annotations`` never count (runtime-deployment-mode-matching.md)."""
    mode = _mode(getattr(isvc.spec, component).annotations)
    if mode is not None:
        return mode
    service_mode = isvc.spec.deployment_mode if isvc.spec.HasField("deployment_mode") else None
    return service_mode if service_mode in d.VALID_MODES else None


def compile_request(isvc: types_pb2.InferenceService) -> d.Request:
    """What the InferenceService asks of runtimes.

    Accelerator classes are pooled from the ``ome.io/accelerator-class`` annotation,
    ``spec.acceleratorSelector``, and the engine and decoder overrides; an empty value counts as a
    class. Without ``spec.model`` the check is skipped (runtime-accelerator-class-matching.md).
    The engine's mode is its annotation, else ``spec.deploymentMode``; the decoder's likewise,
    compared only when ``spec.decoder`` exists (runtime-deployment-mode-matching.md).
    """
    spec = isvc.spec
    required: set[str] = set()
    annotations = isvc.metadata.annotations
    if d.ACCELERATOR_CLASS_ANNOTATION in annotations:
        required.add(annotations[d.ACCELERATOR_CLASS_ANNOTATION])
    for selector in (spec.accelerator_selector, spec.engine.accelerator_override, spec.decoder.accelerator_override):
        if selector.HasField("accelerator_class"):
            required.add(selector.accelerator_class)
    has_decoder = spec.HasField("decoder")
    return d.Request(
        namespace=isvc.metadata.namespace,
        model_name=spec.model.name,
        required_classes=frozenset(required) if spec.HasField("model") else None,
        engine_mode=requested_mode(isvc, "engine"),
        decoder_mode=requested_mode(isvc, "decoder") if has_decoder else None,
        has_decoder=has_decoder,
    )


def merge_specs(parent: Message, child: Message) -> Message:
    """The inheritance merge of ``child`` over ``parent`` (runtime-inheritance.md).

    Scalars: the child's value wins when set (``""`` counts as unset; ``disabled: false`` does
    override). Nested objects merge field by field; maps merge by key, the child winning; lists
    (``supportedModelFormats``, ``acceleratorClasses``, ...) are replaced by a non-empty child list.
    """
    out = type(parent)()
    out.CopyFrom(parent)
    for fd, value in child.ListFields():
        if fd.message_type is not None and fd.message_type.GetOptions().map_entry:
            target = getattr(out, fd.name)
            value_fd = fd.message_type.fields_by_name["value"]
            for k, v in value.items():
                if value_fd.message_type is None and v == "":
                    continue  # "" counts as unset: a child cannot remove its parent's value
                if value_fd.message_type is not None and k in target:
                    merged = merge_specs(target[k], v)
                    target[k].CopyFrom(merged)
                elif value_fd.message_type is not None:
                    target[k].CopyFrom(v)
                else:
                    target[k] = v
        elif fd.is_repeated:
            if len(value):
                out.ClearField(fd.name)
                getattr(out, fd.name).extend(value)
        elif fd.message_type is not None:
            getattr(out, fd.name).CopyFrom(merge_specs(getattr(out, fd.name), value))
        elif value != "":
            setattr(out, fd.name, value)
    return out
