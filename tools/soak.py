"""Soak: selections under a cache write every 100 ms against a real server, RSS over time.

    python -m tools.soak --minutes 10                 # the OME catalog and ome-cluster from ../shared
    python -m tools.soak --minutes 1 --manifests PATH ...   # or any manifests
                                                                   # (default: as above, else the examples)

It starts ``ome-selector serve --listen 127.0.0.1:0`` as a subprocess, then, for N minutes, calls
SelectRuntime and ExplainRuntimes in a loop (each call a new InferenceService, round-robin over the
loaded ones) while another thread upserts a ClusterServingRuntime every ``--interval`` seconds
(the same few keys with changing content, so the cache does not grow). Every ``--every`` seconds
it prints the server's RSS (``VmRSS`` of /proc/<pid>/status) and the calls done; at the end, the
lowest RSS of each minute, which should stay flat. It is a measurement, not a test: the exit
status is 0 unless the server dies or a call fails with anything but the expected answers.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import grpc
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_manifests, read_inference_services
from ome_selector.examples import example_paths, inference_service_paths

_LISTENING = re.compile(r"listening on (\S+)")
_SHARED = Path(__file__).resolve().parents[2] / "shared"


def default_manifests() -> list[str]:
    """The OME catalog's runtimes and models and ome-cluster from ../shared, else the examples."""
    paths = [_SHARED / "ome-catalog" / "runtimes", _SHARED / "ome-catalog" / "models", _SHARED / "ome-cluster"]
    return [str(p) for p in paths] if all(p.exists() for p in paths) else example_paths()


def rss_mb(pid: int) -> float:
    """Resident set size of ``pid`` in MB (0 when it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _runtime(generation: int) -> cache_pb2.CacheObject:
    runtime = types_pb2.ClusterServingRuntime()
    runtime.metadata.name = f"soak-runtime-{generation % 4}"
    runtime.metadata.annotations["soak/generation"] = str(generation)
    entry = runtime.spec.supported_model_formats.add()
    entry.model_format.name = "safetensors"
    entry.model_framework.name = "transformers"
    entry.model_framework.version = f"4.{generation % 50}.0"
    entry.auto_select = True
    entry.priority = 1 + generation % 3
    return cache_pb2.CacheObject(cluster_serving_runtime=runtime)


def main(argv: list[str] | None = None) -> int:
    """Run the soak; see the module docstring."""
    parser = argparse.ArgumentParser(prog="python -m tools.soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--minutes", type=float, default=10.0, help="how long (default 10)")
    parser.add_argument("--interval", type=float, default=0.1, help="seconds between cache writes (default 0.1)")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between RSS lines (default 10)")
    parser.add_argument(
        "--manifests", nargs="+", default=None, help="manifests to serve (default: ../shared catalog and cluster)"
    )
    args = parser.parse_args(argv)

    from ome.selector.v1 import cache_pb2_grpc, selector_pb2, selector_pb2_grpc

    manifests = args.manifests or default_manifests()
    loaded = load_manifests(manifests)
    isvcs = [i for i in loaded.inference_services if i.spec.model.name] or [
        read_inference_services(p)[0][0] for p in inference_service_paths()
    ]
    command = [sys.executable, "-m", "ome_selector.cli", "serve", "--listen", "127.0.0.1:0", "--manifests", *manifests]
    server = subprocess.Popen(
        command,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert server.stderr is not None
    address = ""
    for line in server.stderr:
        match = _LISTENING.search(line)
        if match:
            address = match.group(1)
            break
    if not address:
        print("server exited before listening", file=sys.stderr)
        return 1
    threading.Thread(target=lambda: [None for _ in server.stderr], daemon=True).start()  # type: ignore[union-attr]

    stop = threading.Event()
    counts = {"selections": 0, "writes": 0, "failures": 0}
    failures: list[str] = []

    def select_loop() -> None:
        with grpc.insecure_channel(address) as channel:
            stub = selector_pb2_grpc.SelectionServiceStub(channel)
            for n in itertools.count():
                if stop.is_set():
                    return
                isvc = types_pb2.InferenceService()
                isvc.CopyFrom(isvcs[n % len(isvcs)])
                isvc.metadata.name = f"soak-{n}"
                try:
                    if n % 2:
                        stub.ExplainRuntimes(selector_pb2.ExplainRuntimesRequest(inference_service=isvc), timeout=30)
                    else:
                        stub.SelectRuntime(selector_pb2.SelectRuntimeRequest(inference_service=isvc), timeout=30)
                except grpc.RpcError as error:
                    if error.code() not in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):  # type: ignore[attr-defined]
                        counts["failures"] += 1
                        failures.append(f"{error.code()}: {error.details()}")  # type: ignore[attr-defined]
                counts["selections"] += 1

    def write_loop() -> None:
        with grpc.insecure_channel(address) as channel:
            stub = cache_pb2_grpc.CacheServiceStub(channel)
            for generation in itertools.count():
                if stop.wait(args.interval):
                    return
                try:
                    stub.UpsertObjects(cache_pb2.UpsertObjectsRequest(objects=[_runtime(generation)]), timeout=30)
                    counts["writes"] += 1
                except grpc.RpcError as error:
                    counts["failures"] += 1
                    failures.append(f"{error.code()}: {error.details()}")  # type: ignore[attr-defined]

    threads = [threading.Thread(target=select_loop, daemon=True), threading.Thread(target=write_loop, daemon=True)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    end = started + args.minutes * 60
    lows: dict[int, float] = {}
    print(
        f"soak: {server.pid} at {address}, {len(loaded.objects)} objects, {len(isvcs)} InferenceServices, "
        f"a write every {args.interval}s, for {args.minutes:g} min",
        flush=True,
    )
    try:
        next_line = started
        while time.monotonic() < end and server.poll() is None:
            time.sleep(0.5)
            now = time.monotonic()
            rss = rss_mb(server.pid)
            minute = int((now - started) // 60)
            lows[minute] = min(lows.get(minute, rss), rss)
            if now >= next_line:
                print(
                    f"t={now - started:6.0f}s rss={rss:7.1f} MB selections={counts['selections']} "
                    f"writes={counts['writes']} failures={counts['failures']}",
                    flush=True,
                )
                next_line += args.every
    finally:
        stop.set()
        for thread in threads:
            thread.join(35)
        alive = server.poll() is None
        server.terminate()
        try:
            server.wait(15)
        except subprocess.TimeoutExpired:
            server.kill()
    print("lowest RSS per minute (MB): " + " ".join(f"{lows[m]:.1f}" for m in sorted(lows)), flush=True)
    for failure in failures[:5]:
        print(f"failure: {failure}", flush=True)
    return 0 if alive and not failures else 1


if __name__ == "__main__":
    sys.exit(main())
