"""The gRPC server: selection and cache services, health, reflection, metrics, probes, drain.

``serve()`` loads the manifests (or the embedded example catalog) into a ``CacheStore``, binds a
``grpc.aio`` server on ``ServeOptions.listen`` (plaintext, or TLS / mTLS), optionally a second
one on ``cache_listen`` that alone carries CacheService, optionally the HTTP listener
(``http_probe``: ``/healthz``, ``/readyz``, ``/metrics``), and runs until SIGTERM or SIGINT.

Health (``grpc.health.v1``): ``ome.selector.v1.CacheService`` is SERVING from the start; the
overall service ``""`` and ``ome.selector.v1.SelectionService`` are NOT_SERVING until the cache
has been loaded or synced once. Drain, on the first SIGTERM/SIGINT: every health entry turns
NOT_SERVING and ``/readyz`` 503 at once; the server keeps serving for ``drain_delay`` seconds
(a second signal ends that early); then it stops accepting calls and gives in-flight calls up to
``grace`` seconds; then it returns 0.

Everything is logged to stderr, including ``listening on <address>`` (with the real port when
port 0 was asked for), ``CacheService on <address> (only there)`` and ``http endpoints on
<host:port>``. Per-RPC lines are INFO, except health and reflection calls (DEBUG).
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import inspect
import json
import logging
import os
import signal
import socket
import sys
import threading
import time
from typing import Any, Awaitable, Callable, Sequence, TextIO

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]  # missing from grpc-stubs
from grpc_reflection.v1alpha import reflection
from ome.selector.v1 import cache_pb2, selector_pb2

from ome_selector.cache import manifests as manifest_loader
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.examples import example_paths
from ome_selector.flows.watch import DEFAULT_QUEUE_LIMIT, SelectionTracker
from ome_selector.rpc import wire
from ome_selector.rpc.servicers import CacheServicer, SelectionServicer
from ome_selector.server.addresses import parse_http_listen, parse_listen
from ome_selector.server.http import ProbeServer
from ome_selector.server.metrics import ServerMetrics
from ome_selector.server.native_stderr import NativeStderr

log = logging.getLogger("ome_selector.server")
rpc_log = logging.getLogger("ome_selector.rpc")

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_GRACE = 5.0
DEFAULT_DRAIN_DELAY = 0.0
DEFAULT_SOCKET_MODE = 0o600
DEFAULT_MAX_CONCURRENT_STREAMS = 100
# Message limits, both directions: a snapshot of a large cluster (10,000 runtimes is about
# 4.5 MB) and its ExplainRuntimes answer (about 8 MB) exceed gRPC's 4 MiB default.
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
# Keepalive enforcement (what the server accepts from clients), documented in the README:
# - pings without calls in flight are allowed (a controller's channel is idle most of the time);
# - a client may ping every 500 ms at most (Go's keepalive.ClientParameters cannot go below
#   10 s; gRPC Python/C++ clients configured with 1 s pings are accepted too);
# - 2 pings faster than that are tolerated; the third gets GOAWAY ENHANCE_YOUR_CALM
#   "too_many_pings" (gRPC's own default strike count, set explicitly).
# The server pings an idle client every 60 s and drops it after 20 s without an answer.
KEEPALIVE_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_ping_interval_without_data_ms", 500),
    ("grpc.http2.max_ping_strikes", 2),
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
)
SELECTION_SERVICE = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"].full_name
CACHE_SERVICE = cache_pb2.DESCRIPTOR.services_by_name["CacheService"].full_name
# Health entries that follow the cache's sync state.
SYNC_GATED_SERVICES = ("", SELECTION_SERVICE)
# Services whose per-RPC log lines are DEBUG (probes and tooling, not traffic).
QUIET_SERVICES = (health.SERVICE_NAME, reflection.SERVICE_NAME, "grpc.reflection.v1.ServerReflection")
# Drain: at most this long with no call in flight before the listeners close (InFlight.quiet_period).
QUIET_PERIOD = 0.5
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
_HANDLER_NAME = "ome-selector-stderr"


@dataclasses.dataclass(frozen=True)
class ServeOptions:
    """Everything ``ome-selector serve`` can be told (flags / ``OME_SELECTOR_*`` env vars).

    ``listen`` / ``cache_listen``: gRPC addresses (``addresses.parse_listen``); ``cache_listen``
    None keeps CacheService on ``listen``. ``http_listen``: ``host:port`` of the probe and metrics
    listener, None for none. ``socket_mode``: permission bits of unix sockets the server creates.
    ``grace``, ``drain_delay``: seconds. ``tls_cert``/``tls_key``: PEM files for TLS on
    ``listen``; ``tls_client_ca``: PEM CA bundle that client certificates must chain to (mTLS).
    ``manifests`` None loads the embedded examples; ``wait_for_sync`` loads nothing; ``strict``
    makes any object or path the loader rejects fatal. ``watch_queue``: events a WatchSelections
    stream may have waiting before it gets ``resync`` (``watch.SelectionTracker``).
    """

    listen: str = DEFAULT_LISTEN
    manifests: Sequence[str] | None = None
    log_format: str = "text"
    log_level: str = "info"
    grace: float = DEFAULT_GRACE
    drain_delay: float = DEFAULT_DRAIN_DELAY
    wait_for_sync: bool = False
    strict: bool = False
    socket_mode: int = DEFAULT_SOCKET_MODE
    http_listen: str | None = None
    cache_listen: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None
    reflection: bool = True
    max_concurrent_streams: int = DEFAULT_MAX_CONCURRENT_STREAMS
    watch_queue: int = DEFAULT_QUEUE_LIMIT

    def problems(self) -> list[str]:
        """What is wrong with these options (empty when they can be served)."""
        found = []
        for value, parse in (
            (self.listen, parse_listen),
            (self.cache_listen, parse_listen),
            (self.http_listen, parse_http_listen),
        ):
            if value is not None:
                try:
                    parse(value)
                except ValueError as exc:
                    found.append(f"cannot listen on {value}: {exc}")
        if self.cache_listen is not None and self.cache_listen == self.listen:
            found.append(f"cannot listen on {self.cache_listen}: --cache-listen must differ from --listen")
        if bool(self.tls_cert) != bool(self.tls_key):
            found.append("tls: --tls-cert and --tls-key go together")
        if self.tls_client_ca and not self.tls_cert:
            found.append("tls: --tls-client-ca needs --tls-cert and --tls-key")
        if self.log_format not in LOG_FORMATS:
            found.append(f"log_format: want one of {', '.join(LOG_FORMATS)}")
        if self.log_level not in LOG_LEVELS:
            found.append(f"log_level: want one of {', '.join(LOG_LEVELS)}")
        if not 0 <= self.socket_mode <= 0o777:
            found.append(f"socket_mode: {self.socket_mode:o} is not a permission mode (0..777 octal)")
        if self.max_concurrent_streams < 1:
            found.append("max_concurrent_streams: must be 1 or more")
        if self.watch_queue < 1:
            found.append("watch_queue: must be 1 or more")
        return found


# --- logging -----------------------------------------------------------------------------------


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any ``fields`` extra."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, separators=(",", ":"), default=str)


# Control characters (C0, DEL, C1, and the Unicode line/paragraph separators) and the backslash
# itself, as escapes: one log record is always one line, whatever names a request carries.
_ESCAPES = {i: f"\\x{i:02x}" for i in [*range(0x20), *range(0x7F, 0xA0)]}
_ESCAPES.update(
    {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\", 0x2028: "\\u2028", 0x2029: "\\u2029"}
)


def escape_text(value: object) -> str:
    """``str(value)`` with control characters and backslashes escaped (``\\n``, ``\\x1b``, ``\\\\``)."""
    return str(value).translate(_ESCAPES)


def _field_value(value: object) -> str:
    text = escape_text(value)
    if text == "" or any(c in text for c in ' "='):
        return '"' + text.replace('"', '\\"') + '"'
    return text


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger>: <message> key=value ...``, one line per record: control
    characters in the message, the field values and any traceback are escaped; a field value
    with a space, ``"`` or ``=`` is quoted."""

    def __init__(self) -> None:
        super().__init__(datefmt="%Y-%m-%dT%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        stamp = self.formatTime(record, self.datefmt) + f".{int(record.msecs):03d}Z"
        text = f"{stamp} {record.levelname} {escape_text(record.name)}: {escape_text(record.getMessage())}"
        fields = getattr(record, "fields", None)
        if fields:
            text += "".join(f" {escape_text(key)}={_field_value(value)}" for key, value in fields.items())
        if record.exc_info:
            text += f" exception={_field_value(self.formatException(record.exc_info))}"
        return text


def configure_logging(log_format: str, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Send all logs to ``stream`` (default stderr) in ``text`` or ``json`` format (UTC times)."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"unknown log format {log_format!r} (want one of {', '.join(LOG_FORMATS)})")
    formatter: logging.Formatter = JsonFormatter() if log_format == "json" else TextFormatter()
    formatter.converter = time.gmtime
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter)
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)  # configured before: replace, don't duplicate
    root.addHandler(handler)
    root.setLevel(level)


