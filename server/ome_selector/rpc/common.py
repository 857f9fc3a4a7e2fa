"""What every SelectionService RPC shares: the sync gate, the InferenceService's validation and
the runtime references of the answers."""

from __future__ import annotations

from typing import TypeVar

from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import (
    isvc_spec_violations,
    validate_name,
)
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.rpc.enums import RUNTIME_KIND_TO_PB

R = TypeVar("R", pb.AdmitInferenceServiceResponse, pb.ReconcileInferenceServiceResponse)
NOT_SYNCED_MESSAGE = "cache not synced yet"
NO_RUNTIMES_NOTE = "No serving runtimes found in the selected namespace or at cluster scope."
EXPLICIT_RUNTIME_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."


def _require_synced(snapshot: Snapshot) -> None:
    if not snapshot.synced:
        raise RequestError("UNAVAILABLE", NOT_SYNCED_MESSAGE)


def _isvc_violations(isvc: types_pb2.InferenceService, base: str = "inference_service") -> list[FieldViolation]:
    """Violations of fields the API server validates before OME sees the object: namespace and
    name, ``spec.deploymentMode`` and ``acceleratorSelector.policy`` enums
    (``ingest.isvc_spec_violations``, which a cached InferenceService gets too)."""
    violations = validate_name(isvc.metadata.namespace, f"{base}.metadata.namespace", "namespace")
    if isvc.metadata.name:
        violations += validate_name(isvc.metadata.name, f"{base}.metadata.name")
    return violations + isvc_spec_violations(isvc, base)


def _require_isvc(
    request: pb.SelectRuntimeRequest
    | pb.ExplainRuntimesRequest
    | pb.ReconcileInferenceServiceRequest
    | pb.GetEffectiveRuntimeRequest
    | pb.GetRuntimeHistoryRequest
    | pb.PlanRuntimeSyncRequest,
) -> types_pb2.InferenceService:
    if not request.HasField("inference_service"):
        raise RequestError.invalid([FieldViolation("inference_service", errors.required())])
    violations = _isvc_violations(request.inference_service)
    if violations:
        raise RequestError.invalid(violations)
    return request.inference_service


def _ref(key: tuple[str, str, str]) -> pb.RuntimeRef:
    """RuntimeRef proto of a runtime key; kind unspecified for a key of no runtime kind (a
    parent that does not exist)."""
    kind = RUNTIME_KIND_TO_PB.get(key[0], pb.RUNTIME_KIND_UNSPECIFIED)
    return pb.RuntimeRef(kind=kind, namespace=key[1], name=key[2])


def runtime_ref(runtime: d.Runtime) -> pb.RuntimeRef:
    """RuntimeRef proto of a runtime."""
    return _ref(runtime.key)
