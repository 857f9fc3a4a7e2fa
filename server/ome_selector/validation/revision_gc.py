"""What a PlanRevisionGC request carries (runtime-revisions.md, "Garbage collection")."""

from __future__ import annotations

from google.protobuf import timestamp_pb2
from ome.selector.v1 import selector_pb2 as pb

from ome_selector.domain import errors
from ome_selector.domain.errors import FieldViolation
from ome_selector.texts import requests
from ome_selector.validation.names import validate_name

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
