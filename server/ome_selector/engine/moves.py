"""Where a run of group edits (``RuntimeGroup.changed``'s ``("set" | "del" | "ins", position,
runtime)``, each position as the group is just before that edit) takes the positions of the group
before the run: composed once, so what a carried result keeps per position (candidate keys,
evaluations) is moved in one pass, not one pass per edit."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import TypeVar

V = TypeVar("V")


class Moves:
    """The composed edits: an old position ``p`` is gone when in ``dropped`` (its runtime was set
    anew or deleted), else it is now ``p + shifts[k]``, ``k`` the last segment with
    ``starts[k] <= p``. ``starts`` begins at 0 and ascends; the mapping never decreases with
    ``p``, and rises strictly over the positions kept."""

    __slots__ = ("starts", "shifts", "dropped")

    def __init__(self, edits: Iterable[tuple[str, int, object]]) -> None:
        self.starts: list[int] = [0]
        self.shifts: list[int] = [0]
        self.dropped: set[int] = set()
        for op, i, _ in edits:
            if op == "ins":
                self._shift_from(i, 1)
                continue
            old = self._old_at(i)
            if old is not None:
                self.dropped.add(old)
            if op == "del":
                self._shift_from(i + 1, -1)

    def _old_at(self, now: int) -> int | None:
        """The kept old position now at ``now``, or None (the runtime there was inserted)."""
        starts, shifts = self.starts, self.shifts
        for k, shift in enumerate(shifts):
            old = now - shift
            if old >= starts[k] and (k + 1 == len(starts) or old < starts[k + 1]) and old not in self.dropped:
                return old
        return None

    def _shift_from(self, now: int, delta: int) -> None:
        """Move by ``delta`` every old position now at ``now`` or after."""
        starts, shifts = self.starts, self.shifts
        for k, shift in enumerate(shifts):
            if k + 1 < len(starts) and starts[k + 1] - 1 + shift < now:
                continue  # the whole segment is before ``now``
            first = max(starts[k], now - shift)
            if first > starts[k]:
                starts.insert(k + 1, first)
                shifts.insert(k + 1, shift)
                k += 1
            for j in range(k, len(shifts)):
                shifts[j] += delta
            return

    @property
    def identity(self) -> bool:
        """Whether every kept position stays where it was."""
        return not any(self.shifts)

    def keys(self, keys: Sequence[tuple[int, float, str, int]]) -> list[tuple[int, float, str, int]]:
        """Candidate keys ``(-score, size distance, name, position)`` with their positions moved,
        those of dropped positions left out, in the same order."""
        dropped = self.dropped
        if self.identity:
            return [k for k in keys if k[3] not in dropped] if dropped else list(keys)
        starts, shifts = self.starts, self.shifts
        if len(starts) == 2 and shifts[0] == 0:  # one write's insert or delete: a comparison per key
            start, shift = starts[1], shifts[1]
            if dropped:
                return [k if k[3] < start else (k[0], k[1], k[2], k[3] + shift) for k in keys if k[3] not in dropped]
            return [k if k[3] < start else (k[0], k[1], k[2], k[3] + shift) for k in keys]
        return [
            k if (s := shifts[bisect_right(starts, k[3]) - 1]) == 0 else (k[0], k[1], k[2], k[3] + s)
            for k in keys
            if k[3] not in dropped
        ]

    def positions(self, by_position: dict[int, V]) -> dict[int, V]:
        """``by_position`` keyed by the moved positions, dropped ones left out."""
        dropped, starts, shifts = self.dropped, self.starts, self.shifts
        items = tuple(by_position.items())  # one C-level step: another thread may be adding to it
        if self.identity:
            return {p: v for p, v in items if p not in dropped}
        return {p + shifts[bisect_right(starts, p) - 1]: v for p, v in items if p not in dropped}
