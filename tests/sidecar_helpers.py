"""Helpers for the sidecar tests (tests/test_sidecar_*.py): HTTP requests to the probe and
metrics listeners, a parsed /metrics scrape, and the bound addresses a server logs."""

from __future__ import annotations

import http.client
import re
from typing import Any

from conftest import ServerProcess
from prometheus_client.parser import text_string_to_metric_families

HTTP_LINE = re.compile(r"http endpoints on ([^\s\"]+)")
METRICS_LINE = re.compile(r"metrics on ([^\s\"]+)")


def http_address(server: ServerProcess) -> str:
    """The ``host:port`` of the server's HTTP listener, from its log line."""
    return server.wait_for_line(HTTP_LINE).group(1)


def metrics_address(server: ServerProcess) -> str:
    """The ``host:port`` of the server's metrics listener, from its log line."""
    return server.wait_for_line(METRICS_LINE).group(1)


def http_get(address: str, path: str, method: str = "GET") -> tuple[int, str]:
    """``(status, body)`` of one HTTP request to ``address`` (``host:port``)."""
    host, _, port = address.rpartition(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, response.read().decode()
    finally:
        connection.close()


def scrape(address: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``/metrics`` as ``{(sample name, sorted labels): value}``."""
    status, body = http_get(address, "/metrics")
    assert status == 200, body
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float] = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def sample(samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: Any) -> float | None:
    """The value of ``name{labels}`` in a scrape, or None when absent."""
    return samples.get((name, tuple(sorted((k, str(v)) for k, v in labels.items()))))


def names(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str
) -> dict[tuple[tuple[str, str], ...], float]:
    """Every sample called ``name``: ``{labels: value}``."""
    return {labels: value for (n, labels), value in samples.items() if n == name}
