"""BASIC SelectRuntime answers carry the best ``candidate_limit`` candidates (default 10, 0 = all)
and ``total_candidates``; FULL carries every candidate; a negative limit is INVALID_ARGUMENT."""

from __future__ import annotations

import pytest
from helpers_docs import entry, inference_service, isvc, load, model, runtime
from ome.selector.v1 import selector_pb2
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import selection

# Twelve candidates: priority p on rt-p makes the ranking rt-12, rt-11, ..., rt-01.
STORE = load(*(runtime(f"rt-{p:02d}", entry(priority=p)) for p in range(1, 13)), model())
RANKED = [f"rt-{p:02d}" for p in range(12, 0, -1)]


def _select(**fields: object) -> selector_pb2.SelectRuntimeResponse:
    request = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc()), **fields)
    return selection.select_runtime(STORE.snapshot, request)


@pytest.mark.parametrize(
    "fields, shown",
    [
        ({}, 10),
        ({"candidate_limit": 3}, 3),
        ({"candidate_limit": 0}, 12),
        ({"candidate_limit": 40}, 12),
        ({"view": selector_pb2.SELECT_RUNTIME_VIEW_FULL}, 12),
        ({"view": selector_pb2.SELECT_RUNTIME_VIEW_FULL, "candidate_limit": 3}, 12),
    ],
)
def test_candidates_carried(fields: dict[str, object], shown: int) -> None:
    response = _select(**fields)
    assert [c.runtime.name for c in response.candidates] == RANKED[:shown]
    assert [c.rank for c in response.candidates] == list(range(1, shown + 1))
    assert response.total_candidates == 12
    assert response.selection.runtime.name == "rt-12"
    assert list(response.warnings) == ["Runtime rt-12 will be auto-selected for model llama-3-2-3b-instruct"]


def test_negative_candidate_limit_is_invalid_argument() -> None:
    with pytest.raises(RequestError) as excinfo:
        _select(candidate_limit=-1)
    assert excinfo.value.code == "INVALID_ARGUMENT"
    assert [(v.field, v.description) for v in excinfo.value.violations] == [
        ("candidate_limit", "candidate_limit must be 0 (all) or more, got -1")
    ]
