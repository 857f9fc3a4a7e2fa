"""The per-RPC interceptor: one log line per call (health and reflection at DEBUG), the gRPC
metrics (``grpc_type`` from the handler kind, request and response messages counted as they
pass), the calls in flight that drain waits for, and the refusal of new calls once the drain
delay is over (``InFlight.refusing``)."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
import time
import weakref
from typing import Any, Awaitable, Callable

import grpc
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection

from ome_selector.server.metrics import GRPC_TYPES, ServerMetrics
from ome_selector.texts.requests import SHUTTING_DOWN

rpc_log = logging.getLogger("ome_selector.rpc")


# Services whose per-RPC log lines are DEBUG (probes and tooling, not traffic).
QUIET_SERVICES = (health.SERVICE_NAME, reflection.SERVICE_NAME, "grpc.reflection.v1.ServerReflection")
# Drain: at most this long with no call in flight before the listeners close (InFlight.quiet_period).
QUIET_PERIOD = 0.5
# --- per-RPC interceptor: one log line and the gRPC metrics ------------------------------------


class RpcInterceptor(grpc.aio.ServerInterceptor):
    """For every RPC: counts it started and finished in ``metrics`` (when given), and logs one
    line when it ends with method, status code name and duration in ms (DEBUG for health and
    reflection, ERROR for UNKNOWN/INTERNAL, else INFO). Once ``in_flight.refusing``, a new call
    of any service gets UNAVAILABLE ``server is shutting down`` instead of its handler (logged
    and counted as such)."""

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
        for attribute, make, wrap in _handler_kinds():
            behavior = getattr(handler, attribute)
            if behavior is not None:
                if self._in_flight is not None and self._in_flight.refusing:
                    behavior = _refuse_stream if attribute.endswith("_stream") else _refuse
                call = _Call(handler_call_details.method, GRPC_TYPES[attribute], self._metrics, self._in_flight)
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
    not counted. ``refusing``: new calls get UNAVAILABLE (the drain delay is over). Touched on
    the event loop only."""

    def __init__(self) -> None:
        self.count = 0
        self.refusing = False
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

    def __init__(self, method: str, kind: str, metrics: ServerMetrics | None, in_flight: InFlight | None) -> None:
        self.method = method
        self.kind = kind  # grpc_type: unary, server_stream, client_stream or bidi_stream
        service, _, name = method.lstrip("/").partition("/")
        self.service, self.name = service, name
        self.metrics = metrics
        quiet = service in QUIET_SERVICES
        self.level = logging.DEBUG if quiet else logging.INFO
        self.in_flight = None if quiet else in_flight
        self._count_sent: Callable[[], None] | None = None

    def started(self) -> float:
        if self.metrics is not None:
            self.metrics.rpc_started(self.kind, self.service, self.name)
        if self.in_flight is not None:
            self.in_flight.add(1)
        return time.perf_counter()

    def received(self) -> None:
        if self.metrics is not None:
            self.metrics.message_received(self.kind, self.service, self.name)

    def sent(self) -> None:
        if self.metrics is not None:
            if self._count_sent is None:
                self._count_sent = self.metrics.sent_counter(self.kind, self.service, self.name)
            self._count_sent()

    def requests(self, request: Any) -> Any:
        """The request, or for a request stream an iterator that counts each message. The
        request itself is never looked at (an undecodable one raises on any attribute)."""
        if self.kind not in ("client_stream", "bidi_stream"):
            self.received()
            return request
        if hasattr(type(request), "__aiter__"):
            return self._counted_async(request)
        return self._counted(request)

    async def _counted_async(self, requests: Any) -> Any:
        async for request in requests:
            self.received()
            yield request

    def _counted(self, requests: Any) -> Any:
        for request in requests:
            self.received()
            yield request

    def finished(self, context: Any, started: float, error: BaseException | None, response: Any) -> None:
        seconds = time.perf_counter() - started
        if self.in_flight is not None:
            self.in_flight.add(-1, seconds)
        code = _outcome(context, error)
        if self.metrics is not None:
            self.metrics.rpc_finished(
                self.kind, self.service, self.name, code, seconds, response if error is None else None
            )
        level = logging.ERROR if code in ("UNKNOWN", "INTERNAL") else self.level
        if rpc_log.isEnabledFor(level):
            line = functools.partial(
                rpc_log.log,
                level,
                "rpc",
                extra={"fields": {"method": self.method, "code": code, "duration_ms": round(seconds * 1000, 3)}},
            )
            _after_response(line)


