"""The per-RPC log line (docs/deploy.md: one line per RPC with method, code and duration) is
written on the event loop's next turn, after the interceptor has handed the response back to
grpc: in call order, one per call, with its fields as before; off an event loop, at once."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from ome_selector.server import interceptor

SELECT = "/ome.selector.v1.SelectionService/SelectRuntime"
EXPLAIN = "/ome.selector.v1.SelectionService/ExplainRuntimes"


class _Context:
    """A servicer context whose handler returned without setting a code."""

    def code(self) -> Any:
        return None


def _lines(caplog: pytest.LogCaptureFixture) -> list[tuple[str, str, str]]:
    return [
        (r.levelname, r.fields["method"], r.fields["code"])  # type: ignore[attr-defined]
        for r in caplog.records
        if r.name == "ome_selector.rpc"
    ]


async def test_the_line_comes_on_the_loops_next_turn_in_call_order(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ome_selector.rpc")
    first = interceptor._Call(SELECT, "unary", None, None)
    second = interceptor._Call(EXPLAIN, "unary", None, None)
    first.finished(_Context(), first.started(), None, b"")
    second.finished(_Context(), second.started(), ValueError("boom"), None)
    assert _lines(caplog) == []  # nothing yet: the response goes out first
    await asyncio.sleep(0)
    assert _lines(caplog) == [("INFO", SELECT, "OK"), ("ERROR", EXPLAIN, "UNKNOWN")]
    durations = [r.fields["duration_ms"] for r in caplog.records]  # type: ignore[attr-defined]
    assert all(isinstance(d, float) and d >= 0 for d in durations)


async def test_a_health_call_below_the_level_schedules_nothing(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ome_selector.rpc")
    call = interceptor._Call("/grpc.health.v1.Health/Check", "unary", None, None)
    loop = asyncio.get_running_loop()
    scheduled: list[Any] = []
    original = loop.call_soon
    loop.call_soon = lambda *args, **kwargs: scheduled.append(args) or original(*args, **kwargs)  # type: ignore[method-assign]
    try:
        call.finished(_Context(), call.started(), None, b"")
    finally:
        loop.call_soon = original  # type: ignore[method-assign]
    await asyncio.sleep(0)
    assert (scheduled, _lines(caplog)) == ([], [])


def test_off_an_event_loop_the_line_is_written_at_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="ome_selector.rpc")
    call = interceptor._Call(SELECT, "unary", None, None)
    call.finished(_Context(), call.started(), None, b"")
    assert _lines(caplog) == [("INFO", SELECT, "OK")]


async def test_lines_written_returns_once_the_scheduled_lines_are_out(caplog: pytest.LogCaptureFixture) -> None:
    """What the server awaits before its last line, ``stopped``."""
    caplog.set_level(logging.INFO, logger="ome_selector.rpc")
    calls = [interceptor._Call(SELECT, "unary", None, None) for _ in range(3)]
    for call in calls:
        call.finished(_Context(), call.started(), None, b"")
    await interceptor.lines_written()
    assert _lines(caplog) == [("INFO", SELECT, "OK")] * 3
