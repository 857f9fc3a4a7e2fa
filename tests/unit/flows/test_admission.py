"""The InferenceService validating webhook through ``lifecycle.admit_inference_service``.

Every rule and quoted message of the pages that describe admission:

* runtime-accelerator-class-matching.md / runtime-deployment-mode-matching.md ("Where a rejection
  shows up": only InferenceServices with an ``engine`` section are checked; auto-selection is left
  until after admission when the engine sets ``engine.runner.image`` or both
  ``engine.leader.runner.image`` and ``engine.worker.runner.image``; the warnings and denials);
* troubleshoot-runtime-selection.md ("How a selection failure shows up", Step 5, "The message says
  the model format name is required");
* reference-a-runtime-explicitly.md ("kubectl prints a does not declare support warning", "The
  webhook rejects the InferenceService");
* serving-runtimes.md ("How OME selects a runtime", "When you name a runtime");
* runtime-inheritance.md ("When a chain breaks": the webhook rejects with the chain's error);
* deployment-modes.md ("For one component": the OMENative pairing rule);
* ome-selection-facts.md 5.2 and 8.5 where the pages are silent (exact wrapping of denials).

Every expected message is a literal copied from the page (or the facts file where the page only
quotes a part); nothing is computed by the code under test.
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
    catalog,
    entry,
    inference_service,
    isvc,
    load,
    model,
    runtime,
    troubleshoot_qwen_sources,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import lifecycle

WEBHOOK = "inferenceservice.ome-webhook-server.validator"
MODE = "ome.io/deploymentMode"


def admit(sources: list[Any], service: Any) -> pb.AdmitInferenceServiceResponse:
    store = load(*sources)
    request = pb.AdmitInferenceServiceRequest(inference_service=inference_service(service))
    response = lifecycle.admit_inference_service(store.snapshot, request)
    assert response.webhook == WEBHOOK
    return response


def allowed(response: pb.AdmitInferenceServiceResponse) -> tuple[bool, str, list[str]]:
    return response.allowed, pb.AdmissionPath.Name(response.path), list(response.warnings)


def denied(response: pb.AdmitInferenceServiceResponse) -> str:
    assert not response.allowed, response
    assert list(response.warnings) == []
    return response.denial_message


def doc(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


# ---- the docs' manifests ---------------------------------------------------------------------

# troubleshoot-runtime-selection.md: the two catalog runtimes and the model as `kubectl get` shows it.
QWEN_SOURCES = troubleshoot_qwen_sources()

QWEN_DENIAL = (
    "no supporting runtime found for model qwen2-5-7b and engine does not have complete runner configuration: "
    + QWEN2_5_7B_NO_RUNTIME_MESSAGE
)


def seed_a_named(runtime_name: str) -> dict[str, Any]:
    """runtime-accelerator-class-matching.md: the example InferenceService also naming a runtime."""
    out = doc(LLAMA_3_3_70B_ISVC)
    out["spec"]["runtime"] = {"name": runtime_name}
    return out


def seed_b_named() -> dict[str, Any]:
    out = doc(LLAMA_3_70B_ISVC)
    out["spec"]["runtime"] = {"name": "srt-llama-3-3-70b-instruct-multinode"}
    return out


def with_engine(service: Any, engine: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc(service) if isinstance(service, str) else service)
    out["spec"]["engine"] = engine
    return out


def without_engine(service: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc(service) if isinstance(service, str) else service)
    out["spec"].pop("engine")
    return out


# ---- only InferenceServices with an engine section are checked ---------------------------------


class TestOnlyWithAnEngineSection:
    """Seeds, "Where a rejection shows up": "The webhook checks only InferenceServices with an
    engine section"; reference-a-runtime-explicitly.md: "without an engine section, the same
    problems show up as events after kubectl apply succeeds"."""

    def test_auto_selection_failure_is_not_checked_without_engine(self) -> None:
        got = admit(QWEN_SOURCES, without_engine(QWEN2_5_7B_ISVC))
        assert allowed(got) == (True, "ADMISSION_PATH_NO_ENGINE", [])
        assert not got.HasField("selection")

    def test_missing_model_is_not_checked_without_engine(self) -> None:
        got = admit([], without_engine(QWEN2_5_7B_ISVC))
        assert allowed(got) == (True, "ADMISSION_PATH_NO_ENGINE", [])

    def test_missing_named_runtime_is_not_checked_without_engine(self) -> None:
        got = admit([LLAMA_3_2_1B_CBM], without_engine(LLAMA_3_2_1B_ISVC))
        assert allowed(got) == (True, "ADMISSION_PATH_NO_ENGINE", [])

    def test_no_success_warning_without_engine(self) -> None:
        got = admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], without_engine(LLAMA_3_3_70B_ISVC))
        assert allowed(got) == (True, "ADMISSION_PATH_NO_ENGINE", [])

    def test_the_same_service_with_engine_is_checked(self) -> None:
        assert denied(admit(QWEN_SOURCES, QWEN2_5_7B_ISVC)) == QWEN_DENIAL


# ---- auto-selection left until after admission ---------------------------------------------------


