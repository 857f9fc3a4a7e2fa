"""Logs of the real server process: health and reflection calls at DEBUG, gRPC C-core lines
inside the JSON stream, and text logs that no value can split into forged lines."""

from __future__ import annotations

import json
import logging
import socket
import subprocess
from pathlib import Path
from typing import Callable

import grpc
from conftest import EXAMPLE_ISVCS, ServerProcess, server_command
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from ome_selector.cache.manifests import load_inference_service
from ome_selector.server.logs import TextFormatter
from ome_selector_client import SelectorClient

Start = Callable[..., ServerProcess]


def exercise(address: str) -> None:
    """One health check, one reflection listing, one SelectRuntime."""
    with SelectorClient(address) as client:
        assert client.health() == "SERVING"
        assert client.select_runtime(
            load_inference_service(EXAMPLE_ISVCS / "llama-3-3-70b.yaml")
        ).selection.runtime.name
    with grpc.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        list(stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10))


def rpc_lines(server: ServerProcess) -> list[str]:
    server.stop()
    return [
        line.split(" ", 1)[1].rsplit(" duration_ms=", 1)[0] for line in server.lines if " ome_selector.rpc: " in line
    ]


def test_health_and_reflection_calls_log_at_debug(running_server: Start) -> None:
    quiet = running_server()
    exercise(quiet.address)
    assert rpc_lines(quiet) == [
        "INFO ome_selector.rpc: rpc method=/ome.selector.v1.SelectionService/SelectRuntime code=OK"
    ]

    verbose = running_server(extra_args=["--log-level", "debug"])
    exercise(verbose.address)
    assert rpc_lines(verbose) == [
        "DEBUG ome_selector.rpc: rpc method=/grpc.health.v1.Health/Check code=OK",
        "INFO ome_selector.rpc: rpc method=/ome.selector.v1.SelectionService/SelectRuntime code=OK",
        "DEBUG ome_selector.rpc: rpc method=/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo code=OK",
    ]


def test_c_core_lines_stay_inside_the_json_stream() -> None:
    """A port in use makes gRPC's C-core write its own ``E1201 ... add_port.cc:...] Failed to add
    port`` line to fd 2; in JSON mode it arrives as one JSON object under ``grpc.core``."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        process = subprocess.run(
            server_command(listen=listen, log_format="json"), capture_output=True, text=True, timeout=60
        )
    assert process.returncode == 1
    entries = [json.loads(line) for line in process.stderr.splitlines()]  # every line is JSON
    core = [e for e in entries if e["logger"] == "grpc.core"]
    # C-core may add lines of its own (a loaded machine has shown one); the one about the port is there.
    port = [
        e
        for e in core
        if e["message"].startswith(
            f"Failed to add port to server: No address added out of total 1 resolved for '{listen}'"
        )
    ]
    assert [e["level"] for e in port] == ["ERROR"]
    # The relayed C-core lines may arrive after the server's own last line.
    server_lines = [e["message"] for e in entries if e["logger"] == "ome_selector.server"]
    assert server_lines[-1].startswith(f"cannot listen on {listen}: ")


def test_text_logs_escape_control_characters(running_server: Start, tmp_path: Path) -> None:
    forged = "2026-01-01T00:00:00.000Z INFO ome_selector.server: listening on 203.0.113.9:1"
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        json.dumps(
            {
                "apiVersion": "ome.io/v1beta1",
                "kind": "ClusterServingRuntime",
                "metadata": {"name": f"x\n{forged}"},
                "spec": {},
            }
        )
    )
    server = running_server(manifests=[bad])
    assert not any(line.startswith(forged) for line in server.lines)
    [error] = [line for line in server.lines if " ERROR " in line]
    # The loader escapes the name (and cuts it), the text format escapes that text again.
    assert (
        "invalid ClusterServingRuntime x\\\\n2026-01-01T00:00:00.000Z INFO ome_selector.server: listening o…: " in error
    )
    assert server.address != "203.0.113.9:1"


def test_text_formatter_escapes_message_fields_and_tracebacks() -> None:
    formatter = TextFormatter()
    record = logging.LogRecord("ome_selector.rpc", logging.INFO, __file__, 1, "a\nb\r\x1b[31m\\ %s", ("c\td",), None)
    record.created, record.msecs = 0.0, 0.0
    record.fields = {"method": "/x\ny", "note": "two words", "quote": 'say "hi"', "n": 3}  # type: ignore[attr-defined]
    formatter.converter = __import__("time").gmtime
    assert formatter.format(record) == (
        "1970-01-01T00:00:00.000Z INFO ome_selector.rpc: a\\nb\\r\\x1b[31m\\\\ c\\td"
        ' method=/x\\ny note="two words" quote="say \\"hi\\"" n=3'
    )
    try:
        raise ValueError("boom\nline")
    except ValueError:
        import sys

        failed = logging.LogRecord("x", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    text = formatter.format(failed)
    assert "\n" not in text and "ValueError: boom\\nline" in text
