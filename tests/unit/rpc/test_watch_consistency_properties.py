"""A property test of WatchSelections' consistency: random writes to a small universe
(ClusterServingRuntimes r1-r3, ClusterBaseModels m1/m2, InferenceServices i1-i4 in namespaces a/b
with random ``team`` labels), watchers with random namespaces and label selectors subscribing at
random points (before a write, or while the tracker processes it: just before it takes its lock,
or in the middle of the evaluation), the tracker in the write (synchronous) or on its own thread
(coalescing the writes it has not processed). After every write, once the tracker has caught up,
the state each watcher reconstructs from its events equals a fresh watch with the same filter:
the same InferenceServices with the same outcomes."""

from __future__ import annotations

import time
from typing import Any

from helpers_docs import entry, isvc, model, objects, runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.flows.outcomes import Selections
from ome_selector.rpc.watch import SelectionTracker, Watcher
from ome_selector.validation import object_key

NAMESPACES = ("a", "b")
RUNTIMES = ("r1", "r2", "r3")
MODELS = ("m1", "m2")
ISVCS = ("i1", "i2", "i3", "i4")
SELECTORS = ("", "team=x", "team!=x", "team", "!team", "team in (x,y)", "team notin (y)")
BOUNDED = settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))

runtimes = st.builds(
    lambda name, fmt, priority, auto: runtime(
        name, entry(format=(fmt, "1.0.0"), priority=priority, auto_select=auto), namespace=None
    ),
    st.sampled_from(RUNTIMES),
    st.sampled_from(("safetensors", "gguf")),
    st.integers(1, 3),
    st.booleans(),
)
models = st.builds(
    lambda name, fmt, size: model(name, namespace=None, format=(fmt, "1.0.0"), size=size),
    st.sampled_from(MODELS),
    st.sampled_from(("safetensors", "gguf")),
    st.sampled_from(("3B", "70B")),
)


def labelled(name: str, namespace: str, model_name: str, team: str | None) -> dict[str, Any]:
    doc = isvc(model_name, name=name, namespace=namespace)
    if team is not None:
        doc["metadata"]["labels"] = {"team": team}
    return doc


services = st.builds(
    labelled,
    st.sampled_from(ISVCS),
    st.sampled_from(NAMESPACES),
    st.sampled_from(MODELS),
    st.sampled_from((None, "x", "y")),
)
any_object = st.one_of(runtimes, models, services, services)
kinds = cache_pb2.ObjectKind
KEYS = [cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, name=r) for r in RUNTIMES] + [
    cache_pb2.ObjectKey(kind=kinds.OBJECT_KIND_INFERENCE_SERVICE, namespace=ns, name=i)
    for ns in NAMESPACES
    for i in ISVCS
]
writes = st.one_of(
    st.tuples(st.just("upsert"), st.lists(any_object, min_size=1, max_size=3)),
    st.tuples(st.just("delete"), st.lists(st.sampled_from(KEYS), min_size=1, max_size=2, unique_by=str)),
    st.tuples(st.just("apply"), st.lists(any_object, max_size=6)),
)
subscriptions = st.lists(
    st.tuples(
        st.sampled_from(("before", "locking", "evaluating")),
        st.sampled_from(("", *NAMESPACES)),
        st.sampled_from(SELECTORS),
    ),
    max_size=2,
)
BASE = [
    runtime("r1", entry(format=("safetensors", "1.0.0"), priority=1), namespace=None),
    model("m1", namespace=None, size="3B"),
    model("m2", namespace=None, format=("gguf", "1.0.0"), size="70B"),
    labelled("i1", "a", "m1", "x"),
    labelled("i2", "b", "m1", "y"),
]


def unique(docs: list[dict[str, Any]]) -> list[cache_pb2.CacheObject]:
    return list({object_key(o): o for o in objects(*docs)}.values())


class HookedLock:
    """A lock that runs ``hook`` once, just before it is next taken."""

    def __init__(self, lock: Any, hook: Any) -> None:
        self._lock, self._hook = lock, hook

    def __enter__(self) -> None:
        hook, self._hook = self._hook, None
        if hook is not None:
            hook()
        self._lock.acquire()

    def __exit__(self, *exc: object) -> None:
        self._lock.release()