class TestFullRunnerDefersAutoSelection:
    """Seeds: auto-selection is left until after admission when the engine sets
    ``engine.runner.image``, or both ``engine.leader.runner.image`` and ``engine.worker.runner.image``."""

    def test_runner_image_defers(self) -> None:
        got = admit(QWEN_SOURCES, with_engine(QWEN2_5_7B_ISVC, {"runner": {"image": "my/engine:1"}}))
        assert allowed(got) == (True, "ADMISSION_PATH_DEFERRED_FULL_RUNNER", [])
        assert not got.HasField("selection")

    def test_runner_image_defers_a_passing_selection_too_no_warning(self) -> None:
        got = admit(
            [LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM],
            with_engine(LLAMA_3_3_70B_ISVC, {"runner": {"image": "my/engine:1"}}),
        )
        assert allowed(got) == (True, "ADMISSION_PATH_DEFERRED_FULL_RUNNER", [])

    def test_leader_and_worker_images_defer(self) -> None:
        engine = {
            "leader": {"runner": {"image": "my/leader:1"}},
            "worker": {"size": 1, "runner": {"image": "my/worker:1"}},
        }
        got = admit(QWEN_SOURCES, with_engine(QWEN2_5_7B_ISVC, engine))
        assert allowed(got) == (True, "ADMISSION_PATH_DEFERRED_FULL_RUNNER", [])

    @pytest.mark.parametrize(
        "engine",
        [
            pytest.param({"leader": {"runner": {"image": "my/leader:1"}}}, id="leader-image-only"),
            pytest.param({"worker": {"size": 1, "runner": {"image": "my/worker:1"}}}, id="worker-image-only"),
            pytest.param(
                {"leader": {"runner": {"image": "my/leader:1"}}, "worker": {"size": 1}}, id="worker-without-image"
            ),
            pytest.param(
                {"leader": {"runner": {"name": "x"}}, "worker": {"runner": {"image": "my/worker:1"}}},
                id="leader-without-image",
            ),
            pytest.param({"runner": {"image": ""}}, id="empty-runner-image"),
            pytest.param({"runner": {"name": "ome-container"}}, id="runner-without-image"),
        ],
    )
    def test_incomplete_runner_configuration_does_not_defer(self, engine: dict[str, Any]) -> None:
        assert denied(admit(QWEN_SOURCES, with_engine(QWEN2_5_7B_ISVC, engine))) == QWEN_DENIAL

    def test_leader_image_only_without_model_needs_a_model(self) -> None:
        service = isvc(None, engine={"leader": {"runner": {"image": "my/leader:1"}}})
        assert denied(admit([], service)) == (
            "model reference is required when runtime is not specified and engine does not have complete runner configuration"
        )

    def test_full_runner_without_model_or_runtime_is_admitted(self) -> None:
        got = admit([], isvc(None, engine={"runner": {"image": "my/engine:1"}}))
        assert allowed(got) == (True, "ADMISSION_PATH_DEFERRED_FULL_RUNNER", [])

    def test_full_runner_does_not_skip_a_named_runtime(self) -> None:
        """facts 8.5: with spec.model and a named runtime, the runtime is checked always; the
        full-runner skip applies only to auto-selection."""
        service = with_engine(LLAMA_3_2_1B_ISVC, {"runner": {"image": "my/engine:1"}})
        assert denied(admit([LLAMA_3_2_1B_CBM], service)) == (
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
            "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"
        )

    def test_full_runner_still_checks_that_the_model_exists(self) -> None:
        service = with_engine(QWEN2_5_7B_ISVC, {"runner": {"image": "my/engine:1"}})
        assert denied(admit([], service)) == (
            'referenced model "qwen2-5-7b" not found in namespace "demo": ensure a BaseModel exists in this namespace '
            "or a ClusterBaseModel exists cluster-wide with this name"
        )


# ---- auto-selection at admission -------------------------------------------------------------------


