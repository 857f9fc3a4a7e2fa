"""Listen addresses: parsed and checked before anything binds.

``parse_listen`` accepts what ``--listen`` and ``--cache-listen`` take: ``host:port`` (IPv4,
a host name, or ``[IPv6]:port``; port 0..65535, 0 asks the OS for a free port), ``:port``
(every interface, IPv6 and IPv4, as Go's ``net.Listen`` reads it),
``unix:/absolute/path`` / ``unix:///absolute/path`` / ``unix:relative/path``, and
``unix-abstract:name``. ``parse_http_listen`` (``--http-listen``, ``--metrics-listen``) accepts
``host:port`` and ``:port`` only. Both raise
``ValueError`` with a message naming what is wrong (for example ``port 99999 is out of range
0..65535``), so a typo is a clear error instead of gRPC choosing some other port.
"""

from __future__ import annotations

import dataclasses
import socket

__all__ = ["ListenAddress", "parse_http_listen", "parse_listen"]

MAX_PORT = 65535


@dataclasses.dataclass(frozen=True)
class ListenAddress:
    """A checked address. ``kind`` is ``tcp``, ``unix`` or ``unix-abstract``; for tcp, ``host``
    (without IPv6 brackets; ``""`` for every interface) and ``port``; for unix, ``path`` (the
    socket file); ``target`` is the text gRPC binds (the address as given, ``[::]:port`` for
    ``:port``)."""

    kind: str
    target: str
    host: str = ""
    port: int = 0
    path: str = ""

    @property
    def family(self) -> socket.AddressFamily:
        """The socket family of a tcp address: AF_INET6 for an IPv6 literal, else AF_INET."""
        return socket.AF_INET6 if ":" in self.host else socket.AF_INET

    @property
    def every_interface(self) -> bool:
        """True for ``:port``: IPv6 and IPv4 on every interface."""
        return self.kind == "tcp" and not self.host


def parse_listen(text: str) -> ListenAddress:
    """Parse a gRPC listen address (see the module docstring); ``ValueError`` when invalid."""
    if text.startswith("unix-abstract:"):
        name = text[len("unix-abstract:") :]
        if not name:
            raise ValueError("unix-abstract: needs a name")
        return ListenAddress("unix-abstract", text, path=name)
    if text.startswith("unix:"):
        rest = text[len("unix:") :]
        path = rest[2:] if rest.startswith("//") else rest
        if not path or path.endswith("/"):
            raise ValueError("unix: needs a socket file path, e.g. unix:/run/ome-selector/api.sock")
        return ListenAddress("unix", text, path=path)
    return _parse_host_port(text)


def parse_http_listen(text: str) -> ListenAddress:
    """Parse ``host:port`` for the HTTP listener; ``ValueError`` when invalid."""
    if text.startswith("unix"):
        raise ValueError("the HTTP listener takes host:port only")
    return _parse_host_port(text)


def _parse_host_port(text: str) -> ListenAddress:
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise ValueError("want [IPv6]:port")
        port_text = rest[1:]
    else:
        host, colon, port_text = text.rpartition(":")
        if not colon:
            raise ValueError("want host:port, unix:/path or unix-abstract:name")
        if ":" in host:
            raise ValueError("write an IPv6 address in brackets, e.g. [::1]:50051")
    if not port_text.isdigit():
        raise ValueError(f"port {port_text!r} is not a number")
    port = int(port_text)
    if port > MAX_PORT:
        raise ValueError(f"port {port} is out of range 0..{MAX_PORT}")
    if not host:
        if text.startswith("["):
            raise ValueError("the IPv6 address is missing (write :port for every interface)")
        return ListenAddress("tcp", f"[::]:{port}", host="", port=port)
    return ListenAddress("tcp", text, host=host, port=port)
