"""The gRPC server: selection and cache services, health, reflection, metrics, probes, drain.

``serve()`` loads the manifests (or the embedded example catalog) into a ``CacheStore``, binds a
``grpc.aio`` server on ``ServeOptions.listen`` (plaintext, or TLS / mTLS), optionally a second
one on ``cache_listen`` that alone carries CacheService, optionally the HTTP probe listener
(``http_listen``: ``/healthz``, ``/readyz``) and the metrics listener (``metrics_listen``:
``/metrics``), and runs until SIGTERM or SIGINT. Both signals are handled whatever the process
inherited (a shell or ``nohup`` may start it with SIGINT ignored). The API listener's TLS
certificate, key and client CA are read again when their files change (``tls.py``).

Health (``grpc.health.v1``): ``ome.selector.v1.CacheService`` is SERVING from the start; the
overall service ``""`` and ``ome.selector.v1.SelectionService`` are NOT_SERVING until the cache
has been loaded or synced once. Drain, on the first SIGTERM/SIGINT: every health entry turns
NOT_SERVING and ``/readyz`` 503 at once; the server keeps serving for ``drain_delay`` seconds
(a second signal ends that early); then it stops accepting calls and gives in-flight calls up to
``grace`` seconds; then it returns 0.

Everything is logged to stderr, including ``listening on <address>`` (with the real port when
port 0 was asked for), ``CacheService on <address> (only there)``, ``http endpoints on
<host:port>`` and ``metrics on <host:port>``. Per-RPC lines are INFO, except health and reflection calls (DEBUG)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import socket
import threading
import time
from typing import Any, Callable, Sequence

import grpc
from grpc_health.v1 import health, health_pb2_grpc
from grpc_health.v1.health import aio as health_aio  # type: ignore[attr-defined]  # missing from grpc-stubs
from grpc_reflection.v1alpha import reflection

from ome_selector.cache.store import CacheStore
from ome_selector.examples import example_paths
from ome_selector.rpc import wire
from ome_selector.rpc.servicers import CacheServicer, SelectionServicer
from ome_selector.rpc.watch import SelectionTracker
from ome_selector.server.addresses import parse_http_listen, parse_listen
from ome_selector.server.config import DEFAULT_GRACE, DEFAULT_LISTEN, DEFAULT_MAX_CONCURRENT_STREAMS, ServeOptions
from ome_selector.server.health import CACHE_SERVICE, SELECTION_SERVICE, attach_health
from ome_selector.server.http import MetricsServer, ProbeServer
from ome_selector.server.interceptor import InFlight, RpcInterceptor, lines_written, quiet_failed_sends
from ome_selector.server.loading import load_store, tune_interpreter
from ome_selector.server.logs import configure_logging
from ome_selector.server.metrics import ServerMetrics
from ome_selector.server.native_stderr import NativeStderr
from ome_selector.server.tls import server_credentials

log = logging.getLogger("ome_selector.server")

# Message limits: answers (an ExplainRuntimes of 10,000 runtimes is about 8 MB, past gRPC's
# 4 MiB default) and requests of a listener without CacheService, 64 MiB; requests of the
# listener carrying CacheService, 256 MiB: an ApplySnapshot of OME's catalog runtimes is about
# 1.6 KB per runtime (15.5 MB at 10,000, 77 MiB at 50,000; ``--max-objects`` is 100,000).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024
MAX_WRITE_BYTES = 256 * 1024 * 1024
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
# Drain: calls queued before the drain delay ended are taken for at most this many quiet periods
# (``_Server._flush_limit``), then the server stops accepting calls.
FLUSH_QUIET_PERIODS = 10
# --- the server --------------------------------------------------------------------------------


def display_address(listen: str, port: int) -> str:
    """The address actually bound: ``listen`` with the real port, or the unix socket as given."""
    if listen.startswith(("unix:", "unix-abstract:")):
        return listen
    host, colon, _ = listen.rpartition(":")
    return f"{host}:{port}" if colon and not host.endswith(":") else f"{listen}:{port}"


def server_options(
    max_concurrent_streams: int = DEFAULT_MAX_CONCURRENT_STREAMS, max_receive_bytes: int = MAX_MESSAGE_BYTES
) -> list[tuple[str, int]]:
    """The ``grpc.aio.server`` channel arguments: message limits (requests ``max_receive_bytes``,
    answers ``MAX_MESSAGE_BYTES``), keepalive policy, stream cap."""
    return [
        ("grpc.max_receive_message_length", max_receive_bytes),
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
    # A negative cap is reported by options.problems() below.
    store = (
        store
        if store is not None
        else CacheStore(
            max_message_bytes=max(options.max_message_bytes, 0),
            max_objects=options.max_objects,
            max_write_objects=options.max_write_objects,
        )
    )
    loop = asyncio.get_running_loop()
    previous_handler = loop.get_exception_handler()
    loop.set_exception_handler(quiet_failed_sends)
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
        loop.set_exception_handler(previous_handler)
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
        self.metrics_http: MetricsServer | None = None
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
        self.tracker = SelectionTracker(
            self.store, queue_limit=self.options.watch_queue, queue_bytes=self.options.watch_queue_bytes
        )
        self.metrics.watch(self.tracker)
        try:
            return await self._run()
        finally:
            self.tracker.close()

    async def _run(self) -> int:
        if not self.options.wait_for_sync:
            paths = list(self.options.manifests) if self.options.manifests is not None else example_paths()
            o = self.options
            if not load_store(self.store, paths, strict=o.strict, metrics=self.metrics, max_objects=o.max_objects):
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
            for listener in (self.probe, self.metrics_http):
                if listener is not None:
                    listener.close()

    def _credentials(self) -> grpc.ServerCredentials | None:
        """TLS credentials of ``listen`` (reloaded when the files change), or None for plaintext;
        ``OSError`` when the files cannot be read."""
        o = self.options
        if not o.tls_cert or not o.tls_key:
            return None
        return server_credentials(o.tls_cert, o.tls_key, o.tls_client_ca)

    def _grpc_server(self, max_receive_bytes: int) -> grpc.aio.Server:
        server = grpc.aio.server(
            interceptors=[RpcInterceptor(self.metrics, self.in_flight)],
            options=server_options(self.options.max_concurrent_streams, max_receive_bytes),
        )
        self.servers.append(server)
        return server

    async def _serve(self, credentials: grpc.ServerCredentials | None) -> int:
        o = self.options
        api = self._grpc_server(MAX_MESSAGE_BYTES if o.cache_listen is not None else MAX_WRITE_BYTES)
        wire.add_selection_service(SelectionServicer(self.store, self.tracker), api)
        health_servicer = await attach_health(self.store, api)
        cache_servicer = CacheServicer(self.store)
        api_services = [SELECTION_SERVICE, health.SERVICE_NAME]
        cache_server = None
        if o.cache_listen is None:
            wire.add_cache_service(cache_servicer, api)
            api_services.append(CACHE_SERVICE)
        else:
            cache_server = self._grpc_server(MAX_WRITE_BYTES)
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
            # A unix socket stays plaintext; TCP takes --listen's TLS (ServeOptions refuses it without).
            cache_tls = credentials if parse_listen(o.cache_listen).kind == "tcp" else None
            cache_address = self._bind(cache_server, o.cache_listen, cache_tls)
            if cache_address is None:
                return 1
        http_address = metrics_address = None
        if o.http_listen is not None:
            self.probe = ProbeServer(
                parse_http_listen(o.http_listen), self.ready, asyncio.get_running_loop(), limits=o.http_limits
            )
            try:
                http_address = self.probe.start()
            except OSError as exc:
                self.probe = None
                log.error("cannot listen on %s (http): %s", o.http_listen, exc)
                return 1
        if o.metrics_listen is not None:
            self.metrics_http = MetricsServer(parse_http_listen(o.metrics_listen), self.metrics.registry, o.http_limits)
            try:
                metrics_address = self.metrics_http.start()
            except OSError as exc:
                self.metrics_http = None
                log.error("cannot listen on %s (metrics): %s", o.metrics_listen, exc)
                return 1
        for server in self.servers:
            await server.start()
        if cache_address is not None:
            log.info("CacheService on %s (only there)", cache_address)
        if http_address is not None:
            log.info("http endpoints on %s (/healthz, /readyz)", http_address)
        if metrics_address is not None:
            log.info("metrics on %s (/metrics)", metrics_address)
        if credentials is not None:
            mtls = " with client certificates required (mTLS)" if o.tls_client_ca else ""
            log.info("TLS on %s%s", address, mtls)
            if cache_address is not None and parse_listen(o.cache_listen or "").kind == "tcp":
                log.info("TLS on %s%s", cache_address, mtls)
        log.info("listening on %s", address)
        if self.on_listening is not None:
            self.on_listening(address)

        await self.stop.wait()
        await self._drain(health_servicer)
        return 0

    def _bind(self, server: grpc.aio.Server, listen: str, credentials: grpc.ServerCredentials | None) -> str | None:
        """Bind ``listen``; a unix socket gets ``socket_mode``. The bound address, or None (logged)."""
        parsed = parse_listen(listen)
        listen = parsed.target  # ":port" binds "[::]:port": every interface
        if parsed.kind == "unix" and _unix_socket_in_use(parsed.path):
            log.error("cannot listen on %s: address in use", listen)
            return None
        mode = self.options.socket_mode
        old_umask = os.umask(0o777 & ~mode) if parsed.kind == "unix" else None
        try:
            port = (
                # A reloading credentials object serves one port: each listener gets its own.
                server.add_secure_port(listen, self._credentials() or credentials)
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
        await self._quiesce(min(deadline, loop.time() + self._flush_limit()))
        # From here new calls get UNAVAILABLE: from the interceptor while the calls in flight get
        # the rest of the grace, then from gRPC once the listeners close (GOAWAY). gRPC itself
        # would end a call that reaches C-core while it stops with CANCELLED, not UNAVAILABLE, so
        # the listeners close only once nothing is in flight and the calls queued in C-core
        # (refused as the loop takes them) are taken.
        self.in_flight.refusing = True
        await self._settle(deadline)
        await self._quiesce(min(deadline, loop.time() + self._flush_limit()))
        await asyncio.gather(*(server.stop(max(0.0, deadline - loop.time())) for server in self.servers))
        await lines_written()  # the calls' log lines (written on the loop's next turn) come first
        log.info("stopped")

    async def _settle(self, deadline: float) -> None:
        """Wait (until ``deadline``, loop time) until no call is in flight."""
        loop = asyncio.get_running_loop()
        while self.in_flight.count and loop.time() < deadline:
            await asyncio.sleep(0.02)

    def _flush_limit(self) -> float:
        """How long (seconds) ``_quiesce`` may take the calls queued in C-core (answered before
        the refusal, refused after it): ``FLUSH_QUIET_PERIODS`` quiet periods, at most half the
        grace. Callers that ignore readiness keep the server from ever being quiet; past this
        they are refused, and past the second one the listeners close."""
        return min(self.options.grace / 2, FLUSH_QUIET_PERIODS * self.in_flight.quiet_period())

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