# --- per-RPC interceptor: one log line and the gRPC metrics ------------------------------------


class RpcInterceptor(grpc.aio.ServerInterceptor):
    """For every RPC: counts it started and finished in ``metrics`` (when given), and logs one
    line when it ends with method, status code name and duration in ms (DEBUG for health and
    reflection, ERROR for UNKNOWN/INTERNAL, else INFO)."""

    def __init__(self, metrics: ServerMetrics | None = None, in_flight: InFlight | None = None) -> None:
        self._metrics = metrics
        self._in_flight = in_flight

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:  # unknown method: grpc answers UNIMPLEMENTED itself
            return handler
        call = _Call(handler_call_details.method, self._metrics, self._in_flight)
        for attribute, make, wrap in _handler_kinds():
            behavior = getattr(handler, attribute)
            if behavior is not None:
                return make(  # type: ignore[no-any-return]
                    wrap(call, behavior),
                    request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer,
                )
        return handler


RpcLoggingInterceptor = RpcInterceptor  # the name before metrics were added


class InFlight:
    """How many API and cache calls are running, and when (``time.monotonic()``) one last
    started or ended. Health and reflection calls, such as long-lived health Watch streams, are
    not counted. Touched on the event loop only."""

    def __init__(self) -> None:
        self.count = 0
        self.changed = time.monotonic()
        self.recent_longest = 0.0  # seconds: the longest call that ended in the last 2 s (about)
        self._recent_since = self.changed

    def add(self, delta: int, seconds: float = 0.0) -> None:
        """One call started (+1), or ended (-1) after ``seconds``."""
        now = time.monotonic()
        self.count += delta
        self.changed = now
        if delta < 0 and (seconds > self.recent_longest or now - self._recent_since > 2.0):
            self.recent_longest, self._recent_since = seconds, now

    def quiet_period(self) -> float:
        """How long nothing must be in flight before the listeners close: twice the longest
        recent call (calls queue in C-core only behind calls that held the event loop), from
        50 ms up to ``QUIET_PERIOD``."""
        return min(QUIET_PERIOD, max(0.05, 2 * self.recent_longest))


