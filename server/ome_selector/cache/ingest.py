"""Proto -> domain, once: the CRD defaults the API server applies, and compilation (validation
is the validation package's, before any of this).

- ``apply_defaults``: a copy with the CRD defaults (``operator: Equal``, ``weight: 1`` on
  ``modelFormat``/``modelFramework``; AcceleratorClass resource ``quantity: "1"``), so objects
  loaded from YAML select exactly as in a cluster.
- ``compile_runtime`` / ``compile_revision`` / ``compile_model`` / ``compile_request``: the domain
  objects of domain/objects.py.
"""

from __future__ import annotations

from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector.domain import objects as d
from ome_selector.domain.sizes import parse_size, range_label
from ome_selector.domain.versions import parse_version
from ome_selector.validation import RUNTIME_KINDS, unwrap


def _default_format(message: Message, owner: Message, field: str) -> None:
    if owner.HasField(field):
        sub = getattr(owner, field)
        if not sub.HasField("operator"):
            sub.operator = "Equal"
        if not sub.HasField("weight"):
            sub.weight = 1


# What ``apply_defaults`` sets in a ServingRuntimeSpec: (entry index, ``model_format`` or
# ``model_framework``, whether to set ``operator``, whether to set ``weight``) per requirement
# that lacks one of them.
SpecDefaults = tuple[tuple[int, str, bool, bool], ...]


def spec_defaults(spec: types_pb2.ServingRuntimeSpec) -> SpecDefaults:
    """The defaults ``apply_defaults`` sets in ``spec``'s entries (``SpecDefaults``)."""
    out = []
    for i, entry in enumerate(spec.supported_model_formats):
        for field in ("model_format", "model_framework"):
            if entry.HasField(field):
                sub = getattr(entry, field)
                operator, weight = not sub.HasField("operator"), not sub.HasField("weight")
                if operator or weight:
                    out.append((i, field, operator, weight))
    return tuple(out)


def set_spec_defaults(spec: types_pb2.ServingRuntimeSpec, defaults: SpecDefaults) -> None:
    """Set ``defaults`` (``spec_defaults`` of ``spec``) in ``spec``."""
    entries = spec.supported_model_formats
    for i, field, operator, weight in defaults:
        sub = getattr(entries[i], field)
        if operator:
            sub.operator = "Equal"
        if weight:
            sub.weight = 1


def apply_defaults(
    obj: cache_pb2.CacheObject, *, copy: bool = True, runtime_defaults: SpecDefaults | None = None
) -> cache_pb2.CacheObject:
    """``obj`` with the CRD defaults applied (see the module docstring): a copy, or ``obj``
    itself changed when ``copy`` is False. ``runtime_defaults``: what a runtime's spec needs
    (``spec_defaults`` of it, as ``cache.specs`` keeps it per spec), else found here."""
    if copy:
        out = cache_pb2.CacheObject()
        out.CopyFrom(obj)
    else:
        out = obj
    unwrapped = unwrap(out)
    assert unwrapped is not None
    kind, message = unwrapped
    if kind in RUNTIME_KINDS or kind == d.CONTROLLER_REVISION:
        # A revision holds a spec OME copied from defaulted runtimes: the same defaults, so a
        # revision and the runtime it was taken from hash alike.
        spec = message.data if kind == d.CONTROLLER_REVISION else message.spec  # type: ignore[attr-defined]
        if runtime_defaults is None or kind == d.CONTROLLER_REVISION:
            runtime_defaults = spec_defaults(spec)
        set_spec_defaults(spec, runtime_defaults)
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
        format_id=(format_id := _format_id(entries)),
        fit_id=_fit_id(format_id, entries, size_range),
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


_IDS_MAX = 200_000  # keys per table before it starts afresh
_FORMAT_IDS: dict[tuple[object, ...], int] = {}
_FIT_IDS: dict[tuple[object, ...], int] = {}
_LAST_IDS: dict[int, int] = {}  # id(table) -> the last id it gave


def _interned(table: dict[tuple[object, ...], int], key: tuple[object, ...]) -> int:
    """The id of ``key`` in ``table``. A table's ids count up by one from 1 as new keys come (0 is
    ``Compiled``'s default) and are never reused; when the table is full (``_IDS_MAX`` keys) a new
    key starts it afresh, so equal keys may then get a new id (a cache miss), never a wrong one."""
    found = table.get(key)
    if found is None:
        if len(table) >= _IDS_MAX:
            table.clear()
        found = table[key] = _LAST_IDS.get(id(table), 0) + 1
        _LAST_IDS[id(table)] = found
    return found


def _spec_key(spec: d.Spec | None) -> tuple[object, ...] | None:
    return None if spec is None else (spec.name, spec.version, spec.operator)


def _format_id(entries: tuple[d.Entry, ...]) -> int:
    """An id for what the model-format check reads of ``entries`` (``domain.Compiled.format_id``)."""
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
    return _interned(_FORMAT_IDS, key)


def _fit_id(format_id: int, entries: tuple[d.Entry, ...], size_range: d.SizeRange | None) -> int:
    """An id for what a model's fit reads of a spec except the priorities
    (``domain.Compiled.fit_id``): the format id, each entry's autoSelect and weights, the size range."""
    key = (
        format_id,
        tuple(
            (
                e.auto_select,
                None if e.model_format is None else e.model_format.weight,
                None if e.model_framework is None else e.model_framework.weight,
            )
            for e in entries
        ),
        None if size_range is None else (size_range.minimum, size_range.maximum),
    )
    return _interned(_FIT_IDS, key)


def _created(meta: types_pb2.ObjectMeta) -> float | None:
    if not meta.HasField("creation_timestamp"):
        return None
    ts = meta.creation_timestamp
    return ts.seconds + ts.nanos / 1e9


def compile_runtime(
    kind: str,
    message: types_pb2.ServingRuntime | types_pb2.ClusterServingRuntime,
    own: d.Compiled | None = None,
    spec: types_pb2.ServingRuntimeSpec | None = None,
) -> d.Runtime:
    """Compile a (defaulted, validated) runtime object; ``own`` and ``spec``: its spec compiled
    and its defaulted spec, shared (``cache.specs``; ``message`` then need not hold the spec),
    else ``message.spec``, compiled here."""
    meta = message.metadata
    parent = meta.annotations.get(d.INHERIT_FROM_ANNOTATION) or None
    return d.Runtime(
        kind=kind,
        namespace=meta.namespace if kind == d.SERVING_RUNTIME else "",
        name=meta.name,
        created=_created(meta),
        parent=parent,
        own=compile_spec(message.spec) if own is None else own,
        spec=message.spec if spec is None else spec,
        last_chain=tuple(message.status.inheritance_chain) if message.HasField("status") else (),
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


def requested_mode(spec: types_pb2.InferenceServiceSpec, component: str) -> str | None:
    """The mode an InferenceService's spec itself asks for ``component`` (``engine`` or
    ``decoder``): the component's own ``ome.io/deploymentMode`` annotation when valid, else
    ``spec.deploymentMode``; None for none. ``metadata.annotations`` never count
    (runtime-deployment-mode-matching.md)."""
    mode = _mode(getattr(spec, component).annotations)
    if mode is not None:
        return mode
    service_mode = spec.deployment_mode if spec.HasField("deployment_mode") else None
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
        engine_mode=requested_mode(spec, "engine"),
        decoder_mode=requested_mode(spec, "decoder") if has_decoder else None,
        has_decoder=has_decoder,
    )
