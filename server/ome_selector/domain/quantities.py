"""Kubernetes quantities (``80Gi``, ``500m``, ``1e3``), parsed exactly to ``Decimal`` base units,
as the AcceleratorClass fields ``memoryGB``, ``memoryBandwidthGBps`` and costs are read
(guides/deploy-models/select-accelerators.md; ome-selection-facts.md 4). Pure functions.
"""

from __future__ import annotations

import decimal
import functools
import re
from decimal import Decimal

INT64_MAX = 2**63 - 1

_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[eE][+-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?\Z"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_EXACT = decimal.Context(prec=4000, Emax=decimal.MAX_EMAX, Emin=decimal.MIN_EMIN, traps=[decimal.InvalidOperation])


@functools.lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Decimal | None:
    """A Kubernetes quantity in base units, exactly: ``80Gi`` -> 85899345920, ``80G`` ->
    80000000000, ``500m`` -> 0.5, ``1e3`` -> 1000. Suffixes: binary ``Ki``..``Ei``, decimal
    ``n u m k M G T P E``, or an exponent ``e``/``E`` with an optional sign.

    None when the text is not a quantity, its exponent is beyond +-400, or its magnitude exceeds
    what Kubernetes can hold as an integer value (2**63 - 1); callers treat None as the field
    being absent.
    """
    found = _QUANTITY.match(text)
    if found is None:
        return None
    number, suffix = found.group("number"), found.group("suffix") or ""
    if suffix in _BINARY:
        value = _EXACT.multiply(Decimal(number), Decimal(1024 ** _BINARY[suffix]))
    elif len(suffix) > 1:  # an exponent: e3, E-3, e+3
        exponent = int(suffix[1:])
        if abs(exponent) > 400:
            return None
        value = _EXACT.scaleb(Decimal(number), exponent)
    else:
        value = _EXACT.scaleb(Decimal(number), _DECIMAL.get(suffix, 0))
    if abs(value) > INT64_MAX:
        return None
    return value


def quantity_value(value: Decimal) -> int:
    """Kubernetes ``Quantity.Value()``: the whole number of base units, rounded away from zero."""
    return int(value.to_integral_value(rounding=decimal.ROUND_UP))
