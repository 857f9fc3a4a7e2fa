"""Which answers run in the worker thread (``servicers._offloaded``): only those that list every
runtime in scope, and only past ``OFFLOAD_RUNTIMES`` ClusterServingRuntimes; SelectRuntime's
BASIC view, admission, reconcile and an ExplainRuntimes page of at most ``BOUNDED_PAGE`` rows
stay on the event loop at any size."""

from __future__ import annotations

import pytest
from ome_selector.rpc import servicers

BIG = servicers.OFFLOAD_RUNTIMES
PAGE = servicers.BOUNDED_PAGE


@pytest.mark.parametrize(
    ("method", "full_view", "runtimes", "page_size", "offloaded"),
    [
        ("SelectRuntime", False, BIG, 0, False),
        ("SelectRuntime", True, BIG, 0, True),
        ("SelectRuntime", True, BIG - 1, 0, False),
        ("AdmitInferenceService", False, BIG, 0, False),
        ("ReconcileInferenceService", False, BIG, 0, False),
        ("ExplainRuntimes", False, BIG, 0, True),
        ("ExplainRuntimes", False, BIG - 1, 0, False),
        ("GetEffectiveRuntime", False, BIG, 0, True),
        ("ExplainRuntimes", False, BIG, 1, False),
        ("ExplainRuntimes", False, BIG, PAGE, False),
        ("ExplainRuntimes", False, BIG, PAGE + 1, True),
        ("ExplainRuntimes", False, BIG - 1, PAGE + 1, False),
    ],
)
def test_offloaded(method: str, full_view: bool, runtimes: int, page_size: int, offloaded: bool) -> None:
    assert servicers._offloaded(method, full_view, runtimes, page_size) is offloaded
