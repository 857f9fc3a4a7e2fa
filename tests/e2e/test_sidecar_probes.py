"""The sidecar's listeners against the real server process (127.0.0.1 / unix sockets only):
HTTP probes, /metrics scraped after real calls, unix socket modes, CacheService on its own
listener, address validation, environment variables and --version."""

from __future__ import annotations

import asyncio
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Callable

import grpc
import pytest
from conftest import EXAMPLE_ISVCS, REPO_ROOT, ServerProcess, server_command
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_inference_service, load_manifests
from ome_selector.cache.store import CacheStore
from ome_selector.cli.app import build_parser
from ome_selector.examples import example_paths
from ome_selector.server.addresses import parse_http_listen, parse_listen
from ome_selector.server.config import ServeOptions
from ome_selector.server.http import ProbeServer
from ome_selector.server.options import options_from_args, version
from ome_selector_client import SelectorClient, SelectorError
from sidecar_helpers import http_address, http_get, metrics_address, names, sample, scrape

Start = Callable[..., ServerProcess]
SELECTION = "ome.selector.v1.SelectionService"
CACHE = "ome.selector.v1.CacheService"
HEALTH = "grpc.health.v1.Health"


def model(name: str) -> cache_pb2.CacheObject:
    return cache_pb2.CacheObject(
        cluster_base_model=types_pb2.ClusterBaseModel(metadata=types_pb2.ObjectMeta(name=name))
    )


# --- probes ----------------------------------------------------------------------------------------


def test_probes_follow_sync_and_never_gate_liveness(running_server: Start) -> None:
    server = running_server(wait_for_sync=True, extra_args=["--http-listen", "127.0.0.1:0"])
    http = http_address(server)
    assert http_get(http, "/healthz") == (200, "ok\n")
    assert http_get(http, "/readyz") == (503, "cache not synced\n")
    with SelectorClient(server.address) as client:
        assert client.health() == "NOT_SERVING"
        client.upsert_objects([model("m")])  # an upsert is not a sync
        assert http_get(http, "/readyz") == (503, "cache not synced\n")
        client.apply_snapshot("v1", [model("m")])
    assert http_get(http, "/readyz") == (200, "ready\n")
    assert http_get(http, "/healthz") == (200, "ok\n")
    assert http_get(http, "/nope") == (404, "not found\n")
    assert http_get(http, "/readyz", method="POST") == (405, "method not allowed\n")


# --- metrics ---------------------------------------------------------------------------------------


