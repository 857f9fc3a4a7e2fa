"""The ``ome-selector serve`` flags, each also settable by an ``OME_SELECTOR_*`` environment
variable (a flag on the command line wins over the variable, the variable over the default).

``SERVE_FLAGS`` lists them: flag, variable, default, help. Booleans take ``1/true/yes/on`` or
``0/false/no/off`` in the environment; ``OME_SELECTOR_MANIFESTS`` separates paths with ``:``.
A bad value, from a flag or a variable, is exit status 2 with ``error: <flag or variable>: <why>``.
Nothing here imports grpc, so ``run_serve`` can set ``GRPC_VERBOSITY`` (default ``ERROR``)
before gRPC's C-core reads it.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from importlib import metadata
from typing import Any, Callable, Mapping

from ome_selector.domain.answers import DEFAULT_MAX_MESSAGE_BYTES
from ome_selector.server.addresses import parse_http_listen
from ome_selector.server.http_limits import HttpLimits

__all__ = ["SERVE_FLAGS", "add_serve_arguments", "run_serve", "version"]

LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off", "")


def version() -> str:
    """The installed ome-selector version (``0+unknown`` when not installed as a distribution)."""
    try:
        return metadata.version("ome-selector")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _http_listen(text: str) -> str:
    parse_http_listen(text)
    return text


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"not a number: {text!r}") from None
    if not value >= 0 or value == float("inf"):
        raise ValueError(f"must be 0 or more seconds: {text!r}")
    return value


def _positive_seconds(text: str) -> float:
    value = _seconds(text)
    if value == 0:
        raise ValueError(f"must be more than 0 seconds: {text!r}")
    return value


def _mode(text: str) -> int:
    try:
        value = int(text, 8)
    except ValueError:
        raise ValueError(f"not an octal permission mode: {text!r}") from None
    if not 0 <= value <= 0o777:
        raise ValueError(f"not a permission mode (000..777): {text!r}")
    return value


def _positive_int(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise ValueError(f"must be a whole number, 1 or more: {text!r}")
    return int(text)


def _whole_number(text: str) -> int:
    if not text.isdigit():
        raise ValueError(f"must be a whole number, 0 or more: {text!r}")
    return int(text)


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"{text!r} is not one of {', '.join(choices)}")
        return text

    return parse


def _boolean(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"want 1/true/yes/on or 0/false/no/off, not {text!r}")


@dataclasses.dataclass(frozen=True)
class ServeFlag:
    """One serve flag: ``dest`` (the ServeOptions field), parser of its text, default, help."""

    flag: str
    dest: str
    parse: Callable[[str], Any] | None  # None: a boolean switch
    default: Any
    metavar: str
    help: str

    @property
    def env(self) -> str:
        """Its environment variable: ``OME_SELECTOR_`` + the flag in upper snake case."""
        return "OME_SELECTOR_" + self.flag.lstrip("-").replace("-", "_").upper()


_HTTP = HttpLimits()  # the defaults of the --http-* limits

SERVE_FLAGS: tuple[ServeFlag, ...] = (
    ServeFlag(
        "--listen",
        "listen",
        str,
        "127.0.0.1:50051",
        "ADDR",
        "gRPC API address: host:port, [IPv6]:port, :port (every interface) or unix:/path",
    ),
    ServeFlag(
        "--socket-mode", "socket_mode", _mode, 0o600, "OCTAL", "permission bits of unix sockets the server creates"
    ),
    ServeFlag(
        "--cache-listen", "cache_listen", str, None, "ADDR", "serve CacheService on this address only (not on --listen)"
    ),
    ServeFlag(
        "--http-listen",
        "http_listen",
        _http_listen,
        None,
        "HOST:PORT",
        "HTTP listener for the probes /healthz and /readyz; :PORT is every interface (default: off)",
    ),
    ServeFlag(
        "--metrics-listen",
        "metrics_listen",
        _http_listen,
        None,
        "HOST:PORT",
        "HTTP listener for /metrics, apart from the probes; :PORT is every interface (default: off)",
    ),
    ServeFlag(
        "--http-max-connections",
        "http_max_connections",
        _positive_int,
        _HTTP.max_connections,
        "N",
        "open connections per HTTP listener (probes, metrics); one past that gets 503 and is closed",
    ),
    ServeFlag(
        "--http-header-timeout",
        "http_header_timeout",
        _positive_seconds,
        _HTTP.header_timeout,
        "SECONDS",
        "an HTTP request's line and headers must arrive within this, else the connection is closed",
    ),
    ServeFlag(
        "--http-idle-timeout",
        "http_idle_timeout",
        _positive_seconds,
        _HTTP.idle_timeout,
        "SECONDS",
        "a kept-alive HTTP connection with no new request this long is closed",
    ),
    ServeFlag(
        "--http-backlog",
        "http_backlog",
        _positive_int,
        _HTTP.backlog,
        "N",
        "HTTP connections the kernel queues before they are accepted",
    ),
    ServeFlag(
        "--http-max-header-bytes",
        "http_max_header_bytes",
        _positive_int,
        _HTTP.max_header_bytes,
        "BYTES",
        "bytes of an HTTP request line and headers buffered before they are complete; past that 400",
    ),
    ServeFlag(
        "--manifests",
        "manifests",
        None,
        None,
        "PATH",
        "YAML files or folders to load at start (default: the embedded examples)",
    ),
    ServeFlag(
        "--wait-for-sync",
        "wait_for_sync",
        None,
        False,
        "",
        "load nothing; stay NOT_SERVING until a controller calls ApplySnapshot",
    ),
    ServeFlag(
        "--strict",
        "strict",
        None,
        False,
        "",
        "refuse to start when the loader rejects any manifest object or path (default: skip it, serve the rest)",
    ),
    ServeFlag("--log-format", "log_format", _choice(LOG_FORMATS), "text", "FORMAT", "text or json"),
    ServeFlag(
        "--log-level",
        "log_level",
        _choice(LOG_LEVELS),
        "info",
        "LEVEL",
        "debug, info, warning or error (health and reflection calls log at debug)",
    ),
    ServeFlag(
        "--grace", "grace", _seconds, 5.0, "SECONDS", "after the drain delay, how long in-flight calls may finish"
    ),
    ServeFlag(
        "--drain-delay",
        "drain_delay",
        _seconds,
        0.0,
        "SECONDS",
        "on SIGTERM/SIGINT, keep serving this long while NOT_SERVING / not ready",
    ),
    ServeFlag("--tls-cert", "tls_cert", str, None, "FILE", "PEM certificate (chain) for TLS on --listen"),
    ServeFlag("--tls-key", "tls_key", str, None, "FILE", "PEM private key of --tls-cert"),
    ServeFlag(
        "--tls-client-ca",
        "tls_client_ca",
        str,
        None,
        "FILE",
        "PEM CA bundle: require client certificates signed by it (mTLS)",
    ),
    ServeFlag("--no-reflection", "no_reflection", None, False, "", "do not serve gRPC server reflection"),
    ServeFlag(
        "--max-concurrent-streams",
        "max_concurrent_streams",
        _positive_int,
        100,
        "N",
        "concurrent calls per client connection",
    ),
    ServeFlag(
        "--max-objects",
        "max_objects",
        _positive_int,
        100_000,
        "N",
        "objects the manifests at start, or one ApplySnapshot, may hold; past that the load or write is refused",
    ),
    ServeFlag(
        "--max-write-objects",
        "max_write_objects",
        _positive_int,
        10_000,
        "N",
        "objects of one UpsertObjects, keys of one DeleteObjects; past that INVALID_ARGUMENT",
    ),
    ServeFlag(
        "--watch-queue",
        "watch_queue",
        _positive_int,
        4096,
        "N",
        "events a WatchSelections stream may have waiting; past that it gets resync and the full state",
    ),
    ServeFlag(
        "--watch-queue-bytes",
        "watch_queue_bytes",
        _positive_int,
        16 * 2**20,
        "BYTES",
        "serialized bytes of the events a WatchSelections stream may have waiting; past that it gets resync "
        "and the full state",
    ),
    ServeFlag(
        "--max-message-bytes",
        "max_message_bytes",
        _whole_number,
        DEFAULT_MAX_MESSAGE_BYTES,
        "BYTES",
        "cap on OME's 'no runtime found' message (nearest misses kept, the rest counted); 0: no cap",
    ),
)


def _describe(default: Any, dest: str) -> str:
    if default is None or default is False:
        return ""
    if dest == "socket_mode":
        return f" (default {default:04o})"
    return f" (default {default:g})" if isinstance(default, float) else f" (default {default})"


def _argparse_type(f: ServeFlag) -> Callable[[str], Any]:
    parse = f.parse
    assert parse is not None

    def convert(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = f.dest  # argparse names the type in some messages
    return convert


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """Add every ``SERVE_FLAGS`` flag and ``--version``. A flag's value is checked by argparse
    (usage error, exit 2), except ``--listen`` / ``--cache-listen``, which the server checks
    when it starts (``cannot listen on ADDR: <why>``, exit 1). Defaults are resolved later, by
    ``options_from_args``, so an unset flag falls back to its environment variable."""
    for f in SERVE_FLAGS:
        text = f"{f.help}{_describe(f.default, f.dest)}; env {f.env}"
        if f.dest == "manifests":
            parser.add_argument(f.flag, dest=f.dest, nargs="+", metavar=f.metavar, default=None, help=text)
        elif f.parse is None:
            parser.add_argument(f.flag, dest=f.dest, action="store_const", const=True, default=None, help=text)
        elif f.dest == "log_format":
            parser.add_argument(f.flag, dest=f.dest, choices=LOG_FORMATS, default=None, help=text)
        elif f.dest == "log_level":
            parser.add_argument(f.flag, dest=f.dest, choices=LOG_LEVELS, default=None, help=text)
        elif f.dest in ("listen", "cache_listen", "tls_cert", "tls_key", "tls_client_ca"):
            parser.add_argument(f.flag, dest=f.dest, metavar=f.metavar, default=None, help=text)
        else:
            parser.add_argument(f.flag, dest=f.dest, metavar=f.metavar, type=_argparse_type(f), default=None, help=text)
    parser.add_argument("--version", action="version", version=f"ome-selector {version()}")


def options_from_args(args: argparse.Namespace, environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """ServeOptions keyword arguments from parsed flags, then ``environ`` (default
    ``os.environ``), then defaults. ``ValueError('<variable>: <why>')`` on a bad variable.
    Addresses are passed on as text (the server checks them)."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    for f in SERVE_FLAGS:
        given = getattr(args, f.dest, None)
        if given is not None:
            values[f.dest] = given
            continue
        raw = env.get(f.env)
        if raw is None:
            value = f.default
        elif f.dest == "manifests":
            value = [p for p in raw.split(os.pathsep) if p] or None
        elif f.parse is None:
            value = _parse(f.env, _boolean, raw)
        elif f.dest in ("listen", "cache_listen"):
            value = raw
        else:
            value = _parse(f.env, f.parse, raw)
        values[f.dest] = value
    values["reflection"] = not values.pop("no_reflection")
    return values


def _parse(source: str, parse: Callable[[str], Any], raw: str) -> Any:
    try:
        return parse(raw)
    except ValueError as exc:
        raise ValueError(f"{source}: {exc}") from None


def run_serve(args: argparse.Namespace) -> int:
    """Run ``ome-selector serve`` with ``args``; returns the exit status (2 on a bad value)."""
    try:
        values = options_from_args(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")  # before grpc is imported below
    import asyncio

    from ome_selector.server.config import ServeOptions
    from ome_selector.server.lifecycle import serve

    return asyncio.run(serve(ServeOptions(**values)))
