"""Prometheus metrics of one server, in their own ``CollectorRegistry`` (never the global one, so
one process can run several servers, as the tests do).

gRPC metrics, in go-grpc-prometheus's names, labels and values (dashboards and alerts made for
grpc-go servers work unchanged). ``grpc_type`` is ``unary``, ``server_stream``, ``client_stream``
or ``bidi_stream``; a stream is one RPC, counted when it starts and when it ends; ``grpc_code``
is grpc-go's ``codes.Code.String()`` (``OK``, ``InvalidArgument``, ``Canceled``, ...):

- ``grpc_server_started_total{grpc_type,grpc_service,grpc_method}``: RPCs whose handler started.
- ``grpc_server_handled_total{grpc_type,grpc_service,grpc_method,grpc_code}``: RPCs finished.
- ``grpc_server_msg_received_total{grpc_type,grpc_service,grpc_method}``: request messages
  received (1 per unary request, N per request stream).
- ``grpc_server_msg_sent_total{grpc_type,grpc_service,grpc_method}``: response messages sent
  (1 per answered unary call, N per response stream).
- ``grpc_server_handling_seconds{grpc_type,grpc_service,grpc_method}``: histogram of handler
  time (for a stream: until it ends), seconds.

Cache and selection metrics:

- ``ome_selector_cache_objects{kind}``: cached objects per kind (ServingRuntime, ...), every
  kind present, 0 when none.
- ``ome_selector_cache_generation``: the cache generation (0 before the first write).
- ``ome_selector_cache_synced``: 1 once ApplySnapshot (or loading manifests) synced the cache.
- ``ome_selector_cache_seconds_since_last_write``: seconds since the last successful write;
  absent before the first write.
- ``ome_selector_cache_write_seconds{grpc_method}``: histogram of ApplySnapshot, UpsertObjects
  and DeleteObjects call time (accepted or rejected), seconds.
- ``ome_selector_cache_writes_rejected_total{grpc_method,grpc_code}``: cache writes that ended
  with a status other than OK (the cache is unchanged); ``grpc_code`` as above.
- ``ome_selector_selections_total{outcome}``: SelectRuntime answers by outcome (``OUTCOMES``),
  derived from the response message, or ``error`` for any status other than OK.

WatchSelections (``watch(tracker)``):

- ``ome_selector_watch_reevaluations_total``: InferenceServices evaluated again after cache writes
  (only those a write can change; 0 for a write that can move none).
- ``ome_selector_watch_writes_total``: cache writes the tracker processed.
- ``ome_selector_watch_advances_total``: re-evaluations it made (fewer than the writes when writes
  came faster than it evaluates and it coalesced them).
- ``ome_selector_watch_resyncs_total``: resyncs sent to watchers that fell behind.
- ``ome_selector_watchers``: WatchSelections streams open.

Start and build:

- ``ome_selector_manifest_objects_rejected``: manifest objects the loader rejected at start.
- ``ome_selector_build_info{version,revision,python}``: always 1; the package version, the
  source revision (``OME_SELECTOR_REVISION``, set when the image is built; ``unknown`` without
  it) and the Python version.

Plus prometheus-client's collectors: ``python_info`` (platform), ``python_gc_*`` (GC) and
``process_*`` (process). No ``_created`` series (``disable_created_metrics``).
"""

from __future__ import annotations

import os
import platform
import time
from importlib import metadata
from typing import Any, Callable, Iterator

from ome.selector.v1 import selector_pb2
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from ome_selector.cache.store import CacheStore

__all__ = ["GO_CODE_NAMES", "GRPC_TYPES", "OUTCOMES", "ServerMetrics", "go_code", "selection_outcome"]

