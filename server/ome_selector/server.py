"""The gRPC server: selection and cache services, health, reflection, one log line per RPC.

``serve()`` loads the manifests (or the embedded example catalog) into a ``CacheStore``, binds a
``grpc.aio`` server and runs until SIGTERM or SIGINT, then drains in-flight calls for ``grace``
seconds. Health (``grpc.health.v1``): ``ome.selector.v1.CacheService`` is SERVING from the start;
the overall service ``""`` and ``ome.selector.v1.SelectionService`` are NOT_SERVING until the
cache has been loaded or synced once. Everything is logged to stderr, including the line
``listening on <address>`` (with the real port when port 0 was asked for).
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import json
import logging
import os
import signal
import socket
import sys
import time
from typing import Any, Awaitable, Callable, Sequence

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]  # missing from grpc-stubs
from grpc_reflection.v1alpha import reflection

from ome.selector.v1 import cache_pb2, cache_pb2_grpc, selector_pb2
from ome_selector import manifests as manifest_loader
from ome_selector.errors import RequestError
from ome_selector.examples import example_paths
from ome_selector.service import CacheServicer, SelectionServicer
from ome_selector.store import CacheStore

log = logging.getLogger("ome_selector.server")
rpc_log = logging.getLogger("ome_selector.rpc")

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_GRACE = 5.0
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
SELECTION_SERVICE = selector_pb2.DESCRIPTOR.services_by_name["SelectionService"].full_name
CACHE_SERVICE = cache_pb2.DESCRIPTOR.services_by_name["CacheService"].full_name
# Health entries that follow the cache's sync state.
SYNC_GATED_SERVICES = ("", SELECTION_SERVICE)
LOG_FORMATS = ("text", "json")
_HANDLER_NAME = "ome-selector-stderr"


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
        return json.dumps(entry, separators=(",", ":"))


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger>: <message> key=value ...``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s.%(msecs)03dZ %(levelname)s %(name)s: %(message)s", "%Y-%m-%dT%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        fields = getattr(record, "fields", None)
        if fields:
            text += "".join(f" {key}={value}" for key, value in fields.items())
        return text


def configure_logging(log_format: str, level: int = logging.INFO) -> None:
    """Send all logs to stderr in ``text`` or ``json`` format (UTC times)."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"unknown log format {log_format!r} (want one of {', '.join(LOG_FORMATS)})")
    formatter: logging.Formatter = JsonFormatter() if log_format == "json" else TextFormatter()
    formatter.converter = time.gmtime
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(formatter)
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)  # configured before: replace, don't duplicate
    root.addHandler(handler)
    root.setLevel(level)


# --- per-RPC logging interceptor ---------------------------------------------------------------


