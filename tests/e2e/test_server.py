"""The server: the real process (listening line, reflection, health, logs, signals) and the
servicers' error mapping in process."""

from __future__ import annotations

import asyncio
import json
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest
from conftest import EXAMPLES, server_command
from google.rpc import error_details_pb2, status_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from helpers_docs import SEED_A_FILE
from ome.selector.v1 import cache_pb2, selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_inference_service, load_manifests, manifests_version
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.examples import example_paths
from ome_selector.rpc import api, enums
from ome_selector.rpc.servicers import CacheServicer, SelectionServicer
from ome_selector.server import health
from ome_selector.server import lifecycle as server_module
from ome_selector_client import SelectorClient, SelectorError

SELECTION = "ome.selector.v1.SelectionService"
CACHE = "ome.selector.v1.CacheService"
EXAMPLES_VERSION = manifests_version(load_manifests(example_paths()).objects)
SEED_A_ISVC = load_inference_service(SEED_A_FILE)
TEXT_RPC_LINE = re.compile(r" INFO ome_selector\.rpc: rpc method=(\S+) code=(\w+) duration_ms=(\d+(?:\.\d+)?)$")


def no_namespace_isvc() -> types_pb2.InferenceService:
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(SEED_A_ISVC)
    isvc.metadata.namespace = ""
    return isvc


def make_calls(address: str) -> None:
    """Three RPCs: GetCacheStatus (OK), SelectRuntime (OK), SelectRuntime (INVALID_ARGUMENT)."""
    with SelectorClient(address, retries=0) as client:
        client.get_cache_status()
        client.select_runtime(SEED_A_ISVC)
        with pytest.raises(SelectorError):
            client.select_runtime(no_namespace_isvc())


EXPECTED_CALLS = [
    (f"/{CACHE}/GetCacheStatus", "OK"),
    (f"/{SELECTION}/SelectRuntime", "OK"),
    (f"/{SELECTION}/SelectRuntime", "INVALID_ARGUMENT"),
]


# --- the real process --------------------------------------------------------------------------


def test_listening_line_has_the_real_port(running_server) -> None:
    server = running_server()
    assert re.fullmatch(r"127\.0\.0\.1:\d+", server.address)
    assert server.address != "127.0.0.1:0"
    listening = [line for line in server.lines if "listening on" in line]
    assert len(listening) == 1 and listening[0].endswith(f" INFO ome_selector.server: listening on {server.address}")


