"""Benchmark of ome-selector on real traffic: ``python -m tools.bench``.

Not a test: a command that prints figures, ratios and the targets of docs/architecture.md beside them, as a
plain-text report to paste in a closing note (progress goes to stderr, the report to stdout).

Usage::

    python -m tools.bench [--shared PATH] [--sizes catalog,10000,50000] [--calls N]
                                 [--repeat K] [--soak-seconds S] [--max-run-seconds S]
                                 [--rss-guard-mb MB] [--quick] [--only explain] [--json]

Options:

``--shared PATH``       the shared folder holding ``ome-catalog/runtimes`` and ``ome-cluster``
                        (default: ``$OME_SHARED``, else ``../shared`` next to the repository root,
                        found from this module's location, else from the current directory).
``--sizes LIST``        comma-separated sizes: ``catalog`` (the OME catalog as loaded) and/or a
                        number N of ClusterServingRuntimes (default ``catalog,10000,50000``;
                        ``catalog,10000`` with ``--quick``).
``--calls N``           SelectRuntime calls of the headline with 1 client (default 1000, quick
                        100); with 8 clients each client makes N/4 calls (at least 10); the memo
                        run makes N calls per client count, ExplainRuntimes and the FULL view N/5
                        (at least 20).
``--repeat K``          run the headline (idle floor + real traffic, 1 and 8 clients) K times on
                        the same server and print the median with the min–max range (default 1).
``--soak-seconds S``    time-based headline: the 1-client and the 8-client real-traffic runs last
                        S/2 seconds each instead of a call count, so the server's RSS is sampled
                        over S seconds of real traffic (the issue asks for a flat RSS over 300).
``--max-run-seconds S`` cap on any one measured run (default 60, quick 3): a run that reaches it
                        stops after its current call and the report says "capped" with the count.
``--rss-guard-mb MB``   memory guard: once the server's VmRSS passes MB (default 60 % of the
                        machine's memory) every measured run stops and the report says so.
``--quick``             small numbers for a smoke run (about a minute on 2 cores).
``--only explain``      per size, only the cache load, the idle floor and section 5
                        (ExplainRuntimes and the FULL view), ``--repeat`` times; no headline, no
                        in-process or growth sections.
``--json``              also print one JSON object per figure (after the text report).

For each size the benchmark builds the objects the way ``shared/tools/real_traffic.py`` does:
``catalog`` is ``load_manifests([ome-catalog/runtimes, ome-cluster])``; N replaces the catalog's
ClusterServingRuntimes by whole rounds of clones named ``<name>-v<round>`` whose
``supportedModelFormats`` entries get a random priority 1–9, until there are at least N (so 10000
gives 10,094); every other object (ServingRuntimes, ClusterBaseModels, AcceleratorClasses) stays.

Figures (one section per size; ms = milliseconds, wall time seen by the client; KB/MB = 1024-based;
every ratio is against the idle floor measured in the same run, on the same server):

1. Cache load. ``ApplySnapshot`` over gRPC to a fresh server (``<venv>/bin/ome-selector serve
   --listen 127.0.0.1:0 --wait-for-sync``, or ``<python> -m ome_selector.cli serve …`` when the
   script is absent; a subprocess, the port the OS chose is read from its log), in seconds, with
   the request's size; the same in process (``CacheStore.apply_snapshot``), and the server's RSS.
2. Idle floor. p50/p99 of health ``Check`` (service "") on the idle server, 1 client (as many
   calls as --calls, at least 200, after 20 warm-up), and its calls/s with 1 and 8 clients (a
   quarter of that per client; threads, each with its own channel and connection).
3. (a) Real traffic, the headline: as real_traffic.py, every SelectRuntime (view BASIC, the
   default) carries a new InferenceService (unique name, one of 20 namespaces ``ns-0``…``ns-19``, a
   random ClusterBaseModel of ome-cluster with a modelFormat, a random AcceleratorClass or none,
   ``engine.minReplicas: 1``) while a writer thread upserts one catalog runtime every 100 ms with a
   new ``bench/rev`` label and new priorities (at N sizes these are the catalog's own names, so
   they add up to 206 runtimes to the clones, as in real_traffic.py). With 1 and with 8 clients:
   p50, p99, calls/s, p50/floor-p50, calls/s against the floor's calls/s with as many clients,
   the answers split into selected / no runtime found (count and p50 each), the largest answer in
   bytes, and health ``Check`` p50/p99 from a separate thread (one call every 10 ms) while the
   selections run, with its p99 against the idle p99. The writer's UpsertObjects latency is noted.
4. (b) Repeated requests: the 7 InferenceServices of ome-cluster without ``spec.runtime.name``,
   round-robin, no writer, 1 and 8 clients: every call after the first seven hits whatever the
   server memoises — printed for comparison, labelled "memo hits", never the headline.
   Sections 4 and 5 use an idle floor measured again just before them (after a 1 s settle).
5. ExplainRuntimes (every row, no page size) and SelectRuntime with SELECT_RUNTIME_VIEW_FULL, each
   on new real-traffic InferenceServices with the writer running, 1 client: p50, p99, ratio,
   largest answer.
6. In-process cold answer: ``rpc_selection.select_runtime(store.snapshot, request)`` on a new
   ``CacheStore`` of the size, in a fresh Python process per size and view (BASIC, FULL; spawned,
   so no cache of the engine is warm from an earlier measurement), after one untimed warm-up call;
   each timed call is a new InferenceService whose model no earlier call of that process asked
   (distinct models, random class and namespace, fresh names): p50/p99 per call, p50 per 1,000
   runtimes, and the p50 of the same models asked again as new InferenceServices ("model seen
   before": the engine's content caches warm, still no repeated request). "memo-free": a repeated
   request is probed once; when it returns the very same object (an answer memo), each timed
   answer is checked by identity against the earlier ones (held up to 64 MB; the rest are
   "unchecked"). The growth section at the end adds 1,000, 2,000, 5,000 and 10,000 runtimes
   (10,000 with --quick only when selected) and fits log(p50) = a + k·log(N) by least squares over
   the sizes ≥ 1,000: k is the growth exponent (1 = linear).
7. Upsert cost: ``store.upsert`` of one existing runtime with new priorities in process (p50/p99
   over 50), and UpsertObjects of one runtime over gRPC on the idle server.
8. RSS over time: the server's VmRSS (``/proc/<pid>/status``) sampled every second from the first
   to the last real-traffic call of the headline runs: min, max, the means of the first and last
   thirds of the samples (flat = last third within 5 % or 5 MB of the first), and VmHWM (the peak,
   ApplySnapshot included).

Targets (docs/architecture.md, "Benchmark and performance") are printed beside the figures they apply to, as
PASS or MISS (ratios to the idle health Check of the same run), for catalog / 10000 / 50000:
SelectRuntime p50 with 1 client, all answers and selected / no runtime apart, ≤ 1.3× / 2× / 3×;
largest BASIC answer ≤ 16 KB; health Check p99 under load ≤ 2× / 2× / 3× idle p99; calls/s with 8
clients ≥ 0.8 / 0.6 / 0.5 of the floor's; server RSS ≤ 100 / 200 / 600 MB. Also: ExplainRuntimes
(every row) on the catalog ≤ 6×, a page of 100 rows at 10000 ≤ 3×; in-process cold BASIC at 10000,
selected ≤ 0.3 ms and no runtime ≤ 0.5 ms; ApplySnapshot over gRPC ≤ 0.5 s at 10000, ≤ 2.5 s at
50000; growth exponent ≤ 1.1. The growth section also fits the exponent with the matching runtimes
fixed (the catalog plus runtimes of formats no model has, 1,000 to 50,000): reported, no target.

Everything is bounded in count and time (and the server's memory, see --rss-guard-mb); the server
subprocess only listens on 127.0.0.1 and is stopped on exit, on exceptions, on Ctrl-C and on
SIGTERM. Figures vary between runs on a noisy 2-core machine (use --repeat for ranges); the clients
run in this process, so client-side Python time is part of every figure, the floor's included.
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import multiprocessing
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from types import FrameType
from typing import Generic, TypeAlias, TypeVar

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import selection as rpc_selection

NAMESPACES = 20
SELECTABLE_SHARE = 0.8  # real_traffic.py's default mix
EXPLAIN_PAGE = 100
WRITE_INTERVAL_S = 0.1
HEALTH_PROBE_INTERVAL_S = 0.01
RSS_INTERVAL_S = 1.0
RPC_TIMEOUT_S = 300.0
MIN_FLOOR_CALLS = 200
MIN_UPSERTS = 50
MIN_SAMPLES = 5
MIN_RSS_SAMPLES = 6
SETTLE_S = 1.0
MEMO_CHECK_BYTES = 64 << 20
GROWTH_SIZES = (1000, 2000, 5000, 10000)
QUICK_GROWTH_SIZES = (1000, 2000, 5000)
FIXED_SIZES = (1000, 2000, 5000, 10000, 20000, 50000)
GROWTH_LINEAR = 1.1
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", 256 << 20),
    ("grpc.max_send_message_length", 256 << 20),
    ("grpc.use_local_subchannel_pool", 1),  # each client its own connection
]
View: TypeAlias = selector_pb2.SelectRuntimeView.ValueType
BASIC: View = selector_pb2.SELECT_RUNTIME_VIEW_BASIC
FULL: View = selector_pb2.SELECT_RUNTIME_VIEW_FULL
SELECTED, NO_RUNTIME, OTHER, OK = "selected", "no runtime", "other", "ok"

Req = TypeVar("Req")
Resp = TypeVar("Resp")


# --- settings ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    """Counts and limits of one benchmark run (from the command line)."""

    shared: Path
    sizes: tuple[int, ...]  # 0 = the catalog as loaded
    calls: int  # headline SelectRuntime calls with 1 client
    calls8: int  # per client with 8 clients
    side_calls: int  # ExplainRuntimes, FULL view
    floor_calls: int
    cold_calls: int  # in-process, per view and size
    upserts: int
    max_run_s: float
    soak_s: float
    repeat: int
    growth_sizes: tuple[int, ...]
    fixed_sizes: tuple[int, ...]  # growth with the matching runtimes fixed (filler runtimes added)
    emit_json: bool
    rss_guard_mb: float
    argv: tuple[str, ...]
    only: str = ""  # "explain": section 5 alone (with the cache load and its floor)


def _repo_root() -> Path:
    """The repository root: tools/bench.py is one level below it."""
    return Path(__file__).resolve().parents[1]


def default_shared() -> Path:
    """``$OME_SHARED``, else the first ``../shared`` with an ``ome-catalog`` folder next to the
    repository root or the current directory."""
    env = os.environ.get("OME_SHARED")
    if env:
        return Path(env)
    candidates = [_repo_root().parent / "shared", Path.cwd().parent / "shared", Path.cwd() / "shared"]
    for candidate in candidates:
        if (candidate / "ome-catalog").is_dir():
            return candidate
    return candidates[0]


def parse_sizes(text: str) -> tuple[int, ...]:
    """``catalog,10000,50000`` -> (0, 10000, 50000); ``catalog`` is 0."""
    sizes: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part == "catalog":
            sizes.append(0)
            continue
        try:
            value = int(part)
        except ValueError:
            raise argparse.ArgumentTypeError(f"size {part!r} is neither 'catalog' nor a number") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"size {part!r} must be positive")
        sizes.append(value)
    if not sizes:
        raise argparse.ArgumentTypeError("no size given")
    return tuple(dict.fromkeys(sizes))


def parse_args(argv: Sequence[str]) -> Settings:
    """The command line as Settings (see the module docstring)."""
    parser = argparse.ArgumentParser(
        prog="python -m tools.bench",
        description="ome-selector benchmark on real traffic; see the module docstring for every figure.",
    )
    parser.add_argument(
        "--shared",
        type=Path,
        metavar="PATH",
        default=None,
        help="shared folder with ome-catalog and ome-cluster (default ../shared)",
    )
    parser.add_argument(
        "--sizes",
        type=parse_sizes,
        metavar="LIST",
        default=None,
        help="comma-separated: catalog and/or N runtimes (default catalog,10000,50000; quick catalog,10000)",
    )
    parser.add_argument(
        "--calls",
        type=int,
        metavar="N",
        default=None,
        help="headline SelectRuntime calls with 1 client (default 1000, quick 100)",
    )
    parser.add_argument(
        "--repeat", type=int, metavar="K", default=1, help="run the headline K times and print ranges (default 1)"
    )
    parser.add_argument(
        "--soak-seconds",
        type=float,
        metavar="S",
        default=0.0,
        help="time-based headline: S/2 seconds per client count, RSS sampled throughout",
    )
    parser.add_argument(
        "--max-run-seconds",
        type=float,
        metavar="S",
        default=None,
        help="cap on any one measured run (default 60, quick 3)",
    )
    parser.add_argument(
        "--rss-guard-mb",
        type=float,
        metavar="MB",
        default=None,
        help="stop measuring when the server's RSS passes this (default 60%% of memory)",
    )
    parser.add_argument("--quick", action="store_true", help="small numbers for a smoke run")
    parser.add_argument(
        "--only",
        choices=("explain",),
        default="",
        help="explain: only the cache load, the floor and section 5 (ExplainRuntimes, FULL view)",
    )
    parser.add_argument("--json", action="store_true", help="also print one JSON object per figure")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if args.soak_seconds < 0:
        parser.error("--soak-seconds must not be negative")
    calls = args.calls if args.calls is not None else (100 if args.quick else 1000)
    if calls < 1:
        parser.error("--calls must be at least 1")
    max_run = args.max_run_seconds if args.max_run_seconds is not None else (3.0 if args.quick else 60.0)
    if max_run <= 0:
        parser.error("--max-run-seconds must be positive")
    sizes = args.sizes if args.sizes is not None else ((0, 10000) if args.quick else (0, 10000, 50000))
    return Settings(
        shared=args.shared if args.shared is not None else default_shared(),
        sizes=sizes,
        calls=calls,
        calls8=max(10, calls // 4),
        side_calls=max(20, calls // 5),
        floor_calls=max(MIN_FLOOR_CALLS, calls),  # a short floor is at the mercy of one noisy moment
        cold_calls=10 if args.quick else 100,
        upserts=MIN_UPSERTS,
        max_run_s=max_run,
        soak_s=args.soak_seconds,
        repeat=args.repeat,
        growth_sizes=QUICK_GROWTH_SIZES if args.quick else GROWTH_SIZES,
        fixed_sizes=QUICK_GROWTH_SIZES if args.quick else FIXED_SIZES,
        emit_json=args.json,
        rss_guard_mb=args.rss_guard_mb if args.rss_guard_mb is not None else default_rss_guard_mb(),
        argv=tuple(argv),
        only=args.only,
    )


def progress(text: str) -> None:
    """One progress line on stderr (the report itself goes to stdout)."""
    print(f"[bench {time.strftime('%H:%M:%S')}] {text}", file=sys.stderr, flush=True)


# --- data --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Catalog:
    """The OME data: objects as loaded, and what the traffic draws from."""

    objects: tuple[cache_pb2.CacheObject, ...]
    runtimes: tuple[cache_pb2.CacheObject, ...]  # the catalog's ClusterServingRuntimes
    models: tuple[str, ...]  # ClusterBaseModels with a modelFormat name
    classes: tuple[str | None, ...]  # None (no class asked) and every AcceleratorClass
    repeated: tuple[types_pb2.InferenceService, ...]  # ome-cluster's, without spec.runtime.name
    selectable: tuple[tuple[str, str | None], ...] = ()  # (model, class) pairs some runtime serves


def load_catalog(shared: Path) -> Catalog:
    """``load_manifests`` of ``ome-catalog/runtimes`` and ``ome-cluster``; exits on load errors."""
    paths = [shared / "ome-catalog" / "runtimes", shared / "ome-cluster"]
    missing = [str(p) for p in paths if not p.is_dir()]
    if missing:
        raise SystemExit(f"bench: not found: {', '.join(missing)} (give --shared PATH)")
    loaded = load_manifests([str(p) for p in paths])
    if not any(
        o.WhichOneof("object") == "cluster_base_model" and o.cluster_base_model.spec.model_format.name
        for o in loaded.objects
    ):
        raise SystemExit("bench: ome-cluster has no ClusterBaseModel with a modelFormat to draw the traffic from")
    if loaded.errors:
        raise SystemExit("bench: cannot load the OME data:\n  " + "\n  ".join(loaded.errors))
    objects = tuple(loaded.objects)
    kind = [o.WhichOneof("object") for o in objects]
    models = tuple(
        o.cluster_base_model.metadata.name
        for o, k in zip(objects, kind)
        if k == "cluster_base_model" and o.cluster_base_model.spec.model_format.name
    )
    classes: tuple[str | None, ...] = (
        None,
        *(o.accelerator_class.metadata.name for o, k in zip(objects, kind) if k == "accelerator_class"),
    )
    return Catalog(
        objects=objects,
        runtimes=tuple(o for o, k in zip(objects, kind) if k == "cluster_serving_runtime"),
        models=models,
        classes=classes,
        repeated=tuple(i for i in loaded.inference_services if not i.spec.runtime.name),
        selectable=selectable_pairs(objects, models, classes),
    )


def selectable_pairs(
    objects: Sequence[cache_pb2.CacheObject], models: Sequence[str], classes: Sequence[str | None]
) -> tuple[tuple[str, str | None], ...]:
    """The (model, class) pairs some catalog runtime serves, as real_traffic.py finds them (asked
    once, in process, before anything is timed). Clones keep their source's formats, so the pairs
    are the same at every size."""
    store = CacheStore()
    store.apply_snapshot("pairs", objects)
    return tuple(
        (m, c)
        for m in models
        for c in classes
        if rpc_selection.select_runtime(
            store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=make_isvc("probe", "ns-0", m, c))
        ).HasField("selection")
    )


def sized_objects(catalog: Catalog, size: int, seed: int = 7, filler: bool = False) -> list[cache_pb2.CacheObject]:
    """The snapshot of one size: the catalog as is for 0; otherwise every other object plus whole
    rounds of catalog-runtime clones (``<name>-v<round>``, priorities 1–9) until ``size``. With
    ``filler`` the catalog's runtimes stay and the clones' entries name a format no model has
    (``filler-<round>``): the runtimes that can match stay the catalog's whatever the size."""
    if size == 0:
        return list(catalog.objects)
    rnd = random.Random(seed)
    out = [o for o in catalog.objects if filler or o.WhichOneof("object") != "cluster_serving_runtime"]
    clones = len(catalog.runtimes) if filler else 0
    round_ = 0
    while clones < size:
        for src in catalog.runtimes:
            clone = cache_pb2.CacheObject()
            clone.CopyFrom(src)
            runtime = clone.cluster_serving_runtime
            runtime.metadata.name = f"{runtime.metadata.name}-v{round_}"
            for entry in runtime.spec.supported_model_formats:
                entry.priority = rnd.randint(1, 9)
                if filler:
                    entry.model_format.name = f"filler-{round_}"
            out.append(clone)
            clones += 1
        round_ += 1
    return out


