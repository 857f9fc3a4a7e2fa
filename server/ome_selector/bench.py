"""Benchmark: ``python -m ome_selector.bench [--shared PATH] [--calls N]``.

Prints, in one run, on the OME catalog (``<shared>/ome-catalog/runtimes`` + ``<shared>/ome-cluster``):

1. Through the real server (a subprocess on 127.0.0.1, port chosen by the OS): p50/p99 latency
   and calls/s of SelectRuntime and ExplainRuntimes with 1 and 8 concurrent clients (the
   InferenceServices of ome-cluster, round-robin), beside the same figures for an empty RPC
   (health Check) on the same server as the floor, and the ratios to it.
2. In process: time per request of the selection decision (ranked candidates) and of the full
   SelectRuntime response, cold (memo cleared every request) and warm, at the catalog's size and
   at 10,000 runtimes (synthetic variations of the catalog runtimes).

Not part of the tests; figures vary ±20% between runs on a 2-core machine.
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from ome.selector.v1 import cache_pb2, selector_pb2, selector_pb2_grpc

from . import api, caches, engine, resolution
from .ingest import compile_request
from .manifests import load_manifests
from .store import CacheStore


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _run_clients(target: str, clients: int, calls: int, make_call: Callable[[grpc.Channel, int], None]) -> dict[str, float]:
    latencies: list[float] = []
    lock = threading.Lock()
    barrier = threading.Barrier(clients + 1)

    def worker(worker_id: int) -> None:
        with grpc.insecure_channel(target) as channel:
            for i in range(50):  # warm-up
                make_call(channel, i)
            barrier.wait()
            local = []
            for i in range(calls):
                start = time.perf_counter()
                make_call(channel, worker_id * calls + i)
                local.append(time.perf_counter() - start)
            with lock:
                latencies.extend(local)

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(clients)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    return {
        "p50_ms": _percentile(latencies, 0.50) * 1e3,
        "p99_ms": _percentile(latencies, 0.99) * 1e3,
        "calls_s": len(latencies) / elapsed,
    }


def _start_server(paths: list[str]) -> tuple[subprocess.Popen[str], str]:
    cmd = [sys.executable, "-m", "ome_selector.cli", "serve", "--listen", "127.0.0.1:0", "--manifests", *paths]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    assert proc.stderr is not None
    deadline = time.time() + 60
    while time.time() < deadline:
        line = proc.stderr.readline()
        match = re.search(r"listening on (127\.0\.0\.1:\d+)", line)
        if match:
            threading.Thread(target=lambda: [None for _ in proc.stderr], daemon=True).start()  # type: ignore[union-attr]
            return proc, match.group(1)
        if not line and proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit("server did not start")


def _synthetic(objects: list[cache_pb2.CacheObject], count: int) -> list[cache_pb2.CacheObject]:
    """``count`` ClusterServingRuntimes: the catalog's, then copies with varied priority and size ranges."""
    runtimes = [o for o in objects if o.WhichOneof("object") == "cluster_serving_runtime"]
    others = [o for o in objects if o.WhichOneof("object") != "cluster_serving_runtime"]
    out = list(runtimes)
    i = 0
    while len(out) < count:
        src = runtimes[i % len(runtimes)]
        copy = cache_pb2.CacheObject()
        copy.CopyFrom(src)
        rt = copy.cluster_serving_runtime
        rt.metadata.name = f"{rt.metadata.name}-v{i}"
        for entry in rt.spec.supported_model_formats:
            entry.priority = 1 + i % 5
        if i % 3 == 0:
            rt.spec.ClearField("model_size_range")
        out.append(copy)
        i += 1
    return out + others


