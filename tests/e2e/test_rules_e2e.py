"""Admission operations and the smaller v1.3 rules end to end: ``ome-selector serve`` on
127.0.0.1 with the OME catalog runtimes and ../shared/ome-cluster, every call through the
generated stubs.

* AdmitInferenceService: CREATE, UPDATE and DELETE of the ome-cluster InferenceService
  ``llama-70b-native`` with an engine ``deploymentStrategy`` (deployment-modes.md's warning), and a
  ``distribution: Sharded`` copy of the catalog ClusterBaseModel ``llama-3-3-70b-instruct``
  written with UpsertObjects (base-models.md, "Distribution");
* SelectRuntime and ReconcileInferenceService for the Sharded model (its named runtime is not
  used);
* ValidateServingRuntime: CREATE, UPDATE (the ``scalingPolicy`` ratchet) and DELETE of the catalog
  runtime ``srt-llama-3-3-70b-instruct`` (serving-runtimes.md, "Scaling policy", "The engine,
  decoder and router").
"""

from __future__ import annotations

import copy
from typing import Any

import grpc
import pytest
from conftest import CATALOG_RUNTIMES, OME_CLUSTER
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2_grpc
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cache.manifests import load_manifests, load_runtime

TIMEOUT = 30
CREATE, UPDATE, DELETE = pb.ADMISSION_OPERATION_CREATE, pb.ADMISSION_OPERATION_UPDATE, pb.ADMISSION_OPERATION_DELETE
SHARDED = "no model cache provider is configured for sharded model loading"
LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0"
ENGINE_WARNING = (
    'engine.deploymentStrategy is set but deploymentMode is "OMENative"; deploymentStrategy applies only to '
    "RawDeployment and is ignored here — use engine.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
)
NAMED_ERROR = (
    f"runtime team-llama-70b-child does not support model safetensors: model format '{LABEL}' not in supported "
    f"formats: {SHARDED}"
)


@pytest.fixture
def cluster(running_server):  # type: ignore[no-untyped-def]
    """(SelectionServiceStub, CacheServiceStub, the ome-cluster InferenceServices by name, the
    loaded objects) of a server on the catalog runtimes and ome-cluster."""
    # OME's no-runtime text whole (no cap): these tests quote its entries.
    server = running_server(
        manifests=[str(CATALOG_RUNTIMES), str(OME_CLUSTER)], extra_args=["--max-message-bytes", "0"]
    )
    assert server.address.startswith("127.0.0.1:")
    channel = grpc.insecure_channel(server.address)
    loaded = load_manifests([str(CATALOG_RUNTIMES), str(OME_CLUSTER)])
    isvcs = {s.metadata.name: s for s in loaded.inference_services}
    yield (
        selector_pb2_grpc.SelectionServiceStub(channel),
        cache_pb2_grpc.CacheServiceStub(channel),
        isvcs,
        loaded.objects,
    )
    channel.close()


def request(message_type: Any, field: str, operation: int, new: Any, old: Any) -> Any:
    """An admission request of ``message_type`` with the new object in ``field`` and the old one in
    ``old_<field>``, when given."""
    out = message_type(operation=operation)
    for name, value in ((field, new), (f"old_{field}", old)):
        if value is not None:
            getattr(out, name).CopyFrom(value)
    return out


def admit(stub: Any, operation: int, new: Any = None, old: Any = None) -> tuple[bool, str, str, list[str]]:
    got = stub.AdmitInferenceService(
        request(pb.AdmitInferenceServiceRequest, "inference_service", operation, new, old), timeout=TIMEOUT
    )
    assert got.webhook == "inferenceservice.ome-webhook-server.validator"
    return got.allowed, pb.AdmissionPath.Name(got.path), got.denial_message, list(got.warnings)