def test_metrics_count_calls_codes_outcomes_and_cache_writes(running_server: Start) -> None:
    server = running_server(extra_args=["--http-listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0"])
    http = metrics_address(server)
    assert http != http_address(server)
    assert http_get(http_address(server), "/metrics") == (404, "not found\n")  # not on the probe listener
    assert http_get(http, "/healthz") == (404, "not found\n")
    before = scrape(http)
    assert names(before, "grpc_server_started_total") == {}
    examples = CacheStore()
    examples.apply_snapshot("examples", load_manifests(example_paths()).objects)
    counts = examples.snapshot.counts()  # the embedded catalog the server loaded, counted in-process
    assert counts == {
        "ServingRuntime": 1,
        "ClusterServingRuntime": 6,
        "BaseModel": 1,
        "ClusterBaseModel": 1,
        "AcceleratorClass": 3,
        "InferenceService": 0,
        "ControllerRevision": 0,
    }
    assert names(before, "ome_selector_cache_objects") == {(("kind", kind),): float(n) for kind, n in counts.items()}
    assert sample(before, "ome_selector_cache_generation") == 1.0
    assert sample(before, "ome_selector_cache_synced") == 1.0
    assert sample(before, "ome_selector_cache_seconds_since_last_write") is not None

    isvc = {
        name: load_inference_service(EXAMPLE_ISVCS / f"{name}.yaml")
        for name in ("llama-3-3-70b", "llama-3-2-3b", "llama-3-3-70b-named", "llama-3-3-70b-a100")
    }
    with SelectorClient(server.address) as client:
        assert client.select_runtime(isvc["llama-3-3-70b"]).selection.mode == selector_pb2.SELECTION_MODE_AUTO
        assert client.select_runtime(isvc["llama-3-2-3b"]).selection.mode == selector_pb2.SELECTION_MODE_AUTO
        assert client.select_runtime(isvc["llama-3-3-70b-named"]).selection.mode == selector_pb2.SELECTION_MODE_NAMED
        assert client.select_runtime(isvc["llama-3-3-70b-a100"]).no_runtime_message.startswith("no runtime found")
        with pytest.raises(SelectorError) as bad:
            client.select_runtime(types_pb2.InferenceService())
        assert bad.value.code == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(SelectorError) as rejected:
            client.apply_snapshot("", [model("m")])
        assert rejected.value.code == grpc.StatusCode.INVALID_ARGUMENT
        assert client.upsert_objects([model("extra")]).generation == 2
        assert client.health() == "SERVING"

    after = scrape(http)
    unary = ("grpc_type", "unary")
    assert names(after, "grpc_server_started_total") == {
        (("grpc_method", "SelectRuntime"), ("grpc_service", SELECTION), unary): 5.0,
        (("grpc_method", "ApplySnapshot"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_method", "UpsertObjects"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_method", "Check"), ("grpc_service", HEALTH), unary): 1.0,
    }
    assert names(after, "grpc_server_handled_total") == {
        (("grpc_code", "OK"), ("grpc_method", "SelectRuntime"), ("grpc_service", SELECTION), unary): 4.0,
        (("grpc_code", "InvalidArgument"), ("grpc_method", "SelectRuntime"), ("grpc_service", SELECTION), unary): 1.0,
        (("grpc_code", "InvalidArgument"), ("grpc_method", "ApplySnapshot"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_code", "OK"), ("grpc_method", "UpsertObjects"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_code", "OK"), ("grpc_method", "Check"), ("grpc_service", HEALTH), unary): 1.0,
    }
    assert names(after, "grpc_server_msg_received_total") == {
        (("grpc_method", "SelectRuntime"), ("grpc_service", SELECTION), unary): 5.0,
        (("grpc_method", "ApplySnapshot"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_method", "UpsertObjects"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_method", "Check"), ("grpc_service", HEALTH), unary): 1.0,
    }
    assert names(after, "grpc_server_msg_sent_total") == {  # answered calls only
        (("grpc_method", "SelectRuntime"), ("grpc_service", SELECTION), unary): 4.0,
        (("grpc_method", "UpsertObjects"), ("grpc_service", CACHE), unary): 1.0,
        (("grpc_method", "Check"), ("grpc_service", HEALTH), unary): 1.0,
    }
    assert (
        sample(
            after,
            "grpc_server_handling_seconds_count",
            grpc_type="unary",
            grpc_service=SELECTION,
            grpc_method="SelectRuntime",
        )
        == 5.0
    )
    assert (
        sample(
            after,
            "grpc_server_handling_seconds_bucket",
            grpc_type="unary",
            grpc_service=SELECTION,
            grpc_method="SelectRuntime",
            le="+Inf",
        )
        == 5.0
    )
    assert names(after, "ome_selector_selections_total") == {
        (("outcome", "auto_selected"),): 2.0,
        (("outcome", "named"),): 0.0,
        (("outcome", "named_with_warning"),): 1.0,
        (("outcome", "no_runtime_found"),): 1.0,
        (("outcome", "model_error"),): 0.0,
        (("outcome", "runtime_error"),): 0.0,
        (("outcome", "error"),): 1.0,
    }
    assert names(after, "ome_selector_cache_writes_rejected_total") == {
        (("grpc_code", "InvalidArgument"), ("grpc_method", "ApplySnapshot")): 1.0,
    }
    assert sample(after, "ome_selector_cache_write_seconds_count", grpc_method="ApplySnapshot") == 1.0
    assert sample(after, "ome_selector_cache_write_seconds_count", grpc_method="UpsertObjects") == 1.0
    assert sample(after, "ome_selector_cache_write_seconds_count", grpc_method="DeleteObjects") == 0.0
    assert sample(after, "ome_selector_cache_generation") == 2.0
    assert sample(after, "ome_selector_cache_objects", kind="ClusterBaseModel") == counts["ClusterBaseModel"] + 1.0


# --- unix sockets and the cache listener -----------------------------------------------------------


@pytest.mark.parametrize("extra, mode", [([], 0o600), (["--socket-mode", "0660"], 0o660)], ids=["default", "0660"])
def test_unix_socket_mode(running_server: Start, tmp_path: Path, extra: list[str], mode: int) -> None:
    path = tmp_path / "api.sock"
    server = running_server(listen=f"unix:{path}", extra_args=extra)
    assert stat.S_IMODE(path.stat().st_mode) == mode
    with SelectorClient(server.address) as client:
        assert client.health() == "SERVING"


