"""Shared fixtures: paths to ../shared and the examples, a real server in a subprocess, and a
scripted SelectionService in-process.

``running_server`` is a factory: ``server = running_server(manifests=[...])`` starts
``python -m ome_selector.cli serve --listen 127.0.0.1:0`` (always loopback), waits for its
``listening on`` line and returns a ``ServerProcess`` with the bound ``address`` and the
server's stderr lines. Every server the test started is stopped afterwards.

``fake_server`` is a factory too: ``address = fake_server(servicer)`` serves a
``SelectionServiceServicer`` in-process on 127.0.0.1 (the client tests script its answers).

Two layers, chosen here for every collected test (``pytest_collection_modifyitems``):
``e2e`` for a test that starts a real server subprocess or runs any subprocess (grpcurl, mypy,
the CLI as a process, Go, the stub generator), ``fast`` for everything else (in-process).
Run them apart with ``pytest -m fast`` and ``pytest -m e2e``.
"""

from __future__ import annotations

import inspect
import os
import re
import signal
import subprocess
import sys
import threading
import time
from concurrent import futures
from pathlib import Path
from typing import IO, Any, Callable, Iterator, Sequence, TypeVar

import grpc
import pytest
from ome.selector.v1 import selector_pb2_grpc

# ---- signals ----------------------------------------------------------------------------------

# A suite started with SIGINT ignored (``nohup``, a background job of a non-interactive shell)
# passes that on to every process it starts, and a Python process that inherits an ignored
# SIGINT has no KeyboardInterrupt: the tests that stop a CLI with Ctrl-C would wait for it.
# A handled signal is reset to the default in a child, so handling it here restores Ctrl-C.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# ---- the two test layers ----------------------------------------------------------------------

# Modules whose every test is end to end (each serves through a subprocess or runs a tool).
E2E_MODULES = frozenset({"test_e2e_catalog", "test_grpcurl", "test_lifecycle_e2e", "test_readme", "test_stubs_drift"})
# Fixtures that start a server subprocess.
E2E_FIXTURES = frozenset({"running_server"})
# Source text that starts a process: the subprocess module, this file's ServerProcess, the
# server command line, or the running_server fixture.
_STARTS_PROCESS = re.compile(
    r"\bsubprocess\.(?:run|Popen|call|check_call|check_output)\b|\bServerProcess\(|\bserver_command\(|\brunning_server\b"
)
_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\b")


def _source(obj: Any) -> str:
    try:
        return inspect.getsource(obj)
    except (OSError, TypeError):
        return ""


def _process_helpers(module: Any) -> frozenset[str]:
    """Names of the module's own functions and classes that start a process, directly or by
    calling another such helper of the module (to a fixed point)."""
    cached = module.__dict__.get("__e2e_helpers__")
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    sources = {
        name: _source(value)
        for name, value in vars(module).items()
        if (inspect.isfunction(value) or inspect.isclass(value))
        and getattr(value, "__module__", None) == module.__name__
    }
    found = {name for name, text in sources.items() if _STARTS_PROCESS.search(text)}
    while True:
        more = {name for name, text in sources.items() if name not in found and found & set(_NAME.findall(text))}
        if not more:
            break
        found |= more
    helpers = frozenset(found)
    module.__e2e_helpers__ = helpers
    return helpers


def _starts_process(text: str, helpers: frozenset[str]) -> bool:
    return bool(_STARTS_PROCESS.search(text)) or bool(helpers & set(_NAME.findall(text)))