def test_reflection_lists_the_four_services(running_server) -> None:
    server = running_server()
    with grpc.insecure_channel(server.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        responses = list(
            stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
        )
    names = sorted(s.name for s in responses[0].list_services_response.service)
    assert names == [
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        CACHE,
        SELECTION,
    ]


def test_serves_the_embedded_examples_by_default(running_server) -> None:
    server = running_server()
    with SelectorClient(server.address) as client:
        assert [client.health(name) for name in ("", SELECTION, CACHE, "no.such.Service")] == [
            "SERVING",
            "SERVING",
            "SERVING",
            "SERVICE_UNKNOWN",
        ]
        status = client.get_cache_status()
        response = client.select_runtime(SEED_A_ISVC)
    assert (status.version, status.synced, status.generation) == (EXAMPLES_VERSION, True, 1)
    assert [(c.kind, c.count) for c in status.counts] == [
        (cache_pb2.OBJECT_KIND_SERVING_RUNTIME, 1),
        (cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, 6),
        (cache_pb2.OBJECT_KIND_BASE_MODEL, 1),
        (cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL, 1),
        (cache_pb2.OBJECT_KIND_ACCELERATOR_CLASS, 3),
        (cache_pb2.OBJECT_KIND_INFERENCE_SERVICE, 0),
        (cache_pb2.OBJECT_KIND_CONTROLLER_REVISION, 0),
    ]
    assert response.selection.runtime.name == "llama-3-3-70b-hopper"
    assert list(response.warnings) == [
        "Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"
    ]
    assert response.cache_version == EXAMPLES_VERSION
    assert any(
        line.endswith(f"cache loaded from manifests version={EXAMPLES_VERSION} objects=12 rejected=0 path_errors=0")
        for line in server.lines
    )


def test_wait_for_sync_is_not_serving_and_unavailable_until_a_snapshot(running_server) -> None:
    server = running_server(wait_for_sync=True)
    with SelectorClient(server.address, retries=0) as client:
        assert [client.health(name) for name in ("", SELECTION, CACHE)] == ["NOT_SERVING", "NOT_SERVING", "SERVING"]
        with pytest.raises(SelectorError) as excinfo:
            client.select_runtime(SEED_A_ISVC)
        assert (excinfo.value.code, excinfo.value.message, excinfo.value.field_violations) == (
            grpc.StatusCode.UNAVAILABLE,
            "cache not synced yet",
            [],
        )
        with pytest.raises(SelectorError) as excinfo:
            client.explain_runtimes(SEED_A_ISVC)
        assert (excinfo.value.code, excinfo.value.message) == (grpc.StatusCode.UNAVAILABLE, "cache not synced yet")
        assert client.get_cache_status().synced is False

        status = client.apply_snapshot("controller-1", load_manifests(example_paths()).objects)
        assert (status.version, status.synced, status.generation) == ("controller-1", True, 1)
        client.wait_until_serving(timeout=10)
        assert [client.health(name) for name in ("", SELECTION, CACHE)] == ["SERVING", "SERVING", "SERVING"]
        assert client.select_runtime(SEED_A_ISVC).selection.runtime.name == "llama-3-3-70b-hopper"
    assert server.wait_for_line(f"cache synced: {SELECTION} is SERVING version=controller-1")


def test_one_text_log_line_per_rpc(running_server) -> None:
    server = running_server()
    make_calls(server.address)
    assert server.stop() == 0
    rpc_lines = [line for line in server.lines if "ome_selector.rpc" in line]
    parsed = [TEXT_RPC_LINE.search(line) for line in rpc_lines]
    assert all(parsed), rpc_lines
    assert [(m.group(1), m.group(2)) for m in parsed if m] == EXPECTED_CALLS
    assert all(float(m.group(3)) >= 0 for m in parsed if m)


def test_json_log_format(running_server) -> None:
    server = running_server(log_format="json")
    make_calls(server.address)
    assert server.stop() == 0
    entries = [json.loads(line) for line in server.lines]  # every line is one JSON object
    assert {tuple(sorted(e)) for e in entries if e["logger"] != "ome_selector.rpc"} >= {
        ("level", "logger", "message", "time")
    }
    rpcs = [e for e in entries if e["logger"] == "ome_selector.rpc"]
    assert [(e["message"], e["method"], e["code"], e["level"]) for e in rpcs] == [
        ("rpc", method, code, "INFO") for method, code in EXPECTED_CALLS
    ]
    assert all(isinstance(e["duration_ms"], float) and e["duration_ms"] >= 0 for e in rpcs)
    assert [e["message"] for e in entries if e["message"].startswith("listening on")] == [
        f"listening on {server.address}"
    ]
    assert entries[-1]["message"] == "stopped"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", entries[0]["time"])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_signal_stops_cleanly(running_server, sig: int) -> None:
    server = running_server()
    assert server.stop(sig) == 0
    assert server.lines[-2].endswith(
        " INFO ome_selector.server: shutting down, draining in-flight calls for up to 5.0s"
    )
    assert server.lines[-1].endswith(" INFO ome_selector.server: stopped")
    assert not any("Traceback" in line for line in server.lines)


def test_unix_socket(running_server, tmp_path: Path) -> None:
    address = f"unix:{tmp_path}/selector.sock"
    server = running_server(listen=address)
    assert server.address == address
    with SelectorClient(address) as client:
        assert client.health() == "SERVING"
        assert client.select_runtime(SEED_A_ISVC).selection.runtime.name == "llama-3-3-70b-hopper"


def test_bad_manifests_are_logged_and_the_rest_is_served(running_server, tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: Bad}\n")
    models = EXAMPLES / "models.yaml"
    server = running_server(manifests=[models, bad])
    assert any(
        line.endswith(
            f' ERROR ome_selector.server: {bad}: document 0: invalid ClusterServingRuntime Bad: metadata.name: Invalid value: "Bad": '
            "a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or '.', "
            "and must start and end with an alphanumeric character"
        )
        for line in server.lines
    )
    with SelectorClient(server.address) as client:
        status = client.get_cache_status()
    assert [(c.kind, c.count) for c in status.counts if c.count] == [
        (cache_pb2.OBJECT_KIND_BASE_MODEL, 1),
        (cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL, 1),
    ]
    assert status.version == manifests_version(load_manifests([str(models)]).objects)


def test_rejected_cache_write_has_every_violation_and_leaves_the_cache(running_server) -> None:
    server = running_server()
    objects = [
        cache_pb2.CacheObject(cluster_serving_runtime=types_pb2.ClusterServingRuntime()),
        cache_pb2.CacheObject(base_model=types_pb2.BaseModel(metadata=types_pb2.ObjectMeta(name="m"))),
    ]
    with SelectorClient(server.address) as client:
        with pytest.raises(SelectorError) as excinfo:
            client.apply_snapshot("bad-1", objects)
        assert excinfo.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert excinfo.value.field_violations == [
            ("objects[0].clusterServingRuntime.metadata.name", "Required value"),
            ("objects[1].baseModel.metadata.namespace", "Required value"),
        ]
        assert excinfo.value.message == (
            "invalid request: objects[0].clusterServingRuntime.metadata.name: Required value; "
            "objects[1].baseModel.metadata.namespace: Required value"
        )
        status = client.get_cache_status()
    assert (status.version, status.generation) == (EXAMPLES_VERSION, 1)


def test_cannot_listen_exits_1() -> None:
    process = subprocess.run(server_command(listen="127.0.0.1:notaport"), capture_output=True, text=True, timeout=60)
    assert process.returncode == 1
    assert "ERROR ome_selector.server: cannot listen on 127.0.0.1:notaport" in process.stderr
    assert "Traceback" not in process.stderr


# --- in process: health follows the store ------------------------------------------------------


async def test_health_follows_the_first_sync() -> None:
    store = CacheStore()
    grpc_server = grpc.aio.server()
    await health.attach_health(store, grpc_server)
    port = grpc_server.add_insecure_port("127.0.0.1:0")
    await grpc_server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = health_pb2_grpc.HealthStub(channel)

            async def statuses() -> list[str]:
                names = []
                for service in ("", SELECTION, CACHE):
                    response = await stub.Check(health_pb2.HealthCheckRequest(service=service))
                    names.append(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))
                return names

            assert await statuses() == ["NOT_SERVING", "NOT_SERVING", "SERVING"]
            store.upsert(
                "",
                [
                    cache_pb2.CacheObject(
                        cluster_base_model=types_pb2.ClusterBaseModel(metadata=types_pb2.ObjectMeta(name="m"))
                    )
                ],
            )
            await asyncio.sleep(0.05)
            assert await statuses() == ["NOT_SERVING", "NOT_SERVING", "SERVING"]  # an upsert is not a sync
            store.apply_snapshot("v1", [])
            for _ in range(100):
                if await statuses() == ["SERVING", "SERVING", "SERVING"]:
                    break
                await asyncio.sleep(0.01)
            assert await statuses() == ["SERVING", "SERVING", "SERVING"]
    finally:
        await grpc_server.stop(None)