class TestAutoSelection:
    def test_seed_a_warning(self) -> None:
        """runtime-accelerator-class-matching.md, "Declare both sides"."""
        got = admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], LLAMA_3_3_70B_ISVC)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
        )
        assert (got.selection.runtime.name, got.selection.mode) == ("llama-3-3-70b-hopper", pb.SELECTION_MODE_AUTO)

    def test_troubleshoot_denial_exactly(self) -> None:
        """troubleshoot-runtime-selection.md, "How a selection failure shows up"."""
        got = admit(QWEN_SOURCES, QWEN2_5_7B_ISVC)
        assert denied(got) == QWEN_DENIAL
        assert pb.AdmissionPath.Name(got.path) == "ADMISSION_PATH_AUTO_SELECT"

    def test_seed_a_denial_with_nvidia_a100(self) -> None:
        service = doc(LLAMA_3_3_70B_ISVC)
        service["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-a100"
        assert denied(admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service)) == (
            "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner "
            "configuration: no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
            "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: llama-3-3-70b-hopper "
            "(runtime does not support the required accelerator class)"
        )

    def test_seed_b_denial(self) -> None:
        """runtime-deployment-mode-matching.md: the MultiNode runtime and a ClusterServingRuntime
        with no autoSelect: true entry (the catalog srt-llama-3-3-70b-instruct)."""
        sources = [SRT_LLAMA_3_3_70B_MULTINODE, catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM]
        assert denied(admit(sources, LLAMA_3_70B_ISVC)) == (
            "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete runner "
            "configuration: no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
            "Checked 2 runtimes (0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode "
            "(runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative)"
        )

    def test_troubleshoot_step_5_after_setting_auto_select(self) -> None:
        """troubleshoot-runtime-selection.md, Step 4 patch then Step 5 warning."""
        patched = catalog(SRT_QWEN2_5_7B)
        patched["spec"]["supportedModelFormats"][0]["autoSelect"] = True
        got = admit([catalog(SRT_MISTRAL_7B_INSTRUCT), patched, QWEN2_5_7B_CBM], QWEN2_5_7B_ISVC)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            ["Runtime srt-qwen2-5-7b will be auto-selected for model qwen2-5-7b"],
        )

    def test_serving_runtimes_page_warning(self) -> None:
        """serving-runtimes.md, "How OME selects a runtime"."""
        sr = runtime("sglang-llama-3-2-3b", namespace="llama-demo", size=("2B", "4B"))
        service = isvc("llama-3-2-3b-instruct", name="llama-3-2-3b-instruct")
        got = admit([sr, LLAMA_3_2_3B_CBM], service)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            ["Runtime sglang-llama-3-2-3b will be auto-selected for model llama-3-2-3b-instruct"],
        )

    def test_empty_runtime_name_is_auto_selection(self) -> None:
        service = doc(LLAMA_3_3_70B_ISVC)
        service["spec"]["runtime"] = {"name": ""}
        got = admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
        )

    def test_missing_model(self) -> None:
        assert denied(admit([catalog(SRT_QWEN2_5_7B)], QWEN2_5_7B_ISVC)) == (
            'referenced model "qwen2-5-7b" not found in namespace "demo": ensure a BaseModel exists in this namespace '
            "or a ClusterBaseModel exists cluster-wide with this name"
        )

    def test_disabled_model(self) -> None:
        disabled = doc(QWEN2_5_7B_CBM)
        disabled["spec"]["disabled"] = True
        assert denied(admit([catalog(SRT_QWEN2_5_7B), disabled], QWEN2_5_7B_ISVC)) == "model qwen2-5-7b is disabled"

    def test_model_without_format(self) -> None:
        """troubleshoot-runtime-selection.md, "The message says the model format name is required":
        the webhook rejects the InferenceService with this message (inside the no-supporting-runtime
        denial, facts 5.2)."""
        formatless = doc(QWEN2_5_7B_CBM)
        del formatless["spec"]["modelFormat"]
        got = denied(admit([catalog(SRT_QWEN2_5_7B), formatless], QWEN2_5_7B_ISVC))
        assert got == (
            "no supporting runtime found for model qwen2-5-7b and engine does not have complete runner configuration: "
            "invalid model specification: modelFormat.name: model format name is required"
        )
        assert got.endswith("invalid model specification: modelFormat.name: model format name is required")

    def test_no_runtimes_at_all(self) -> None:
        """troubleshoot-runtime-selection.md, Step 2: when there are no runtimes, the message ends
        after the namespace."""
        assert denied(admit([QWEN2_5_7B_CBM], QWEN2_5_7B_ISVC)) == (
            "no supporting runtime found for model qwen2-5-7b and engine does not have complete runner configuration: "
            "no runtime found to support model safetensors with format safetensors in namespace demo"
        )


# ---- a named runtime -----------------------------------------------------------------------------


