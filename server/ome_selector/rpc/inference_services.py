"""GetInferenceService: one cached InferenceService by namespace and name, as cached (for the
commands of reference/kubectl-ome/runtime.md that take INFERENCESERVICE or ``--isvc NAME``,
and ``wait``)."""

from __future__ import annotations

from ome.selector.v1 import selector_pb2 as pb

from ome_selector import validation
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain.errors import RequestError
from ome_selector.rpc.common import Rpc, _require_synced
from ome_selector.texts import messages


def decode_get(snapshot: Snapshot, request: pb.GetInferenceServiceRequest) -> tuple[str, str]:
    """(namespace, name); INVALID_ARGUMENT naming a bad or missing ``namespace`` / ``name``
    (Kubernetes' name rules), UNAVAILABLE before the first sync."""
    _require_synced(snapshot)
    violations = [
        *validation.validate_name(request.namespace, "namespace", "namespace"),
        *validation.validate_name(request.name, "name"),
    ]
    if violations:
        raise RequestError.invalid(violations)
    return request.namespace, request.name


def run_get(snapshot: Snapshot, key: tuple[str, str]) -> pb.GetInferenceServiceResponse:
    """The cached InferenceService; NOT_FOUND with the API server's text."""
    isvc = snapshot.inference_services.get(key)
    if isvc is None:
        raise RequestError("NOT_FOUND", messages.isvc_not_found(key[1]))
    return pb.GetInferenceServiceResponse(
        inference_service=isvc, cache_version=snapshot.version, generation=snapshot.generation
    )


def encode_get(
    snapshot: Snapshot, key: tuple[str, str], response: pb.GetInferenceServiceResponse
) -> pb.GetInferenceServiceResponse:
    return response


# GetInferenceService: its row of ``api.SELECTION_RPCS``.
get_inference_service = Rpc(decode_get, run_get, encode_get)
