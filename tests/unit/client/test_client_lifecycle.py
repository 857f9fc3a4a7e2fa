"""The typed client's lifecycle methods: ``admit_inference_service``,
``reconcile_inference_service``, ``get_effective_runtime``, ``validate_serving_runtime`` and
``explain_runtimes`` / ``explain_model`` by model, against the real server; and the shared
retry / deadline / error conventions on the new RPCs."""

from __future__ import annotations

import threading
import time
from typing import Any, Iterator

import grpc
import pytest
from conftest import EXAMPLES
from helpers_docs import SCORING_FILE, SEED_A_A100_FILE, SEED_A_FILE, SEED_A_NAMED_FILE, SEED_B_FILE
from ome.selector.v1 import selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_inference_service, load_manifests
from ome_selector_client import SelectorClient, SelectorError

SEED_A = load_inference_service(SEED_A_FILE)
SEED_A_A100 = load_inference_service(SEED_A_A100_FILE)
SEED_A_NAMED = load_inference_service(SEED_A_NAMED_FILE)
SEED_B = load_inference_service(SEED_B_FILE)
SCORING = load_inference_service(SCORING_FILE)
HOPPER = load_manifests([str(EXAMPLES / "llama-3-3-70b-hopper.yaml")]).objects[0].cluster_serving_runtime
TEAM_LLAMA = next(
    o.serving_runtime
    for o in load_manifests([str(EXAMPLES / "scoring-worked-example.yaml")]).objects
    if o.HasField("serving_runtime")
)
NO_RUNTIME_NOTE = "No serving runtimes found in the selected namespace or at cluster scope."


@pytest.fixture
def client(running_server: Any) -> Iterator[SelectorClient]:
    server = running_server()
    with SelectorClient(server.address) as c:
        yield c


# --- against the real server -------------------------------------------------------------------


def test_admit_inference_service(client: SelectorClient) -> None:
    allowed = client.admit_inference_service(SEED_A)
    assert (allowed.allowed, allowed.path, allowed.denial_message, list(allowed.warnings)) == (
        True,
        selector_pb2.ADMISSION_PATH_AUTO_SELECT,
        "",
        ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
    )
    assert (allowed.selection.runtime.name, allowed.selection.mode) == (
        "llama-3-3-70b-hopper",
        selector_pb2.SELECTION_MODE_AUTO,
    )
    assert allowed.webhook == "inferenceservice.ome-webhook-server.validator"
    assert allowed.cache_version.startswith("manifests-")

    named = client.admit_inference_service(SEED_A_NAMED)
    assert (named.allowed, named.path, named.selection.mode) == (
        True,
        selector_pb2.ADMISSION_PATH_NAMED_RUNTIME,
        selector_pb2.SELECTION_MODE_NAMED,
    )
    assert named.warnings[0].endswith("proceeding because the runtime was named explicitly")

    denied = client.admit_inference_service(SEED_A_A100)
    assert (denied.allowed, denied.path, list(denied.warnings)) == (False, selector_pb2.ADMISSION_PATH_AUTO_SELECT, [])
    assert denied.denial_message.startswith(
        "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner configuration: "
        "no runtime found to support model"
    )

    no_engine = types_pb2.InferenceService()
    no_engine.CopyFrom(SEED_A)
    no_engine.spec.ClearField("engine")
    assert client.admit_inference_service(no_engine).path == selector_pb2.ADMISSION_PATH_NO_ENGINE

    no_namespace = types_pb2.InferenceService()
    no_namespace.CopyFrom(SEED_A)
    no_namespace.metadata.namespace = ""
    with pytest.raises(SelectorError) as excinfo:
        client.admit_inference_service(no_namespace)
    assert excinfo.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert excinfo.value.field_violations == [("inferenceService.metadata.namespace", "Required value")]


