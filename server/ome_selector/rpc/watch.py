"""WatchSelections: the outcomes of the cached InferenceServices kept up to date after every cache
write, and the watchers they are streamed to (README "Watch selections and preview a change").
No gRPC imports: the servicer iterates ``Watcher.stream()``.

``SelectionTracker(store)`` listens to the store (``CacheStore.add_listener``: called in write
order, inside the write, where it only enqueues the new snapshot) and, on its own thread, advances
the ``outcomes.Selections`` of the previous snapshot to the new one (only the InferenceServices the
write can move are evaluated again), registers them beside the snapshot, and offers each watcher
the changes it matches followed by the write's ``WriteStats``, in write order. ``synchronous=True``
advances inside the write instead (tests, and the offline tools).

Each ``Watcher`` has a bounded queue (``queue_limit`` events, ``--watch-queue``): a write whose
events do not fit drops the watcher's queue and marks it behind; its next ``take`` returns a
``Resync`` event and the full state again (as a Kubernetes watch relists after ``410 Gone``). So
the server never buffers without bound and a slow watcher never slows a write. ``close`` ends
every stream (server drain).
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from collections import deque
from collections.abc import AsyncIterator

from ome.selector.v1 import selector_pb2 as pb

from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.flows import labels, outcomes
from ome_selector.rpc import outcomes as rpc_outcomes
from ome_selector.texts import messages
from ome_selector.validation import validate_name

log = logging.getLogger("ome_selector.watch")

# Events a watcher may have waiting; OME_SELECTOR_WATCH_QUEUE / --watch-queue.
DEFAULT_QUEUE_LIMIT = 4096


class Watcher:
    """One WatchSelections stream: its filter, its bounded queue, and ``initial`` (the current
    outcomes it matched when it subscribed, then ``InitialEventsEnd``)."""

    def __init__(
        self,
        tracker: SelectionTracker,
        namespace: str,
        selector: labels.Selector,
        loop: asyncio.AbstractEventLoop | None,
    ) -> None:
        self._tracker = tracker
        self.namespace = namespace
        self.selector = selector
        self.initial: list[pb.WatchSelectionsResponse] = []
        self.closed = False
        self._pending: deque[pb.WatchSelectionsResponse] = deque()
        self._behind = False
        self._lock = threading.Lock()
        self._loop = loop
        self._wake = asyncio.Event() if loop is not None else None

    def matches(self, key: outcomes.IsvcKey, snapshot: Snapshot) -> bool:
        """Whether the InferenceService ``key`` of ``snapshot`` is in this watch."""
        if self.namespace and key[0] != self.namespace:
            return False
        isvc = snapshot.inference_services.get(key)
        return isvc is not None and self.selector.matches(isvc.metadata.labels)

    def offer(self, events: list[pb.WatchSelectionsResponse]) -> None:
        """Queue one write's events (the tracker's thread), or fall behind when they do not fit."""
        with self._lock:
            if self.closed or self._behind:
                return
            if len(self._pending) + len(events) > self._tracker.queue_limit:
                self._behind = True
                self._pending.clear()
            else:
                self._pending.extend(events)
        self._notify()

    def fall_behind(self) -> None:
        """Drop the queue: the next ``take`` resyncs (the tracker rebuilt its outcomes)."""
        with self._lock:
            self._behind = True
            self._pending.clear()
        self._notify()

    def _notify(self) -> None:
        if self._loop is not None and self._wake is not None:
            try:
                self._loop.call_soon_threadsafe(self._wake.set)
            except RuntimeError:  # the loop is closed: nobody reads this stream any more
                pass

    def take(self) -> list[pb.WatchSelectionsResponse]:
        """Every queued event; after falling behind, ``Resync`` and the full state instead."""
        with self._lock:
            if not self._behind:
                out = list(self._pending)
                self._pending.clear()
                return out
        return self._tracker.resync(self)

    def reset(self) -> None:
        """Empty the queue and clear the behind mark (the tracker, under its lock)."""
        with self._lock:
            self._behind = False
            self._pending.clear()

    def close(self) -> None:
        """End the stream and leave the tracker."""
        self.closed = True
        self._tracker.leave(self)
        self._notify()

    async def stream(self) -> AsyncIterator[pb.WatchSelectionsResponse]:
        """The stream's events: ``initial``, then each write's events as they come, until closed."""
        for event in self.initial:
            yield event
        assert self._wake is not None, "subscribe with a loop to stream"
        while not self.closed:
            self._wake.clear()
            batch = self.take()
            for event in batch:
                yield event
            if not batch and not self.closed:
                await self._wake.wait()


class SelectionTracker:
    """The outcomes of the store's newest processed snapshot (``snapshot``, ``selections``), kept
    up to date after every write, and the watchers (see the module docstring). Counters:
    ``reevaluations`` (InferenceServices evaluated again, in all), ``evaluations`` (the distinct
    evaluations that took, ``outcomes.Advance.evaluations``), ``writes``, ``resyncs``."""

    def __init__(self, store: CacheStore, *, queue_limit: int = DEFAULT_QUEUE_LIMIT, synchronous: bool = False) -> None:
        if queue_limit < 1:
            raise ValueError("queue_limit must be 1 or more")
        self.queue_limit = queue_limit
        self.reevaluations = 0
        self.evaluations = 0
        self.writes = 0
        self.resyncs = 0
        self._lock = threading.Lock()
        self._watchers: set[Watcher] = set()
        self._synchronous = synchronous
        self._queue: queue.SimpleQueue[Snapshot | None] = queue.SimpleQueue()
        self._store = store
        store.add_listener(self._on_write)  # first: a write from now on is seen, twice at worst
        self.snapshot = store.snapshot
        self.selections = outcomes.selections_for(self.snapshot)
        self._thread: threading.Thread | None = None
        if not synchronous:
            self._thread = threading.Thread(target=self._run, name="ome-selector-watch", daemon=True)
            self._thread.start()

    @property
    def watchers(self) -> int:
        """How many watchers are subscribed."""
        return len(self._watchers)

    def _on_write(self, snapshot: Snapshot) -> None:
        if self._synchronous:
            self._process(snapshot)
        else:
            self._queue.put(snapshot)

    def _run(self) -> None:
        while True:
            snapshot = self._queue.get()
            if snapshot is None:
                return
            self._process(snapshot)

    def _process(self, snapshot: Snapshot) -> None:
        try:
            self.advance(snapshot)
        except Exception:  # never stop tracking: start again from scratch, watchers resync
            log.exception("watch: advancing the InferenceService outcomes failed; rebuilding them")
            self._rebuild(snapshot)

    def _rebuild(self, snapshot: Snapshot) -> None:
        selections = outcomes.Selections.build(snapshot)
        outcomes.register(snapshot, selections)
        with self._lock:
            self.snapshot, self.selections = snapshot, selections
            for watcher in self._watchers:
                watcher.fall_behind()

    def advance(self, new: Snapshot) -> outcomes.Advance:
        """Advance to ``new`` (the store's next snapshot) and offer the watchers its events."""
        old, before = self.snapshot, self.selections
        result = before.advance(old, new)
        outcomes.register(new, result.selections)
        changes = rpc_outcomes.change_pbs(old, new, before, result) if self._watchers and result.changes else []
        events = [pb.WatchSelectionsResponse(change=proto) for proto in changes]  # shared: queued, never changed
        with self._lock:
            self.snapshot, self.selections = new, result.selections
            self.reevaluations += result.reevaluated
            self.evaluations += result.evaluations
            self.writes += 1
            for watcher in self._watchers:
                matched = [
                    event
                    for event, change in zip(events, result.changes)
                    if watcher.matches(change.key, new if change.after is not None else old)
                ]
                stats = pb.WriteStats(
                    cache_version=new.version,
                    generation=new.generation,
                    reevaluated=result.reevaluated,
                    changed=len(result.changes),
                    matched=len(matched),
                    inference_services=len(new.inference_services),
                )
                watcher.offer([*matched, pb.WatchSelectionsResponse(write=stats)])
        return result

    def _state(self, watcher: Watcher) -> list[pb.WatchSelectionsResponse]:
        """The current outcomes ``watcher`` matches and the marker (under the lock)."""
        snapshot = self.snapshot
        out = [
            pb.WatchSelectionsResponse(current=rpc_outcomes.outcome_pb(key, entry.outcome))
            for key, entry in self.selections.tracked.items()
            if watcher.matches(key, snapshot)
        ]
        end = pb.InitialEventsEnd(
            cache_version=snapshot.version, generation=snapshot.generation, inference_services=len(out)
        )
        return [*out, pb.WatchSelectionsResponse(initial_events_end=end)]

    def subscribe(
        self, namespace: str = "", label_selector: str = "", loop: asyncio.AbstractEventLoop | None = None
    ) -> Watcher:
        """A new watcher of the InferenceServices of ``namespace`` (every namespace when empty)
        whose labels match ``label_selector`` (``labels.parse``); ``loop`` is the event loop that
        runs ``Watcher.stream``. Raises ``RequestError`` (INVALID_ARGUMENT naming ``namespace`` or
        ``label_selector``) for a bad filter."""
        if namespace:
            problems = validate_name(namespace, "namespace", "namespace")
            if problems:
                raise RequestError.invalid(problems)
        watcher = Watcher(self, namespace, labels.parse(label_selector), loop)
        with self._lock:
            watcher.initial = self._state(watcher)
            self._watchers.add(watcher)
        return watcher

    def resync(self, watcher: Watcher) -> list[pb.WatchSelectionsResponse]:
        """``Resync`` and the full state for a watcher that fell behind; its queue starts anew."""
        with self._lock:
            watcher.reset()
            self.resyncs += 1
            text = messages.RESYNC_OVERFLOW.format(limit=self.queue_limit)
            return [pb.WatchSelectionsResponse(resync=pb.Resync(reason=text)), *self._state(watcher)]

    def leave(self, watcher: Watcher) -> None:
        """Forget ``watcher``."""
        with self._lock:
            self._watchers.discard(watcher)

    def close_watchers(self) -> None:
        """End every stream (the server drains)."""
        with self._lock:
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.close()

    def close(self) -> None:
        """Stop listening to the store, end every stream and stop the tracker's thread."""
        self._store.remove_listener(self._on_write)
        self.close_watchers()
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join(timeout=5)
            self._thread = None
