"""The watch benchmark under sustained writes: ``python -m tools.bench_watch --rates ...`` and
``python -m tools.bench_watch --watchers ...`` (tools/bench_watch.py parses the flags).

Not a test: it prints figures (progress on stderr, the tables on stdout).

Rates (``--rates 10,50,100,500 --rate-isvcs 300,5000 --seconds S``): for each number of
InferenceServices and each rate, a fresh server (``bench.Server``) gets the OME catalog's
runtimes and ome-cluster's other objects (``bench.sized_objects(catalog, 0)``) and that many
InferenceServices with a runtime (drawn as ``bench_watch.build_cluster`` draws them), a watcher
of every namespace, then S seconds of UpsertObjects at the rate (one client thread per 100
writes/s, each on its own channel). The writes cycle
through: an InferenceService's model changed to another of ome-cluster's models (its outcome
moves), its ``team`` label changed, and every tenth write a catalog ClusterServingRuntime with new
priorities (every InferenceService of its format key is evaluated again). Figures per row:

- the rate reached (writes answered / the seconds they took: each client thread sends its writes
  in turn, so below the rate asked when the server answers more slowly than that);
- lag: from a write's answer to the first ``WriteStats`` on the watcher whose generation is that
  write's or later (the tracker coalesces), p50, p99 and max, and the lag of the last write (the
  time to catch up after the burst);
- advances: the tracker's re-evaluations (``ome_selector_watch_writes_total`` is every write,
  the watcher's ``WriteStats`` count one per advance);
- fresh watches: once a second, a WatchSelections opened right after a write answered; how many
  started (``InitialEventsEnd.generation``) at that write or later, and the time to their initial
  state, max;
- the server's RSS (``VmRSS``) before the writes, halfway through them, at most during them and
  after them (flat: the maximum near the halfway figure).

Watchers (``--watchers N --slow K --rate R --seconds S --rate-isvcs M``): N WatchSelections
streams of every namespace (in a child process, so they do not slow the writer's client), K of
them reading one event per 20 ms (50 events/s, the slow reader), while clients write at R
writes/s as above, except that every tenth write disables or re-enables the catalog
ClusterServingRuntime that the most InferenceServices use, so each such write gives them OME's
``no runtime found`` outcome (the largest events) or gives it back. Figures: the server's RSS
before, at most and after; the UpsertObjects latency p50, p99 and max; the events the watchers
received (by kind, with their bytes) and the resyncs they got; the CPU the server, the writer
and the watchers' process took (% of one core).

The watchers are a load generator, so they cost little CPU per event and the figures measure
the server: the N streams share one grpc.aio event loop (no thread per stream), each on its own
channel and connection, and read raw bytes (no response deserializer). An event's kind is its
first byte (the tag of the ``event`` oneof, ``EVENT_TAGS``); the small events (initial end,
write stats, resync) are parsed, and one large event (current, change) in ``VERIFY_EVERY``, to
check that byte: the run fails when one disagrees. ``--watchers-nice N`` runs the watchers'
process at nice N (default 0), as clients on other machines that do not take the CPU the server
and the writer need.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
import resource
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2

from tools import bench

FRESH_EVERY_S = 1.0
SLOW_READ_S = 0.02  # a slow watcher reads 50 events/s


@dataclass
class Load:
    """The cluster of one run: the objects without InferenceServices and the InferenceServices."""

    base: list[cache_pb2.CacheObject]
    isvcs: list[types_pb2.InferenceService]
    models: tuple[str, ...]
    runtimes: list[cache_pb2.CacheObject]


def _csr(obj: cache_pb2.CacheObject) -> types_pb2.ClusterServingRuntime:
    return obj.cluster_serving_runtime


class WriteCycle:
    """The writes of the load, in turn (see the module docstring); ``disable``: the runtime whose
    every tenth write toggles ``disabled`` instead of new priorities."""

    def __init__(self, load: Load, disable: cache_pb2.CacheObject | None = None) -> None:
        self._load = load
        self._disable = disable
        self._count = 0
        self._lock = threading.Lock()

    def next(self) -> list[cache_pb2.CacheObject]:
        """The objects of the next write (thread-safe)."""
        with self._lock:
            i = self._count
            self._count += 1
        if i % 10 == 9:
            if self._disable is not None:
                obj = cache_pb2.CacheObject()
                obj.CopyFrom(self._disable)
                _csr(obj).spec.disabled = (i // 10) % 2 == 0
                return [obj]
            src = self._load.runtimes[(i // 10) % len(self._load.runtimes)]
            obj = cache_pb2.CacheObject()
            obj.CopyFrom(src)
            for n, entry in enumerate(_csr(obj).spec.supported_model_formats):
                entry.priority = 1 + (i + n) % 9
            return [obj]
        isvc = types_pb2.InferenceService()
        isvc.CopyFrom(self._load.isvcs[(i * 7919) % len(self._load.isvcs)])
        if i % 2:
            isvc.spec.model.name = self._load.models[i % len(self._load.models)]
        else:
            isvc.metadata.labels["team"] = f"t{i % 3}"
        return [cache_pb2.CacheObject(inference_service=isvc)]


class StatsLog(threading.Thread):
    """A watcher of every namespace: the arrival time and generation of each ``WriteStats``."""

    def __init__(self, server: bench.Server) -> None:
        super().__init__(daemon=True, name="bench-watch-stats")
        self._channel = server.channel()
        self._call = bench.Server.stubs(self._channel).selection.WatchSelections(
            selector_pb2.WatchSelectionsRequest(), timeout=7200
        )
        self.stats: list[tuple[float, int]] = []
        self.resyncs = 0
        self.ready = threading.Event()
        self._cond = threading.Condition()

    def run(self) -> None:
        """Read until cancelled."""
        try:
            for event in self._call:
                which = event.WhichOneof("event")
                if which == "initial_events_end":
                    self.ready.set()
                elif which == "write":
                    with self._cond:
                        self.stats.append((time.perf_counter(), event.write.generation))
                        self._cond.notify_all()
                elif which == "resync":
                    self.resyncs += 1
        except grpc.RpcError:
            pass

    def wait_for(self, generation: int, timeout: float) -> None:
        """Until a ``WriteStats`` of ``generation`` or later came."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self.stats or self.stats[-1][1] < generation:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no WriteStats of generation {generation} in {timeout:g} s")
                self._cond.wait(0.5)

    def close(self) -> None:
        """Cancel the stream."""
        self._call.cancel()
        self.join(timeout=30)
        self._channel.close()


