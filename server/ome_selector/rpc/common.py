"""What every SelectionService RPC shares: the sync gate, the InferenceService's validation and
the runtime references of the answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector import validation
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.rpc.enums import RUNTIME_KIND_TO_PB
from ome_selector.texts import requests

R = TypeVar("R", pb.AdmitInferenceServiceResponse, pb.ReconcileInferenceServiceResponse)
Request = TypeVar("Request", bound=Message)
Query = TypeVar("Query")
Outcome = TypeVar("Outcome")
Response = TypeVar("Response", bound=Message)


@dataclass(frozen=True, slots=True)
class Rpc(Generic[Request, Query, Outcome, Response]):
    """One row of the RPC table: ``decode`` validates the request once (``validation``) into a
    typed query, raising ``RequestError``; ``run`` is the pure flow over the snapshot, returning
    a typed outcome; ``encode`` builds the response once (and maps a not-found outcome to
    NOT_FOUND). Calling the row runs the three on one snapshot."""

    decode: Callable[[Snapshot, Request], Query]
    run: Callable[[Snapshot, Query], Outcome]
    encode: Callable[[Snapshot, Query, Outcome], Response]

    def __call__(self, snapshot: Snapshot, request: Request) -> Response:
        query = self.decode(snapshot, request)
        return self.encode(snapshot, query, self.run(snapshot, query))


def _require_synced(snapshot: Snapshot) -> None:
    if not snapshot.synced:
        raise RequestError("UNAVAILABLE", requests.NOT_SYNCED)


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
    violations = validation.inference_service(request.inference_service)
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
