"""The InferenceService's ``Ready`` condition when ``RuntimeReady`` is ``False``: ReconcileInferenceService's
``ready_unchanged`` and ``ready_condition_kept``
(the condition left as it is, never one to set: test_reconcile.py TestReadyIsNeverTouched).

Pages: reference-a-runtime-explicitly.md, "The runtime was deleted or disabled" ("``RuntimeReady``
doesn't count toward ``Ready``, so the InferenceService stays ``Ready`` while they serve");
troubleshoot-runtime-selection.md ("A new InferenceService then gets no pods, and one that's
serving keeps its pods and stays ``Ready``"); serving-runtimes.md, the common errors table ("A
running workload keeps serving meanwhile, and ``RuntimeReady`` doesn't count toward ``Ready``");
runtime-accelerator-class-matching.md ("``Ready`` and serving pods are unaffected"). Where the pages
give no text for an InferenceService without a ``Ready`` condition: ome-selection-facts.md 6.1 and
8.6 (the reconcile returns before the status step, so OME writes none).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers_docs import (
    LLAMA_3_2_1B_CBM,
    LLAMA_3_2_1B_ISVC,
    QWEN2_5_7B_ISVC,
    QWEN2_5_7B_NO_RUNTIME_MESSAGE,
    SRT_LLAMA_3_2_1B_INSTRUCT,
    catalog,
    inference_service,
    load,
    troubleshoot_qwen_sources,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.rpc import lifecycle

SERVING = {
    "type": "Ready",
    "status": "True",
    "lastTransitionTime": "2026-09-28T08:00:00Z",
}
DELETED = "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"


def reconcile(sources: list[Any], doc: dict[str, Any]) -> pb.ReconcileInferenceServiceResponse:
    store = load(*sources)
    request = pb.ReconcileInferenceServiceRequest(inference_service=inference_service(doc))
    return lifecycle.reconcile_inference_service(store.snapshot, request)


def with_conditions(text: str, *conditions: dict[str, Any]) -> dict[str, Any]:
    doc = yaml.safe_load(text)
    doc["status"] = {"conditions": [copy.deepcopy(c) for c in conditions]}
    return doc


def ready(response: pb.ReconcileInferenceServiceResponse) -> tuple[bool, tuple[str, str, str, str] | None]:
    c = response.ready_condition_kept
    kept = (c.type, c.status, c.reason, c.message) if response.HasField("ready_condition_kept") else None
    return response.ready_unchanged, kept


def test_a_serving_inferenceservice_stays_ready_when_its_runtime_is_deleted() -> None:
    """reference-a-runtime-explicitly.md: the runtime deleted, RuntimeReady False/RuntimeNotFound,
    the workload left as it is, Ready still True."""
    got = reconcile([LLAMA_3_2_1B_CBM], with_conditions(LLAMA_3_2_1B_ISVC, SERVING))
    assert (got.runtime_ready.status, got.runtime_ready.reason, got.runtime_ready.message) == (
        "False",
        "RuntimeNotFound",
        DELETED,
    )
    assert ready(got) == (True, ("Ready", "True", "", ""))
    assert got.workload_untouched
    # No Ready transition: no InferenceServiceNotReady event, only RuntimeNotFound.
    assert [(e.type, e.reason) for e in got.events] == [("Warning", "RuntimeNotFound")]


def test_a_new_inferenceservice_gets_no_pods_and_no_ready() -> None:
    """troubleshoot-runtime-selection.md: no runtime matches a new InferenceService; it gets no
    pods, and OME writes no Ready condition for it."""
    got = reconcile(troubleshoot_qwen_sources(), yaml.safe_load(QWEN2_5_7B_ISVC))
    assert (got.runtime_ready.status, got.runtime_ready.message) == ("False", QWEN2_5_7B_NO_RUNTIME_MESSAGE)
    assert ready(got) == (True, None)


@pytest.mark.parametrize(
    "condition",
    [
        pytest.param(
            {"type": "Ready", "status": "False", "reason": "EngineNotReady", "message": "pods pending"}, id="False"
        ),
        pytest.param({"type": "Ready", "status": "Unknown", "reason": "Initializing"}, id="Unknown"),
    ],
)
def test_ready_is_left_whatever_it_says(condition: dict[str, Any]) -> None:
    """RuntimeReady doesn't count toward Ready: whatever Ready holds, it is left as it is."""
    got = reconcile([LLAMA_3_2_1B_CBM], with_conditions(LLAMA_3_2_1B_ISVC, condition))
    assert ready(got) == (True, ("Ready", condition["status"], condition["reason"], condition.get("message", "")))


def test_a_resolved_runtime_says_nothing_about_ready() -> None:
    """RuntimeReady True/RuntimeResolved after a failure: the controller goes on to the workload,
    which decides Ready (not modelled): ``ready_unchanged`` is false and ``ready_condition_kept`` absent."""
    prior = {"type": "RuntimeReady", "status": "False", "reason": "RuntimeNotFound", "message": DELETED}
    got = reconcile(
        [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], with_conditions(LLAMA_3_2_1B_ISVC, SERVING, prior)
    )
    assert (got.runtime_ready.status, got.runtime_ready.reason) == ("True", "RuntimeResolved")
    assert ready(got) == (False, None)


def test_no_runtime_ready_condition_says_nothing_about_ready() -> None:
    """An InferenceService that never failed selection: no RuntimeReady, nothing about Ready."""
    got = reconcile([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], with_conditions(LLAMA_3_2_1B_ISVC, SERVING))
    assert (got.HasField("runtime_ready"), *ready(got)) == (False, False, None)
