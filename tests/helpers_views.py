"""The kubectl-ome runtime.md examples of ``effective``, ``history`` and ``sync`` as cache
objects: ``llama-chat`` in ``team-a`` names the ClusterServingRuntime ``vllm-llama`` (which
inherits from ``vllm-base``) with ``autoSync: false``, is pinned to ``cr-vllm-llama-1baf272d``
(an older spec) and has drifted; ``cr-vllm-llama-3c18f4a0`` holds the live merged spec. Revision
names are the page's (OME's hashes); the HASH values are this service's hashes of the specs.
"""

from __future__ import annotations

import copy
from typing import Any

from google.protobuf import json_format
from helpers_docs import entry, inference_service, isvc, load, model, revision, runtime, spec_of
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cli import reports
from ome_selector.rpc import runtimes
from ome_selector.rpc import views as rpc_views

TEAM_A = "team-a"
PINNED = "cr-vllm-llama-1baf272d"
LIVE_REVISION = "cr-vllm-llama-3c18f4a0"
UID = "7d3f9b2e-5c1a-4e8f-9a6b-2f4c8d1e0a37"
REQUEST_ID = "ddf745b1-4bf6-4de0-9933-16e97855fb55"


def vllm_runtimes() -> list[dict[str, Any]]:
    """vllm-base (no autoSelect) and vllm-llama inheriting from it, with the page's identities."""
    base = runtime("vllm-base", entry(auto_select=None))
    base["metadata"].update(uid="a41c7e9d-2b5f-4c83-9e6a-1f8d3b7c05e2", resourceVersion="187", generation=1)
    llama = runtime(
        "vllm-llama", entry(format=spec_of("safetensors", "1.0.0", weight=2), priority=2), inherit_from="vllm-base"
    )
    llama["metadata"].update(uid="3b8e1f6a-9c2d-4a7e-8f15-6d0b4c9a2e81", resourceVersion="212", generation=2)
    return [base, llama]


def merged_spec(sources: list[dict[str, Any]], name: str = "vllm-llama") -> dict[str, Any]:
    """The merged spec of the ClusterServingRuntime ``name`` (GetRuntimeStatus), as YAML reads."""
    store = load(*sources)
    ref = pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name=name)
    status = runtimes.get_runtime_status(store.snapshot, pb.GetRuntimeStatusRequest(runtime=ref))
    return _ints(json_format.MessageToDict(status.spec))


def _ints(value: Any) -> Any:
    """proto3 JSON writes int64 as strings; Kubernetes YAML (and the loader) wants integers."""
    if isinstance(value, dict):
        return {k: int(v) if k in ("weight", "priority") and isinstance(v, str) else _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    return value


def page_revisions(sources: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """cr-vllm-llama-1baf272d (an older spec, 2026-09-01T08:00:00Z) and cr-vllm-llama-3c18f4a0 (the
    live merged spec, 2026-09-20T14:30:00Z), with the page's UIDs and resourceVersions."""
    sources = sources if sources is not None else [*vllm_runtimes(), model(namespace=TEAM_A)]
    live = merged_spec(sources)
    old = copy.deepcopy(live)
    old["modelSizeRange"] = {"min": "1B", "max": "10B"}
    llama = vllm_runtimes()[1]
    pinned = revision(PINNED, llama, data=old, created="2026-09-01T08:00:00Z")
    pinned["metadata"].update(uid="c8f4a2e6-1d9b-4b7a-8e3c-5a0f7d2b9e64", resourceVersion="101")
    current = revision(LIVE_REVISION, llama, data=live, created="2026-09-20T14:30:00Z")
    current["metadata"].update(uid="0e6b9d3a-4f2c-4e1b-b7a8-3c5d9f1e8a20", resourceVersion="102")
    return [pinned, current]


def page_sources() -> list[dict[str, Any]]:
    """Every object of the page's examples."""
    sources = [*vllm_runtimes(), model(namespace=TEAM_A)]
    return [*sources, *page_revisions(sources)]


def llama_chat(**status: Any) -> dict[str, Any]:
    """llama-chat as the page shows it: pinned to cr-vllm-llama-1baf272d, RuntimeDrifted True /
    RevisionMismatch, generation 3 observed; ``status`` overrides status fields."""
    doc = isvc(namespace=TEAM_A, name="llama-chat", runtime_name="vllm-llama")
    doc["spec"]["runtime"]["autoSync"] = False
    doc["metadata"].update(uid=UID, resourceVersion="4711", generation=3)
    doc["status"] = {
        "observedGeneration": 3,
        "pinnedRevisionName": PINNED,
        "conditions": [
            {
                "type": "RuntimeDrifted",
                "status": "True",
                "reason": "RevisionMismatch",
                "message": f"pinned {PINNED}, live spec differs; bump ome.io/runtime-sync annotation to advance",
            }
        ],
        **status,
    }
    return doc


# The RPCs in process on the page's sources, and readers of their answers.

LIVE_HASH = "2b492efa"
PINNED_HASH = "60d7abfc"


def effective(sources: list[Any], service: Any, **fields: Any) -> pb.GetEffectiveRuntimeResponse:
    store = load(*sources)
    request = pb.GetEffectiveRuntimeRequest(inference_service=inference_service(service), **fields)
    return rpc_views.get_effective_runtime(store.snapshot, request)


def history(sources: list[Any], service: Any, **fields: Any) -> pb.GetRuntimeHistoryResponse:
    store = load(*sources)
    request = pb.GetRuntimeHistoryRequest(inference_service=inference_service(service), **fields)
    return rpc_views.get_runtime_history(store.snapshot, request)


def plan(sources: list[Any], service: Any, **fields: Any) -> pb.PlanRuntimeSyncResponse:
    store = load(*sources)
    fields.setdefault("request_id", REQUEST_ID)
    request = pb.PlanRuntimeSyncRequest(inference_service=inference_service(service), **fields)
    return rpc_views.plan_runtime_sync(store.snapshot, request)


def rows(response: pb.GetEffectiveRuntimeResponse, scope: str) -> list[tuple[str, str]]:
    """The (FIELD, VALUE) rows of one SCOPE of the effective table."""
    lines = reports.format_effective(response).splitlines()[1:]
    return [(line.split()[1], line.split(None, 2)[2]) for line in lines if line.split()[0] == scope]


def service(response: pb.GetEffectiveRuntimeResponse) -> dict[str, Any]:
    """The Service rows as a dict (ISSUE rows as a list)."""
    out: dict[str, Any] = {"ISSUE": []}
    for name, value in rows(response, "Service"):
        if name == "ISSUE":
            out["ISSUE"].append(value)
        else:
            out[name] = value
    return out


def chat(**changes: Any) -> dict[str, Any]:
    """llama-chat with ``spec.runtime`` / metadata / status changes."""
    doc = llama_chat()
    doc["spec"]["runtime"].update(changes.pop("runtime", {}))
    for key in ("annotations", "labels"):
        if key in changes:
            doc["metadata"][key] = changes.pop(key)
    doc["metadata"].update(changes.pop("metadata", {}))
    status = changes.pop("status", None)
    if status is not None:
        doc["status"] = status
    assert not changes
    return doc


DRIFTED = {
    "type": "RuntimeDrifted",
    "status": "True",
    "reason": "RevisionMismatch",
    "message": f"pinned {PINNED}, live spec differs; bump ome.io/runtime-sync annotation to advance",
}
