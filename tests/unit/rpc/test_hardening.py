"""Bad and extreme input found by review: each gets a clear error or a documented answer, never
INTERNAL, a crash, a second server on a busy address, or a silently wrong answer."""

from __future__ import annotations

import socket
import subprocess
from pathlib import Path

import grpc
import pytest
from conftest import server_command
from google.protobuf import json_format
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import lifecycle, selection
from ome_selector_client import SelectorClient


def _csr(name: str, *, weight: int = 1, priority: int = 1, size: dict | None = None) -> cache_pb2.CacheObject:
    spec: dict = {
        "supportedModelFormats": [
            {
                "modelFormat": {"name": "safetensors", "weight": weight},
                "modelFramework": {"name": "transformers", "weight": weight},
                "autoSelect": True,
                "priority": priority,
            }
        ]
    }
    if size is not None:
        spec["modelSizeRange"] = size
    msg = json_format.ParseDict({"metadata": {"name": name}, "spec": spec}, types_pb2.ClusterServingRuntime())
    return cache_pb2.CacheObject(cluster_serving_runtime=msg)


def _model(name: str = "m", size: str | None = None) -> cache_pb2.CacheObject:
    spec: dict = {"modelFormat": {"name": "safetensors"}, "modelFramework": {"name": "transformers"}}
    if size is not None:
        spec["modelParameterSize"] = size
    return cache_pb2.CacheObject(
        cluster_base_model=json_format.ParseDict(
            {"metadata": {"name": name}, "spec": spec}, types_pb2.ClusterBaseModel()
        )
    )


def _isvc(**spec: object) -> types_pb2.InferenceService:
    return json_format.ParseDict(
        {"metadata": {"name": "s", "namespace": "ns"}, "spec": {"model": {"name": "m"}, **spec}},
        types_pb2.InferenceService(),
    )


def _store(*objects: cache_pb2.CacheObject) -> CacheStore:
    store = CacheStore()
    store.apply_snapshot("v1", list(objects))
    return store


def test_weights_beyond_int64_wrap_as_in_go_instead_of_failing() -> None:
    """(2^62 + 2^62) x 1 overflows int64: OME's Go arithmetic wraps to -2^63, a score <= 0."""
    store = _store(_csr("big", weight=2**62), _model())
    response = selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=_isvc()))
    assert not response.HasField("selection")
    explain = selection.explain_runtimes(store.snapshot, selector_pb2.ExplainRuntimesRequest(inference_service=_isvc()))
    assert [(r.runtime.name, r.reason) for r in explain.runtimes] == [("big", "auto-select score is 0")]


def test_an_infinite_size_bound_ranks_after_no_range() -> None:
    """runtime-selection-scoring.md, Tie-breaks: no range is the smallest distance possible."""
    store = _store(_csr("a-inf", size={"min": "1B", "max": "inf"}), _csr("z-none"), _model(size="7B"))
    response = selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=_isvc()))
    assert [c.runtime.name for c in response.candidates] == ["z-none", "a-inf"]
    assert selector_pb2.TieBreak.Name(response.candidates[1].tie_break) == "TIE_BREAK_SIZE_DISTANCE"


def test_derived_versions_do_not_grow() -> None:
    store = _store(_model())
    versions = [store.upsert("", [_csr(f"r{i}")]).version for i in range(3)]
    assert versions == ["v1+2", "v1+3", "v1+4"]
    assert store.upsert("v9", [_csr("r9")]).version == "v9"
    assert store.upsert("", [_csr("r10")]).version == "v9+6"


def test_delete_rejects_duplicate_and_unknown_keys_and_a_no_op_changes_nothing() -> None:
    store = _store(_model())
    key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name="gone")
    with pytest.raises(RequestError) as caught:
        store.delete("", [key, key, cache_pb2.ObjectKey(kind=99, name="x")])  # type: ignore[arg-type]
    assert [(v.field, v.description) for v in caught.value.violations] == [
        ("keys[1]", "duplicate key (also keys[0])"),
        ("keys[2].kind", "unknown kind 99"),
    ]
    before = store.snapshot
    status, missing = store.delete("v2", [key])
    assert (list(missing), store.snapshot is before, status.version, status.generation) == ([key], True, "v1", 1)


@pytest.mark.parametrize(
    "spec, field",
    [
        ({"acceleratorSelector": {"policy": "Fastest"}}, "inference_service.spec.accelerator_selector.policy"),
        (
            {"engine": {"acceleratorOverride": {"policy": "Fastest"}}},
            "inference_service.spec.engine.accelerator_override.policy",
        ),
    ],
)
def test_policies_outside_the_crd_enum_are_invalid(spec: dict, field: str) -> None:
    store = _store(_csr("r"), _model())
    with pytest.raises(RequestError) as caught:
        selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=_isvc(**spec)))
    assert [v.field for v in caught.value.violations] == [field]


