"""The HTTP listener for kubelet probes and Prometheus: ``/healthz``, ``/readyz``, ``/metrics``.

It runs in its own threads (the standard library's WSGI server), so a scrape or a probe never
waits behind a gRPC call, and ``/healthz`` can tell whether the event loop still answers:

- ``GET /healthz`` (liveness): 200 ``ok`` when the server's asyncio event loop runs a callback
  within ``loop_timeout`` seconds, else 503. It never depends on the cache's sync state.
- ``GET /readyz`` (readiness): 200 ``ready`` once the cache is synced and while the server is
  not draining, else 503 with the reason (``cache not synced`` or ``draining``).
- ``GET /metrics``: the server's registry in the Prometheus text format (prometheus-client's WSGI
  app, which also answers OpenMetrics when asked).

Anything else is 404; methods other than GET and HEAD are 405.
"""

from __future__ import annotations

import asyncio
import logging
import socketserver
import threading
from typing import Any, Callable, Iterable
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from prometheus_client import CollectorRegistry, make_wsgi_app

from ome_selector.server.addresses import ListenAddress

__all__ = ["ProbeServer"]

log = logging.getLogger("ome_selector.http")

StartResponse = Callable[..., Any]


class _Handler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002  (the base class's name)
        log.debug("http %s", format % args)


class ProbeServer:
    """Serves the probes and metrics on ``address`` (tcp) until ``close()``.

    ``ready()`` returns ``(ready, reason)``; ``loop`` is the event loop ``/healthz`` checks.
    ``start()`` binds (``OSError`` when it cannot) and returns the bound ``host:port``.
    """

    def __init__(
        self,
        address: ListenAddress,
        registry: CollectorRegistry,
        ready: Callable[[], tuple[bool, str]],
        loop: asyncio.AbstractEventLoop,
        loop_timeout: float = 5.0,
    ) -> None:
        self._address = address
        self._ready = ready
        self._loop = loop
        self._loop_timeout = loop_timeout
        self._metrics_app = make_wsgi_app(registry)
        self._server: WSGIServer | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> str:
        """Bind and serve in a daemon thread; returns the bound address (real port for port 0)."""
        family = self._address.family

        class _Server(socketserver.ThreadingMixIn, WSGIServer):
            address_family = family
            daemon_threads = True
            allow_reuse_address = True

        self._server = make_server(
            self._address.host, self._address.port, self._app, server_class=_Server, handler_class=_Handler
        )
        self._thread = threading.Thread(target=self._server.serve_forever, name="ome-selector-http", daemon=True)
        self._thread.start()
        port = self._server.server_address[1]
        host = f"[{self._address.host}]" if ":" in self._address.host else self._address.host
        return f"{host}:{port}"

    def close(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    # --- WSGI ----------------------------------------------------------------------------------

    def _app(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO", "")
        if path not in ("/healthz", "/readyz", "/metrics"):
            return _text(start_response, "404 Not Found", "not found")
        if environ.get("REQUEST_METHOD") not in ("GET", "HEAD"):
            return _text(start_response, "405 Method Not Allowed", "method not allowed", [("Allow", "GET, HEAD")])
        if path == "/metrics":
            return self._metrics_app(environ, start_response)  # type: ignore[no-any-return]
        if path == "/healthz":
            alive, reason = self._loop_answers()
            return _text(start_response, "200 OK" if alive else "503 Service Unavailable", reason)
        ready, reason = self._ready()
        return _text(start_response, "200 OK" if ready else "503 Service Unavailable", reason)

    def _loop_answers(self) -> tuple[bool, str]:
        answered = threading.Event()
        try:
            self._loop.call_soon_threadsafe(answered.set)
        except RuntimeError as exc:  # loop closed
            return False, f"event loop not running: {exc}"
        if not answered.wait(self._loop_timeout):
            return False, f"event loop did not answer within {self._loop_timeout:g}s"
        return True, "ok"


def _text(
    start_response: StartResponse, status: str, body: str, headers: list[tuple[str, str]] | None = None
) -> list[bytes]:
    data = (body + "\n").encode()
    start_response(
        status, [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(data))), *(headers or [])]
    )
    return [data]