SELECTION_SERVICE = "ome.selector.v1.SelectionService"
CACHE_SERVICE = "ome.selector.v1.CacheService"
CACHE_WRITES = ("ApplySnapshot", "UpsertObjects", "DeleteObjects")
# SelectRuntime outcomes: a runtime auto-selected; a named runtime used (with OME's "does not
# declare support" warning, or without one); no runtime found; OK answers that carry a model or
# named-runtime error instead of a selection; and any failed call.
OUTCOMES = ("auto_selected", "named", "named_with_warning", "no_runtime_found", "model_error", "runtime_error", "error")
# Handler time buckets, seconds: sub-millisecond selections up to multi-second snapshot writes.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
# ``grpc_type`` by the handler kind grpcio gives a method (grpc.RpcMethodHandler attributes).
GRPC_TYPES = {
    "unary_unary": "unary",
    "unary_stream": "server_stream",
    "stream_unary": "client_stream",
    "stream_stream": "bidi_stream",
}
# grpc.StatusCode names -> grpc-go's codes.Code.String(), the ``grpc_code`` values of grpc-go.
GO_CODE_NAMES = {
    "OK": "OK",
    "CANCELLED": "Canceled",
    "UNKNOWN": "Unknown",
    "INVALID_ARGUMENT": "InvalidArgument",
    "DEADLINE_EXCEEDED": "DeadlineExceeded",
    "NOT_FOUND": "NotFound",
    "ALREADY_EXISTS": "AlreadyExists",
    "PERMISSION_DENIED": "PermissionDenied",
    "RESOURCE_EXHAUSTED": "ResourceExhausted",
    "FAILED_PRECONDITION": "FailedPrecondition",
    "ABORTED": "Aborted",
    "OUT_OF_RANGE": "OutOfRange",
    "UNIMPLEMENTED": "Unimplemented",
    "INTERNAL": "Internal",
    "UNAVAILABLE": "Unavailable",
    "DATA_LOSS": "DataLoss",
    "UNAUTHENTICATED": "Unauthenticated",
}


def go_code(name: str) -> str:
    """grpc-go's name of the status code called ``name`` in grpcio (``INVALID_ARGUMENT`` ->
    ``InvalidArgument``); ``Unknown`` for a name that is not a status code."""
    return GO_CODE_NAMES.get(name, "Unknown")


def build_info() -> dict[str, str]:
    """The ``ome_selector_build_info`` labels: version, revision, python."""
    try:
        version = metadata.version("ome-selector")
    except metadata.PackageNotFoundError:
        version = "0+unknown"
    revision = os.environ.get("OME_SELECTOR_REVISION", "").strip() or "unknown"
    return {"version": version, "revision": revision, "python": platform.python_version()}


def selection_outcome(response: Any, code: str) -> str:
    """The ``outcome`` label of one SelectRuntime call: ``code`` is its status code name,
    ``response`` the SelectRuntimeResponse, or its bytes when the answer came serialized
    (``rpc.selection.encode_select``), None when the call failed."""
    if code == "OK" and isinstance(response, bytes):
        response = selector_pb2.SelectRuntimeResponse.FromString(response)
    if code != "OK" or not isinstance(response, selector_pb2.SelectRuntimeResponse):
        return "error"
    if response.HasField("selection"):
        if response.selection.mode == selector_pb2.SELECTION_MODE_NAMED:
            named_warning = any("does not declare support" in w for w in response.warnings)
            return "named_with_warning" if named_warning else "named"
        return "auto_selected"
    if response.model_error:
        return "model_error"
    if response.runtime_error:
        return "runtime_error"
    return "no_runtime_found"


class _CacheCollector(Collector):
    """Reads the store's current snapshot at every scrape (snapshots are immutable)."""

    def __init__(self, store: CacheStore) -> None:
        self._store = store

    def collect(self) -> Iterator[GaugeMetricFamily]:
        snapshot = self._store.snapshot
        objects = GaugeMetricFamily("ome_selector_cache_objects", "Cached objects per kind.", labels=["kind"])
        for kind, count in sorted(snapshot.counts().items()):
            objects.add_metric([kind], count)
        yield objects
        yield GaugeMetricFamily(
            "ome_selector_cache_generation", "Cache generation (0 before the first write).", value=snapshot.generation
        )
        yield GaugeMetricFamily(
            "ome_selector_cache_synced", "1 once the cache has been synced.", value=1 if snapshot.synced else 0
        )
        if snapshot.last_update is not None:
            yield GaugeMetricFamily(
                "ome_selector_cache_seconds_since_last_write",
                "Seconds since the last successful cache write.",
                value=max(0.0, time.time() - snapshot.last_update),
            )


class _WatchCollector(Collector):
    """Reads the tracker's counters at every scrape."""

    def __init__(self, tracker: Any) -> None:
        self._tracker = tracker

    def collect(self) -> Iterator[Any]:
        t = self._tracker
        for name, text, value in (
            (
                "ome_selector_watch_reevaluations",
                "InferenceServices evaluated again after cache writes.",
                t.reevaluations,
            ),
            ("ome_selector_watch_writes", "Cache writes the watch tracker processed.", t.writes),
            (
                "ome_selector_watch_advances",
                "Re-evaluations the watch tracker made (fewer than writes when it coalesced them).",
                t.advances,
            ),
            ("ome_selector_watch_resyncs", "Resyncs sent to watchers that fell behind.", t.resyncs),
        ):
            yield CounterMetricFamily(name, text, value=value)
        yield GaugeMetricFamily("ome_selector_watchers", "WatchSelections streams open.", value=t.watchers)