def is_e2e(item: pytest.Item) -> bool:
    """True when ``item`` starts a server subprocess or runs a subprocess (see the module doc)."""
    module = getattr(item, "module", None)
    if module is None:
        return False
    if module.__name__.rsplit(".", 1)[-1] in E2E_MODULES:
        return True
    fixturenames = set(getattr(item, "fixturenames", ()))
    if fixturenames & E2E_FIXTURES:
        return True
    helpers = _process_helpers(module)
    function = getattr(item, "function", None)
    if function is not None and _starts_process(_source(function), helpers):
        return True
    info = getattr(item, "_fixtureinfo", None)
    for name in fixturenames:
        for fixturedef in info.name2fixturedefs.get(name, ()) if info is not None else ():
            if _starts_process(_source(fixturedef.func), helpers):
                return True
    return False


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark every test ``e2e`` or ``fast`` (exactly one of the two)."""
    for item in items:
        item.add_marker(pytest.mark.e2e if is_e2e(item) else pytest.mark.fast)


REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED = REPO_ROOT.parent / "shared"
CATALOG = SHARED / "ome-catalog"
CATALOG_RUNTIMES = CATALOG / "runtimes"
CATALOG_MODELS = CATALOG / "models"
OME_CLUSTER = SHARED / "ome-cluster"
EXAMPLES = REPO_ROOT / "server" / "ome_selector" / "examples"
EXAMPLE_ISVCS = EXAMPLES / "inferenceservices"

T = TypeVar("T")
_LISTENING = re.compile(r"listening on ([^\s\"]+)")
START_TIMEOUT = 30.0


class StreamLines:
    """The lines of a text stream (a process's stdout or stderr), read by a thread as they come."""

    def __init__(self, stream: IO[str]) -> None:
        self._lines: list[str] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._reader.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._changed:
                self._lines.append(line.rstrip("\n"))
                self._changed.notify_all()
        with self._changed:
            self._changed.notify_all()

    @property
    def lines(self) -> list[str]:
        """The lines read so far."""
        with self._changed:
            return list(self._lines)

    def wait(
        self,
        find: Callable[[list[str]], T | None],
        what: str,
        timeout: float,
        ended: Callable[[], str] = lambda: "the stream ended",
    ) -> T:
        """The first result of ``find(lines)`` that is not None, called each time a line comes;
        fails (AssertionError naming ``what`` and the lines) when the stream ends first
        (``ended()`` says how) or ``timeout`` seconds pass."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = find(self._lines)
                if found is not None:
                    return found
                if not self._reader.is_alive():
                    raise AssertionError(f"{ended()} before {what}:\n" + "\n".join(self._lines))
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise AssertionError(f"no {what} within {timeout}s:\n" + "\n".join(self._lines))
                self._changed.wait(remaining)

    def join(self, timeout: float) -> None:
        """Wait until the stream is read to its end."""
        self._reader.join(timeout)


class ServerProcess:
    """A server started by ``running_server``."""

    def __init__(self, args: Sequence[str]) -> None:
        self.args = list(args)
        self.process = subprocess.Popen(
            self.args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert self.process.stderr is not None
        self._stderr = StreamLines(self.process.stderr)
        self.address = ""

    @property
    def lines(self) -> list[str]:
        """The stderr lines read so far."""
        return self._stderr.lines

    def wait_for_line(self, pattern: str | re.Pattern[str], timeout: float = START_TIMEOUT) -> re.Match[str]:
        """Wait until a stderr line matches ``pattern`` (re.search); fail if the process exits first."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        return self._stderr.wait(
            lambda lines: next((m for m in map(regex.search, lines) if m), None),
            repr(regex.pattern),
            timeout,
            ended=lambda: f"server exited ({self.process.poll()})",
        )

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Send ``sig``, wait for the exit status and for stderr to be read to the end."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(timeout)
        self._stderr.join(timeout)
        return code


def server_command(
    manifests: Sequence[str | os.PathLike[str]] | None = None,
    *,
    listen: str = "127.0.0.1:0",
    log_format: str = "text",
    wait_for_sync: bool = False,
    extra_args: Sequence[str] = (),
) -> list[str]:
    """The ``ome-selector serve`` command line the fixture runs."""
    args = [sys.executable, "-m", "ome_selector.cli", "serve", "--listen", listen, "--log-format", log_format]
    if manifests is not None:
        args += ["--manifests", *map(str, manifests)]
    if wait_for_sync:
        args.append("--wait-for-sync")
    return args + list(extra_args)


@pytest.fixture
def running_server() -> Iterator[Callable[..., ServerProcess]]:
    """Factory: ``running_server(manifests=None, *, listen=..., log_format=..., wait_for_sync=...,
    extra_args=())`` starts a server subprocess and returns it once it listens."""
    started: list[ServerProcess] = []

    def start(
        manifests: Sequence[str | os.PathLike[str]] | None = None,
        *,
        listen: str = "127.0.0.1:0",
        log_format: str = "text",
        wait_for_sync: bool = False,
        extra_args: Sequence[str] = (),
    ) -> ServerProcess:
        assert listen.startswith(("127.0.0.1:", "unix:")), "test servers listen on loopback or a unix socket only"
        server = ServerProcess(
            server_command(
                manifests, listen=listen, log_format=log_format, wait_for_sync=wait_for_sync, extra_args=extra_args
            )
        )
        started.append(server)
        server.address = server.wait_for_line(_LISTENING).group(1)
        return server

    yield start
    for server in started:
        server.stop()


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """``../shared`` next to the repository."""
    assert SHARED.is_dir(), f"{SHARED} is missing: the shared data must sit next to the repository"
    return SHARED


@pytest.fixture
def fake_server() -> Iterator[Callable[[Any], str]]:
    """Factory: ``fake_server(servicer)`` serves a ``SelectionServiceServicer`` on 127.0.0.1 in this
    process and returns its address. Every server the test started is stopped afterwards."""
    servers: list[grpc.Server] = []

    def start(servicer: Any) -> str:
        server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
        selector_pb2_grpc.add_SelectionServiceServicer_to_server(servicer, server)
        port = server.add_insecure_port("127.0.0.1:0")
        server.start()
        servers.append(server)
        return f"127.0.0.1:{port}"

    yield start
    for server in servers:
        server.stop(None)
