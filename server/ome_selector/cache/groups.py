"""Runtime groups: the runtimes of one namespace (or the ClusterServingRuntimes) in OME's fetch
order (newest first, then by name), with per-position tables and the bit masks the
engine answers request-side checks with. Immutable; ``RuntimeGroup.changed`` edits a group for a
small write and rebuilds it for a large one."""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate
from operator import attrgetter, itemgetter
from typing import Any, TypeVar

from ome_selector.domain import objects as d
from ome_selector.texts import messages

# Above this many changed runtimes in one group, rebuilding the group beats editing it.
_REBUILD_FRACTION = 8
# How many groups back ``RuntimeGroup.previous`` links reach (each holds its runtimes and masks).
PREVIOUS_DEPTH = 4
# One edit ``changed`` made of a group's order: ("set" | "del" | "ins", position, the runtime
# set or inserted there, None for a delete); a write's edits, in order.
Edit = tuple[str, int, d.Runtime | None]
Edits = tuple[Edit, ...]
# ``RuntimeGroup.shared_fits``: a fit_id gets a mask when at least FIT_MASK_MIN runtimes of the
# group and 1/FIT_MASK_SHARE of it share it, so a group keeps at most FIT_MASK_SHARE such masks
# (about FIT_MASK_SHARE * len / 8 bytes).
FIT_MASK_MIN = 16
FIT_MASK_SHARE = 256
# Groups of this many runtimes or more have the table, built with the group (a smaller one's
# runtimes are classified one at a time: a few microseconds).
SHARED_FITS_MIN_RUNTIMES = 32


def fetch_key(rt: d.Runtime) -> tuple[bool, float, str]:
    """Sort key of OME's fetch order: newest ``creationTimestamp`` first (absent counts as
    oldest), then name ascending."""
    return (rt.created is None, -(rt.created or 0.0), rt.name)


def fetch_order(runtimes: Iterable[d.Runtime]) -> tuple[d.Runtime, ...]:
    """``runtimes`` in fetch order (see ``fetch_key``)."""
    return tuple(sorted(runtimes, key=fetch_key))


