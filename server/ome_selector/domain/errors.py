"""Errors raised by the pure selection core (no gRPC imports), and the Kubernetes-style texts
they carry.

The gRPC servicers map ``RequestError.code`` to a status code; ``violations`` become a
``google.rpc.BadRequest`` detail, one field violation each (``service.rich_status`` converts the
field paths to the manifest's camelCase and bounds every text, see ``fieldpaths``).

Descriptions follow the API server's ``field.Error`` texts (k8s.io/apimachinery
``pkg/util/validation/field``): ``Required value``, ``Invalid value: "<value>": <detail>``,
``Unsupported value: "<value>": supported values: "a", "b"``, ``Too many: <n>: must have at most
<m> items``, ``Too long: may not be more than <m> bytes``. A value is always shown quoted, with
control characters escaped and cut to ``VALUE_PREVIEW`` characters, so an error line cannot be
forged and always fits in gRPC's metadata (``truncated value: "aaaa…" (20000 characters)``).
"""

from __future__ import annotations

from typing import Iterable, NamedTuple

# Characters of a value shown in an error before it is cut with "…".
VALUE_PREVIEW = 64
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


class FieldViolation(NamedTuple):
    """One bad field: a field path (e.g. ``objects[3].cluster_serving_runtime.metadata.name``;
    snake_case or camelCase, ``fieldpaths.json_path`` gives the manifest's form) and what is
    wrong with it."""

    field: str
    description: str


class RequestError(Exception):
    """A request the service cannot answer.

    ``code`` is a gRPC status code name: ``INVALID_ARGUMENT`` (bad input; ``violations`` names
    each bad field), ``NOT_FOUND`` (unknown model or named runtime), ``UNAVAILABLE`` (cache never
    synced). ``summary`` is True when ``message`` only summarises ``violations`` (made by
    ``invalid``), so a presenter may rebuild it from converted violations.
    """

    def __init__(
        self, code: str, message: str, violations: list[FieldViolation] | None = None, *, summary: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.violations = list(violations or [])
        self.summary = summary

    @classmethod
    def invalid(cls, violations: list[FieldViolation]) -> "RequestError":
        """INVALID_ARGUMENT summarising every violation (``invalid request: <field>: <description>; ...``)."""
        return cls("INVALID_ARGUMENT", summarize(violations), violations, summary=True)


def summarize(violations: Iterable[FieldViolation]) -> str:
    """``invalid request: <field>: <description>; ...`` (unbounded; callers bound it)."""
    return "invalid request: " + "; ".join(f"{v.field}: {v.description}" for v in violations)


# --- texts -------------------------------------------------------------------------------------


def printable(text: str, *, quoted: bool = False) -> str:
    """``text`` with control and other non-printable characters escaped (``\\n``, ``\\x1b``,
    ``\\u2028`` ...), as Go's ``%q`` shows them, so it stays on one line; with ``quoted``, also
    ``"`` and backslashes (for a value shown between quotes)."""
    if text.isprintable() and not (quoted and ('"' in text or "\\" in text)):
        return text
    out = []
    for ch in text:
        if ch in _ESCAPES and (quoted or ch not in '"\\'):
            out.append(_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x100:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def quote(value: object, limit: int = VALUE_PREVIEW) -> str:
    """A value as an error shows it: ``"text"``, or ``"first <limit> characters…" (<n>
    characters)`` when longer; numbers and booleans unquoted (``0``, ``true``)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return printable(str(value))[:limit]
    text = value if isinstance(value, str) else str(value)
    if len(text) > limit:
        return f'"{printable(text[:limit], quoted=True)}…" ({len(text)} characters)'
    return f'"{printable(text, quoted=True)}"'


def required(detail: str = "") -> str:
    """``Required value``, or ``Required value: <detail>``."""
    return f"Required value: {detail}" if detail else "Required value"


def invalid_value(value: object, detail: str) -> str:
    """``Invalid value: "<value>": <detail>`` (the value cut as ``quote`` does)."""
    return f"Invalid value: {quote(value)}: {detail}"


def too_long_value(value: str, limit: int) -> str:
    """``Invalid value: "aaaa…" (20000 characters): must be no more than 63 characters``."""
    return invalid_value(value, f"must be no more than {limit} characters")


def unsupported(value: object, supported: Iterable[str]) -> str:
    """``Unsupported value: "MultiNode": supported values: "OMENative", "RawDeployment"``
    (the API server's text for a value outside a CRD enum)."""
    return f"Unsupported value: {quote(value)}: supported values: " + ", ".join(f'"{s}"' for s in supported)


def too_many(count: int, limit: int) -> str:
    """``Too many: <count>: must have at most <limit> items``."""
    return f"Too many: {count}: must have at most {limit} items"


def too_long_bytes(limit: int) -> str:
    """``Too long: may not be more than <limit> bytes``."""
    return f"Too long: may not be more than {limit} bytes"


def forbidden(detail: str) -> str:
    """``Forbidden: <detail>``."""
    return f"Forbidden: {detail}"


def bound(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` UTF-8 bytes, ending in ``… (<n> characters)`` when cut."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    tail = f"… ({len(text)} characters)"
    room = max(0, limit - len(tail.encode("utf-8")))
    return data[:room].decode("utf-8", "ignore") + tail
