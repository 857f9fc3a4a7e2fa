"""Which answers run in the worker thread (``servicers._offloaded``): only those that list every
runtime in scope, and only past ``OFFLOAD_RUNTIMES`` ClusterServingRuntimes; SelectRuntime's
BASIC view, admission and reconcile stay on the event loop at any size."""

from __future__ import annotations

import pytest
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.rpc import servicers

BIG = servicers.OFFLOAD_RUNTIMES


@pytest.mark.parametrize(
    ("method", "request_", "runtimes", "offloaded"),
    [
        ("SelectRuntime", pb.SelectRuntimeRequest(), BIG, False),
        ("SelectRuntime", pb.SelectRuntimeRequest(view=pb.SELECT_RUNTIME_VIEW_BASIC), BIG, False),
        ("SelectRuntime", pb.SelectRuntimeRequest(view=pb.SELECT_RUNTIME_VIEW_FULL), BIG, True),
        ("SelectRuntime", pb.SelectRuntimeRequest(view=pb.SELECT_RUNTIME_VIEW_FULL), BIG - 1, False),
        ("AdmitInferenceService", pb.AdmitInferenceServiceRequest(), BIG, False),
        ("ReconcileInferenceService", pb.ReconcileInferenceServiceRequest(), BIG, False),
        ("ExplainRuntimes", pb.ExplainRuntimesRequest(), BIG, True),
        ("ExplainRuntimes", pb.ExplainRuntimesRequest(), BIG - 1, False),
        ("GetEffectiveRuntime", pb.GetEffectiveRuntimeRequest(), BIG, True),
    ],
)
def test_offloaded(method: str, request_: object, runtimes: int, offloaded: bool) -> None:
    assert servicers._offloaded(method, request_, runtimes) is offloaded  # type: ignore[arg-type]
