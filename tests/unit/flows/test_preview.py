"""PreviewCacheChange and the runtime webhook's warning (docs/api.md "Watch selections and preview a change") in process, on the real
cluster: the same changes, causes and reasons the watch gets for the same write, nothing applied,
validation exactly as UpsertObjects/DeleteObjects, and ``this change moves N InferenceServices``."""

from __future__ import annotations

import pytest
from helpers_docs import entry, isvc, load, model, objects, runtime
from helpers_watch import HOPPER, child, cluster, demo_serving_runtime, hopper, key, nobody_serving_runtime, rows
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import runtimes
from ome_selector.rpc.watch import SelectionTracker


def cluster_store() -> CacheStore:
    store = CacheStore()
    store.apply_snapshot("v1", cluster())
    return store


def preview(store: CacheStore, upserts: list = (), deletes: list = ()) -> selector_pb2.PreviewCacheChangeResponse:  # type: ignore[assignment]
    request = selector_pb2.PreviewCacheChangeRequest(upserts=objects(*upserts), deletes=deletes)
    return runtimes.preview_cache_change(store.snapshot, request)


@pytest.mark.parametrize(
    ("upserts", "deletes"),
    [
        ([hopper(4)], []),
        ([demo_serving_runtime()], []),
        ([child(("1B", "8B"))], []),
        ([], [key("CLUSTER_SERVING_RUNTIME", HOPPER)]),
        ([hopper(4), demo_serving_runtime()], [key("INFERENCE_SERVICE", "llama-70b-team", "team-a")]),
    ],
    ids=["priority", "new-namespaced-runtime", "named-runtime-warning", "deleted-runtime", "mixed"],
)
def test_preview_is_what_the_write_then_gives_and_applies_nothing(upserts: list, deletes: list) -> None:
    store = cluster_store()
    before, status = store.snapshot, store.status()
    got = preview(store, upserts, deletes)
    assert (store.snapshot is before, store.status()) == (True, status)
    tracker = SelectionTracker(store, synchronous=True)
    watcher = tracker.subscribe()
    if upserts and deletes:
        store.upsert("v2", objects(*upserts))
        store.delete("v3", deletes)
    elif upserts:
        store.upsert("v2", objects(*upserts))
    else:
        store.delete("v2", deletes)
    watched = [e.change for e in watcher.take() if e.HasField("change")]
    if not (upserts and deletes):  # one write: the same changes, causes and reasons
        assert [c.cache_version for c in got.changes] == ["v1"] * len(got.changes)
        for change in watched:
            change.cache_version = "v1"
        assert list(got.changes) == watched
    net: dict[tuple[str, str], list] = {}
    for c in watched:  # the first outcome before and the last after, over both writes
        net.setdefault((c.namespace, c.name), [c.before if c.HasField("before") else None, None])[1] = (
            c.after if c.HasField("after") else None
        )
    assert [(c.namespace, c.name) for c in got.changes] == sorted(k for k, (a, b) in net.items() if a != b)


def test_the_preview_of_a_priority_change() -> None:
    got = preview(cluster_store(), [hopper(4)])
    assert [r[:3] + r[5:6] for r in rows(selector_pb2.WatchSelectionsResponse(change=c) for c in got.changes)] == [
        ("llama-demo/llama-70b", "srt-llama-3-3-70b-instruct-omenative", HOPPER, "CHANGE_STEP_RANKING"),
        ("llama-demo/llama-70b-native", "srt-llama-3-3-70b-instruct-omenative", HOPPER, "CHANGE_STEP_RANKING"),
    ]
    assert (got.cache_version, got.reevaluated, got.inference_services, list(got.not_found)) == ("v1", 6, 9, [])


def test_a_preview_that_moves_nothing() -> None:
    got = preview(cluster_store(), [nobody_serving_runtime()], [key("CLUSTER_SERVING_RUNTIME", "not-there")])
    assert (list(got.changes), got.reevaluated, list(got.not_found)) == (
        [],
        0,
        [key("CLUSTER_SERVING_RUNTIME", "not-there")],
    )