def runtimes_in_scope(objects: Sequence[cache_pb2.CacheObject]) -> int:
    """Runtimes a traffic request can see: every ClusterServingRuntime plus the ServingRuntimes of
    the traffic's namespaces (``ns-0`` … ``ns-19``)."""
    namespaces = {f"ns-{i}" for i in range(NAMESPACES)}
    return sum(
        1
        for o in objects
        if o.WhichOneof("object") == "cluster_serving_runtime"
        or (o.WhichOneof("object") == "serving_runtime" and o.serving_runtime.metadata.namespace in namespaces)
    )


def count_kinds(objects: Sequence[cache_pb2.CacheObject]) -> dict[str, int]:
    """Objects per CacheObject oneof field name."""
    counts: dict[str, int] = {}
    for obj in objects:
        which = obj.WhichOneof("object") or "?"
        counts[which] = counts.get(which, 0) + 1
    return counts


def revised_runtime(src: cache_pb2.CacheObject, revision: int, rnd: random.Random) -> cache_pb2.CacheObject:
    """A copy of ``src`` with label ``bench/rev`` = revision and new priorities (scores move)."""
    obj = cache_pb2.CacheObject()
    obj.CopyFrom(src)
    runtime = obj.cluster_serving_runtime if obj.HasField("cluster_serving_runtime") else obj.serving_runtime
    runtime.metadata.labels["bench/rev"] = str(revision)
    for entry in runtime.spec.supported_model_formats:
        entry.priority = rnd.randint(1, 9)
    return obj


def make_isvc(name: str, namespace: str, model: str, accelerator_class: str | None) -> types_pb2.InferenceService:
    """An InferenceService as real_traffic.py sends it (``engine.minReplicas: 1``)."""
    isvc = types_pb2.InferenceService()
    isvc.metadata.name = name
    isvc.metadata.namespace = namespace
    isvc.spec.model.name = model
    isvc.spec.engine.min_replicas = 1
    if accelerator_class:
        isvc.spec.accelerator_selector.accelerator_class = accelerator_class
    return isvc


