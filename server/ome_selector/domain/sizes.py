"""Parameter counts and size ranges (ome-docs/reference/matching/model-size-range-matching.md)."""

from __future__ import annotations

import math
import re

_FLOAT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_SPECIAL = re.compile(r"[+-]?(?:inf|infinity|nan)\Z", re.IGNORECASE)
_SUFFIX = {"T": 1e12, "B": 1e9, "M": 1e6}


def parse_size(text: str) -> float:
    """Parse a count such as ``3.21B`` (suffixes ``M``, ``B``, ``T``, upper case only).

    Anything that does not parse reads as 0.0, as OME does (``4b`` is 0).
    """
    multiplier = 1.0
    if text and text[-1] in _SUFFIX:
        multiplier = _SUFFIX[text[-1]]
        text = text[:-1]
    if _FLOAT.match(text) or _SPECIAL.match(text):
        return float(text) * multiplier
    return 0.0


def range_label(minimum: str | None, maximum: str | None) -> str:
    """``[2B, 4B]``; a bound left out shows as ``(-inf`` or ``inf)`` (since v1.3)."""
    left = f"[{minimum}" if minimum is not None else "(-inf"
    right = f"{maximum}]" if maximum is not None else "inf)"
    return f"{left}, {right}"


def outside(size: float, low: float | None, high: float | None) -> bool:
    """True when ``size`` is below ``low`` or above ``high`` (inclusive bounds; NaN passes)."""
    return (low is not None and size < low) or (high is not None and size > high)


def distance(size: float, low: float | None, high: float | None) -> float:
    """Tie-break distance: the sum of the distances to the bounds that are set (0 without any)."""
    total = 0.0
    if low is not None:
        total += abs(low - size)
    if high is not None:
        total += abs(high - size)
    return total


def distance_order(a: float, b: float) -> int:
    """Compare two distances as OME does: the difference truncated toward zero, so distances
    that differ by less than 1.0 count as equal. An infinite distance (a bound written ``inf``)
    is larger than any finite one; two infinite or NaN distances count as equal."""
    diff = a - b
    if math.isnan(diff):
        return 0
    if math.isinf(diff):
        return 1 if diff > 0 else -1
    return int(math.trunc(diff))
