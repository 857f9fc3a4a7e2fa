"""The watch benchmark (docs/architecture.md, "The watch benchmark"): ``python -m tools.bench_watch``.

Not a test: a command that prints figures and the targets of docs/architecture.md beside them (PASS / MISS), as
``python -m tools.bench`` does, for a closing note (progress on stderr, the report on
stdout).

Usage::

    python -m tools.bench_watch [--shared PATH] [--runtimes N] [--inference-services M]
                                       [--moves K] [--repeat R] [--seed S] [--json]
    python -m tools.bench_watch --rates 10,50,100,500 [--rate-isvcs 300,5000] [--seconds S]
    python -m tools.bench_watch --watchers 50 [--slow K] [--rate R] [--seconds S] [--rate-isvcs M]

The last two run sustained writes instead (tools/bench_watch_load.py: the tracker's lag and the
server's RSS per rate; the server's RSS and write latency under many watchers).

Defaults: 10,000 runtimes (``bench.sized_objects``: 10,094 clones of the OME catalog's
ClusterServingRuntimes with random priorities, beside ome-cluster's other objects), 5,000 cached
InferenceServices, a write that moves about 100 of them, 5 repetitions of each write.

The InferenceServices are drawn as ``bench``'s real traffic draws its requests (a random
ClusterBaseModel of ome-cluster with a modelFormat, a random AcceleratorClass or none, one of 20
namespaces ``ns-0`` … ``ns-19``, unique names) and kept when they get a runtime, as the
InferenceServices a cluster runs do (ome-cluster's own eight are left out). An InferenceService
without a runtime depends on every runtime of its scope (OME's ``no runtime found`` message lists
them all), so any runtime write there evaluates it again; a cluster of them is a different
benchmark.

Figures:

1. Load. ApplySnapshot of the runtimes, models and classes to a fresh server (``bench.Server``:
   ``ome-selector serve --listen 127.0.0.1:0 --wait-for-sync``); then the InferenceServices in
   UpsertObjects of 1,000, each timed from the call to its last change event on a watcher of
   every namespace; in process, ``outcomes.Selections.build`` of them all and its distinct
   evaluations.
2. Memory. The server's VmRSS before and after the InferenceServices are loaded (their cached
   objects, outcomes and index together; 1 s settle before each reading), and per InferenceService;
   in process, the bytes ``tracemalloc`` counts for ``Selections.build`` (the outcomes and index
   alone, the snapshot's objects excluded).
3. A write that moves about K InferenceServices: the ClusterServingRuntime among those that serve
   a cached InferenceService's model (up to 8 per format key) whose entries, at priority 100, move
   the count nearest K (found in process with ``Selections.advance``); it is upserted, then
   restored, R times each.
   Over gRPC: the time from sending UpsertObjects to the last change event a watcher of every
   namespace receives (target ≤ 100 ms), and to the write's ``WriteStats``; the change events;
   ``WriteStats.reevaluated`` against OME's behaviour (troubleshoot-runtime-selection.md, Step 5:
   every InferenceService tried again on any ClusterServingRuntime change, here all M); in
   process, the distinct evaluations (``outcomes.Advance.evaluations``) and the time of
   ``Selections.advance``. 3b: the same for the write tried that re-evaluates the most (the
   runtimes of the most widely used format key), no target.
4. Writes that can move none: new priorities for a ClusterServingRuntime that serves no cached
   InferenceService's model, and a ServingRuntime created in a namespace without InferenceServices
   (then deleted): the time to the write's ``WriteStats`` and ``reevaluated`` (target 0).

Every latency is wall time seen by the benchmark's Python gRPC client (the watcher is a thread of
this process), on a 2-core machine shared with other work: repeat for ranges.
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from ome.selector.v1 import cache_pb2, selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.flows import outcomes, reconcile
from ome_selector.validation import ENUM_TO_KIND, object_key

from tools import bench
from tools.bench import Section, SizeReport, Target

BATCH = 1000  # InferenceServices per UpsertObjects while loading (below the watch queue of 4096)
BUMPED_PRIORITY = 100
EVENT_TIMEOUT_S = 120.0
LAST_EVENT_TARGET_MS = 100.0
EMPTY_NAMESPACE = "bench-empty"


@dataclass(frozen=True)
class Settings:
    """The command line."""

    shared: Path
    runtimes: int
    inference_services: int
    moves: int
    repeat: int
    seed: int
    emit_json: bool
    argv: tuple[str, ...]
    rates: tuple[float, ...] = ()
    rate_isvcs: tuple[int, ...] = (300, 5000)
    seconds: float = 20.0
    watchers: int = 0
    slow: int = 0
    rate: float = 20.0
    watchers_nice: int = 0


def parse_args(argv: Sequence[str]) -> Settings:
    """The command line as Settings (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench_watch",
        description="WatchSelections benchmark: the cost of a cache write for cached InferenceServices.",
    )
    parser.add_argument("--shared", type=Path, metavar="PATH", default=None, help="shared folder (default ../shared)")
    parser.add_argument("--runtimes", type=int, metavar="N", default=10000, help="ClusterServingRuntimes (10000)")
    parser.add_argument(
        "--inference-services", type=int, metavar="M", default=5000, help="cached InferenceServices (5000)"
    )
    parser.add_argument("--moves", type=int, metavar="K", default=100, help="InferenceServices the write moves (100)")
    parser.add_argument("--repeat", type=int, metavar="R", default=5, help="times each write is made (5)")
    parser.add_argument("--seed", type=int, default=5, help="seed of the InferenceServices drawn (5)")
    parser.add_argument("--json", action="store_true", help="also print one JSON object per figure")
    load = parser.add_argument_group("sustained writes (tools/bench_watch_load.py; instead of the sections above)")
    load.add_argument("--rates", metavar="R,R", default="", help="writes/s per row of the rates table, e.g. 10,50")
    load.add_argument(
        "--rate-isvcs", metavar="M,M", default="300,5000", help="InferenceServices of the rates table (300,5000)"
    )
    load.add_argument("--seconds", type=float, default=20.0, metavar="S", help="seconds of writes per run (20)")
    load.add_argument("--watchers", type=int, default=0, metavar="N", help="the watchers run: N watchers")
    load.add_argument("--slow", type=int, default=0, metavar="K", help="of them, K reading 50 events/s (0)")
    load.add_argument("--rate", type=float, default=20.0, metavar="R", help="writes/s of the watchers run (20)")
    load.add_argument(
        "--watchers-nice",
        type=int,
        default=0,
        metavar="N",
        help="the watchers' process runs at nice N (0): clients on other machines, not taking the server's CPU",
    )
    args = parser.parse_args(argv)
    for name in ("runtimes", "inference_services", "moves", "repeat"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    try:
        rates = tuple(float(x) for x in args.rates.split(",") if x.strip())
        rate_isvcs = tuple(int(x) for x in args.rate_isvcs.split(",") if x.strip())
    except ValueError:
        parser.error("--rates and --rate-isvcs take numbers separated by commas")
    if any(x <= 0 for x in rates) or any(x < 1 for x in rate_isvcs) or args.seconds <= 0:
        parser.error("--rates, --rate-isvcs and --seconds must be positive")
    return Settings(
        rates=rates,
        rate_isvcs=rate_isvcs,
        seconds=args.seconds,
        watchers=args.watchers,
        slow=min(args.slow, args.watchers),
        rate=args.rate,
        watchers_nice=args.watchers_nice,
        shared=args.shared if args.shared is not None else bench.default_shared(),
        runtimes=args.runtimes,
        inference_services=args.inference_services,
        moves=args.moves,
        repeat=args.repeat,
        seed=args.seed,
        emit_json=args.json,
        argv=tuple(argv),
    )


# --- the cluster ---------------------------------------------------------------------------------


@dataclass
class Cluster:
    """The cache without InferenceServices (``base``), the InferenceServices, and how many draws
    it took to find them."""

    base: list[cache_pb2.CacheObject]
    inference_services: list[types_pb2.InferenceService]
    drawn: int


def build_cluster(catalog: bench.Catalog, settings: Settings) -> Cluster:
    """``bench.sized_objects`` without ome-cluster's InferenceServices, and ``settings.
    inference_services`` InferenceServices drawn as the real traffic and kept when they get a
    runtime on that cache (``reconcile.reconcile`` once per model and class: the traffic's
    namespaces hold no ServingRuntime or BaseModel, so they all answer alike)."""
    base = [o for o in bench.sized_objects(catalog, settings.runtimes) if not o.HasField("inference_service")]
    namespaces = {f"ns-{i}" for i in range(bench.NAMESPACES)}
    assert not any(
        o.WhichOneof("object") in ("serving_runtime", "base_model")
        and getattr(o, o.WhichOneof("object") or "").metadata.namespace in namespaces
        for o in base
    ), "the traffic's namespaces must hold no ServingRuntime or BaseModel"
    store = CacheStore()
    store.apply_snapshot("bench-watch-base", base)
    resolves: dict[tuple[str, str], bool] = {}
    source = bench.TrafficSource(catalog, "isvc", settings.seed)
    kept: list[types_pb2.InferenceService] = []
    drawn = 0
    limit = 1000 * settings.inference_services
    while len(kept) < settings.inference_services:
        if drawn >= limit:
            raise SystemExit(f"bench_watch: {drawn} draws gave only {len(kept)} InferenceServices with a runtime")
        isvc = source.next()
        drawn += 1
        pair = (isvc.spec.model.name, isvc.spec.accelerator_selector.accelerator_class)
        if pair not in resolves:
            resolves[pair] = reconcile.reconcile(store.snapshot, isvc, True).runtime is not None
        if resolves[pair]:
            kept.append(isvc)
    return Cluster(base, kept, drawn)


def isvc_objects(isvcs: Sequence[types_pb2.InferenceService]) -> list[cache_pb2.CacheObject]:
    """The InferenceServices as CacheObjects."""
    return [cache_pb2.CacheObject(inference_service=i) for i in isvcs]


@dataclass
class Write:
    """A write the benchmark makes: what it does, its objects (upserts, deletes), and what it
    does in process (InferenceServices moved to another runtime, re-evaluated, evaluations,
    seconds of ``Selections.advance``)."""

    label: str
    upserts: list[cache_pb2.CacheObject] = field(default_factory=list)
    deletes: list[cache_pb2.ObjectKey] = field(default_factory=list)
    moved: int = 0
    reevaluated: int = 0
    evaluations: int = 0
    advance_s: list[float] = field(default_factory=list)


def bumped(obj: cache_pb2.CacheObject, priority: int = BUMPED_PRIORITY) -> cache_pb2.CacheObject:
    """A copy of the runtime ``obj`` with every entry's priority set to ``priority``."""
    out = cache_pb2.CacheObject()
    out.CopyFrom(obj)
    for entry in out.cluster_serving_runtime.spec.supported_model_formats:
        entry.priority = priority
    return out


def _moved(advance: outcomes.Advance) -> int:
    """Changes of ``advance`` whose runtime differs before and after."""
    return sum(
        1 for c in advance.changes if (c.before.runtime if c.before else None) != (c.after.runtime if c.after else None)
    )


def measure_in_process(store: CacheStore, selections: outcomes.Selections, write: Write) -> outcomes.Advance:
    """``selections.advance`` to the snapshot ``write`` would make (nothing applied), timed."""
    old = store.snapshot
    upserts = {object_key(o): o for o in write.upserts}
    deletes = [(ENUM_TO_KIND[k.kind], k.namespace, k.name) for k in write.deletes]
    new = old.with_changes("bench-watch-preview", upserts, deletes, synced=True, generation=old.generation + 1)
    start = time.perf_counter()
    advance = selections.advance(old, new)
    write.advance_s.append(time.perf_counter() - start)
    write.moved, write.reevaluated, write.evaluations = _moved(advance), advance.reevaluated, advance.evaluations
    return advance


@dataclass
class Writes:
    """The writes the benchmark makes (``choose_writes``): ``moving`` moves about ``--moves``
    InferenceServices and ``restore`` moves them back; ``widest`` (and ``widest_restore``) is the
    write tried that re-evaluates the most; ``idle``: one ClusterServingRuntime update per
    repetition, each with new priorities, that can move none; ``created``: a ServingRuntime created
    in a namespace without InferenceServices (``deleted`` removes it again)."""

    moving: Write
    restore: Write
    widest: Write
    widest_restore: Write
    idle: list[Write]
    created: Write
    deleted: Write
    tried: int


def choose_writes(store: CacheStore, selections: outcomes.Selections, settings: Settings) -> Writes:
    """The writes (see ``Writes``). Tried: for each (format, architecture, quantization) key a
    cached InferenceService's model has, up to 8 ClusterServingRuntimes with an entry of that
    key, each with every entry at priority 100 (``bumped``), in process; ``moving`` is the one whose
    moved count is nearest ``settings.moves``."""
    snapshot = store.snapshot
    rnd = random.Random(settings.seed)
    by_key: dict[object, list[str]] = {}
    for rt in snapshot.cluster_serving_runtimes.values():
        for index_key in rt.own.index_keys:
            if index_key[0] == "format":
                by_key.setdefault(index_key[1], []).append(rt.name)
    served = {key[2] for key in selections.index if key[0] == "format" and key[1] is None}
    objects = {
        key[2]: obj
        for key in snapshot.objects
        if key[0] == "ClusterServingRuntime" and (obj := snapshot.stored_object(key)) is not None
    }
    trials: list[tuple[str, Write]] = []
    for format_key in sorted(served, key=repr):
        names = sorted(set(by_key.get(format_key, ())))
        for name in rnd.sample(names, min(8, len(names))):
            trial = Write(
                f"ClusterServingRuntime {name}: every entry's priority → {BUMPED_PRIORITY}", [bumped(objects[name])]
            )
            measure_in_process(store, selections, trial)
            if trial.moved:
                trials.append((name, trial))
    if not trials:
        raise SystemExit("bench_watch: no runtime write moves any InferenceService")
    name, moving = min(trials, key=lambda t: (abs(t[1].moved - settings.moves), t[0]))
    wide_name, widest = max(trials, key=lambda t: (t[1].reevaluated, t[1].moved, t[0]))
    unserved = sorted(
        n
        for n, rt in snapshot.cluster_serving_runtimes.items()
        if all(k[1] not in served for k in rt.own.index_keys if k[0] == "format")
    )
    if not unserved:
        raise SystemExit("bench_watch: every runtime serves a cached InferenceService's model")
    idle_name = rnd.choice(unserved)
    idle = [
        Write(
            f"ClusterServingRuntime {idle_name} (serves no cached InferenceService's model): new priorities",
            [bench.revised_runtime(objects[idle_name], revision, rnd)],
        )
        for revision in range(1, settings.repeat + 1)
    ]
    runtime = cache_pb2.CacheObject()
    runtime.serving_runtime.metadata.name = "bench-empty-runtime"
    runtime.serving_runtime.metadata.namespace = EMPTY_NAMESPACE
    runtime.serving_runtime.spec.CopyFrom(objects[name].cluster_serving_runtime.spec)
    key = cache_pb2.ObjectKey(
        kind=cache_pb2.OBJECT_KIND_SERVING_RUNTIME, namespace=EMPTY_NAMESPACE, name="bench-empty-runtime"
    )
    return Writes(
        moving=moving,
        restore=Write(f"ClusterServingRuntime {name}: restored", [objects[name]]),
        widest=widest,
        widest_restore=Write(f"ClusterServingRuntime {wide_name}: restored", [objects[wide_name]]),
        idle=idle,
        created=Write(
            f"ServingRuntime {EMPTY_NAMESPACE}/bench-empty-runtime created (no InferenceService in {EMPTY_NAMESPACE})",
            [runtime],
        ),
        deleted=Write(f"ServingRuntime {EMPTY_NAMESPACE}/bench-empty-runtime deleted", deletes=[key]),
        tried=len(trials),
    )


# --- the server ----------------------------------------------------------------------------------


class EventLog(threading.Thread):
    """A WatchSelections stream of every namespace, each event kept with its arrival time
    (``time.perf_counter``); ``wait_for_write(version)`` blocks until the write's ``WriteStats``."""

    def __init__(self, server: bench.Server) -> None:
        super().__init__(daemon=True, name="bench-watch-events")
        self._channel = server.channel()
        self._call = bench.Server.stubs(self._channel).selection.WatchSelections(
            selector_pb2.WatchSelectionsRequest(), timeout=3600
        )
        self.events: list[tuple[float, selector_pb2.WatchSelectionsResponse]] = []
        self._cond = threading.Condition()
        self.failure: BaseException | None = None

    def run(self) -> None:
        """Read the stream until it ends or is cancelled."""
        try:
            for event in self._call:
                now = time.perf_counter()
                with self._cond:
                    self.events.append((now, event))
                    self._cond.notify_all()
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.CANCELLED:  # type: ignore[attr-defined]
                self.failure = exc
        finally:
            with self._cond:
                self._cond.notify_all()

    def _wait(self, found: object) -> None:
        deadline = time.monotonic() + EVENT_TIMEOUT_S
        with self._cond:
            while not found():  # type: ignore[operator]
                if self.failure is not None:
                    raise RuntimeError(f"the watch failed: {self.failure!r}")
                if time.monotonic() > deadline or not self.is_alive():
                    raise RuntimeError("the watch ended or timed out before the event came")
                self._cond.wait(1.0)

    def wait_for_initial_state(self) -> None:
        """Until ``initial_events_end``."""
        self._wait(lambda: any(e.HasField("initial_events_end") for _, e in self.events))

    def wait_for_write(self, version: str) -> tuple[list[float], float, selector_pb2.WriteStats]:
        """(arrival times of the write's change events, arrival of its WriteStats, the stats)."""

        def stats() -> list[tuple[float, selector_pb2.WatchSelectionsResponse]]:
            return [(t, e) for t, e in self.events if e.HasField("write") and e.write.cache_version == version]

        self._wait(lambda: bool(stats()))
        if any(e.HasField("resync") for _, e in self.events):
            raise RuntimeError("the watcher fell behind (resync): the figures would not be a write's events")
        changes = [t for t, e in self.events if e.HasField("change") and e.change.cache_version == version]
        when, event = stats()[0]
        return changes, when, event.write

    def close(self) -> None:
        """Cancel the stream and close the channel."""
        self._call.cancel()
        self.join(timeout=30)
        self._channel.close()


@dataclass
class Timing:
    """One write over gRPC: seconds to the UpsertObjects answer, to the last change event and to
    the WriteStats event; the change events; the stats."""

    rpc_s: float
    last_change_s: float | None
    stats_s: float
    changes: int
    stats: selector_pb2.WriteStats


class Writer:
    """Cache writes to the server, each timed against the event log."""

    def __init__(self, server: bench.Server, log: EventLog) -> None:
        self._channel = server.channel()
        self._cache = bench.Server.stubs(self._channel).cache
        self._log = log
        self._count = 0

    def make(self, write: Write) -> Timing:
        """Send ``write`` (UpsertObjects, or DeleteObjects when it has no upserts) and wait for its
        events."""
        self._count += 1
        version = f"bench-watch-{self._count}"
        start = time.perf_counter()
        if write.upserts:
            request = cache_pb2.UpsertObjectsRequest(version=version, objects=write.upserts)
            self._cache.UpsertObjects(request, timeout=bench.RPC_TIMEOUT_S)
        else:
            delete = cache_pb2.DeleteObjectsRequest(version=version, keys=write.deletes)
            self._cache.DeleteObjects(delete, timeout=bench.RPC_TIMEOUT_S)
        rpc_s = time.perf_counter() - start
        changes, stats_at, stats = self._log.wait_for_write(version)
        return Timing(rpc_s, max(changes) - start if changes else None, stats_at - start, len(changes), stats)

    def close(self) -> None:
        """Close the channel."""
        self._channel.close()


def settled_rss(server: bench.Server) -> float:
    """The server's VmRSS in MB after a 1 s settle."""
    time.sleep(bench.SETTLE_S)
    return server.status_mb()


@contextmanager
def event_log(server: bench.Server) -> Iterator[EventLog]:
    """A started EventLog past its initial state, closed on leaving."""
    log = EventLog(server)
    log.start()
    try:
        log.wait_for_initial_state()
        yield log
    finally:
        log.close()


# --- report --------------------------------------------------------------------------------------


def _ms(values: Sequence[float]) -> list[float]:
    return [v * 1e3 for v in values]


def latency_figures(
    report: SizeReport, sec: Section, key: str, name: str, values: Sequence[float], target: Target | None = None
) -> None:
    """p50 (with ``target``, when given) and max of ``values`` (seconds), in ms."""
    fig = report.add(sec, f"{key}_p50", f"{name}, p50", statistics.median(_ms(values)), "ms")
    fig.target = target  # this benchmark's own targets, not bench.TARGETS
    report.add(sec, f"{key}_max", f"{name}, max of {len(values)}", max(_ms(values)), "ms")


def moving_section(report: SizeReport, title: str, key: str, write: Write, runs: list[Timing], isvcs: int) -> Section:
    """The figures of a write that moves InferenceServices (made, then restored, each time)."""
    sec = report.section(title)
    latency_figures(
        report,
        sec,
        f"{key}_last_change",
        "UpsertObjects → last change event",
        [t.last_change_s or 0.0 for t in runs],
        Target(f"≤ {LAST_EVENT_TARGET_MS:g} ms", LAST_EVENT_TARGET_MS) if key == "move" else None,
    )
    latency_figures(report, sec, f"{key}_stats", "UpsertObjects → WriteStats event", [t.stats_s for t in runs])
    latency_figures(report, sec, f"{key}_rpc", "UpsertObjects answered", [t.rpc_s for t in runs])
    report.add(sec, f"{key}_events", "change events per write, most", max(t.changes for t in runs), "calls")
    report.add(
        sec,
        f"{key}_reevaluated",
        "InferenceServices re-evaluated (WriteStats), most",
        max(t.stats.reevaluated for t in runs),
        "calls",
    )
    report.add(sec, f"{key}_ome", "  OME: every InferenceService tried again", isvcs, "calls")
    report.add(sec, f"{key}_evaluations", "  distinct evaluations (in process)", write.evaluations, "calls")
    latency_figures(report, sec, f"{key}_advance", "in process: Selections.advance", write.advance_s)
    sec.notes.append(f"{write.label}, then restored: {len(runs)} writes in all, each moving them")
    return sec


def run(settings: Settings) -> SizeReport:
    """Every figure (see the module docstring)."""
    catalog = bench.load_catalog(settings.shared)
    bench.progress(f"drawing {settings.inference_services:,} InferenceServices with a runtime")
    cluster = build_cluster(catalog, settings)
    counts = bench.count_kinds(cluster.base)
    isvcs = len(cluster.inference_services)
    report = SizeReport(
        f"{counts.get('cluster_serving_runtime', 0):,} runtimes, {isvcs:,} InferenceServices",
        "watch",
        counts.get("cluster_serving_runtime", 0),
    )
    report.header.append(
        "objects: "
        + ", ".join(f"{n:,} {k}" for k, n in sorted(counts.items()))
        + f"; {isvcs:,} InferenceServices with a runtime, of {cluster.drawn:,} drawn "
        f"as the real traffic (random model, class or none, {bench.NAMESPACES} namespaces)"
    )

    bench.progress("in process: Selections.build, and the writes to make")
    store = CacheStore()
    store.apply_snapshot("bench-watch", [*cluster.base, *isvc_objects(cluster.inference_services)])
    start = time.perf_counter()
    selections = outcomes.Selections.build(store.snapshot)
    build_s = time.perf_counter() - start
    gc.collect()
    tracemalloc.start()  # a second build, for its memory alone (tracemalloc slows it down)
    measured = outcomes.Selections.build(store.snapshot)
    outcome_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del measured
    build_evaluations = outcomes.Evaluations(store.snapshot)
    for isvc in store.snapshot.inference_services.values():
        build_evaluations.tracked(isvc)
    writes = choose_writes(store, selections, settings)
    for write in (writes.moving, writes.widest):
        for _ in range(settings.repeat - 1):  # choose_writes measured each once
            measure_in_process(store, selections, write)
    for write in (*writes.idle, writes.created):
        measure_in_process(store, selections, write)

    with bench.running_server(bench.default_rss_guard_mb()) as server:
        bench.progress(f"server {server.address}: ApplySnapshot, then the InferenceServices")
        apply_s, apply_bytes = bench.apply_snapshot(server, cluster.base)
        rss_before = settled_rss(server)
        with event_log(server) as log:
            writer = Writer(server, log)
            try:
                load = [
                    writer.make(Write("load", isvc_objects(cluster.inference_services[i : i + BATCH])))
                    for i in range(0, isvcs, BATCH)
                ]
                rss_after = settled_rss(server)
                bench.progress(f"the writes, {settings.repeat} times each")
                moving: list[Timing] = []
                widest: list[Timing] = []
                idle: list[Timing] = []
                created: list[Timing] = []
                for i in range(settings.repeat):
                    moving += [writer.make(writes.moving), writer.make(writes.restore)]
                    widest += [writer.make(writes.widest), writer.make(writes.widest_restore)]
                    idle.append(writer.make(writes.idle[i]))
                    created.append(writer.make(writes.created))
                    writer.make(writes.deleted)
            finally:
                writer.close()

    sec = report.section("[1] load")
    report.add(sec, "apply_grpc", f"ApplySnapshot of the runtimes ({apply_bytes / 2**20:.1f} MB)", apply_s, "s")
    latency_figures(
        report,
        sec,
        "load_batch",
        f"UpsertObjects of ≤ {BATCH:,} InferenceServices → WriteStats event",
        [t.stats_s for t in load],
    )
    report.add(sec, "build_inproc", f"in process: Selections.build of {isvcs:,}", build_s, "s")
    report.add(sec, "build_evaluations", "  distinct evaluations", build_evaluations.count, "calls")
    sec.notes.append(
        f"{len(load)} loading writes, {sum(t.changes for t in load):,} change events; InferenceServices share an "
        "evaluation when their inputs match and their namespaces hold no ServingRuntime or BaseModel of their model"
    )

    sec = report.section("[2] memory for the cached outcomes")
    report.add(sec, "rss_before", "server RSS before the InferenceServices", rss_before, "MB")
    report.add(sec, "rss_after", "server RSS after them (objects, outcomes, index)", rss_after, "MB")
    report.add(sec, "rss_growth", "  growth", rss_after - rss_before, "MB")
    report.add(sec, "rss_per_isvc", "  per InferenceService", (rss_after - rss_before) * 2**20 / isvcs, "B")
    report.add(
        sec, "outcome_bytes", "in process: Selections (outcomes and index, tracemalloc)", outcome_bytes / 2**20, "MB"
    )
    report.add(sec, "outcome_per_isvc", "  per InferenceService", outcome_bytes / isvcs, "B")

    moving_section(
        report,
        f"[3] a write that moves {writes.moving.moved} InferenceServices (asked: about {settings.moves})",
        "move",
        writes.moving,
        moving,
        isvcs,
    )
    sec = moving_section(
        report,
        f"[3b] the widest write tried: re-evaluates {writes.widest.reevaluated:,}, moves {writes.widest.moved}",
        "widest",
        writes.widest,
        widest,
        isvcs,
    )
    sec.notes.append(
        f"of {writes.tried} ClusterServingRuntimes tried (up to 8 per format key of a cached InferenceService's "
        "model), the one whose write re-evaluates the most"
    )

    sec = report.section("[4] writes that can move none")
    for key, write, runs in (("idle_csr", writes.idle[0], idle), ("idle_sr", writes.created, created)):
        latency_figures(
            report, sec, f"{key}_stats", f"{key}: UpsertObjects → WriteStats event", [t.stats_s for t in runs]
        )
        fig = report.add(
            sec,
            f"{key}_reevaluated",
            f"{key}: InferenceServices re-evaluated (WriteStats), most of {len(runs)}",
            max(t.stats.reevaluated for t in runs),
            "calls",
        )
        fig.target = Target("0", 0.0)
        report.add(sec, f"{key}_events", f"{key}: change events, most", max(t.changes for t in runs), "calls")
        sec.notes.append(f"{key}: {write.label}")
    sec.notes.append(
        f"OME tries every InferenceService of the namespace again on any runtime change: {isvcs:,} for the "
        f"ClusterServingRuntime, 0 for the ServingRuntime of {EMPTY_NAMESPACE}"
    )
    return report


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the report."""
    settings = parse_args(list(sys.argv[1:] if argv is None else argv))
    started = time.monotonic()
    try:  # the server is stopped on leaving bench.running_server, whatever happens
        print(
            f"ome-selector watch benchmark\ncommand: python -m tools.bench_watch {' '.join(settings.argv)}".rstrip()
            + f"\nshared: {settings.shared}; repeat {settings.repeat}; seed {settings.seed}",
            flush=True,
        )
        if settings.rates or settings.watchers:
            from tools import bench_watch_load

            catalog = bench.load_catalog(settings.shared)
            status = 0
            if settings.rates:
                status |= bench_watch_load.run_rates(
                    catalog, settings.rates, settings.rate_isvcs, settings.seconds, settings.seed
                )
            if settings.watchers:
                status |= bench_watch_load.run_watchers(
                    catalog,
                    settings.watchers,
                    settings.slow,
                    settings.rate,
                    settings.seconds,
                    settings.rate_isvcs[0],
                    settings.seed,
                    settings.watchers_nice,
                )
            print(f"\nwall time {time.monotonic() - started:.0f} s")
            return status
        report = run(settings)
    except KeyboardInterrupt:
        print("\nbench_watch: interrupted; the server was stopped", file=sys.stderr)
        return 130
    print("\n" + bench.render_size(report, 1), flush=True)
    print(f"\nwall time {time.monotonic() - started:.0f} s")
    if settings.emit_json:
        for sec, fig in report.figures():
            print(bench.figure_json(report, sec, fig))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
