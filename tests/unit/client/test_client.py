"""The typed Python client: retries (UNAVAILABLE only), deadlines, rich errors, every RPC."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import pytest
from conftest import EXAMPLES, REPO_ROOT
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from helpers_docs import SEED_A_FILE
from ome.selector.v1 import cache_pb2, selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_inference_service, load_manifests
from ome_selector.examples import example_paths
from ome_selector_client import SelectorClient, SelectorError, service_config

SEED_A_ISVC = load_inference_service(SEED_A_FILE)


class ScriptedSelection(selector_pb2_grpc.SelectionServiceServicer):
    """Fails the first ``failures`` calls with ``code`` (a rich status), then answers."""

    def __init__(self, failures: int, code: grpc.StatusCode = grpc.StatusCode.UNAVAILABLE, delay: float = 0.0) -> None:
        self.failures = failures
        self.code = code
        self.delay = delay
        self.calls = 0
        self.call_times: list[float] = []
        self.lock = threading.Lock()

    def SelectRuntime(
        self, request: selector_pb2.SelectRuntimeRequest, context: grpc.ServicerContext
    ) -> selector_pb2.SelectRuntimeResponse:
        with self.lock:
            self.calls += 1
            self.call_times.append(time.monotonic())
            failing = self.calls <= self.failures
        if self.delay:
            time.sleep(self.delay)
        if failing:
            status = status_pb2.Status(code=self.code.value[0], message=f"scripted {self.code.name}")
            if self.code == grpc.StatusCode.INVALID_ARGUMENT:
                bad_request = error_details_pb2.BadRequest(
                    field_violations=[
                        error_details_pb2.BadRequest.FieldViolation(
                            field="inference_service.metadata.namespace", description="namespace is required"
                        ),
                        error_details_pb2.BadRequest.FieldViolation(
                            field="inference_service.spec.model.name", description="a model is required"
                        ),
                    ]
                )
                detail = any_pb2.Any()
                detail.Pack(bad_request)
                status.details.append(detail)
            context.abort_with_status(rpc_status.to_status(status))
        return selector_pb2.SelectRuntimeResponse(cache_version=f"call-{self.calls}")

    def ExplainRuntimes(
        self, request: selector_pb2.ExplainRuntimesRequest, context: grpc.ServicerContext
    ) -> selector_pb2.ExplainRuntimesResponse:
        context.abort(grpc.StatusCode.NOT_FOUND, "plain not found")
        raise AssertionError


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- retries -----------------------------------------------------------------------------------


def test_retries_unavailable_then_succeeds(fake_server: Any) -> None:
    servicer = ScriptedSelection(failures=2)
    with SelectorClient(fake_server(servicer), retries=3, backoff=0.05) as client:
        response = client.select_runtime(SEED_A_ISVC)
    assert response.cache_version == "call-3"
    assert servicer.calls == 3  # gRPC's retry policy spaces them (random, up to 0.05 s then 0.1 s)
    assert service_config(3, 0.05) == {
        "methodConfig": [
            {
                "name": [
                    {"service": "ome.selector.v1.SelectionService"},
                    {"service": "ome.selector.v1.CacheService"},
                    {"service": "grpc.health.v1.Health"},
                ],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.050s",
                    "maxBackoff": "30s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ]
    }


def test_gives_up_after_the_retries(fake_server: Any) -> None:
    servicer = ScriptedSelection(failures=100)
    with SelectorClient(fake_server(servicer), retries=2, backoff=0.001) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.select_runtime(SEED_A_ISVC)
    assert servicer.calls == 3  # the first attempt and two retries
    assert (excinfo.value.code, excinfo.value.message, excinfo.value.field_violations) == (
        grpc.StatusCode.UNAVAILABLE,
        "scripted UNAVAILABLE",
        [],
    )
    assert str(excinfo.value) == "UNAVAILABLE: scripted UNAVAILABLE"


@pytest.mark.parametrize(
    "code",
    [
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
    ],
)
def test_other_codes_are_not_retried(fake_server: Any, code: grpc.StatusCode) -> None:
    servicer = ScriptedSelection(failures=1, code=code)
    with SelectorClient(fake_server(servicer), retries=3, backoff=0.001) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.select_runtime(SEED_A_ISVC)
    assert servicer.calls == 1
    assert (excinfo.value.code, excinfo.value.message) == (code, f"scripted {code.name}")


def test_deadline_is_not_retried(fake_server: Any) -> None:
    servicer = ScriptedSelection(failures=0, delay=0.5)
    with SelectorClient(fake_server(servicer), timeout=0.1, retries=3) as client:
        # Connect first, so a loaded machine cannot spend the 0.1 s deadline on connecting
        # (the fake server has no health service: UNIMPLEMENTED, at once).
        with pytest.raises(SelectorError) as unimplemented:
            client.health(timeout=10)
        assert unimplemented.value.code == grpc.StatusCode.UNIMPLEMENTED
        with pytest.raises(SelectorError) as excinfo:
            client.select_runtime(SEED_A_ISVC)
        assert excinfo.value.code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert servicer.calls == 1
        # a per-call timeout overrides the default deadline
        assert client.select_runtime(SEED_A_ISVC, timeout=5).cache_version == "call-2"


def test_unreachable_server_is_unavailable_after_retries() -> None:
    # gRPC retries the connection failure (random delays of up to 0.05 s, then 0.1 s), then fails.
    with SelectorClient(f"127.0.0.1:{free_port()}", retries=2, backoff=0.05, timeout=2) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.get_cache_status()
    assert excinfo.value.code == grpc.StatusCode.UNAVAILABLE


def test_retries_are_capped_at_grpcs_five_attempts() -> None:
    with pytest.raises(ValueError, match=r"retries must be 0 to 4 \(gRPC allows at most 5 attempts\), not 5"):
        SelectorClient("127.0.0.1:1", retries=5)
    assert service_config(0) == {
        "methodConfig": [{"name": service_config(1)["methodConfig"][0]["name"]}]
    }  # no retry policy


def test_rejects_negative_retries() -> None:
    with pytest.raises(ValueError, match="retries must be 0 or more"):
        SelectorClient("127.0.0.1:1", retries=-1)


# --- errors ------------------------------------------------------------------------------------


def test_selector_error_carries_every_field_violation(fake_server: Any) -> None:
    servicer = ScriptedSelection(failures=1, code=grpc.StatusCode.INVALID_ARGUMENT)
    with SelectorClient(fake_server(servicer)) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.select_runtime(SEED_A_ISVC)
    assert excinfo.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert excinfo.value.message == "scripted INVALID_ARGUMENT"
    assert excinfo.value.field_violations == [
        ("inference_service.metadata.namespace", "namespace is required"),
        ("inference_service.spec.model.name", "a model is required"),
    ]


def test_plain_status_without_details(fake_server: Any) -> None:
    with SelectorClient(fake_server(ScriptedSelection(failures=0))) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.explain_runtimes(SEED_A_ISVC)
    assert (excinfo.value.code, excinfo.value.message, excinfo.value.field_violations) == (
        grpc.StatusCode.NOT_FOUND,
        "plain not found",
        [],
    )


def test_unimplemented_health_raises(fake_server: Any) -> None:
    with SelectorClient(fake_server(ScriptedSelection(failures=0)), retries=0) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.health()
    assert excinfo.value.code == grpc.StatusCode.UNIMPLEMENTED


# --- against the real server -------------------------------------------------------------------


def test_every_rpc_against_the_real_server(running_server: Any) -> None:
    server = running_server(wait_for_sync=True)
    with SelectorClient(server.address) as client:
        assert client.health() == "NOT_SERVING"
        with pytest.raises(TimeoutError, match=r"not SERVING after 0.3s \(last status NOT_SERVING\)"):
            client.wait_until_serving(0.3)

        objects = load_manifests(example_paths()).objects
        status = client.apply_snapshot("v1", objects)
        assert (status.version, status.synced, status.generation) == ("v1", True, 1)
        client.wait_until_serving(10)
        client.wait_until_serving(10, service="ome.selector.v1.SelectionService")

        selected = client.select_runtime(SEED_A_ISVC)
        assert (selected.selection.runtime.name, selected.selection.score, selected.cache_version) == (
            "llama-3-3-70b-hopper",
            2,
            "v1",
        )

        explained = client.explain_runtimes(SEED_A_ISVC)
        assert [(r.runtime.name, r.verdict) for r in explained.runtimes][0] == (
            "llama-3-3-70b-hopper",
            selector_pb2.VERDICT_CANDIDATE,
        )
        assert len(explained.runtimes) == 7

        extra = cache_pb2.CacheObject(
            cluster_serving_runtime=types_pb2.ClusterServingRuntime(metadata=types_pb2.ObjectMeta(name="extra"))
        )
        status = client.upsert_objects([extra])
        assert (status.version, status.generation) == ("v1+2", 2)

        gone = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="extra")
        never = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="never")
        status, not_found = client.delete_objects([gone, never], version="v3")
        assert (status.version, status.generation, not_found) == ("v3", 3, [never])

        current = client.get_cache_status()
        assert (current.version, current.synced, current.generation) == ("v3", True, 3)
        assert sum(c.count for c in current.counts) == 12

        with pytest.raises(SelectorError) as excinfo:
            client.upsert_objects([cache_pb2.CacheObject()])
        assert excinfo.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert excinfo.value.field_violations == [("objects[0]", "exactly one object kind must be set")]

        isvc = types_pb2.InferenceService()
        isvc.CopyFrom(SEED_A_ISVC)
        isvc.metadata.namespace = ""
        with pytest.raises(SelectorError) as excinfo:
            client.select_runtime(isvc)
        assert excinfo.value.field_violations == [("inferenceService.metadata.namespace", "Required value")]

        assert client.health("no.such.Service") == "SERVICE_UNKNOWN"


def test_inline_model_spec(running_server: Any) -> None:
    server = running_server()
    spec = load_manifests([str(EXAMPLES / "models.yaml")]).objects[0].cluster_base_model.spec
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(SEED_A_ISVC)
    isvc.spec.model.name = "not-in-the-cache"
    with SelectorClient(server.address) as client:
        response = client.select_runtime(isvc, model_spec=spec)
    assert response.selection.runtime.name == "llama-3-3-70b-hopper"
    assert response.model.label == "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0"


def test_mypy_strict_is_clean() -> None:
    pytest.importorskip("mypy")
    process = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "client/python/ome_selector_client"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert process.returncode == 0, process.stdout + process.stderr
    assert process.stdout.startswith("Success: no issues found")


def test_package_is_typed() -> None:
    assert (REPO_ROOT / "client" / "python" / "ome_selector_client" / "py.typed").is_file()
    assert (
        Path(sys.modules["ome_selector_client"].__file__ or "").parent
        == REPO_ROOT / "client" / "python" / "ome_selector_client"
    )


def _mypy_service(*paths: str) -> subprocess.CompletedProcess[str]:
    """mypy on ``paths`` with the generated stubs visible (MYPYPATH=client/python): through the
    editable install mypy cannot see them, and every message type would be Any."""
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--ignore-missing-imports", *paths],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MYPYPATH": str(REPO_ROOT / "client" / "python")},
    )


def test_mypy_is_clean_on_the_service() -> None:
    """The service package type-checks (not strict: grpc-stubs lacks parts of grpc.aio)."""
    pytest.importorskip("mypy")
    process = _mypy_service("server/ome_selector")
    assert process.returncode == 0, process.stdout + process.stderr
    assert process.stdout.startswith("Success: no issues found")


def test_the_service_mypy_gate_fails_on_a_seeded_error(tmp_path: Path) -> None:
    """The gate above can fail: a wrong field type on a generated message is reported (it would
    pass silently if the stubs were invisible to mypy)."""
    pytest.importorskip("mypy")
    seeded = tmp_path / "seeded.py"
    seeded.write_text(
        "from ome.selector.v1 import selector_pb2\n"
        "request = selector_pb2.SelectRuntimeRequest()\n"
        "request.view = 'not an enum'\n"
    )
    process = _mypy_service(str(seeded))
    assert process.returncode == 1, process.stdout
    assert 'Incompatible types in assignment (expression has type "str"' in process.stdout
