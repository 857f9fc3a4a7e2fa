"""WatchSelections as Kubernetes' watch gives it: a watcher that subscribes while a write is being
processed still gets that write (or starts after it), an InferenceService whose labels enter or
leave a watch's selector is sent as added or removed, a stream opened after a write returned
starts at that write or later, the tracker coalesces writes that come faster than it evaluates,
and a watcher's queue is bounded in bytes."""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable
from typing import Any

import pytest
from helpers_watch import HOPPER, OMENATIVE, _extra, cluster, cluster_objects, hopper, key, nobody_serving_runtime, rows
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.flows.outcomes import Selections
from ome_selector.rpc.watch import SelectionTracker, Watcher

NOT_FOUND = ("False", "RuntimeNotFound")


class HookedLock:
    """A lock that runs ``hook`` once, just before it is next taken (the hook may take it too)."""

    def __init__(self, lock: Any, hook: Callable[[], None]) -> None:
        self._lock, self._hook = lock, hook

    def __enter__(self) -> None:
        hook, self._hook = self._hook, None
        if hook is not None:
            hook()
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def state(watcher: Watcher, events: list[selector_pb2.WatchSelectionsResponse]) -> dict[str, str | None]:
    """What a client holds after reading ``events`` on top of ``watcher.initial``: namespace/name ->
    runtime name (None for none)."""
    held: dict[str, str | None] = {}
    for e in [*watcher.initial, *events]:
        which = e.WhichOneof("event")
        if which == "resync":
            held = {}
        elif which == "current":
            held[f"{e.current.namespace}/{e.current.name}"] = e.current.runtime.name or None
        elif which == "change":
            name = f"{e.change.namespace}/{e.change.name}"
            if e.change.HasField("after"):
                held[name] = e.change.after.runtime.name or None
            else:
                held.pop(name, None)
    return held


def fresh(tracker: SelectionTracker, namespace: str = "", selector: str = "") -> dict[str, str | None]:
    watcher = tracker.subscribe(namespace, selector)
    try:
        return state(watcher, [])
    finally:
        watcher.close()


def test_a_watcher_that_subscribes_just_before_the_advance_takes_its_lock_gets_the_write() -> None:
    store = CacheStore()
    store.apply_snapshot("v1", cluster())
    tracker = SelectionTracker(store, synchronous=True)  # no watcher yet
    late: list[Watcher] = []
    tracker._lock = HookedLock(tracker._lock, lambda: late.append(tracker.subscribe()))  # type: ignore[assignment]
    store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
    (watcher,) = late
    events = watcher.take()
    # The store is at v2 when it subscribes: it starts there, with the write in its initial state.
    assert rows(watcher.initial)[-1] == ("initial_events_end", "v2", 9)
    assert [r for r in rows(watcher.initial) if r[1] == "llama-demo/llama-70b-h100"] == [
        ("current", "llama-demo/llama-70b-h100", None)
    ]
    assert events == []
    assert state(watcher, events)["llama-demo/llama-70b-h100"] is None
    assert state(watcher, events) == fresh(tracker)
    store.upsert("v3", cache_objects_of(hopper(4)))  # the runtime back: the watcher follows
    after = state(watcher, watcher.take())
    assert after["llama-demo/llama-70b-h100"] == HOPPER
    assert after == fresh(tracker)


def test_a_watcher_that_subscribes_during_the_advance_starts_after_the_write() -> None:
    store = CacheStore()
    store.apply_snapshot("v1", cluster())
    tracker = SelectionTracker(store, synchronous=True)
    late: list[Watcher] = []
    advance = Selections.advance

    def subscribing(self: Selections, old: Any, new: Any, *rest: Any) -> Any:
        late.append(tracker.subscribe())
        return advance(self, old, new, *rest)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Selections, "advance", subscribing)
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
    (watcher,) = late
    assert watcher.ready
    assert rows(watcher.initial)[-1] == ("initial_events_end", "v2", 9)
    assert ("current", "llama-demo/llama-70b-h100", None) in rows(watcher.initial)
    assert watcher.take() == []  # v2 is in its initial state, not an event
    store.upsert("v3", cache_objects_of(hopper(4)))
    assert rows(watcher.take())[-1][:2] == ("write", "v3")


