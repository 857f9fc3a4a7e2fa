"""docs/architecture.md, "Fuzzing": the fuzz properties of tools.fuzz, bounded to a few seconds each.

``OME_SELECTOR_FUZZ_EXAMPLES=N`` runs each property for N inputs instead; the long run is
``python -m tools.fuzz --examples 100000`` (docs/architecture.md, "Fuzzing")."""

from __future__ import annotations

import logging
import os
from typing import Iterator

import grpc
import pytest

from tools import fuzz

_OVERRIDE = os.environ.get("OME_SELECTOR_FUZZ_EXAMPLES")


def examples(default: int) -> int:
    return int(_OVERRIDE) if _OVERRIDE else default


@pytest.fixture(scope="module")
def channel() -> Iterator[grpc.Channel]:
    with fuzz.serving() as channel:
        yield channel


def _no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    logged = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert not logged, logged[0].getMessage()


def test_random_and_mutated_requests_through_grpc(channel: grpc.Channel, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    fuzz.run_rpc(channel, examples(100))
    _no_traceback(caplog)
    assert fuzz.FINDINGS.codes["rpc"]["INVALID_ARGUMENT"] > 0


def test_random_bytes_through_grpc(channel: grpc.Channel, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO)
    fuzz.run_raw(channel, examples(100))
    _no_traceback(caplog)


def test_api_functions_and_store_writes_in_process() -> None:
    fuzz.run_api(examples(150))


def test_the_loader() -> None:
    fuzz.run_loader(examples(60))


def test_the_long_run_command_counts_every_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert fuzz.main(["--examples", "40", "--only", "api", "loader"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[0] for line in out] == ["api", "loader", "total"]
    assert out[-1].startswith("total: 40 inputs in ")