class TestNamedRuntimeWarnings:
    """A runtime that fails a check is admitted with a warning (since v1.3)."""

    def test_accelerator_class_warning_with_empty_model_slot(self) -> None:
        """runtime-accelerator-class-matching.md and select-accelerators.md Troubleshooting."""
        got = admit(
            [catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], seed_a_named("srt-llama-3-3-70b-instruct")
        )
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_NAMED_RUNTIME",
            [
                'runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" '
                "(runtime srt-llama-3-3-70b-instruct does not support model : runtime does not support the required "
                "accelerator class); proceeding because the runtime was named explicitly"
            ],
        )
        assert (got.selection.runtime.name, got.selection.mode) == (
            "srt-llama-3-3-70b-instruct",
            pb.SELECTION_MODE_NAMED,
        )

    def test_format_warning_from_the_reference_guide(self) -> None:
        """reference-a-runtime-explicitly.md: the model's config.json had transformers 4.46.0."""
        recorded = doc(LLAMA_3_2_1B_CBM)
        recorded["spec"]["modelFramework"]["version"] = "4.46.0"
        got = admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), recorded], LLAMA_3_2_1B_ISVC)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_NAMED_RUNTIME",
            [
                'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-1b-instruct" '
                "(runtime srt-llama-3-2-1b-instruct does not support model safetensors: model format "
                "'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0' not in supported formats: framework version "
                "mismatch (model=4.46.0, runtime=4.45.0.dev0)); proceeding because the runtime was named explicitly"
            ],
        )

    def test_deployment_mode_warning(self) -> None:
        """runtime-deployment-mode-matching.md: the webhook warns `does not declare support for model`."""
        got = admit([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], seed_b_named())
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_NAMED_RUNTIME",
            [
                'runtime "srt-llama-3-3-70b-instruct-multinode" does not declare support for model "llama-3-3-70b-instruct" '
                "(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode "
                "MultiNode does not match requested engine deployment mode OMENative); proceeding because the runtime "
                "was named explicitly"
            ],
        )

    def test_size_warning(self) -> None:
        """Size failures are advisory too (facts 8.5); the format name fills the model slot."""
        sized = doc(LLAMA_3_2_1B_CBM)
        sized["spec"]["modelParameterSize"] = "3.21B"
        got = admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), sized], LLAMA_3_2_1B_ISVC)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_NAMED_RUNTIME",
            [
                'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-1b-instruct" '
                "(runtime srt-llama-3-2-1b-instruct does not support model safetensors: model size 3.21B is outside "
                "supported range [500M, 2B]); proceeding because the runtime was named explicitly"
            ],
        )

    def test_no_warning_when_the_runtime_declares_the_model(self) -> None:
        """reference-a-runtime-explicitly.md, Step 1-2: the two match, so no warning, although the
        runtime sets autoSelect: false."""
        got = admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC)
        assert allowed(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", [])
        assert got.selection.runtime.name == "srt-llama-3-2-1b-instruct"

    def test_warning_also_when_pinned(self) -> None:
        """serving-runtimes.md, "When you name a runtime": the webhook warns; only the event
        depends on the pin."""
        service = seed_a_named("srt-llama-3-3-70b-instruct")
        service["spec"]["runtime"]["autoSync"] = False
        got = admit([catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], service)
        assert got.allowed
        assert [
            w.startswith(
                'runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct"'
            )
            for w in got.warnings
        ] == [True]

    def test_inherited_settings_count_for_a_named_runtime(self) -> None:
        """runtime-inheritance.md: the example child named by the InferenceService is checked with
        its merged spec (enabled by its own disabled: false) and matches: no warning."""
        got = admit([SGLANG_PROFILE, SGLANG_CHILD, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC)
        assert allowed(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", [])
        assert list(got.selection.inheritance_chain) == ["sglang-profile", "sglang-llama-3-2-3b"]


class TestNamedRuntimeDenials:
    """reference-a-runtime-explicitly.md, "The webhook rejects the InferenceService"; exact forms
    from facts 8.5 (`runtime {rt} does not support model {m}: {err}`)."""

    def test_missing_runtime(self) -> None:
        got = denied(admit([LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC))
        assert "srt-llama-3-2-1b-instruct not found in namespace llama-demo" in got
        assert got == (
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
            "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"
        )

    def test_missing_serving_runtime_with_kind_serving_runtime(self) -> None:
        """With kind: ServingRuntime a ClusterServingRuntime of that name does not count."""
        service = doc(LLAMA_3_2_1B_ISVC)
        service["spec"]["runtime"]["kind"] = "ServingRuntime"
        got = denied(admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM], service))
        assert "srt-llama-3-2-1b-instruct not found in namespace llama-demo" in got
        assert got == (
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
            "ServingRuntime srt-llama-3-2-1b-instruct not found in namespace llama-demo"
        )

    def test_troubleshoot_page_missing_named_runtime_in_demo(self) -> None:
        """facts 8.5's example: `runtime srt-qwen2-5-7b does not support model qwen2-5-7b: ...`."""
        service = doc(QWEN2_5_7B_ISVC)
        service["spec"]["runtime"] = {"name": "srt-qwen2-5-7b"}
        assert denied(admit([QWEN2_5_7B_CBM], service)) == (
            "runtime srt-qwen2-5-7b does not support model qwen2-5-7b: runtime srt-qwen2-5-7b not found in namespace demo or at cluster scope"
        )

    def test_disabled_cluster_runtime(self) -> None:
        disabled = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        disabled["spec"]["disabled"] = True
        got = denied(admit([disabled, LLAMA_3_2_1B_CBM], LLAMA_3_2_1B_ISVC))
        assert "is disabled" in got
        assert got == (
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
            "cluster-scoped runtime srt-llama-3-2-1b-instruct is disabled"
        )

    def test_disabled_namespaced_runtime(self) -> None:
        disabled = runtime("team-llama", namespace="llama-demo", disabled=True)
        service = isvc("llama-3-2-1b-instruct", runtime_name="team-llama")
        assert denied(admit([disabled, LLAMA_3_2_1B_CBM], service)) == (
            "runtime team-llama does not support model llama-3-2-1b-instruct: namespace-scoped runtime team-llama is disabled"
        )

    def test_disabled_model(self) -> None:
        disabled = doc(LLAMA_3_2_1B_CBM)
        disabled["spec"]["disabled"] = True
        got = denied(admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), disabled], LLAMA_3_2_1B_ISVC))
        assert "is disabled" in got
        assert got == "model llama-3-2-1b-instruct is disabled"

    def test_missing_model(self) -> None:
        assert denied(admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT)], LLAMA_3_2_1B_ISVC)) == (
            'referenced model "llama-3-2-1b-instruct" not found in namespace "llama-demo": ensure a BaseModel exists in '
            "this namespace or a ClusterBaseModel exists cluster-wide with this name"
        )

    def test_model_is_checked_before_the_runtime(self) -> None:
        assert denied(admit([], LLAMA_3_2_1B_ISVC)).startswith('referenced model "llama-3-2-1b-instruct" not found')

    def test_model_without_format(self) -> None:
        formatless = doc(LLAMA_3_2_1B_CBM)
        del formatless["spec"]["modelFormat"]
        assert denied(admit([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), formatless], LLAMA_3_2_1B_ISVC)) == (
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
            "invalid model specification: modelFormat.name: model format name is required"
        )

    def test_broken_chain_missing_parent(self) -> None:
        """runtime-inheritance.md, "When a chain breaks": the webhook rejects an InferenceService
        that names the runtime, with the chain's error."""
        got = denied(admit([SGLANG_CHILD, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC))
        assert got.endswith('inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])')
        assert got == (
            "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
            'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
        )

    def test_broken_chain_cycle(self) -> None:
        looping = doc(SGLANG_CHILD)
        looping["metadata"]["annotations"]["ome.io/inherit-from"] = "sglang-llama-3-2-3b"
        got = denied(admit([looping, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC))
        assert got.endswith("inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]")

    def test_a_disabled_profile_does_not_disable_a_child_that_sets_false(self) -> None:
        """runtime-inheritance.md: `disabled: false` overrides the profile's `disabled: true`."""
        got = admit([SGLANG_PROFILE, SGLANG_CHILD, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC)
        assert got.allowed

    def test_a_child_that_leaves_disabled_unset_inherits_disabled(self) -> None:
        child = doc(SGLANG_CHILD)
        del child["spec"]["disabled"]
        got = denied(admit([SGLANG_PROFILE, child, LLAMA_3_2_3B_CBM], INHERITANCE_ISVC))
        assert "is disabled" in got


# ---- spec rules --------------------------------------------------------------------------------


class TestSpecRules:
    def test_decoder_without_engine(self) -> None:
        """facts 5.2 step 3."""
        service = without_engine(QWEN2_5_7B_ISVC)
        service["spec"]["decoder"] = {"minReplicas": 1}
        got = admit(QWEN_SOURCES, service)
        assert denied(got) == "decoder cannot be specified without engine"
        assert pb.AdmissionPath.Name(got.path) == "ADMISSION_PATH_SPEC"

    def test_invalid_name(self) -> None:
        """facts 5.2 step 1."""
        service = doc(QWEN2_5_7B_ISVC)
        service["metadata"]["name"] = "Qwen_7B"
        assert (
            denied(admit(QWEN_SOURCES, service))
            == 'invalid InferenceService name "Qwen_7B", must match "[a-z]([-a-z0-9]*[a-z0-9])?"'
        )

    @pytest.mark.parametrize("mode", ["OMENative", "RawDeployment"])
    def test_deployment_mode_accepts_omenative_and_rawdeployment(self, mode: str) -> None:
        """deployment-modes.md: the field takes OMENative or RawDeployment."""
        service = doc(LLAMA_3_3_70B_ISVC)
        service["spec"]["deploymentMode"] = mode
        got = admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service)
        assert allowed(got) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
        )

    @pytest.mark.parametrize("mode", ["MultiNode", "VirtualDeployment", "Serverless", "omenative", "MultiNodeRayVLLM"])
    def test_deployment_mode_rejects_other_values(self, mode: str) -> None:
        """runtime-deployment-mode-matching.md: `spec.deploymentMode` takes only OMENative or
        RawDeployment, so MultiNode needs the annotation."""
        service = doc(LLAMA_3_3_70B_ISVC)
        service["spec"]["deploymentMode"] = mode
        got = admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service)
        assert (got.allowed, list(got.warnings)) == (False, [])
        assert got.denial_message != ""

    def test_multinode_through_the_annotation_is_accepted(self) -> None:
        service = doc(LLAMA_3_3_70B_ISVC)
        service["spec"]["engine"]["annotations"] = {MODE: "MultiNode"}
        assert admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service).allowed