def test_reconcile_inference_service(client: SelectorClient) -> None:
    first = client.reconcile_inference_service(SEED_A)
    assert (first.selection.runtime.name, first.HasField("runtime_ready"), list(first.events), first.requeue) == (
        "llama-3-3-70b-hopper",
        False,
        [],
        False,
    )
    assert [
        (c.component, c.deployment_mode, c.mode_source, c.accelerator_class, c.accelerator_source)
        for c in first.components
    ] == [
        (
            selector_pb2.COMPONENT_ENGINE,
            "RawDeployment",
            selector_pb2.MODE_SOURCE_DEFAULT,
            "nvidia-h100",
            selector_pb2.ACCELERATOR_SOURCE_SELECTOR,
        ),
    ]
    recovered = client.reconcile_inference_service(SEED_A, has_runtime_ready_condition=True)
    assert (
        recovered.runtime_ready.type,
        recovered.runtime_ready.status,
        recovered.runtime_ready.reason,
        recovered.runtime_ready.message,
    ) == (
        "RuntimeReady",
        "True",
        "RuntimeResolved",
        "",
    )
    positional = client.reconcile_inference_service(SEED_A, True)
    assert positional == recovered

    failed = client.reconcile_inference_service(SEED_A_A100)
    assert (
        failed.HasField("selection"),
        failed.runtime_ready.status,
        failed.runtime_ready.reason,
        failed.workload_untouched,
    ) == (
        False,
        "False",
        "RuntimeNotFound",
        True,
    )
    assert [(e.type, e.reason, e.message) for e in failed.events] == [
        ("Warning", "RuntimeNotFound", failed.runtime_ready.message)
    ]

    advisory = client.reconcile_inference_service(SEED_A_NAMED)
    assert [(e.type, e.reason) for e in advisory.events] == [("Warning", "RuntimeCompatibilityAdvisory")]


def test_get_effective_runtime(client: SelectorClient) -> None:
    view = client.get_effective_runtime(SEED_B)
    assert (view.state, view.reason, view.runtime, view.selection, list(view.inheritance_chain)) == (
        "Available",
        "",
        "CSR/llama-3-3-70b-hopper",
        "Selected",
        [selector_pb2.RuntimeRef(kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="llama-3-3-70b-hopper")],
    )
    assert (view.runtime_ref.kind, view.runtime_ref.name) == (
        selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME,
        "llama-3-3-70b-hopper",
    )
    assert [(c.deployment_mode, c.mode_source, c.accelerator_source) for c in view.components] == [
        ("OMENative", selector_pb2.MODE_SOURCE_SERVICE_SPEC, selector_pb2.ACCELERATOR_SOURCE_NONE_NOT_REQUESTED),
    ]
    named = client.get_effective_runtime(SEED_A_NAMED)
    assert (
        named.state,
        named.selection,
        list(named.inheritance_chain),
    ) == (  # no parent: the chain is the runtime itself
        "Available",
        "Explicit",
        [
            selector_pb2.RuntimeRef(
                kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="srt-llama-3-3-70b-instruct"
            )
        ],
    )
    scoring = client.get_effective_runtime(SCORING)
    assert (scoring.runtime, scoring.runtime_ref.namespace) == ("SR/llama-demo/team-llama", "llama-demo")
    missing = client.get_effective_runtime(SEED_A_A100)
    assert (missing.state, missing.reason, missing.runtime, missing.HasField("runtime_ref")) == (
        "Unavailable",
        "NotFound",
        "",
        False,
    )


def test_validate_serving_runtime(client: SelectorClient) -> None:
    admitted = client.validate_serving_runtime(HOPPER)
    assert (admitted.allowed, admitted.denial_message, admitted.webhook) == (
        True,
        "",
        "clusterservingruntime.ome-webhook-server.validator",
    )
    sr = client.validate_serving_runtime(TEAM_LLAMA)
    assert (sr.allowed, sr.webhook) == (True, "servingruntime.ome-webhook-server.validator")

    child = types_pb2.ServingRuntime()
    child.metadata.name, child.metadata.namespace = "child", "llama-demo"
    child.metadata.annotations["ome.io/inherit-from"] = "vllm-llama"
    assert list(client.validate_serving_runtime(child).inheritance_chain) == ["vllm-llama", "child"]

    unknown = types_pb2.ClusterServingRuntime()
    unknown.CopyFrom(HOPPER)
    unknown.spec.accelerator_requirements.accelerator_classes[:] = ["nvidia-b200", "nvidia-h100", "nvidia-b300"]
    denied = client.validate_serving_runtime(unknown)
    assert (denied.allowed, denied.denial_message) == (
        False,
        "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-b200 nvidia-b300]",
    )

    nameless = types_pb2.ServingRuntime()
    nameless.metadata.name = "x"
    with pytest.raises(SelectorError) as excinfo:
        client.validate_serving_runtime(nameless)
    assert excinfo.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert excinfo.value.field_violations == [("servingRuntime.metadata.namespace", "Required value")]

    with pytest.raises(
        TypeError, match="runtime must be a ServingRuntime or ClusterServingRuntime message, not InferenceService"
    ):
        client.validate_serving_runtime(SEED_A)  # type: ignore[arg-type]