class _Call:
    """Per-method bookkeeping shared by the wrappers below."""

    def __init__(self, method: str, metrics: ServerMetrics | None, in_flight: InFlight | None) -> None:
        self.method = method
        service, _, name = method.lstrip("/").partition("/")
        self.service, self.name = service, name
        self.metrics = metrics
        quiet = service in QUIET_SERVICES
        self.level = logging.DEBUG if quiet else logging.INFO
        self.in_flight = None if quiet else in_flight

    def started(self) -> float:
        if self.metrics is not None:
            self.metrics.rpc_started(self.service, self.name)
        if self.in_flight is not None:
            self.in_flight.add(1)
        return time.perf_counter()

    def finished(self, context: Any, started: float, error: BaseException | None, response: Any) -> None:
        seconds = time.perf_counter() - started
        if self.in_flight is not None:
            self.in_flight.add(-1, seconds)
        code = _outcome(context, error)
        if self.metrics is not None:
            self.metrics.rpc_finished(self.service, self.name, code, seconds, response if error is None else None)
        level = logging.ERROR if code in ("UNKNOWN", "INTERNAL") else self.level
        rpc_log.log(
            level,
            "rpc",
            extra={"fields": {"method": self.method, "code": code, "duration_ms": round(seconds * 1000, 3)}},
        )


