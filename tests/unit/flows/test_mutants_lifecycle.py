"""Admission and reconcile outcomes that no other test pinned down exactly (found by
``scripts/mutation.py``), asserted on the whole API answer.

- ome-selection-facts.md 6.2: "``spec.model`` absent, or ``name`` empty -> ``model reference is
  required``"; 6.1: "Every error return makes controller-runtime retry with backoff. When
  selection fails, nothing downstream is touched, so existing workloads keep running."
- troubleshoot-runtime-selection.md: "runtime <name> not found in namespace <namespace> or at
  cluster scope".
- serving-runtimes.md: the webhook "checks that the runtime exists only when the InferenceService
  has a base model".
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from helpers_docs import inference_service, load
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2
from ome_selector.flows import resolution
from ome_selector.rpc import lifecycle, selection

WEBHOOK = "inferenceservice.ome-webhook-server.validator"


def service(spec: dict[str, Any]) -> Any:
    return inference_service(
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "InferenceService",
            "metadata": {"name": "svc", "namespace": "demo"},
            "spec": spec,
        }
    )


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"runtime": {"name": "rt"}, "engine": {}}, id="no spec.model"),
        pytest.param({"runtime": {"name": "rt"}, "model": {}, "engine": {}}, id="spec.model with an empty name"),
    ],
)
def test_a_named_runtime_without_a_model_name_is_admitted_without_a_runtime_check(spec: dict[str, Any]) -> None:
    store = load([])
    got = lifecycle.admit_inference_service(
        store.snapshot, pb.AdmitInferenceServiceRequest(inference_service=service(spec))
    )
    assert got == pb.AdmitInferenceServiceResponse(
        allowed=True, path=pb.ADMISSION_PATH_NAMED_RUNTIME_NO_MODEL, webhook=WEBHOOK, cache_version="v1"
    )


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param({"engine": {}}, id="no spec.model"),
        pytest.param({"model": {}, "engine": {}}, id="spec.model with an empty name"),
    ],
)
def test_reconcile_without_a_model_reference_requeues_and_leaves_the_workload(spec: dict[str, Any]) -> None:
    store = load([])
    got = lifecycle.reconcile_inference_service(
        store.snapshot, pb.ReconcileInferenceServiceRequest(inference_service=service(spec))
    )
    assert got == pb.ReconcileInferenceServiceResponse(
        events=[pb.Event(type="Warning", reason="ModelReconcileError", message="model reference is required")],
        requeue=True,
        workload_untouched=True,
        cache_version="v1",
        # No runtime to follow: AutoSync without a live runtime (kubectl-ome runtime.md, pin state).
        pin=pb.RuntimePin(
            mode=pb.PIN_MODE_AUTO_SYNC,
            state=pb.PIN_STATE_UNAVAILABLE,
            sync=pb.SYNC_STATE_ABSENT,
            live_relation=pb.LIVE_RELATION_UNKNOWN,
        ),
    )


def test_a_named_runtime_that_is_missing_is_a_named_decision() -> None:
    # troubleshoot-runtime-selection.md, "The runtime you named isn't found".
    spec = {"runtime": {"name": "rt"}, "model": {"name": "m"}, "engine": {}}
    store = load(
        {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterBaseModel",
            "metadata": {"name": "m"},
            "spec": {"modelFormat": {"name": "safetensors"}},
        }
    )
    got = resolution.decide(store.snapshot, resolution.SelectQuery(service(spec)))
    assert (got.named, got.runtime, got.runtime_not_found, got.runtime_error, got.model.error, got.model.not_found) == (
        True,
        None,
        "runtime rt not found in namespace demo or at cluster scope",
        "",
        "",
        "",
    )


def test_an_inline_model_spec_has_no_kind_or_namespace() -> None:
    # domain.py: "Model: ... kind/name are empty for an inline spec"; the answer's model identity
    # carries the InferenceService's spec.model.name and the label only.
    store = load([])
    isvc = service({"model": {"name": "m"}, "engine": {}})
    inline = json_format.ParseDict(
        {"modelFormat": {"name": "safetensors", "version": "1.0.0"}}, types_pb2.BaseModelSpec()
    )
    got = selection.select_runtime(store.snapshot, pb.SelectRuntimeRequest(inference_service=isvc, model_spec=inline))
    assert got.model == pb.ModelIdentity(kind="", namespace="", name="m", label="mt:safetensors:1.0.0")
