"""A response as the JSON document the CLI prints: proto3 JSON names, with whole numbers written
as integers.

protobuf's Python json_format writes a ``google.protobuf.Value`` number (a Kubernetes quantity or
int-or-string written as a number, such as ``maxSurge: 1`` or ``cpu: 2``) and a whole ``double``
as ``1.0``; Go's protojson, grpcurl's, writes ``1``, as the object was written.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format
from google.protobuf.message import Message


def document(message: Message) -> Any:
    """``message`` as a JSON-ready dict (camelCase names, whole floats as ints)."""
    return _whole(json_format.MessageToDict(message, preserving_proto_field_name=False))


def _whole(value: Any) -> Any:
    if isinstance(value, float):
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value
