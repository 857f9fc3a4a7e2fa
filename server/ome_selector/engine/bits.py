"""Bit masks over a runtime group's positions (``cache.groups.RuntimeGroup``): bit i stands for
the runtime at position i."""

from __future__ import annotations

import re
from collections.abc import Iterator

_SPREAD = tuple(bytes((b >> k) & 1 for k in range(8)) for b in range(256))


_SET_BYTE = re.compile(b"[^\x00]")


def set_positions(mask: int) -> Iterator[int]:
    """The set bits of ``mask``, lowest first, found lazily: zero bytes are skipped in C, so the
    cost follows the bits set, not the group's size."""
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
