"""The base of the enums that answers look up per runtime (checks, verdicts, tie-breaks)."""

from __future__ import annotations

import enum


class IdentityEnum(enum.Enum):
    """An ``Enum`` hashed by identity: its members are singletons compared by identity, so a
    dict or set lookup stays in C instead of calling ``Enum.__hash__`` (the member name's hash),
    which a request pays dozens of times."""

    __hash__ = object.__hash__
