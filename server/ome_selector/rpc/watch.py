"""WatchSelections: the outcomes of the cached InferenceServices kept up to date after cache
writes, and the watchers they are streamed to (README "Watch selections and preview a change").
No gRPC imports: the servicer iterates
``Watcher.stream()``.

``SelectionTracker(store)`` listens to the store (``CacheStore.add_listener``: called in write
order, inside the write, where it only keeps the new snapshot as the newest) and, on its own
thread, advances the ``outcomes.Selections`` it holds to the newest snapshot, registers them
beside it, and offers each watcher the events it matches (rpc/watch_events.py) followed by a
``WriteStats``. When writes come faster than it evaluates, it coalesces: it goes from the last
snapshot it processed straight to the newest, one re-evaluation for every write in between, whose
changes compare the two outcomes and name the objects of all those writes as causes (one
``WriteStats``, of the newest version). It holds at most one snapshot waiting, whatever the rate.
``synchronous=True`` advances inside each write instead (tests, the offline tools).

Consistency, as a Kubernetes watch: a watcher is given the state of one processed snapshot
(``current`` events, then ``InitialEventsEnd``), then the events of every advance after it,
exactly once, in order; the state and the watcher list change together under one lock, so no
advance is missed or seen twice. A watcher subscribes at the store's version when it subscribes
or later (read-your-writes: a stream opened after a write returned starts at that write or
after it); when the tracker has not processed that version yet, the initial state is sent once
it has, at most one evaluation later.

An advance's events are built and serialized once per distinct (namespace, label selector) of
its watchers; each watcher's queue holds those shared bytes, which the stream sends as they are.
Each ``Watcher`` has a queue bounded in events (``queue_limit``, ``--watch-queue``) and in
serialized bytes (``queue_bytes``, ``--watch-queue-bytes``): an advance whose events do not fit
drops the watcher's queue and marks it behind; its next ``take`` returns a ``Resync`` event and
the full state again (as a Kubernetes watch relists after ``410 Gone``). So the server never
buffers more per watcher and a slow watcher never slows a write. ``close`` ends every stream
(server drain).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterable, Iterator

from ome.selector.v1 import selector_pb2 as pb

from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.flows import labels, outcomes
from ome_selector.rpc import outcomes as rpc_outcomes
from ome_selector.rpc.watch_events import AdvanceEvents
from ome_selector.rpc.watch_events import matches as filter_matches
from ome_selector.texts import messages
from ome_selector.validation import Key, validate_name

log = logging.getLogger("ome_selector.watch")

# Events a watcher may have waiting; OME_SELECTOR_WATCH_QUEUE / --watch-queue.
DEFAULT_QUEUE_LIMIT = 4096
# Serialized bytes of the events a watcher may have waiting; OME_SELECTOR_WATCH_QUEUE_BYTES /
# --watch-queue-bytes (16 MiB).
DEFAULT_QUEUE_BYTES = 16 * 2**20


class Watcher:
    """One WatchSelections stream: its filter, its bounded queue, and ``initial`` (the current
    outcomes it matched at the snapshot it starts from, then ``InitialEventsEnd``; set once
    ``ready``)."""

    def __init__(
        self,
        tracker: SelectionTracker,
        namespace: str,
        selector: labels.Selector,
        loop: asyncio.AbstractEventLoop | None,
        generation: int = 0,
    ) -> None:
        self._tracker = tracker
        self.namespace = namespace
        self.selector = selector
        self.generation = generation  # the store generation the initial state must reach
        self._start: tuple[Snapshot, outcomes.Selections] | None = None
        self._initial: list[pb.WatchSelectionsResponse] | None = None
        self.ready = False
        self.closed = False
        self._pending: deque[bytes] = deque()  # serialized events, shared with other watchers
        self._bytes = 0
        self._behind: str | None = None  # the resync reason once behind
        self._lock = threading.Lock()
        self._loop = loop
        self._wake = asyncio.Event() if loop is not None else None

    def matches(self, key: outcomes.IsvcKey, snapshot: Snapshot) -> bool:
        """Whether the InferenceService ``key`` of ``snapshot`` is in this watch."""
        return filter_matches(self.namespace, self.selector, key, snapshot)

    def start(self, snapshot: Snapshot, selections: outcomes.Selections) -> None:
        """Start at ``snapshot`` and its ``selections`` (the tracker, under its lock)."""
        self._start = (snapshot, selections)
        self.ready = True
        self._notify()

    @property
    def initial(self) -> list[pb.WatchSelectionsResponse]:
        """The initial state as a list (empty until ready); the stream builds it event by event."""
        if self._initial is None:
            if self._start is None:
                return []
            self._initial = list(state_events(self, *self._start))
        return self._initial

    def offer(self, events: list[bytes], size: int) -> None:
        """Queue one advance's serialized events (``size``: their bytes in all), or fall behind
        when they do not fit (the tracker, under its lock)."""
        with self._lock:
            if self.closed or self._behind is not None:
                return
            tracker = self._tracker
            if len(self._pending) + len(events) > tracker.queue_limit:
                self._behind = messages.RESYNC_OVERFLOW.format(limit=tracker.queue_limit)
            elif self._bytes + size > tracker.queue_bytes:
                self._behind = messages.RESYNC_OVERFLOW_BYTES.format(limit=tracker.queue_bytes)
            else:
                self._pending.extend(events)
                self._bytes += size
            if self._behind is not None:
                self._pending.clear()
                self._bytes = 0
        self._notify()

    def fall_behind(self, reason: str) -> None:
        """Drop the queue: the next ``take`` resyncs (the tracker rebuilt its outcomes)."""
        with self._lock:
            self._behind = reason
            self._pending.clear()
            self._bytes = 0
        self._notify()

    def _notify(self) -> None:
        if self._loop is not None and self._wake is not None:
            try:
                self._loop.call_soon_threadsafe(self._wake.set)
            except RuntimeError:  # the loop is closed: nobody reads this stream any more
                pass

    def take(self) -> list[pb.WatchSelectionsResponse]:
        """Every queued event; after falling behind, ``Resync`` and the full state instead."""
        return [_decoded(event) for event in self._take()]

    def _take(self) -> Iterable[pb.WatchSelectionsResponse | bytes]:
        """The queued events, serialized; or ``Resync`` and the full state, as protos."""
        with self._lock:
            if self._behind is None:
                out = list(self._pending)
                self._pending.clear()
                self._bytes = 0
                return out
        return self._tracker.resync(self)

    def reset(self) -> str:
        """Empty the queue and clear the behind mark (the tracker, under its lock); the reason
        it was behind."""
        with self._lock:
            reason = self._behind or ""
            self._behind = None
            self._pending.clear()
            self._bytes = 0
            return reason

    def close(self) -> None:
        """End the stream and leave the tracker."""
        self.closed = True
        self._tracker.leave(self)
        self._notify()

    async def stream(self, wire: bool = False) -> AsyncIterator[pb.WatchSelectionsResponse | bytes]:
        """The stream's events: ``initial`` once ready, then each advance's events as they come,
        until closed. ``wire``: an advance's events come serialized (``bytes``, shared by every
        watcher of the advance: the servicer sends them as they are, ``wire.passthrough``); the
        initial state and a resync's always come as protos."""
        assert self._wake is not None, "subscribe with a loop to stream"
        while not self.ready and not self.closed:
            self._wake.clear()
            if not self.ready and not self.closed:
                await self._wake.wait()
        if self.closed or self._start is None:
            return
        start, self._start = self._start, None  # built as it is sent: no second copy of the state
        for event in self._initial if self._initial is not None else state_events(self, *start):
            yield event
        del start
        while not self.closed:
            self._wake.clear()
            sent = False
            for queued in self._take():  # a resync's state too is built as it is sent
                sent = True
                yield queued if wire else _decoded(queued)
            if not sent and not self.closed:
                await self._wake.wait()