class TrafficSource:
    """New InferenceServices, drawn as real_traffic.py draws them: ``SELECTABLE_SHARE`` (80 %) of the
    calls a (model, class) pair some runtime serves, the rest any model and class; thread-safe,
    names never repeat."""

    def __init__(self, catalog: Catalog, prefix: str, seed: int) -> None:
        self._catalog = catalog
        self._prefix = prefix
        self._rnd = random.Random(seed)
        self._lock = threading.Lock()
        self._count = 0

    def next(self) -> types_pb2.InferenceService:
        """The next new InferenceService."""
        with self._lock:
            i = self._count
            self._count += 1
            if self._catalog.selectable and self._rnd.random() < SELECTABLE_SHARE:
                model, accelerator_class = self._rnd.choice(self._catalog.selectable)
            else:
                model = self._rnd.choice(self._catalog.models)
                accelerator_class = self._rnd.choice(self._catalog.classes)
        return make_isvc(f"{self._prefix}-{i}", f"ns-{i % NAMESPACES}", model, accelerator_class)


def distinct_requests(catalog: Catalog, count: int, view: View, seed: int) -> list[selector_pb2.SelectRuntimeRequest]:
    """``count`` SelectRuntime requests whose models do not repeat (until every model was used once)
    and whose (model, class, namespace) never repeat; fresh names."""
    rnd = random.Random(seed)
    seen: set[tuple[str, str | None, int]] = set()
    out: list[selector_pb2.SelectRuntimeRequest] = []
    limit = len(catalog.models) * len(catalog.classes) * NAMESPACES
    order: list[str] = []
    while len(out) < min(count, limit):
        if not order:
            order = list(catalog.models)
            rnd.shuffle(order)
        model = order.pop()
        accelerator_class = rnd.choice(catalog.classes)
        namespace = rnd.randrange(NAMESPACES)
        if (model, accelerator_class, namespace) in seen:
            continue
        seen.add((model, accelerator_class, namespace))
        isvc = make_isvc(f"cold-{seed}-{len(out)}", f"ns-{namespace}", model, accelerator_class)
        out.append(selector_pb2.SelectRuntimeRequest(inference_service=isvc, view=view))
    return out


# --- statistics --------------------------------------------------------------------------------


def percentile(values: Sequence[float], q: float) -> float:
    """The q-quantile by rank ``int(q * (n - 1))`` of the sorted values, as real_traffic.py."""
    ordered = sorted(values)
    return ordered[int(q * (len(ordered) - 1))]


def median(values: Sequence[float]) -> float:
    """The median (NaN for no values)."""
    return statistics.median(values) if values else math.nan


def growth_exponent(points: Sequence[tuple[float, float]]) -> float:
    """Least-squares slope of log(time) on log(N) over (N, time) points; NaN with fewer than 2."""
    usable = [(math.log(n), math.log(t)) for n, t in points if n > 0 and t > 0]
    if len(usable) < 2:
        return math.nan
    mx = statistics.fmean(x for x, _ in usable)
    my = statistics.fmean(y for _, y in usable)
    sxx = sum((x - mx) ** 2 for x, _ in usable)
    if sxx == 0:
        return math.nan
    return sum((x - mx) * (y - my) for x, y in usable) / sxx


@dataclass
class Sample:
    """One timed call: latency in seconds, outcome, answer size in bytes."""

    seconds: float
    outcome: str
    size: int = 0


@dataclass
class Run:
    """The samples of one measured run and its wall time."""

    samples: list[Sample]
    elapsed: float
    planned: int
    capped: bool
    over_memory: bool = False

    def latencies(self, outcome: str | None = None) -> list[float]:
        """Latencies (s), all or of one outcome."""
        return [s.seconds for s in self.samples if outcome is None or s.outcome == outcome]

    def p50_ms(self, outcome: str | None = None) -> float:
        """Median latency in ms (NaN when none)."""
        values = self.latencies(outcome)
        return median(values) * 1e3 if values else math.nan

    def p99_ms(self) -> float:
        """99th percentile latency in ms."""
        values = self.latencies()
        return percentile(values, 0.99) * 1e3 if values else math.nan

    def rate(self) -> float:
        """Calls per second over the run's wall time."""
        return len(self.samples) / self.elapsed if self.samples and self.elapsed > 0 else math.nan

    def count(self, outcome: str) -> int:
        """Calls with this outcome."""
        return sum(1 for s in self.samples if s.outcome == outcome)

    def errors(self) -> int:
        """Calls that ended in an RPC error."""
        return sum(1 for s in self.samples if s.outcome.startswith("error"))

    def largest(self) -> int:
        """The largest answer in bytes."""
        return max((s.size for s in self.samples), default=0)

    def cap_note(self, what: str, max_run_s: float) -> str | None:
        """The "capped" note of a run that hit the time cap or the memory guard, else None."""
        if self.over_memory:
            return f"{what}: STOPPED after {len(self.samples)} of {self.planned} calls: the server's RSS passed the memory guard"
        if not self.capped:
            return None
        return (
            f"{what}: capped at {max_run_s:g} s (--max-run-seconds) after {len(self.samples)} of {self.planned} calls"
        )


# --- the server subprocess ---------------------------------------------------------------------

_LIVE: set[subprocess.Popen[bytes]] = set()


def _kill_live() -> None:
    """Stop every server subprocess still running (atexit)."""
    for proc in list(_LIVE):
        _stop_process(proc)


def _stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL after 10 s."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    _LIVE.discard(proc)


def _on_sigterm(signum: int, frame: FrameType | None) -> None:
    """SIGTERM/SIGHUP: leave through the ``finally`` blocks, which stop the server."""
    print(f"\nbench: stopped by signal {signum}; stopping the server", file=sys.stderr)
    raise SystemExit(128 + signum)


def server_command(listen: str) -> list[str]:
    """The command line that starts the server (the venv's ``ome-selector`` when next to python)."""
    exe = Path(sys.executable).with_name("ome-selector")
    head = [str(exe)] if exe.exists() else [sys.executable, "-m", "ome_selector.cli"]
    return [*head, "serve", "--listen", listen, "--wait-for-sync"]


@dataclass
class Stubs:
    """The stubs of one channel."""

    health: health_pb2_grpc.HealthStub
    selection: selector_pb2_grpc.SelectionServiceStub
    cache: cache_pb2_grpc.CacheServiceStub


