"""An ApplySnapshotRequest read from its wire bytes object by object, so a runtime whose spec the
spec tables know (``cache.specs``) is decoded without its spec.

A snapshot of 50,000 runtimes is 77 MB on the wire and holds a few thousand distinct specs; the
spec is nearly all of a runtime's bytes. Decoding the whole request builds every spec (several
hundred MB of decoded messages), and the write then serializes each spec again to look it up.
Here the request is split into its objects' byte ranges (``split_snapshot_request``), and each
runtime into its spec's bytes (the tables' key as the writer sent it) and the rest, which is
decoded alone: the runtime object without its spec, what the cache stores anyway
(``store.prepare_write``). A runtime whose spec is not known is decoded whole.

Only the plain encoding takes this path: a request, object or runtime with a field this service
does not know, a field of an unexpected wire type, or a runtime with its spec twice (a protobuf
decoder merges the two) is decoded whole instead (``CacheObject.FromString``), so either way the
objects are those a whole decode gives. Bytes that do not decode are an ``UndecodableRequest``,
as for any request (``rpc.wire``).
"""

from __future__ import annotations

import dataclasses

from ome.selector.v1 import cache_pb2

from ome_selector.cache.specs import SHARED, SharedSpecs

_VERSION_TAG = 0x0A  # ApplySnapshotRequest.version: field 1, length-delimited
_OBJECTS_TAG = 0x12  # ApplySnapshotRequest.objects: field 2, length-delimited
# CacheObject's runtime fields (field 1 serving_runtime, field 2 cluster_serving_runtime;
# length-delimited) -> the oneof field's name.
_RUNTIME_TAGS = {0x0A: "serving_runtime", 0x12: "cluster_serving_runtime"}
_SPEC_TAG = 0x22  # (Cluster)ServingRuntime.spec: field 4, length-delimited
# Every field of (Cluster)ServingRuntime, each length-delimited: api_version 1, kind 2,
# metadata 3, spec 4, status 5.
_RUNTIME_FIELD_TAGS = frozenset({0x0A, 0x12, 0x1A, _SPEC_TAG, 0x2A})


class _Irregular(Exception):
    """Bytes this reader leaves to a whole decode (an unknown field, a truncated one ...)."""


def _varint(data: bytes, i: int, end: int) -> tuple[int, int]:
    """(the varint at ``data[i:]``, the offset after it); ``_Irregular`` past ``end`` or 10 bytes."""
    result = shift = 0
    while i < end and shift < 64:
        b = data[i]
        i += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, i
        shift += 7
    raise _Irregular


def _field(data: bytes, i: int, end: int) -> tuple[int, int, int]:
    """(tag, start, end) of the length-delimited field at ``data[i:end]`` whose tag is one byte
    (field numbers 1-15); ``_Irregular`` for anything else."""
    tag = data[i]
    if tag & 0x87 != 0x02:  # not length-delimited, or a tag of more than one byte
        raise _Irregular
    i += 1
    if i < end and data[i] < 0x80:  # a length below 128: one byte
        start = i + 1
        stop = start + data[i]
    else:
        length, start = _varint(data, i, end)
        stop = start + length
    if stop > end:
        raise _Irregular
    return tag, start, stop


@dataclasses.dataclass(frozen=True, slots=True)
class SplitSnapshotRequest:
    """An ApplySnapshotRequest as ``split_snapshot_request`` read it: ``version``, the byte ranges
    of its ``objects`` in ``data`` (``ranges``), and what ``rpc.wire`` reports when an object does
    not decode (``message_type``, ``size``: the request's bytes)."""

    version: str
    data: bytes
    ranges: tuple[tuple[int, int], ...]

    message_type = cache_pb2.ApplySnapshotRequest.DESCRIPTOR.full_name

    @property
    def size(self) -> int:
        return len(self.data)

    def __len__(self) -> int:
        return len(self.ranges)

    def decode(self, shared: SharedSpecs = SHARED) -> list[cache_pb2.CacheObject | WireRuntime] | None:
        """Every object, in order: a ``WireRuntime`` for a runtime in the plain encoding, else the
        object decoded whole; None when any object does not decode."""
        data = self.data
        view = memoryview(data)
        out: list[cache_pb2.CacheObject | WireRuntime] = []
        valid: set[bytes] = set()  # specs that decoded in an object of this request
        try:
            for start, end in self.ranges:
                out.append(_decode_object(data, view, start, end, shared, valid))
        except Exception:  # DecodeError, RecursionError, invalid UTF-8 ...: all the client's fault
            return None
        return out


