"""Log lines on stderr: ``text`` (one line per record, control characters escaped) or ``json``
(one object per line)."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

from ome_selector.server.config import LOG_FORMATS

_HANDLER_NAME = "ome-selector-stderr"
# --- logging -----------------------------------------------------------------------------------


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and any ``fields`` extra."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, separators=(",", ":"), default=str)


# Control characters (C0, DEL, C1, and the Unicode line/paragraph separators) and the backslash
# itself, as escapes: one log record is always one line, whatever names a request carries.
_ESCAPES = {i: f"\\x{i:02x}" for i in [*range(0x20), *range(0x7F, 0xA0)]}
_ESCAPES.update(
    {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\", 0x2028: "\\u2028", 0x2029: "\\u2029"}
)


def escape_text(value: object) -> str:
    """``str(value)`` with control characters and backslashes escaped (``\\n``, ``\\x1b``, ``\\\\``)."""
    text = str(value)
    if text.isprintable() and "\\" not in text:  # nothing to escape: every escaped character is not printable
        return text
    return text.translate(_ESCAPES)


def _field_value(value: object) -> str:
    text = escape_text(value)
    if text == "" or " " in text or '"' in text or "=" in text:
        return '"' + text.replace('"', '\\"') + '"'
    return text


class TextFormatter(logging.Formatter):
    """``<time> <LEVEL> <logger>: <message> key=value ...``, one line per record: control
    characters in the message, the field values and any traceback are escaped; a field value
    with a space, ``"`` or ``=`` is quoted."""

    def __init__(self) -> None:
        super().__init__(datefmt="%Y-%m-%dT%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        stamp = self.formatTime(record, self.datefmt) + f".{int(record.msecs):03d}Z"
        text = f"{stamp} {record.levelname} {escape_text(record.name)}: {escape_text(record.getMessage())}"
        fields = getattr(record, "fields", None)
        if fields:
            text += "".join(f" {escape_text(key)}={_field_value(value)}" for key, value in fields.items())
        if record.exc_info:
            text += f" exception={_field_value(self.formatException(record.exc_info))}"
        return text


def configure_logging(log_format: str, level: int = logging.INFO, stream: TextIO | None = None) -> None:
    """Send all logs to ``stream`` (default stderr) in ``text`` or ``json`` format (UTC times)."""
    if log_format not in LOG_FORMATS:
        raise ValueError(f"unknown log format {log_format!r} (want one of {', '.join(LOG_FORMATS)})")
    formatter: logging.Formatter = JsonFormatter() if log_format == "json" else TextFormatter()
    formatter.converter = time.gmtime
    handler = logging.StreamHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(formatter)
    handler.set_name(_HANDLER_NAME)
    root = logging.getLogger()
    for old in [h for h in root.handlers if h.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)  # configured before: replace, don't duplicate
    root.addHandler(handler)
    root.setLevel(level)
