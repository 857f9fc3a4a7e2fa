"""The ExplainRuntimesResponse as bytes, joined from parts serialized once (protos/ome/selector/v1/
selector.proto, ``ExplainRuntimesResponse``; the protobuf wire format: a message's fields in
field-number order, each ``tag, length, bytes`` for a message or a string, so serialized fields
of one message joined in number order are that message serialized).

An EXCLUDED row (``explain_rows.Excluded``) is ``runtime`` (field 1), ``verdict`` (2),
``reasons`` (7), ``reason`` (8), ``supported_model_format_index`` (9). Each part is serialized by
protobuf once and kept beside the snapshots, keyed by content, so a write never makes one wrong:

- ``runtime``: by the runtime's (kind, namespace, name);
- the request-side reasons: by the ``RequestChecks`` object (one per content, held here);
- the model-side reasons (the first primary or not) and the model-side reason text: by the
  model's ``cache_key`` and the spec's ``fit_id``, what the ``FitBase`` they come from is keyed by.

Candidate rows and the rows of runtimes that pass every check are serialized one by one."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from ome.selector.v1 import selector_pb2 as pb

from ome_selector.domain import objects as d
from ome_selector.engine import memo as caches
from ome_selector.engine.evaluation import Evaluation
from ome_selector.engine.explain_rows import Excluded, RequestChecks
from ome_selector.rpc.common import add_reasons, runtime_ref
from ome_selector.rpc.enums import VERDICT_TO_PB
from ome_selector.rules.results import Failure

V = TypeVar("V")
_ROW_TAG = b"\x0a"  # ExplainRuntimesResponse.runtimes: field 1, length-delimited
_EXCLUDED = pb.RuntimeExplanation(verdict=pb.VERDICT_EXCLUDED).SerializeToString()
_CANDIDATE = pb.RuntimeExplanation(verdict=pb.VERDICT_CANDIDATE).SerializeToString()
_NO_REASON = pb.RuntimeExplanation(reason="-").SerializeToString()  # a candidate's REASON column
# Tags of RuntimeExplanation's varint fields: rank (3), score (4), priority (5), weight (6),
# supported_model_format_index (9).
_RANK, _SCORE, _PRIORITY, _WEIGHT, _INDEX = b"\x18", b"\x20", b"\x28", b"\x30", b"\x48"
_UINT64 = (1 << 64) - 1


def varint(value: int) -> bytes:
    """``value`` (0 or more) as a protobuf varint."""
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = tuple(varint(n) for n in range(1 << 14))  # the lengths of most rows


def _length(n: int) -> bytes:
    return _SMALL[n] if n < 16384 else varint(n)


def _int(tag: bytes, value: int) -> bytes:
    """An int32 or int64 field: a negative value is its 64-bit two's complement, as protobuf
    writes both."""
    return tag + (_SMALL[value] if 0 <= value < 16384 else varint(value & _UINT64))


# supported_model_format_index -> its field (none for 0), for the usual indexes.
_INDEXES = {i: _int(_INDEX, i) if i else b"" for i in range(-1, 64)}


@dataclass(frozen=True, slots=True)
class _Part:
    """Some failures' fields of a ``RuntimeExplanation``, serialized once, each byte held once:
    the first failure's ``Reason`` (field 7) is ``head`` (its fields 1 to 5), then ``primary:
    true`` (field 6) or nothing, then ``tail`` (field 7, the entry mismatches), after the tag and
    length of ``primary`` or ``secondary``; ``rest``: the other failures' ``Reason`` s (none
    primary); ``reason``: field 8, the first failure's text."""

    primary: bytes
    secondary: bytes
    head: bytes
    tail: bytes
    rest: bytes
    reason: bytes


_REASON_TAG = b"\x3a"  # RuntimeExplanation.reasons: field 7, length-delimited
_PRIMARY = pb.Reason(primary=True).SerializeToString()  # Reason.primary: field 6


def _part(failures: Sequence[Failure]) -> _Part:
    """The ``_Part`` of at least one failure."""
    first, rest = pb.RuntimeExplanation(), pb.RuntimeExplanation()
    add_reasons(first.reasons, failures[:1], primary=False, entries=False)
    add_reasons(rest.reasons, failures[1:], primary=False)
    head = first.reasons[0].SerializeToString()
    tail = pb.Reason(entry_mismatches=first.reasons[0].entry_mismatches).SerializeToString()
    for m in failures[0].entries:
        tail += pb.Reason(
            entry_mismatches=[pb.EntryMismatch(index=m.index, differences=m.differences)]
        ).SerializeToString()
    return _Part(
        _REASON_TAG + _length(len(head) + len(_PRIMARY) + len(tail)),
        _REASON_TAG + _length(len(head) + len(tail)),
        head,
        tail,
        rest.SerializeToString(),
        pb.RuntimeExplanation(reason=failures[0].message).SerializeToString(),
    )


_NO_FAILURE = _Part(b"", b"", b"", b"", b"", b"")  # the model-side part of a spec the model fits


def _part_size(part: object) -> int:
    assert isinstance(part, _Part)
    return 160 + len(part.head) + len(part.tail) + len(part.rest) + len(part.reason)