def test_admission_denies_a_policy_outside_the_enum_with_the_api_servers_text() -> None:
    store = _store(_csr("r"), _model())
    isvc = _isvc(engine={"acceleratorOverride": {"policy": "Fastest"}})
    response = lifecycle.admit_inference_service(
        store.snapshot, selector_pb2.AdmitInferenceServiceRequest(inference_service=isvc)
    )
    assert (response.allowed, response.denial_message) == (
        False,
        'spec.engine.acceleratorOverride.policy: Unsupported value: "Fastest": supported values: "BestFit", "Cheapest", "MostCapable", "FirstAvailable"',
    )


def test_an_unknown_runtime_kind_is_looked_up_namespace_first() -> None:
    """The CRD has no enum on spec.runtime.kind (kubectl-ome documents InvalidDeclaredKind)."""
    store = _store(_csr("r"), _model())
    isvc = _isvc(runtime={"name": "r", "kind": "Foo"})
    response = selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=isvc))
    assert response.selection.runtime.name == "r"


@pytest.mark.parametrize("namespace", ["a.b", "n" * 64])
def test_namespaces_are_dns_labels(namespace: str) -> None:
    store = _store(_model())
    isvc = _isvc()
    isvc.metadata.namespace = namespace
    with pytest.raises(RequestError) as caught:
        selection.select_runtime(store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=isvc))
    assert [v.field for v in caught.value.violations] == ["inference_service.metadata.namespace"]


def test_inline_model_spec_needs_the_model_name_and_explain_takes_one_source() -> None:
    store = _store(_csr("r"))
    isvc = _isvc()
    isvc.spec.model.name = ""
    spec = types_pb2.BaseModelSpec(model_format=types_pb2.ModelFormat(name="safetensors"))
    with pytest.raises(RequestError) as caught:
        selection.select_runtime(
            store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=isvc, model_spec=spec)
        )
    assert [(v.field, v.description) for v in caught.value.violations] == [
        ("inference_service.spec.model.name", "required with model_spec (OME's messages name the model)")
    ]
    with pytest.raises(RequestError) as caught:
        selection.explain_runtimes(
            store.snapshot,
            selector_pb2.ExplainRuntimesRequest(
                model=selector_pb2.ModelLookup(name="m", namespace="ns"), model_spec=spec
            ),
        )
    assert [v.field for v in caught.value.violations] == ["model_spec"]


def test_entries_need_model_format_and_model_framework() -> None:
    runtime = json_format.ParseDict(
        {"metadata": {"name": "r"}, "spec": {"supportedModelFormats": [{"modelFramework": {"name": "transformers"}}]}},
        types_pb2.ClusterServingRuntime(),
    )
    with pytest.raises(RequestError) as caught:
        CacheStore().apply_snapshot("v1", [cache_pb2.CacheObject(cluster_serving_runtime=runtime)])
    assert [v.field for v in caught.value.violations] == [
        "objects[0].cluster_serving_runtime.spec.supported_model_formats[0].model_format"
    ]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_second_server_cannot_share_a_busy_port(running_server) -> None:  # type: ignore[no-untyped-def]
    first = running_server(listen=f"127.0.0.1:{_free_port()}")
    second = subprocess.run(server_command(listen=first.address), capture_output=True, text=True, timeout=60)
    assert second.returncode == 1
    assert f"cannot listen on {first.address}" in second.stderr


def test_a_second_server_cannot_take_over_a_unix_socket(running_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    listen = f"unix:{tmp_path / 's.sock'}"
    first = running_server(listen=listen)
    second = subprocess.run(server_command(listen=listen), capture_output=True, text=True, timeout=60)
    assert (second.returncode, f"cannot listen on {listen}: address in use" in second.stderr) == (1, True)
    with grpc.insecure_channel(first.address) as channel:
        status = cache_pb2_grpc.CacheServiceStub(channel).GetCacheStatus(cache_pb2.GetCacheStatusRequest()).status
    assert status.synced


def test_answers_larger_than_4_mib_reach_the_python_client(running_server) -> None:  # type: ignore[no-untyped-def]
    server = running_server(wait_for_sync=True)
    runtimes = [
        _csr(f"runtime-with-a-long-name-to-fill-the-answer-{i:05d}", size={"min": "1B", "max": "2B"})
        for i in range(12000)
    ]
    for obj in runtimes:
        obj.cluster_serving_runtime.spec.supported_model_formats[
            0
        ].model_architecture = "SomeVeryLongArchitectureNameForCausalLM"
    with SelectorClient(server.address, timeout=120) as client:
        client.apply_snapshot("big", [*runtimes, _model(size="7B")])
        response = client.explain_runtimes(_isvc())
    assert len(response.runtimes) == 12000
    assert response.ByteSize() > 4 * 1024 * 1024
    assert [r.message for r in response.runtimes[0].reasons] == [
        "model format 'mt:safetensors:transformers' not in supported formats: model has no architecture but runtime requires SomeVeryLongArchitectureNameForCausalLM",
        "model size 7B is outside supported range [1B, 2B]",
    ]