def test_inference_service_operations_and_sharded_models(cluster) -> None:  # type: ignore[no-untyped-def]
    selection, cache, isvcs, objects = cluster
    native = copy.deepcopy(isvcs["llama-70b-native"])
    native.spec.engine.deployment_strategy.type = "RollingUpdate"
    admitted = (
        True,
        "ADMISSION_PATH_AUTO_SELECT",
        "",
        [
            ENGINE_WARNING,
            "Runtime srt-llama-3-3-70b-instruct-omenative will be auto-selected for model llama-3-3-70b-instruct",
        ],
    )
    assert admit(selection, CREATE, native) == admitted
    assert admit(selection, pb.ADMISSION_OPERATION_UNSPECIFIED, native) == admitted
    assert admit(selection, UPDATE, native, isvcs["llama-70b-native"]) == admitted
    assert admit(selection, DELETE, old=native) == (True, "ADMISSION_PATH_DELETE", "", [])
    with pytest.raises(grpc.RpcError) as error:
        admit(selection, DELETE, native)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.details() == (
        "invalid request: inferenceService: Forbidden: must not be set on DELETE; set old_inference_service; "
        "oldInferenceService: Required value"
    )

    # base-models.md, "Distribution": the catalog model, Sharded.
    [model] = [
        o
        for o in objects
        if o.WhichOneof("object") == "cluster_base_model"
        and o.cluster_base_model.metadata.name == "llama-3-3-70b-instruct"
    ]
    sharded = copy.deepcopy(model)
    sharded.cluster_base_model.spec.distribution = "Sharded"
    cache.UpsertObjects(cache_pb2.UpsertObjectsRequest(version="sharded", objects=[sharded]), timeout=TIMEOUT)

    named = isvcs["llama-70b-named-child"]
    denial = f"runtime team-llama-70b-child does not support model llama-3-3-70b-instruct: {NAMED_ERROR}"
    assert admit(selection, CREATE, named) == (False, "ADMISSION_PATH_NAMED_RUNTIME", denial, [])
    assert admit(selection, UPDATE, named, named) == (False, "ADMISSION_PATH_NAMED_RUNTIME", denial, [])
    assert admit(selection, DELETE, old=named) == (True, "ADMISSION_PATH_DELETE", "", [])
    allowed, path, auto_denial, warnings = admit(selection, CREATE, isvcs["llama-70b"])
    assert (allowed, path, warnings) == (False, "ADMISSION_PATH_AUTO_SELECT", [])
    assert auto_denial.startswith(
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner "
        "configuration: no runtime found to support model safetensors with format safetensors in namespace "
        "llama-demo. Checked 206 runtimes (0 namespace-scoped, 206 cluster-scoped). Excluded runtimes: "
    )
    assert f"; srt-llama-3-3-70b-instruct (model format '{LABEL}' not in supported formats: {SHARDED}); " in auto_denial

    selected = selection.SelectRuntime(pb.SelectRuntimeRequest(inference_service=named), timeout=TIMEOUT)
    assert (selected.runtime_error, selected.HasField("selection"), list(selected.warnings)) == (NAMED_ERROR, False, [])
    reconciled = selection.ReconcileInferenceService(
        pb.ReconcileInferenceServiceRequest(inference_service=named), timeout=TIMEOUT
    )
    assert [(e.type, e.reason, e.message) for e in reconciled.events] == [
        (
            "Warning",
            "RuntimeValidationError",
            f"Runtime team-llama-70b-child does not support model llama-3-3-70b-instruct: {NAMED_ERROR}",
        )
    ]
    assert (reconciled.requeue, reconciled.workload_untouched) == (True, True)


PINNED = (
    'spec.scalingPolicy.mode "Pinned" is accepted by the API but not implemented: no controller applies it, so the '
    'policy would silently behave like "Independent"; use "Independent" or omit the policy (ScalingModeNotImplemented)'
)


def test_runtime_webhook_operations(cluster) -> None:  # type: ignore[no-untyped-def]
    selection, _, _, _ = cluster
    _, stored = load_runtime(str(CATALOG_RUNTIMES / "srt" / "meta" / "llama-3-3-70b-instruct-rt.yaml"), "")
    pinned = copy.deepcopy(stored)
    pinned.spec.scaling_policy.mode = "Pinned"
    relabelled = copy.deepcopy(pinned)
    relabelled.metadata.labels["team"] = "a"
    referencing = copy.deepcopy(stored)
    referencing.spec.decoder_config.autoscaler_policy_ref.name = "llama-autoscaling"

    def validate(operation: int, new: Any = None, old: Any = None) -> tuple[bool, str, str]:
        sent = request(pb.ValidateServingRuntimeRequest, "cluster_serving_runtime", operation, new, old)
        got = selection.ValidateServingRuntime(sent, timeout=TIMEOUT)
        return got.allowed, got.denial_message, got.webhook

    webhook = "clusterservingruntime.ome-webhook-server.validator"
    assert validate(CREATE, stored) == (True, "", webhook)
    assert validate(CREATE, pinned) == (False, PINNED, webhook)
    assert validate(UPDATE, pinned, stored) == (False, PINNED, webhook)
    assert validate(UPDATE, relabelled, pinned) == (True, "", webhook)
    assert validate(UPDATE, relabelled) == (False, PINNED, webhook)
    assert validate(DELETE, old=pinned) == (True, "", webhook)
    assert validate(CREATE, referencing) == (
        False,
        "decoderConfig: autoscalerPolicyRef is not supported on serving runtimes; policy refs attach on the "
        "InferenceService only",
        webhook,
    )
    with pytest.raises(grpc.RpcError) as error:
        validate(CREATE, pinned, stored)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert error.value.details() == (
        "invalid request: oldClusterServingRuntime: Forbidden: must not be set on CREATE, only on UPDATE and DELETE"
    )
