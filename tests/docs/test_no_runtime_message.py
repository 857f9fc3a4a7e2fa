"""The ``no runtime found to support model ...`` message, exactly as the seeds
(runtime-accelerator-class-matching.md, runtime-deployment-mode-matching.md) and
troubleshoot-runtime-selection.md quote it, plus the forms ome-selection-facts.md 3.15 gives.
"""

from __future__ import annotations

import pytest
import yaml
from helpers_docs import (
    LLAMA_3_2_3B_BASEMODEL,
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_HOPPER,
    LLAMA_3_3_70B_ISVC,
    LLAMA_3_70B_ISVC,
    NS,
    QWEN2_5_7B_CBM,
    QWEN2_5_7B_ISVC,
    QWEN2_5_7B_NO_RUNTIME_MESSAGE,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_LLAMA_3_3_70B_MULTINODE,
    SRT_MISTRAL_7B_INSTRUCT,
    SRT_QWEN2_5_7B,
    catalog,
    entry,
    isvc,
    model,
    runtime,
    select,
    spec_of,
    troubleshoot_qwen_sources,
)

LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0"


def message(sources: list, service: object) -> str:
    got = select(sources, service)
    assert not got.HasField("selection")
    assert list(got.candidates) == []
    return got.no_runtime_message


class TestTroubleshootPage:
    QUOTED = QWEN2_5_7B_NO_RUNTIME_MESSAGE

    def test_quoted_message_for_qwen2_5_7b(self) -> None:
        """srt-qwen2-5-7b is counted but not listed: it passes every check, but sets no
        autoSelect: true entry."""
        assert message(troubleshoot_qwen_sources(), QWEN2_5_7B_ISVC) == self.QUOTED

    def test_quoted_message_with_the_model_size_the_agent_records(self) -> None:
        """The same with a modelParameterSize inside both runtimes' 5B-9B range."""
        sized = yaml.safe_load(QWEN2_5_7B_CBM)
        sized["spec"]["modelParameterSize"] = "7B"
        sources = [catalog(SRT_MISTRAL_7B_INSTRUCT), catalog(SRT_QWEN2_5_7B), sized]
        assert message(sources, QWEN2_5_7B_ISVC) == self.QUOTED

    def test_the_message_form_with_two_excluded_runtimes(self) -> None:
        """``... Excluded runtimes: <runtime> (<reason>); <runtime> (<reason>)``: namespaced
        runtimes first, each list newest first."""
        sources = [
            runtime("cluster-disabled", disabled=True),
            runtime("team-small", size=("500M", "2B"), namespace=NS),
            model(),
        ]
        assert message(sources, isvc()) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(1 namespace-scoped, 1 cluster-scoped). Excluded runtimes: team-small (model size 3.21B is outside supported range [500M, 2B]); "
            "cluster-disabled (runtime is disabled)"
        )

    def test_each_runtime_is_listed_with_the_first_check_it_failed(self) -> None:
        rt = runtime("rt", entry(architecture="MistralForCausalLM"), disabled=True, size=("500M", "2B"))
        assert message([rt, model()], isvc()) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
            "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: rt (runtime is disabled)"
        )

    def test_no_runtimes_at_all_ends_after_the_namespace(self) -> None:
        assert (
            message([model()], isvc())
            == "no runtime found to support model safetensors with format safetensors in namespace llama-demo"
        )

    def test_runtimes_only_in_other_namespaces_count_as_none(self) -> None:
        sources = [runtime("elsewhere", namespace="other"), model()]
        assert (
            message(sources, isvc())
            == "no runtime found to support model safetensors with format safetensors in namespace llama-demo"
        )

    def test_the_model_format_name_is_required(self) -> None:
        got = select([runtime("rt"), model(format=spec_of(""))], isvc())
        assert (got.model_error, got.no_runtime_message, got.HasField("selection")) == (
            "invalid model specification: modelFormat.name: model format name is required",
            "",
            False,
        )

    def test_a_model_without_a_format_gives_the_same_error(self) -> None:
        got = select([runtime("rt"), model(format=None)], isvc())
        assert got.model_error == "invalid model specification: modelFormat.name: model format name is required"


