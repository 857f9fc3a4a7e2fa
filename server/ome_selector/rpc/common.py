"""What every SelectionService RPC shares: the sync gate, the InferenceService's validation and
the runtime references of the answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar, overload

from google.protobuf.internal.containers import RepeatedCompositeFieldContainer
from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector import validation
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import errors
from ome_selector.domain import objects as d
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.rpc.enums import CHECK_TO_PB, COMPONENT_TO_PB, RUNTIME_KIND_TO_PB
from ome_selector.rules.results import Failure
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
    NOT_FOUND). Calling the row runs the three on one snapshot.

    With ``parsed`` (the response type) ``encode`` returns the response serialized: calling the
    row parses it, and ``serialized=True`` (the servicer, whose serializer sends bytes as they
    are) hands it back as bytes."""

    decode: Callable[[Snapshot, Request], Query]
    run: Callable[[Snapshot, Query], Outcome]
    encode: Callable[[Snapshot, Query, Outcome], Response | bytes]
    parsed: type[Response] | None = None

    @overload
    def __call__(self, snapshot: Snapshot, request: Request) -> Response: ...

    @overload
    def __call__(self, snapshot: Snapshot, request: Request, serialized: bool) -> Response | bytes: ...

    def __call__(self, snapshot: Snapshot, request: Request, serialized: bool = False) -> Response | bytes:
        query = self.decode(snapshot, request)
        response = self.encode(snapshot, query, self.run(snapshot, query))
        if isinstance(response, bytes) and not serialized:
            assert self.parsed is not None
            return self.parsed.FromString(response)
        return response


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


def add_reasons(
    reasons: RepeatedCompositeFieldContainer[pb.Reason],
    failures: Sequence[Failure],
    *,
    primary: bool = True,
    entries: bool = True,
) -> None:
    """Append a ``Reason`` per failure to the repeated field ``reasons`` (built in place): the
    first is ``primary`` when ``primary`` is True, the others never; ``entries`` False leaves out
    the per-entry mismatches."""
    for i, f in enumerate(failures):
        reason = reasons.add(
            check=CHECK_TO_PB[f.check],
            component=COMPONENT_TO_PB[f.component],
            runtime_value=f.runtime_value,
            requested_value=f.requested_value,
            message=f.message,
            primary=primary and i == 0,
        )
        if entries:
            for m in f.entries:
                reason.entry_mismatches.add(index=m.index, differences=m.differences)