class TestOMENativePairing:
    """deployment-modes.md, "For one component": with both an engine and a decoder, declare both
    OMENative or neither; the webhook compares their annotations in the InferenceService, or
    spec.deploymentMode."""

    QUOTED = (
        'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not match decoder deploymentMode=""; '
        "when either is OMENative, both must use the same value"
    )

    SOURCES = [LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM]

    def service(
        self,
        engine_mode: str | None = None,
        decoder_mode: str | None = None,
        spec_mode: str | None = None,
        decoder: bool = True,
    ) -> dict[str, Any]:
        out = doc(LLAMA_3_3_70B_ISVC)
        if engine_mode is not None:
            out["spec"]["engine"]["annotations"] = {MODE: engine_mode}
        if decoder:
            out["spec"]["decoder"] = {"minReplicas": 1, "maxReplicas": 1}
            if decoder_mode is not None:
                out["spec"]["decoder"]["annotations"] = {MODE: decoder_mode}
        if spec_mode is not None:
            out["spec"]["deploymentMode"] = spec_mode
        return out

    def test_quoted_message(self) -> None:
        got = admit(self.SOURCES, self.service(engine_mode="OMENative"))
        assert denied(got) == self.QUOTED
        assert pb.AdmissionPath.Name(got.path) == "ADMISSION_PATH_SPEC"

    def test_decoder_omenative_engine_none(self) -> None:
        assert denied(admit(self.SOURCES, self.service(decoder_mode="OMENative"))) == (
            'InvalidDeploymentModeCombination: engine deploymentMode="" does not match decoder deploymentMode="OMENative"; '
            "when either is OMENative, both must use the same value"
        )

    def test_engine_rawdeployment_decoder_omenative(self) -> None:
        assert denied(admit(self.SOURCES, self.service(engine_mode="RawDeployment", decoder_mode="OMENative"))) == (
            'InvalidDeploymentModeCombination: engine deploymentMode="RawDeployment" does not match decoder '
            'deploymentMode="OMENative"; when either is OMENative, both must use the same value'
        )

    def test_spec_deployment_mode_against_a_decoder_annotation(self) -> None:
        assert denied(admit(self.SOURCES, self.service(decoder_mode="RawDeployment", spec_mode="OMENative"))) == (
            'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not match decoder '
            'deploymentMode="RawDeployment"; when either is OMENative, both must use the same value'
        )

    def test_a_misspelled_annotation_is_no_mode(self) -> None:
        assert (
            denied(admit(self.SOURCES, self.service(engine_mode="OMENative", decoder_mode="omenative"))) == self.QUOTED
        )

    def test_the_runtime_annotation_does_not_count(self) -> None:
        """The webhook compares the annotations "in the InferenceService"."""
        named = runtime("omenative-pd", decoder_mode="OMENative")
        service = self.service(engine_mode="OMENative")
        service["spec"]["runtime"] = {"name": "omenative-pd"}
        assert denied(admit([named, LLAMA_3_3_70B_CBM], service)) == self.QUOTED

    @pytest.mark.parametrize(
        ("engine_mode", "decoder_mode", "spec_mode"),
        [
            ("OMENative", "OMENative", None),
            (None, None, "OMENative"),  # spec.deploymentMode applies to both
            ("RawDeployment", "MultiNode", None),  # neither asks for OMENative
            (None, None, None),
            (None, None, "RawDeployment"),
        ],
    )
    def test_allowed_combinations(
        self, engine_mode: str | None, decoder_mode: str | None, spec_mode: str | None
    ) -> None:
        got = admit(self.SOURCES, self.service(engine_mode=engine_mode, decoder_mode=decoder_mode, spec_mode=spec_mode))
        assert got.allowed, got.denial_message

    def test_engine_alone_may_ask_for_omenative(self) -> None:
        assert admit(self.SOURCES, self.service(engine_mode="OMENative", decoder=False)).allowed


