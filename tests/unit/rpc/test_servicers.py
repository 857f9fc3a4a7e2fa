"""Which answers run in the worker thread (``servicers._offloaded``): only those that list every
runtime in scope, and only past ``OFFLOAD_RUNTIMES`` ClusterServingRuntimes; SelectRuntime's
BASIC view, admission and reconcile stay on the event loop at any size."""

from __future__ import annotations

import pytest
from ome_selector.rpc import servicers

BIG = servicers.OFFLOAD_RUNTIMES


@pytest.mark.parametrize(
    ("method", "full_view", "runtimes", "offloaded"),
    [
        ("SelectRuntime", False, BIG, False),
        ("SelectRuntime", True, BIG, True),
        ("SelectRuntime", True, BIG - 1, False),
        ("AdmitInferenceService", False, BIG, False),
        ("ReconcileInferenceService", False, BIG, False),
        ("ExplainRuntimes", False, BIG, True),
        ("ExplainRuntimes", False, BIG - 1, False),
        ("GetEffectiveRuntime", False, BIG, True),
    ],
)
def test_offloaded(method: str, full_view: bool, runtimes: int, offloaded: bool) -> None:
    assert servicers._offloaded(method, full_view, runtimes) is offloaded