def _decoded(event: pb.WatchSelectionsResponse | bytes) -> pb.WatchSelectionsResponse:
    return pb.WatchSelectionsResponse.FromString(event) if isinstance(event, bytes) else event


def state_events(
    watcher: Watcher, snapshot: Snapshot, selections: outcomes.Selections
) -> Iterator[pb.WatchSelectionsResponse]:
    """The outcomes of ``selections`` (those of ``snapshot``) that ``watcher`` matches, then the
    marker, each built when asked for (both are never changed)."""
    count = 0
    for key, entry in selections.tracked.items():
        if watcher.matches(key, snapshot):
            count += 1
            yield pb.WatchSelectionsResponse(current=rpc_outcomes.outcome_pb(key, entry.outcome))
    end = pb.InitialEventsEnd(cache_version=snapshot.version, generation=snapshot.generation, inference_services=count)
    yield pb.WatchSelectionsResponse(initial_events_end=end)


class SelectionTracker:
    """The outcomes of the newest processed snapshot (``snapshot``, ``selections``), kept up to
    date after the store's writes, and the watchers (see the module docstring). Counters:
    ``reevaluations`` (InferenceServices evaluated again, in all), ``evaluations`` (the distinct
    evaluations that took, ``outcomes.Advance.evaluations``), ``writes`` (store writes
    processed), ``advances`` (re-evaluations made: fewer than ``writes`` when it coalesced),
    ``resyncs``."""

    def __init__(
        self,
        store: CacheStore,
        *,
        queue_limit: int = DEFAULT_QUEUE_LIMIT,
        queue_bytes: int = DEFAULT_QUEUE_BYTES,
        synchronous: bool = False,
    ) -> None:
        if queue_limit < 1:
            raise ValueError("queue_limit must be 1 or more")
        if queue_bytes < 1:
            raise ValueError("queue_bytes must be 1 or more")
        self.queue_limit = queue_limit
        self.queue_bytes = queue_bytes
        self.reevaluations = 0
        self.evaluations = 0
        self.writes = 0
        self.advances = 0
        self.resyncs = 0
        self._lock = threading.Lock()  # snapshot, selections, the watchers and the waiting ones
        self._watchers: set[Watcher] = set()
        self._waiting: list[Watcher] = []  # subscribed at a generation not processed yet
        self._advancing = False  # an advance runs: a new watcher waits for its snapshot
        self._synchronous = synchronous
        self._newest: Snapshot | None = None  # the newest snapshot not processed yet
        self._written: set[Key] | None = set()  # the keys written since the last one taken (None: unknown)
        self._stopping = False
        self._wake = threading.Condition()
        self._store = store
        store.add_listener(self._on_write)  # first: a write from now on is seen
        self.snapshot = store.snapshot
        self.selections = outcomes.selections_for(self.snapshot)
        self._thread: threading.Thread | None = None
        if not synchronous:
            self._thread = threading.Thread(target=self._run, name="ome-selector-watch", daemon=True)
            self._thread.start()

    @property
    def watchers(self) -> int:
        """How many watchers are subscribed (those waiting for their initial state too)."""
        return len(self._watchers) + len(self._waiting)

    def _on_write(self, snapshot: Snapshot) -> None:
        if self._synchronous:
            self._process(snapshot, snapshot.written)
            return
        with self._wake:
            if self._newest is None:
                self._written = set()
            if self._written is not None:
                self._written = None if snapshot.written is None else self._written | snapshot.written
            self._newest = snapshot  # writes come in order: this one replaces any not processed
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while self._newest is None and not self._stopping:
                    self._wake.wait()
                snapshot, self._newest, written = self._newest, None, self._written
                if self._stopping or snapshot is None:
                    return
            self._process(snapshot, written)

    def _process(self, snapshot: Snapshot, written: Iterable[Key] | None) -> None:
        if snapshot.generation <= self.snapshot.generation:
            return  # seen already (the snapshot the tracker started from)
        try:
            self.advance(snapshot, written)
        except Exception:  # never stop tracking: start again from scratch, watchers resync
            log.exception("watch: advancing the InferenceService outcomes failed; rebuilding them")
            self._rebuild(snapshot)

    def _rebuild(self, snapshot: Snapshot) -> None:
        selections = outcomes.Selections.build(snapshot)
        outcomes.register(snapshot, selections)
        with self._lock:
            self.writes += snapshot.generation - self.snapshot.generation
            self.snapshot, self.selections = snapshot, selections
            self._advancing = False
            for watcher in self._watchers:
                watcher.fall_behind(messages.RESYNC_REBUILT)
            self._release(snapshot)

    def advance(self, new: Snapshot, written: Iterable[Key] | None = None) -> outcomes.Advance:
        """Advance to ``new`` (a newer snapshot of the store) and offer the watchers its events;
        ``written``: the keys of the writes since ``snapshot``, when known (``outcomes.diff``)."""
        with self._lock:
            old, before = self.snapshot, self.selections
            self._advancing = True  # from here a new watcher starts at ``new``
            watchers = list(self._watchers)  # exactly those given ``old`` (or a resync at it)
        try:
            result = before.advance(old, new, written)
            outcomes.register(new, result.selections)
            events = AdvanceEvents(old, new, before, result)
            batches = []
            by_filter: dict[tuple[str, labels.Selector], tuple[list[bytes], int]] = {}
            for watcher in watchers:  # built outside the lock: watchers are only added at ``new``
                found = by_filter.get((watcher.namespace, watcher.selector))
                if found is None:  # once per distinct filter: the lists are shared, never changed
                    found = by_filter[(watcher.namespace, watcher.selector)] = events.encode(
                        events.for_watcher(watcher.matches)
                    )
                batches.append((watcher, *found))
        except BaseException:
            with self._lock:
                self._advancing = False
            raise
        with self._lock:
            self.snapshot, self.selections = new, result.selections
            self._advancing = False
            self.reevaluations += result.reevaluated
            self.evaluations += result.evaluations
            self.writes += new.generation - old.generation
            self.advances += 1
            for watcher, batch, size in batches:
                watcher.offer(batch, size)
            self._release(new)
        return result

    def _release(self, snapshot: Snapshot) -> None:
        """Start the waiting watchers that ``snapshot`` reaches (under the lock)."""
        if not self._waiting:
            return
        still = []
        for watcher in self._waiting:
            if watcher.closed:
                continue
            if watcher.generation <= snapshot.generation:
                watcher.start(self.snapshot, self.selections)
                self._watchers.add(watcher)
            else:
                still.append(watcher)
        self._waiting = still

    def subscribe(
        self, namespace: str = "", label_selector: str = "", loop: asyncio.AbstractEventLoop | None = None
    ) -> Watcher:
        """A new watcher of the InferenceServices of ``namespace`` (every namespace when empty)
        whose labels match ``label_selector`` (``labels.parse``); ``loop`` is the event loop that
        runs ``Watcher.stream``. The watcher starts at the store's current snapshot or a later
        one: ``initial`` is set now when the tracker has processed it, else after the advance
        that does (``ready``). Raises ``RequestError`` (INVALID_ARGUMENT naming ``namespace`` or
        ``label_selector``) for a bad filter."""
        if namespace:
            problems = validate_name(namespace, "namespace", "namespace")
            if problems:
                raise RequestError.invalid(problems)
        selector = labels.parse(label_selector)
        with self._lock:
            watcher = Watcher(self, namespace, selector, loop, self._store.snapshot.generation)
            if not self._advancing and self.snapshot.generation >= watcher.generation:
                watcher.start(self.snapshot, self.selections)
                self._watchers.add(watcher)
            else:
                self._waiting.append(watcher)
        return watcher

    def resync(self, watcher: Watcher) -> Iterator[pb.WatchSelectionsResponse]:
        """``Resync`` and the full state for a watcher that fell behind, built as it is read; its
        queue starts anew at the state's snapshot."""
        with self._lock:
            text = watcher.reset()
            self.resyncs += 1
            start = (self.snapshot, self.selections)
        yield pb.WatchSelectionsResponse(resync=pb.Resync(reason=text))
        yield from state_events(watcher, *start)

    def leave(self, watcher: Watcher) -> None:
        """Forget ``watcher``."""
        with self._lock:
            self._watchers.discard(watcher)
            if watcher in self._waiting:
                self._waiting.remove(watcher)

    def close_watchers(self) -> None:
        """End every stream (the server drains)."""
        with self._lock:
            watchers = [*self._watchers, *self._waiting]
        for watcher in watchers:
            watcher.close()

    def close(self) -> None:
        """Stop listening to the store, end every stream and stop the tracker's thread."""
        self._store.remove_listener(self._on_write)
        self.close_watchers()
        if self._thread is not None:
            with self._wake:
                self._stopping = True
                self._wake.notify()
            self._thread.join(timeout=5)
            self._thread = None
