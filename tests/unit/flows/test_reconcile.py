"""The controller's runtime step through ``lifecycle.reconcile_inference_service``.

Pages: troubleshoot-runtime-selection.md (Step 1 JSON, Step 5 JSON, "The message says the model
format name is required", "The runtime you named isn't found"); reference-a-runtime-explicitly.md
("The runtime was deleted or disabled", Step 3 advisory); runtime-deployment-mode-matching.md and
runtime-accelerator-class-matching.md ("Where a rejection shows up", the advisory event);
runtime-inheritance.md ("When a chain breaks"); select-accelerators.md and accelerator-classes.md
(AcceleratorClassError, BestFit bug, policies after a class is deleted); deployment-modes.md
("Other mode values"); serving-runtimes.md ("Common errors"). Where the pages are silent:
ome-selection-facts.md 6 and 8.4-8.6.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers_docs import (
    INHERITANCE_ISVC,
    LLAMA_3_2_1B_CBM,
    LLAMA_3_2_1B_ISVC,
    LLAMA_3_2_3B_CBM,
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_HOPPER,
    LLAMA_3_3_70B_ISVC,
    LLAMA_3_70B_ISVC,
    QWEN2_5_7B_CBM,
    QWEN2_5_7B_ISVC,
    QWEN2_5_7B_NO_RUNTIME_MESSAGE,
    SGLANG_CHILD,
    SGLANG_PROFILE,
    SRT_LLAMA_3_2_1B_INSTRUCT,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_LLAMA_3_3_70B_MULTINODE,
    SRT_MISTRAL_7B_INSTRUCT,
    SRT_QWEN2_5_7B,
    accelerator_class,
    catalog,
    inference_service,
    isvc,
    load,
    model,
    runtime,
    troubleshoot_qwen_sources,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.rpc import lifecycle

MODE = "ome.io/deploymentMode"


def reconcile(sources: list[Any], service: Any, has_condition: bool = False) -> pb.ReconcileInferenceServiceResponse:
    store = load(*sources)
    request = pb.ReconcileInferenceServiceRequest(
        inference_service=inference_service(service), has_runtime_ready_condition=has_condition
    )
    return lifecycle.reconcile_inference_service(store.snapshot, request)


def events(response: pb.ReconcileInferenceServiceResponse) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in response.events]


def condition(response: pb.ReconcileInferenceServiceResponse) -> dict[str, str] | None:
    """The RuntimeReady condition as `kubectl get ... jsonpath | jq` prints it (without
    lastTransitionTime, which the service does not set); None when the response leaves it."""
    if not response.HasField("runtime_ready"):
        return None
    c = response.runtime_ready
    out = {"reason": c.reason, "severity": c.severity, "status": c.status, "type": c.type}
    if c.message:
        out["message"] = c.message
    return out


def doc(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


# select-accelerators.md, Step 1 (the fields that matter; helpers_docs.NVIDIA_H100/H200 are the whole manifests).
NVIDIA_H100 = accelerator_class(
    "nvidia-h100",
    vendor="nvidia",
    family="hopper",
    capabilities={
        "memoryGB": "80Gi",
        "computeCapability": "9.0",
        "memoryBandwidthGBps": "3350",
        "performance": {"fp16Tflops": 989},
    },
    cost={"perHour": "10"},
)
NVIDIA_H200 = accelerator_class(
    "nvidia-h200",
    vendor="nvidia",
    family="hopper",
    capabilities={
        "memoryGB": "141Gi",
        "computeCapability": "9.0",
        "memoryBandwidthGBps": "4800",
        "performance": {"fp16Tflops": 989},
    },
    cost={"perHour": "12"},
)

# troubleshoot-runtime-selection.md: the two catalog runtimes and the model as `kubectl get` shows it.
QWEN_SOURCES = troubleshoot_qwen_sources()

CHAIN_ERROR = 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'


def named(service: str | dict[str, Any], runtime_name: str, **ref: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc(service) if isinstance(service, str) else service)
    out["spec"]["runtime"] = {"name": runtime_name, **ref}
    return out


def seed_b_named(**ref: Any) -> dict[str, Any]:
    return named(LLAMA_3_70B_ISVC, "srt-llama-3-3-70b-instruct-multinode", **ref)


# ---- RuntimeReady False / RuntimeNotFound --------------------------------------------------------


class TestRuntimeNotFound:
    def test_troubleshoot_step_1_condition(self) -> None:
        """troubleshoot-runtime-selection.md, Step 1: the condition holds OME's message."""
        got = reconcile(QWEN_SOURCES, QWEN2_5_7B_ISVC)
        assert condition(got) == {
            "message": QWEN2_5_7B_NO_RUNTIME_MESSAGE,
            "reason": "RuntimeNotFound",
            "severity": "Info",
            "status": "False",
            "type": "RuntimeReady",
        }

    def test_troubleshoot_step_1_event(self) -> None:
        """The same message is in a Warning event with reason RuntimeNotFound (not v1.2.2's
        `Failed to find runtime for model qwen2-5-7b: ` RuntimeSelectionError)."""
        got = reconcile(QWEN_SOURCES, QWEN2_5_7B_ISVC)
        assert events(got) == [("Warning", "RuntimeNotFound", QWEN2_5_7B_NO_RUNTIME_MESSAGE)]

    def test_no_requeue_and_workload_untouched(self) -> None:
        """facts 8.6: no hot requeue; a serving InferenceService keeps its pods."""
        got = reconcile(QWEN_SOURCES, QWEN2_5_7B_ISVC)
        assert (got.requeue, got.workload_untouched, got.HasField("selection")) == (False, True, False)

    def test_stays_false_when_the_condition_exists(self) -> None:
        got = reconcile(QWEN_SOURCES, QWEN2_5_7B_ISVC, has_condition=True)
        assert condition(got)["status"] == "False"  # type: ignore[index]
        assert condition(got)["message"] == QWEN2_5_7B_NO_RUNTIME_MESSAGE  # type: ignore[index]

    def test_after_admission_with_its_own_runner_image(self) -> None:
        """troubleshoot-runtime-selection.md: OME catches the failures of an InferenceService with
        its own runner image later, with the same message."""
        service = doc(QWEN2_5_7B_ISVC)
        service["spec"]["engine"]["runner"] = {"image": "my/engine:1"}
        got = reconcile(QWEN_SOURCES, service)
        assert condition(got)["message"] == QWEN2_5_7B_NO_RUNTIME_MESSAGE  # type: ignore[index]

    def test_seed_a_after_admission(self) -> None:
        service = doc(LLAMA_3_3_70B_ISVC)
        service["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-a100"
        message = (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
            "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: llama-3-3-70b-hopper (runtime does not support the required accelerator class)"
        )
        got = reconcile([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service)
        assert (condition(got), events(got)) == (
            {
                "message": message,
                "reason": "RuntimeNotFound",
                "severity": "Info",
                "status": "False",
                "type": "RuntimeReady",
            },
            [("Warning", "RuntimeNotFound", message)],
        )

    def test_seed_b_after_admission(self) -> None:
        message = (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode (runtime engine "
            "deployment mode MultiNode does not match requested engine deployment mode OMENative)"
        )
        got = reconcile(
            [SRT_LLAMA_3_3_70B_MULTINODE, catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], LLAMA_3_70B_ISVC
        )
        assert (condition(got)["reason"], condition(got)["message"], events(got)) == (  # type: ignore[index]
            "RuntimeNotFound",
            message,
            [("Warning", "RuntimeNotFound", message)],
        )

    def test_deleted_named_runtime(self) -> None:
        """reference-a-runtime-explicitly.md, "The runtime was deleted or disabled"."""
        message = "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"
        got = reconcile([LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC, has_condition=True)
        assert condition(got) == {
            "message": message,
            "reason": "RuntimeNotFound",
            "severity": "Info",
            "status": "False",
            "type": "RuntimeReady",
        }
        assert events(got) == [("Warning", "RuntimeNotFound", message)]
        assert (got.requeue, got.workload_untouched, got.HasField("selection")) == (False, True, False)

    def test_named_runtime_not_found_in_demo(self) -> None:
        """troubleshoot-runtime-selection.md, "The runtime you named isn't found"."""
        got = reconcile([QWEN2_5_7B_CBM], named(QWEN2_5_7B_ISVC, "srt-qwen2-5-7b"))
        assert condition(got)["message"] == "runtime srt-qwen2-5-7b not found in namespace demo or at cluster scope"  # type: ignore[index]
        assert events(got) == [
            ("Warning", "RuntimeNotFound", "runtime srt-qwen2-5-7b not found in namespace demo or at cluster scope")
        ]

    def test_named_serving_runtime_not_found(self) -> None:
        """... or `ServingRuntime srt-qwen2-5-7b not found in namespace demo` with kind ServingRuntime
        (a ClusterServingRuntime of the name does not count)."""
        got = reconcile(
            [catalog(SRT_QWEN2_5_7B), QWEN2_5_7B_CBM], named(QWEN2_5_7B_ISVC, "srt-qwen2-5-7b", kind="ServingRuntime")
        )
        assert condition(got) == {
            "message": "ServingRuntime srt-qwen2-5-7b not found in namespace demo",
            "reason": "RuntimeNotFound",
            "severity": "Info",
            "status": "False",
            "type": "RuntimeReady",
        }
        assert events(got) == [
            ("Warning", "RuntimeNotFound", "ServingRuntime srt-qwen2-5-7b not found in namespace demo")
        ]

    def test_named_runtime_missing_without_model(self) -> None:
        """serving-runtimes.md: without a base model, a missing runtime reports RuntimeNotFound."""
        got = reconcile([], isvc(None, runtime_name="srt-llama-3-2-1b-instruct"))
        assert (
            condition(got)["message"]
            == "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"
        )  # type: ignore[index]
        assert [e.reason for e in got.events] == ["RuntimeNotFound"]

    def test_pinned_to_a_missing_runtime_is_not_runtime_not_found(self) -> None:
        """runtime-revisions.md, "The RuntimeDrifted condition": with autoSync: false and nothing
        pinned yet, a missing runtime is a RuntimePinError, not RuntimeNotFound (once pinned, the
        revision serves: test_runtime_revisions.py)."""
        got = reconcile(
            [LLAMA_3_2_1B_CBM],
            named(LLAMA_3_2_1B_ISVC, "srt-llama-3-2-1b-instruct", autoSync=False),
            has_condition=False,
        )
        message = (
            "resolve live runtime srt-llama-3-2-1b-instruct: "
            "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"
        )
        assert (events(got), condition(got)) == ([("Warning", "RuntimePinError", message)], None)
        assert (got.requeue, got.workload_untouched) == (True, True)


# ---- RuntimeReady True / RuntimeResolved ------------------------------------------------------------


class TestRuntimeResolved:
    """troubleshoot-runtime-selection.md Step 5 / reference-a-runtime-explicitly.md: after a
    failure, RuntimeReady turns True with reason RuntimeResolved; an InferenceService that never
    failed has no RuntimeReady condition (facts 8.6)."""

    STEP_5 = {"reason": "RuntimeResolved", "severity": "Info", "status": "True", "type": "RuntimeReady"}

    def fixed_qwen(self) -> list[Any]:
        patched = catalog(SRT_QWEN2_5_7B)
        patched["spec"]["supportedModelFormats"][0]["autoSelect"] = True
        return [catalog(SRT_MISTRAL_7B_INSTRUCT), patched, QWEN2_5_7B_CBM]

    def test_step_5_after_fixing_the_runtime(self) -> None:
        got = reconcile(self.fixed_qwen(), QWEN2_5_7B_ISVC, has_condition=True)
        assert condition(got) == self.STEP_5
        assert got.runtime_ready.message == ""
        assert (got.selection.runtime.name, list(got.events), got.requeue, got.workload_untouched) == (
            "srt-qwen2-5-7b",
            [],
            False,
            False,
        )

    def test_no_condition_when_it_never_failed(self) -> None:
        got = reconcile(self.fixed_qwen(), QWEN2_5_7B_ISVC, has_condition=False)
        assert condition(got) is None
        assert got.selection.runtime.name == "srt-qwen2-5-7b"

    def test_step_5_when_the_status_holds_the_failures_condition(self) -> None:
        """The InferenceService's own status.conditions says a failure wrote RuntimeReady."""
        service = yaml.safe_load(QWEN2_5_7B_ISVC)
        service["status"] = {
            "conditions": [{"type": "RuntimeReady", "status": "False", "reason": "RuntimeNotFound", "severity": "Info"}]
        }
        got = reconcile(self.fixed_qwen(), service)
        assert condition(got) == self.STEP_5

    def test_named_runtime_recreated(self) -> None:
        got = reconcile([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC, has_condition=True)
        assert condition(got) == self.STEP_5
        assert events(got) == []

    def test_named_runtime_never_failed(self) -> None:
        got = reconcile([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC, has_condition=False)
        assert condition(got) is None

    def test_named_elsewhere_after_the_runtime_went_missing(self) -> None:
        """ "point spec.runtime.name at one that exists"."""
        moved = named(LLAMA_3_2_1B_ISVC, "team-llama")
        got = reconcile(
            [runtime("team-llama", namespace="llama-demo", size=None), LLAMA_3_2_1B_CBM], moved, has_condition=True
        )
        assert condition(got) == self.STEP_5


# ---- RuntimeCompatibilityAdvisory -------------------------------------------------------------


class TestCompatibilityAdvisory:
    SEED_B = (
        "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model llama-3-3-70b-instruct "
        "(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode MultiNode "
        "does not match requested engine deployment mode OMENative); proceeding because the runtime was named explicitly"
    )

    def test_seed_b_event(self) -> None:
        got = reconcile([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], seed_b_named())
        assert events(got) == [("Warning", "RuntimeCompatibilityAdvisory", self.SEED_B)]

    def test_the_runtime_is_used_anyway(self) -> None:
        got = reconcile([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], seed_b_named())
        assert (got.selection.runtime.name, got.selection.mode, got.requeue, got.workload_untouched) == (
            "srt-llama-3-3-70b-instruct-multinode",
            pb.SELECTION_MODE_NAMED,
            False,
            False,
        )
        assert condition(got) is None

    def test_no_event_with_auto_sync_false(self) -> None:
        got = reconcile([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], seed_b_named(autoSync=False))
        assert events(got) == []
        assert got.selection.runtime.name == "srt-llama-3-3-70b-instruct-multinode"

    def test_event_with_auto_sync_true(self) -> None:
        got = reconcile([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], seed_b_named(autoSync=True))
        assert events(got) == [("Warning", "RuntimeCompatibilityAdvisory", self.SEED_B)]

    def test_accelerator_class_event(self) -> None:
        """runtime-accelerator-class-matching.md: the catalog runtime lists no classes; the
        component then gets no class and no AcceleratorClassError is recorded."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        got = reconcile([catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], service)
        assert events(got) == [
            (
                "Warning",
                "RuntimeCompatibilityAdvisory",
                "Runtime srt-llama-3-3-70b-instruct does not declare support for model llama-3-3-70b-instruct "
                "(runtime srt-llama-3-3-70b-instruct does not support model : runtime does not support the required "
                "accelerator class); proceeding because the runtime was named explicitly",
            )
        ]
        (engine,) = got.components
        assert (engine.accelerator_class, engine.accelerator_source, engine.accelerator_error) == (
            "",
            pb.ACCELERATOR_SOURCE_NONE_RUNTIME_LISTS_NONE,
            "",
        )

    def test_format_event_with_the_same_details_as_the_warning(self) -> None:
        """reference-a-runtime-explicitly.md: OME also records a RuntimeCompatibilityAdvisory event
        with the same details."""
        recorded = doc(LLAMA_3_2_1B_CBM)
        recorded["spec"]["modelFramework"]["version"] = "4.46.0"
        got = reconcile([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), recorded], LLAMA_3_2_1B_ISVC)
        assert events(got) == [
            (
                "Warning",
                "RuntimeCompatibilityAdvisory",
                "Runtime srt-llama-3-2-1b-instruct does not declare support for model llama-3-2-1b-instruct (runtime "
                "srt-llama-3-2-1b-instruct does not support model safetensors: model format "
                "'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0' not in supported formats: framework version "
                "mismatch (model=4.46.0, runtime=4.45.0.dev0)); proceeding because the runtime was named explicitly",
            )
        ]

    def test_no_event_when_the_runtime_declares_the_model(self) -> None:
        """reference-a-runtime-explicitly.md, Step 3: "This runtime does, so there are none"."""
        got = reconcile([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC)
        assert [e.reason for e in got.events] == []

    def test_no_event_without_model(self) -> None:
        """No model: no validation at all (facts 8.5), so no advisory for a missing class."""
        service = isvc(None, runtime_name="srt-llama-3-3-70b-instruct", accelerator_class="nvidia-h100")
        got = reconcile([catalog(SRT_LLAMA_3_3_70B_INSTRUCT)], service)
        assert events(got) == []
        assert got.selection.runtime.name == "srt-llama-3-3-70b-instruct"


# ---- RuntimeValidationError and friends ------------------------------------------------------------


class TestNamedRuntimeCannotBeUsed:
    def test_disabled_runtime(self) -> None:
        """reference-a-runtime-explicitly.md: a RuntimeValidationError event that says the runtime
        is disabled; OME stops updating the workload (exact text: facts 6.7 / 8.5)."""
        disabled = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        disabled["spec"]["disabled"] = True
        got = reconcile([disabled, LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC, has_condition=True)
        assert events(got) == [
            (
                "Warning",
                "RuntimeValidationError",
                "Runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
                "cluster-scoped runtime srt-llama-3-2-1b-instruct is disabled",
            )
        ]
        assert "is disabled" in got.events[0].message
        assert (got.requeue, got.workload_untouched, got.HasField("selection")) == (True, True, False)
        assert condition(got) is None  # RuntimeReady is only about resolving the runtime

    def test_disabled_runtime_without_model(self) -> None:
        """facts 8.5: `Runtime {rt} failed validation: {err}`."""
        disabled = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        disabled["spec"]["disabled"] = True
        got = reconcile([disabled], isvc(None, runtime_name="srt-llama-3-2-1b-instruct"))
        assert events(got) == [
            (
                "Warning",
                "RuntimeValidationError",
                "Runtime srt-llama-3-2-1b-instruct failed validation: cluster-scoped runtime srt-llama-3-2-1b-instruct is disabled",
            )
        ]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_broken_chain(self) -> None:
        """runtime-inheritance.md, "When a chain breaks": the message begins `Runtime
        sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct:` and ends with the
        chain's error; OME leaves the workload as it is and retries."""
        got = reconcile([SGLANG_CHILD, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC)
        ((kind, reason, message),) = events(got)
        assert (kind, reason) == ("Warning", "RuntimeValidationError")
        assert message.startswith("Runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct:")
        assert message.endswith(CHAIN_ERROR)
        assert message == f"Runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: {CHAIN_ERROR}"
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_broken_chain_cycle(self) -> None:
        looping = doc(SGLANG_CHILD)
        looping["metadata"]["annotations"]["ome.io/inherit-from"] = "sglang-llama-3-2-3b"
        got = reconcile([looping, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC)
        assert events(got) == [
            (
                "Warning",
                "RuntimeValidationError",
                "Runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
                "inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]",
            )
        ]

    def test_broken_chain_without_model_is_a_fetch_error(self) -> None:
        """runtime-inheritance.md: `RuntimeFetchError` for one that follows its live runtime without
        spec.model (message: the error text, facts 6.7)."""
        service = doc(INHERITANCE_ISVC)
        del service["spec"]["model"]
        got = reconcile([SGLANG_CHILD], service)
        assert events(got) == [("Warning", "RuntimeFetchError", CHAIN_ERROR)]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_broken_chain_when_pinned_is_a_pin_error(self) -> None:
        service = named(INHERITANCE_ISVC, "sglang-llama-3-2-3b", autoSync=False)
        got = reconcile([SGLANG_CHILD, LLAMA_3_2_3B_CBM], service)
        assert events(got) == [
            ("Warning", "RuntimePinError", f"resolve live runtime sglang-llama-3-2-3b: {CHAIN_ERROR}")
        ]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_repaired_chain(self) -> None:
        got = reconcile([SGLANG_PROFILE, SGLANG_CHILD, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC)
        assert events(got) == []
        assert list(got.selection.inheritance_chain) == ["sglang-profile", "sglang-llama-3-2-3b"]


class TestModelErrors:
    def test_model_without_format_is_a_selection_error(self) -> None:
        """troubleshoot-runtime-selection.md: a RuntimeSelectionError Warning event whose message
        ends with this text, no condition, and OME retries on its own (facts 8.6 for the prefix)."""
        formatless = doc(QWEN2_5_7B_CBM)
        del formatless["spec"]["modelFormat"]
        got = reconcile([catalog(SRT_QWEN2_5_7B), formatless], QWEN2_5_7B_ISVC, has_condition=True)
        assert events(got) == [
            (
                "Warning",
                "RuntimeSelectionError",
                "Failed to find runtime for model qwen2-5-7b: invalid model specification: modelFormat.name: model format name is required",
            )
        ]
        assert condition(got) is None
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_named_runtime_with_a_model_without_format(self) -> None:
        """facts 8.5: for a named runtime an invalid model is a validation error, not an advisory."""
        formatless = doc(LLAMA_3_2_1B_CBM)
        del formatless["spec"]["modelFormat"]
        got = reconcile([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), formatless], LLAMA_3_2_1B_ISVC)
        assert events(got) == [
            (
                "Warning",
                "RuntimeValidationError",
                "Runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
                "invalid model specification: modelFormat.name: model format name is required",
            )
        ]
        assert (got.requeue, got.workload_untouched, condition(got)) == (True, True, None)

    def test_missing_model(self) -> None:
        """facts 6.2 / 6.7: ModelReconcileError."""
        got = reconcile([catalog(SRT_QWEN2_5_7B)], QWEN2_5_7B_ISVC)
        assert events(got) == [
            ("Warning", "ModelReconcileError", "No BaseModel or ClusterBaseModel with the name: qwen2-5-7b")
        ]
        assert condition(got) is None

    def test_disabled_model(self) -> None:
        """facts 8.11: controller event `specified base model {m} is disabled`."""
        disabled = doc(QWEN2_5_7B_CBM)
        disabled["spec"]["disabled"] = True
        got = reconcile([catalog(SRT_QWEN2_5_7B), disabled], QWEN2_5_7B_ISVC)
        assert events(got) == [("Warning", "ModelReconcileError", "specified base model qwen2-5-7b is disabled")]

    def test_no_model_and_no_runtime(self) -> None:
        got = reconcile([], isvc(None))
        assert events(got) == [("Warning", "ModelReconcileError", "model reference is required")]


# ---- AcceleratorClassError and the class a component gets ----------------------------------------------


class TestAcceleratorClassError:
    QUOTED = "Failed to get accelerator class for engine: accelerator class nvidia-h100 not found at cluster scope"

    def patched_70b(self) -> dict[str, Any]:
        out = catalog(SRT_LLAMA_3_3_70B_INSTRUCT)
        out["spec"]["acceleratorRequirements"] = {"acceleratorClasses": ["nvidia-h100", "nvidia-h200"]}
        return out

    def test_select_accelerators_troubleshooting_event(self) -> None:
        """select-accelerators.md: the class the InferenceService names is missing; OME leaves the
        serving workload as it is, and keeps retrying."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        got = reconcile([self.patched_70b(), NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert events(got) == [("Warning", "AcceleratorClassError", self.QUOTED)]
        assert (got.requeue, got.workload_untouched) == (True, True)
        (engine,) = got.components
        assert engine.accelerator_error == "accelerator class nvidia-h100 not found at cluster scope"

    def test_auto_selected_runtime(self) -> None:
        """Seed A's runtime lists the classes, but the cluster has none of them."""
        got = reconcile([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], LLAMA_3_3_70B_ISVC)
        assert got.selection.runtime.name == "llama-3-3-70b-hopper"
        assert events(got) == [("Warning", "AcceleratorClassError", self.QUOTED)]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_decoder(self) -> None:
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        service["spec"]["acceleratorSelector"] = {"acceleratorClass": "nvidia-h100"}
        service["spec"]["decoder"] = {"minReplicas": 1, "acceleratorOverride": {"acceleratorClass": "nvidia-l40s"}}
        pd = self.patched_70b()
        pd["spec"]["acceleratorRequirements"]["acceleratorClasses"].append("nvidia-l40s")
        got = reconcile([pd, NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert [e for e in events(got) if e[1] == "AcceleratorClassError"] == [
            (
                "Warning",
                "AcceleratorClassError",
                "Failed to get accelerator class for decoder: accelerator class nvidia-l40s not found at cluster scope",
            )
        ]
        assert got.workload_untouched

    def test_no_event_when_the_runtime_lists_no_classes(self) -> None:
        """runtime-accelerator-class-matching.md: if the runtime you name lists none, OME ignores the
        class names and records no event (only the advisory)."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        got = reconcile([catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], service)
        assert [e.reason for e in got.events] == ["RuntimeCompatibilityAdvisory"]
        assert (got.requeue, got.workload_untouched) == (False, False)

    def test_class_the_runtime_does_not_list_is_still_given(self) -> None:
        """... If it lists some, the component gets the class that the InferenceService names, even
        one the runtime doesn't list."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        service["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-l40s"
        l40s = accelerator_class("nvidia-l40s", vendor="nvidia", family="ada")
        got = reconcile([self.patched_70b(), NVIDIA_H100, NVIDIA_H200, l40s, LLAMA_3_3_70B_CBM], service)
        assert [e.reason for e in got.events] == ["RuntimeCompatibilityAdvisory"]
        (engine,) = got.components
        assert (engine.accelerator_class, engine.accelerator_source) == ("nvidia-l40s", pb.ACCELERATOR_SOURCE_SELECTOR)

    def test_policy_picks_again_after_a_class_is_deleted(self) -> None:
        """accelerator-classes.md: since v1.3, a policy picks again from the runtime's other
        classes, or runs the pods without a class if none qualifies (no event)."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        service["spec"]["acceleratorSelector"] = {"policy": "FirstAvailable"}
        got = reconcile([self.patched_70b(), NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert events(got) == []
        (engine,) = got.components
        assert (engine.accelerator_class, engine.accelerator_source, engine.accelerator_policy) == (
            "nvidia-h200",
            pb.ACCELERATOR_SOURCE_POLICY,
            "FirstAvailable",
        )
        got = reconcile([self.patched_70b(), LLAMA_3_3_70B_CBM], service)
        assert (events(got), got.workload_untouched) == ([], False)
        (engine,) = got.components
        assert (engine.accelerator_class, engine.accelerator_source) == ("", pb.ACCELERATOR_SOURCE_NONE_NO_CANDIDATE)

    def test_bestfit_without_constraints_is_the_known_bug(self) -> None:
        """select-accelerators.md, "BestFit doesn't create or update the workload": no event, the
        controller log shows `invalid memory address or nil pointer dereference`."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        service["spec"]["acceleratorSelector"] = {"policy": "BestFit"}
        got = reconcile([self.patched_70b(), NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert events(got) == []
        assert got.workload_untouched
        assert any("invalid memory address or nil pointer dereference" in line for line in got.logs)

    @pytest.mark.parametrize(
        "override",
        [{"policy": "BestFit"}, {"policy": "BestFit", "constraints": {"minMemory": 80}}],
        ids=["override-policy", "override-policy-with-override-constraints"],
    )
    def test_bestfit_in_an_override_needs_selector_constraints_too(self, override: dict[str, Any]) -> None:
        """select-accelerators.md: "always set spec.acceleratorSelector.constraints, also when BestFit
        is in an acceleratorOverride"; constraints in an override have no effect."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        del service["spec"]["acceleratorSelector"]
        service["spec"]["engine"]["acceleratorOverride"] = override
        got = reconcile([self.patched_70b(), NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert events(got) == []
        assert got.workload_untouched
        assert any("invalid memory address or nil pointer dereference" in line for line in got.logs)

    def test_bestfit_without_constraints_with_one_class_works(self) -> None:
        """ "If you leave them out and two or more classes qualify" -- one class is fine."""
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        service["spec"]["acceleratorSelector"] = {"policy": "BestFit"}
        got = reconcile([self.patched_70b(), NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert (events(got), list(got.logs), got.workload_untouched) == ([], [], False)
        assert got.components[0].accelerator_class == "nvidia-h200"

    def test_bestfit_with_constraints_works(self) -> None:
        service = named(LLAMA_3_3_70B_ISVC, "srt-llama-3-3-70b-instruct")
        service["spec"]["acceleratorSelector"] = {"policy": "BestFit", "constraints": {"minMemory": 80}}
        got = reconcile([self.patched_70b(), NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert (events(got), list(got.logs), got.workload_untouched) == ([], [], False)
        assert got.components[0].accelerator_class == "nvidia-h100"


# ---- deployment-mode failures (log only) --------------------------------------------------------------


class TestModeFailures:
    def router_multinode(self) -> dict[str, Any]:
        return runtime("srt-router-multinode", spec={"routerConfig": {"annotations": {MODE: "MultiNode"}}})

    def test_router_multinode_is_logged_without_event(self) -> None:
        """runtime-deployment-mode-matching.md: a runtime whose routerConfig declares MultiNode
        passes matching; the manager logs `Failed to reconcile component` with `invalid deployment
        mode for router`, and records no event."""
        service = isvc(router={"minReplicas": 1})
        got = reconcile([self.router_multinode(), model(namespace=None)], service)
        assert got.selection.runtime.name == "srt-router-multinode"
        assert events(got) == []
        assert len(got.logs) == 1
        assert "Failed to reconcile component" in got.logs[0]
        assert "invalid deployment mode for router" in got.logs[0]
        # deployment-modes.md, "Other mode values": no workload for that component or any after
        # it; the router comes last, so the engine's workload is still updated.
        assert (got.requeue, got.workload_untouched) == (True, False)
        router = [c for c in got.components if c.component == pb.COMPONENT_ROUTER][0]
        assert (router.deployment_mode, router.mode_error) == ("MultiNode", "invalid deployment mode for router")

    def test_router_multinode_without_router_is_fine(self) -> None:
        got = reconcile([self.router_multinode(), model(namespace=None)], isvc())
        assert (events(got), list(got.logs), got.requeue, got.workload_untouched) == ([], [], False, False)

    def test_engine_virtual_deployment_annotation(self) -> None:
        """deployment-modes.md, "Other mode values": VirtualDeployment on a component: the manager
        logs `Failed to reconcile component`, retries, no event; nothing after it is created."""
        service = isvc(engine={"annotations": {MODE: "VirtualDeployment"}}, router={"annotations": {MODE: "MultiNode"}})
        got = reconcile([runtime("rt"), model(namespace=None)], service)
        assert events(got) == []
        assert len(got.logs) == 1 and "invalid deployment mode for engine" in got.logs[0]
        assert "Failed to reconcile component" in got.logs[0]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_decoder_virtual_deployment_annotation(self) -> None:
        service = isvc(decoder={"annotations": {MODE: "VirtualDeployment"}})
        got = reconcile([runtime("rt"), model(namespace=None)], service)
        assert events(got) == []
        assert len(got.logs) == 1 and "invalid deployment mode for decoder" in got.logs[0]

    def test_service_virtual_deployment_runs_no_selection(self) -> None:
        """deployment-modes.md: VirtualDeployment in metadata.annotations: OME creates or updates
        no workload; facts 6.1: no runtime selection at all (so no RuntimeNotFound)."""
        service = isvc(annotations={MODE: "VirtualDeployment"})
        got = reconcile([], service, has_condition=True)
        assert (events(got), condition(got), got.HasField("selection"), list(got.logs)) == ([], None, False, [])

    def test_accelerator_classes_come_before_component_modes(self) -> None:
        rt = runtime("rt", classes=["nvidia-h100", "nvidia-l40s"])
        service = isvc(
            runtime_name="rt",
            engine={"annotations": {MODE: "VirtualDeployment"}},
            decoder={"acceleratorOverride": {"acceleratorClass": "nvidia-l40s"}},
        )
        got = reconcile([rt, NVIDIA_H100, model(namespace=None)], service)
        assert events(got) == [
            (
                "Warning",
                "AcceleratorClassError",
                "Failed to get accelerator class for decoder: accelerator class nvidia-l40s not found at cluster scope",
            )
        ]
        assert list(got.logs) == []


# ---- Ready is never touched ------------------------------------------------------------------


class TestReadyIsNeverTouched:
    """RuntimeReady doesn't count toward Ready (reference-a-runtime-explicitly.md; severity Info)."""

    def test_response_has_no_ready_condition(self) -> None:
        fields = {f.name for f in pb.ReconcileInferenceServiceResponse.DESCRIPTOR.fields}
        assert "runtime_ready" in fields
        assert not any(name == "ready" or name.endswith("_ready") and name != "runtime_ready" for name in fields)

    @pytest.mark.parametrize(
        ("sources", "service", "has_condition"),
        [
            pytest.param(QWEN_SOURCES, QWEN2_5_7B_ISVC, False, id="not-found"),
            pytest.param(QWEN_SOURCES, QWEN2_5_7B_ISVC, True, id="not-found-again"),
            pytest.param([LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC, True, id="named-missing"),
            pytest.param(
                [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC, True, id="resolved"
            ),
        ],
    )
    def test_only_the_runtime_ready_condition_is_set(
        self, sources: list[Any], service: Any, has_condition: bool
    ) -> None:
        got = reconcile(sources, service, has_condition)
        assert (got.runtime_ready.type, got.runtime_ready.severity) == ("RuntimeReady", "Info")


class TestAfterTheRuntimeIsResolved:
    """Reconcile steps after the runtime: engine required, model read by kind, classes, modes."""

    def test_an_inference_service_without_engine_gets_deployment_mode_error(self) -> None:
        """ome-selection-facts.md 6.1/6.7/8.4: no engine -> Warning DeploymentModeError
        `engine component is required`; nothing is created."""
        service = isvc(
            model_name="llama-3-2-3b-instruct", spec={"model": {"name": "llama-3-2-3b-instruct", "kind": "BaseModel"}}
        )
        del service["spec"]["engine"]
        service["spec"]["router"] = {"minReplicas": 1}
        got = reconcile([runtime("rt"), model()], service)
        assert events(got) == [("Warning", "DeploymentModeError", "engine component is required")]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_the_wrong_model_kind_blocks_the_workload_with_a_log_only(self) -> None:
        """base-models.md: "With the wrong kind, OME admits the InferenceService but doesn't create or
        update its serving workload" (the log text from ome-selection-facts.md 8.11)."""
        got = reconcile([runtime("rt"), model()], isvc())  # a BaseModel, but kind defaults to ClusterBaseModel
        assert got.selection.runtime.name == "rt"
        assert (events(got), list(got.logs), got.requeue, got.workload_untouched) == (
            [],
            ["Failed to get referenced ClusterBaseModel"],
            True,
            True,
        )
        right = reconcile(
            [runtime("rt"), model()], isvc(spec={"model": {"name": "llama-3-2-3b-instruct", "kind": "BaseModel"}})
        )
        assert (list(right.logs), right.requeue) == ([], False)

    def test_a_pinned_inference_service_still_needs_its_class(self) -> None:
        """accelerator-classes.md, "Change or delete a class": the class reaches pinned
        InferenceServices too; a missing one gives AcceleratorClassError."""
        service = isvc(model_name=None, runtime_name="rt", accelerator_class="nvidia-missing")
        service["spec"]["runtime"]["autoSync"] = False
        got = reconcile([runtime("rt", classes=["nvidia-missing"])], service)
        assert events(got) == [
            (
                "Warning",
                "AcceleratorClassError",
                "Failed to get accelerator class for engine: accelerator class nvidia-missing not found at cluster scope",
            )
        ]
        assert (got.requeue, got.workload_untouched) == (True, True)

    def test_an_empty_inherited_annotation_does_not_remove_the_parents(self) -> None:
        """runtime-inheritance.md, "What merges": setting a field to "" counts as leaving it unset."""
        parent = runtime("profile", disabled=True, engine_mode="OMENative")
        child = runtime(
            "child", inherit_from="profile", disabled=False, spec={"engineConfig": {"annotations": {MODE: ""}}}
        )
        service = isvc(model_name=None, runtime_name="child")
        got = reconcile([parent, child], service)
        engine = [c for c in got.components if c.component == pb.COMPONENT_ENGINE][0]
        assert (engine.deployment_mode, pb.ModeSource.Name(engine.mode_source)) == (
            "OMENative",
            "MODE_SOURCE_COMPONENT_ANNOTATION",
        )