# ---- no spec.model -----------------------------------------------------------------------------


class TestWithoutModel:
    """serving-runtimes.md, "When you name a runtime": the webhook checks that the runtime exists
    only when the InferenceService has a base model; it still rejects a disabled runtime. facts 8.5:
    skipped entirely when autoSync: false."""

    def test_missing_named_runtime_is_admitted(self) -> None:
        got = admit([], isvc(None, runtime_name="srt-llama-3-2-1b-instruct"))
        assert allowed(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME_NO_MODEL", [])

    def test_disabled_named_runtime_is_denied(self) -> None:
        disabled = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        disabled["spec"]["disabled"] = True
        got = admit([disabled], isvc(None, runtime_name="srt-llama-3-2-1b-instruct"))
        assert "is disabled" in denied(got)
        assert denied(got) == "cluster-scoped runtime srt-llama-3-2-1b-instruct is disabled"
        assert pb.AdmissionPath.Name(got.path) == "ADMISSION_PATH_NAMED_RUNTIME_NO_MODEL"

    def test_disabled_named_serving_runtime_is_denied(self) -> None:
        disabled = runtime("team-llama", namespace="llama-demo", disabled=True)
        assert (
            denied(admit([disabled], isvc(None, runtime_name="team-llama")))
            == "namespace-scoped runtime team-llama is disabled"
        )

    def test_auto_sync_false_checks_nothing(self) -> None:
        disabled = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        disabled["spec"]["disabled"] = True
        service = isvc(None, runtime_name="srt-llama-3-2-1b-instruct")
        service["spec"]["runtime"]["autoSync"] = False
        assert allowed(admit([disabled], service)) == (True, "ADMISSION_PATH_PINNED_NO_MODEL", [])
        assert allowed(admit([], service)) == (True, "ADMISSION_PATH_PINNED_NO_MODEL", [])

    def test_auto_sync_true_is_the_default(self) -> None:
        disabled = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        disabled["spec"]["disabled"] = True
        service = isvc(None, runtime_name="srt-llama-3-2-1b-instruct")
        service["spec"]["runtime"]["autoSync"] = True
        assert denied(admit([disabled], service)) == "cluster-scoped runtime srt-llama-3-2-1b-instruct is disabled"

    def test_accelerator_class_check_is_skipped(self) -> None:
        """runtime-accelerator-class-matching.md: since v1.3, an InferenceService without
        spec.model skips this check."""
        service = isvc(None, runtime_name="srt-llama-3-3-70b-instruct", accelerator_class="nvidia-h100")
        got = admit([catalog(SRT_LLAMA_3_3_70B_INSTRUCT)], service)
        assert allowed(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME_NO_MODEL", [])

    def test_deployment_mode_check_is_skipped(self) -> None:
        service = isvc(None, runtime_name="srt-llama-3-3-70b-instruct-multinode", deployment_mode="OMENative")
        got = admit([SRT_LLAMA_3_3_70B_MULTINODE], service)
        assert allowed(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME_NO_MODEL", [])

    def test_broken_chain_is_denied_with_the_chains_error(self) -> None:
        service = doc(INHERITANCE_ISVC)
        del service["spec"]["model"]
        got = denied(admit([SGLANG_CHILD], service))
        assert got.endswith('inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])')

    def test_no_model_and_no_runtime(self) -> None:
        got = admit([catalog(SRT_QWEN2_5_7B)], isvc(None, namespace="demo"))
        assert denied(got) == (
            "model reference is required when runtime is not specified and engine does not have complete runner configuration"
        )


class TestRequestValidation:
    def test_namespace_is_required(self) -> None:
        service = doc(QWEN2_5_7B_ISVC)
        del service["metadata"]["namespace"]
        with pytest.raises(RequestError) as raised:
            admit(QWEN_SOURCES, service)
        assert raised.value.code == "INVALID_ARGUMENT"

    def test_inference_service_is_required(self) -> None:
        with pytest.raises(RequestError) as raised:
            lifecycle.admit_inference_service(load().snapshot, pb.AdmitInferenceServiceRequest())
        assert raised.value.code == "INVALID_ARGUMENT"


# ---- accelerator-class and deployment-mode matching at admission ---------------------------------------


class TestMatchingAtAdmission:
    """runtime-accelerator-class-matching.md, "The matching rule" and "Where an InferenceService
    names a class"; runtime-deployment-mode-matching.md, "Where each side declares a mode"."""

    HOPPER = runtime("hopper", entry(), classes=["nvidia-h100", "nvidia-h200"])

    def test_engine_and_decoder_classes_are_pooled(self) -> None:
        service = isvc(
            engine={"acceleratorOverride": {"acceleratorClass": "nvidia-h100"}},
            decoder={"acceleratorOverride": {"acceleratorClass": "nvidia-h200"}},
        )
        assert allowed(admit([self.HOPPER, model()], service)) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            ["Runtime hopper will be auto-selected for model llama-3-2-3b-instruct"],
        )
        service["spec"]["decoder"]["acceleratorOverride"]["acceleratorClass"] = "nvidia-a100"
        assert denied(admit([self.HOPPER, model()], service)).endswith(
            "Excluded runtimes: hopper (runtime does not support the required accelerator class)"
        )

    @pytest.mark.parametrize(
        "service",
        [
            pytest.param(isvc(annotations={"ome.io/accelerator-class": "nvidia-a100"}), id="annotation"),
            pytest.param(isvc(accelerator_class=""), id="empty-value"),
            pytest.param(isvc(accelerator_class="NVIDIA-H100"), id="case-sensitive"),
        ],
    )
    def test_rejected_class_names(self, service: dict[str, Any]) -> None:
        assert denied(admit([self.HOPPER, model()], service)) == (
            "no supporting runtime found for model llama-3-2-3b-instruct and engine does not have complete runner configuration: "
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
            "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: hopper (runtime does not support the required accelerator class)"
        )

    def test_a_policy_does_not_filter(self) -> None:
        service = isvc(
            spec={
                "acceleratorSelector": {
                    "policy": "Cheapest",
                    "constraints": {"excludedClasses": ["nvidia-h100", "nvidia-h200"]},
                }
            }
        )
        assert admit([runtime("plain"), model()], service).allowed

    def test_inherited_classes_count_only_for_a_named_runtime(self) -> None:
        parent = runtime("hopper-profile", disabled=True, classes=["nvidia-h100"])
        child = runtime("hopper-child", inherit_from="hopper-profile", disabled=False)
        named = admit([parent, child, model()], isvc(runtime_name="hopper-child", accelerator_class="nvidia-h100"))
        assert allowed(named) == (True, "ADMISSION_PATH_NAMED_RUNTIME", [])
        chosen = admit([parent, child, model()], isvc(accelerator_class="nvidia-h100"))
        assert "hopper-child (runtime does not support the required accelerator class)" in denied(chosen)

    def test_an_inherited_mode_counts_only_for_a_named_runtime(self) -> None:
        parent = runtime("mn-profile", disabled=True, engine_mode="MultiNode")
        child = runtime("mn-child", inherit_from="mn-profile", disabled=False)
        named = admit([parent, child, model()], isvc(runtime_name="mn-child", deployment_mode="OMENative"))
        assert list(named.warnings) == [
            'runtime "mn-child" does not declare support for model "llama-3-2-3b-instruct" (runtime mn-child does not support '
            "model : runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative); "
            "proceeding because the runtime was named explicitly"
        ]
        chosen = admit([parent, child, model()], isvc(deployment_mode="OMENative"))
        assert list(chosen.warnings) == ["Runtime mn-child will be auto-selected for model llama-3-2-3b-instruct"]

    def test_decoder_mode_warning_for_a_named_runtime(self) -> None:
        service = isvc(runtime_name="rt", deployment_mode="RawDeployment", decoder={})
        got = admit([runtime("rt", decoder_mode="MultiNode"), model()], service)
        assert list(got.warnings) == [
            'runtime "rt" does not declare support for model "llama-3-2-3b-instruct" (runtime rt does not support model : '
            "runtime decoder deployment mode MultiNode does not match requested decoder deployment mode RawDeployment); "
            "proceeding because the runtime was named explicitly"
        ]

    def test_metadata_annotation_is_not_a_requested_mode(self) -> None:
        service = isvc(annotations={MODE: "OMENative"})
        got = admit([runtime("mn", engine_mode="MultiNode"), model()], service)
        assert list(got.warnings) == ["Runtime mn will be auto-selected for model llama-3-2-3b-instruct"]


class TestEveryUpdateIsChecked:
    def test_a_label_change_is_rejected_too(self) -> None:
        """reference-a-runtime-explicitly.md: until then, the webhook rejects every update, even a
        label change, unless the update names a runtime that exists."""
        service = doc(LLAMA_3_2_1B_ISVC)
        service["metadata"]["labels"] = {"team": "a"}
        assert denied(admit([LLAMA_3_2_1B_CBM], service)).endswith(
            "not found in namespace llama-demo or at cluster scope"
        )
        service["spec"]["runtime"]["name"] = "team-llama"
        assert admit([LLAMA_3_2_1B_CBM, runtime("team-llama", namespace="llama-demo")], service).allowed


class TestCheckOrder:
    """troubleshoot-runtime-selection.md, Step 2: "OME runs these checks in order" -- each excluded
    runtime is listed with the first check it failed."""

    def test_first_failed_check_per_runtime(self) -> None:
        wrong = entry(architecture="MistralForCausalLM")
        sources = [
            model(),
            runtime("a-disabled", wrong, disabled=True, classes=[], engine_mode="MultiNode", size=("500M", "2B")),
            runtime("b-class", wrong, classes=[], engine_mode="MultiNode", size=("500M", "2B")),
            runtime("c-mode", wrong, classes=["nvidia-h100"], engine_mode="MultiNode", size=("500M", "2B")),
            runtime("d-format", wrong, classes=["nvidia-h100"], size=("500M", "2B")),
            runtime("e-size", entry(), classes=["nvidia-h100"], size=("500M", "2B")),
        ]
        got = denied(admit(sources, isvc(accelerator_class="nvidia-h100", deployment_mode="OMENative")))
        assert got.startswith(
            "no supporting runtime found for model llama-3-2-3b-instruct and engine does not have complete runner configuration: "
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 5 runtimes "
            "(0 namespace-scoped, 5 cluster-scoped). Excluded runtimes: "
        )
        for listed in [
            "a-disabled (runtime is disabled)",
            "b-class (runtime does not support the required accelerator class)",
            "c-mode (runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative)",
            "d-format (model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: "
            "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM))",
            "e-size (model size 3.21B is outside supported range [500M, 2B])",
        ]:
            assert listed in got


class TestWhatMergesForANamedRuntime:
    """runtime-inheritance.md, "What merges" and "Chain limits", seen through the named-runtime
    checks (the merged spec is what a named runtime is checked with)."""

    def test_a_child_can_set_max_and_keep_its_parents_min(self) -> None:
        parent = runtime("size-profile", disabled=True, size=("60B", "75B"))
        child = runtime(
            "size-child", inherit_from="size-profile", disabled=False, spec={"modelSizeRange": {"max": "80B"}}
        )
        got = admit([parent, child, model()], isvc(runtime_name="size-child"))
        assert list(got.warnings) == [
            'runtime "size-child" does not declare support for model "llama-3-2-3b-instruct" (runtime size-child does not '
            "support model safetensors: model size 3.21B is outside supported range [60B, 80B]); proceeding because the "
            "runtime was named explicitly"
        ]

    def test_the_childs_formats_replace_the_parents(self) -> None:
        parent = runtime("fmt-profile", entry(), disabled=True)
        child = runtime(
            "fmt-child", entry(architecture="MistralForCausalLM"), inherit_from="fmt-profile", disabled=False
        )
        got = admit([parent, child, model()], isvc(runtime_name="fmt-child"))
        assert list(got.warnings) == [
            'runtime "fmt-child" does not declare support for model "llama-3-2-3b-instruct" (runtime fmt-child does not '
            "support model safetensors: model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in "
            "supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)); proceeding "
            "because the runtime was named explicitly"
        ]

    def test_an_empty_list_cannot_remove_the_parents_classes(self) -> None:
        parent = runtime("cls-profile", disabled=True, classes=["nvidia-h100"])
        child = runtime("cls-child", inherit_from="cls-profile", disabled=False, classes=[])
        got = admit([parent, child, model()], isvc(runtime_name="cls-child", accelerator_class="nvidia-h100"))
        assert allowed(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", [])

    def test_a_serving_runtime_cannot_inherit_from_a_cluster_runtime_of_its_own_name(self) -> None:
        csr = runtime("same-name", disabled=True)
        sr = runtime("same-name", namespace="llama-demo", inherit_from="same-name", disabled=False)
        got = denied(admit([csr, sr, model()], isvc(runtime_name="same-name", runtime_kind="ServingRuntime")))
        assert (
            got
            == "runtime same-name does not support model llama-3-2-3b-instruct: inheritance cycle detected: [same-name same-name]"
        )

    def test_a_chain_holds_at_most_five_runtimes(self) -> None:
        names = ["r0", "r1", "r2", "r3", "r4", "r5"]
        chain = [
            runtime(n, inherit_from=names[i + 1] if i + 1 < len(names) else None, disabled=False)
            for i, n in enumerate(names)
        ]
        got = denied(admit([*chain, model()], isvc(runtime_name="r0")))
        assert got.startswith(
            "runtime r0 does not support model llama-3-2-3b-instruct: inheritance chain exceeds max depth 5"
        )
        five = admit([*chain[1:], model()], isvc(runtime_name="r1"))
        assert allowed(five) == (True, "ADMISSION_PATH_NAMED_RUNTIME", [])
        assert list(five.selection.inheritance_chain) == ["r5", "r4", "r3", "r2", "r1"]


class TestRuntimeRevisionPins:
    """runtime-revisions.md, "Pin a specific revision": the webhook checks autoSync and the name form."""

    def admit_with(self, runtime: dict) -> object:
        from ome.selector.v1 import selector_pb2 as spb
        from ome_selector.cache.store import CacheStore
        from ome_selector.rpc import lifecycle

        store = CacheStore()
        store.apply_snapshot("v1", [])
        from google.protobuf import json_format
        from ome.v1beta1 import types_pb2 as t

        service = json_format.ParseDict(
            {
                "metadata": {"name": "llama-3-2-3b-instruct", "namespace": "llama-demo"},
                "spec": {"runtime": runtime, "engine": {"minReplicas": 1}},
            },
            t.InferenceService(),
        )
        return lifecycle.admit_inference_service(
            store.snapshot, spb.AdmitInferenceServiceRequest(inference_service=service)
        )

    def test_the_docs_example_of_a_cluster_revision_named_for_a_serving_runtime(self) -> None:
        got = self.admit_with(
            {
                "name": "sglang-llama-3-2-3b",
                "kind": "ServingRuntime",
                "autoSync": False,
                "revision": "cr-sglang-llama-3-2-3b-590753e8",
            }
        )
        assert (got.allowed, got.denial_message) == (
            False,
            'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention for runtime '
            '"sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>',
        )

    def test_a_revision_needs_auto_sync_false(self) -> None:
        got = self.admit_with({"name": "sglang-llama-3-2-3b", "revision": "cr-sglang-llama-3-2-3b-590753e8"})
        assert (got.allowed, got.denial_message) == (
            False,
            "spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin",
        )

    def test_a_well_formed_pin_is_admitted_without_a_model(self) -> None:
        got = self.admit_with(
            {"name": "sglang-llama-3-2-3b", "autoSync": False, "revision": "cr-sglang-llama-3-2-3b-590753e8"}
        )
        assert (got.allowed, got.denial_message) == (True, "")