async def test_health_of_an_already_synced_store_is_serving_at_once() -> None:
    store = CacheStore()
    store.apply_snapshot("v1", [])
    grpc_server = grpc.aio.server()
    servicer = await health.attach_health(store, grpc_server)
    for service in ("", SELECTION, CACHE):
        response = await servicer.Check(health_pb2.HealthCheckRequest(service=service), None)
        assert response.status == health_pb2.HealthCheckResponse.SERVING


async def test_stop_drains_an_in_flight_call(monkeypatch: pytest.MonkeyPatch) -> None:
    started = asyncio.Event()

    async def slow_select(self: SelectionServicer, request: Any, context: Any) -> selector_pb2.SelectRuntimeResponse:
        started.set()
        await asyncio.sleep(0.5)
        return selector_pb2.SelectRuntimeResponse(cache_version="slow")

    monkeypatch.setattr(SelectionServicer, "SelectRuntime", slow_select)
    stop = asyncio.Event()
    address: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    serving = asyncio.create_task(
        server_module.serve("127.0.0.1:0", None, "text", grace=5, stop_event=stop, on_listening=address.set_result)
    )
    target = await asyncio.wait_for(address, 30)
    async with grpc.aio.insecure_channel(target) as channel:
        call = selector_pb2_grpc.SelectionServiceStub(channel).SelectRuntime(
            selector_pb2.SelectRuntimeRequest(), timeout=10
        )
        await asyncio.wait_for(started.wait(), 10)
        stop.set()
        response = await call
    assert response.cache_version == "slow"
    assert await asyncio.wait_for(serving, 30) == 0


