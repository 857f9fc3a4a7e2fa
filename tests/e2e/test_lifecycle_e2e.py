"""The docs' examples end to end through the real server: ``running_server`` starts
``ome-selector serve`` on 127.0.0.1 with the manifests written into ``tmp_path`` (as the pages
write them) or ``../shared/ome-cluster``, and every call goes through the generated stubs.

Pages: runtime-accelerator-class-matching.md (seed A), runtime-deployment-mode-matching.md (seed
B), accelerator-classes.md / select-accelerators.md (the runtime webhook), runtime-inheritance.md
(the profile example), reference/kubectl-ome/runtime.md (effective), and the ome-cluster
InferenceService ``llama-70b-named-child``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import grpc
import pytest
from conftest import CATALOG_RUNTIMES, OME_CLUSTER
from helpers_docs import (
    INHERITANCE_ISVC,
    LLAMA_3_2_3B_CBM,
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_HOPPER,
    LLAMA_3_3_70B_ISVC,
    LLAMA_3_70B_ISVC,
    NVIDIA_HOPPER_CLASSES,
    SGLANG_CHILD,
    SGLANG_PROFILE,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_LLAMA_3_3_70B_MULTINODE,
    TEAM_A_EXPLAIN_TABLE,
    table,
)
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2_grpc
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_inference_service, load_manifests

TIMEOUT = 30

# The docs' manifests (helpers_docs) are written into tmp_path verbatim; the catalog runtime is read in place.
SRT_LLAMA_3_3_70B_INSTRUCT_FILE = CATALOG_RUNTIMES / SRT_LLAMA_3_3_70B_INSTRUCT


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def service(tmp_path: Path, name: str, text: str) -> types_pb2.InferenceService:
    return load_inference_service(str(write(tmp_path, name, text)))


@pytest.fixture
def stubs(running_server) -> Iterator:  # type: ignore[no-untyped-def]
    """``connect(manifests)`` -> (SelectionServiceStub, CacheServiceStub) of a fresh server."""
    channels: list[grpc.Channel] = []

    def connect(
        manifests: list[Path],
    ) -> tuple[selector_pb2_grpc.SelectionServiceStub, cache_pb2_grpc.CacheServiceStub]:
        server = running_server(manifests=[str(m) for m in manifests])
        assert server.address.startswith("127.0.0.1:")
        channel = grpc.insecure_channel(server.address)
        channels.append(channel)
        return selector_pb2_grpc.SelectionServiceStub(channel), cache_pb2_grpc.CacheServiceStub(channel)

    yield connect
    for channel in channels:
        channel.close()


def admit(
    stub: selector_pb2_grpc.SelectionServiceStub, isvc: types_pb2.InferenceService
) -> pb.AdmitInferenceServiceResponse:
    return stub.AdmitInferenceService(pb.AdmitInferenceServiceRequest(inference_service=isvc), timeout=TIMEOUT)


def reconcile(
    stub: selector_pb2_grpc.SelectionServiceStub, isvc: types_pb2.InferenceService, has_condition: bool = False
) -> pb.ReconcileInferenceServiceResponse:
    request = pb.ReconcileInferenceServiceRequest(inference_service=isvc, has_runtime_ready_condition=has_condition)
    return stub.ReconcileInferenceService(request, timeout=TIMEOUT)


def chain(view: pb.GetEffectiveRuntimeResponse) -> list[str]:
    """The effective chain, root first, as `CSR/<name>` or `SR/<namespace>/<name>`."""
    return [
        f"CSR/{r.name}" if r.kind == pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME else f"SR/{r.namespace}/{r.name}"
        for r in view.inheritance_chain
    ]


def events(response: pb.ReconcileInferenceServiceResponse) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in response.events]


# ---- seed A ---------------------------------------------------------------------------------------


def test_seed_a_warning_denial_and_named_runtime(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runtime = write(tmp_path, "runtime.yaml", LLAMA_3_3_70B_HOPPER)
    model = write(tmp_path, "model.yaml", LLAMA_3_3_70B_CBM)
    selection, _ = stubs([runtime, model, SRT_LLAMA_3_3_70B_INSTRUCT_FILE])
    isvc = service(tmp_path, "inference-service.yaml", LLAMA_3_3_70B_ISVC)

    got = admit(selection, isvc)
    assert (got.allowed, list(got.warnings), got.webhook) == (
        True,
        ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
        "inferenceservice.ome-webhook-server.validator",
    )

    a100 = types_pb2.InferenceService()
    a100.CopyFrom(isvc)
    a100.spec.accelerator_selector.accelerator_class = "nvidia-a100"
    got = admit(selection, a100)
    assert not got.allowed
    assert got.denial_message.startswith(
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner configuration: "
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
        "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: "
    )
    assert "llama-3-3-70b-hopper (runtime does not support the required accelerator class)" in got.denial_message
    assert "srt-llama-3-3-70b-instruct (runtime does not support the required accelerator class)" in got.denial_message
    rec = reconcile(selection, a100)
    assert (rec.runtime_ready.status, rec.runtime_ready.reason) == ("False", "RuntimeNotFound")
    assert got.denial_message.endswith(rec.runtime_ready.message)
    assert events(rec) == [("Warning", "RuntimeNotFound", rec.runtime_ready.message)]

    named = types_pb2.InferenceService()
    named.CopyFrom(isvc)
    named.spec.runtime.name = "srt-llama-3-3-70b-instruct"
    got = admit(selection, named)
    assert (got.allowed, list(got.warnings)) == (
        True,
        [
            'runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" '
            "(runtime srt-llama-3-3-70b-instruct does not support model : runtime does not support the required accelerator "
            "class); proceeding because the runtime was named explicitly"
        ],
    )


def test_seed_a_only_runtime_gives_the_quoted_message(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ "When the example InferenceService names nvidia-a100 instead, and llama-3-3-70b-hopper is
    the only runtime, the message is ..."."""
    selection, _ = stubs(
        [write(tmp_path, "runtime.yaml", LLAMA_3_3_70B_HOPPER), write(tmp_path, "model.yaml", LLAMA_3_3_70B_CBM)]
    )
    isvc = service(
        tmp_path,
        "inference-service.yaml",
        LLAMA_3_3_70B_ISVC.replace("acceleratorClass: nvidia-h100", "acceleratorClass: nvidia-a100"),
    )
    quoted = (
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
        "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: llama-3-3-70b-hopper (runtime does not support the required accelerator class)"
    )
    got = admit(selection, isvc)
    assert got.denial_message == (
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner configuration: "
        + quoted
    )
    rec = reconcile(selection, isvc)
    assert events(rec) == [("Warning", "RuntimeNotFound", quoted)]
    assert (rec.runtime_ready.type, rec.runtime_ready.severity, rec.requeue) == ("RuntimeReady", "Info", False)


