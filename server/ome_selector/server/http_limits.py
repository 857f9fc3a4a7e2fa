"""``HttpLimits``: the bounds of one HTTP listener (probes, metrics), set by the ``--http-*``
serve flags. Apart from ``http`` so that the flags' defaults import no uvicorn."""

from __future__ import annotations

import dataclasses

__all__ = ["HttpLimits"]


@dataclasses.dataclass(frozen=True)
class HttpLimits:
    """Bounds of one HTTP listener.

    - ``max_connections``: open connections; one past that gets ``503`` and is closed.
    - ``header_timeout``: seconds a request's headers may take to arrive after the connection
      opens (or after the previous response); then the connection is closed.
    - ``idle_timeout``: seconds a kept-alive connection may wait for its next request
      (uvicorn's ``timeout_keep_alive``).
    - ``backlog``: connections the kernel queues before they are accepted (``listen(2)``).
    - ``max_header_bytes``: bytes of a request line and headers buffered before they are
      complete (h11's ``max_incomplete_event_size``); past that uvicorn answers ``400`` and
      closes the connection.
    """

    max_connections: int = 64
    header_timeout: float = 5.0
    idle_timeout: float = 30.0
    backlog: int = 1024
    max_header_bytes: int = 16 * 1024

    def problems(self) -> list[str]:
        """What is out of range (empty when the limits can be served)."""
        found = []
        for name in ("max_connections", "backlog", "max_header_bytes"):
            if getattr(self, name) < 1:
                found.append(f"http_{name}: must be 1 or more")
        for name in ("header_timeout", "idle_timeout"):
            if not 0 < getattr(self, name) < float("inf"):
                found.append(f"http_{name}: must be more than 0 seconds")
        return found
