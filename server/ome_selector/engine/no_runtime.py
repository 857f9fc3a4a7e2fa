"""OME's ``no runtime found`` message (troubleshoot-runtime-selection.md, Step 2), within a byte cap.

``message(auto)``: when the whole text fits ``auto.max_message_bytes`` (UTF-8 bytes; 0 = no cap)
it is OME's, byte for byte: ``<head>. Excluded runtimes: <runtime> (<primary reason>); ...``,
every excluded runtime in fetch order. Past the cap (README, "Deviations from OME") the head
stays, then whole entries ordered by how far along the check order each runtime got (near misses,
which passed the model-format check, first; each check's runtimes in fetch order), then
``… and N more: <count> <check>, ...; ExplainRuntimes lists each`` in the exclusion summary's
words. A capped message builds only the entries it shows: the counts come from the group
results' bit masks, and whether OME's text could fit is decided from them before any is built.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterator
from heapq import merge
from itertools import accumulate, compress, islice
from operator import attrgetter, getitem
from typing import Any

from ome_selector.cache.groups import Edits
from ome_selector.domain import objects as d
from ome_selector.engine import memo as caches
from ome_selector.engine.evaluation import (
    _CLASS,
    _DISABLED,
    _EVALUATED,
    _FORMAT,
    _MODE,
    _NO_FIT,
    AutoSelection,
    GroupResult,
    Verdict,
    carry_kept,
    format_failure,
    selector,
    set_positions,
)
from ome_selector.rules.deployment_mode import check_deployment_mode
from ome_selector.rules.results import Check
from ome_selector.texts import messages

# The checks whose failure puts a runtime in the message, latest in the check order first.
_LISTED = (Check.MODEL_SIZE, Check.MODEL_FORMAT, Check.DEPLOYMENT_MODE, Check.ACCELERATOR_CLASS, Check.DISABLED)
# The fewest bytes an entry and its separator can take: a one-character name and the shortest
# primary reason (``runtime is disabled``).
_MIN_ENTRY_BYTES = len(messages.excluded_runtime("x", messages.RUNTIME_DISABLED)) + len(messages.EXCLUDED_SEPARATOR)
_CANONICAL = tuple((check, check.name) for check in Check if check in _LISTED)


# A message's list (what follows its head) is kept on the ClusterServingRuntimes' group result
# (``GroupResult.memo``), which requests for the same model and checks share across namespaces:
# the list depends on the head only through its length. Lists longer than this are not kept.
KEPT_LIST_BYTES = 64 << 10
MESSAGE = "message"  # the first item of a kept list's key


def message(auto: AutoSelection) -> str:
    """The ``no runtime found`` message of ``auto`` (which has no candidate), capped at
    ``auto.max_message_bytes``."""
    head = messages.no_runtime_head(auto.model.model_format.name, auto.namespace, auto.namespaced, auto.cluster)
    head_bytes = len(head.encode())
    namespaced, cluster = auto.results
    partner = namespaced if len(namespaced.group) else None  # an empty group lists nothing
    key = (MESSAGE, id(partner) if partner is not None else 0, head_bytes, auto.max_message_bytes)
    listed: str | None = cluster.kept(key, partner)
    if listed is None:
        listed = _listed(auto, head_bytes)
        if len(listed) <= KEPT_LIST_BYTES:
            cluster.keep(key, partner, listed)
    return head + listed


def carry_lists(
    before: GroupResult,
    after: GroupResult,
    edits: Edits,
    model: d.Model,
    request: d.Request | None,
) -> None:
    """Keep on ``after`` (``before`` carried through ``edits``: same model and request checks)
    the message lists ``before`` keeps, when the edits cannot change them: every edit replaces a
    runtime in place (no position moves, so the fetch order and every count stay) and each
    replaced runtime has the same entry, or none, before and after (the same primary check and
    text). A list depends on nothing else (``message``'s key holds the rest)."""
    texts = caches.FORMAT_FAILURES.table(model.cache_key)
    carry_kept(
        before,
        after,
        edits,
        MESSAGE,
        lambda i: _entry_at(before, i, model, request, texts) == _entry_at(after, i, model, request, texts),
    )


def _entry_at(
    result: GroupResult, i: int, model: d.Model, request: d.Request | None, texts: Any
) -> tuple[Check, str] | None:
    """(primary check, ``<runtime> (<primary reason>)``) of position ``i`` when the message lists
    it (as ``_entry_runs`` builds it), else None."""
    bit = 1 << i
    for check in _LISTED:  # a position is in one listed mask at most
        if _LISTED_MASK[check](result) & bit:
            return check, next(iter(_ENTRIES[check](result, [i], model, request, texts)))
    return None


def _listed(auto: AutoSelection, head_bytes: int) -> str:
    """The message after its head (of ``head_bytes`` UTF-8 bytes): OME's list of every excluded
    runtime when it fits the cap (or there is none), else the capped list."""
    cap = auto.max_message_bytes
    excluded = sum(auto.counts[check] for check in _LISTED)
    if not excluded:
        return ""
    if not cap or _fewest_list_bytes(auto, excluded) <= cap:
        # OME's text may fit: build it whole and measure it.
        listed = messages.EXCLUDED_RUNTIMES + messages.EXCLUDED_SEPARATOR.join(_all_excluded(auto))
        if not cap or head_bytes + len(listed.encode()) <= cap:
            return listed
    return _capped(auto, head_bytes, excluded, cap)


def _fewest_list_bytes(auto: AutoSelection, excluded: int) -> int:
    """The fewest bytes OME's list of ``excluded`` runtimes can take: the shortest names of the
    groups, each entry with the shortest primary reason, and the separators; past the cap, a
    lower bound past the cap (one byte per name)."""
    separators = excluded * (_MIN_ENTRY_BYTES - 1) - len(messages.EXCLUDED_SEPARATOR)
    if excluded + separators > auto.max_message_bytes > 0:
        return excluded + separators  # a bound is enough: every name has a byte at least
    groups = [result.group for result in auto.results if len(result.group)]
    if len(groups) == 1:
        shortest = groups[0].shortest_names_bytes(excluded)
    else:
        shortest = sum(islice(merge(*(group.name_bytes() for group in groups)), excluded))
    return shortest + separators


def _all_excluded(auto: AutoSelection) -> list[str]:
    """``<runtime> (<primary reason>)`` of every excluded runtime, in fetch order."""
    return [piece for result in auto.results for piece in _excluded_pieces(result, auto.model, auto.request)]


def _capped(auto: AutoSelection, head_bytes: int, excluded: int, cap: int) -> str:
    """After a head of ``head_bytes``: the entries that fit (nearest misses first) and the tail
    counting the rest. Each entry is tried against the tail as it is now (the longest it can be,
    since counts only fall) and, when that does not fit, against the tail it would leave. The
    entries of a run that fit beside the longest tail are taken together (``bisect`` of their
    running byte counts). A run holds about as many entries as the bytes left can take, at the
    last run's bytes per entry (``_FIRST_RUN`` to start with)."""
    left = {check: auto.counts[check] for check in _LISTED}
    text = messages.EXCLUDED_RUNTIMES
    used = head_bytes + len(text.encode())
    separator = len(messages.EXCLUDED_SEPARATOR)
    reserve = separator + len(_tail(left).encode())
    shown: list[str] = []
    size = _FIRST_RUN
    for check, next_entries in _entry_runs(auto):
        while entries := next_entries(size):
            sizes = list(map(separator.__add__, map(len, map(str.encode, entries))))
            if not shown:
                sizes[0] -= separator  # the first entry of the list has no separator before it
            ends = list(accumulate(sizes, initial=used))
            taken = bisect_right(ends, cap - reserve, lo=1) - 1  # ends[j + 1] = used after entry j
            shown += entries[:taken]
            left[check] -= taken
            used = ends[taken]
            for entry, entry_bytes in zip(entries[taken:], sizes[taken:]):
                left[check] -= 1
                rest = excluded - len(shown) - 1
                exact = separator + len(_tail(left).encode()) if rest else 0
                if used + entry_bytes + exact > cap:
                    left[check] += 1
                    return text + messages.EXCLUDED_SEPARATOR.join([*shown, _tail(left)])
                shown.append(entry)
                used += entry_bytes
            per_entry = -(-(ends[-1] - ends[0]) // len(entries))  # rounded up, 1 at least
            size = min(_LAST_RUN, max(2, (cap - reserve - used) // per_entry + 2))
    parts = [*shown, _tail(left)] if len(shown) < excluded else shown
    return text + messages.EXCLUDED_SEPARATOR.join(parts)


def _tail(left: dict[Check, int]) -> str:
    """The tail for ``left`` (runtimes left out per check), in canonical check order."""
    return messages.excluded_tail([(name, left[check]) for check, name in _CANONICAL])


def _entry_runs(auto: AutoSelection) -> Iterator[tuple[Check, Callable[[int], list[str]]]]:
    """(primary check, entries) of the excluded runtimes, the checks latest first, each check's
    runtimes in fetch order (ServingRuntimes, then ClusterServingRuntimes): ``entries(n)`` builds
    the next ``n`` (fewer at the end, none once all are built). Built a run at a time: a capped
    message stops after a few dozen of thousands."""
    model, request = auto.model, auto.request
    texts = caches.FORMAT_FAILURES.table(model.cache_key)
    for check in _LISTED:
        mask_of, build = _LISTED_MASK[check], _ENTRIES[check]
        for result in auto.results:
            mask = mask_of(result)
            if mask:
                yield check, _runs(result, set_positions(mask), build, model, request, texts)


def _runs(
    result: GroupResult, positions: Iterator[int], build: Callable[..., Iterator[str]], *context: Any
) -> Callable[[int], list[str]]:
    """``entries(n)``: the entries of the next ``n`` of ``positions`` (fewer at the end)."""

    def entries(count: int) -> list[str]:
        chunk = list(islice(positions, count))
        return list(build(result, chunk, *context)) if chunk else []

    return entries


# Entries built in a message's first run, and in any run at most: a capped message shows a few
# dozen, and builds a few more than it shows.
_FIRST_RUN, _LAST_RUN = 16, 256


def _size_entries(result: GroupResult, chunk: list[int], model: d.Model, request: Any, texts: Any) -> Iterator[str]:
    # Each runtime is evaluated as it is listed.
    order = result.group.order
    return (messages.excluded_runtime(order[i].name, result.evaluated[i].failures[0].message) for i in chunk)


def _format_entries(result: GroupResult, chunk: list[int], model: d.Model, request: Any, texts: Any) -> Iterator[str]:
    group = result.group
    ids = list(map(group.format_ids().__getitem__, chunk))
    _fill_format_failures(group.order, chunk, ids, model, texts)
    reasons = map(attrgetter("message"), map(texts.__getitem__, ids))
    return map(messages.EXCLUDED_RUNTIME.format, map(group.names().__getitem__, chunk), reasons)


def _fill_format_failures(
    order: tuple[d.Runtime, ...], positions: list[int], ids: list[int], model: d.Model, texts: Any
) -> None:
    """Store in ``texts`` (the model's FORMAT_FAILURES table) the failure of each format_id of
    ``ids`` (those of ``positions``) it does not hold yet, from the first runtime with it."""
    missing = set(ids).difference(texts)
    for i, format_id in zip(positions, ids):
        if not missing:
            return
        if format_id in missing:
            format_failure(order[i].own, model, texts)  # stores the failure in ``texts``
            missing.discard(format_id)


def _mode_entries(result: GroupResult, chunk: list[int], model: d.Model, request: Any, texts: Any) -> Iterator[str]:
    order = result.group.order
    return (
        messages.excluded_runtime(order[i].name, check_deployment_mode(order[i].own, _NO_FIT, request)[0].message)
        for i in chunk
    )


def _same_reason(reason: str) -> Callable[..., Iterator[str]]:
    def entries(result: GroupResult, chunk: list[int], model: d.Model, request: Any, texts: Any) -> Iterator[str]:
        return map(result.group.pieces(reason).__getitem__, chunk)

    return entries


# The entries of the listed positions ``chunk`` of one check: (result, chunk, model, request,
# FORMAT_FAILURES table) -> ``<runtime> (<primary reason>)`` each, in the chunk's order.
_ENTRIES: dict[Check, Callable[[GroupResult, list[int], d.Model, Any, Any], Iterator[str]]] = {
    Check.MODEL_SIZE: _size_entries,
    Check.MODEL_FORMAT: _format_entries,
    Check.DEPLOYMENT_MODE: _mode_entries,
    Check.ACCELERATOR_CLASS: _same_reason(messages.ACCELERATOR_CLASS),
    Check.DISABLED: _same_reason(messages.RUNTIME_DISABLED),
}


# The runtimes each listed check excludes (the mask of the group result); their entries are
# ``_ENTRIES``'.
_LISTED_MASK: dict[Check, Callable[[GroupResult], int]] = {
    Check.MODEL_SIZE: attrgetter("size_failed"),
    Check.MODEL_FORMAT: attrgetter("model_format"),
    Check.DEPLOYMENT_MODE: attrgetter("deployment_mode"),
    Check.ACCELERATOR_CLASS: attrgetter("accelerator_class"),
    Check.DISABLED: attrgetter("disabled"),
}


def _excluded_pieces(result: GroupResult, model: d.Model, request: d.Request | None) -> list[str]:
    """``<runtime> (<primary reason>)`` of every excluded runtime of a group, in fetch order
    (the ``no runtime found`` message; compatible runtimes are not listed). Built with C-level
    iteration over the group's positions, since it lists every runtime in scope: the pieces of
    each position come from a table chosen by its primary-reason code."""
    group = result.group
    size = len(group)
    if not size:
        return []
    order = group.order
    tables: list[Any] = [None, (), (), {}, {}, {}]
    if result.disabled:
        tables[_DISABLED] = group.pieces(messages.RUNTIME_DISABLED)
    if result.accelerator_class:
        tables[_CLASS] = group.pieces(messages.ACCELERATOR_CLASS)
    if result.deployment_mode:
        tables[_MODE] = {
            i: messages.excluded_runtime(
                order[i].name, check_deployment_mode(order[i].own, _NO_FIT, request)[0].message
            )
            for i in compress(range(size), selector(result.deployment_mode, size))
        }
    if result.model_format:
        select = selector(result.model_format, size)
        positions = list(compress(range(size), select))
        ids = list(compress(group.format_ids(), select))
        texts = caches.FORMAT_FAILURES.table(model.cache_key)
        _fill_format_failures(order, positions, ids, model, texts)
        messages_ = map(attrgetter("message"), map(texts.__getitem__, ids))
        tables[_FORMAT] = dict(
            zip(positions, map(messages.EXCLUDED_RUNTIME.format, compress(group.names(), select), messages_))
        )
    tables[_EVALUATED] = {
        i: messages.excluded_runtime(order[i].name, e.failures[0].message) if e.verdict is Verdict.EXCLUDED else None
        for i, e in result.evaluated.items()
    }
    return list(filter(None, map(getitem, map(tables.__getitem__, result.codes()), range(size))))