def test_cache_service_on_its_own_listener(running_server: Start, tmp_path: Path) -> None:
    cache_socket = tmp_path / "cache.sock"
    server = running_server(extra_args=["--cache-listen", f"unix:{cache_socket}"])
    assert server.wait_for_line(r"CacheService on (\S+) \(only there\)").group(1) == f"unix:{cache_socket}"
    assert stat.S_IMODE(cache_socket.stat().st_mode) == 0o600
    with SelectorClient(server.address) as api:
        with pytest.raises(SelectorError) as missing:
            api.get_cache_status()
        assert missing.value.code == grpc.StatusCode.UNIMPLEMENTED
        assert (
            api.select_runtime(load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")).selection.runtime.name
            == "llama-3-3-70b-hopper"
        )
    with SelectorClient(f"unix:{cache_socket}") as cache:
        assert cache.apply_snapshot("v2", [model("m")]).generation == 2
        assert cache.health(CACHE) == "SERVING"
    for address, want in (
        (server.address, [SELECTION, HEALTH, "grpc.reflection.v1alpha.ServerReflection"]),
        (f"unix:{cache_socket}", [CACHE, HEALTH, "grpc.reflection.v1alpha.ServerReflection"]),
    ):
        with grpc.insecure_channel(address) as channel:
            stub = reflection_pb2_grpc.ServerReflectionStub(channel)
            [response] = list(
                stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10)
            )
        assert sorted(s.name for s in response.list_services_response.service) == sorted(want)


# --- flags, environment, validation ----------------------------------------------------------------


def test_port_out_of_range_is_a_clear_error() -> None:
    process = subprocess.run(
        server_command(listen="127.0.0.1:99999"), capture_output=True, text=True, timeout=60, cwd=REPO_ROOT
    )
    assert process.returncode == 1
    [line] = [line for line in process.stderr.splitlines() if "ERROR" in line]
    assert line.endswith(
        " ERROR ome_selector.server: cannot listen on 127.0.0.1:99999: port 99999 is out of range 0..65535"
    )


@pytest.mark.parametrize(
    "listen, why",
    [
        ("localhost", "want host:port, unix:/path or unix-abstract:name"),
        ("[]:50051", "the IPv6 address is missing (write :port for every interface)"),
        ("::1:50051", "write an IPv6 address in brackets, e.g. [::1]:50051"),
        ("127.0.0.1:-1", "port '-1' is not a number"),
        ("unix:", "unix: needs a socket file path, e.g. unix:/run/ome-selector/api.sock"),
    ],
)
def test_bad_listen_addresses(listen: str, why: str) -> None:
    assert ServeOptions(listen=listen).problems() == [f"cannot listen on {listen}: {why}"]


@pytest.mark.parametrize(
    "listen, kind, host, port, path",
    [
        ("127.0.0.1:0", "tcp", "127.0.0.1", 0, ""),
        ("[::1]:50051", "tcp", "::1", 50051, ""),
        ("unix:/run/x.sock", "unix", "", 0, "/run/x.sock"),
        ("unix:///run/x.sock", "unix", "", 0, "/run/x.sock"),
        ("unix-abstract:ome", "unix-abstract", "", 0, "ome"),
        (":50051", "tcp", "", 50051, ""),
    ],
)
def test_good_listen_addresses(listen: str, kind: str, host: str, port: int, path: str) -> None:
    parsed = parse_listen(listen)
    assert (parsed.kind, parsed.host, parsed.port, parsed.path) == (kind, host, port, path)


def test_every_flag_has_an_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OME_SELECTOR_LISTEN", "127.0.0.1:0")
    monkeypatch.setenv("OME_SELECTOR_HTTP_LISTEN", "127.0.0.1:0")
    monkeypatch.setenv("OME_SELECTOR_LOG_FORMAT", "json")  # overridden by the flag below
    monkeypatch.setenv("OME_SELECTOR_WAIT_FOR_SYNC", "true")
    server = ServerProcess([sys.executable, "-m", "ome_selector.cli", "serve", "--log-format", "text"])
    try:
        server.address = server.wait_for_line(r"listening on (\S+)").group(1)
        assert server.lines[-1].endswith(f" INFO ome_selector.server: listening on {server.address}")  # text, not json
        assert http_get(http_address(server), "/readyz") == (503, "cache not synced\n")
    finally:
        assert server.stop() == 0