def _in_process(objects: list[cache_pb2.CacheObject], requests: list[selector_pb2.SelectRuntimeRequest], rounds: int) -> dict[str, float]:
    store = CacheStore()
    store.apply_snapshot("bench", objects)
    snap = store.snapshot
    figures: dict[str, float] = {}

    def timed(label: str, fn: Callable[[selector_pb2.SelectRuntimeRequest], object], clear: bool) -> None:
        samples = []
        for _ in range(rounds):
            for req in requests:
                if clear:
                    caches.FITS.clear()
                    caches.FORMAT_FAILURES.clear()
                start = time.perf_counter()
                fn(req)
                samples.append(time.perf_counter() - start)
        figures[label] = statistics.median(samples) * 1e3

    def decide(req: selector_pb2.SelectRuntimeRequest) -> object:
        isvc = req.inference_service
        res = resolution.resolve_model(snap, isvc)
        if res.model is None or res.error:
            return None
        return engine.auto_select(snap, res.model, compile_request(isvc), isvc.metadata.namespace).ranked

    timed("decision_cold_ms", decide, True)
    timed("full_response_cold_ms", lambda r: api.select_runtime(snap, r), True)
    timed("full_response_warm_ms", lambda r: api.select_runtime(snap, r), False)
    figures["runtimes"] = len(snap.cluster) + sum(len(v) for v in snap.namespaced.values())
    return figures


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    parser = argparse.ArgumentParser(prog="python -m ome_selector.bench", description=__doc__.split("\n")[0])
    default_shared = Path(__file__).resolve().parents[3] / "shared"
    parser.add_argument("--shared", default=os.environ.get("OME_SHARED", str(default_shared)), help="path of ../shared")
    parser.add_argument("--calls", type=int, default=1000, help="calls per client (default 1000)")
    parser.add_argument("--synthetic", type=int, default=10000, help="runtimes in the large in-process case")
    args = parser.parse_args(argv)
    shared = Path(args.shared)
    paths = [str(shared / "ome-catalog" / "runtimes"), str(shared / "ome-cluster")]
    loaded = load_manifests(paths)
    isvcs = [i for i in loaded.inference_services if not i.spec.runtime.name]
    requests = [selector_pb2.SelectRuntimeRequest(inference_service=i) for i in isvcs]
    explains = [selector_pb2.ExplainRuntimesRequest(inference_service=i) for i in isvcs]

    proc, target = _start_server(paths)
    try:
        def floor(channel: grpc.Channel, i: int) -> None:
            health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""))

        def select(channel: grpc.Channel, i: int) -> None:
            selector_pb2_grpc.SelectionServiceStub(channel).SelectRuntime(requests[i % len(requests)])

        def explain(channel: grpc.Channel, i: int) -> None:
            selector_pb2_grpc.SelectionServiceStub(channel).ExplainRuntimes(explains[i % len(explains)])

        print(f"server on {target}: {len(loaded.objects)} objects, {len(requests)} InferenceServices round-robin")
        print(f"{'rpc':<16}{'clients':>8}{'p50 ms':>10}{'p99 ms':>10}{'calls/s':>10}{'p50/floor':>11}{'calls/s vs floor':>18}")
        for clients in (1, 8):
            calls = args.calls if clients == 1 else max(1, args.calls // 2)
            base = _run_clients(target, clients, calls, floor)
            for name, fn in (("Health/Check", floor), ("SelectRuntime", select), ("ExplainRuntimes", explain)):
                fig = base if fn is floor else _run_clients(target, clients, calls, fn)
                print(
                    f"{name:<16}{clients:>8}{fig['p50_ms']:>10.3f}{fig['p99_ms']:>10.3f}{fig['calls_s']:>10.0f}"
                    f"{fig['p50_ms'] / base['p50_ms']:>10.2f}x{fig['calls_s'] / base['calls_s']:>17.2f}x"
                )
    finally:
        proc.terminate()
        proc.wait(timeout=30)

    print("\nin process (median per request, ms):")
    print(f"{'runtimes':>9}{'decision cold':>15}{'full response cold':>20}{'full response warm':>20}")
    for objects in (loaded.objects, _synthetic(loaded.objects, args.synthetic)):
        fig = _in_process(objects, requests, rounds=3)
        print(f"{int(fig['runtimes']):>9}{fig['decision_cold_ms']:>15.3f}{fig['full_response_cold_ms']:>20.3f}{fig['full_response_warm_ms']:>20.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