def cache_objects_of(*docs: dict[str, Any]) -> list[cache_pb2.CacheObject]:
    from helpers_docs import objects

    return objects(*docs)


def omenative(priority: int) -> dict[str, Any]:
    """ome-cluster's ``srt-llama-3-3-70b-instruct-omenative`` with its entry's priority set."""
    doc = copy.deepcopy(_extra(OMENATIVE))
    doc["spec"]["supportedModelFormats"][0]["priority"] = priority
    return doc


def labelled(team: str) -> cache_pb2.CacheObject:
    """ome-cluster's llama-demo/llama-70b-h100 as llama-demo/lbl with the label ``team``."""
    (h100,) = [o for o in cluster_objects() if o.inference_service.metadata.name == "llama-70b-h100"]
    out = cache_pb2.CacheObject()
    out.CopyFrom(h100)
    out.inference_service.metadata.name = "lbl"
    out.inference_service.metadata.labels.clear()
    out.inference_service.metadata.labels["team"] = team
    return out


class TestSelectorCrossings:
    def test_an_inference_service_that_enters_the_selector_is_added_and_one_that_leaves_is_removed(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", [*cluster(), labelled("b")])
        tracker = SelectionTracker(store, synchronous=True)
        watcher = tracker.subscribe("", "team=a")
        assert rows(watcher.initial) == [("initial_events_end", "v1", 0)]
        store.upsert("v2", [labelled("a")])
        assert rows(watcher.take()) == [
            (
                "llama-demo/lbl",
                "<absent>",
                HOPPER,
                None,  # never failed: no RuntimeReady (ome-selection-facts.md 8.6)
                ["InferenceService llama-demo/lbl: metadata.labels changed"],
                "CHANGE_STEP_INFERENCE_SERVICE",
                "the InferenceService's labels match this watch now",
            ),
            ("write", "v2", 1, 0, 1),
        ]
        store.upsert("v3", [labelled("b")])
        assert rows(watcher.take()) == [
            (
                "llama-demo/lbl",
                HOPPER,
                "<absent>",
                None,
                ["InferenceService llama-demo/lbl: metadata.labels changed"],
                "CHANGE_STEP_INFERENCE_SERVICE",
                "the InferenceService's labels no longer match this watch",
            ),
            ("write", "v3", 1, 0, 1),
        ]
        assert fresh(tracker, "", "team=a") == {}

    def test_a_watcher_the_labels_keep_matching_gets_only_outcome_changes(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", [*cluster(), labelled("a")])
        tracker = SelectionTracker(store, synchronous=True)
        watcher = tracker.subscribe("", "team")
        store.upsert("v2", [labelled("b")])  # still has the label: same outcome, no event
        assert rows(watcher.take()) == [("write", "v2", 1, 0, 0)]
        store.upsert("v3", [labelled("c"), *cache_objects_of(hopper(4))])  # outcome moves to no change here
        assert [r[0] for r in rows(watcher.take())] == ["write"]
        assert state(watcher, []) == {"llama-demo/lbl": HOPPER}


class TestReadYourWrites:
    def test_a_watch_opened_after_a_write_returned_starts_at_it_or_later(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", cluster())
        tracker = SelectionTracker(store)  # its own thread, as the server runs it
        released = threading.Event()
        advance = Selections.advance

        def slow(self: Selections, old: Any, new: Any, *rest: Any) -> Any:
            released.wait(30)  # the tracker is behind every write until released
            return advance(self, old, new, *rest)

        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Selections, "advance", slow)
                watchers = []
                for i in range(2, 12):
                    status = store.upsert(f"v{i}", cache_objects_of(hopper(4 if i % 2 else 2)))
                    watcher = tracker.subscribe()
                    watchers.append((status.generation, watcher))
                    assert watcher.ready is False  # not processed yet: it waits, never starts behind
                released.set()
                for generation, watcher in watchers:
                    deadline = threading.Event()
                    for _ in range(300):
                        if watcher.ready:
                            break
                        deadline.wait(0.1)
                    end = watcher.initial[-1].initial_events_end
                    assert end.generation >= generation
                    later = [e.write.generation for e in watcher.take() if e.HasField("write")]
                    assert all(g > end.generation for g in later)
        finally:
            released.set()
            tracker.close()
        assert tracker.advances < 10  # writes that came while it evaluated were coalesced
        assert tracker.writes == 10
        assert tracker.selections.outcomes() == Selections.build(store.snapshot).outcomes()

    def test_a_coalesced_advance_compares_the_two_ends_and_names_every_writes_objects(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", cluster())
        tracker = SelectionTracker(store)
        watcher = tracker.subscribe()
        started, released = threading.Event(), threading.Event()
        advance = Selections.advance

        def slow(self: Selections, old: Any, new: Any, *rest: Any) -> Any:
            started.set()
            released.wait(30)
            return advance(self, old, new, *rest)

        try:
            with pytest.MonkeyPatch.context() as patch:
                patch.setattr(Selections, "advance", slow)
                store.upsert("v2", cache_objects_of(nobody_serving_runtime()))
                assert started.wait(30)  # v2 is being evaluated; v3 and v4 wait, as one
                store.upsert("v3", cache_objects_of(hopper(4)))
                store.upsert("v4", cache_objects_of(hopper(5), omenative(1)))
                released.set()
                for _ in range(300):
                    if tracker.snapshot.version == "v4":
                        break
                    threading.Event().wait(0.1)
        finally:
            released.set()
            tracker.close()
        got = rows(watcher.take())
        assert [r[0] for r in got] == ["write", "llama-demo/llama-70b", "llama-demo/llama-70b-native", "write"]
        assert got[0] == ("write", "v2", 0, 0, 0)
        assert got[1][:3] == ("llama-demo/llama-70b", OMENATIVE, HOPPER)
        assert got[1][4] == [  # both writes' objects, each from v2 to v4
            f"ClusterServingRuntime {HOPPER}: priority 2 → 5",
            f"ClusterServingRuntime {OMENATIVE}: priority 3 → 1",
        ]
        assert got[-1] == ("write", "v4", 6, 2, 2)
        assert (tracker.writes, tracker.advances) == (3, 2)


class TestBytes:
    def test_a_watcher_past_its_byte_bound_gets_resync(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", cluster())
        tracker = SelectionTracker(store, queue_bytes=2000, synchronous=True)
        watcher = tracker.subscribe()
        store.upsert("v2", cache_objects_of(nobody_serving_runtime()))  # the stats alone fit
        store.delete("v3", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])  # 5 no-runtime outcomes do not
        got = rows(watcher.take())
        assert got[0] == ("resync", "the watcher fell behind by more than 2000 bytes of events; the full state follows")
        assert got[-1] == ("initial_events_end", "v3", 9)
        assert tracker.resyncs == 1
        store.upsert("v4", cache_objects_of(nobody_serving_runtime()))
        assert rows(watcher.take()) == [("write", "v4", 0, 0, 0)]

    def test_the_byte_bound_counts_what_is_waiting(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", cluster())
        tracker = SelectionTracker(store, queue_bytes=10**6, synchronous=True)
        watcher = tracker.subscribe()
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
        assert watcher._bytes == sum(len(e) for e in watcher._pending)
        assert watcher._bytes > 2000
        watcher.take()
        assert watcher._bytes == 0
