"""The inheritance merge of a child runtime's spec over its parent's (runtime-inheritance.md,
"What merges").

``merge_specs(parent, child)`` -> a new message of the same type; neither input changes.

- Single values (``image``, ``disabled``): the child's wins when set; ``""`` counts as unset, so a
  child cannot clear its parent's value (``disabled: false`` does override). A
  ``google.protobuf.Value`` (a quantity or int-or-string) and a ``Struct`` are single values.
- Objects (``runner``, ``modelSizeRange``): merge field by field.
- Maps (``nodeSelector``, ``requests``, ``limits``, ``labels``, ``annotations``): merge by key.
- ``env``, ``volumes``, ``imagePullSecrets``, ``containers`` and ``initContainers`` merge item by
  item by ``name``; ``ports`` by ``containerPort``; ``volumeMounts`` by ``mountPath``;
  ``topologySpreadConstraints`` by ``topologyKey`` (``MERGE_KEYS``). Items with the same key merge
  field by field; the parent's items keep their order and the child's other items follow in its
  order.
- Every other list (``command``, ``args``, ``tolerations``, ``supportedModelFormats``) is replaced
  by a non-empty child list.
"""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message

from ome_selector.validation.bounds import is_map

# List field (JSON name) -> the JSON name of its items' merge key.
MERGE_KEYS = {
    "env": "name",
    "volumes": "name",
    "imagePullSecrets": "name",
    "containers": "name",
    "initContainers": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "topologySpreadConstraints": "topologyKey",
}
_WHOLE = frozenset({"google.protobuf.Value", "google.protobuf.Struct", "google.protobuf.Timestamp"})


def merge_specs(parent: Message, child: Message) -> Message:
    """``child`` laid over ``parent`` (both of one message type), as the module docstring says."""
    out = type(parent)()
    out.CopyFrom(parent)
    _merge_into(out, child)
    return out


def _merge_into(out: Message, child: Message) -> None:
    for fd, value in child.ListFields():
        if is_map(fd):
            entry = fd.message_type
            assert entry is not None
            _merge_map(getattr(out, fd.name), value, entry.fields_by_name["value"].message_type)
        elif fd.is_repeated:
            if not len(value):
                continue
            key = MERGE_KEYS.get(fd.json_name) if fd.message_type is not None else None
            if key is None:
                out.ClearField(fd.name)
                getattr(out, fd.name).extend(value)
            else:
                _merge_list(getattr(out, fd.name), value, key)
        elif fd.message_type is not None and fd.message_type.full_name not in _WHOLE:
            _merge_into(getattr(out, fd.name), value)
        elif fd.message_type is not None:
            getattr(out, fd.name).CopyFrom(value)
        elif value != "":
            setattr(out, fd.name, value)


def _merge_map(target: Any, child: Any, value_type: Any) -> None:
    for k, v in child.items():
        if value_type is None:
            if v != "":  # "" counts as unset: a child cannot remove its parent's value
                target[k] = v
        elif value_type.full_name in _WHOLE or k not in target:
            target[k].CopyFrom(v)
        else:
            _merge_into(target[k], v)


def _merge_list(target: Any, child: Any, key: str) -> None:
    """Items of ``child`` merged into ``target`` (repeated messages) by the field ``key`` (JSON
    name); an item without its key is appended as it is."""
    fd = _key_field(child[0].DESCRIPTOR, key)
    at = {k: item for item in target if (k := _key_of(item, fd)) is not None}
    for item in child:
        k = _key_of(item, fd)
        same = at.get(k) if k is not None else None
        if same is None:
            added = target.add()
            added.CopyFrom(item)
            if k is not None:
                at[k] = added
        else:
            _merge_into(same, item)


_KEY_FIELDS: dict[tuple[str, str], Any] = {}


def _key_field(descriptor: Any, json_name: str) -> Any:
    found = _KEY_FIELDS.get((descriptor.full_name, json_name))
    if found is None:
        found = _KEY_FIELDS[(descriptor.full_name, json_name)] = next(
            f for f in descriptor.fields if f.json_name == json_name
        )
    return found


def _key_of(item: Message, fd: Any) -> Any:
    """The merge key of ``item``, or None when it has none (unset, or ``""``)."""
    if fd.has_presence and not item.HasField(fd.name):
        return None
    value = getattr(item, fd.name)
    return None if value == "" else value
