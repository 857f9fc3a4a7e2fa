"""The HTTP listeners hold sockets, not threads, and are bounded: a connection past the limit
gets 503 and is closed, half-sent requests are closed after the header read timeout, idle
kept-alive connections after the idle timeout (127.0.0.1 only, a bounded number of sockets)."""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
from typing import Callable, Iterator

import pytest
from conftest import ServerProcess
from ome_selector.server.addresses import parse_http_listen
from ome_selector.server.http import HttpLimits, ProbeServer
from sidecar_helpers import http_address, http_get

HALF_SENT = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "  # the headers never end
BUSY = b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"


def _connect(address: str) -> socket.socket:
    host, _, port = address.rpartition(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def _read_to_end(sock: socket.socket, timeout: float = 10.0) -> bytes:
    """Everything the server sends until it closes the connection (fails after ``timeout``)."""
    sock.settimeout(timeout)
    data = b""
    while chunk := sock.recv(4096):
        data += chunk
    return data


def _closed_yet(sock: socket.socket) -> bool:
    sock.setblocking(False)
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    finally:
        sock.setblocking(True)


@pytest.fixture
def probe() -> Iterator[Callable[[HttpLimits], str]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    servers: list[ProbeServer] = []

    def start(limits: HttpLimits) -> str:
        server = ProbeServer(parse_http_listen("127.0.0.1:0"), lambda: (True, "ready"), loop, limits=limits)
        servers.append(server)
        return server.start()

    yield start
    for server in servers:
        server.close()
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)
    loop.close()


def test_half_sent_requests_are_bounded_and_timed_out(probe: Callable[[HttpLimits], str]) -> None:
    address = probe(HttpLimits(max_connections=8, header_timeout=3.0, idle_timeout=30))
    threads = threading.active_count()
    sockets = []
    for _ in range(20):
        sock = _connect(address)
        sock.sendall(HALF_SENT)
        sockets.append(sock)
    time.sleep(0.3)  # let the server accept them all
    refused = [sock for sock in sockets if _refused(sock)]
    assert len(refused) == 12  # the 12 past the limit of 8: 503, closed
    assert threading.active_count() == threads  # no thread per connection
    held = [sock for sock in sockets if sock not in refused]
    assert [_closed_yet(sock) for sock in held] == [False] * 8  # within the header timeout
    assert [_read_to_end(sock) for sock in held] == [b""] * 8  # closed at the timeout, nothing sent
    assert http_get(address, "/healthz") == (200, "ok\n")  # the slots are free again
    for sock in sockets:
        sock.close()


def _refused(sock: socket.socket) -> bool:
    """True when the server answered 503 and ended the connection, False when it has not
    answered (yet)."""
    sock.setblocking(False)
    try:
        data = sock.recv(4096)
    except BlockingIOError:
        return False
    finally:
        sock.setblocking(True)
    assert data + _read_to_end(sock) == BUSY
    return True


def test_an_idle_kept_alive_connection_is_closed(probe: Callable[[HttpLimits], str]) -> None:
    address = probe(HttpLimits(max_connections=8, header_timeout=30, idle_timeout=1))
    sock = _connect(address)
    sock.sendall(b"GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    sock.settimeout(10)
    response = b""
    while not response.endswith(b"ready\n"):
        response += sock.recv(4096)
    assert response.startswith(b"HTTP/1.1 200 OK\r\n")
    assert not _closed_yet(sock)  # kept alive
    assert _read_to_end(sock) == b""  # then closed after the idle timeout
    sock.close()


def _threads(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/task"))


def test_the_server_holds_sockets_not_threads(running_server: Callable[..., ServerProcess]) -> None:
    """200 half-sent requests to a real server with the default limits (64 connections): the
    process has as many threads as before, 136 are refused with 503, and the probes answer
    again once the header timeout closed the rest."""
    server = running_server(extra_args=["--http-listen", "127.0.0.1:0"])
    address = http_address(server)
    assert http_get(address, "/healthz") == (200, "ok\n")
    threads = _threads(server.process.pid)
    sockets = []
    for _ in range(200):
        sock = _connect(address)
        sock.sendall(HALF_SENT)
        sockets.append(sock)
    waiting, deadline = list(sockets), time.monotonic() + 4  # before the 5 s header timeout
    while len(waiting) > HttpLimits().max_connections and time.monotonic() < deadline:
        waiting = [sock for sock in waiting if not _refused(sock)]
        time.sleep(0.05)
    assert len(sockets) - len(waiting) == 200 - HttpLimits().max_connections
    assert _threads(server.process.pid) == threads
    for sock in sockets:
        sock.close()
    assert http_get(address, "/healthz") == (200, "ok\n")


def test_the_limits_are_serve_flags_and_variables(
    running_server: Callable[..., ServerProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real server with --http-max-connections 2, OME_SELECTOR_HTTP_HEADER_TIMEOUT=1 and
    --http-max-header-bytes 1024: the third connection gets 503, a half-sent request is closed
    after the second, a head still incomplete past 1024 bytes gets uvicorn's 400 at once."""
    monkeypatch.setenv("OME_SELECTOR_HTTP_HEADER_TIMEOUT", "1")
    server = running_server(
        extra_args=["--http-listen", "127.0.0.1:0", "--http-max-connections", "2", "--http-max-header-bytes", "1024"]
    )
    address = http_address(server)
    held = [_connect(address) for _ in range(2)]
    for sock in held:
        sock.sendall(HALF_SENT)
    third = _connect(address)
    assert _read_to_end(third) == BUSY
    third.close()
    for sock in held:
        assert _read_to_end(sock, timeout=5) == b""  # closed by the 1 s header timeout
        sock.close()
    big = _connect(address)
    big.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"x" * 2048)  # still incomplete
    assert _read_to_end(big).startswith(b"HTTP/1.1 400 Bad Request\r\n")
    big.close()
    assert http_get(address, "/healthz") == (200, "ok\n")