def split_snapshot_request(data: bytes) -> SplitSnapshotRequest | None:
    """The request's version and its objects' byte ranges, or None when the request is not in
    the plain encoding (a field this reader does not know, the version twice, a version that is
    not UTF-8, truncated bytes): then it is decoded whole."""
    version: str | None = None
    ranges: list[tuple[int, int]] = []
    i, end = 0, len(data)
    try:
        while i < end:
            tag, start, stop = _field(data, i, end)
            if tag == _OBJECTS_TAG:
                ranges.append((start, stop))
            elif tag == _VERSION_TAG and version is None:
                version = data[start:stop].decode()
            else:
                raise _Irregular
            i = stop
    except (_Irregular, UnicodeDecodeError):
        return None
    return SplitSnapshotRequest(version or "", data, tuple(ranges))


@dataclasses.dataclass(slots=True)
class WireRuntime:
    """A runtime object read from the wire: ``slim``, the CacheObject decoded without the spec
    (``which``: its oneof field); ``spec``, the spec's bytes, a view into the request's (empty
    when the runtime has none; ``has_spec``: the field is there; the spec tables copy a key they
    keep); the whole object is ``data[start:end]``; ``whole``, the
    object decoded whole when it was the first of the request with a spec the tables did not
    hold, else None (``decoded`` decodes it then: its bytes are known to decode)."""

    which: str
    slim: cache_pb2.CacheObject
    spec: memoryview
    has_spec: bool
    data: bytes
    start: int
    end: int
    whole: cache_pb2.CacheObject | None

    def decoded(self) -> cache_pb2.CacheObject:
        """The object decoded whole."""
        if self.whole is not None:
            return self.whole
        return cache_pb2.CacheObject.FromString(self.data[self.start : self.end])

    def byte_size(self, spec_size: int) -> int:
        """``ByteSize()`` of the runtime message (``getattr(whole, which)``) decoded whole, for a
        spec whose decoded ``ByteSize()`` is ``spec_size``."""
        size: int = getattr(self.slim, self.which).ByteSize()
        return size + 1 + _varint_size(spec_size) + spec_size if self.has_spec else size


def _varint_size(value: int) -> int:
    return max(1, (value.bit_length() + 6) // 7)


def _decode_object(
    data: bytes, view: memoryview, start: int, end: int, shared: SharedSpecs, valid: set[bytes]
) -> cache_pb2.CacheObject | WireRuntime:
    """The object at ``data[start:end]`` (``view``: a memoryview of ``data``): a ``WireRuntime``
    for a runtime alone in the plain encoding, decoded whole (``whole``) only when its spec's
    bytes are neither in ``shared`` nor in ``valid`` (the specs that decoded in an earlier object
    of the request; added to); any other object decoded whole."""
    try:
        if start == end:
            raise _Irregular
        tag, rt_start, rt_end = _field(data, start, end)
        which = _RUNTIME_TAGS.get(tag)
        if which is None or rt_end != end:
            raise _Irregular
        spec_tag = spec_start = spec_end = -1  # the spec field: its tag's offset, its bytes
        i = rt_start
        while i < rt_end:  # ``_field`` inlined: a runtime has a few fields, 50,000 runtimes many
            field_tag = data[i]
            if field_tag not in _RUNTIME_FIELD_TAGS:
                raise _Irregular
            j = i + 1
            if j < rt_end and data[j] < 0x80:
                field_start = j + 1
                field_end = field_start + data[j]
            else:
                length, field_start = _varint(data, j, rt_end)
                field_end = field_start + length
            if field_end > rt_end:
                raise _Irregular
            if field_tag == _SPEC_TAG:
                if spec_tag >= 0:
                    raise _Irregular
                spec_tag, spec_start, spec_end = i, field_start, field_end
            i = field_end
    except _Irregular:
        return cache_pb2.CacheObject.FromString(data[start:end])
    if spec_tag < 0:
        slim_bytes, spec = data[start:end], _EMPTY
    else:
        length = rt_end - rt_start - (spec_end - spec_tag)
        head = _ONE_BYTE[tag] + (_ONE_BYTE[length] if length < 0x80 else _encode_varint(length))
        slim_bytes = b"".join((head, view[rt_start:spec_tag], view[spec_end:rt_end]))
        spec = view[spec_start:spec_end]
    slim = cache_pb2.CacheObject.FromString(slim_bytes)
    whole = None
    if spec not in valid and shared.known(spec) is None:
        whole = cache_pb2.CacheObject.FromString(data[start:end])
        valid.add(bytes(spec))
    return WireRuntime(which, slim, spec, spec_tag >= 0, data, start, end, whole)


_EMPTY = memoryview(b"")
_ONE_BYTE = tuple(bytes((i,)) for i in range(256))


def _encode_varint(value: int) -> bytes:
    if value < 0x80:
        return bytes((value,))
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)
