"""The HTTP listeners: probes (``--http-listen``: ``/healthz``, ``/readyz``) and metrics
(``--metrics-listen``: ``/metrics``), each on its own address.

Each runs uvicorn (HTTP/1.1 with h11) on its own thread and event loop, so a scrape or a probe
never waits behind a gRPC call, and ``/healthz`` can tell whether the server's event loop still
answers. A listener holds sockets, not threads, and is bounded (``HttpLimits``):

- at most ``max_connections`` open connections; one past that gets ``503`` and is closed;
- a request's headers must arrive within ``header_timeout`` seconds of the connection opening
  (or of the previous response), else the connection is closed: a client that sends half a
  request holds a socket for that long, no more;
- a kept-alive connection with no new request for ``idle_timeout`` seconds is closed;
- a request line and headers still incomplete past ``max_header_bytes`` get ``400`` (h11).

The ``--http-*`` serve flags set these (``http_limits.HttpLimits``), the same for both listeners.

Routes:

- ``GET /healthz`` (liveness): 200 ``ok`` when the server's asyncio event loop runs a callback
  within ``loop_timeout`` seconds, else 503. It never depends on the cache's sync state.
- ``GET /readyz`` (readiness): 200 ``ready`` once the cache is synced and while the server is
  not draining, else 503 with the reason (``cache not synced`` or ``draining``).
- ``GET /metrics``: the server's registry in the Prometheus text format (prometheus-client's
  ASGI app, which also answers OpenMetrics when asked, and gzip).

Anything else is 404; methods other than GET and HEAD are 405.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import socket
import threading
from typing import Any, Awaitable, Callable

import h11
import uvicorn
from prometheus_client import CollectorRegistry, make_asgi_app
from uvicorn.protocols.http.h11_impl import H11Protocol

from ome_selector.server.addresses import ListenAddress
from ome_selector.server.http_limits import HttpLimits

__all__ = ["HttpLimits", "HttpListener", "MetricsServer", "ProbeServer"]

log = logging.getLogger("ome_selector.http")

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

# What a connection past the limit is told before it is closed, and how long (seconds) it may
# stay open after that.
_LINGER = 1.0
_BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def _bounded_protocol(limits: HttpLimits) -> type[H11Protocol]:
    """uvicorn's h11 protocol with the connection limit and the header read timeout of ``limits``
    (uvicorn itself closes a kept-alive connection after ``timeout_keep_alive``)."""

    class Bounded(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None
        _refused = False

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > limits.max_connections:
                log.debug("http: %d connections open, refusing one", len(self.connections) - 1)
                # Not counted from here on; the answer, then EOF; what the client sends is
                # dropped (closing with unread data would reset the connection and lose the
                # 503), and the socket is closed after _LINGER seconds at most.
                self._refused = True
                self.connections.discard(self)
                transport.write(_BUSY)
                if transport.can_write_eof():
                    transport.write_eof()
                self._header_timer = self.loop.call_later(_LINGER, transport.close)
                return
            self._arm_header_timer()

        def data_received(self, data: bytes) -> None:
            if self._refused:
                return
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the request line and headers are in
                self._disarm_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
                self._arm_header_timer()  # the next request's headers: same bound

        def eof_received(self) -> None:
            if self._refused:
                self.transport.close()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_timer()
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            self._disarm_header_timer()
            self._header_timer = self.loop.call_later(limits.header_timeout, self._header_timed_out)

        def _disarm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _header_timed_out(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                log.debug("http: no request headers within %gs, closing", limits.header_timeout)
                self.transport.close()

    return Bounded


class HttpListener:
    """Serves the ASGI ``app`` on ``address`` (tcp; ``:port`` is every interface) with
    ``limits``, on its own thread, until ``close()``. ``start()`` binds (``OSError`` when it
    cannot) and returns the bound ``host:port``."""

    def __init__(self, address: ListenAddress, app: App, limits: HttpLimits | None = None, name: str = "http") -> None:
        self._address = address
        self._limits = limits or HttpLimits()
        self._name = name
        self._config = uvicorn.Config(
            app,
            http=_bounded_protocol(self._limits),  # type: ignore[arg-type]
            ws="none",
            lifespan="off",
            interface="asgi3",
            proxy_headers=False,
            loop="asyncio",
            log_config=None,
            access_log=False,
            server_header=False,
            timeout_keep_alive=self._limits.idle_timeout,  # type: ignore[arg-type]
            timeout_graceful_shutdown=1,
            backlog=self._limits.backlog,
            h11_max_incomplete_event_size=self._limits.max_header_bytes,
        )
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        logging.getLogger("uvicorn.error").setLevel(logging.WARNING)  # its start/stop lines

    def start(self) -> str:
        """Bind and serve on a daemon thread; returns the bound address (real port for port 0)."""
        sock = _bind(self._address, self._limits.backlog)
        self._server = uvicorn.Server(self._config)
        started = threading.Event()
        server = self._server

        def run() -> None:
            async def serve() -> None:
                serving = asyncio.ensure_future(server.serve(sockets=[sock]))
                while not server.started and not serving.done():
                    await asyncio.sleep(0.01)
                started.set()
                await serving

            try:
                asyncio.run(serve())
            finally:
                started.set()

        self._thread = threading.Thread(target=run, name=f"ome-selector-{self._name}", daemon=True)
        self._thread.start()
        started.wait(10)
        host, port = sock.getsockname()[:2]
        if self._address.every_interface:
            host = "::" if sock.family == socket.AF_INET6 else "0.0.0.0"
        return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"

    def close(self) -> None:
        """Stop serving, close the connections and the socket."""
        if self._server is not None:
            self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(5)
            self._server = None


def _bind(address: ListenAddress, backlog: int) -> socket.socket:
    """A listening socket on ``address``; ``:port`` is IPv6 and IPv4 on every interface (IPv4
    alone where the host has no IPv6)."""
    candidates: list[tuple[socket.AddressFamily, str]]
    if address.every_interface:
        candidates = [(socket.AF_INET6, "::"), (socket.AF_INET, "0.0.0.0")]
    else:
        candidates = [(address.family, address.host)]
    error: OSError | None = None
    for family, host in candidates:
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and address.every_interface:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            sock.bind((host, address.port))
            sock.listen(backlog)
        except OSError as exc:
            sock.close()
            error = exc
            continue
        sock.setblocking(False)
        return sock
    assert error is not None
    raise error


# --- the two listeners' apps -------------------------------------------------------------------


async def _text(send: Send, status: int, body: str, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = (body + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(data)).encode()),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _refused(scope: Scope, send: Send, paths: tuple[str, ...]) -> bool:
    """Answer 404 / 405 for what ``paths`` does not serve; True when answered."""
    if scope["path"] not in paths:
        await _text(send, 404, "not found")
        return True
    if scope["method"] not in ("GET", "HEAD"):
        await _text(send, 405, "method not allowed", [(b"allow", b"GET, HEAD")])
        return True
    return False


class ProbeServer(HttpListener):
    """``/healthz`` and ``/readyz`` on ``address``. ``ready()`` returns ``(ready, reason)``;
    ``loop`` is the event loop ``/healthz`` checks."""

    def __init__(
        self,
        address: ListenAddress,
        ready: Callable[[], tuple[bool, str]],
        loop: asyncio.AbstractEventLoop,
        loop_timeout: float = 5.0,
        limits: HttpLimits | None = None,
    ) -> None:
        self._ready = ready
        self._loop = loop
        self._loop_timeout = loop_timeout
        super().__init__(address, self._app, limits, name="probes")

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or await _refused(scope, send, ("/healthz", "/readyz")):
            return
        if scope["path"] == "/healthz":
            alive, reason = await self._loop_answers()
            await _text(send, 200 if alive else 503, reason)
            return
        ready, reason = self._ready()
        await _text(send, 200 if ready else 503, reason)

    async def _loop_answers(self) -> tuple[bool, str]:
        answered: concurrent.futures.Future[None] = concurrent.futures.Future()
        try:
            self._loop.call_soon_threadsafe(answered.set_result, None)
        except RuntimeError as exc:  # loop closed
            return False, f"event loop not running: {exc}"
        try:
            await asyncio.wait_for(asyncio.wrap_future(answered), self._loop_timeout)
        except TimeoutError:
            return False, f"event loop did not answer within {self._loop_timeout:g}s"
        return True, "ok"


class MetricsServer(HttpListener):
    """``/metrics`` (``registry``) on ``address``."""

    def __init__(self, address: ListenAddress, registry: CollectorRegistry, limits: HttpLimits | None = None) -> None:
        self._metrics = make_asgi_app(registry)
        super().__init__(address, self._app, limits, name="metrics")

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or await _refused(scope, send, ("/metrics",)):
            return
        await self._metrics(scope, receive, send)