class Server:
    """The real ome-selector server as a subprocess on 127.0.0.1 (port chosen by the OS)."""

    def __init__(self, log_dir: str, rss_limit_mb: float) -> None:
        self._log_path = Path(log_dir) / "server.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.address = ""
        self.rss_limit_mb = rss_limit_mb
        self.over_memory = threading.Event()  # set by the memory guard: measured runs stop
        self._guard: MemoryGuard | None = None

    def start(self, timeout: float = 60.0) -> None:
        """Start it and wait for its ``listening on 127.0.0.1:<port>`` log line."""
        with open(self._log_path, "wb") as log:
            self.proc = subprocess.Popen(
                server_command("127.0.0.1:0"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
            )
        _LIVE.add(self.proc)
        deadline = time.monotonic() + timeout
        pattern = re.compile(rb"listening on (127\.0\.0\.1:\d+)")
        while time.monotonic() < deadline:
            match = pattern.search(self._log_path.read_bytes())
            if match:
                self.address = match.group(1).decode()
                self._guard = MemoryGuard(self)
                self._guard.start()
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise SystemExit(f"bench: the server did not start; its log ends with:\n{self.log_tail()}")

    def log_tail(self, lines: int = 20) -> str:
        """The last lines of the server's log."""
        try:
            return "\n".join(self._log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        """Stop the memory guard and the subprocess (idempotent)."""
        if self._guard is not None:
            self._guard.stop()
            self._guard = None
        if self.proc is not None:
            _stop_process(self.proc)

    def channel(self) -> grpc.Channel:
        """A new channel (own connection) to the server."""
        return grpc.insecure_channel(self.address, options=CHANNEL_OPTIONS)

    @staticmethod
    def stubs(channel: grpc.Channel) -> Stubs:
        """Health, selection and cache stubs on ``channel``."""
        return Stubs(
            health_pb2_grpc.HealthStub(channel),
            selector_pb2_grpc.SelectionServiceStub(channel),
            cache_pb2_grpc.CacheServiceStub(channel),
        )

    def status_mb(self, field_name: str = "VmRSS") -> float:
        """A memory figure of the server's /proc status (VmRSS, VmHWM) in MB; NaN once gone."""
        assert self.proc is not None
        try:
            text = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return math.nan
        match = re.search(rf"^{field_name}:\s+(\d+)\s+kB", text, re.M)
        return int(match.group(1)) / 1024 if match else math.nan


def default_rss_guard_mb() -> float:
    """60 % of the machine's memory (MemTotal), in MB."""
    try:
        match = re.search(r"^MemTotal:\s+(\d+)\s+kB", Path("/proc/meminfo").read_text(), re.M)
    except OSError:
        match = None
    return 0.6 * int(match.group(1)) / 1024 if match else 8192.0


@contextmanager
def running_server(rss_limit_mb: float) -> Iterator[Server]:
    """A started server, stopped (and its log removed) whatever happens."""
    with tempfile.TemporaryDirectory(prefix="ome-bench-") as log_dir:
        server = Server(log_dir, rss_limit_mb)
        try:
            server.start()
            yield server
        finally:
            server.stop()


# --- load generators ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Workload(Generic[Req, Resp]):
    """What a client call does: build request i (untimed), send it (timed), classify the answer
    into (outcome, bytes) (untimed)."""

    make: Callable[[int], Req]
    send: Callable[[Stubs, Req], Resp]
    classify: Callable[[Resp], tuple[str, int]]


def health_workload() -> Workload[health_pb2.HealthCheckRequest, health_pb2.HealthCheckResponse]:
    """Health ``Check`` of the overall service ("")."""
    request = health_pb2.HealthCheckRequest(service="")
    return Workload(lambda i: request, lambda s, r: s.health.Check(r, timeout=RPC_TIMEOUT_S), lambda resp: (OK, 0))


def classify_selection(response: selector_pb2.SelectRuntimeResponse) -> tuple[str, int]:
    """selected / no runtime / other (a model error, …), and the answer's size."""
    if response.HasField("selection"):
        outcome = SELECTED
    elif response.no_runtime_message:
        outcome = NO_RUNTIME
    else:
        outcome = OTHER
    return outcome, response.ByteSize()


def select_workload(
    make: Callable[[int], selector_pb2.SelectRuntimeRequest],
) -> Workload[selector_pb2.SelectRuntimeRequest, selector_pb2.SelectRuntimeResponse]:
    """SelectRuntime of the requests ``make`` builds."""
    return Workload(make, lambda s, r: s.selection.SelectRuntime(r, timeout=RPC_TIMEOUT_S), classify_selection)


def new_isvc_selects(
    source: TrafficSource, view: View
) -> Workload[selector_pb2.SelectRuntimeRequest, selector_pb2.SelectRuntimeResponse]:
    """SelectRuntime, each call a new InferenceService."""
    return select_workload(lambda i: selector_pb2.SelectRuntimeRequest(inference_service=source.next(), view=view))


def explain_workload(
    source: TrafficSource, page_size: int = 0
) -> Workload[selector_pb2.ExplainRuntimesRequest, selector_pb2.ExplainRuntimesResponse]:
    """ExplainRuntimes (every row, or the first page of ``page_size`` rows), each call a new
    InferenceService."""
    return Workload(
        lambda i: selector_pb2.ExplainRuntimesRequest(inference_service=source.next(), page_size=page_size),
        lambda s, r: s.selection.ExplainRuntimes(r, timeout=RPC_TIMEOUT_S),
        lambda resp: (OK, resp.ByteSize()),
    )


def run_clients(
    server: Server,
    workload: Workload[Req, Resp],
    clients: int,
    calls: int,
    max_s: float,
    warmup: int = 5,
    guarded: bool = True,
) -> Run:
    """``clients`` threads, each with its own channel, make ``calls`` calls each after ``warmup``
    untimed ones; a client stops early once ``max_s`` has passed (after at least a few calls), or
    (``guarded``) once the memory guard has tripped."""
    results: list[list[Sample]] = [[] for _ in range(clients)]
    capped = [False] * clients
    failures: list[BaseException] = []
    barrier = threading.Barrier(clients + 1)
    deadline = [math.inf]

    def client(index: int) -> None:
        try:
            with server.channel() as channel:
                stubs = Server.stubs(channel)
                for i in range(warmup):
                    _call(workload, stubs, -1 - i)
                barrier.wait()
                local = results[index]
                for i in range(calls):
                    if guarded and server.over_memory.is_set():
                        break
                    if time.perf_counter() >= deadline[0] and len(local) >= max(1, MIN_SAMPLES // clients):
                        capped[index] = True
                        break
                    local.append(_call(workload, stubs, index * calls + i))
        except threading.BrokenBarrierError:
            pass
        except BaseException as exc:  # reported by the caller
            failures.append(exc)
            barrier.abort()

    threads = [
        threading.Thread(target=client, args=(i,), daemon=True, name=f"bench-client-{i}") for i in range(clients)
    ]
    for t in threads:
        t.start()
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        pass
    started = time.perf_counter()
    deadline[0] = started + max_s
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if failures:
        raise RuntimeError(f"a benchmark client failed: {failures[0]!r}") from failures[0]
    return Run(
        [s for r in results for s in r], elapsed, clients * calls, any(capped), guarded and server.over_memory.is_set()
    )


def _call(workload: Workload[Req, Resp], stubs: Stubs, i: int) -> Sample:
    """One timed call; an RPC error is a sample with outcome ``error <code>``."""
    request = workload.make(i)
    start = time.perf_counter()
    try:
        response = workload.send(stubs, request)
    except grpc.RpcError as err:
        code = err.code() if isinstance(err, grpc.Call) else None
        return Sample(time.perf_counter() - start, f"error {code.name if code else '?'}")
    seconds = time.perf_counter() - start
    outcome, size = workload.classify(response)
    return Sample(seconds, outcome, size)


class Background(threading.Thread):
    """A daemon thread that repeats ``step`` every ``interval`` seconds until stopped."""

    def __init__(self, name: str, interval: float) -> None:
        super().__init__(daemon=True, name=name)
        self.interval = interval
        self._stop_event = threading.Event()
        self.failure: BaseException | None = None

    def setup(self) -> None:
        """Called once in the thread before the first step."""

    def step(self) -> None:
        """One unit of work."""

    def teardown(self) -> None:
        """Called once in the thread after the last step."""

    def run(self) -> None:
        """Repeat ``step`` until ``stop``."""
        try:
            self.setup()
            try:
                while not self._stop_event.wait(self.interval):
                    self.step()
            finally:
                self.teardown()
        except BaseException as exc:  # reported by ``stop``
            self.failure = exc

    def stop(self) -> None:
        """Stop and join (bounded by the RPC timeout)."""
        self._stop_event.set()
        self.join(timeout=RPC_TIMEOUT_S)


class Writer(Background):
    """Upserts one catalog runtime every 100 ms with new priorities, as real_traffic.py does."""

    _revision = 0
    _revision_lock = threading.Lock()

    def __init__(self, server: Server, catalog: Catalog, seed: int) -> None:
        super().__init__("bench-writer", WRITE_INTERVAL_S)
        self._server = server
        self._catalog = catalog
        self._rnd = random.Random(seed)
        self.latencies: list[float] = []
        self.failed = 0
        self._channel: grpc.Channel | None = None

    @classmethod
    def next_revision(cls) -> int:
        """A revision number unique in this process (labels and versions)."""
        with cls._revision_lock:
            cls._revision += 1
            return cls._revision

    def setup(self) -> None:
        """Open the writer's own channel."""
        self._channel = self._server.channel()

    def step(self) -> None:
        """One UpsertObjects of one runtime."""
        assert self._channel is not None
        revision = self.next_revision()
        obj = revised_runtime(self._rnd.choice(self._catalog.runtimes), revision, self._rnd)
        request = cache_pb2.UpsertObjectsRequest(version=f"bench-{revision}", objects=[obj])
        start = time.perf_counter()
        try:
            Server.stubs(self._channel).cache.UpsertObjects(request, timeout=RPC_TIMEOUT_S)
        except grpc.RpcError:
            self.failed += 1
            return
        self.latencies.append(time.perf_counter() - start)

    def teardown(self) -> None:
        """Close the channel."""
        if self._channel is not None:
            self._channel.close()

    def note(self) -> str:
        """Writes done and their latency."""
        if not self.latencies:
            return f"writer: 0 upserts ok, {self.failed} failed"
        return (
            f"writer: {len(self.latencies)} UpsertObjects ok, {self.failed} failed, "
            f"p50 {median(self.latencies) * 1e3:.2f} ms, max {max(self.latencies) * 1e3:.2f} ms"
        )


class HealthProbe(Background):
    """Times a health Check every 10 ms on its own channel while the load runs."""

    def __init__(self, server: Server) -> None:
        super().__init__("bench-health-probe", HEALTH_PROBE_INTERVAL_S)
        self._server = server
        self.latencies: list[float] = []
        self._channel: grpc.Channel | None = None

    def setup(self) -> None:
        """Open the probe's own channel."""
        self._channel = self._server.channel()

    def step(self) -> None:
        """One timed Check."""
        assert self._channel is not None
        start = time.perf_counter()
        Server.stubs(self._channel).health.Check(health_pb2.HealthCheckRequest(service=""), timeout=RPC_TIMEOUT_S)
        self.latencies.append(time.perf_counter() - start)

    def teardown(self) -> None:
        """Close the channel."""
        if self._channel is not None:
            self._channel.close()


class MemoryGuard(Background):
    """Sets ``server.over_memory`` once the server's VmRSS passes ``server.rss_limit_mb`` (checked
    every 0.5 s), so that a server growing without bound cannot exhaust the machine."""

    def __init__(self, server: Server) -> None:
        super().__init__("bench-memory-guard", 0.5)
        self._server = server
        self.peak = 0.0

    def step(self) -> None:
        """One check."""
        rss = self._server.status_mb("VmRSS")
        if not math.isnan(rss):
            self.peak = max(self.peak, rss)
            if rss > self._server.rss_limit_mb and not self._server.over_memory.is_set():
                self._server.over_memory.set()
                progress(
                    f"memory guard: server RSS {rss:,.0f} MB > {self._server.rss_limit_mb:,.0f} MB; measured runs stop"
                )


class RssSampler(Background):
    """Samples the server's VmRSS every second."""

    def __init__(self, server: Server) -> None:
        super().__init__("bench-rss", RSS_INTERVAL_S)
        self._server = server
        self.samples: list[float] = []

    def setup(self) -> None:
        """First sample at once."""
        self.step()

    def step(self) -> None:
        """One sample (MB)."""
        value = self._server.status_mb("VmRSS")
        if not math.isnan(value):
            self.samples.append(value)


@contextmanager
def background(*threads: Background) -> Iterator[None]:
    """Start the threads, stop them on leaving; re-raise a thread's failure."""
    for t in threads:
        t.start()
    try:
        yield
    finally:
        for t in threads:
            t.stop()
    for t in threads:
        if t.failure is not None:
            raise RuntimeError(f"{t.name} failed: {t.failure!r}") from t.failure


# --- report ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """A target (docs/architecture.md, "Benchmark and performance"): ``value`` (or the ratio) at most / at least ``limit``."""

    text: str
    limit: float
    at_most: bool = True
    on_ratio: bool = False

    def met(self, value: float, ratio: float | None) -> bool | None:
        """PASS (True), MISS (False), or None when the figure is missing."""
        x = ratio if self.on_ratio else value
        if x is None or math.isnan(x):
            return None
        return x <= self.limit if self.at_most else x >= self.limit


# Size key ("catalog", "10000", "50000") -> figure id -> target.
def _headline_targets(p50: float, health: float, rate: float, rss: float) -> dict[str, Target]:
    """The real-traffic targets of one size (ratios to the idle health Check of the same run)."""
    out = {
        "select_c1_p50": Target(f"≤ {p50:g}× floor", p50, on_ratio=True),
        "select_c1_selected_p50": Target(f"≤ {p50:g}× floor", p50, on_ratio=True),
        "select_c1_no_runtime_p50": Target(f"≤ {p50:g}× floor", p50, on_ratio=True),
        "select_basic_bytes": Target("≤ 16 KB", 16384.0),
        "select_c8_bytes": Target("≤ 16 KB", 16384.0),
        "health_c1_p99": Target(f"≤ {health:g}× idle p99", health, on_ratio=True),
        "health_c8_p99": Target(f"≤ {health:g}× idle p99", health, on_ratio=True),
        "select_c8_rate": Target(f"≥ {rate:g}× floor", rate, at_most=False, on_ratio=True),
        "rss_max": Target(f"≤ {rss:g} MB", rss),
    }
    return out


# Size key ("catalog", "10000", "50000") -> figure id -> target.
TARGETS: dict[str, dict[str, Target]] = {
    "catalog": {
        **_headline_targets(1.3, 2.0, 0.8, 100.0),
        "explain_p50": Target("≤ 6× floor", 6.0, on_ratio=True),
    },
    "10000": {
        **_headline_targets(2.0, 2.0, 0.6, 200.0),
        "cold_basic_selected_p50": Target("≤ 0.3 ms", 0.3),
        "cold_basic_no_runtime_p50": Target("≤ 0.5 ms", 0.5),
        "explain_page_p50": Target("≤ 3× floor", 3.0, on_ratio=True),
        "apply_grpc": Target("≤ 0.5 s", 0.5),
    },
    "50000": {
        **_headline_targets(3.0, 3.0, 0.5, 600.0),
        "apply_grpc": Target("≤ 2.5 s", 2.5),
    },
}


@dataclass
class Figure:
    """One printed figure: value (median over runs), its range, the ratio to the floor, target."""

    key: str
    name: str
    value: float
    unit: str
    ratio: float | None = None
    lo: float | None = None
    hi: float | None = None
    rlo: float | None = None
    rhi: float | None = None
    target: Target | None = None
    runs_met: str = ""

    def status(self) -> str:
        """PASS / MISS / "" (no target) / n/a."""
        if self.target is None:
            return ""
        met = self.target.met(self.value, self.ratio)
        return "n/a" if met is None else ("PASS" if met else "MISS")


@dataclass
class Section:
    """A titled table of figures with notes below it."""

    title: str
    figures: list[Figure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


class SizeReport:
    """The sections of one size, with its targets."""

    def __init__(self, label: str, size_key: str, runtimes: int) -> None:
        self.label = label
        self.size_key = size_key
        self.runtimes = runtimes
        self.header: list[str] = []
        self.sections: list[Section] = []

    def section(self, title: str) -> Section:
        """A new section."""
        sec = Section(title)
        self.sections.append(sec)
        return sec

    def add(
        self,
        sec: Section,
        key: str,
        name: str,
        values: Sequence[float] | float,
        unit: str,
        ratios: Sequence[float] | float | None = None,
        largest: bool = False,
    ) -> Figure:
        """Add a figure; several values (one per run) give the median (the largest with
        ``largest``) and the min–max range."""
        vals = [values] if isinstance(values, (int, float)) else list(values)
        rats = None if ratios is None else ([ratios] if isinstance(ratios, (int, float)) else list(ratios))
        pick = _nanmax if largest else _nanmedian
        fig = Figure(key, name, pick(vals), unit, None if rats is None else pick(rats))
        if len(vals) > 1:
            fig.lo, fig.hi = _nanmin(vals), _nanmax(vals)
            if rats:
                fig.rlo, fig.rhi = _nanmin(rats), _nanmax(rats)
        fig.target = TARGETS.get(self.size_key, {}).get(key)
        if fig.target is not None and len(vals) > 1:
            met = [fig.target.met(v, None if rats is None else r) for v, r in zip(vals, rats or vals)]
            fig.runs_met = f"{sum(1 for m in met if m)}/{len(met)} runs"
        sec.figures.append(fig)
        return fig

    def figures(self) -> Iterator[tuple[Section, Figure]]:
        """Every figure with its section."""
        for sec in self.sections:
            for fig in sec.figures:
                yield sec, fig


def _nanmedian(values: Sequence[float]) -> float:
    """The median of the values that are not NaN."""
    clean = [v for v in values if not math.isnan(v)]
    return median(clean) if clean else math.nan


def _nanmin(values: Sequence[float]) -> float:
    """The least value that is not NaN."""
    clean = [v for v in values if not math.isnan(v)]
    return min(clean) if clean else math.nan


def _nanmax(values: Sequence[float]) -> float:
    """The greatest value that is not NaN."""
    clean = [v for v in values if not math.isnan(v)]
    return max(clean) if clean else math.nan


def format_value(value: float | None, unit: str) -> str:
    """A value in its unit's usual precision; "—" when missing."""
    if value is None or math.isnan(value):
        return "—"
    if unit in ("B", "calls", "calls/s", "samples"):
        return f"{value:,.0f}"
    if unit == "MB":
        return f"{value:,.1f}"
    if unit in ("", "×", "exp", "%"):
        return f"{value:.2f}"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.1f}"
    if magnitude >= 10:
        return f"{value:.2f}"
    return f"{value:.3f}"


def format_ratio(ratio: float | None) -> str:
    """``1.23×``; "" when there is no ratio."""
    if ratio is None:
        return ""
    return "—" if math.isnan(ratio) else f"{ratio:.2f}×"


def render_section(sec: Section, repeat: int) -> list[str]:
    """The aligned text lines of a section."""
    lines = [sec.title]
    if sec.figures:
        has_ratio = any(f.ratio is not None for f in sec.figures)
        has_range = any(f.lo is not None for f in sec.figures)
        has_target = any(f.target is not None for f in sec.figures)
        header = ["figure", "value", "unit"]
        if has_ratio:
            header.append("vs floor")
        if has_range:
            header += [f"range ({repeat} runs)", "ratio range"]
        if has_target:
            header += ["target", "status"]
        rows = [header]
        for f in sec.figures:
            row = [f.name, format_value(f.value, f.unit), f.unit]
            if has_ratio:
                row.append(format_ratio(f.ratio))
            if has_range:
                row.append("" if f.lo is None else f"{format_value(f.lo, f.unit)}–{format_value(f.hi, f.unit)}")
                row.append("" if f.rlo is None else f"{format_ratio(f.rlo)}–{format_ratio(f.rhi)}")
            if has_target:
                row += [
                    f.target.text if f.target else "",
                    (f.status() + (f" ({f.runs_met})" if f.runs_met else "")).strip(),
                ]
            rows.append(row)
        widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
        right = {1, 3} if has_ratio else {1}
        for r in rows:
            cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))]
            lines.append(("  " + "  ".join(cells)).rstrip())
    lines += [f"  * {n}" for n in sec.notes]
    return lines