def test_explain_by_model(client: SelectorClient) -> None:
    by_model = client.explain_model("llama-3-2-3b-instruct", "llama-demo")
    assert [
        (r.runtime.name, r.rank, r.priority, r.weight)
        for r in by_model.runtimes
        if r.verdict == selector_pb2.VERDICT_CANDIDATE
    ] == [
        ("team-llama", 1, 1, 2),
        ("vllm-llama", 2, 2, 6),
        ("srt-llama-small", 3, 3, 6),
        ("srt-llama-large", 4, 3, 6),
    ]
    assert (by_model.model.kind, by_model.model.namespace, list(by_model.notes)) == ("BaseModel", "llama-demo", [])
    lookup = selector_pb2.ModelLookup(name="llama-3-2-3b-instruct", namespace="llama-demo")
    assert client.explain_runtimes(model=lookup) == by_model
    # The existing signature still works, and gives the same rows for this InferenceService.
    assert list(client.explain_runtimes(SCORING).runtimes) == list(by_model.runtimes)
    assert list(client.explain_runtimes(SEED_A_NAMED).notes) == [
        "Note: spec.runtime is explicit; automatic selection below is hypothetical."
    ]

    with pytest.raises(SelectorError) as excinfo:
        client.explain_model("llama-3-2-3b-instruct", "default")
    assert (excinfo.value.code, excinfo.value.message) == (
        grpc.StatusCode.NOT_FOUND,
        'clusterbasemodels.ome.io "llama-3-2-3b-instruct" not found',
    )
    for kwargs in ({}, {"isvc": SCORING, "model": lookup}):
        with pytest.raises(SelectorError) as excinfo:
            client.explain_runtimes(**kwargs)
        assert excinfo.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert excinfo.value.field_violations == [("model", "exactly one of model or inference_service is required")]


def test_explain_model_without_runtimes(running_server: Any) -> None:
    server = running_server(manifests=[str(EXAMPLES / "models.yaml")])
    with SelectorClient(server.address) as client:
        response = client.explain_model("llama-3-3-70b-instruct", "default")
    assert (list(response.runtimes), list(response.notes)) == ([], [NO_RUNTIME_NOTE])


def test_new_rpcs_are_unavailable_until_synced(running_server: Any) -> None:
    server = running_server(wait_for_sync=True)
    with SelectorClient(server.address, retries=1, backoff=0.01) as client:
        calls = [
            lambda: client.admit_inference_service(SEED_A),
            lambda: client.reconcile_inference_service(SEED_A),
            lambda: client.get_effective_runtime(SEED_A),
            lambda: client.validate_serving_runtime(HOPPER),
            lambda: client.explain_model("llama-3-3-70b-instruct", "default"),
            lambda: client.get_runtime_status("llama-3-3-70b-hopper"),
        ]
        for call in calls:
            with pytest.raises(SelectorError) as excinfo:
                call()
            assert (excinfo.value.code, excinfo.value.message) == (grpc.StatusCode.UNAVAILABLE, "cache not synced yet")
        client.apply_snapshot(
            "v1",
            load_manifests(
                [
                    str(EXAMPLES / "models.yaml"),
                    str(EXAMPLES / "accelerator-classes.yaml"),
                    str(EXAMPLES / "llama-3-3-70b-hopper.yaml"),
                ]
            ).objects,
        )
        assert client.admit_inference_service(SEED_A).cache_version == "v1"
        assert client.get_effective_runtime(SEED_A).runtime == "CSR/llama-3-3-70b-hopper"
        assert list(client.get_runtime_status("llama-3-3-70b-hopper").status.inheritance_chain) == [
            "llama-3-3-70b-hopper"
        ]


# --- conventions: retries, deadlines --------------------------------------------------------------


