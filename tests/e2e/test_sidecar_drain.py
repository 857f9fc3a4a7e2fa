"""Graceful drain of the real server process: on SIGTERM, /readyz and gRPC health turn
NOT_SERVING at once, the server keeps serving for --drain-delay, then lets every in-flight call
finish within --grace and exits 0.

The in-flight calls are real slow calls: ExplainRuntimes over a generated cache of 5,000
ClusterServingRuntimes (about 0.1 s of work each on the dev machine), each for a different
namespace so no answer is memoised; they run one after another on the server's event loop, so
eight of them are still in flight when SIGTERM arrives.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Callable

import grpc
from conftest import EXAMPLE_ISVCS, SHARED, ServerProcess
from grpc_health.v1 import health_pb2, health_pb2_grpc
from ome.selector.v1 import selector_pb2, selector_pb2_grpc
from ome_selector.cache.manifests import load_inference_service
from ome_selector_client import SelectorClient
from ome_selector_client.client import CHANNEL_OPTIONS
from sidecar_helpers import http_address, http_get, metrics_address, sample, scrape

from tools.bench import load_catalog, sized_objects

RUNTIMES = 5_000
IN_FLIGHT = 8


def test_sigterm_drains_eight_in_flight_calls(running_server: Callable[..., ServerProcess]) -> None:
    server = running_server(
        extra_args=[
            "--http-listen",
            "127.0.0.1:0",
            "--metrics-listen",
            "127.0.0.1:0",
            "--drain-delay",
            "0",
            "--grace",
            "60",
        ]
    )
    http = http_address(server)
    metrics = metrics_address(server)
    objects = sized_objects(load_catalog(SHARED), RUNTIMES)
    with SelectorClient(server.address, timeout=60) as client:
        assert client.apply_snapshot("big-1", objects).synced

    isvc = load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
    requests = []
    for i in range(IN_FLIGHT):
        request = selector_pb2.ExplainRuntimesRequest(inference_service=isvc)
        request.inference_service.metadata.namespace = f"drain-{i}"
        requests.append(request)

    with grpc.insecure_channel(server.address, options=CHANNEL_OPTIONS) as channel:
        watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""), timeout=60)
        assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
        callers = [grpc.insecure_channel(server.address, options=CHANNEL_OPTIONS) for _ in requests]  # eight callers
        calls = [
            selector_pb2_grpc.SelectionServiceStub(c).ExplainRuntimes.future(r, timeout=60)
            for c, r in zip(callers, requests)
        ]

        deadline = time.monotonic() + 30
        while (
            sample(
                scrape(metrics),
                "grpc_server_started_total",
                grpc_type="unary",
                grpc_service="ome.selector.v1.SelectionService",
                grpc_method="ExplainRuntimes",
            )
            or 0
        ) < 1:
            assert time.monotonic() < deadline, "no ExplainRuntimes call started within 30 s"
            time.sleep(0.01)
        assert [call.done() for call in calls] == [False] * IN_FLIGHT  # all eight in flight
        server.process.send_signal(signal.SIGTERM)

        # /readyz flips while the calls are still running (it is served from another thread).
        deadline = time.monotonic() + 30
        while (ready := http_get(http, "/readyz")) == (200, "ready\n"):
            assert time.monotonic() < deadline, "/readyz still 200 30 s after SIGTERM"
            time.sleep(0.01)
        assert ready == (503, "draining\n")
        assert not all(call.done() for call in calls)
        assert http_get(http, "/healthz") == (200, "ok\n")  # liveness holds during the drain
        assert next(watch).status == health_pb2.HealthCheckResponse.NOT_SERVING

        results = [call.result() for call in calls]  # raises if any call did not end OK
        assert [call.code() for call in calls] == [grpc.StatusCode.OK] * IN_FLIGHT
        cluster_runtimes = sum(o.WhichOneof("object") == "cluster_serving_runtime" for o in objects)
        assert [len(r.runtimes) for r in results] == [cluster_runtimes] * IN_FLIGHT
        watch.cancel()
        for caller in callers:
            caller.close()

    assert server.stop(timeout=60) == 0
    messages = [line.split(": ", 1)[1] for line in server.lines if " INFO ome_selector.server: " in line]
    assert messages[-3:] == [
        "draining: health NOT_SERVING, /readyz 503; serving 0.0s more, then in-flight calls get up to 60.0s",
        "shutting down, draining in-flight calls for up to 60.0s",
        "stopped",
    ]
    rpc_lines = [line for line in server.lines if "ExplainRuntimes" in line]
    assert len(rpc_lines) == IN_FLIGHT and all(" code=OK " in line for line in rpc_lines)


def test_new_calls_are_served_during_the_drain_delay(running_server: Callable[..., ServerProcess]) -> None:
    """During --drain-delay the server still answers new connections and calls (callers that
    have not noticed NOT_SERVING yet get answers), while health says NOT_SERVING."""
    server = running_server(extra_args=["--drain-delay", "3", "--grace", "5"])
    server.process.send_signal(signal.SIGTERM)
    server.wait_for_line("draining: health NOT_SERVING")
    isvc = load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
    with SelectorClient(server.address, retries=0) as client:
        assert client.health() == "NOT_SERVING"
        assert client.health("ome.selector.v1.CacheService") == "NOT_SERVING"
        assert client.select_runtime(isvc).selection.runtime.name == "llama-3-3-70b-hopper"
    assert server.stop() == 0
    assert server.lines[-1].endswith(" INFO ome_selector.server: stopped")


def test_the_drain_ends_for_a_caller_that_ignores_readiness(running_server: Callable[..., ServerProcess]) -> None:
    """A caller that never looks at health keeps eight calls going through the drain: after
    --drain-delay the server stops accepting calls (new calls get UNAVAILABLE: from the server,
    then as after a GOAWAY), lets the calls it took finish (every one it logged is OK, or
    UNAVAILABLE for those it refused), and exits 0 long before the 60 s grace would end. This
    caller keeps calling after it was refused, so calls C-core had received but not handed over
    when the listeners closed are cancelled by C-core: at most the caller's eight."""
    server = running_server(extra_args=["--drain-delay", "1", "--grace", "60"])
    request = selector_pb2.SelectRuntimeRequest(
        inference_service=load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
    )
    codes: list[grpc.StatusCode] = []
    with grpc.insecure_channel(server.address, options=CHANNEL_OPTIONS) as channel:
        stub = selector_pb2_grpc.SelectionServiceStub(channel)
        assert stub.SelectRuntime(request, timeout=10).selection.runtime.name == "llama-3-3-70b-hopper"
        server.process.send_signal(signal.SIGTERM)
        server.wait_for_line("draining: health NOT_SERVING")
        lock = threading.Lock()
        running = [8]

        def call_again(done: grpc.Future | None = None) -> None:  # each call's end starts the next
            with lock:
                if done is not None:
                    codes.append(done.code())  # type: ignore[attr-defined]
                if server.process.poll() is not None or time.monotonic() > give_up:
                    running[0] -= 1
                    return
            stub.SelectRuntime.future(request, timeout=10).add_done_callback(call_again)

        give_up = time.monotonic() + 30  # half the grace: before, the server served to its end
        for _ in range(8):
            call_again()
        while running[0] and time.monotonic() < give_up + 15:
            time.sleep(0.05)
        assert server.process.poll() == 0  # gone well before the grace is over
    assert server.stop() == 0
    assert set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED}
    assert grpc.StatusCode.OK in codes and grpc.StatusCode.UNAVAILABLE in codes
    assert codes.count(grpc.StatusCode.CANCELLED) <= 8, codes.count(grpc.StatusCode.CANCELLED)
    assert server.lines[-1].endswith(" INFO ome_selector.server: stopped")
    rpc_lines = [line for line in server.lines if "SelectRuntime" in line]
    logged = {line.split(" code=")[1].split()[0] for line in rpc_lines}
    assert logged == {"OK", "UNAVAILABLE"}, logged