class ServerMetrics:
    """The metrics of one server over ``store``; ``registry`` is what ``/metrics`` exposes."""

    def __init__(self, store: CacheStore) -> None:
        disable_created_metrics()  # process-wide: no ``_created`` series beside counters and histograms
        self.registry = CollectorRegistry(auto_describe=True)
        labels = ["grpc_type", "grpc_service", "grpc_method"]
        self.started = Counter(
            "grpc_server_started_total", "RPCs started on the server.", labels, registry=self.registry
        )
        self.handled = Counter(
            "grpc_server_handled_total",
            "RPCs completed on the server, by status code.",
            [*labels, "grpc_code"],
            registry=self.registry,
        )
        self.msg_received = Counter(
            "grpc_server_msg_received_total", "Request messages received.", labels, registry=self.registry
        )
        self.msg_sent = Counter("grpc_server_msg_sent_total", "Response messages sent.", labels, registry=self.registry)
        self.handling = Histogram(
            "grpc_server_handling_seconds",
            "Handler time of RPCs (streams: until they end), seconds.",
            labels,
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.write_seconds = Histogram(
            "ome_selector_cache_write_seconds",
            "Time of cache write calls (accepted or rejected), seconds.",
            ["grpc_method"],
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.writes_rejected = Counter(
            "ome_selector_cache_writes_rejected_total",
            "Cache writes rejected (status other than OK).",
            ["grpc_method", "grpc_code"],
            registry=self.registry,
        )
        self.selections = Counter(
            "ome_selector_selections_total", "SelectRuntime answers by outcome.", ["outcome"], registry=self.registry
        )
        self.manifest_rejected = Gauge(
            "ome_selector_manifest_objects_rejected",
            "Manifest objects the loader rejected at start (serve --manifests).",
            registry=self.registry,
        )
        for outcome in OUTCOMES:
            self.selections.labels(outcome)
        for method in CACHE_WRITES:
            self.write_seconds.labels(method)
        self.build_info = Gauge(
            "ome_selector_build_info",
            "Always 1: the version, source revision and Python version.",
            ["version", "revision", "python"],
            registry=self.registry,
        )
        self.build_info.labels(**build_info()).set(1)
        self.registry.register(_CacheCollector(store))
        PlatformCollector(registry=self.registry)
        GCCollector(registry=self.registry)
        ProcessCollector(registry=self.registry)

    def watch(self, tracker: Any) -> None:
        """Expose the counters of a ``watch.SelectionTracker``."""
        self.registry.register(_WatchCollector(tracker))

    def rpc_started(self, kind: str, service: str, method: str) -> None:
        """Count one RPC whose handler starts; ``kind`` is its ``grpc_type``."""
        self.started.labels(kind, service, method).inc()

    def message_received(self, kind: str, service: str, method: str) -> None:
        """Count one request message of an RPC."""
        self.msg_received.labels(kind, service, method).inc()

    def message_sent(self, kind: str, service: str, method: str) -> None:
        """Count one response message of an RPC."""
        self.msg_sent.labels(kind, service, method).inc()

    def sent_counter(self, kind: str, service: str, method: str) -> Callable[[], None]:
        """What counts one response message of an RPC, looked up once (a stream sends many)."""
        return self.msg_sent.labels(kind, service, method).inc  # type: ignore[no-any-return]

    def rpc_finished(self, kind: str, service: str, method: str, code: str, seconds: float, response: Any) -> None:
        """Record one finished RPC: its ``grpc_type``, grpcio's status ``code`` name
        (``INVALID_ARGUMENT``), handler time in ``seconds``, and the response message (None
        when the call failed)."""
        name = go_code(code)
        self.handled.labels(kind, service, method, name).inc()
        self.handling.labels(kind, service, method).observe(seconds)
        if service == SELECTION_SERVICE and method == "SelectRuntime":
            self.selections.labels(selection_outcome(response, code)).inc()
        elif service == CACHE_SERVICE and method in CACHE_WRITES:
            self.write_seconds.labels(method).observe(seconds)
            if code != "OK":
                self.writes_rejected.labels(method, name).inc()