@pytest.mark.parametrize(
    ("upserts", "deletes", "violations"),
    [
        ([], [], [("upserts", "at least one upsert or delete is required")]),
        (
            [runtime("Bad_Name")],
            [],
            [("upserts[0].cluster_serving_runtime.metadata.name", 'Invalid value: "Bad_Name": a lowercase RFC 1123')],
        ),
        (
            [runtime("rt"), runtime("rt")],
            [],
            [("upserts[1]", "duplicate ClusterServingRuntime rt (also upserts[0])")],
        ),
        (
            [isvc(name="x", deployment_mode="MultiNode")],
            [],
            [("upserts[0].inference_service.spec.deployment_mode", 'Unsupported value: "MultiNode"')],
        ),
        ([], [cache_pb2.ObjectKey(name="no-kind")], [("deletes[0].kind", "Required value")]),
        (
            [],
            [key("SERVING_RUNTIME", "team-llama-70b")],
            [("deletes[0].namespace", "Required value")],
        ),
        ([runtime("rt")], [key("CLUSTER_SERVING_RUNTIME", "rt")], [("deletes[0]", "the key is in upserts too")]),
    ],
    ids=["empty", "bad-name", "duplicate", "isvc-enum", "no-kind", "no-namespace", "overlap"],
)
def test_bad_previews_are_invalid_argument_as_the_writes_would_be(
    upserts: list, deletes: list, violations: list[tuple[str, str]]
) -> None:
    store = cluster_store()
    with pytest.raises(RequestError) as caught:
        preview(store, upserts, deletes)
    assert caught.value.code == "INVALID_ARGUMENT"
    assert [(v.field, v.description[: len(d)]) for v, (_, d) in zip(caught.value.violations, violations)] == violations
    assert len(caught.value.violations) == len(violations)


def test_a_preview_before_the_first_sync_is_unavailable() -> None:
    with pytest.raises(RequestError) as caught:
        preview(CacheStore(), [runtime("rt")])
    assert caught.value.code == "UNAVAILABLE"


class TestRuntimeWebhookWarning:
    def validate(self, store: CacheStore, doc: dict) -> selector_pb2.ValidateServingRuntimeResponse:
        obj = objects(doc)[0]
        which = obj.WhichOneof("object")
        request = selector_pb2.ValidateServingRuntimeRequest(**{which: getattr(obj, which)})
        return runtimes.validate_serving_runtime(store.snapshot, request)

    def test_an_update_that_moves_inference_services_is_allowed_with_the_warning(self) -> None:
        got = self.validate(cluster_store(), hopper(4))
        assert (got.allowed, list(got.warnings)) == (
            True,
            [
                "this change moves 2 InferenceServices to another runtime "
                "(llama-demo/llama-70b, llama-demo/llama-70b-native)"
            ],
        )

    def test_an_update_that_moves_none_has_no_warning(self) -> None:
        store = cluster_store()
        assert list(self.validate(store, hopper(2)).warnings) == []  # as cached
        assert list(self.validate(store, child(("1B", "8B"))).warnings) == []  # a warning event, same runtime

    def test_the_names_are_capped(self) -> None:
        services = [isvc(name=f"isvc-{i}") for i in range(7)]
        store = load(runtime("old", entry(priority=1)), model(), *services)
        got = self.validate(store, runtime("new", entry(priority=5)))
        assert list(got.warnings) == [
            "this change moves 7 InferenceServices to another runtime (llama-demo/isvc-0, llama-demo/isvc-1, "
            "llama-demo/isvc-2, llama-demo/isvc-3, llama-demo/isvc-4, …)"
        ]

    def test_a_delete_that_moves_inference_services_gets_the_warning(self) -> None:
        old = objects(hopper(2))[0].cluster_serving_runtime
        request = selector_pb2.ValidateServingRuntimeRequest(
            operation=selector_pb2.ADMISSION_OPERATION_DELETE, old_cluster_serving_runtime=old
        )
        got = runtimes.validate_serving_runtime(cluster_store().snapshot, request)
        assert (got.allowed, list(got.warnings)) == (
            True,
            [
                "this change moves 2 InferenceServices to another runtime "
                "(llama-demo/llama-70b-h100, team-a/llama-70b-named-child)"
            ],
        )

    def test_no_warning_without_cached_inference_services_or_when_denied(self) -> None:
        assert list(self.validate(load(runtime("old"), model()), runtime("new", entry(priority=5))).warnings) == []
        denied = self.validate(cluster_store(), runtime("new", entry(priority=5), classes=["nvidia-b200"]))
        assert (denied.allowed, list(denied.warnings)) == (False, [])