# ---- seed B ---------------------------------------------------------------------------------------


def test_seed_b_denial_and_advisory(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    runtime = write(tmp_path, "runtime.yaml", SRT_LLAMA_3_3_70B_MULTINODE)
    model = write(tmp_path, "model.yaml", LLAMA_3_3_70B_CBM)
    selection, _ = stubs([runtime, SRT_LLAMA_3_3_70B_INSTRUCT_FILE, model])
    isvc = service(tmp_path, "inference-service.yaml", LLAMA_3_70B_ISVC)

    got = admit(selection, isvc)
    assert (got.allowed, got.denial_message) == (
        False,
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner configuration: "
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
        "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode (runtime engine "
        "deployment mode MultiNode does not match requested engine deployment mode OMENative)",
    )

    named = types_pb2.InferenceService()
    named.CopyFrom(isvc)
    named.spec.runtime.name = "srt-llama-3-3-70b-instruct-multinode"
    advisory = (
        "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model llama-3-3-70b-instruct "
        "(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode MultiNode "
        "does not match requested engine deployment mode OMENative); proceeding because the runtime was named explicitly"
    )
    got = admit(selection, named)
    assert (got.allowed, list(got.warnings)) == (
        True,
        [
            'runtime "srt-llama-3-3-70b-instruct-multinode" does not declare support for model "llama-3-3-70b-instruct" '
            "(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode MultiNode "
            "does not match requested engine deployment mode OMENative); proceeding because the runtime was named explicitly"
        ],
    )
    rec = reconcile(selection, named)
    assert events(rec) == [("Warning", "RuntimeCompatibilityAdvisory", advisory)]
    assert (rec.selection.runtime.name, rec.workload_untouched) == ("srt-llama-3-3-70b-instruct-multinode", False)
    (engine,) = rec.components
    assert (engine.deployment_mode, engine.mode_source) == ("MultiNode", pb.MODE_SOURCE_COMPONENT_ANNOTATION)

    named.spec.runtime.auto_sync = False
    assert events(reconcile(selection, named)) == []


# ---- the runtime webhook -----------------------------------------------------------------------------


def test_runtime_webhook_unknown_accelerator_classes(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """runtime-accelerator-class-matching.md: if a class the runtime lists is missing, the webhook
    rejects the runtime; select-accelerators.md: create the classes first."""
    selection, cache = stubs([write(tmp_path, "model.yaml", LLAMA_3_3_70B_CBM)])
    (runtime,) = load_manifests([str(write(tmp_path, "runtime.yaml", LLAMA_3_3_70B_HOPPER))]).objects
    request = pb.ValidateServingRuntimeRequest(cluster_serving_runtime=runtime.cluster_serving_runtime)

    got = selection.ValidateServingRuntime(request, timeout=TIMEOUT)
    assert (got.allowed, got.webhook, got.denial_message) == (
        False,
        "clusterservingruntime.ome-webhook-server.validator",
        "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h100 nvidia-h200]",
    )

    h100, h200 = load_manifests([str(write(tmp_path, "accelerator-classes.yaml", NVIDIA_HOPPER_CLASSES))]).objects
    cache.UpsertObjects(cache_pb2.UpsertObjectsRequest(objects=[h100]), timeout=TIMEOUT)
    got = selection.ValidateServingRuntime(request, timeout=TIMEOUT)
    assert (got.allowed, got.denial_message) == (
        False,
        "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h200]",
    )

    cache.UpsertObjects(cache_pb2.UpsertObjectsRequest(objects=[h200]), timeout=TIMEOUT)
    got = selection.ValidateServingRuntime(request, timeout=TIMEOUT)
    assert (got.allowed, got.denial_message) == (True, "")

    # accelerator-classes.md: after a class is deleted, updates of an enabled runtime that lists
    # it are rejected; a disabled runtime is not checked.
    disabled = pb.ValidateServingRuntimeRequest()
    disabled.CopyFrom(request)
    cache.DeleteObjects(
        cache_pb2.DeleteObjectsRequest(
            keys=[cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_ACCELERATOR_CLASS, name="nvidia-h200")]
        ),
        timeout=TIMEOUT,
    )
    assert selection.ValidateServingRuntime(request, timeout=TIMEOUT).denial_message == (
        "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h200]"
    )
    disabled.cluster_serving_runtime.spec.disabled = True
    assert selection.ValidateServingRuntime(disabled, timeout=TIMEOUT).allowed


# ---- runtime inheritance --------------------------------------------------------------------------


def test_inheritance_example(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    profile = write(tmp_path, "profile.yaml", SGLANG_PROFILE)
    child = write(tmp_path, "runtime.yaml", SGLANG_CHILD)
    model = write(tmp_path, "model.yaml", LLAMA_3_2_3B_CBM)
    selection, cache = stubs([model, profile, child])
    isvc = service(tmp_path, "isvc.yaml", INHERITANCE_ISVC)

    got = admit(selection, isvc)
    assert (got.allowed, list(got.warnings)) == (True, [])
    assert list(got.selection.inheritance_chain) == ["sglang-profile", "sglang-llama-3-2-3b"]

    rec = reconcile(selection, isvc)
    assert (events(rec), rec.requeue, rec.workload_untouched) == ([], False, False)
    assert (rec.selection.runtime.kind, rec.selection.runtime.namespace, rec.selection.runtime.name) == (
        pb.RUNTIME_KIND_SERVING_RUNTIME,
        "llama-demo",
        "sglang-llama-3-2-3b",
    )
    assert list(rec.selection.inheritance_chain) == ["sglang-profile", "sglang-llama-3-2-3b"]

    view = selection.GetEffectiveRuntime(pb.GetEffectiveRuntimeRequest(inference_service=isvc), timeout=TIMEOUT)
    assert (view.state, view.runtime, view.selection, chain(view)) == (
        "Available",
        "SR/llama-demo/sglang-llama-3-2-3b",
        "Explicit",
        ["CSR/sglang-profile", "SR/llama-demo/sglang-llama-3-2-3b"],
    )

    (child_object,) = load_manifests([str(child)]).objects
    verdict = selection.ValidateServingRuntime(
        pb.ValidateServingRuntimeRequest(serving_runtime=child_object.serving_runtime), timeout=TIMEOUT
    )
    assert (verdict.allowed, verdict.webhook, list(verdict.inheritance_chain)) == (
        True,
        "servingruntime.ome-webhook-server.validator",
        ["sglang-profile", "sglang-llama-3-2-3b"],
    )

    # Delete the profile: the chain breaks (runtime-inheritance.md, "When a chain breaks").
    cache.DeleteObjects(
        cache_pb2.DeleteObjectsRequest(
            keys=[cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="sglang-profile")]
        ),
        timeout=TIMEOUT,
    )
    chain_error = 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
    rec = reconcile(selection, isvc)
    assert events(rec) == [
        (
            "Warning",
            "RuntimeValidationError",
            f"Runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: {chain_error}",
        )
    ]
    assert (rec.requeue, rec.workload_untouched) == (True, True)
    got = admit(selection, isvc)
    assert not got.allowed and got.denial_message.endswith(chain_error)
    verdict = selection.ValidateServingRuntime(
        pb.ValidateServingRuntimeRequest(serving_runtime=child_object.serving_runtime), timeout=TIMEOUT
    )
    assert (verdict.allowed, verdict.denial_message) == (False, chain_error)


def test_profile_marker_needs_disabled(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    selection, _ = stubs([write(tmp_path, "model.yaml", LLAMA_3_2_3B_CBM)])
    (profile,) = load_manifests(
        [str(write(tmp_path, "profile.yaml", SGLANG_PROFILE.replace("  disabled: true\n", "")))]
    ).objects
    got = selection.ValidateServingRuntime(
        pb.ValidateServingRuntimeRequest(cluster_serving_runtime=profile.cluster_serving_runtime), timeout=TIMEOUT
    )
    assert (got.allowed, got.webhook, got.denial_message) == (
        False,
        "clusterservingruntime.ome-webhook-server.validator",
        'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true',
    )


# ---- the ome-cluster ------------------------------------------------------------------------------


@pytest.fixture
def cluster(stubs):  # type: ignore[no-untyped-def]
    selection, _ = stubs([CATALOG_RUNTIMES, OME_CLUSTER])
    isvcs = {
        s.metadata.name: s for s in load_manifests([str(OME_CLUSTER / "inferenceservices.yaml")]).inference_services
    }
    return selection, isvcs


def test_ome_cluster_named_child(cluster) -> None:  # type: ignore[no-untyped-def]
    """team-llama-70b-child inherits from srt-llama-3-3-70b-instruct-hopper, which lists
    nvidia-h100-80gb; the recorded 70B lies in the child's 60B-75B range, so every check passes:
    the named runtime is used with no advisory, no event and no admission warning."""
    selection, isvcs = cluster
    isvc = isvcs["llama-70b-named-child"]

    rec = reconcile(selection, isvc)
    assert events(rec) == []
    assert (
        rec.selection.runtime.kind,
        rec.selection.runtime.namespace,
        rec.selection.runtime.name,
        rec.selection.mode,
    ) == (
        pb.RUNTIME_KIND_SERVING_RUNTIME,
        "team-a",
        "team-llama-70b-child",
        pb.SELECTION_MODE_NAMED,
    )
    assert list(rec.selection.inheritance_chain) == ["srt-llama-3-3-70b-instruct-hopper", "team-llama-70b-child"]
    assert list(rec.selection.reasons) == []
    assert (rec.requeue, rec.workload_untouched, rec.HasField("runtime_ready")) == (False, False, False)
    (engine,) = rec.components
    # The child lists no classes itself; the merged spec has the parent's, and the named class exists.
    assert (engine.accelerator_class, engine.accelerator_source, engine.deployment_mode, engine.mode_source) == (
        "nvidia-h100-80gb",
        pb.ACCELERATOR_SOURCE_SELECTOR,
        "RawDeployment",
        pb.MODE_SOURCE_DEFAULT,
    )

    got = admit(selection, isvc)
    assert (got.allowed, list(got.warnings)) == (True, [])

    view = selection.GetEffectiveRuntime(pb.GetEffectiveRuntimeRequest(inference_service=isvc), timeout=TIMEOUT)
    assert (view.state, view.runtime, view.selection, chain(view)) == (
        "Available",
        "SR/team-a/team-llama-70b-child",
        "Explicit",
        ["CSR/srt-llama-3-3-70b-instruct-hopper", "SR/team-a/team-llama-70b-child"],
    )


def _named_child_on_a100(isvcs) -> types_pb2.InferenceService:  # type: ignore[no-untyped-def]
    """The named child asked for nvidia-a100-80gb, a class its inherited list does not have."""
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(isvcs["llama-70b-named-child"])
    isvc.spec.accelerator_selector.accelerator_class = "nvidia-a100-80gb"
    return isvc


def test_ome_cluster_named_child_on_another_class_is_an_advisory(cluster) -> None:  # type: ignore[no-untyped-def]
    """The accelerator-class check fails, so OME proceeds with the named runtime and warns; the
    check runs before the format is known, hence OME's empty model format in the reason."""
    selection, isvcs = cluster
    isvc = _named_child_on_a100(isvcs)
    advisory_reason = (
        "runtime team-llama-70b-child does not support model : runtime does not support the required accelerator class"
    )
    rec = reconcile(selection, isvc)
    assert events(rec) == [
        (
            "Warning",
            "RuntimeCompatibilityAdvisory",
            f"Runtime team-llama-70b-child does not declare support for model llama-3-3-70b-instruct ({advisory_reason}); "
            "proceeding because the runtime was named explicitly",
        )
    ]
    assert [(r.check, r.message) for r in rec.selection.reasons] == [
        (pb.CHECK_ACCELERATOR_CLASS, "runtime does not support the required accelerator class")
    ]
    got = admit(selection, isvc)
    assert (got.allowed, list(got.warnings)) == (
        True,
        [
            f'runtime "team-llama-70b-child" does not declare support for model "llama-3-3-70b-instruct" ({advisory_reason}); '
            "proceeding because the runtime was named explicitly"
        ],
    )


def test_ome_cluster_named_child_pinned(cluster) -> None:  # type: ignore[no-untyped-def]
    """autoSync: false skips the compatibility check, so the advisory of the test above is not sent."""
    selection, isvcs = cluster
    isvc = _named_child_on_a100(isvcs)
    isvc.spec.runtime.auto_sync = False
    assert events(reconcile(selection, isvc)) == []


def test_ome_cluster_kind_cluster_serving_runtime_falls_back_to_the_namespace(cluster) -> None:  # type: ignore[no-untyped-def]
    selection, isvcs = cluster
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(isvcs["llama-70b-named-child"])
    isvc.spec.runtime.kind = "ClusterServingRuntime"
    rec = reconcile(selection, isvc)
    # kind ClusterServingRuntime: no CSR of that name, then the ServingRuntime in the namespace.
    assert rec.selection.runtime.name == "team-llama-70b-child"
    isvc.metadata.namespace = "llama-demo"
    rec = reconcile(selection, isvc, has_condition=True)
    assert (rec.runtime_ready.status, rec.runtime_ready.reason, rec.runtime_ready.message) == (
        "False",
        "RuntimeNotFound",
        "runtime team-llama-70b-child not found in namespace llama-demo or at cluster scope",
    )


# ---- kubectl ome runtime explain --model / effective (docs examples) ------------------------------------

TEAM_A = """\
apiVersion: ome.io/v1beta1
kind: BaseModel
metadata:
  name: llama-3-2-3b-instruct
  namespace: team-a
spec:
  modelArchitecture: LlamaForCausalLM
  modelFormat:
    name: safetensors
    version: "1.0.0"
  modelFramework:
    name: transformers
    version: "4.45.0.dev0"
  modelParameterSize: 3.21B
---
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata:
  name: team-llama
  namespace: team-a
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 1
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: vllm-base
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: vllm-llama
  annotations:
    ome.io/inherit-from: vllm-base
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0", weight: 2}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
      priority: 2
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: srt-llama-1b
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
  modelSizeRange: {min: 500M, max: 2B}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: vllm-legacy
spec:
  disabled: true
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
"""

LLAMA_CHAT = """\
apiVersion: ome.io/v1beta1
kind: InferenceService
metadata:
  name: llama-chat
  namespace: team-a
spec:
  model:
    name: llama-3-2-3b-instruct
  runtime:
    name: vllm-llama
  engine:
    minReplicas: 1
    maxReplicas: 1
"""


def test_explain_and_effective_docs_examples(stubs, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    selection, _ = stubs([write(tmp_path, "team-a.yaml", TEAM_A)])
    request = pb.ExplainRuntimesRequest(model=pb.ModelLookup(name="llama-3-2-3b-instruct", namespace="team-a"))
    got = selection.ExplainRuntimes(request, timeout=TIMEOUT)
    assert table(got) == TEAM_A_EXPLAIN_TABLE

    llama_chat = service(tmp_path, "llama-chat.yaml", LLAMA_CHAT)
    by_isvc = selection.ExplainRuntimes(pb.ExplainRuntimesRequest(inference_service=llama_chat), timeout=TIMEOUT)
    assert table(by_isvc) == table(got)
    assert list(by_isvc.notes) == ["Note: spec.runtime is explicit; automatic selection below is hypothetical."]

    view = selection.GetEffectiveRuntime(pb.GetEffectiveRuntimeRequest(inference_service=llama_chat), timeout=TIMEOUT)
    (engine,) = view.components
    assert (view.state, view.runtime, view.selection, chain(view), engine.deployment_mode, engine.mode_source) == (
        "Available",
        "CSR/vllm-llama",
        "Explicit",
        ["CSR/vllm-base", "CSR/vllm-llama"],
        "RawDeployment",
        pb.MODE_SOURCE_DEFAULT,
    )

    with pytest.raises(grpc.RpcError) as raised:
        selection.ExplainRuntimes(
            pb.ExplainRuntimesRequest(model=pb.ModelLookup(name="llama-3-2-3b-instruct", namespace="team-b")),
            timeout=TIMEOUT,
        )
    assert (raised.value.code(), raised.value.details()) == (
        grpc.StatusCode.NOT_FOUND,
        'clusterbasemodels.ome.io "llama-3-2-3b-instruct" not found',
    )

    with pytest.raises(grpc.RpcError) as raised:
        selection.ExplainRuntimes(pb.ExplainRuntimesRequest(), timeout=TIMEOUT)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "exactly one of model or inference_service is required" in raised.value.details()