def mask_from_positions(positions: Sequence[int], size: int) -> int:
    """The int with bit p set for each p in ``positions`` (each below ``size``)."""
    bitmap = bytearray((size + 7) // 8)
    for p in positions:
        bitmap[p >> 3] |= 1 << (p & 7)
    return int.from_bytes(bitmap, "little")


class RuntimeGroup:
    """The runtimes of one scope, in fetch order, with bit masks over their positions.

    ``order[i]`` is the runtime at position i; bit i of ``masks[key]`` is set when
    ``order[i].own.index_keys`` has ``key`` (``domain.Compiled.index_keys``), so a request finds
    the runtimes each check rejects with a few integer operations instead of a visit to every
    runtime. Immutable: ``changed`` returns a new group.
    """

    __slots__ = ("order", "keys", "masks", "all", "_derived", "memo", "previous")

    def __init__(
        self,
        order: tuple[d.Runtime, ...],
        keys: tuple[tuple[bool, float, str], ...],
        masks: dict[tuple[object, ...], int],
    ) -> None:
        self.order = order
        self.keys = keys
        self.masks = masks
        self.all = (1 << len(order)) - 1
        self._derived: dict[object, Any] = {}  # computed once per group, when first asked for
        self.memo: dict[object, Any] = {}  # the engine's results over this group
        # (the group ``changed`` made this one from, its edits): the engine carries what it kept
        # there through the edits. The links reach PREVIOUS_DEPTH groups back at most.
        self.previous: tuple[RuntimeGroup, Edits] | None = None

    def _derive(self, key: object, make: Callable[[], Any]) -> Any:
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = make()
        return found

    def _per_position(self, key: object, element: Callable[[d.Runtime], Any]) -> tuple[Any, ...]:
        """``element(rt)`` for each position, computed once; ``changed`` carries it forward
        through its edits (``_ELEMENTS`` names the element function of each key)."""
        return self._derive(key, lambda: tuple(map(element, self.order)))  # type: ignore[no-any-return]

    def by_name(self) -> tuple[d.Runtime, ...]:
        """The runtimes sorted by name."""
        return self._derive("by_name", lambda: tuple(sorted(self.order, key=attrgetter("name"))))  # type: ignore[no-any-return]

    def name_bytes(self) -> tuple[int, ...]:
        """The runtimes' name lengths in UTF-8 bytes, shortest first."""
        return self._derive("name_bytes", lambda: tuple(sorted(len(n.encode()) for n in self.names())))  # type: ignore[no-any-return]

    def shortest_names_bytes(self, count: int) -> int:
        """The UTF-8 bytes of the ``count`` shortest names together (every name past ``len``)."""
        sums: tuple[int, ...] = self._derive("name_bytes_sums", lambda: (0, *accumulate(self.name_bytes())))
        return sums[min(count, len(self.order))]

    def names(self) -> tuple[str, ...]:
        """The runtimes' names, by position."""
        return self._per_position("names", _NAME)

    def format_ids(self) -> tuple[int, ...]:
        """Each runtime's ``own.format_id``, by position."""
        return self._per_position("format_ids", _FORMAT_ID)

    def shared_fits(self) -> SharedFits | None:
        """The positions of each ``fit_id`` many of the group's runtimes share (``SharedFits``),
        None below SHARED_FITS_MIN_RUNTIMES runtimes; ``build`` makes it, ``changed`` carries it
        forward through its edits."""
        if len(self.order) < SHARED_FITS_MIN_RUNTIMES:
            return None
        return self._derive("shared_fits", lambda: _shared_fits(self.order))  # type: ignore[no-any-return]

    def pieces(self, reason: str) -> tuple[str, ...]:
        """``<runtime> (<reason>)`` for each position, for a reason that is the same for every
        runtime (``messages.excluded_runtime``)."""
        return self._per_position(("pieces", reason), _piece(reason))

    @classmethod
    def build(cls, runtimes: Iterable[d.Runtime]) -> RuntimeGroup:
        """A group of ``runtimes`` (any order)."""
        keyed = sorted(((fetch_key(rt), rt) for rt in runtimes), key=_FIRST)
        order = tuple(rt for _, rt in keyed)
        positions: dict[tuple[object, ...], list[int]] = {}
        for i, rt in enumerate(order):
            for key in rt.own.index_keys:
                positions.setdefault(key, []).append(i)
        masks = {key: mask_from_positions(ps, len(order)) for key, ps in positions.items()}
        group = cls(order, tuple(k for k, _ in keyed), masks)
        group.shared_fits()  # with the group, not on its first answer
        return group

    def __len__(self) -> int:
        return len(self.order)

    def mask(self, key: tuple[object, ...]) -> int:
        """The positions whose spec has ``key`` (0 when none)."""
        return self.masks.get(key, 0)

    def changed(self, removed: Sequence[d.Runtime], added: Sequence[d.Runtime]) -> RuntimeGroup:
        """A group without the ``removed`` runtimes (as stored here) and with ``added``. A runtime
        replaced by one with the same fetch key keeps its position; otherwise the positions after
        it shift, and so do the masks' bits."""
        if (len(removed) + len(added)) * _REBUILD_FRACTION > len(self.order) + 64:
            gone = {rt.name for rt in removed}
            return RuntimeGroup.build([*(rt for rt in self.order if rt.name not in gone), *added])
        # ``keys`` stays this group's tuple while no edit moves a position (a runtime replaced in
        # place keeps its fetch key): at 50,000 runtimes each copy of a table costs about 0.2 ms.
        order, masks = list(self.order), dict(self.masks)
        keys: list[tuple[bool, float, str]] | tuple[tuple[bool, float, str], ...] = self.keys
        pending = {rt.name: rt for rt in added}
        edits: list[Edit] = []
        for old in removed:
            i = bisect.bisect_left(keys, fetch_key(old))
            assert i < len(order) and order[i].name == old.name, old.name
            bit = 1 << i
            for key in old.own.index_keys:
                masks[key] &= ~bit
            new = pending.get(old.name)
            if new is not None and keys[i] == fetch_key(new):
                del pending[old.name]
                order[i] = new
                edits.append(("set", i, new))
                for key in new.own.index_keys:
                    masks[key] = masks.get(key, 0) | bit
                continue
            edits.append(("del", i, None))
            keys = list(keys) if isinstance(keys, tuple) else keys
            del order[i], keys[i]
            masks = _deleted(masks, i, len(order) + 1)
        for new in pending.values():
            k = fetch_key(new)
            i = bisect.bisect_left(keys, k)
            edits.append(("ins", i, new))
            keys = list(keys) if isinstance(keys, tuple) else keys
            order.insert(i, new)
            keys.insert(i, k)
            bit = 1 << i
            masks = _inserted(masks, i, len(order) - 1)
            for key in new.own.index_keys:
                masks[key] = masks.get(key, 0) | bit
        group = RuntimeGroup(tuple(order), tuple(keys), {key: m for key, m in masks.items() if m})
        group._carry(self, edits)
        group.previous = (self, tuple(edits))
        link, depth = self, 1
        while link.previous is not None and depth < PREVIOUS_DEPTH:
            link, depth = link.previous[0], depth + 1
        if link.previous is not None:
            dropped = link.previous[0]
            link.previous = None
            # The engine's results on a group refer to the group, so the group and its memo are
            # a reference cycle: without this, a group that no snapshot holds any more is freed
            # only by a full collection of the cyclic collector (tens of ms at 50,000 runtimes,
            # every few writes). Once no link reaches it, no carried result starts from it.
            dropped.memo.clear()
        return group

    def _carry(self, previous: RuntimeGroup, edits: Sequence[Edit]) -> None:
        """Replay ``changed``'s edits on ``previous``'s per-position tables, so the first answer
        after a write does not rebuild them (a list copy and a few inserts instead of a call per
        runtime, or a sort of every name); a table whose elements a write leaves as they were is
        shared."""
        in_place = all(op == "set" for op, _, _ in edits)  # a runtime replaced in place keeps its name
        # A copy of the tables (one C-level step): readers of ``previous``, the current snapshot's
        # group, may derive a table on it meanwhile.
        for key, value in tuple(previous._derived.items()):
            if key == "name_bytes_sums":
                if in_place:
                    self._derived[key] = value
                continue
            if key == "name_bytes":
                self._derived[key] = value if in_place else _name_bytes_after(previous.order, value, edits)
                continue
            if key == "by_name":
                self._derived[key] = _by_name_after(previous.order, value, edits)
                continue
            if key == "shared_fits":
                self._derived[key] = _shared_fits_after(previous.order, value, edits)
                continue
            element = _element(key)
            if in_place and all(value[i] == element(rt) for _, i, rt in edits):  # type: ignore[arg-type]
                self._derived[key] = value  # every element the same (a name, say): the table as is
                continue
            table = list(value)
            for op, i, rt in edits:
                if op == "del":
                    del table[i]
                elif op == "ins":
                    table.insert(i, element(rt))  # type: ignore[arg-type]
                else:
                    table[i] = element(rt)  # type: ignore[arg-type]
            self._derived[key] = tuple(table)


@dataclass(frozen=True, slots=True)
class SharedFits:
    """The fit_ids that many runtimes of a group share (specs that differ only in priorities):
    ``masks[fit_id]`` the positions of the runtimes with it (bit i: position i); ``specs[fit_id]``
    one spec with it (what a model's fit and format check read of a spec is the same for every
    spec of one fit_id, all but the priorities); ``by_format[("format", (name, architecture,
    quantization))]`` the fit_ids among them whose specs have that mask key. ``unshared``: the
    positions in no mask (a fit_id that few share, or none: 0). ``found``: the set positions of
    ``masks[fit_id]`` (ascending), as built; after a write that moves positions, filled when the
    engine first reads them."""

    masks: dict[int, int]
    specs: dict[int, d.Compiled]
    by_format: dict[tuple[object, ...], tuple[int, ...]]
    unshared: int
    found: dict[int, tuple[int, ...]] = field(default_factory=dict, compare=False, repr=False)


def _shared_fits(order: tuple[d.Runtime, ...]) -> SharedFits:
    positions: defaultdict[int, list[int]] = defaultdict(list)
    for i, fit_id in enumerate(map(_FIT_ID, order)):
        positions[fit_id].append(i)
    least = max(FIT_MASK_MIN, len(order) // FIT_MASK_SHARE)
    shared = {fit_id: found for fit_id, found in positions.items() if fit_id and len(found) >= least}
    specs = {fit_id: order[found[0]].own for fit_id, found in shared.items()}
    by_format: dict[tuple[object, ...], list[int]] = {}
    for fit_id, spec in specs.items():
        for key in spec.index_keys:  # each key once per spec
            if key[0] == "format":
                by_format.setdefault(key, []).append(fit_id)
    unshared = [i for fit_id, found in positions.items() if fit_id not in shared for i in found]
    return SharedFits(
        {fit_id: mask_from_positions(found, len(order)) for fit_id, found in shared.items()},
        specs,
        {key: tuple(ids) for key, ids in by_format.items()},
        mask_from_positions(unshared, len(order)),
        {fit_id: tuple(found) for fit_id, found in shared.items()},
    )


def _shared_fits_after(order: tuple[d.Runtime, ...], fits: SharedFits, edits: Sequence[Edit]) -> SharedFits:
    """``fits`` (of ``order``) after ``changed``'s edits of ``order``: the bits move with the
    inserts and deletes; a runtime whose fit_id has no mask stays in none (its position is then
    classified on its own), so the masks stay exact."""
    masks = fits.masks
    if all(op == "set" and rt is not None and rt.own.fit_id == order[i].own.fit_id for op, i, rt in edits):
        return fits  # priorities changed in place: the same positions per fit_id
    masks = dict(masks)
    masks[0] = fits.unshared  # fit_id 0 is never shared: the unshared positions ride along as its mask
    current: Sequence[d.Runtime] = order  # ``order`` after the edits so far (a list once edited)
    for n, (op, i, rt) in enumerate(edits):
        bit = 1 << i
        if op != "ins":
            masks[_shared_as(current[i], masks)] &= ~bit
        size = len(current)
        if n + 1 < len(edits):  # a later edit reads the positions after this one
            current = current if isinstance(current, list) else list(current)
            if op == "del":
                del current[i]
            elif op == "ins":
                assert rt is not None
                current.insert(i, rt)
            else:
                assert rt is not None
                current[i] = rt
        if op == "del":
            masks = _deleted(masks, i, size)
            continue
        assert rt is not None
        if op == "ins":
            masks = _inserted(masks, i, size)
        masks[_shared_as(rt, masks)] |= bit
    unshared = masks.pop(0)
    return SharedFits(masks, fits.specs, fits.by_format, unshared)


K = TypeVar("K")


def _deleted(masks: dict[K, int], i: int, size: int) -> dict[K, int]:
    """``masks`` over ``size`` positions, none with bit ``i``, with position ``i`` deleted: the
    bits above it move down one (two integer operations and a subtraction per mask that has any)."""
    high = (1 << size) - (1 << (i + 1))
    return {key: m - (h >> 1) if (h := m & high) else m for key, m in masks.items()}


def _inserted(masks: dict[K, int], i: int, size: int) -> dict[K, int]:
    """``masks`` over ``size`` positions with a position inserted at ``i`` (its bit clear): the
    bits from ``i`` on move up one (an integer operation and an addition per mask that has any)."""
    high = (1 << size) - (1 << i)
    return {key: m + h if (h := m & high) else m for key, m in masks.items()}


def _shared_as(rt: d.Runtime, masks: dict[int, int]) -> int:
    """The key of ``rt``'s mask in ``masks``: its fit_id, or 0 (unshared)."""
    return rt.own.fit_id if rt.own.fit_id in masks else 0


def _name_bytes_after(
    order: tuple[d.Runtime, ...], name_bytes: tuple[int, ...], edits: Sequence[Edit]
) -> tuple[int, ...]:
    """``name_bytes`` (the UTF-8 lengths of ``order``'s names, ascending) after ``changed``'s
    edits of ``order``, each by bisection instead of a sort of every name."""
    current, lengths = list(order), list(name_bytes)
    for op, i, rt in edits:
        if op == "ins":
            assert rt is not None
            current.insert(i, rt)
            bisect.insort(lengths, len(rt.name.encode()))
        elif op == "del":
            del lengths[bisect.bisect_left(lengths, len(current.pop(i).name.encode()))]
        else:  # "set": the same name
            assert rt is not None
            current[i] = rt
    return tuple(lengths)


def _by_name_after(
    order: tuple[d.Runtime, ...],
    by_name: tuple[d.Runtime, ...],
    edits: Sequence[Edit],
) -> tuple[d.Runtime, ...]:
    """``by_name`` (``order`` sorted by name; names are unique in a group) after ``changed``'s
    edits of ``order``, each found by bisection instead of a sort of every name."""
    current, names = list(order), list(by_name)
    for op, i, rt in edits:
        if op == "ins":
            assert rt is not None
            current.insert(i, rt)
            names.insert(bisect.bisect_left(names, rt.name, key=_NAME), rt)
            continue
        old = current[i]
        j = bisect.bisect_left(names, old.name, key=_NAME)
        if op == "del":
            del current[i], names[j]
        else:  # "set": a runtime of the same fetch key, so of the same name
            assert rt is not None
            current[i] = names[j] = rt
    return tuple(names)


_NAME: Callable[[d.Runtime], str] = attrgetter("name")
_FIRST = itemgetter(0)
_FORMAT_ID: Callable[[d.Runtime], int] = attrgetter("own.format_id")
_FIT_ID: Callable[[d.Runtime], int] = attrgetter("own.fit_id")


def _piece(reason: str) -> Callable[[d.Runtime], str]:
    return lambda rt: messages.EXCLUDED_RUNTIME.format(rt.name, reason)


def _element(key: object) -> Callable[[d.Runtime], Any]:
    """The element function of a per-position table key of ``RuntimeGroup._derived``."""
    if key == "names":
        return _NAME
    if key == "format_ids":
        return _FORMAT_ID
    assert isinstance(key, tuple) and key[0] == "pieces", key
    return _piece(key[1])


EMPTY_GROUP = RuntimeGroup((), (), {})