# --- in process: servicers map errors ----------------------------------------------------------


class Aborted(Exception):
    pass


class FakeContext:
    """Records the status a servicer aborts with."""

    def __init__(self) -> None:
        self.status: grpc.Status | None = None

    async def abort_with_status(self, status: grpc.Status) -> None:
        self.status = status
        raise Aborted()

    def rich(self) -> status_pb2.Status:
        assert self.status is not None
        ((key, value),) = self.status.trailing_metadata
        assert key == "grpc-status-details-bin"
        return status_pb2.Status.FromString(value)


def synced_store() -> CacheStore:
    store = CacheStore()
    store.apply_snapshot("v1", load_manifests(example_paths()).objects)
    return store


async def test_invalid_argument_carries_every_violation(monkeypatch: pytest.MonkeyPatch) -> None:
    violations = [
        FieldViolation("inference_service.metadata.namespace", "namespace is required"),
        FieldViolation("inference_service.spec.model.name", "a model is required"),
    ]

    def reject(snapshot: Any, request: Any) -> None:
        raise RequestError.invalid(violations)

    monkeypatch.setitem(api.SELECTION_RPCS, "ExplainRuntimes", reject)
    context = FakeContext()
    with pytest.raises(Aborted):
        await SelectionServicer(synced_store()).ExplainRuntimes(selector_pb2.ExplainRuntimesRequest(), context)  # type: ignore[arg-type]
    assert context.status is not None and context.status.code == grpc.StatusCode.INVALID_ARGUMENT
    expected_message = (  # paths in camelCase, the API server's "Required value"
        "invalid request: inferenceService.metadata.namespace: Required value; "
        "inferenceService.spec.model.name: a model is required"
    )
    assert context.status.details == expected_message
    rich = context.rich()
    assert (rich.code, rich.message, len(rich.details)) == (
        grpc.StatusCode.INVALID_ARGUMENT.value[0],
        expected_message,
        1,
    )
    bad_request = error_details_pb2.BadRequest()
    assert rich.details[0].Unpack(bad_request)
    assert [(v.field, v.description) for v in bad_request.field_violations] == [
        ("inferenceService.metadata.namespace", "Required value"),
        ("inferenceService.spec.model.name", "a model is required"),
    ]


async def test_not_found_has_no_details() -> None:
    isvc = types_pb2.InferenceService()
    isvc.CopyFrom(SEED_A_ISVC)
    isvc.spec.model.name = "nope"
    context = FakeContext()
    with pytest.raises(Aborted):
        await SelectionServicer(synced_store()).SelectRuntime(
            selector_pb2.SelectRuntimeRequest(inference_service=isvc), context
        )  # type: ignore[arg-type]
    assert context.status is not None and context.status.code == grpc.StatusCode.NOT_FOUND
    message = (
        'referenced model "nope" not found in namespace "llama-demo": ensure a BaseModel exists in this namespace '
        "or a ClusterBaseModel exists cluster-wide with this name"
    )
    assert context.status.details == message
    assert list(context.rich().details) == []


async def test_unsynced_store_is_unavailable() -> None:
    context = FakeContext()
    with pytest.raises(Aborted):
        await SelectionServicer(CacheStore()).SelectRuntime(selector_pb2.SelectRuntimeRequest(), context)  # type: ignore[arg-type]
    assert context.status is not None
    assert (context.status.code, context.status.details) == (grpc.StatusCode.UNAVAILABLE, "cache not synced yet")