class TestStep2Table:
    """troubleshoot-runtime-selection.md, Step 2: "OME runs these checks in order". Each row's
    reason, for a runtime whose first failing check is that row; the runtime fails every later
    check too, so the message shows it names the *first* one."""

    PREFIX = (
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
        "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: rt ("
    )
    SERVICE = isvc(accelerator_class="nvidia-h100", deployment_mode="OMENative")

    @staticmethod
    def _runtime(first: int) -> dict:
        """A runtime failing every check from row ``first`` (1-based) on."""
        return runtime(
            "rt",
            entry(architecture="MistralForCausalLM" if first <= 4 else "LlamaForCausalLM"),
            disabled=True if first <= 1 else None,
            classes=["nvidia-a100"] if first <= 2 else ["nvidia-h100"],
            engine_mode="MultiNode" if first <= 3 else None,
            size=("500M", "2B"),
        )

    @pytest.mark.parametrize(
        ("first", "reason"),
        [
            (1, "runtime is disabled"),
            (2, "runtime does not support the required accelerator class"),
            (3, "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative"),
            (
                4,
                f"model format '{LABEL}' not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
            ),
            (5, "model size 3.21B is outside supported range [500M, 2B]"),
        ],
        ids=["disabled", "accelerator-class", "deployment-mode", "model-format", "model-size"],
    )
    def test_row(self, first: int, reason: str) -> None:
        assert message([self._runtime(first), model()], self.SERVICE) == self.PREFIX + reason + ")"

    def test_decoder_form_of_the_deployment_mode_row(self) -> None:
        rt = runtime("rt", decoder_mode="RawDeployment")
        service = isvc(deployment_mode="OMENative", decoder={"minReplicas": 1})
        assert message([rt, model()], service) == (
            self.PREFIX
            + "runtime decoder deployment mode RawDeployment does not match requested decoder deployment mode OMENative)"
        )


class TestSeedMessages:
    def test_deployment_mode_page_checked_2_runtimes(self) -> None:
        """The example runtime and a ClusterServingRuntime with no autoSelect: true entry: the
        second passes every check, so it is counted but left out of the list."""
        sources = [SRT_LLAMA_3_3_70B_MULTINODE, catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM]
        assert message(sources, LLAMA_3_70B_ISVC) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode (runtime engine "
            "deployment mode MultiNode does not match requested engine deployment mode OMENative)"
        )

    def test_accelerator_class_page_checked_1_runtimes(self) -> None:
        service = yaml.safe_load(LLAMA_3_3_70B_ISVC)
        service["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-a100"
        assert message([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
            "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: llama-3-3-70b-hopper (runtime does not support the required accelerator class)"
        )


class TestFactsForms:
    def test_compatible_runtimes_without_auto_select_are_counted_not_listed(self) -> None:
        sources = [runtime("one", entry(auto_select=False)), runtime("two", entry(auto_select=None)), model()]
        assert message(sources, isvc()) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(0 namespace-scoped, 2 cluster-scoped)"
        )

    def test_a_score_of_zero_or_less_is_counted_not_listed(self) -> None:
        negative = entry(
            format=spec_of("safetensors", "1.0.0", weight=-1),
            framework=spec_of("transformers", "4.45.0.dev0", weight=-1),
        )
        sources = [runtime("negative", negative, namespace=NS), model()]
        assert message(sources, isvc()) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
            "(1 namespace-scoped, 0 cluster-scoped)"
        )

    def test_counts_include_disabled_and_every_other_runtime(self) -> None:
        sources = [
            runtime("sr-disabled", disabled=True, namespace=NS),
            runtime("sr-no-auto", entry(auto_select=False), namespace=NS),
            runtime("csr-format", entry(format=("gguf", "1"))),
            runtime("csr-no-auto", entry(auto_select=False)),
            runtime("csr-other-ns-irrelevant", entry(auto_select=False)),
            runtime("sr-other-ns", namespace="other"),
            model(),
        ]
        assert message(sources, isvc()) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 5 runtimes "
            "(2 namespace-scoped, 3 cluster-scoped). Excluded runtimes: sr-disabled (runtime is disabled); csr-format "
            f"(model format '{LABEL}' not in supported formats: format name mismatch (model=safetensors, runtime=gguf))"
        )

    def test_the_model_is_named_by_its_format(self) -> None:
        gguf = model("my-gguf-model", format=("gguf", "1.0.0"))
        assert (
            message([gguf], isvc("my-gguf-model"))
            == "no runtime found to support model gguf with format gguf in namespace llama-demo"
        )

    def test_same_named_runtimes_are_both_listed(self) -> None:
        """Deliberate deviation: the exclusion list is keyed by kind + namespace + name (OME keys
        it by bare name, so there the ClusterServingRuntime's entry would overwrite the other)."""
        sources = [runtime("dup", disabled=True, namespace=NS), runtime("dup", size=("500M", "2B")), model()]
        assert message(sources, isvc()) == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(1 namespace-scoped, 1 cluster-scoped). Excluded runtimes: dup (runtime is disabled); dup (model size 3.21B is outside supported range [500M, 2B])"
        )

    def test_no_message_when_a_runtime_is_selected(self) -> None:
        got = select([runtime("rt"), LLAMA_3_2_3B_BASEMODEL], isvc())
        assert (got.selection.runtime.name, got.no_runtime_message) == ("rt", "")
