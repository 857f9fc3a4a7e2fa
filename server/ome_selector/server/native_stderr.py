"""Route raw writes to file descriptor 2 (gRPC C-core's absl log lines, Python's own warnings)
through ``logging``, so ``--log-format json`` stays one JSON object per line.

gRPC's C-core writes lines such as ``E1201 07:20:15.393550 9294 add_port.cc:83] Failed to add
port ...`` straight to fd 2, bypassing Python. ``NativeStderr.start()`` points fd 2 at a pipe and
returns a stream on the original stderr for the log handler; a thread reads the pipe and logs
each line: absl-format lines under the logger ``grpc.core`` at the level of their first letter
(E ERROR, W WARNING, I INFO, F CRITICAL), anything else under ``stderr`` at WARNING.
``stop()`` puts fd 2 back and waits until every line has been logged.
"""

from __future__ import annotations

import logging
import os
import re
import sys
import threading
from typing import BinaryIO, TextIO

__all__ = ["NativeStderr"]

_ABSL_LINE = re.compile(r"^([EWIFD])\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+\s+\S+\] ?(.*)$")
_LEVELS = {"E": logging.ERROR, "W": logging.WARNING, "I": logging.INFO, "F": logging.CRITICAL, "D": logging.DEBUG}


class NativeStderr:
    """Captures fd 2 between ``start()`` and ``stop()``; not reentrant."""

    def __init__(self) -> None:
        self._saved_fd = -1
        self._reader: BinaryIO | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> TextIO:
        """Redirect fd 2 into the pipe; returns a line-buffered text stream on the original stderr."""
        sys.stderr.flush()
        self._saved_fd = os.dup(2)
        read_fd, write_fd = os.pipe()
        os.dup2(write_fd, 2)
        os.close(write_fd)
        self._reader = os.fdopen(read_fd, "rb")
        self._thread = threading.Thread(target=self._pump, name="ome-selector-stderr", daemon=True)
        self._thread.start()
        return os.fdopen(os.dup(self._saved_fd), "w", buffering=1, encoding="utf-8", errors="backslashreplace")

    def stop(self, timeout: float = 5.0) -> None:
        """Restore fd 2 (closing the pipe's last writer) and wait for the reader to finish."""
        if self._thread is None:
            return
        sys.stderr.flush()
        os.dup2(self._saved_fd, 2)
        os.close(self._saved_fd)
        self._thread.join(timeout)
        self._thread = None

    def _pump(self) -> None:
        assert self._reader is not None
        with self._reader:
            for raw in self._reader:
                line = raw.decode("utf-8", "backslashreplace").rstrip("\r\n")
                if not line.strip():
                    continue
                match = _ABSL_LINE.match(line)
                if match:
                    logging.getLogger("grpc.core").log(
                        _LEVELS[match.group(1)], "%s", match.group(2), extra={"fields": {"native": line}}
                    )
                else:
                    logging.getLogger("stderr").warning("%s", line)