def held(events: list[selector_pb2.WatchSelectionsResponse]) -> dict[tuple[str, str], bytes]:
    """(namespace, name) -> the serialized outcome a client holds after ``events``."""
    out: dict[tuple[str, str], bytes] = {}
    for e in events:
        which = e.WhichOneof("event")
        if which == "resync":
            out = {}
        elif which == "current":
            out[(e.current.namespace, e.current.name)] = e.current.SerializeToString(deterministic=True)
        elif which == "change":
            k = (e.change.namespace, e.change.name)
            if e.change.HasField("after"):
                out[k] = e.change.after.SerializeToString(deterministic=True)
            else:
                assert k in out, f"removed {k}, which the watcher did not hold"
                del out[k]
    return out


def caught_up(store: CacheStore, tracker: SelectionTracker, watchers: list[Any]) -> None:
    deadline = time.monotonic() + 60
    while tracker.snapshot.generation != store.snapshot.generation or not all(w[0].ready for w in watchers):
        assert time.monotonic() < deadline, "the tracker did not catch up"
        time.sleep(0.005)


@BOUNDED
@given(
    st.lists(any_object, max_size=6).map(lambda extra: BASE + extra),
    st.lists(st.tuples(writes, subscriptions), min_size=1, max_size=6),
    st.booleans(),
    subscriptions,
)
def test_every_watcher_reconstructs_what_a_fresh_watch_sees_after_every_write(
    initial: list, steps: list, threaded: bool, first: list
) -> None:
    store = CacheStore()
    store.apply_snapshot("v0", unique(initial))
    tracker = SelectionTracker(store, synchronous=not threaded)
    watchers: list[tuple[Watcher, str, str, list[selector_pb2.WatchSelectionsResponse]]] = []
    lock = tracker._lock
    advance = Selections.advance

    def subscribe(namespace: str, selector: str) -> None:
        watchers.append((tracker.subscribe(namespace, selector), namespace, selector, []))

    try:
        for _, namespace, selector in first:
            subscribe(namespace, selector)
        for i, ((op, payload), subs) in enumerate(steps, start=1):
            during = []
            for when, namespace, selector in subs:
                if when == "before":
                    subscribe(namespace, selector)
                else:
                    during.append((when, namespace, selector))
            locking = [s for s in during if s[0] == "locking"]
            evaluating = [s for s in during if s[0] == "evaluating"]
            if locking:
                tracker._lock = HookedLock(  # type: ignore[assignment]
                    lock, lambda subs=locking: [subscribe(n, s) for _, n, s in subs]
                )

            def evaluating_advance(self: Selections, old: Any, new: Any, *rest: Any, subs: list = evaluating) -> Any:
                while subs:
                    _, n, s = subs.pop()
                    subscribe(n, s)
                return advance(self, old, new, *rest)

            Selections.advance = evaluating_advance  # type: ignore[method-assign]
            try:
                version = f"v{i}"
                if op == "upsert":
                    store.upsert(version, unique(payload))
                elif op == "delete":
                    store.delete(version, payload)
                else:
                    store.apply_snapshot(version, unique(payload))
                if threaded:
                    caught_up(store, tracker, watchers)
            finally:
                Selections.advance = advance  # type: ignore[method-assign]
            for watcher, namespace, selector, events in watchers:
                if not watcher.ready:  # a hook that has not fired (the write changed nothing)
                    continue
                if not events:
                    events.extend(watcher.initial)
                events.extend(watcher.take())
                ends = [e.initial_events_end.generation for e in events if e.HasField("initial_events_end")]
                assert ends, "no initial state"
                fresh = tracker.subscribe(namespace, selector)
                try:
                    assert fresh.ready
                    assert held(events) == held(fresh.initial), (namespace, selector)
                finally:
                    fresh.close()
                writes_seen = [e.write.generation for e in events if e.HasField("write")]
                assert writes_seen == sorted(set(writes_seen)), "a write seen twice or out of order"
                assert all(g > ends[0] for g in writes_seen[:1]), "a write from before the initial state"
    finally:
        Selections.advance = advance  # type: ignore[method-assign]
        tracker._lock = lock
        tracker.close()
