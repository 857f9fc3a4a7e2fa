"""WatchSelections in process (docs/api.md "Watch selections and preview a change"): the outcome of every cached InferenceService of the real
cluster (the OME catalog's runtimes and ome-cluster), the exact events each kind of write gives,
the re-evaluation count, resync, the label selector, and the stream protocol of ``Watcher``.
The tracker runs synchronously here, so every write's events are there when the write returns."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from helpers_docs import entry, isvc, load, model, objects, runtime
from helpers_watch import (
    CHILD,
    HOPPER,
    OMENATIVE,
    QWEN_32B,
    child,
    cluster,
    condition,
    demo_serving_runtime,
    hopper,
    key,
    nobody_serving_runtime,
    qwen_32b_filled,
    rows,
    runtime_name,
)
from ome.selector.v1 import selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.flows import labels
from ome_selector.flows.outcomes import Selections, evaluate, selections_for
from ome_selector.flows.reconcile import ConditionValue
from ome_selector.rpc.outcomes import outcome_pb
from ome_selector.rpc.watch import SelectionTracker, Watcher
from ome_selector.server.metrics import ServerMetrics
from ome_selector.texts import messages
from prometheus_client import generate_latest

RANKED_ABOVE_OMENATIVE = (
    f"ClusterServingRuntime {HOPPER} ranks above ClusterServingRuntime {OMENATIVE} now: score 8 > 6"
)
PRIORITY_2_TO_4 = [f"ClusterServingRuntime {HOPPER}: priority 2 → 4"]
RESOLVED = ("True", "RuntimeResolved")
# An InferenceService that never failed to resolve a runtime has no RuntimeReady condition: OME
# writes it on a failure, then sets it True/RuntimeResolved (troubleshoot-runtime-selection.md
# Step 1 and Step 5; ome-selection-facts.md 8.6).
ABSENT = None
NOT_FOUND = ("False", "RuntimeNotFound")


def tracked(queue_limit: int = 4096) -> tuple[CacheStore, SelectionTracker, Watcher]:
    store = CacheStore()
    store.apply_snapshot("v1", cluster())
    tracker = SelectionTracker(store, queue_limit=queue_limit, synchronous=True)
    return store, tracker, tracker.subscribe()


def test_the_initial_state_is_every_cached_inference_service_then_the_marker() -> None:
    _, _, watcher = tracked()
    assert rows(watcher.initial) == [
        ("current", "demo/deepseek-v3", None),
        ("current", "demo/qwen-32b", None),
        ("current", "demo/qwen2-5-7b", None),
        ("current", "llama-demo/llama-70b", OMENATIVE),
        ("current", "llama-demo/llama-70b-h100", HOPPER),
        ("current", "llama-demo/llama-70b-l40s", None),
        ("current", "llama-demo/llama-70b-native", OMENATIVE),
        ("current", "team-a/llama-70b-named-child", CHILD),
        ("current", "team-a/llama-70b-team", "team-llama-70b"),
        ("initial_events_end", "v1", 9),
    ]
    assert watcher.take() == []


def test_an_outcome_is_what_reconcile_answers() -> None:
    _, _, watcher = tracked()
    h100 = next(e.current for e in watcher.initial if e.current.name == "llama-70b-h100")
    assert h100 == selector_pb2.SelectionOutcome(
        namespace="llama-demo",
        name="llama-70b-h100",
        runtime=selector_pb2.RuntimeRef(kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name=HOPPER),
        mode=selector_pb2.SELECTION_MODE_AUTO,
        components=[
            selector_pb2.ComponentConfiguration(
                component=selector_pb2.COMPONENT_ENGINE,
                deployment_mode="RawDeployment",
                mode_source=selector_pb2.MODE_SOURCE_DEFAULT,
                accelerator_class="nvidia-h100-80gb",
                accelerator_source=selector_pb2.ACCELERATOR_SOURCE_SELECTOR,
            )
        ],
    )
    qwen = next(e.current for e in watcher.initial if e.current.name == "qwen-32b")
    assert (qwen.HasField("runtime_ready"), [(w.reason, w.message) for w in qwen.warnings]) == (
        False,
        [
            (
                "RuntimeSelectionError",
                "Failed to find runtime for model qwen2-5-32b: invalid model specification: modelFormat.name: "
                "model format name is required",
            )
        ],
    )


class TestWrites:
    def test_a_priority_change_moves_inference_services_between_runtimes(self) -> None:
        store, tracker, watcher = tracked()
        store.upsert("v2", objects(hopper(4)))
        assert rows(watcher.take()) == [
            (
                "llama-demo/llama-70b",
                OMENATIVE,
                HOPPER,
                ABSENT,
                PRIORITY_2_TO_4,
                "CHANGE_STEP_RANKING",
                RANKED_ABOVE_OMENATIVE,
            ),
            (
                "llama-demo/llama-70b-native",
                OMENATIVE,
                HOPPER,
                ABSENT,
                PRIORITY_2_TO_4,
                "CHANGE_STEP_RANKING",
                RANKED_ABOVE_OMENATIVE,
            ),
            # the 5 InferenceServices of the model's format key, and llama-70b-l40s, whose model
            # has that key but no runtime; the 2 other no-runtime outcomes are not evaluated
            # again: a priority alone changes no runtime's reason in a no-runtime message
            ("write", "v2", 6, 2, 2),
        ]
        assert tracker.reevaluations == 6
        store.upsert("v3", objects(hopper(2)))
        back = f"ClusterServingRuntime {OMENATIVE} ranks above ClusterServingRuntime {HOPPER} now: score 6 > 4"
        assert [(r[0], r[2], r[4], r[6]) for r in rows(watcher.take())[:2]] == [
            ("llama-demo/llama-70b", OMENATIVE, [f"ClusterServingRuntime {HOPPER}: priority 4 → 2"], back),
            ("llama-demo/llama-70b-native", OMENATIVE, [f"ClusterServingRuntime {HOPPER}: priority 4 → 2"], back),
        ]

    def test_the_moved_outcome_carries_the_new_runtimes_components(self) -> None:
        store, _, watcher = tracked()
        store.upsert("v2", objects(hopper(4)))
        change = watcher.take()[1].change  # llama-70b-native: OMENative from spec.deploymentMode now
        assert (change.before.components[0].mode_source, change.after.components[0]) == (
            selector_pb2.MODE_SOURCE_COMPONENT_ANNOTATION,
            selector_pb2.ComponentConfiguration(
                component=selector_pb2.COMPONENT_ENGINE,
                deployment_mode="OMENative",
                mode_source=selector_pb2.MODE_SOURCE_SERVICE_SPEC,
                accelerator_source=selector_pb2.ACCELERATOR_SOURCE_NONE_NOT_REQUESTED,
            ),
        )
        assert change.cache_version == "v2"
        assert change.reason == selector_pb2.ChangeReason(
            step=selector_pb2.CHANGE_STEP_RANKING,
            runtime=selector_pb2.RuntimeRef(kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name=HOPPER),
            tie_break=selector_pb2.TIE_BREAK_SCORE,
            text=RANKED_ABOVE_OMENATIVE,
        )

    def test_a_new_namespaced_serving_runtime_wins_only_in_its_namespace(self) -> None:
        store, _, watcher = tracked()
        store.upsert("v2", objects(demo_serving_runtime()))
        created = ["ServingRuntime llama-demo/demo-llama-70b: created"]
        added = "ServingRuntime llama-demo/demo-llama-70b is new and is the runtime to use"
        got = rows(watcher.take())
        assert got == [
            (
                "llama-demo/llama-70b",
                OMENATIVE,
                "demo-llama-70b",
                ABSENT,
                created,
                "CHANGE_STEP_RUNTIME_ADDED",
                added,
            ),
            (
                "llama-demo/llama-70b-l40s",
                None,
                None,
                NOT_FOUND,
                created,
                "CHANGE_STEP_CONFIGURATION",
                "still no runtime; changed: RuntimeReady condition, warnings",
            ),
            (
                "llama-demo/llama-70b-native",
                OMENATIVE,
                "demo-llama-70b",
                ABSENT,
                created,
                "CHANGE_STEP_RUNTIME_ADDED",
                added,
            ),
            # llama-demo's 4 InferenceServices only: team-a's and demo's are not evaluated again
            ("write", "v2", 4, 3, 3),
        ]

    def test_the_no_runtime_message_lists_the_new_runtime(self) -> None:
        store, _, watcher = tracked()
        store.upsert("v2", objects(demo_serving_runtime()))
        l40s = watcher.take()[1].change
        prefix = (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
            "Checked {} runtimes ({} namespace-scoped, 206 cluster-scoped). Excluded runtimes: "
        )
        assert l40s.before.runtime_ready.message.startswith(prefix.format(206, 0))
        assert l40s.after.runtime_ready.message.startswith(
            prefix.format(207, 1) + "demo-llama-70b (runtime does not support the required accelerator class); "
        )
        assert [w.message for w in l40s.after.warnings] == [l40s.after.runtime_ready.message]

    def test_a_model_whose_format_is_filled_in_makes_a_runtime_selectable(self) -> None:
        store, _, watcher = tracked()
        store.upsert("v2", objects(qwen_32b_filled()))
        assert rows(watcher.take()) == [
            (
                "demo/qwen-32b",
                None,
                "srt-deepseek-r1-distill-qwen-14b",
                ABSENT,
                [
                    "ClusterBaseModel qwen2-5-32b: modelFormat (none) → safetensors 1.0.0, modelFramework (none) → "
                    "transformers 4.43.1, modelArchitecture (none) → Qwen2ForCausalLM, modelParameterSize (none) → 32B"
                ],
                "CHANGE_STEP_MODEL",
                f"model {QWEN_32B}: {messages.MODEL_FORMAT_REQUIRED} → format "
                "mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.43.1, size 32B",
            ),
            ("write", "v2", 1, 1, 1),
        ]

    def test_a_deleted_runtime_gives_runtime_not_found(self) -> None:
        store, _, watcher = tracked()
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
        got = rows(watcher.take())
        deleted = [f"ClusterServingRuntime {HOPPER}: deleted"]
        messages_changed = (
            "CHANGE_STEP_CONFIGURATION",
            "still no runtime; changed: RuntimeReady condition, warnings",
        )
        assert got == [
            ("demo/deepseek-v3", None, None, NOT_FOUND, deleted, *messages_changed),
            ("demo/qwen2-5-7b", None, None, NOT_FOUND, deleted, *messages_changed),
            (
                "llama-demo/llama-70b-h100",
                HOPPER,
                None,
                NOT_FOUND,
                deleted,
                "CHANGE_STEP_RUNTIME_DELETED",
                f"ClusterServingRuntime {HOPPER} was deleted",
            ),
            ("llama-demo/llama-70b-l40s", None, None, NOT_FOUND, deleted, *messages_changed),
            (
                "team-a/llama-70b-named-child",
                CHILD,
                None,
                None,
                deleted,
                "CHANGE_STEP_NAMED_RUNTIME",
                f'named runtime {CHILD}: ServingRuntime team-a/{CHILD} → inherit-from parent "{HOPPER}" not found '
                f"(chain so far: [{CHILD}])",
            ),
            ("write", "v2", 8, 5, 5),
        ]

    def test_runtime_ready_turns_true_once_the_deleted_runtime_is_back(self) -> None:
        """troubleshoot-runtime-selection.md Step 5: after the fix, RuntimeReady is True with
        RuntimeResolved (the failure wrote it; an InferenceService that never failed has none)."""
        store, _, watcher = tracked()
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
        watcher.take()
        store.upsert("v3", objects(hopper(2)))
        got = {e.change.name: e.change for e in watcher.take() if e.HasField("change")}
        h100 = got["llama-70b-h100"]
        assert (condition(h100.before), runtime_name(h100.after), h100.after.runtime_ready) == (
            NOT_FOUND,
            HOPPER,
            selector_pb2.Condition(type="RuntimeReady", status="True", reason="RuntimeResolved", severity="Info"),
        )

    def test_another_stores_tracker_starts_from_its_own_cache_not_these_outcomes(self) -> None:
        """What one store's tracker wrote (RuntimeReady True/RuntimeResolved once the runtime is
        back) never carries into another store's outcomes: a tracker on a second store holding
        the same objects starts with ``Selections.build``'s (an InferenceService that never
        failed there has no RuntimeReady)."""
        store, _, watcher = tracked()
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
        store.upsert("v3", objects(hopper(2)))
        watcher.take()
        other = CacheStore()
        other.apply_snapshot("v3", [store.snapshot.stored_object(k) for k in store.snapshot.objects])
        initial = [e.current for e in SelectionTracker(other, synchronous=True).subscribe().initial[:-1]]
        h100 = next(o for o in initial if o.name == "llama-70b-h100")
        assert (runtime_name(h100), condition(h100)) == (HOPPER, ABSENT)
        assert initial == [outcome_pb(k, o) for k, o in Selections.build(other.snapshot).outcomes().items()]

    def test_outcomes_read_ahead_of_the_tracker_keep_the_conditions_it_wrote(self) -> None:
        """``selections_for`` a snapshot the tracker has not processed gives what the tracker
        gives once it has: a RuntimeReady condition once written stays written (True with
        RuntimeResolved after the fix), also for the InferenceServices the write cannot move,
        which ``Selections.build`` would give without one."""
        store, tracker, watcher = tracked()
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
        store.upsert("v3", objects(hopper(2)))
        watcher.take()
        processed = store.snapshot
        tracker.close()  # the next write is not processed
        store.upsert("v4", objects(demo_serving_runtime()))  # in h100's namespace: it is evaluated again
        ahead = selections_for(store.snapshot).outcomes()
        h100 = next(o for k, o in ahead.items() if k[1] == "llama-70b-h100")
        assert (h100.runtime[2] if h100.runtime else None, h100.condition) == (
            HOPPER,
            ConditionValue("True", messages.CONDITION_RUNTIME_RESOLVED),
        )
        assert ahead == tracker.selections.advance(processed, store.snapshot).selections.outcomes()
        built = Selections.build(store.snapshot).outcomes()
        assert {k for k in ahead if ahead[k] != built[k]} == {
            k for k, o in ahead.items() if o.condition is not None and built[k].condition is None
        }

    def test_the_deleted_runtimes_inference_service_gets_omes_message(self) -> None:
        store, _, watcher = tracked()
        store.delete("v2", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])
        events = {e.change.name: e.change for e in watcher.take() if e.HasField("change")}
        h100 = events["llama-70b-h100"].after
        assert h100.runtime_ready.message.startswith(
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked "
            "205 runtimes (0 namespace-scoped, 205 cluster-scoped). Excluded runtimes: "
        )
        assert f"{OMENATIVE} (runtime does not support the required accelerator class)" in h100.runtime_ready.message
        assert [(w.type, w.reason, w.message) for w in h100.warnings] == [
            ("Warning", "RuntimeNotFound", h100.runtime_ready.message)
        ]
        named = events["llama-70b-named-child"].after
        assert [(w.reason, w.message) for w in named.warnings] == [
            (
                "RuntimeValidationError",
                f"Runtime {CHILD} does not support model llama-3-3-70b-instruct: inherit-from parent "
                f'"{HOPPER}" not found (chain so far: [{CHILD}])',
            )
        ]

    def test_a_change_that_moves_nothing_gives_no_event_and_evaluates_nothing(self) -> None:
        store, tracker, watcher = tracked()
        store.upsert("v2", objects(nobody_serving_runtime()))
        assert rows(watcher.take()) == [("write", "v2", 0, 0, 0)]
        assert tracker.reevaluations == 0

    def test_a_named_runtimes_warning_appears_and_disappears(self) -> None:
        store, _, watcher = tracked()
        store.upsert("v2", objects(child(("1B", "8B"))))
        events = watcher.take()
        assert rows(events) == [
            (
                "team-a/llama-70b-named-child",
                CHILD,
                CHILD,
                ABSENT,
                [f"ServingRuntime team-a/{CHILD}: modelSizeRange [60B, 75B] → [1B, 8B]"],
                "CHANGE_STEP_CHECK_FAILED",
                f"ServingRuntime team-a/{CHILD} fails the model size check now: "
                "model size 70B is outside supported range [1B, 8B]",
            ),
            ("write", "v2", 2, 1, 1),
        ]
        advisory = (
            f"Runtime {CHILD} does not declare support for model llama-3-3-70b-instruct (runtime {CHILD} does not "
            "support model safetensors: model size 70B is outside supported range [1B, 8B]); proceeding because "
            "the runtime was named explicitly"
        )
        after = events[0].change.after
        assert [(w.reason, w.message) for w in after.warnings] == [("RuntimeCompatibilityAdvisory", advisory)]
        assert events[0].change.reason.check == selector_pb2.CHECK_MODEL_SIZE
        store.upsert("v3", objects(child(("60B", "75B"))))
        events = watcher.take()
        assert [r[5:] for r in rows(events)[:1]] == [
            (
                "CHANGE_STEP_CHECK_PASSED",
                f"ServingRuntime team-a/{CHILD} passes the model size check now "
                "(before: model size 70B is outside supported range [1B, 8B])",
            )
        ]
        assert list(events[0].change.after.warnings) == []

    def test_a_deleted_accelerator_class_changes_the_components_of_its_users_only(self) -> None:
        store, _, watcher = tracked()
        store.delete("v2", [key("ACCELERATOR_CLASS", "nvidia-h100-80gb")])
        events = watcher.take()
        assert [r[:2] + r[4:] for r in rows(events)[:2]] + rows(events)[2:] == [
            (
                "llama-demo/llama-70b-h100",
                HOPPER,
                ["AcceleratorClass nvidia-h100-80gb: deleted"],
                "CHANGE_STEP_CONFIGURATION",
                f"same runtime (ClusterServingRuntime {HOPPER}); changed: warnings, components",
            ),
            (
                "team-a/llama-70b-named-child",
                CHILD,
                ["AcceleratorClass nvidia-h100-80gb: deleted"],
                "CHANGE_STEP_CONFIGURATION",
                f"same runtime (ServingRuntime team-a/{CHILD}); changed: warnings, components",
            ),
            ("write", "v2", 2, 2, 2),  # only the InferenceServices whose class list names it
        ]
        after = events[0].change.after
        assert [(w.reason, w.message) for w in after.warnings] == [
            (
                "AcceleratorClassError",
                "Failed to get accelerator class for engine: accelerator class nvidia-h100-80gb not found at cluster scope",
            )
        ]
        assert after.components[0].accelerator_error == "accelerator class nvidia-h100-80gb not found at cluster scope"

    def test_inference_services_created_changed_and_deleted(self) -> None:
        store, _, watcher = tracked()
        store.upsert("v2", objects(isvc("llama-3-3-70b-instruct", name="new", namespace="llama-demo")))
        store.upsert(
            "v3",
            objects(
                isvc("llama-3-3-70b-instruct", name="new", namespace="llama-demo", deployment_mode="RawDeployment")
            ),
        )
        store.delete("v4", [key("INFERENCE_SERVICE", "new", "llama-demo")])
        got = rows(watcher.take())
        assert [(r[0], r[1], r[2], r[4], r[6]) for r in got if r[0] != "write"] == [
            (
                "llama-demo/new",
                "<absent>",
                OMENATIVE,
                ["InferenceService llama-demo/new: created"],
                "the InferenceService was created",
            ),
            (
                "llama-demo/new",
                OMENATIVE,
                HOPPER,
                ["InferenceService llama-demo/new: deploymentMode changed"],
                "the InferenceService changed",
            ),
            (
                "llama-demo/new",
                HOPPER,
                "<absent>",
                ["InferenceService llama-demo/new: deleted"],
                "the InferenceService was deleted",
            ),
        ]
        assert [r for r in got if r[0] == "write"] == [
            ("write", "v2", 1, 1, 1),
            ("write", "v3", 1, 1, 1),
            ("write", "v4", 0, 1, 1),
        ]


class TestSharedEvaluations:
    """InferenceServices with the same inputs (spec and the annotations the evaluation reads) are
    evaluated once per write: in one namespace, and across namespaces that hold no ServingRuntime
    and no BaseModel of their model (llama-demo, team-b and team-c here; team-a holds
    ServingRuntimes)."""

    TWINS = (("llama-demo", "twin-0"), ("llama-demo", "twin-1"), ("team-b", "twin-2"), ("team-c", "twin-3"))

    def twins(self, store: CacheStore, watcher: Watcher, **fields: Any) -> None:
        docs = [isvc("llama-3-3-70b-instruct", name=name, namespace=ns, **fields) for ns, name in self.TWINS]
        store.upsert("v2", objects(*docs))
        watcher.take()

    def test_a_write_evaluates_each_distinct_input_once_and_each_gets_its_event(self) -> None:
        store, tracker, watcher = tracked()
        self.twins(store, watcher)  # llama-70b's spec, in three namespaces
        labelled = isvc("llama-3-3-70b-instruct", name="twin-1", namespace="llama-demo")
        labelled["metadata"]["labels"] = {"team": "x"}
        evaluations = tracker.evaluations
        store.upsert("v3", objects(hopper(4), labelled))  # twin-1 changes too, in the same write
        ranking = (PRIORITY_2_TO_4, "CHANGE_STEP_RANKING", RANKED_ABOVE_OMENATIVE)
        assert rows(watcher.take()) == [
            ("llama-demo/llama-70b", OMENATIVE, HOPPER, ABSENT, *ranking),
            ("llama-demo/llama-70b-native", OMENATIVE, HOPPER, ABSENT, *ranking),
            ("llama-demo/twin-0", OMENATIVE, HOPPER, ABSENT, *ranking),
            (
                "llama-demo/twin-1",
                OMENATIVE,
                HOPPER,
                ABSENT,
                [*PRIORITY_2_TO_4, "InferenceService llama-demo/twin-1: metadata.labels changed"],
                "CHANGE_STEP_INFERENCE_SERVICE",
                "the InferenceService changed",
            ),
            ("team-b/twin-2", OMENATIVE, HOPPER, ABSENT, *ranking),
            ("team-c/twin-3", OMENATIVE, HOPPER, ABSENT, *ranking),
            ("write", "v3", 10, 6, 6),
        ]
        # 10 InferenceServices (the 2 no-runtime outcomes of other format keys are not evaluated
        # again), 6 evaluations: llama-70b and the four twins share one.
        assert tracker.evaluations - evaluations == 6
        tracked_ = tracker.selections.tracked
        assert tracked_[("llama-demo", "twin-0")] is tracked_[("llama-demo", "llama-70b")]
        assert tracked_[("team-c", "twin-3")].outcome is tracked_[("llama-demo", "llama-70b")].outcome

    def test_a_shared_evaluation_names_each_inference_services_namespace(self) -> None:
        store, tracker, watcher = tracked()
        self.twins(store, watcher, accelerator_class="nvidia-l40s-48gb")  # llama-70b-l40s's spec
        evaluations = tracker.evaluations
        store.upsert("v3", objects(nobody_serving_runtime()))  # a runtime in nobody's namespace
        relabelled = hopper(4)  # more than its priority: every no-runtime outcome is evaluated again
        relabelled["metadata"].setdefault("labels", {})["team"] = "x"
        store.upsert("v4", objects(relabelled))  # a runtime in every no-runtime message
        # The no-runtime messages list the hopper runtime with the same reason before and after.
        assert [r[0] if r[0] != "write" else r for r in rows(watcher.take())] == [
            ("write", "v3", 0, 0, 0),
            "llama-demo/llama-70b",
            "llama-demo/llama-70b-native",
            ("write", "v4", 12, 2, 2),
        ]
        # 8 + 4 InferenceServices, 8 evaluations: llama-70b-l40s and the twins share one.
        assert tracker.evaluations - evaluations == 8
        outcomes = tracker.selections.outcomes()
        for ns, name in (("llama-demo", "llama-70b-l40s"), *self.TWINS):
            condition = outcomes[(ns, name)].condition
            assert condition is not None and condition.message.startswith(
                "no runtime found to support model safetensors with format safetensors "
                f"in namespace {ns}. Checked 206 runtimes (0 namespace-scoped, 206 cluster-scoped)."
            )
        twin = store.snapshot.inference_services[("team-b", "twin-2")]
        assert outcomes[("team-b", "twin-2")] == evaluate(store.snapshot, twin).outcome


class TestFilters:
    def test_a_namespace_watch_sees_only_its_namespace(self) -> None:
        store = CacheStore()
        store.apply_snapshot("v1", cluster())
        tracker = SelectionTracker(store, synchronous=True)
        watcher = tracker.subscribe("team-a")
        assert rows(watcher.initial)[-1] == ("initial_events_end", "v1", 2)
        store.upsert("v2", objects(hopper(4)))
        assert rows(watcher.take()) == [("write", "v2", 6, 2, 0)]

    def test_a_label_selector_watch(self) -> None:
        labelled = [
            isvc(name=name, annotations=None, spec=None)
            | {"metadata": {"name": name, "namespace": "llama-demo", "labels": lbl}}
            for name, lbl in (("a", {"team": "x", "tier": "gold"}), ("b", {"team": "y"}), ("c", {}))
        ]
        store = load(runtime("rt", entry()), model(), *labelled)
        tracker = SelectionTracker(store, synchronous=True)
        got = {
            selector: [e.current.name for e in tracker.subscribe("", selector).initial if e.HasField("current")]
            for selector in (
                "team=x",
                "team!=x",
                "team in (x,y)",
                "team notin (x)",
                "team",
                "!team",
                "team=x,tier=gold",
                "",
            )
        }
        assert got == {
            "team=x": ["a"],
            "team!=x": ["b", "c"],
            "team in (x,y)": ["a", "b"],
            "team notin (x)": ["b", "c"],
            "team": ["a", "b"],
            "!team": ["c"],
            "team=x,tier=gold": ["a"],
            "": ["a", "b", "c"],
        }

    @pytest.mark.parametrize(
        ("namespace", "selector", "field", "description"),
        [
            ("Bad_NS", "", "namespace", 'Invalid value: "Bad_NS": a lowercase RFC 1123 label must consist of'),
            ("", "team in x", "label_selector", 'Invalid value: "team in x": not a label selector requirement'),
            ("", "team=x,", "label_selector", 'Invalid value: "team=x,": empty requirement'),
            ("", "team=x y", "label_selector", 'Invalid value: "team=x y": not a label selector requirement'),
            ("", "-team=x", "label_selector", 'Invalid value: "-team": name part must consist of alphanumeric'),
            ("", "team=-x", "label_selector", 'Invalid value: "-x": a valid label must be an empty string or consist'),
        ],
    )
    def test_a_bad_filter_is_invalid_argument_naming_the_field(
        self, namespace: str, selector: str, field: str, description: str
    ) -> None:
        tracker = SelectionTracker(load(model()), synchronous=True)
        with pytest.raises(RequestError) as caught:
            tracker.subscribe(namespace, selector)
        assert caught.value.code == "INVALID_ARGUMENT"
        assert [v.field for v in caught.value.violations] == [field]
        assert caught.value.violations[0].description.startswith(description)
        assert tracker.watchers == 0


def test_label_requirements_follow_kubernetes() -> None:
    """``notin`` and ``!=`` match an absent label, as k8s.io/apimachinery labels do."""
    parsed = labels.parse(" a = 1 , b!=2, c in (3, 4), d notin (5), e, !f ")
    assert [(r.key, r.op, sorted(r.values)) for r in parsed.requirements] == [
        ("a", "in", ["1"]),
        ("b", "notin", ["2"]),
        ("c", "in", ["3", "4"]),
        ("d", "notin", ["5"]),
        ("e", "exists", []),
        ("f", "!exists", []),
    ]
    assert parsed.matches({"a": "1", "c": "4", "e": ""}) is True
    assert parsed.matches({"a": "1", "c": "4", "e": "", "f": "x"}) is False
    assert parsed.matches({"a": "1", "b": "2", "c": "4", "e": ""}) is False
    assert labels.parse("example.com/team==x").matches({"example.com/team": "x"}) is True


class TestResync:
    def test_a_watcher_that_falls_behind_gets_resync_and_the_full_state(self) -> None:
        store, tracker, watcher = tracked(queue_limit=2)
        store.upsert("v2", objects(hopper(4)))  # 2 changes and the stats: 3 events do not fit
        got = rows(watcher.take())
        assert got == [
            ("resync", "the watcher fell behind by more than 2 events; the full state follows"),
            ("current", "demo/deepseek-v3", None),
            ("current", "demo/qwen-32b", None),
            ("current", "demo/qwen2-5-7b", None),
            ("current", "llama-demo/llama-70b", HOPPER),
            ("current", "llama-demo/llama-70b-h100", HOPPER),
            ("current", "llama-demo/llama-70b-l40s", None),
            ("current", "llama-demo/llama-70b-native", HOPPER),
            ("current", "team-a/llama-70b-named-child", CHILD),
            ("current", "team-a/llama-70b-team", "team-llama-70b"),
            ("initial_events_end", "v2", 9),
        ]
        assert tracker.resyncs == 1
        store.upsert("v3", objects(nobody_serving_runtime()))  # fits again
        assert rows(watcher.take()) == [("write", "v3", 0, 0, 0)]

    def test_other_watchers_keep_their_events(self) -> None:
        store, tracker, slow = tracked(queue_limit=3)
        fast = tracker.subscribe()
        store.upsert("v2", objects(nobody_serving_runtime()))
        assert rows(fast.take()) == [("write", "v2", 0, 0, 0)]
        store.upsert("v3", objects(hopper(4)))  # slow still holds v2's event: 1 + 3 > 3
        assert [r[0] for r in rows(fast.take())] == ["llama-demo/llama-70b", "llama-demo/llama-70b-native", "write"]
        assert rows(slow.take())[0][0] == "resync"


def test_the_reevaluations_are_a_metric() -> None:
    store, tracker, _ = tracked()
    metrics = ServerMetrics(store)
    metrics.watch(tracker)
    store.upsert("v2", objects(hopper(4)))
    store.upsert("v3", objects(nobody_serving_runtime()))
    text = generate_latest(metrics.registry).decode()
    assert "ome_selector_watch_reevaluations_total 6.0" in text
    assert "ome_selector_watch_writes_total 2.0" in text
    assert "ome_selector_watch_advances_total 2.0" in text
    assert "ome_selector_watchers 1.0" in text
    assert 'ome_selector_cache_objects{kind="InferenceService"} 9.0' in text


def test_incremental_outcomes_equal_a_rebuild_after_the_scenarios() -> None:
    store, tracker, _ = tracked()
    for version, write in (
        ("v2", lambda: store.upsert("v2", objects(hopper(4), child(("1B", "8B"))))),
        ("v3", lambda: store.upsert("v3", objects(demo_serving_runtime(), qwen_32b_filled()))),
        ("v4", lambda: store.delete("v4", [key("CLUSTER_SERVING_RUNTIME", HOPPER)])),
    ):
        write()
        assert tracker.snapshot.version == version
        assert tracker.selections.outcomes() == Selections.build(store.snapshot).outcomes()


async def test_the_stream_yields_the_initial_state_then_each_writes_events_until_closed() -> None:
    store, tracker, _ = tracked()
    watcher = tracker.subscribe("team-a", "", asyncio.get_running_loop())
    stream = watcher.stream()
    initial = [await anext(stream) for _ in range(3)]
    assert rows(initial)[-1] == ("initial_events_end", "v1", 2)
    store.upsert("v2", objects(nobody_serving_runtime()))
    assert rows([await anext(stream)]) == [("write", "v2", 0, 0, 0)]
    watcher.close()
    with pytest.raises(StopAsyncIteration):
        await anext(stream)
    assert tracker.watchers == 1  # the subscriber tracked() made


def test_a_failed_advance_rebuilds_the_outcomes_and_resyncs_every_watcher(monkeypatch: pytest.MonkeyPatch) -> None:
    store, tracker, watcher = tracked()

    def broken(self: Selections, old: object, new: object) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setattr(Selections, "advance", broken)
    store.upsert("v2", objects(hopper(4)))  # the write stands; the tracker logs and rebuilds
    monkeypatch.undo()
    got = rows(watcher.take())
    assert (got[0][0], got[4], got[-1]) == (
        "resync",
        ("current", "llama-demo/llama-70b", HOPPER),
        ("initial_events_end", "v2", 9),
    )
    assert tracker.selections.outcomes() == Selections.build(store.snapshot).outcomes()