def render_size(report: SizeReport, repeat: int) -> str:
    """The text of one size: header, sections, target summary."""
    rule = "=" * 100
    title = report.label.upper() if report.size_key == "growth" else f"SIZE {report.label}"
    lines = [rule, title, *report.header, rule]
    for sec in report.sections:
        lines += ["", *render_section(sec, repeat)]
    statuses = [(sec, f) for sec, f in report.figures() if f.target is not None]
    if statuses:
        passed = sum(1 for _, f in statuses if f.status() == "PASS")
        lines += ["", f"targets at {report.label}: {passed}/{len(statuses)} PASS"]
        lines += [
            f"  MISS: {f.name} = {format_value(f.value, f.unit)} {f.unit} {format_ratio(f.ratio)} (target {f.target.text})"
            for _, f in statuses
            if f.target is not None and f.status() != "PASS"
        ]
    return "\n".join(lines)


def figure_json(report: SizeReport, sec: Section, fig: Figure) -> str:
    """One figure as a JSON object on one line."""

    def clean(x: float | None) -> float | None:
        return None if x is None or math.isnan(x) else round(x, 6)

    return json.dumps(
        {
            "size": report.label,
            "runtimes": report.runtimes,
            "section": sec.title,
            "figure": fig.key,
            "name": fig.name,
            "value": clean(fig.value),
            "unit": fig.unit,
            "ratio_to_floor": clean(fig.ratio),
            "min": clean(fig.lo),
            "max": clean(fig.hi),
            "target": fig.target.text if fig.target else None,
            "status": fig.status() or None,
        },
        ensure_ascii=False,
    )


# --- phases through the server -----------------------------------------------------------------


@dataclass
class Floor:
    """The idle floor of one run: health Check p50/p99 (1 client) and calls/s with 1 and 8 clients."""

    p50_ms: float
    p99_ms: float
    rate1: float
    rate8: float


