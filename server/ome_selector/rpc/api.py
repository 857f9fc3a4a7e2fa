"""The SelectionService's unary RPCs, one row each: request proto -> flows -> response proto.

Every row takes the snapshot the caller read once and a request proto, and returns the response
proto. It raises ``RequestError``: INVALID_ARGUMENT (with field violations) for bad input,
NOT_FOUND for an unknown model or named runtime, UNAVAILABLE when the cache has never been
synced. ``no runtime found``, a denial and a failed check are normal answers. The servicers and
the offline CLI dispatch through the same table."""

from __future__ import annotations

from typing import Any

from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2 as pb

from ome_selector.cache.snapshot import Snapshot
from ome_selector.rpc.common import Rpc
from ome_selector.rpc.inference_services import get_inference_service
from ome_selector.rpc.lifecycle import admit_inference_service, reconcile_inference_service
from ome_selector.rpc.revision_gc import plan_revision_gc
from ome_selector.rpc.runtimes import get_runtime_status, preview_cache_change, validate_serving_runtime
from ome_selector.rpc.selection import explain_runtimes, select_runtime
from ome_selector.rpc.tree import get_runtime_tree
from ome_selector.rpc.views import get_effective_runtime, get_runtime_history, plan_runtime_sync

# SelectionService: method name -> its (decode, run, encode) row (``rpc.common.Rpc``). The
# servicer's method of that name and the offline CLI (``answer``) call the same row.
SELECTION_RPCS: dict[str, Rpc[Any, Any, Any, Any]] = {
    "SelectRuntime": select_runtime,
    "ExplainRuntimes": explain_runtimes,
    "AdmitInferenceService": admit_inference_service,
    "ReconcileInferenceService": reconcile_inference_service,
    "GetEffectiveRuntime": get_effective_runtime,
    "ValidateServingRuntime": validate_serving_runtime,
    "PreviewCacheChange": preview_cache_change,
    "GetRuntimeStatus": get_runtime_status,
    "GetRuntimeHistory": get_runtime_history,
    "PlanRuntimeSync": plan_runtime_sync,
    "GetRuntimeTree": get_runtime_tree,
    "PlanRevisionGC": plan_revision_gc,
    "GetInferenceService": get_inference_service,
}
# SelectionService's streaming method, served by ``servicers.SelectionServicer`` itself.
STREAMING_RPCS = frozenset({"WatchSelections"})

_RPC_BY_REQUEST = {
    method.input_type.full_name: method.name for method in pb.DESCRIPTOR.services_by_name["SelectionService"].methods
}


def answer(snapshot: Snapshot, request: Message) -> Message:
    """The ``SELECTION_RPCS`` row for ``request``'s type, applied (the offline CLI and the fuzzer
    dispatch through it, as the servicer does). Raises ``RequestError`` as that row does."""
    return SELECTION_RPCS[_RPC_BY_REQUEST[request.DESCRIPTOR.full_name]](snapshot, request)