class _Table(Generic[V]):
    """``{key: value}`` bounded to about ``budget`` bytes (``size_of`` each, plus 100); emptied
    when full. Read ``items`` directly; ``add`` under a lock."""

    def __init__(self, budget: int, size_of: Callable[[V], int]) -> None:
        self.budget = budget
        self._size_of = size_of
        self.items: dict[object, V] = {}
        self._total = 0
        self._lock = threading.Lock()

    def add(self, key: object, value: V) -> V:
        size = 100 + self._size_of(value)
        with self._lock:
            if self._total + size > self.budget:
                self.items = {}
                self._total = 0
            self.items[key] = value
            self._total += size
        return value


# runtime key (kind, namespace, name) -> its RuntimeExplanation.runtime field (1), serialized.
_REFS: _Table[bytes] = _Table(16 << 20, len)
# id(RequestChecks) -> (the object, its _Part or None without a failure): holding the object
# keeps its id from being reused.
_REQUEST_PARTS: _Table[tuple[RequestChecks, _Part | None]] = _Table(
    4 << 20, lambda v: 0 if v[1] is None else _part_size(v[1])
)
# Model cache_key -> fit_id -> the _Part of the model-side failures (``FitBase``).
MODEL_PARTS: caches.ModelKeyedCache[object] = caches.ModelKeyedCache(24 << 20, _part_size)


def _ref_field(runtime: d.Runtime) -> bytes:
    key = runtime.key
    found = _REFS.items.get(key)
    if found is None:
        found = _REFS.add(key, pb.RuntimeExplanation(runtime=runtime_ref(runtime)).SerializeToString())
    return found


def _request_part(checks: RequestChecks) -> _Part | None:
    found = _REQUEST_PARTS.items.get(id(checks))
    if found is None or found[0] is not checks:
        found = _REQUEST_PARTS.add(id(checks), (checks, _part(checks.failures) if checks.failures else None))
    return found[1]


def excluded_rows(rows: Sequence[Excluded], model_key: object, out: list[bytes]) -> None:
    """Append the ``runtimes`` field (tag, length, row) of each EXCLUDED row of the model with
    ``model_key`` to ``out``: the request-side failures first (the first of them primary), then
    the model-side ones."""
    table = MODEL_PARTS.table(model_key)
    refs = _REFS.items
    for row in rows:
        runtime = row.runtime
        fit_id = runtime.own.fit_id
        model = table.get(fit_id) if fit_id else None
        if model is None:
            base = row.model
            failures = tuple(f for f in (base.format_failure, base.size_failure) if f is not None)
            model = _part(failures) if failures else _NO_FAILURE
            if fit_id:
                MODEL_PARTS.add(model_key, table, fit_id, model)
        assert isinstance(model, _Part)
        request = _request_part(row.request)
        ref = refs.get(runtime.key) or _ref_field(runtime)
        index = _INDEXES[row.match_index] if -1 <= row.match_index < 64 else _int(_INDEX, row.match_index)
        if request is None:
            m = model
            body = b"".join((ref, _EXCLUDED, m.primary, m.head, _PRIMARY, m.tail, m.rest, m.reason, index))
        else:  # the model-side part follows, none primary (empty for _NO_FAILURE)
            r, m = request, model
            body = b"".join(
                (ref, _EXCLUDED, r.primary, r.head, _PRIMARY, r.tail, r.rest)
                + (m.secondary, m.head, m.tail, m.rest, r.reason, index)
            )
        out += (_ROW_TAG, _length(len(body)), body)


def candidate_row(
    runtime: d.Runtime, rank: int, score: int, index: int, columns: tuple[int, int] | None, out: list[bytes]
) -> None:
    """Append the ``runtimes`` field of a candidate's row to ``out``: REASON ``-``, and PRIORITY
    and WEIGHT when ``columns`` (optional fields: written even when 0)."""
    parts: list[bytes] = [_REFS.items.get(runtime.key) or _ref_field(runtime), _CANDIDATE]
    if rank:
        parts.append(_int(_RANK, rank))
    if score:
        parts.append(_int(_SCORE, score))
    if columns is not None:
        parts += (_int(_PRIORITY, columns[0]), _int(_WEIGHT, columns[1]))
    parts.append(_NO_REASON)
    parts.append(_INDEXES[index] if -1 <= index < 64 else _int(_INDEX, index))
    body = b"".join(parts)
    out += (_ROW_TAG, _length(len(body)), body)


def evaluated_row(e: Evaluation, out: list[bytes]) -> None:
    """Append the ``runtimes`` field of the row of an evaluated runtime that is not a candidate
    (EXCLUDED, or COMPATIBLE_NOT_AUTO_SELECTABLE) to ``out``."""
    row = pb.RuntimeExplanation(
        runtime=runtime_ref(e.runtime),
        verdict=VERDICT_TO_PB[e.verdict],
        reason=e.failures[0].message,
        supported_model_format_index=e.fit.match.index if e.fit.match is not None else -1,
    )
    add_reasons(row.reasons, e.failures)
    body = row.SerializeToString()
    out += (_ROW_TAG, _length(len(body)), body)