class FlakyLifecycle(selector_pb2_grpc.SelectionServiceServicer):
    """Fails the first ``failures`` calls of every RPC with ``code``; sleeps ``delay`` first."""

    def __init__(self, failures: int, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE, delay: float = 0.0) -> None:
        self.failures, self.code, self.delay = failures, code, delay
        self.calls: dict[str, int] = {}
        self.lock = threading.Lock()

    def _answer(self, name: str, context: grpc.ServicerContext, response: Any) -> Any:
        with self.lock:
            self.calls[name] = self.calls.get(name, 0) + 1
            failing = self.calls[name] <= self.failures
        if self.delay:
            time.sleep(self.delay)
        if failing:
            context.abort(self.code, f"scripted {self.code.name}")
        return response

    def AdmitInferenceService(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._answer("admit", context, selector_pb2.AdmitInferenceServiceResponse(cache_version="ok"))

    def ReconcileInferenceService(self, request: Any, context: grpc.ServicerContext) -> Any:
        assert request.has_runtime_ready_condition
        return self._answer("reconcile", context, selector_pb2.ReconcileInferenceServiceResponse(cache_version="ok"))

    def GetEffectiveRuntime(self, request: Any, context: grpc.ServicerContext) -> Any:
        return self._answer("effective", context, selector_pb2.GetEffectiveRuntimeResponse(cache_version="ok"))

    def ValidateServingRuntime(self, request: Any, context: grpc.ServicerContext) -> Any:
        assert request.WhichOneof("runtime") == "cluster_serving_runtime"
        return self._answer("validate", context, selector_pb2.ValidateServingRuntimeResponse(cache_version="ok"))

    def ExplainRuntimes(self, request: Any, context: grpc.ServicerContext) -> Any:
        assert request.HasField("model") and not request.HasField("inference_service")
        return self._answer("explain", context, selector_pb2.ExplainRuntimesResponse(cache_version="ok"))

    def GetRuntimeStatus(self, request: Any, context: grpc.ServicerContext) -> Any:
        assert (request.runtime.kind, request.runtime.namespace, request.runtime.name) == (
            selector_pb2.RUNTIME_KIND_SERVING_RUNTIME,
            "team-a",
            "team-llama",
        )
        return self._answer("status", context, selector_pb2.GetRuntimeStatusResponse(cache_version="ok"))


def _lifecycle_calls(client: SelectorClient, timeout: float | None = None) -> dict[str, Any]:
    return {
        "admit": lambda: client.admit_inference_service(SEED_A, timeout=timeout),
        "reconcile": lambda: client.reconcile_inference_service(
            SEED_A, has_runtime_ready_condition=True, timeout=timeout
        ),
        "effective": lambda: client.get_effective_runtime(SEED_A, timeout=timeout),
        "validate": lambda: client.validate_serving_runtime(HOPPER, timeout=timeout),
        "explain": lambda: client.explain_model("m", "ns", timeout=timeout),
        "status": lambda: client.get_runtime_status("team-llama", "team-a", timeout=timeout),
    }


def test_new_methods_retry_unavailable(fake_server: Any) -> None:
    servicer = FlakyLifecycle(failures=2)
    with SelectorClient(fake_server(servicer), retries=2, backoff=0.001) as client:
        for name, call in _lifecycle_calls(client).items():
            assert call().cache_version == "ok", name
    assert servicer.calls == {"admit": 3, "reconcile": 3, "effective": 3, "validate": 3, "explain": 3, "status": 3}


def test_new_methods_do_not_retry_other_codes(fake_server: Any) -> None:
    servicer = FlakyLifecycle(failures=1, code=grpc.StatusCode.INVALID_ARGUMENT)
    with SelectorClient(fake_server(servicer), retries=3, backoff=0.001) as client:
        for name, call in _lifecycle_calls(client).items():
            with pytest.raises(SelectorError) as excinfo:
                call()
            assert (excinfo.value.code, excinfo.value.message) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "scripted INVALID_ARGUMENT",
            ), name
    assert set(servicer.calls.values()) == {1}


def test_new_methods_honour_deadlines(fake_server: Any) -> None:
    servicer = FlakyLifecycle(failures=0, delay=0.3)
    with SelectorClient(fake_server(servicer), timeout=0.05, retries=3) as client:
        for name, call in _lifecycle_calls(client).items():
            with pytest.raises(SelectorError) as excinfo:
                call()
            assert excinfo.value.code == grpc.StatusCode.DEADLINE_EXCEEDED, name
        # a per-call timeout overrides the client's default
        for name, call in _lifecycle_calls(client, timeout=5).items():
            assert call().cache_version == "ok", name
    # No retry after DEADLINE_EXCEEDED (a call whose deadline passes in transit never arrives).
    assert set(servicer.calls) == {"admit", "reconcile", "effective", "validate", "explain", "status"}
    assert max(servicer.calls.values()) <= 2
