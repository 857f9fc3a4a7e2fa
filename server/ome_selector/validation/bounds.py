"""The bounds under any spec: version lengths, list and map sizes (``MAX_LIST_ITEMS``), checked by
one walk per message type that visits only the fields that can break a bound; an object's
serialized size (``MAX_OBJECT_BYTES``)."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from ome.v1beta1 import types_pb2

from ome_selector.domain.errors import FieldViolation
from ome_selector.domain.versions import MAX_VERSION_LENGTH
from ome_selector.validation.names import MAX_LIST_ITEMS, MAX_OBJECT_BYTES, MAX_VIOLATIONS_PER_OBJECT, items, version


def object_size(message: Message, path: str, size: int | None = None) -> list[FieldViolation]:
    """An object larger than ``MAX_OBJECT_BYTES`` once serialized (``size``: its ``ByteSize()``
    when known, else measured)."""
    if size is None:
        size = message.ByteSize()
    if size > MAX_OBJECT_BYTES:
        return [FieldViolation(path, f"Too long: {size} bytes: may not be more than {MAX_OBJECT_BYTES} bytes")]
    return []


_VERSIONED = frozenset({types_pb2.ModelFormat.DESCRIPTOR.full_name, types_pb2.ModelFrameworkSpec.DESCRIPTOR.full_name})


_MAP_ENTRY: dict[object, bool] = {}  # field descriptor -> whether it is a map (GetOptions is slow)


def is_map(fd: Any) -> bool:
    """Whether field ``fd`` is a map (cached: GetOptions is slow)."""
    found = _MAP_ENTRY.get(fd)
    if found is None:
        found = _MAP_ENTRY[fd] = fd.message_type is not None and fd.message_type.GetOptions().map_entry
    return found


# What the bounds walk does with a field: count a list's or map's items (and walk each message
# item), walk a message, measure a version, or measure the version of a ``modelFormat`` /
# ``modelFramework`` (a message whose only bound is its version: no call for it).
_LIST, _LIST_OF_MESSAGES, _MAP, _MAP_OF_MESSAGES, _MESSAGE, _VERSION, _VERSION_OF = range(7)
_PLANS: dict[str, dict[Any, int] | None] = {}  # message type -> field descriptor -> what to do
# The OME messages of a runtime spec and an InferenceService whose lists and maps rules read
# item by item. Every other message under them is a Kubernetes type (a container, a volume, a
# probe ...) or a part no rule reads (the predictor, `workers`, KEDA settings): nothing reads
# its lists item by item (a runner's command line is merged, hashed and copied whole), so the
# object's size bounds them, and the walk never visits them.
_WALKED = frozenset(
    m.DESCRIPTOR.full_name
    for m in (
        types_pb2.ServingRuntimeSpec,
        types_pb2.SupportedModelFormat,
        types_pb2.ModelFormat,
        types_pb2.ModelFrameworkSpec,
        types_pb2.DiffusionPipelineSpec,
        types_pb2.DiffusionComponentSpec,
        types_pb2.ModelSizeRangeSpec,
        types_pb2.AcceleratorRequirements,
        types_pb2.AcceleratorSelector,
        types_pb2.AcceleratorConstraints,
        types_pb2.EngineSpec,
        types_pb2.DecoderSpec,
        types_pb2.RouterSpec,
        types_pb2.LeaderSpec,
        types_pb2.WorkerSpec,
        types_pb2.ComponentAutoscaler,
        types_pb2.KedaAutoscaler,
        types_pb2.HPAAutoscaler,
        types_pb2.MetricSpec,
        types_pb2.ScalingPolicy,
        types_pb2.ProportionalPolicy,
        types_pb2.InferenceServiceSpec,
    )
)


def _reachable(desc: Any, out: set[str]) -> set[str]:
    if desc.full_name not in out:
        out.add(desc.full_name)
        for fd in desc.fields:
            if fd.message_type is not None:
                _reachable(fd.message_type, out)
    return out


_SIZE_BOUNDED = (
    frozenset(
        _reachable(types_pb2.ServingRuntimeSpec.DESCRIPTOR, set())
        | _reachable(types_pb2.InferenceServiceSpec.DESCRIPTOR, set())
    )
    - _WALKED
)


def _plan(desc: Any) -> dict[Any, int] | None:
    """The fields of message type ``desc`` that can hold a bounds violation, each with what the
    walk does there; a field whose type holds no list, map or version at any depth is left out,
    so the walk never visits it. ``None`` while a recursive type is being planned (visit it)."""
    if desc.full_name in _PLANS:
        return _PLANS[desc.full_name]
    if desc.full_name in _SIZE_BOUNDED:
        _PLANS[desc.full_name] = {}
        return _PLANS[desc.full_name]
    _PLANS[desc.full_name] = None
    plan: dict[Any, int] = {}
    versioned = desc.full_name in _VERSIONED
    for fd in desc.fields:
        if is_map(fd):
            value_type = fd.message_type.fields_by_name["value"].message_type
            plan[fd] = _MAP_OF_MESSAGES if value_type is not None and _plan(value_type) != {} else _MAP
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
