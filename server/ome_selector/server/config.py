"""``ServeOptions``: everything ``ome-selector serve`` can be told (flags and ``OME_SELECTOR_*``
variables, server/options.py), its defaults and its checks."""

from __future__ import annotations

import dataclasses
from typing import Callable, Sequence

from ome_selector.cache.store import DEFAULT_MAX_OBJECTS, DEFAULT_MAX_WRITE_OBJECTS
from ome_selector.domain.answers import DEFAULT_MAX_MESSAGE_BYTES
from ome_selector.rpc.watch import DEFAULT_QUEUE_BYTES, DEFAULT_QUEUE_LIMIT
from ome_selector.server.addresses import ListenAddress, parse_http_listen, parse_listen
from ome_selector.server.http_limits import HttpLimits

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_GRACE = 5.0
DEFAULT_DRAIN_DELAY = 0.0
DEFAULT_SOCKET_MODE = 0o600
DEFAULT_MAX_CONCURRENT_STREAMS = 100
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclasses.dataclass(frozen=True)
class ServeOptions:
    """Everything ``ome-selector serve`` can be told (flags / ``OME_SELECTOR_*`` env vars).

    ``listen`` / ``cache_listen``: gRPC addresses (``addresses.parse_listen``); ``cache_listen``
    None keeps CacheService on ``listen``; a TCP ``cache_listen`` takes the TLS settings of
    ``listen`` and is refused without them (a unix socket may stay plaintext). ``http_listen``:
    ``host:port`` of the probe listener, ``metrics_listen``: of the metrics listener; None for none
    (``:port`` is every interface). ``socket_mode``: permission bits of unix sockets the server creates.
    ``grace``, ``drain_delay``: seconds. ``tls_cert``/``tls_key``: PEM files for TLS on
    ``listen``; ``tls_client_ca``: PEM CA bundle that client certificates must chain to (mTLS).
    ``manifests`` None loads the embedded examples; ``wait_for_sync`` loads nothing; ``strict``
    makes any object or path the loader rejects fatal. ``watch_queue``: events a WatchSelections
    stream may have waiting before it gets ``resync`` (``watch.SelectionTracker``);
    ``watch_queue_bytes``: the same bound in serialized bytes.
    ``max_message_bytes``: the cap on OME's ``no runtime found`` message (``domain.answers``; 0 =
    no cap).
    ``max_objects``: objects of the manifest load and of one ApplySnapshot; ``max_write_objects``:
    objects of one UpsertObjects, keys of one DeleteObjects (``store.CacheStore``).
    ``http_*``: the bounds of each HTTP listener (``http_limits.HttpLimits``, ``http_limits``).
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
    metrics_listen: str | None = None
    cache_listen: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None
    reflection: bool = True
    max_concurrent_streams: int = DEFAULT_MAX_CONCURRENT_STREAMS
    watch_queue: int = DEFAULT_QUEUE_LIMIT
    watch_queue_bytes: int = DEFAULT_QUEUE_BYTES
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    max_objects: int = DEFAULT_MAX_OBJECTS
    max_write_objects: int = DEFAULT_MAX_WRITE_OBJECTS
    http_max_connections: int = HttpLimits.max_connections
    http_header_timeout: float = HttpLimits.header_timeout
    http_idle_timeout: float = HttpLimits.idle_timeout
    http_backlog: int = HttpLimits.backlog
    http_max_header_bytes: int = HttpLimits.max_header_bytes

    @property
    def http_limits(self) -> HttpLimits:
        """The ``http_*`` fields as the probe and metrics listeners take them."""
        return HttpLimits(
            max_connections=self.http_max_connections,
            header_timeout=self.http_header_timeout,
            idle_timeout=self.http_idle_timeout,
            backlog=self.http_backlog,
            max_header_bytes=self.http_max_header_bytes,
        )

    def problems(self) -> list[str]:
        """What is wrong with these options (empty when they can be served)."""
        found = []
        for value, parse in (
            (self.listen, parse_listen),
            (self.cache_listen, parse_listen),
            (self.http_listen, parse_http_listen),
            (self.metrics_listen, parse_http_listen),
        ):
            if value is not None:
                try:
                    parse(value)
                except ValueError as exc:
                    found.append(f"cannot listen on {value}: {exc}")
        if self.cache_listen is not None and _same(self.cache_listen, self.listen, parse_listen):
            found.append(f"cannot listen on {self.cache_listen}: --cache-listen must differ from --listen")
        elif self.cache_listen is not None and not self.tls_cert and _is_tcp(self.cache_listen):
            found.append(
                f"cannot listen on {self.cache_listen}: a TCP --cache-listen carries cache writes and needs the TLS "
                "of --listen (--tls-cert, --tls-key, and --tls-client-ca for mTLS); or use a unix socket"
            )
        if self.metrics_listen is not None and self.http_listen is not None:
            if _same(self.metrics_listen, self.http_listen, parse_http_listen):
                found.append(f"cannot listen on {self.metrics_listen}: --metrics-listen must differ from --http-listen")
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
        if self.watch_queue_bytes < 1:
            found.append("watch_queue_bytes: must be 1 or more")
        if self.max_message_bytes < 0:
            found.append("max_message_bytes: must be 0 or more")
        if self.max_objects < 1:
            found.append("max_objects: must be 1 or more")
        if self.max_write_objects < 1:
            found.append("max_write_objects: must be 1 or more")
        found.extend(self.http_limits.problems())
        return found


def _same(a: str, b: str, parse: Callable[[str], ListenAddress]) -> bool:
    """True when ``a`` and ``b`` are one address (``:50051`` and ``[::]:50051`` are); a port 0
    never clashes (the OS picks two ports)."""
    try:
        first, second = parse(a), parse(b)
    except ValueError:
        return a == b
    return first.target == second.target and not (first.kind == "tcp" and first.port == 0)


def _is_tcp(listen: str) -> bool:
    """Whether ``listen`` is a TCP address (an unparsable one is reported on its own)."""
    try:
        return parse_listen(listen).kind == "tcp"
    except ValueError:
        return False
