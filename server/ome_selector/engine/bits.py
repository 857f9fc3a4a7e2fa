"""Bit masks over a runtime group's positions (``cache.groups.RuntimeGroup``): bit i stands for
the runtime at position i."""

from __future__ import annotations

import re
from collections.abc import Iterator
from itertools import chain, compress, count

_SPREAD = tuple(bytes((b >> k) & 1 for k in range(8)) for b in range(256))


_SET_BYTE = re.compile(b"[^\x00]")
_SET_RUN = re.compile(b"[^\x00]{1,32}")
# A mask is dense with at least one bit set in this many of its length (``set_positions``).
_DENSE = 16


def set_positions(mask: int) -> Iterator[int]:
    """The set bits of ``mask``, lowest first, found lazily: zero bytes are skipped in C, so the
    cost follows the bits set, not the group's size. A dense mask's come from runs of at most 32
    non-zero bytes, each expanded in C (2–3× faster than a bit at a time in Python)."""
    if mask.bit_count() * _DENSE >= mask.bit_length():
        data = mask.to_bytes(-(-mask.bit_length() // 8), "little")
        return chain.from_iterable(map(_run_positions, _SET_RUN.finditer(data)))
    return _sparse_positions(mask)


def _run_positions(run: re.Match[bytes]) -> Iterator[int]:
    """The set bits of one run of non-zero bytes of a mask's little-endian bytes."""
    return compress(count(run.start() * 8), b"".join(map(_SPREAD.__getitem__, run.group())))


def _sparse_positions(mask: int) -> Iterator[int]:
    data = mask.to_bytes(-(-mask.bit_length() // 8), "little")
    for found in _SET_BYTE.finditer(data):
        base, byte = found.start() * 8, data[found.start()]
        for k in range(8):
            if byte >> k & 1:
                yield base + k


def selector(mask: int, size: int) -> bytes:
    """Byte i is 1 where bit i of ``mask`` is set: an ``itertools.compress`` selector."""
    whole_bytes = -(-size // 8)  # size / 8 rounded up
    return b"".join(map(_SPREAD.__getitem__, mask.to_bytes(whole_bytes, "little")))[:size]