class RpcLoggingInterceptor(grpc.aio.ServerInterceptor):
    """Logs one line per RPC, when it ends: method, status code name and duration in ms."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:  # unknown method: grpc answers UNIMPLEMENTED itself
            return handler
        method = handler_call_details.method
        for attribute, make, wrap in _handler_kinds():
            behavior = getattr(handler, attribute)
            if behavior is not None:
                return make(  # type: ignore[no-any-return]
                    wrap(method, behavior),
                    request_deserializer=handler.request_deserializer,
                    response_serializer=handler.response_serializer,
                )
        return handler


def _handler_kinds() -> tuple[tuple[str, Callable[..., Any], Callable[[str, Callable[..., Any]], Callable[..., Any]]], ...]:
    return (
        ("unary_unary", grpc.unary_unary_rpc_method_handler, _wrap_unary),
        ("stream_unary", grpc.stream_unary_rpc_method_handler, _wrap_unary),
        ("unary_stream", grpc.unary_stream_rpc_method_handler, _wrap_streaming),
        ("stream_stream", grpc.stream_stream_rpc_method_handler, _wrap_streaming),
    )


def _log_rpc(method: str, context: Any, started: float, error: BaseException | None) -> None:
    duration_ms = round((time.perf_counter() - started) * 1000, 3)
    code = _outcome(context, error)
    level = logging.ERROR if code in ("UNKNOWN", "INTERNAL") else logging.INFO
    rpc_log.log(level, "rpc", extra={"fields": {"method": method, "code": code, "duration_ms": duration_ms}})


def _outcome(context: Any, error: BaseException | None) -> str:
    code = context.code()  # set by abort() / set_code(); None when the handler just returned
    if isinstance(code, grpc.StatusCode):
        return code.name
    if error is None:
        return "OK"
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    return "UNKNOWN"  # what grpc answers for an exception that escapes a handler


def _wrap_unary(method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def logged(request: Any, context: Any) -> Any:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            result = behavior(request, context)
            if inspect.isawaitable(result):
                result = await result
            return result
        except BaseException as exc:
            error = exc
            raise
        finally:
            _log_rpc(method, context, started, error)

    return logged


def _wrap_streaming(method: str, behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def logged(request: Any, context: Any) -> Any:
        started = time.perf_counter()
        error: BaseException | None = None
        try:
            result = behavior(request, context)
            if hasattr(result, "__aiter__"):
                async for response in result:
                    yield response
            elif hasattr(result, "__iter__"):
                for response in result:
                    yield response
            else:  # a coroutine that writes with context.write()
                await result
        except BaseException as exc:
            error = exc
            raise
        finally:
            _log_rpc(method, context, started, error)

    return logged


# --- the server --------------------------------------------------------------------------------


def load_store(store: CacheStore, paths: Sequence[str]) -> bool:
    """Load manifests into ``store`` as one snapshot; log what was found. False on failure."""
    result = manifest_loader.load_manifests(paths)
    for line in result.skipped:
        log.info("%s", line)
    for line in result.warnings:
        log.warning("%s", line)
    for line in result.errors:
        log.error("%s", line)
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
        extra={"fields": {"version": status.version, "objects": len(result.objects), "files_with_errors": len(result.errors)}},
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


def tune_interpreter(store: CacheStore) -> None:
    """Process settings for a long-running server: a short GIL switch interval (see
    ``SWITCH_INTERVAL``), and ``gc.freeze()`` after every cache write, so the cyclic collector
    does not walk the compiled snapshot (hundreds of thousands of long-lived objects at 10,000
    runtimes) again and again and stall answers for tens of milliseconds. Frozen objects are
    still freed by reference counting when a later snapshot replaces them; the snapshot holds no
    reference cycles."""
    sys.setswitchinterval(SWITCH_INTERVAL)
    gc.freeze()
    store.add_listener(lambda _snapshot: gc.freeze())


async def serve(
    listen: str = DEFAULT_LISTEN,
    manifests: Sequence[str] | None = None,
    log_format: str = "text",
    *,
    grace: float = DEFAULT_GRACE,
    wait_for_sync: bool = False,
    store: CacheStore | None = None,
    stop_event: asyncio.Event | None = None,
    on_listening: Callable[[str], None] | None = None,
) -> int:
    """Run the server until SIGTERM/SIGINT (or ``stop_event`` is set); returns the exit status.

    ``manifests`` None loads the embedded example catalog; ``wait_for_sync`` loads nothing and
    leaves the cache unsynced until a controller calls ApplySnapshot. ``store``, ``stop_event``
    and ``on_listening`` (called with the bound address) are for embedding and tests.
    """
    configure_logging(log_format)
    store = store if store is not None else CacheStore()
    loop = asyncio.get_running_loop()
    stop = stop_event if stop_event is not None else asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):  # before "listening on": a signal then stops us
        loop.add_signal_handler(signum, stop.set)
    try:
        return await _run(listen, manifests, grace, wait_for_sync, store, stop, on_listening)
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)


async def _run(
    listen: str,
    manifests: Sequence[str] | None,
    grace: float,
    wait_for_sync: bool,
    store: CacheStore,
    stop: asyncio.Event,
    on_listening: Callable[[str], None] | None,
) -> int:
    if not wait_for_sync:
        paths = list(manifests) if manifests is not None else example_paths()
        if not load_store(store, paths):
            return 1
    tune_interpreter(store)

    server = grpc.aio.server(
        interceptors=[RpcLoggingInterceptor()],
        # A snapshot of a large cluster (10,000 runtimes) is larger than gRPC's 4 MiB default.
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
            # Never share a port with another server (gRPC sets SO_REUSEPORT by default).
            ("grpc.so_reuseport", 0),
        ],
    )
    server.add_generic_rpc_handlers((SelectionServicer(store).handler(),))
    cache_pb2_grpc.add_CacheServiceServicer_to_server(CacheServicer(store), server)
    health_servicer = await attach_health(store, server)
    reflection.enable_server_reflection(
        (SELECTION_SERVICE, CACHE_SERVICE, health.SERVICE_NAME, reflection.SERVICE_NAME), server
    )
    if _unix_socket_in_use(listen):
        log.error("cannot listen on %s: address in use", listen)
        return 1
    try:
        port = server.add_insecure_port(listen)
    except RuntimeError as exc:
        port, reason = 0, str(exc)
    else:
        reason = "address in use or invalid"
    if port == 0:  # grpc reports a failed bind as port 0 (unix sockets report 1)
        log.error("cannot listen on %s: %s", listen, reason)
        return 1
    await server.start()
    address = display_address(listen, port)
    log.info("listening on %s", address)
    if on_listening is not None:
        on_listening(address)

    await stop.wait()
    log.info("shutting down, draining in-flight calls for up to %ss", grace)
    await health_servicer.enter_graceful_shutdown()
    await server.stop(grace)
    log.info("stopped")
    return 0


def _unix_socket_in_use(listen: str) -> bool:
    """True when ``listen`` is a ``unix:`` path where a server already accepts connections
    (gRPC would replace the socket file and leave that server unreachable)."""
    if not listen.startswith("unix:"):
        return False
    path = listen[len("unix:"):].removeprefix("//")
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
        log.info("cache synced: %s is SERVING", SELECTION_SERVICE, extra={"fields": {"version": store.snapshot.version}})

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