async def test_unexpected_exception_is_internal_without_traceback(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(snapshot: Any, request: Any) -> None:
        raise ZeroDivisionError("secret detail /etc/x")

    monkeypatch.setitem(api.SELECTION_RPCS, "SelectRuntime", explode)
    context = FakeContext()
    with pytest.raises(Aborted):
        await SelectionServicer(synced_store()).SelectRuntime(selector_pb2.SelectRuntimeRequest(), context)  # type: ignore[arg-type]
    assert context.status is not None
    assert (context.status.code, context.status.details) == (grpc.StatusCode.INTERNAL, "internal error")
    assert "secret" not in context.rich().SerializeToString().decode("latin-1")
    (record,) = [r for r in caplog.records if r.name == "ome_selector.service"]
    assert record.getMessage() == "SelectRuntime failed"
    assert record.exc_info is not None and record.exc_info[0] is ZeroDivisionError


async def test_cache_servicer_writes_and_reads() -> None:
    store = CacheStore()
    servicer = CacheServicer(store)
    context = FakeContext()
    objects = load_manifests([str(EXAMPLES / "models.yaml")]).objects
    applied = await servicer.ApplySnapshot(cache_pb2.ApplySnapshotRequest(version="v1", objects=objects), context)  # type: ignore[arg-type]
    assert (applied.status.version, applied.status.synced, applied.status.generation) == ("v1", True, 1)
    key_present = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL, name="llama-3-3-70b-instruct")
    key_missing = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_BASE_MODEL, name="other")
    deleted = await servicer.DeleteObjects(cache_pb2.DeleteObjectsRequest(keys=[key_present, key_missing]), context)  # type: ignore[arg-type]
    assert list(deleted.not_found) == [key_missing]
    assert (deleted.status.version, deleted.status.generation) == ("v1+2", 2)
    status = await servicer.GetCacheStatus(cache_pb2.GetCacheStatusRequest(), context)  # type: ignore[arg-type]
    assert [(c.kind, c.count) for c in status.status.counts if c.count] == [(cache_pb2.OBJECT_KIND_BASE_MODEL, 1)]
    with pytest.raises(Aborted):
        await servicer.UpsertObjects(cache_pb2.UpsertObjectsRequest(), context)  # type: ignore[arg-type]
    assert context.status is not None and context.status.code == grpc.StatusCode.INVALID_ARGUMENT
    assert store.status().generation == 2


def test_server_module_runs_under_python_m() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "serve", "--help"], capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 0
    assert "--wait-for-sync" in process.stdout and "--log-format {text,json}" in process.stdout


@pytest.mark.parametrize(
    "listen, port, shown",
    [
        ("127.0.0.1:0", 41234, "127.0.0.1:41234"),
        ("127.0.0.1:50051", 50051, "127.0.0.1:50051"),
        ("[::1]:0", 41234, "[::1]:41234"),
        ("localhost", 443, "localhost:443"),
        ("unix:/run/selector.sock", 1, "unix:/run/selector.sock"),
    ],
)
def test_display_address(listen: str, port: int, shown: str) -> None:
    assert server_module.display_address(listen, port) == shown


def test_every_selection_method_is_served_from_the_table() -> None:
    """api.SELECTION_RPCS has one row per unary SelectionService method of the proto, and no
    other; the server-streaming ones are api.STREAMING_RPCS (WatchSelections)."""
    from ome_selector.rpc import api

    service = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"]
    methods = {m.name for m in service.methods}
    assert set(api.SELECTION_RPCS) == {m.name for m in service.methods if not m.server_streaming}
    assert api.STREAMING_RPCS == {m.name for m in service.methods if m.server_streaming} == {"WatchSelections"}
    assert all(callable(getattr(SelectionServicer(CacheStore()), name)) for name in methods)


def test_every_proto_enum_value_has_its_domain_row() -> None:
    """The explicit domain -> proto tables of api.py cover every proto value but UNSPECIFIED."""

    for table, enum in (
        (enums.CHECK_TO_PB, selector_pb2.Check),
        (enums.VERDICT_TO_PB, selector_pb2.Verdict),
        (enums.TIE_BREAK_TO_PB, selector_pb2.TieBreak),
        (enums.COMPONENT_TO_PB, selector_pb2.Component),
        (enums.MODE_SOURCE_TO_PB, selector_pb2.ModeSource),
        (enums.ACCELERATOR_SOURCE_TO_PB, selector_pb2.AcceleratorSource),
        (enums.ADMISSION_PATH_TO_PB, selector_pb2.AdmissionPath),
    ):
        named = {v for n, v in enum.items() if not n.endswith("_UNSPECIFIED")}
        assert named <= set(table.values()), enum
        assert len(set(table.values())) == len(table)
