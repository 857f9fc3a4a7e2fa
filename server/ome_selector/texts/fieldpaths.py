"""Field paths as a Kubernetes user reads them: the manifest's camelCase, from the protos.

Validation code names fields by their proto path (``objects[0].serving_runtime.metadata.namespace``);
users write manifests and JSON in camelCase (``objects[0].servingRuntime.metadata.namespace``).
``json_path`` converts one path using each field's ``json_name`` in the proto descriptors
(so ``memory_gb`` becomes ``memoryGB``, as the proto declares), and ``present`` gives a
``RequestError``'s message and violations in that form, bounded so the whole status fits in
gRPC's metadata. It is applied in exactly two places: ``service.rich_status`` and the CLI's error
printing, so one rule reads the same whichever command reports it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2

from ome_selector.domain import errors
from ome_selector.domain.errors import FieldViolation, RequestError

# One segment: a field name, then any number of [index] / [key] suffixes, then "." or the end.
_SEGMENT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[^\]]*\])*)(?:\.(?=.)|\Z)", re.S)

# Bounds on what a status carries (see README, "Bounds"): gRPC sends the message percent-encoded
# in ``grpc-message`` and the whole google.rpc.Status base64-encoded in
# ``grpc-status-details-bin``; both must fit the client's default 8 KiB metadata limit.
MAX_MESSAGE_BYTES = 512
MAX_DESCRIPTION_BYTES = 1024
MAX_FIELD_BYTES = 256
MAX_STATUS_BYTES = 4096

_REQUIRED = re.compile(r"[a-z_]+ is required\Z")


def _roots() -> tuple[Descriptor, ...]:
    messages = [
        selector_pb2.DESCRIPTOR.services_by_name["SelectionService"],
        cache_pb2.DESCRIPTOR.services_by_name["CacheService"],
    ]
    roots = [method.input_type for service in messages for method in service.methods]
    roots += [cache_pb2.CacheObject.DESCRIPTOR, types_pb2.InferenceService.DESCRIPTOR]
    return tuple(roots)


@lru_cache(maxsize=1)
def _global_names() -> dict[str, str]:
    """snake_case -> json_name over every field reachable from the request messages."""
    names: dict[str, str] = {}
    seen: set[str] = set()
    stack = list(_roots())
    while stack:
        descriptor = stack.pop()
        if descriptor.full_name in seen:
            continue
        seen.add(descriptor.full_name)
        for field in descriptor.fields:
            names.setdefault(field.name, field.json_name)
            if field.message_type is not None:
                stack.append(field.message_type)
    return names


def _walk(segments: list[tuple[str, str]], root: Descriptor) -> list[str] | None:
    """json names of ``segments`` under ``root``; None when a segment is not a field there."""
    out = []
    descriptor: Descriptor | None = root
    for name, suffix in segments:
        if descriptor is None:
            return None
        field = descriptor.fields_by_name.get(name) or next((f for f in descriptor.fields if f.json_name == name), None)
        if field is None:
            return None
        out.append(field.json_name + suffix)
        descriptor = _element_type(field) if field.message_type is not None else None
    return out


def _element_type(field: FieldDescriptor) -> Descriptor | None:
    message = field.message_type
    if message is not None and message.GetOptions().map_entry:
        return message.fields_by_name["value"].message_type  # a map of messages steps into the value
    return message


@lru_cache(maxsize=4096)
def json_path(path: str, root: Any = None) -> str:
    """``path`` with each proto field name replaced by its ``json_name``.

    ``root`` is the message the path starts from; without it, the first request message (of
    SelectionService or CacheService), CacheObject or InferenceService under which the whole
    path resolves is used, else each segment is converted on its own. Indexes and map keys
    (``[0]``, ``[ome.io/inherit-from]``) are kept; a path that is not a field path is returned
    as it is. ``objects[0].serving_runtime.metadata.namespace`` ->
    ``objects[0].servingRuntime.metadata.namespace``.
    """
    if not path:
        return path
    segments = []
    position = 0
    while position < len(path):
        match = _SEGMENT.match(path, position)
        if match is None:
            return path
        segments.append((match.group(1), match.group(2)))
        position = match.end()
    for candidate in (root,) if root is not None else _roots():
        walked = _walk(segments, candidate)
        if walked is not None:
            return ".".join(walked)
    names = _global_names()
    return ".".join(names.get(name, name) + suffix for name, suffix in segments)


def _description(violation: FieldViolation) -> str:
    text = violation.description
    if _REQUIRED.match(text) or text in ("required", "name is required", "namespace is required"):
        return errors.required()
    return text


def present_violation(violation: FieldViolation, root: Any = None) -> FieldViolation:
    """``violation`` with its path in camelCase and both texts bounded (``MAX_FIELD_BYTES``,
    ``MAX_DESCRIPTION_BYTES``); control characters in the path are escaped."""
    field = errors.bound(errors.printable(json_path(violation.field, root)), MAX_FIELD_BYTES)
    return FieldViolation(field, errors.bound(_description(violation), MAX_DESCRIPTION_BYTES))


def present(error: RequestError, root: Any = None) -> tuple[str, list[FieldViolation]]:
    """(message, violations) of ``error`` as users see them: camelCase paths, Kubernetes texts,
    each text bounded, and at most as many violations as fit in ``MAX_STATUS_BYTES`` in all
    (the rest summarised by a last violation ``… and <n> more``). A summary message is rebuilt
    from the converted violations; any message is cut to ``MAX_MESSAGE_BYTES``."""
    violations = [present_violation(v, root) for v in error.violations]
    kept: list[FieldViolation] = []
    budget = MAX_STATUS_BYTES - MAX_MESSAGE_BYTES - 64
    reserve = MAX_FIELD_BYTES + 64  # room for the "… and <n> more violations" marker
    for i, v in enumerate(violations):
        size = len(v.field.encode()) + len(v.description.encode()) + 8
        if size > budget - (0 if i == len(violations) - 1 else reserve):
            kept.append(FieldViolation(v.field, f"… and {len(violations) - i} more violations"))
            break
        kept.append(v)
        budget -= size
    message = errors.summarize(kept) if error.summary else errors.printable(error.message)
    return errors.bound(message, MAX_MESSAGE_BYTES), kept


def describe(error: RequestError, root: Any = None) -> str:
    """``CODE: message``, then each violation the message does not already spell out, one per
    line (the CLI's error text)."""
    message, violations = present(error, root)
    return describe_parts(error.code, message, [(v.field, v.description) for v in violations])


def describe_parts(code: str, message: str, violations: Sequence[tuple[str, str]]) -> str:
    """``describe`` for an error that arrived as parts (code name, message, violations)."""
    missing = [(field, text) for field, text in violations if f"{field}: {text}" not in message]
    return f"{code}: {message}" + "".join(f"\n  {field}: {text}" for field, text in missing)