def test_help_names_every_variable() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "serve", "--help"], capture_output=True, text=True, timeout=60
    )
    assert process.returncode == 0
    text = " ".join(process.stdout.split())
    for variable in (
        "OME_SELECTOR_LISTEN",
        "OME_SELECTOR_SOCKET_MODE",
        "OME_SELECTOR_CACHE_LISTEN",
        "OME_SELECTOR_HTTP_LISTEN",
        "OME_SELECTOR_MANIFESTS",
        "OME_SELECTOR_WAIT_FOR_SYNC",
        "OME_SELECTOR_LOG_FORMAT",
        "OME_SELECTOR_LOG_LEVEL",
        "OME_SELECTOR_GRACE",
        "OME_SELECTOR_DRAIN_DELAY",
        "OME_SELECTOR_TLS_CERT",
        "OME_SELECTOR_TLS_KEY",
        "OME_SELECTOR_TLS_CLIENT_CA",
        "OME_SELECTOR_NO_REFLECTION",
        "OME_SELECTOR_MAX_CONCURRENT_STREAMS",
    ):
        assert f"env {variable}" in text


def test_bad_environment_value_exits_2() -> None:
    env = {**os.environ, "OME_SELECTOR_GRACE": "soon"}
    process = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "serve"], capture_output=True, text=True, timeout=60, env=env
    )
    assert (process.returncode, process.stderr) == (2, "error: OME_SELECTOR_GRACE: not a number: 'soon'\n")


@pytest.mark.parametrize(
    "variable, value, error",
    [
        ("OME_SELECTOR_SOCKET_MODE", "888", "OME_SELECTOR_SOCKET_MODE: not an octal permission mode: '888'"),
        (
            "OME_SELECTOR_NO_REFLECTION",
            "maybe",
            "OME_SELECTOR_NO_REFLECTION: want 1/true/yes/on or 0/false/no/off, not 'maybe'",
        ),
        ("OME_SELECTOR_LOG_FORMAT", "xml", "OME_SELECTOR_LOG_FORMAT: 'xml' is not one of text, json"),
        (
            "OME_SELECTOR_MAX_CONCURRENT_STREAMS",
            "0",
            "OME_SELECTOR_MAX_CONCURRENT_STREAMS: must be a whole number, 1 or more: '0'",
        ),
        (
            "OME_SELECTOR_MAX_MESSAGE_BYTES",
            "-1",
            "OME_SELECTOR_MAX_MESSAGE_BYTES: must be a whole number, 0 or more: '-1'",
        ),
    ],
)
def test_bad_environment_values(variable: str, value: str, error: str) -> None:
    args = build_parser().parse_args(["serve"])
    with pytest.raises(ValueError) as excinfo:
        options_from_args(args, {variable: value})
    assert str(excinfo.value) == error


def test_flags_beat_variables_beat_defaults() -> None:
    args = build_parser().parse_args(["serve", "--grace", "7", "--no-reflection"])
    values = options_from_args(
        args, {"OME_SELECTOR_GRACE": "9", "OME_SELECTOR_DRAIN_DELAY": "3", "OME_SELECTOR_MANIFESTS": "a.yaml:b"}
    )
    assert (values["grace"], values["drain_delay"], values["manifests"], values["reflection"], values["listen"]) == (
        7.0,
        3.0,
        ["a.yaml", "b"],
        False,
        "127.0.0.1:50051",
    )
    assert ServeOptions(**values).problems() == []


@pytest.mark.parametrize("args", [["--version"], ["serve", "--version"]])
def test_version(args: list[str]) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", *args], capture_output=True, text=True, timeout=60
    )
    assert (process.returncode, process.stdout) == (0, f"ome-selector {version()}\n")
    assert version() == "0.1.0"


def test_healthz_fails_when_the_event_loop_does_not_answer() -> None:
    """In process: /healthz runs a no-op on the server's loop; a loop that does not run it
    within the timeout is 503 (kubelet then restarts the container), one that does is 200."""
    stalled = asyncio.new_event_loop()  # never runs: like a loop stuck in a computation
    probe = ProbeServer(parse_http_listen("127.0.0.1:0"), lambda: (True, "ready"), stalled, loop_timeout=0.2)
    address = probe.start()
    try:
        assert http_get(address, "/healthz") == (503, "event loop did not answer within 0.2s\n")
        assert http_get(address, "/readyz") == (200, "ready\n")
    finally:
        probe.close()
        stalled.close()

    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    probe = ProbeServer(parse_http_listen("127.0.0.1:0"), lambda: (False, "draining"), running, loop_timeout=5)
    address = probe.start()
    try:
        assert http_get(address, "/healthz") == (200, "ok\n")
        assert http_get(address, "/readyz") == (503, "draining\n")
    finally:
        probe.close()
        running.call_soon_threadsafe(running.stop)
        thread.join(5)
        running.close()