def measure_floor(server: Server, settings: Settings) -> Floor:
    """Health Check on the idle server: ≥ 200 calls with 1 client, then 8 clients."""
    one = run_clients(server, health_workload(), 1, settings.floor_calls, settings.max_run_s, warmup=20, guarded=False)
    eight = run_clients(
        server, health_workload(), 8, max(50, settings.floor_calls // 4), settings.max_run_s, warmup=10, guarded=False
    )
    return Floor(one.p50_ms(), one.p99_ms(), one.rate(), eight.rate())


@dataclass
class Traffic:
    """One real-traffic run: the selections, the health probe and the writer."""

    clients: int
    run: Run
    health: list[float]
    writer_note: str


def real_traffic(
    server: Server, catalog: Catalog, clients: int, calls: int, max_s: float, tag: str, seed: int
) -> Traffic:
    """New InferenceServices (BASIC view) with ``clients`` clients while the writer upserts every
    100 ms and the probe times health Check every 10 ms."""
    source = TrafficSource(catalog, f"bench-{tag}", seed)
    writer = Writer(server, catalog, seed + 1)
    probe = HealthProbe(server)
    with background(writer, probe):
        run = run_clients(server, new_isvc_selects(source, BASIC), clients, calls, max_s)
    return Traffic(clients, run, probe.latencies, writer.note())


def apply_snapshot(server: Server, objects: Sequence[cache_pb2.CacheObject]) -> tuple[float, int]:
    """ApplySnapshot of ``objects`` (seconds, request bytes); then wait until health is SERVING."""
    request = cache_pb2.ApplySnapshotRequest(version="bench-0", objects=objects)
    size = request.ByteSize()
    with server.channel() as channel:
        stubs = Server.stubs(channel)
        start = time.perf_counter()
        stubs.cache.ApplySnapshot(request, timeout=RPC_TIMEOUT_S)
        seconds = time.perf_counter() - start
        deadline = time.monotonic() + 30
        while (
            stubs.health.Check(health_pb2.HealthCheckRequest(service=""), timeout=30).status
            != health_pb2.HealthCheckResponse.SERVING
        ):
            if time.monotonic() > deadline:
                raise SystemExit("bench: the server did not report SERVING after ApplySnapshot")
            time.sleep(0.05)
    return seconds, size


def grpc_upserts(server: Server, objects: Sequence[cache_pb2.CacheObject], count: int, max_s: float) -> Run:
    """``count`` sequential UpsertObjects of one existing runtime each, new priorities, no other load."""
    rnd = random.Random(11)
    runtimes = [o for o in objects if o.WhichOneof("object") == "cluster_serving_runtime"]
    picks = rnd.sample(runtimes, min(count, len(runtimes)))

    def make(i: int) -> cache_pb2.UpsertObjectsRequest:
        revision = Writer.next_revision()
        return cache_pb2.UpsertObjectsRequest(
            version=f"bench-{revision}", objects=[revised_runtime(picks[i % len(picks)], revision, rnd)]
        )

    workload: Workload[cache_pb2.UpsertObjectsRequest, cache_pb2.UpsertObjectsResponse] = Workload(
        make, lambda s, r: s.cache.UpsertObjects(r, timeout=RPC_TIMEOUT_S), lambda resp: (OK, 0)
    )
    return run_clients(server, workload, 1, count, max_s, warmup=0)


def headline(server: Server, catalog: Catalog, settings: Settings, report: SizeReport) -> list[float]:
    """Floors and real traffic (1 and 8 clients), ``--repeat`` times; adds the floor and headline
    sections and returns the RSS samples taken during the real traffic."""
    floors: list[Floor] = []
    traffic: dict[int, list[Traffic]] = {1: [], 8: []}
    soak = settings.soak_s > 0
    max_s = settings.soak_s / 2 if soak else settings.max_run_s
    calls = {1: 10**9 if soak else settings.calls, 8: 10**9 if soak else settings.calls8}
    rss = RssSampler(server)
    for k in range(settings.repeat):
        progress(f"{report.label}: idle floor (run {k + 1}/{settings.repeat})")
        floors.append(measure_floor(server, settings))
        if k == 0:
            rss.start()
        for clients in (1, 8):
            progress(f"{report.label}: real traffic, {clients} client(s) (run {k + 1}/{settings.repeat})")
            traffic[clients].append(
                real_traffic(server, catalog, clients, calls[clients], max_s, f"r{k}c{clients}", 100 * k + clients)
            )
    rss.stop()

    sec = report.section("[2] idle floor — health Check on the idle server, same run")
    report.add(sec, "floor_p50", "Check p50, 1 client", [f.p50_ms for f in floors], "ms")
    report.add(sec, "floor_p99", "Check p99, 1 client", [f.p99_ms for f in floors], "ms")
    report.add(sec, "floor_rate1", "Check calls/s, 1 client", [f.rate1 for f in floors], "calls/s")
    report.add(sec, "floor_rate8", "Check calls/s, 8 clients", [f.rate8 for f in floors], "calls/s")
    sec.notes.append(
        f"{settings.floor_calls} Checks with 1 client (after 20 warm-up), {max(50, settings.floor_calls // 4)} per client with 8 clients"
    )

    sec = report.section(
        "[3] (a) REAL TRAFFIC — the headline: every call a new InferenceService, a runtime upserted every 100 ms"
    )
    for clients in (1, 8):
        _traffic_figures(report, sec, clients, traffic[clients], floors, settings)
    sec.notes.append(
        "view BASIC (the default); each client its own channel; 5 warm-up calls per client (new InferenceServices too)"
    )
    sec.notes.append(
        "the writer upserts catalog runtimes under their own names, as real_traffic.py (at N sizes that adds up to "
        f"{len(catalog.runtimes)} runtimes to the clones)"
    )
    if soak:
        sec.notes.append(f"time-based (--soak-seconds {settings.soak_s:g}): {max_s:g} s per client count and run")
    sec.notes.append("health under load: a separate thread in this process, one Check every 10 ms, its own channel")
    return rss.samples


def _traffic_figures(
    report: SizeReport, sec: Section, clients: int, runs: list[Traffic], floors: list[Floor], settings: Settings
) -> None:
    """The headline figures of one client count."""
    c = f"c{clients}"
    who = f"{clients} client" + ("s" if clients > 1 else "")
    rate_floor = [f.rate1 if clients == 1 else f.rate8 for f in floors]
    p50 = [t.run.p50_ms() for t in runs]
    rates = [t.run.rate() for t in runs]
    report.add(
        sec, f"select_{c}_p50", f"SelectRuntime p50, {who}", p50, "ms", [v / f.p50_ms for v, f in zip(p50, floors)]
    )
    report.add(
        sec,
        f"select_{c}_p99",
        f"SelectRuntime p99, {who} (vs idle p99)",
        [t.run.p99_ms() for t in runs],
        "ms",
        [t.run.p99_ms() / f.p99_ms for t, f in zip(runs, floors)],
    )
    report.add(
        sec,
        f"select_{c}_rate",
        f"SelectRuntime calls/s, {who} (vs floor calls/s)",
        rates,
        "calls/s",
        [r / f for r, f in zip(rates, rate_floor)],
    )
    report.add(sec, f"select_{c}_calls", f"  calls measured, {who}", [len(t.run.samples) for t in runs], "calls")
    for outcome in (SELECTED, NO_RUNTIME):
        report.add(
            sec,
            f"select_{c}_{outcome.replace(' ', '_')}_n",
            f"  answers '{outcome}', {who}",
            [t.run.count(outcome) for t in runs],
            "calls",
        )
        p = [t.run.p50_ms(outcome) for t in runs]
        report.add(
            sec,
            f"select_{c}_{outcome.replace(' ', '_')}_p50",
            f"  p50 of '{outcome}' answers, {who}",
            p,
            "ms",
            [v / f.p50_ms for v, f in zip(p, floors)],
        )
    report.add(
        sec,
        "select_basic_bytes" if clients == 1 else f"select_{c}_bytes",
        f"largest BASIC answer, {who}",
        [t.run.largest() for t in runs],
        "B",
        largest=True,
    )
    report.add(
        sec,
        f"health_{c}_p50",
        f"health Check p50 under load, {who}",
        [median(t.health) * 1e3 for t in runs],
        "ms",
        [median(t.health) * 1e3 / f.p50_ms for t, f in zip(runs, floors)],
    )
    h99 = [percentile(t.health, 0.99) * 1e3 if t.health else math.nan for t in runs]
    report.add(
        sec,
        f"health_{c}_p99",
        f"health Check p99 under load, {who} (vs idle p99)",
        h99,
        "ms",
        [v / f.p99_ms for v, f in zip(h99, floors)],
    )
    for k, t in enumerate(runs):
        others, errors = t.run.count(OTHER), t.run.errors()
        tag = f" (run {k + 1})" if len(runs) > 1 else ""
        sec.notes.append(
            f"{who}{tag}: {t.writer_note}; {len(t.health)} health probes"
            + (f"; {others} other answers (model error …)" if others else "")
            + (f"; {errors} RPC errors" if errors else "")
        )
        note = t.run.cap_note(f"{who}{tag}", settings.soak_s / 2 if settings.soak_s else settings.max_run_s)
        if note and not settings.soak_s:
            sec.notes.append(note)


def floor_note(floor: Floor) -> str:
    """The note naming the floor a section's ratios use."""
    return (
        f"ratios against the idle floor measured just before this section: Check p50 {floor.p50_ms:.3f} ms, "
        f"p99 {floor.p99_ms:.3f} ms, {floor.rate1:,.0f} calls/s (1 client), {floor.rate8:,.0f} calls/s (8 clients)"
    )


def memo_hits(server: Server, catalog: Catalog, settings: Settings, report: SizeReport, floor: Floor) -> None:
    """The 7 ome-cluster InferenceServices round-robin, no writer: memo hits."""
    sec = report.section(
        f"[4] (b) repeated requests — MEMO HITS, NOT THE HEADLINE: the {len(catalog.repeated)} ome-cluster InferenceServices round-robin, no writer"
    )
    if not catalog.repeated:
        sec.notes.append("ome-cluster has no InferenceService without spec.runtime.name: skipped")
        return
    requests = [selector_pb2.SelectRuntimeRequest(inference_service=i) for i in catalog.repeated]
    workload = select_workload(lambda i: requests[i % len(requests)])
    for clients, calls in ((1, settings.calls), (8, settings.calls8)):
        progress(f"{report.label}: memo hits, {clients} client(s)")
        run = run_clients(server, workload, clients, calls, settings.max_run_s)
        who = f"{clients} client" + ("s" if clients > 1 else "")
        rate_floor = floor.rate1 if clients == 1 else floor.rate8
        report.add(
            sec,
            f"memo_c{clients}_p50",
            f"SelectRuntime p50, {who} (memo hits)",
            run.p50_ms(),
            "ms",
            run.p50_ms() / floor.p50_ms,
        )
        report.add(
            sec,
            f"memo_c{clients}_p99",
            f"SelectRuntime p99, {who} (memo hits; vs idle p99)",
            run.p99_ms(),
            "ms",
            run.p99_ms() / floor.p99_ms,
        )
        report.add(
            sec,
            f"memo_c{clients}_rate",
            f"SelectRuntime calls/s, {who} (memo hits)",
            run.rate(),
            "calls/s",
            run.rate() / rate_floor,
        )
        note = run.cap_note(who, settings.max_run_s)
        if note:
            sec.notes.append(note)
    sec.notes.append(floor_note(floor))


def explain_and_full(
    server: Server, catalog: Catalog, settings: Settings, report: SizeReport, floor: Floor, run: str = ""
) -> None:
    """ExplainRuntimes (all rows) and FULL-view SelectRuntime on new InferenceServices, writer running;
    ``run`` is appended to the section's title (``--only explain`` repeats it)."""
    sec = report.section(
        "[5] ExplainRuntimes (every row) and SelectRuntime view FULL — new InferenceServices, writer running, 1 client"
        + run
    )
    progress(f"{report.label}: ExplainRuntimes")
    writer = Writer(server, catalog, 21)
    with background(writer):
        explain = run_clients(
            server,
            explain_workload(TrafficSource(catalog, "bench-explain", 22)),
            1,
            settings.side_calls,
            settings.max_run_s,
        )
    report.add(sec, "explain_p50", "ExplainRuntimes p50", explain.p50_ms(), "ms", explain.p50_ms() / floor.p50_ms)
    report.add(
        sec, "explain_p99", "ExplainRuntimes p99 (vs idle p99)", explain.p99_ms(), "ms", explain.p99_ms() / floor.p99_ms
    )
    report.add(sec, "explain_bytes", "largest ExplainRuntimes answer", explain.largest(), "B")
    notes = [
        explain.cap_note("ExplainRuntimes", settings.max_run_s),
        f"ExplainRuntimes: {len(explain.samples)} calls, {writer.note()}",
    ]
    progress(f"{report.label}: ExplainRuntimes, a page of {EXPLAIN_PAGE} rows")
    writer = Writer(server, catalog, 25)
    with background(writer):
        page = run_clients(
            server,
            explain_workload(TrafficSource(catalog, "bench-page", 26), EXPLAIN_PAGE),
            1,
            settings.side_calls,
            settings.max_run_s,
        )
    report.add(
        sec,
        "explain_page_p50",
        f"ExplainRuntimes p50, page of {EXPLAIN_PAGE} rows",
        page.p50_ms(),
        "ms",
        page.p50_ms() / floor.p50_ms,
    )
    notes.append(f"ExplainRuntimes page: {len(page.samples)} calls, {writer.note()}")
    progress(f"{report.label}: SelectRuntime view FULL")
    writer = Writer(server, catalog, 23)
    with background(writer):
        full = run_clients(
            server,
            new_isvc_selects(TrafficSource(catalog, "bench-full", 24), FULL),
            1,
            settings.side_calls,
            settings.max_run_s,
        )
    report.add(
        sec, "select_full_p50", "SelectRuntime p50, view FULL", full.p50_ms(), "ms", full.p50_ms() / floor.p50_ms
    )
    report.add(
        sec,
        "select_full_p99",
        "SelectRuntime p99, view FULL (vs idle p99)",
        full.p99_ms(),
        "ms",
        full.p99_ms() / floor.p99_ms,
    )
    report.add(sec, "select_full_bytes", "largest FULL answer (every exclusion; not BASIC)", full.largest(), "B")
    notes += [full.cap_note("FULL view", settings.max_run_s), f"FULL view: {len(full.samples)} calls, {writer.note()}"]
    for n in (explain.errors(), full.errors()):
        if n:
            notes.append(f"{n} RPC errors")
    sec.notes += [n for n in notes if n]
    sec.notes.append(floor_note(floor))


def rss_section(report: SizeReport, samples: list[float], hwm: float, settings: Settings) -> None:
    """RSS over the real-traffic phase: min, max, first/last third means, growth, peak."""
    sec = report.section("[8] server RSS over time — VmRSS every 1 s during the real traffic")
    if not samples:
        sec.notes.append("no samples")
        return
    third = max(1, len(samples) // 3)
    first, last = statistics.fmean(samples[:third]), statistics.fmean(samples[-third:])
    report.add(sec, "rss_samples", "samples", len(samples), "samples")
    report.add(sec, "rss_min", "RSS min", min(samples), "MB")
    report.add(sec, "rss_max", "RSS max", max(samples), "MB")
    report.add(sec, "rss_first_third", "RSS mean, first third of the samples", first, "MB")
    report.add(sec, "rss_last_third", "RSS mean, last third of the samples", last, "MB")
    report.add(sec, "rss_growth", "growth, last third − first third", last - first, "MB")
    report.add(sec, "rss_hwm", "VmHWM (peak since start, ApplySnapshot included)", hwm, "MB")
    flat = last - first <= max(5.0, 0.05 * first)
    verdict = "too few samples to judge" if len(samples) < MIN_RSS_SAMPLES else ("flat" if flat else "GROWING")
    length = f"{len(samples)} samples, 1 s apart" + (
        "" if settings.soak_s >= 300 else "; run --soak-seconds 300 for the 5-minute check"
    )
    sec.notes.append(f"{verdict} (flat = last third within 5 % or 5 MB of the first) over {length}")


# --- in process --------------------------------------------------------------------------------


@dataclass
class InProcess:
    """In-process answers of one view on a new store, measured in a fresh Python process."""

    view: str
    runtimes: int
    apply_s: float
    cold: Run  # models new to the process
    warm: Run  # the same models again, new InferenceServices (content caches warm, no repeat)
    memo_free: int
    unchecked: int
    repeat_is_same: bool | None
    failures: int
    upserts: Run | None


def _timed_selects(
    snapshot: Snapshot,
    requests: Sequence[selector_pb2.SelectRuntimeRequest],
    max_s: float,
    held: dict[int, Message] | None = None,
) -> tuple[Run, int, int, int]:
    """``rpc_selection.select_runtime`` on each request, timed: (run, memo-free, unchecked, failures).
    With ``held``, an answer that is the very object an earlier call got counts as a memo hit."""
    samples: list[Sample] = []
    memo_free = unchecked = failures = 0
    held_bytes = 0
    deadline = time.perf_counter() + max_s
    capped = False
    for request in requests:
        if time.perf_counter() >= deadline and len(samples) >= MIN_SAMPLES:
            capped = True
            break
        t0 = time.perf_counter()
        try:
            response = rpc_selection.select_runtime(snapshot, request)
        except RequestError:
            failures += 1
            continue
        seconds = time.perf_counter() - t0
        outcome, size = classify_selection(response)
        samples.append(Sample(seconds, outcome, size))
        if held is None:
            continue
        if held.get(id(response)) is response:
            continue  # a memo hit
        if held_bytes + size <= MEMO_CHECK_BYTES:
            held[id(response)] = response
            held_bytes += size
            memo_free += 1
        else:
            unchecked += 1
    return Run(samples, sum(s.seconds for s in samples), len(requests), capped), memo_free, unchecked, failures


def inproc_upserts(store: CacheStore, objects: Sequence[cache_pb2.CacheObject], count: int, max_s: float) -> Run:
    """``count`` ``store.upsert`` calls of one existing runtime each, new priorities."""
    rnd = random.Random(12)
    runtimes = [o for o in objects if o.WhichOneof("object") == "cluster_serving_runtime"]
    picks = rnd.sample(runtimes, min(count, len(runtimes)))
    samples: list[Sample] = []
    deadline = time.perf_counter() + max_s
    capped = False
    for i in range(count):
        if time.perf_counter() >= deadline and len(samples) >= MIN_SAMPLES:
            capped = True
            break
        obj = revised_runtime(picks[i % len(picks)], Writer.next_revision(), rnd)
        t0 = time.perf_counter()
        store.upsert("", [obj])
        samples.append(Sample(time.perf_counter() - t0, OK))
    return Run(samples, sum(s.seconds for s in samples), count, capped)


def measure_in_process(
    catalog: Catalog, size: int, view: View, calls: int, max_s: float, seed: int, upserts: int, filler: bool = False
) -> InProcess:
    """A new store of the size; one untimed warm-up; ``calls`` cold answers (each a model not asked
    before in this process, so no cache of any kind holds it); the same models again as new
    InferenceServices (warm); then ``upserts`` store.upsert calls (0: none)."""
    objects = sized_objects(catalog, size, filler=filler)
    store = CacheStore()
    start = time.perf_counter()
    store.apply_snapshot("bench-in-process", objects)
    apply_s = time.perf_counter() - start
    requests = distinct_requests(catalog, calls + 1, view, seed)
    snapshot = store.snapshot
    rpc_selection.select_runtime(snapshot, requests[0])  # warm-up: the lazy work of a new store
    held: dict[int, Message] = {}
    cold, memo_free, unchecked, failures = _timed_selects(snapshot, requests[1:], max_s, held)
    again = []
    for i, request in enumerate(requests[1 : 1 + len(cold.samples)]):
        isvc = types_pb2.InferenceService()
        isvc.CopyFrom(request.inference_service)
        isvc.metadata.name = f"warm-{seed}-{i}"
        isvc.metadata.namespace = f"ns-{(int(isvc.metadata.namespace[3:]) + 1) % NAMESPACES}"
        again.append(selector_pb2.SelectRuntimeRequest(inference_service=isvc, view=view))
    warm = _timed_selects(snapshot, again, max_s)[0]
    repeat_is_same = None
    if cold.samples:  # does an answer memo exist? Repeat one request twice, untimed
        repeat_is_same = rpc_selection.select_runtime(snapshot, requests[1]) is rpc_selection.select_runtime(
            snapshot, requests[1]
        )
    upsert_run = inproc_upserts(store, objects, upserts, max_s) if upserts else None
    return InProcess(
        "BASIC" if view == BASIC else "FULL",
        runtimes_in_scope(objects),
        apply_s,
        cold,
        warm,
        memo_free,
        unchecked,
        repeat_is_same,
        failures,
        upsert_run,
    )


def _child(
    conn: Connection,
    catalog: Catalog,
    size: int,
    view: View,
    calls: int,
    max_s: float,
    seed: int,
    upserts: int,
    filler: bool,
) -> None:
    """Entry point of the fresh process: measure and send ("ok", InProcess) or ("error", traceback)."""
    message: tuple[str, InProcess | str]
    try:
        message = ("ok", measure_in_process(catalog, size, view, calls, max_s, seed, upserts, filler))
    except KeyboardInterrupt:
        return  # Ctrl-C reaches the whole process group; the parent reports it
    except Exception:
        message = ("error", traceback.format_exc())
    try:
        conn.send(message)
    except OSError:
        pass  # the parent is gone (interrupted)
    finally:
        conn.close()


def in_fresh_process(
    catalog: Catalog, size: int, view: View, settings: Settings, upserts: int, filler: bool = False
) -> InProcess:
    """``measure_in_process`` in a new Python process (spawned), so no cache of this process or of
    an earlier measurement is warm; bounded in time, the child is killed past its budget."""
    ctx = multiprocessing.get_context("spawn")
    receiver, sender = ctx.Pipe(duplex=False)
    args = (sender, catalog, size, view, settings.cold_calls, settings.max_run_s, 31 + int(view), upserts, filler)
    proc = ctx.Process(target=_child, args=args, daemon=True, name=f"bench-in-process-{size}-{view}")
    proc.start()
    sender.close()
    budget = 4 * settings.max_run_s + 300
    try:
        if not receiver.poll(budget):
            raise RuntimeError(f"in-process measurement at {size} did not finish within {budget:g} s")
        status, payload = receiver.recv()
    except EOFError:
        raise RuntimeError(f"the in-process measurement at {size} died (exit code {proc.exitcode})") from None
    finally:
        receiver.close()
        proc.join(timeout=10)
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=10)
    if status != "ok":
        raise RuntimeError(f"in-process measurement at {size} failed:\n{payload}")
    assert isinstance(payload, InProcess)
    return payload


def in_process(catalog: Catalog, size: int, settings: Settings, label: str, upserts: bool) -> dict[str, InProcess]:
    """BASIC and FULL, each in its own fresh process; in-process upserts after BASIC when asked."""
    out: dict[str, InProcess] = {}
    for view in (BASIC, FULL):
        name = "BASIC" if view == BASIC else "FULL"
        progress(f"{label}: in-process answers, view {name} (fresh process)")
        out[name] = in_fresh_process(
            catalog, size, view, settings, settings.upserts if upserts and view == BASIC else 0
        )
    return out


def cold_figures(report: SizeReport, sec: Section, results: dict[str, InProcess], settings: Settings) -> None:
    """The in-process figures of one size."""
    for name, r in results.items():
        low = name.lower()
        report.add(sec, f"cold_{low}_p50", f"cold answer p50, view {name}", r.cold.p50_ms(), "ms")
        report.add(sec, f"cold_{low}_p99", f"cold answer p99, view {name}", r.cold.p99_ms(), "ms")
        for outcome in (SELECTED, NO_RUNTIME):
            report.add(
                sec,
                f"cold_{low}_{outcome.replace(' ', '_')}_p50",
                f"  cold p50 of '{outcome}' answers, view {name}",
                r.cold.p50_ms(outcome),
                "ms",
            )
        report.add(
            sec,
            f"cold_{low}_per_1000",
            f"  cold p50 per 1,000 runtimes, view {name}",
            r.cold.p50_ms() / (r.runtimes / 1000),
            "ms",
        )
        report.add(
            sec,
            f"warm_{low}_p50",
            f"  model seen before (new InferenceService) p50, view {name}",
            r.warm.p50_ms(),
            "ms",
        )
        report.add(sec, f"cold_{low}_bytes", f"  largest answer, view {name}", r.cold.largest(), "B")
        calls = len(r.cold.samples)
        if r.repeat_is_same:
            memo = (
                f"memo-free {r.memo_free}/{calls} by object identity"
                + (f", {r.unchecked} unchecked beyond 64 MB held" if r.unchecked else "")
                + " (an answer memo exists: a repeated request got the same object)"
            )
        else:
            memo = (
                f"memo-free {calls}/{calls} (no answer memo: a repeated request gets a new object; no request repeats)"
            )
        sec.notes.append(
            f"{name}: {calls} cold calls, {memo}; {r.cold.count(SELECTED)} selected, {r.cold.count(NO_RUNTIME)} no runtime"
            + (f"; {r.failures} request errors" if r.failures else "")
            + f"; store apply {r.apply_s:.3f} s"
        )
        for run, what in ((r.cold, f"view {name} cold"), (r.warm, f"view {name} warm")):
            note = run.cap_note(what, settings.max_run_s)
            if note:
                sec.notes.append(note)
    sec.notes.append(
        f"runtimes in scope: {next(iter(results.values())).runtimes:,} (ClusterServingRuntimes + ServingRuntimes of ns-0 … ns-19)"
    )
    sec.notes.append(
        "cold = each call a new InferenceService whose model no earlier call of that process asked (one fresh process "
        "and store per view, 1 untimed warm-up call); 'model seen before' = the same models again, new names and namespaces"
    )


# --- one size ----------------------------------------------------------------------------------


def size_label(size: int, counts: dict[str, int]) -> str:
    """``catalog (206 ClusterServingRuntimes)`` or ``10000 (10,094 ClusterServingRuntimes)``."""
    name = "catalog" if size == 0 else f"{size}"
    return f"{name} ({counts.get('cluster_serving_runtime', 0):,} ClusterServingRuntimes)"


def bench_size(
    size: int, catalog: Catalog, settings: Settings, inproc_cache: dict[int, dict[str, InProcess]]
) -> SizeReport:
    """Every figure of one size: server phases first, then in process."""
    objects = sized_objects(catalog, size)
    counts = count_kinds(objects)
    report = SizeReport(
        size_label(size, counts), "catalog" if size == 0 else str(size), counts.get("cluster_serving_runtime", 0)
    )
    report.header.append(
        "objects: "
        + ", ".join(f"{n:,} {k}" for k, n in sorted(counts.items()))
        + f"; traffic draws from {len(catalog.models)} models with a modelFormat, {len(catalog.classes) - 1} AcceleratorClasses or none, {NAMESPACES} namespaces"
    )
    cache_sec = report.section("[1] cache load")
    with running_server(settings.rss_guard_mb) as server:
        progress(
            f"{report.label}: server {server.address} (pid {server.proc.pid if server.proc else '?'}); ApplySnapshot"
        )
        apply_s, apply_bytes = apply_snapshot(server, objects)
        report.add(
            cache_sec, "apply_grpc", f"ApplySnapshot over gRPC ({apply_bytes / 2**20:.1f} MB request)", apply_s, "s"
        )
        report.add(cache_sec, "rss_after_apply", "server RSS after ApplySnapshot", server.status_mb(), "MB")
        if settings.only == "explain":
            for k in range(settings.repeat):
                progress(f"{report.label}: idle floor (run {k + 1}/{settings.repeat})")
                floor = measure_floor(server, settings)
                explain_and_full(server, catalog, settings, report, floor, f" (run {k + 1}/{settings.repeat})")
            return report
        rss = headline(server, catalog, settings, report)
        time.sleep(SETTLE_S)  # let the writer's last upsert and the server's clean-up pass
        last_floor = measure_floor(server, settings)
        memo_hits(server, catalog, settings, report, last_floor)
        explain_and_full(server, catalog, settings, report, last_floor)
        progress(f"{report.label}: UpsertObjects over gRPC")
        grpc_upsert = grpc_upserts(server, objects, settings.upserts, settings.max_run_s)
        hwm = server.status_mb("VmHWM")
        if server.over_memory.is_set():
            report.header.append(
                f"MEMORY GUARD TRIPPED: the server's RSS passed {settings.rss_guard_mb:,.0f} MB (--rss-guard-mb); "
                "runs after that point stopped early (see the notes)"
            )
    colds = in_process(catalog, size, settings, report.label, upserts=True)
    inproc_cache[report.runtimes] = colds
    upsert_run = colds["BASIC"].upserts
    report.add(
        cache_sec, "apply_inproc", "CacheStore.apply_snapshot in process (new store)", colds["BASIC"].apply_s, "s"
    )
    sec = report.section(
        "[6] in-process cold answer — rpc_selection.select_runtime(store.snapshot, request), no memo hits"
    )
    cold_figures(report, sec, colds, settings)
    sec = report.section("[7] upsert cost — one runtime, new priorities")
    assert upsert_run is not None
    report.add(sec, "upsert_inproc_p50", "store.upsert p50, in process", upsert_run.p50_ms(), "ms")
    report.add(sec, "upsert_inproc_p99", "store.upsert p99, in process", upsert_run.p99_ms(), "ms")
    report.add(sec, "upsert_grpc_p50", "UpsertObjects p50, gRPC, idle server", grpc_upsert.p50_ms(), "ms")
    report.add(sec, "upsert_grpc_p99", "UpsertObjects p99, gRPC, idle server", grpc_upsert.p99_ms(), "ms")
    sec.notes.append(
        f"{len(upsert_run.samples)} in process, {len(grpc_upsert.samples)} over gRPC, each replacing an existing runtime of the snapshot"
    )
    for note in (
        upsert_run.cap_note("in process", settings.max_run_s),
        grpc_upsert.cap_note("gRPC", settings.max_run_s),
    ):
        if note:
            sec.notes.append(note)
    rss_section(report, rss, hwm, settings)
    report.sections.sort(key=lambda s: s.title)  # [1] … [8]
    return report


def growth_report(catalog: Catalog, settings: Settings, inproc_cache: dict[int, dict[str, InProcess]]) -> SizeReport:
    """In-process cold answers over several sizes and the growth exponent."""
    report = SizeReport("growth (in process)", "growth", 0)
    for size in settings.growth_sizes:
        objects = sized_objects(catalog, size)
        n = count_kinds(objects).get("cluster_serving_runtime", 0)
        if n in inproc_cache:
            continue
        colds = in_process(catalog, size, settings, f"growth {size}", upserts=False)
        inproc_cache[n] = colds
    sec = report.section("in-process cold answer by size (p50 per call; per 1,000 runtimes)")
    for n in sorted(inproc_cache):
        for name, r in inproc_cache[n].items():
            report.add(
                sec,
                f"growth_{n}_{name.lower()}",
                f"{r.runtimes:>6,} runtimes, view {name:<5}: cold p50",
                r.cold.p50_ms(),
                "ms",
            )
            report.add(
                sec,
                f"growth_{n}_{name.lower()}_per_1000",
                f"{r.runtimes:>6,} runtimes, view {name:<5}: cold p50 per 1,000 runtimes",
                r.cold.p50_ms() / (r.runtimes / 1000),
                "ms",
            )
    fit = report.section(
        f"growth fit — least squares of log(p50) on log(N) over the sizes ≥ 1,000 (exponent 1 = linear; target ≤ {GROWTH_LINEAR})"
    )
    for name in ("BASIC", "FULL"):
        points = [
            (c[name].runtimes, c[name].cold.p50_ms())
            for n, c in sorted(inproc_cache.items())
            if c[name].runtimes >= 1000
        ]
        fig = report.add(
            fit,
            f"growth_exponent_{name.lower()}",
            f"exponent, view {name} ({len(points)} sizes)",
            growth_exponent(points),
            "exp",
        )
        if name == "BASIC":
            fig.target = Target(f"≤ {GROWTH_LINEAR} (linear)", GROWTH_LINEAR)
    fixed = report.section(
        "growth with the matching runtimes fixed — the catalog plus runtimes of formats no model has (fresh process each)"
    )
    points = []
    for size in settings.fixed_sizes:
        progress(f"growth (fixed matching runtimes) {size}: in-process answers, view BASIC (fresh process)")
        r = in_fresh_process(catalog, size, BASIC, settings, 0, filler=True)
        points.append((r.runtimes, r.cold.p50_ms()))
        report.add(
            fixed, f"fixed_{size}_basic", f"{r.runtimes:>6,} runtimes, view BASIC: cold p50", r.cold.p50_ms(), "ms"
        )
        for outcome in (SELECTED, NO_RUNTIME):
            report.add(
                fixed,
                f"fixed_{size}_{outcome.replace(' ', '_')}",
                f"{r.runtimes:>6,} runtimes, view BASIC: cold p50 of '{outcome}'",
                r.cold.p50_ms(outcome),
                "ms",
            )
    fig = report.add(
        fixed,
        "fixed_growth_exponent",
        f"exponent, view BASIC, matching runtimes fixed ({len(points)} sizes)",
        growth_exponent(points),
        "exp",
    )
    return report


# --- main --------------------------------------------------------------------------------------


def run_header(settings: Settings) -> str:
    """Who, what and where of the run."""
    commit = "?"
    try:
        commit = (
            subprocess.run(
                ["git", "-C", str(_repo_root()), "describe", "--always", "--dirty"],
                capture_output=True,
                text=True,
                timeout=10,
            ).stdout.strip()
            or "?"
        )
    except (OSError, subprocess.SubprocessError):
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    sizes = ",".join("catalog" if s == 0 else str(s) for s in settings.sizes)
    return "\n".join(
        [
            "ome-selector benchmark — real traffic",
            f"command: python -m tools.bench {' '.join(settings.argv)}".rstrip(),
            f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}; commit {commit}; python {platform.python_version()}; "
            f"{os.cpu_count()} CPUs; load average {load}",
            f"shared: {settings.shared}; sizes {sizes}; calls {settings.calls} (1 client), {settings.calls8}×8 (8 clients), "
            f"{settings.side_calls} (ExplainRuntimes, FULL); repeat {settings.repeat}; "
            + (f"soak {settings.soak_s:g} s; " if settings.soak_s else "")
            + f"cap {settings.max_run_s:g} s per run; memory guard {settings.rss_guard_mb:,.0f} MB of server RSS",
            f"server: {' '.join(server_command('127.0.0.1:0'))}",
            "ratios: against the idle health Check floor of the same run; PASS/MISS: the targets of docs/architecture.md",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and print the report."""
    settings = parse_args(list(sys.argv[1:] if argv is None else argv))
    atexit.register(_kill_live)
    previous = {s: signal.signal(s, _on_sigterm) for s in (signal.SIGTERM, signal.SIGHUP)}
    reports: list[SizeReport] = []
    started = time.monotonic()
    try:
        catalog = load_catalog(settings.shared)
        print(run_header(settings), flush=True)
        inproc_cache: dict[int, dict[str, InProcess]] = {}
        for size in settings.sizes:
            report = bench_size(size, catalog, settings, inproc_cache)
            reports.append(report)
            print("\n" + render_size(report, settings.repeat), flush=True)
        if settings.only:
            return 0
        growth = growth_report(catalog, settings, inproc_cache)
        reports.append(growth)
        print("\n" + render_size(growth, 1), flush=True)
    except KeyboardInterrupt:
        print("\nbench: interrupted; the server was stopped", file=sys.stderr)
        return 130
    finally:
        _kill_live()
        for s, handler in previous.items():
            signal.signal(s, handler)
    targets = [f for r in reports for _, f in r.figures() if f.target is not None]
    passed = sum(1 for f in targets if f.status() == "PASS")
    print(f"\nall targets: {passed}/{len(targets)} PASS; wall time {time.monotonic() - started:.0f} s")
    if settings.emit_json:
        for r in reports:
            for sec, fig in r.figures():
                print(figure_json(r, sec, fig))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