@dataclass
class Writes:
    """What the writer did: (answered at, generation, seconds the call took) per write."""

    done: list[tuple[float, int, float]] = field(default_factory=list)
    failures: int = 0
    elapsed_s: float = 0.0  # from the first write sent to the last one answered


WRITES_PER_CLIENT = 100.0  # writes/s one client thread is asked for at most


def write_at(server: bench.Server, cycle: WriteCycle, rate: float, seconds: float, out: Writes) -> None:
    """UpsertObjects at ``rate`` per second for ``seconds`` from ceil(rate / 100) client threads,
    each on its own channel (a late write goes at once)."""
    clients = max(1, math.ceil(rate / WRITES_PER_CLIENT))
    start = time.perf_counter()

    def client(k: int) -> None:
        channel = server.channel()
        cache = bench.Server.stubs(channel).cache
        n = 0
        try:
            while True:
                due = start + (n * clients + k) / rate
                if due - start >= seconds:
                    return
                now = time.perf_counter()
                if due > now:
                    time.sleep(due - now)
                request = cache_pb2.UpsertObjectsRequest(objects=cycle.next())
                sent = time.perf_counter()
                try:
                    status = cache.UpsertObjects(request, timeout=bench.RPC_TIMEOUT_S)
                except grpc.RpcError:
                    out.failures += 1
                else:
                    answered = time.perf_counter()
                    out.done.append((answered, status.status.generation, answered - sent))
                n += 1
        finally:
            channel.close()

    threads = [threading.Thread(target=client, args=(k,), daemon=True) for k in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out.elapsed_s = time.perf_counter() - start


def fresh_watches(server: bench.Server, writes: Writes, stop: threading.Event) -> list[tuple[bool, float]]:
    """Once a second: a WatchSelections opened after the last answered write; (started at or after
    it, seconds to its initial state)."""
    out: list[tuple[bool, float]] = []
    channel = server.channel()
    selection = bench.Server.stubs(channel).selection
    try:
        while not stop.wait(FRESH_EVERY_S):
            if not writes.done:
                continue
            generation = writes.done[-1][1]
            opened = time.perf_counter()
            call = selection.WatchSelections(selector_pb2.WatchSelectionsRequest(namespace="ns-0"), timeout=120)
            for event in call:
                if event.HasField("initial_events_end"):
                    out.append((event.initial_events_end.generation >= generation, time.perf_counter() - opened))
                    break
            call.cancel()
    finally:
        channel.close()
    return out


def prepare(server: bench.Server, load: Load) -> None:
    """ApplySnapshot of the base, then the InferenceServices in UpsertObjects of 1,000."""
    bench.apply_snapshot(server, load.base)
    channel = server.channel()
    cache = bench.Server.stubs(channel).cache
    for i in range(0, len(load.isvcs), 1000):
        batch = [cache_pb2.CacheObject(inference_service=x) for x in load.isvcs[i : i + 1000]]
        cache.UpsertObjects(cache_pb2.UpsertObjectsRequest(objects=batch), timeout=bench.RPC_TIMEOUT_S)
    channel.close()


def _pct(values: Sequence[float], q: float) -> float:
    return bench.percentile(values, q) if values else float("nan")


def lags(writes: Writes, stats: list[tuple[float, int]]) -> list[float]:
    """Per write: seconds from its answer to the first WriteStats of its generation or later."""
    out = []
    j = 0
    for answered, generation, _ in sorted(writes.done, key=lambda w: w[1]):
        while j < len(stats) and stats[j][1] < generation:
            j += 1
        if j < len(stats):
            out.append(max(0.0, stats[j][0] - answered))
    return out


def rate_row(load: Load, rate: float, seconds: float) -> dict[str, object]:
    """One row of the rates table: a fresh server, the load, ``seconds`` of writes at ``rate``."""
    with bench.running_server(bench.default_rss_guard_mb()) as server:
        prepare(server, load)
        log = StatsLog(server)
        log.start()
        log.ready.wait(300)
        time.sleep(bench.SETTLE_S)
        rss_before = server.status_mb()
        sampler = bench.RssSampler(server)
        writes = Writes()
        stop = threading.Event()
        fresh: list[tuple[bool, float]] = []
        checker = threading.Thread(target=lambda: fresh.extend(fresh_watches(server, writes, stop)), daemon=True)
        with bench.background(sampler):
            checker.start()
            write_at(server, WriteCycle(load), rate, seconds, writes)
            stop.set()
            checker.join(180)
            if writes.done:
                log.wait_for(max(g for _, g, _ in writes.done), 600)
        time.sleep(bench.SETTLE_S)
        rss_after = server.status_mb()
        log.close()
    lag = lags(writes, log.stats)
    last = lag[-1] if lag else float("nan")
    return {
        "isvcs": len(load.isvcs),
        "rate": rate,
        "reached": len(writes.done) / writes.elapsed_s if writes.elapsed_s else 0.0,
        "lag_p50_s": _pct(lag, 0.5),
        "lag_p99_s": _pct(lag, 0.99),
        "lag_max_s": max(lag) if lag else float("nan"),
        "lag_last_s": last,
        "advances": len(log.stats),
        "writes": len(writes.done),
        "fresh_ok": sum(1 for ok, _ in fresh if ok),
        "fresh": len(fresh),
        "fresh_max_s": max((t for _, t in fresh), default=float("nan")),
        "rss_before": rss_before,
        "rss_mid": sampler.samples[len(sampler.samples) // 2] if sampler.samples else float("nan"),
        "rss_max": max(sampler.samples, default=float("nan")),
        "rss_after": rss_after,
        "failures": writes.failures,
        "resyncs": log.resyncs,
    }


RATE_HEADER = (
    f"{'ISVCs':>6} {'rate/s':>7} {'reached':>8} {'lag p50':>8} {'lag p99':>8} {'lag max':>8} {'last':>7} "
    f"{'advances':>9} {'fresh ok':>9} {'fresh max':>9} {'RSS before':>10} {'RSS mid':>8} {'RSS max':>8} "
    f"{'RSS after':>9}"
)


def rate_line(row: dict[str, object]) -> str:
    r = row
    return (
        f"{r['isvcs']:>6,} {r['rate']:>7g} {r['reached']:>8.1f} {r['lag_p50_s']:>7.3f}s {r['lag_p99_s']:>7.3f}s "
        f"{r['lag_max_s']:>7.3f}s {r['lag_last_s']:>6.3f}s {r['advances']:>4}/{r['writes']:<4} "
        f"{r['fresh_ok']:>4}/{r['fresh']:<4} {r['fresh_max_s']:>8.3f}s {r['rss_before']:>8.0f}MB "
        f"{r['rss_mid']:>6.0f}MB {r['rss_max']:>6.0f}MB {r['rss_after']:>7.0f}MB"
    )


def build_load(catalog: bench.Catalog, isvcs: int, seed: int) -> Load:
    """The catalog's objects and ``isvcs`` InferenceServices with a runtime."""
    from tools.bench_watch import Settings, build_cluster

    settings = Settings(bench.default_shared(), 0, isvcs, 1, 1, seed, False, ())
    cluster = build_cluster(catalog, settings)
    runtimes = [o for o in cluster.base if o.HasField("cluster_serving_runtime")]
    return Load(cluster.base, cluster.inference_services, catalog.models, runtimes)


def run_rates(catalog: bench.Catalog, rates: Sequence[float], sizes: Sequence[int], seconds: float, seed: int) -> int:
    """The rates table (see the module docstring)."""
    print(f"\n[rates] {seconds:g} s of UpsertObjects per row, one fresh server each\n{RATE_HEADER}", flush=True)
    rows = []
    for size in sizes:
        bench.progress(f"drawing {size:,} InferenceServices with a runtime")
        load = build_load(catalog, size, seed)
        for rate in rates:
            bench.progress(f"{size:,} InferenceServices, {rate:g} writes/s for {seconds:g} s")
            row = rate_row(load, rate, seconds)
            rows.append(row)
            print(rate_line(row), flush=True)
    print(
        "lag: a write's answer → the watcher's first WriteStats of its generation or later; last: the last write "
        "(catching up); advances: WriteStats received / writes answered (coalesced when fewer); fresh ok: "
        "WatchSelections opened after a write answered that started at it or later"
    )
    return 1 if any(r["failures"] for r in rows) else 0


def most_used_runtime(load: Load) -> cache_pb2.CacheObject:
    """The catalog ClusterServingRuntime that the most of the InferenceServices use."""
    from ome_selector.cache.store import CacheStore
    from ome_selector.flows import outcomes

    store = CacheStore()
    store.apply_snapshot("bench", [*load.base, *(cache_pb2.CacheObject(inference_service=i) for i in load.isvcs)])
    used = Counter(o.runtime[2] for o in outcomes.Selections.build(store.snapshot).outcomes().values() if o.runtime)
    name = used.most_common(1)[0][0]
    return next(o for o in load.runtimes if _csr(o).metadata.name == name)


# A WatchSelectionsResponse holds nothing but its ``event`` oneof, so the first byte of an event on
# the wire is the tag of its one field (field number << 3 | 2, length-delimited): the watchers
# count events by it without parsing them.
EVENT_TAGS = {
    (f.number << 3) | 2: f.name for f in selector_pb2.WatchSelectionsResponse.DESCRIPTOR.oneofs_by_name["event"].fields
}
LARGE_EVENTS = frozenset(("current", "change"))  # the others are parsed, each (a few per advance)
VERIFY_EVERY = 64  # one large event in this many is parsed too, to check its tag
WATCH_METHOD = "/ome.selector.v1.SelectionService/WatchSelections"


class WatchTotals:
    """What the watchers of the child process received: events per kind (by tag), their bytes,
    the events parsed and how many of those disagreed with their tag."""

    def __init__(self) -> None:
        self.kinds: Counter[str] = Counter()
        self.bytes: Counter[str] = Counter()
        self.parsed = 0
        self.mismatched = 0
        self.cpu_at_ready = 0.0  # this process's CPU seconds once every stream had its state
        self.ready_at = 0.0  # and the time.monotonic() then
        self._large = 0

    def add(self, raw: bytes) -> str:
        """Count one serialized event; its kind (``other`` for an unknown tag)."""
        kind = EVENT_TAGS.get(raw[0], "other") if raw else "other"
        self.kinds[kind] += 1
        self.bytes[kind] += len(raw)
        check = kind not in LARGE_EVENTS
        if not check:
            self._large += 1
            check = self._large % VERIFY_EVERY == 0
        if check:
            self.parsed += 1
            if selector_pb2.WatchSelectionsResponse.FromString(raw).WhichOneof("event") != kind:
                self.mismatched += 1
        return kind

    def as_json(self) -> str:
        """The totals, and the CPU and wall seconds since ``ready`` (``cpu_s``, ``wall_s``), as
        one JSON line."""
        counts = {"kinds": dict(self.kinds), "bytes": dict(self.bytes)}
        checks = {"parsed": self.parsed, "mismatched": self.mismatched}
        cpu = {"cpu_s": own_cpu_s() - self.cpu_at_ready, "wall_s": time.monotonic() - self.ready_at}
        return json.dumps({**counts, **checks, **cpu})


async def _watchers(address: str, count: int, slow: int, seconds: float) -> WatchTotals:
    """``count`` streams in one event loop (grpc.aio), each on its own channel and connection,
    reading raw bytes (no response deserializer); the first ``slow`` sleep 20 ms per event."""
    totals = WatchTotals()
    started = 0
    all_started = asyncio.Event()
    channels = [grpc.aio.insecure_channel(address, options=bench.CHANNEL_OPTIONS) for _ in range(count)]
    request = selector_pb2.WatchSelectionsRequest().SerializeToString()
    calls = [
        ch.unary_stream(WATCH_METHOD, request_serializer=lambda b: b, response_deserializer=None)(request)
        for ch in channels
    ]

    async def read(i: int, call: grpc.aio.UnaryStreamCall) -> None:
        nonlocal started
        seen_end = False
        try:
            async for raw in call:
                kind = totals.add(raw)
                if kind == "initial_events_end" and not seen_end:
                    seen_end = True
                    started += 1
                    if started == count:
                        all_started.set()
                if i < slow:
                    await asyncio.sleep(SLOW_READ_S)
        except (grpc.RpcError, asyncio.CancelledError):
            pass

    tasks = [asyncio.create_task(read(i, call)) for i, call in enumerate(calls)]
    await asyncio.wait_for(all_started.wait(), 300)
    totals.cpu_at_ready, totals.ready_at = own_cpu_s(), time.monotonic()
    print("ready", flush=True)
    await asyncio.sleep(seconds)
    for call in calls:
        call.cancel()
    await asyncio.wait(tasks, timeout=30)
    for ch in channels:
        await ch.close()
    return totals


def watchers_child(address: str, count: int, slow: int, seconds: float) -> int:
    """The child process of ``run_watchers``: ``count`` streams (``slow`` of them slow) for
    ``seconds``; prints ``ready`` once every stream has its initial state, then one JSON line of
    totals (``WatchTotals.as_json``)."""
    totals = asyncio.run(_watchers(address, count, slow, seconds))
    print(totals.as_json(), flush=True)
    return 0


def own_cpu_s() -> float:
    """This process's CPU seconds (user and system, every thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def process_cpu_s(pid: int) -> float:
    """The CPU seconds (user and system) of process ``pid`` (/proc/PID/stat); NaN once gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return math.nan
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_watchers(
    catalog: bench.Catalog, count: int, slow: int, rate: float, seconds: float, isvcs: int, seed: int, nice: int = 0
) -> int:
    """The watchers table (see the module docstring); ``nice``: the watchers' process's nice value."""
    bench.progress(f"drawing {isvcs:,} InferenceServices with a runtime")
    load = build_load(catalog, isvcs, seed)
    disable = most_used_runtime(load)
    with bench.running_server(bench.default_rss_guard_mb()) as server:
        prepare(server, load)
        time.sleep(bench.SETTLE_S)
        rss_before = server.status_mb()
        bench.progress(f"{count} watchers ({slow} slow), {rate:g} writes/s for {seconds:g} s")
        child = subprocess.Popen(
            [sys.executable, "-m", "tools.bench_watch_load", "watchers", server.address, str(count), str(slow)]
            + [str(seconds + 5)],
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=(lambda: os.nice(nice)) if nice else None,
        )
        assert child.stdout is not None
        if child.stdout.readline().strip() != "ready":
            raise SystemExit("bench_watch: the watchers did not start")
        sampler = bench.RssSampler(server)
        writes = Writes()
        assert server.proc is not None
        cpu_before = (process_cpu_s(server.proc.pid), own_cpu_s())
        with bench.background(sampler):
            write_at(server, WriteCycle(load, disable), rate, seconds, writes)
        cpu = (process_cpu_s(server.proc.pid) - cpu_before[0], own_cpu_s() - cpu_before[1])
        totals = json.loads(child.stdout.readline() or "{}")
        child.wait(120)
        rss_after = server.status_mb()
    latency = [t for _, _, t in writes.done]
    print(
        f"\n[watchers] {count} WatchSelections of every namespace ({slow} reading 50 events/s), "
        f"{isvcs:,} InferenceServices, {rate:g} writes/s for {seconds:g} s "
        f"(every tenth toggles disabled on ClusterServingRuntime {_csr(disable).metadata.name})"
        + (f"; the watchers' process at nice {nice}" if nice else "")
    )
    reached = len(writes.done) / writes.elapsed_s if writes.elapsed_s else 0.0
    print(f"  writes answered        {len(writes.done):>8,}   failed {writes.failures}   ({reached:.1f}/s)")
    for name, q in (("p50", 0.5), ("p99", 0.99)):
        print(f"  UpsertObjects {name}      {_pct(latency, q) * 1e3:>8.1f} ms")
    print(f"  UpsertObjects max      {max(latency, default=0) * 1e3:>8.1f} ms")
    print(f"  server RSS before      {rss_before:>8.0f} MB")
    print(f"  server RSS max         {max(sampler.samples, default=float('nan')):>8.0f} MB")
    print(f"  server RSS after       {rss_after:>8.0f} MB")
    kinds: dict[str, int] = totals.get("kinds", {})
    sizes: dict[str, int] = totals.get("bytes", {})
    events = sum(v for k, v in kinds.items() if k != "resync")
    print(
        f"  events received        {events:>8,}   resyncs {kinds.get('resync', 0):,}   "
        f"{sum(sizes.values()) / 2**20:,.0f} MB"
    )
    for kind, n in sorted(kinds.items()):
        print(f"    {kind:<20} {n:>8,}   {sizes.get(kind, 0) / 2**20:>8,.1f} MB")
    print(
        f"    parsed to check      {totals.get('parsed', 0):>8,}   not of their first byte's kind "
        f"{totals.get('mismatched', 0)} (every small event, one large in {VERIFY_EVERY})"
    )
    elapsed = writes.elapsed_s or math.nan
    child_wall = totals.get("wall_s") or math.nan
    print(
        f"  CPU, % of one core     server {100 * cpu[0] / elapsed:.0f} %, writer {100 * cpu[1] / elapsed:.0f} % "
        f"(over the writes' {writes.elapsed_s:.0f} s); watchers' process "
        f"{100 * totals.get('cpu_s', math.nan) / child_wall:.0f} % (over its {child_wall:.0f} s)"
    )
    bad = totals.get("mismatched", 0) or kinds.get("other", 0)
    if bad:
        print("  bench_watch: events whose first byte is not their kind's tag: the counts are wrong")
    return 1 if writes.failures or bad or not totals else 0


if __name__ == "__main__":  # the watchers' child process
    if len(sys.argv) == 6 and sys.argv[1] == "watchers":
        raise SystemExit(watchers_child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])))
    raise SystemExit("usage: python -m tools.bench_watch --rates ... | --watchers ... (see its --help)")