def _handler_kinds() -> tuple[
    tuple[str, Callable[..., Any], Callable[[_Call, Callable[..., Any]], Callable[..., Any]]], ...
]:
    return (
        ("unary_unary", grpc.unary_unary_rpc_method_handler, _wrap_unary),
        ("stream_unary", grpc.stream_unary_rpc_method_handler, _wrap_unary),
        ("unary_stream", grpc.unary_stream_rpc_method_handler, _wrap_streaming),
        ("stream_stream", grpc.stream_stream_rpc_method_handler, _wrap_streaming),
    )


def _outcome(context: Any, error: BaseException | None) -> str:
    code = context.code()  # set by abort() / set_code(); None when the handler just returned
    if isinstance(code, grpc.StatusCode):
        return code.name
    if error is None:
        return "OK"
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    return "UNKNOWN"  # what grpc answers for an exception that escapes a handler


class _Tracked:
    """One call's bookkeeping around its handler: ``async with _Tracked(call, context) as t``
    counts it started, and when the block ends (returned, raised or cancelled) finished, with
    the response the block left in ``t.response``."""

    def __init__(self, call: _Call, context: Any) -> None:
        self.call, self.context, self.response = call, context, None
        self.started = 0.0

    async def __aenter__(self) -> _Tracked:
        self.started = self.call.started()
        return self

    async def __aexit__(self, kind: Any, error: BaseException | None, tb: Any) -> None:
        self.call.finished(self.context, self.started, error, self.response)


