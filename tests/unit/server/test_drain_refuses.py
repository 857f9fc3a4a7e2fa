"""The drain ends for callers that ignore readiness: once ``--drain-delay`` is over and the calls
queued before it are taken, a new call gets UNAVAILABLE ``server is shutting down`` from the
server itself while a call already in flight still finishes OK within ``--grace``, and
``serve`` returns 0: the process exits (docs/deploy.md "Probes, health and drain").

In process: ``serve`` on 127.0.0.1:0 with the real servicers, one of which
(``GetRuntimeTree``) waits until the test releases it, so exactly one call stays in flight for
as long as the test wants, while the event loop stays free to answer (and refuse) new calls.
Nothing is timed: the test waits for events (the drain delay's end in the log, each caller's
first UNAVAILABLE), each wait bounded by the grace.

Why no call may end CANCELLED: when a gRPC server stops, C-core drops ("zombifies") the calls
it holds that no handler has taken yet, and those that reach it as it stops, and a call whose
handler never ran ends CANCELLED, not UNAVAILABLE (server.cc ``ZombifyPending``,
filter_stack_call.cc ``ExternalUnref``). So the listeners close only once no call is in flight,
and until then the interceptor refuses new calls itself: a caller that stops at its first
UNAVAILABLE never meets gRPC's stop. (Before, the listeners closed with the held call in
flight: the callers met GOAWAY's UNAVAILABLE with gRPC's own text, or CANCELLED racing it.)
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import grpc
import pytest
from conftest import EXAMPLE_ISVCS
from ome.selector.v1 import selector_pb2, selector_pb2_grpc
from ome_selector.cache.manifests import load_inference_service
from ome_selector.rpc.servicers import SelectionServicer
from ome_selector.server import lifecycle
from ome_selector.server.config import ServeOptions

GRACE = 60.0  # seconds: long enough that "before the grace ends" is never a race
DRAIN_DELAY = 0.2
CALLERS = 4  # callers that ignore readiness, concurrent
DRAIN_DELAY_OVER = "shutting down, draining in-flight calls for up to 60.0s"


class Lines(logging.Handler):
    """The server's log messages, and an event set when one equals ``wanted``."""

    def __init__(self, wanted: str) -> None:
        super().__init__(logging.INFO)
        self.messages: list[str] = []
        self.wanted = wanted
        self.seen = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.messages.append(message)
        if message == self.wanted:
            self._loop.call_soon_threadsafe(self.seen.set)


async def test_after_the_drain_delay_new_calls_are_refused_while_the_call_in_flight_ends_ok(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    entered, release = asyncio.Event(), asyncio.Event()

    async def held_tree(self: SelectionServicer, request: Any, context: Any) -> selector_pb2.GetRuntimeTreeResponse:
        entered.set()
        await release.wait()  # in flight until the test releases it; the event loop stays free
        return selector_pb2.GetRuntimeTreeResponse(cache_version="held")

    monkeypatch.setattr(SelectionServicer, "GetRuntimeTree", held_tree)
    lines = Lines(DRAIN_DELAY_OVER)
    server_log = logging.getLogger("ome_selector.server")
    server_log.addHandler(lines)
    stop = asyncio.Event()
    address: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    options = ServeOptions(listen="127.0.0.1:0", drain_delay=DRAIN_DELAY, grace=GRACE)
    serving = asyncio.create_task(lifecycle.serve(options, stop_event=stop, on_listening=address.set_result))
    select = selector_pb2.SelectRuntimeRequest(
        inference_service=load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
    )
    try:
        target = await asyncio.wait_for(address, 30)
        async with grpc.aio.insecure_channel(target) as channel:
            stub = selector_pb2_grpc.SelectionServiceStub(channel)
            first = await stub.SelectRuntime(select, timeout=10)
            assert first.selection.runtime.name == "llama-3-3-70b-hopper"
            held = stub.GetRuntimeTree(selector_pb2.GetRuntimeTreeRequest(), timeout=GRACE + 30)
            await asyncio.wait_for(entered.wait(), 10)

            stop.set()  # SIGTERM
            await asyncio.wait_for(lines.seen.wait(), GRACE)  # the drain delay is over
            # Callers that ignore readiness keep calling, each until its first error; the server
            # refuses them well within the grace while the held call is still in flight.
            loop = asyncio.get_running_loop()
            give_up = loop.time() + GRACE / 2

            async def caller() -> tuple[list[grpc.StatusCode], str]:
                codes: list[grpc.StatusCode] = []
                while loop.time() < give_up:
                    try:
                        answer = await stub.SelectRuntime(select, timeout=10)
                    except grpc.aio.AioRpcError as error:
                        codes.append(error.code())
                        return codes, error.details() or ""
                    assert answer.selection.runtime.name == "llama-3-3-70b-hopper"
                    codes.append(grpc.StatusCode.OK)
                    await asyncio.sleep(0.01)
                return codes, "gave up"

            results = await asyncio.gather(*(caller() for _ in range(CALLERS)))
            for codes, details in results:
                assert (codes[-1:], details) == ([grpc.StatusCode.UNAVAILABLE], "server is shutting down"), codes[-5:]
                assert set(codes[:-1]) <= {grpc.StatusCode.OK}, codes
            assert not held.done()  # refused while the held call is in flight
            stream = stub.WatchSelections(selector_pb2.WatchSelectionsRequest(), timeout=10)
            with pytest.raises(grpc.aio.AioRpcError) as refused:  # a streamed response too
                async for _ in stream:
                    pass
            assert (refused.value.code(), refused.value.details()) == (
                grpc.StatusCode.UNAVAILABLE,
                "server is shutting down",
            )

            release.set()
            response = await held
            assert response.cache_version == "held"
            assert await held.code() == grpc.StatusCode.OK
        assert await asyncio.wait_for(serving, GRACE) == 0  # exits within the grace
    finally:
        release.set()
        stop.set()
        server_log.removeHandler(lines)
        if not serving.done():
            serving.cancel()
    assert lines.messages[-3:] == [
        "draining: health NOT_SERVING, /readyz 503; serving 0.2s more, then in-flight calls get up to 60.0s",
        DRAIN_DELAY_OVER,
        "stopped",
    ]