# Per event loop: the log lines ``_after_response`` has scheduled and not written yet.
_PENDING: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, int] = weakref.WeakKeyDictionary()


def _after_response(emit: Callable[[], None]) -> None:
    """Run ``emit`` (a call's log line) on the event loop's next turn, once grpc has the response
    to send: the line's formatting and its write to stderr then overlap the response's way to the
    client instead of delaying it (a write releases the GIL, and the loop may get it back only
    after grpc's poller thread). Lines keep their order: the loop runs them in the order the calls
    ended, before anything a later event schedules. ``lines_written`` waits for them. Off the
    loop: at once."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        emit()
        return
    _PENDING[loop] = _PENDING.get(loop, 0) + 1
    loop.call_soon(_write, loop, emit)


def _write(loop: asyncio.AbstractEventLoop, emit: Callable[[], None]) -> None:
    _PENDING[loop] -= 1
    emit()


async def lines_written(turns: int = 100) -> None:
    """Return once every log line ``_after_response`` scheduled on this loop is written (each
    takes one turn of the loop), or after ``turns`` turns."""
    loop = asyncio.get_running_loop()
    for _ in range(turns):
        if not _PENDING.get(loop):
            return
        await asyncio.sleep(0)


async def _refuse(request: Any, context: Any) -> Any:
    """The handler of a call that comes once the server refuses calls (unary response)."""
    await context.abort(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)


async def _refuse_stream(request: Any, context: Any) -> Any:
    """The same for a streamed response."""
    await context.abort(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)
    yield  # pragma: no cover  (never reached: an async generator, as the handler kind needs)


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
    # A stream grpc closed before its end (GeneratorExit at a yield): the call ended under it, as
    # when the client cancels while a response is being sent; grpc does not set the context's code.
    if isinstance(error, (asyncio.CancelledError, GeneratorExit)):
        return "CANCELLED"
    return "UNKNOWN"  # what grpc answers for an exception that escapes a handler


def quiet_failed_sends(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Event loop exception handler: a response grpc could not send because the client had just
    cancelled (``ExecuteBatchError`` before grpc saw the cancel) is one DEBUG line, not a
    traceback (the call's own line says CANCELLED); anything else goes to asyncio's default."""
    error = context.get("exception")
    if error is not None and type(error).__name__ == "ExecuteBatchError":
        rpc_log.debug("rpc ended while a response was being sent: %s", error)
        return
    loop.default_exception_handler(context)


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


class _CountingContext:
    """The servicer context, with ``write()`` counting each message it sends (handlers that
    stream with ``await context.write(message)``, such as health ``Watch``)."""

    def __init__(self, context: Any, call: _Call) -> None:
        self._context, self._call = context, call

    async def write(self, message: Any) -> None:
        await self._context.write(message)
        self._call.sent()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)


def _wrap_unary(call: _Call, behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def wrapped(request: Any, context: Any) -> Any:
        async with _Tracked(call, context) as tracked:
            result = behavior(call.requests(request), context)
            tracked.response = await result if inspect.isawaitable(result) else result
            call.sent()
            return tracked.response

    return wrapped


def _wrap_streaming(call: _Call, behavior: Callable[..., Any]) -> Callable[..., Any]:
    async def wrapped(request: Any, context: Any) -> Any:
        async with _Tracked(call, context):
            result = behavior(call.requests(request), _CountingContext(context, call))
            if hasattr(result, "__aiter__"):
                async for response in result:
                    call.sent()
                    yield response
            elif hasattr(result, "__iter__"):
                for response in result:
                    call.sent()
                    yield response
            else:  # a coroutine that writes with context.write()
                await result

    return wrapped