def _wrap_unary(call: _Call, behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def wrapped(request: Any, context: Any) -> Any:
        async with _Tracked(call, context) as tracked:
            result = behavior(request, context)
            tracked.response = await result if inspect.isawaitable(result) else result
            return tracked.response

    return wrapped


def _wrap_streaming(call: _Call, behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def wrapped(request: Any, context: Any) -> Any:
        async with _Tracked(call, context):
            result = behavior(request, context)
            if hasattr(result, "__aiter__"):
                async for response in result:
                    yield response
            elif hasattr(result, "__iter__"):
                for response in result:
                    yield response
            else:  # a coroutine that writes with context.write()
                await result

    return wrapped


# --- the server --------------------------------------------------------------------------------


def load_store(
    store: CacheStore, paths: Sequence[str], *, strict: bool = False, metrics: ServerMetrics | None = None
) -> bool:
    """Load manifests into ``store`` as one snapshot; log what was found, each rejected object
    included, and serve the rest. False on failure: the snapshot is refused, or with ``strict``
    any object or path was rejected."""
    result = manifest_loader.load_manifests(paths)
    if metrics is not None:
        metrics.manifest_rejected.set(result.rejected_count)
    for line in result.skipped:
        log.info("%s", line)
    for line in result.warnings:
        log.warning("%s", line)
    for line in result.errors:
        log.error("%s", line)
    if strict and not result.clean:
        log.error("--strict: %d objects rejected, %d paths unreadable", result.rejected_count, len(result.path_errors))
        return False
    version = manifest_loader.manifests_version(result.objects)
    try:
        status = store.apply_snapshot(version, result.objects)
    except RequestError as error:
        log.error("manifests rejected: %s", error.message)
        for violation in error.violations:
            log.error("  %s: %s", violation.field, violation.description)
        return False
    log.info(
        "cache loaded from manifests",
        extra={
            "fields": {
                "version": status.version,
                "objects": len(result.objects),
                "rejected": result.rejected_count,
                "path_errors": len(result.path_errors),
            }
        },
    )
    return True


def display_address(listen: str, port: int) -> str:
    """The address actually bound: ``listen`` with the real port, or the unix socket as given."""
    if listen.startswith(("unix:", "unix-abstract:")):
        return listen
    host, colon, _ = listen.rpartition(":")
    return f"{host}:{port}" if colon and not host.endswith(":") else f"{listen}:{port}"


# How long a worker thread may hold the GIL before the event loop gets it (seconds; Python's
# default is 0.005): large answers run in worker threads, and health checks and small calls on
# the loop should wait for them no more than this.
SWITCH_INTERVAL = 0.0005


class _FreezeAfterBulkWrites:
    """Store listener: after a write that changed the number of cached objects by a tenth or
    more (a first sync, an ApplySnapshot of a new cluster), collect garbage and ``gc.freeze()``
    what is left, so the cyclic collector stops walking the compiled snapshot (hundreds of
    thousands of long-lived objects at 10,000 runtimes) and stalling answers for tens of
    milliseconds. Small writes do not freeze: freezing also freezes any not-yet-collected cyclic
    garbage of the calls in flight, which would then never be freed."""

    def __init__(self, objects: int) -> None:
        self.objects = objects

    def __call__(self, snapshot: Any) -> None:
        count = len(snapshot.objects)
        if abs(count - self.objects) * 10 >= max(self.objects, 100):
            self.objects = count
            gc.collect()
            gc.freeze()


def tune_interpreter(store: CacheStore) -> None:
    """Process settings for a long-running server: a short GIL switch interval (see
    ``SWITCH_INTERVAL``), and the loaded cache frozen out of the cyclic collector's way now and
    after every bulk write (``_FreezeAfterBulkWrites``). Frozen objects are still freed by
    reference counting when a later snapshot replaces them."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    gc.collect()
    gc.freeze()
    store.add_listener(_FreezeAfterBulkWrites(len(store.snapshot.objects)))


def server_options(max_concurrent_streams: int = DEFAULT_MAX_CONCURRENT_STREAMS) -> list[tuple[str, int]]:
    """The ``grpc.aio.server`` channel arguments: message limits, keepalive policy, stream cap."""
    return [
        ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ("grpc.max_concurrent_streams", max_concurrent_streams),
        *KEEPALIVE_OPTIONS,
        # Never share a port with another server (gRPC sets SO_REUSEPORT by default).
        ("grpc.so_reuseport", 0),
    ]


async def serve(
    options: ServeOptions | str | None = None,
    manifests: Sequence[str] | None = None,
    log_format: str = "text",
    *,
    grace: float = DEFAULT_GRACE,
    wait_for_sync: bool = False,
    store: CacheStore | None = None,
    stop_event: asyncio.Event | None = None,
    on_listening: Callable[[str], None] | None = None,
) -> int:
    """Run the server until SIGTERM/SIGINT (or ``stop_event`` is set), drain, return the exit
    status: 0 after a drain, 1 when the options, manifests, TLS files or an address are unusable.

    ``options`` is a ``ServeOptions``; the older form ``serve(listen, manifests, log_format,
    grace=..., wait_for_sync=...)`` still works (those arguments are ignored with ServeOptions).
    ``store``, ``stop_event`` and ``on_listening`` (called with the bound API address) are for
    embedding and tests.
    """
    if not isinstance(options, ServeOptions):
        options = ServeOptions(
            listen=options or DEFAULT_LISTEN,
            manifests=manifests,
            log_format=log_format,
            grace=grace,
            wait_for_sync=wait_for_sync,
        )
    native = NativeStderr() if options.log_format == "json" else None
    stream = native.start() if native is not None else None
    configure_logging(options.log_format, getattr(logging, options.log_level.upper(), logging.INFO), stream)
    store = store if store is not None else CacheStore()
    loop = asyncio.get_running_loop()
    stop = stop_event if stop_event is not None else asyncio.Event()
    server = _Server(options, store, stop, on_listening)

    def on_signal(signum: int, frame: Any) -> None:
        # A plain signal handler runs between two bytecodes even while a call computes on the
        # event loop, so /readyz (served from another thread) reports draining at once.
        server.draining = True
        loop.call_soon_threadsafe(stop.set)

    in_main_thread = threading.current_thread() is threading.main_thread()  # else signals cannot be caught here
    previous = (
        {signum: signal.signal(signum, on_signal) for signum in (signal.SIGTERM, signal.SIGINT)}
        if in_main_thread
        else {}
    )
    try:  # installed before "listening on": a signal from then on drains and stops us
        return await server.run()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        if native is not None:
            native.stop()


class _Server:
    """One run of the server: build, bind, serve, drain."""

    def __init__(
        self, options: ServeOptions, store: CacheStore, stop: asyncio.Event, on_listening: Callable[[str], None] | None
    ) -> None:
        self.options = options
        self.store = store
        self.stop = stop
        self.on_listening = on_listening
        self.metrics = ServerMetrics(store)
        self.in_flight = InFlight()
        self.draining = False
        self.servers: list[grpc.aio.Server] = []
        self.probe: ProbeServer | None = None
        self.tracker: SelectionTracker | None = None

    def ready(self) -> tuple[bool, str]:
        """``/readyz``: synced and not draining."""
        if self.draining:
            return False, "draining"
        if not self.store.snapshot.synced:
            return False, "cache not synced"
        return True, "ready"

    async def run(self) -> int:
        problems = self.options.problems()
        for problem in problems:
            log.error("%s", problem)
        if problems:
            return 1
        # Before the manifests load: the load is the tracker's first write, off the event loop.
        self.tracker = SelectionTracker(self.store, queue_limit=self.options.watch_queue)
        self.metrics.watch(self.tracker)
        try:
            return await self._run()
        finally:
            self.tracker.close()

    async def _run(self) -> int:
        if not self.options.wait_for_sync:
            paths = list(self.options.manifests) if self.options.manifests is not None else example_paths()
            if not load_store(self.store, paths, strict=self.options.strict, metrics=self.metrics):
                return 1
        tune_interpreter(self.store)
        try:
            credentials = self._credentials()
        except OSError as exc:
            log.error("cannot read TLS files: %s", exc)
            return 1
        try:
            return await self._serve(credentials)
        finally:
            if self.probe is not None:
                self.probe.close()

    def _credentials(self) -> grpc.ServerCredentials | None:
        o = self.options
        if not o.tls_cert or not o.tls_key:
            return None
        with open(o.tls_key, "rb") as key, open(o.tls_cert, "rb") as cert:
            pair = (key.read(), cert.read())
        ca = None
        if o.tls_client_ca:
            with open(o.tls_client_ca, "rb") as bundle:
                ca = bundle.read()
        return grpc.ssl_server_credentials([pair], root_certificates=ca, require_client_auth=ca is not None)

    def _grpc_server(self) -> grpc.aio.Server:
        server = grpc.aio.server(
            interceptors=[RpcInterceptor(self.metrics, self.in_flight)],
            options=server_options(self.options.max_concurrent_streams),
        )
        self.servers.append(server)
        return server

    async def _serve(self, credentials: grpc.ServerCredentials | None) -> int:
        o = self.options
        api = self._grpc_server()
        wire.add_selection_service(SelectionServicer(self.store, self.tracker), api)
        health_servicer = await attach_health(self.store, api)
        cache_servicer = CacheServicer(self.store)
        api_services = [SELECTION_SERVICE, health.SERVICE_NAME]
        cache_server = None
        if o.cache_listen is None:
            wire.add_cache_service(cache_servicer, api)
            api_services.append(CACHE_SERVICE)
        else:
            cache_server = self._grpc_server()
            wire.add_cache_service(cache_servicer, cache_server)
            health_pb2_grpc.add_HealthServicer_to_server(health_servicer, cache_server)
            if o.reflection:
                reflection.enable_server_reflection(
                    (CACHE_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), cache_server
                )
        if o.reflection:
            reflection.enable_server_reflection((*api_services, reflection.SERVICE_NAME), api)

        address = self._bind(api, o.listen, credentials)
        if address is None:
            return 1
        cache_address = None
        if cache_server is not None and o.cache_listen is not None:
            cache_address = self._bind(cache_server, o.cache_listen, None)
            if cache_address is None:
                return 1
        if o.http_listen is not None:
            self.probe = ProbeServer(
                parse_http_listen(o.http_listen), self.metrics.registry, self.ready, asyncio.get_running_loop()
            )
            try:
                http_address = self.probe.start()
            except OSError as exc:
                self.probe = None
                log.error("cannot listen on %s (http): %s", o.http_listen, exc)
                return 1
        for server in self.servers:
            await server.start()
        if cache_address is not None:
            log.info("CacheService on %s (only there)", cache_address)
        if self.probe is not None:
            log.info("http endpoints on %s (/healthz, /readyz, /metrics)", http_address)
        if credentials is not None:
            log.info("TLS on %s%s", address, " with client certificates required (mTLS)" if o.tls_client_ca else "")
        log.info("listening on %s", address)
        if self.on_listening is not None:
            self.on_listening(address)

        await self.stop.wait()
        await self._drain(health_servicer)
        return 0

    def _bind(self, server: grpc.aio.Server, listen: str, credentials: grpc.ServerCredentials | None) -> str | None:
        """Bind ``listen``; a unix socket gets ``socket_mode``. The bound address, or None (logged)."""
        parsed = parse_listen(listen)
        if parsed.kind == "unix" and _unix_socket_in_use(parsed.path):
            log.error("cannot listen on %s: address in use", listen)
            return None
        mode = self.options.socket_mode
        old_umask = os.umask(0o777 & ~mode) if parsed.kind == "unix" else None
        try:
            port = (
                server.add_secure_port(listen, credentials)
                if credentials is not None
                else server.add_insecure_port(listen)
            )
        except RuntimeError as exc:
            port, reason = 0, str(exc)
        else:
            reason = "address in use or invalid"
        finally:
            if old_umask is not None:
                os.umask(old_umask)
        if port == 0:  # grpc reports a failed bind as port 0 (unix sockets report 1)
            log.error("cannot listen on %s: %s", listen, reason)
            return None
        if parsed.kind == "unix":
            os.chmod(parsed.path, mode)
        return display_address(listen, port)

    async def _drain(self, health_servicer: health_aio.HealthServicer) -> None:
        o = self.options
        self.draining = True
        await health_servicer.enter_graceful_shutdown()  # every entry NOT_SERVING, for good
        log.info(
            "draining: health NOT_SERVING, /readyz 503; serving %ss more, then in-flight calls get up to %ss",
            o.drain_delay,
            o.grace,
        )
        self.stop.clear()  # a second signal ends the drain delay early
        try:
            await asyncio.wait_for(self.stop.wait(), o.drain_delay)
        except TimeoutError:
            pass
        log.info("shutting down, draining in-flight calls for up to %ss", o.grace)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + o.grace
        if self.tracker is not None:
            self.tracker.close_watchers()  # WatchSelections streams end with OK
        await self._quiesce(deadline)
        await asyncio.gather(*(server.stop(max(0.0, deadline - loop.time())) for server in self.servers))
        log.info("stopped")

    async def _quiesce(self, deadline: float) -> None:
        """Wait (until ``deadline``, loop time) for a quiet period (``InFlight.quiet_period``)
        with no call in flight.

        Selection calls compute on the event loop, so calls that arrived while one computes
        wait inside gRPC's C-core until the loop takes them; ``grpc.aio.Server.stop(grace)``
        cancels those (it only waits for calls already handed to a handler). Once nothing has
        been in flight for a quiet period, every queued call has been taken and answered."""
        loop = asyncio.get_running_loop()
        while loop.time() < deadline:
            if self.in_flight.count == 0 and time.monotonic() - self.in_flight.changed >= self.in_flight.quiet_period():
                return
            await asyncio.sleep(0.02)


def _unix_socket_in_use(path: str) -> bool:
    """True when a server already accepts connections on the unix socket ``path`` (gRPC would
    replace the socket file and leave that server unreachable)."""
    if not os.path.exists(path):
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(1.0)
        try:
            probe.connect(path)
        except OSError:
            return False  # a stale socket file: gRPC replaces it
    return True


async def attach_health(store: CacheStore, server: grpc.aio.Server) -> health_aio.HealthServicer:
    """Add a health servicer whose sync-gated entries follow ``store``'s sync state."""
    servicer = health_aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
    serving, not_serving = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING
    await servicer.set(CACHE_SERVICE, serving)
    synced = store.snapshot.synced
    for name in SYNC_GATED_SERVICES:
        await servicer.set(name, serving if synced else not_serving)
    if synced:
        return servicer

    loop = asyncio.get_running_loop()
    pending: set[asyncio.Task[None]] = set()
    became_serving = False

    async def mark_serving() -> None:
        for name in SYNC_GATED_SERVICES:
            await servicer.set(name, serving)
        log.info(
            "cache synced: %s is SERVING", SELECTION_SERVICE, extra={"fields": {"version": store.snapshot.version}}
        )

    def start_marking() -> None:
        task = loop.create_task(mark_serving())
        pending.add(task)
        task.add_done_callback(pending.discard)

    def on_write(snapshot: Any) -> None:
        # Called by the store after each successful write, possibly from another thread.
        nonlocal became_serving
        if snapshot.synced and not became_serving:
            became_serving = True
            loop.call_soon_threadsafe(start_marking)

    store.add_listener(on_write)
    return servicer
