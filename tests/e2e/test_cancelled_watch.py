"""A client that cancels WatchSelections, while the server is still sending the initial events or
a write's changes, ends a CANCELLED call: the rpc line says ``code=CANCELLED`` at INFO, the
metric's label is ``grpc_code="Canceled"`` (grpc-go's name), never UNKNOWN, and nothing logs a traceback.

The stream is made long (1,500 InferenceServices, so megabytes of events) for the server to be
blocked sending when the cancel comes."""

from __future__ import annotations

import time
from typing import Callable

import grpc
from conftest import EXAMPLE_ISVCS, ServerProcess
from ome.selector.v1 import cache_pb2, selector_pb2, selector_pb2_grpc
from ome_selector.cache.manifests import load_inference_service, load_manifests
from ome_selector.examples import example_paths
from ome_selector_client import SelectorClient
from sidecar_helpers import metrics_address, sample, scrape

COPIES = 1500
HOPPER = "llama-3-3-70b-hopper"
WATCH = {
    "grpc_service": "ome.selector.v1.SelectionService",
    "grpc_method": "WatchSelections",
    "grpc_type": "server_stream",
}


def _objects() -> list[cache_pb2.CacheObject]:
    objects = list(load_manifests(example_paths()).objects)
    template = load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
    for i in range(COPIES):
        obj = cache_pb2.CacheObject()
        obj.inference_service.CopyFrom(template)
        obj.inference_service.metadata.namespace = "cancel"
        obj.inference_service.metadata.name = f"isvc-{i}"
        objects.append(obj)
    return objects


def _wait_until_tracked(stub: selector_pb2_grpc.SelectionServiceStub, generation: int) -> int:
    """Wait until a new watch starts at ``generation`` (the tracker evaluates writes on its own
    thread); returns how many watches that took (each cancelled after its marker)."""
    deadline = time.monotonic() + 60
    opened = 0
    while True:
        call = stub.WatchSelections(selector_pb2.WatchSelectionsRequest(namespace="none"), timeout=60)
        opened += 1
        end = next(call).initial_events_end
        call.cancel()
        if end.generation == generation:
            return opened
        assert time.monotonic() < deadline, f"the tracker is at generation {end.generation}, not {generation}"
        time.sleep(0.1)


def test_a_cancelled_watch_is_cancelled_in_the_log_and_the_metric(running_server: Callable[..., ServerProcess]) -> None:
    server = running_server(extra_args=["--metrics-listen", "127.0.0.1:0"])
    http = metrics_address(server)
    objects = _objects()
    hopper = next(o for o in objects if o.cluster_serving_runtime.metadata.name == HOPPER)
    hopper_key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name=HOPPER)
    with SelectorClient(server.address, timeout=60) as client:
        generation = client.apply_snapshot("many", objects).generation
        with grpc.insecure_channel(server.address) as channel:
            stub = selector_pb2_grpc.SelectionServiceStub(channel)
            cancelled = 10 + _wait_until_tracked(stub, generation)
            for _ in range(5):  # cancelled during the initial events
                call = stub.WatchSelections(selector_pb2.WatchSelectionsRequest(namespace="cancel"), timeout=60)
                assert next(call).HasField("current")
                call.cancel()
            for i in range(5):  # cancelled during a write's events
                call = stub.WatchSelections(selector_pb2.WatchSelectionsRequest(namespace="cancel"), timeout=60)
                initial = 0
                while not next(call).HasField("initial_events_end"):
                    initial += 1
                assert initial == COPIES
                if i % 2 == 0:
                    client.delete_objects([hopper_key])
                else:
                    client.upsert_objects([hopper])
                assert next(call).HasField("change")
                call.cancel()
    handled = {}
    deadline = time.monotonic() + 30
    while handled.get("Canceled") != cancelled:
        assert time.monotonic() < deadline, f"WatchSelections calls handled: {handled}"
        samples = scrape(http)
        handled = {
            code: sample(samples, "grpc_server_handled_total", grpc_code=code, **WATCH)
            for code in ("Canceled", "Unknown", "OK")
        }
        time.sleep(0.05)
    assert handled == {"Canceled": cancelled, "Unknown": None, "OK": None}
    assert server.stop() == 0
    watch_lines = [line for line in server.lines if "WatchSelections" in line]
    assert len(watch_lines) == cancelled
    assert all(" INFO ome_selector.rpc: rpc " in line and " code=CANCELLED " in line for line in watch_lines)
    assert [line for line in server.lines if "Traceback" in line or " ERROR " in line] == []
