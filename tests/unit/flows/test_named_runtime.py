"""A runtime named in ``spec.runtime.name``: the webhook warning, the lookup by
``spec.runtime.kind`` and its NOT_FOUND texts, a disabled runtime, and what it inherits.

Sources: runtime-accelerator-class-matching.md (the warning), reference-a-runtime-explicitly.md
("How OME resolves the name", the quoted warning), troubleshoot-runtime-selection.md ("The
runtime you named isn't found") and ome-selection-facts.md 3.16, 8.5 and 8.7.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from helpers_docs import (
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_ISVC,
    QWEN2_5_7B_CBM,
    QWEN2_5_7B_ISVC,
    SRT_LLAMA_3_2_1B_INSTRUCT,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_QWEN2_5_7B,
    catalog,
    entry,
    isvc,
    model,
    runtime,
    select,
)
from ome.selector.v1 import selector_pb2
from ome_selector.domain.errors import RequestError

SR = selector_pb2.RUNTIME_KIND_SERVING_RUNTIME
CSR = selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
H100 = "nvidia-h100"


def named_70b(runtime_name: str, **runtime_ref: Any) -> dict:
    """The accelerator page's InferenceService llama-3-3-70b (nvidia-h100), naming a runtime."""
    doc = yaml.safe_load(LLAMA_3_3_70B_ISVC)
    doc["spec"]["runtime"] = {"name": runtime_name, **runtime_ref}
    return doc


class TestWebhookWarning:
    QUOTED = (
        'runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" '
        "(runtime srt-llama-3-3-70b-instruct does not support model : runtime does not support the required accelerator class); "
        "proceeding because the runtime was named explicitly"
    )

    def test_quoted_warning_for_a_runtime_without_classes(self) -> None:
        got = select([catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], named_70b("srt-llama-3-3-70b-instruct"))
        assert list(got.warnings) == [self.QUOTED]
        assert (got.selection.runtime.kind, got.selection.runtime.name, got.selection.mode, got.runtime_error) == (
            CSR,
            "srt-llama-3-3-70b-instruct",
            selector_pb2.SELECTION_MODE_NAMED,
            "",
        )
        assert [(r.check, r.message, r.primary) for r in got.selection.reasons] == [
            (selector_pb2.CHECK_ACCELERATOR_CLASS, "runtime does not support the required accelerator class", True)
        ]

    def test_no_warning_once_the_runtime_lists_the_class(self) -> None:
        fixed = catalog(SRT_LLAMA_3_3_70B_INSTRUCT)
        fixed["spec"]["acceleratorRequirements"] = {"acceleratorClasses": [H100, "nvidia-h200"]}
        got = select([fixed, LLAMA_3_3_70B_CBM], named_70b("srt-llama-3-3-70b-instruct"))
        assert (got.selection.runtime.name, list(got.warnings), list(got.selection.reasons)) == (
            "srt-llama-3-3-70b-instruct",
            [],
            [],
        )

    def test_reference_guide_quoted_warning_for_a_format_mismatch(self) -> None:
        """reference-a-runtime-explicitly.md: the model records framework 4.46.0."""
        mdl = model("llama-3-2-1b-instruct", namespace=None, framework=("transformers", "4.46.0"), size=None)
        got = select(
            [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), mdl],
            isvc("llama-3-2-1b-instruct", name="llama-3-2-1b-instruct", runtime_name="srt-llama-3-2-1b-instruct"),
        )
        assert list(got.warnings) == [
            'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-1b-instruct" (runtime srt-llama-3-2-1b-instruct does not '
            "support model safetensors: model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0' not in supported formats: "
            "framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)); proceeding because the runtime was named explicitly"
        ]

    def test_a_runtime_that_declares_the_model_gives_no_warning_even_without_auto_select(self) -> None:
        mdl = model("llama-3-2-1b-instruct", namespace=None, size=None)
        got = select(
            [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), mdl],
            isvc("llama-3-2-1b-instruct", runtime_name="srt-llama-3-2-1b-instruct"),
        )
        assert (got.selection.runtime.name, list(got.warnings), got.selection.supported_model_format_index) == (
            "srt-llama-3-2-1b-instruct",
            [],
            0,
        )

    def test_a_named_runtime_skips_auto_selection(self) -> None:
        sources = [
            runtime("better", entry(priority=9), namespace="llama-demo"),
            runtime("chosen", entry(auto_select=False)),
            model(),
        ]
        got = select(sources, isvc(runtime_name="chosen"))
        assert (got.selection.runtime.name, list(got.candidates), list(got.exclusions), list(got.warnings)) == (
            "chosen",
            [],
            [],
            [],
        )


class TestLookupBySpecRuntimeKind:
    """reference-a-runtime-explicitly.md, "How OME resolves the name"."""

    @staticmethod
    def _sources(sr: bool, csr: bool) -> list:
        out: list = [model()]
        if sr:
            out.append(runtime("shared-name", namespace="llama-demo"))
        if csr:
            out.append(runtime("shared-name"))
        return out

    @pytest.mark.parametrize(
        ("kind", "sr", "csr", "found"),
        [
            (None, True, True, CSR),  # the default, ClusterServingRuntime: the CSR first
            (None, True, False, SR),  # then a ServingRuntime in the namespace
            (None, False, True, CSR),
            ("ClusterServingRuntime", True, True, CSR),
            ("ClusterServingRuntime", True, False, SR),
            ("ServingRuntime", True, True, SR),  # only a ServingRuntime in the namespace
            ("ServingRuntime", True, False, SR),
            ("", True, True, SR),  # an empty kind (no defaulting): the namespace first
            ("", False, True, CSR),
        ],
    )
    def test_lookup(self, kind: str | None, sr: bool, csr: bool, found: int) -> None:
        got = select(self._sources(sr, csr), isvc(runtime_name="shared-name", runtime_kind=kind))
        assert (got.selection.runtime.kind, got.selection.runtime.name) == (found, "shared-name")

    def test_not_found(self) -> None:
        with pytest.raises(RequestError) as caught:
            select([catalog(SRT_QWEN2_5_7B), QWEN2_5_7B_CBM], _named_qwen("srt-qwen2-5-7b-missing"))
        assert (caught.value.code, caught.value.message) == (
            "NOT_FOUND",
            "runtime srt-qwen2-5-7b-missing not found in namespace demo or at cluster scope",
        )

    def test_quoted_not_found_text(self) -> None:
        with pytest.raises(RequestError) as caught:
            select([QWEN2_5_7B_CBM], _named_qwen("srt-qwen2-5-7b"))
        assert (caught.value.code, caught.value.message) == (
            "NOT_FOUND",
            "runtime srt-qwen2-5-7b not found in namespace demo or at cluster scope",
        )

    def test_quoted_not_found_text_for_kind_serving_runtime(self) -> None:
        """The cluster has the ClusterServingRuntime, but kind: ServingRuntime looks only in demo."""
        with pytest.raises(RequestError) as caught:
            select([catalog(SRT_QWEN2_5_7B), QWEN2_5_7B_CBM], _named_qwen("srt-qwen2-5-7b", kind="ServingRuntime"))
        assert (caught.value.code, caught.value.message) == (
            "NOT_FOUND",
            "ServingRuntime srt-qwen2-5-7b not found in namespace demo",
        )

    def test_a_serving_runtime_of_another_namespace_is_not_found(self) -> None:
        with pytest.raises(RequestError) as caught:
            select([runtime("team-rt", namespace="team-a"), model()], isvc(runtime_name="team-rt"))
        assert (caught.value.code, caught.value.message) == (
            "NOT_FOUND",
            "runtime team-rt not found in namespace llama-demo or at cluster scope",
        )

    def test_found_named_runtime_for_the_troubleshoot_patch(self) -> None:
        got = select([catalog(SRT_QWEN2_5_7B), QWEN2_5_7B_CBM], _named_qwen("srt-qwen2-5-7b"))
        assert (got.selection.runtime.name, list(got.warnings)) == ("srt-qwen2-5-7b", [])


def _named_qwen(name: str, kind: str | None = None) -> dict:
    doc = yaml.safe_load(QWEN2_5_7B_ISVC)
    doc["spec"]["runtime"] = {"name": name}
    if kind is not None:
        doc["spec"]["runtime"]["kind"] = kind
    return doc


class TestDisabledNamedRuntime:
    def test_cluster_scoped(self) -> None:
        got = select([runtime("off", disabled=True), model()], isvc(runtime_name="off"))
        assert (got.runtime_error, got.HasField("selection"), list(got.warnings)) == (
            "cluster-scoped runtime off is disabled",
            False,
            [],
        )

    def test_namespace_scoped(self) -> None:
        got = select(
            [runtime("off", disabled=True, namespace="llama-demo"), model()],
            isvc(runtime_name="off", runtime_kind="ServingRuntime"),
        )
        assert (got.runtime_error, got.HasField("selection")) == ("namespace-scoped runtime off is disabled", False)

    def test_disabled_is_checked_even_without_a_model(self) -> None:
        got = select([runtime("off", disabled=True)], isvc(None, runtime_name="off"))
        assert got.runtime_error == "cluster-scoped runtime off is disabled"

    def test_a_child_of_a_disabled_profile_is_disabled_when_named_not_for_auto_selection(self) -> None:
        profile = runtime("profile", entry(auto_select=False), disabled=True)
        child = runtime("child", inherit_from="profile")
        sources = [profile, child, model()]
        assert select(sources, isvc()).selection.runtime.name == "child"
        assert select(sources, isvc(runtime_name="child")).runtime_error == "cluster-scoped runtime child is disabled"

    def test_disabled_false_on_the_child_overrides_the_parent(self) -> None:
        sources = [runtime("profile", disabled=True), runtime("child", inherit_from="profile", disabled=False), model()]
        got = select(sources, isvc(runtime_name="child"))
        assert (got.runtime_error, got.selection.runtime.name, list(got.selection.inheritance_chain)) == (
            "",
            "child",
            ["profile", "child"],
        )


class TestInheritedAcceleratorClasses:
    """Auto-selection reads a runtime's own classes; a named runtime is checked with what it
    inherits (runtime-accelerator-class-matching.md, "The matching rule")."""

    @staticmethod
    def _sources() -> list:
        profile = runtime(
            "hopper-profile", classes=[H100, "nvidia-h200"], disabled=True, spec={"supportedModelFormats": []}
        )
        child = runtime(
            "llama-hopper",
            entry(framework=("transformers", "4.47.0.dev0")),
            inherit_from="hopper-profile",
            disabled=False,
        )
        return [profile, child, LLAMA_3_3_70B_CBM]

    def test_auto_selection_ignores_inherited_classes(self) -> None:
        got = select(self._sources(), LLAMA_3_3_70B_ISVC)
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: hopper-profile (runtime is disabled); "
            "llama-hopper (runtime does not support the required accelerator class)"
        )

    def test_a_named_runtime_counts_inherited_classes(self) -> None:
        got = select(self._sources(), named_70b("llama-hopper"))
        assert (got.selection.runtime.name, list(got.warnings), list(got.selection.inheritance_chain)) == (
            "llama-hopper",
            [],
            ["hopper-profile", "llama-hopper"],
        )

    def test_a_named_runtime_with_an_unlisted_class_warns(self) -> None:
        service = named_70b("llama-hopper")
        service["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-a100"
        got = select(self._sources(), service)
        assert list(got.warnings) == [
            'runtime "llama-hopper" does not declare support for model "llama-3-3-70b-instruct" (runtime llama-hopper does not support model : '
            "runtime does not support the required accelerator class); proceeding because the runtime was named explicitly"
        ]

    def test_without_spec_model_the_class_check_is_skipped(self) -> None:
        service = named_70b("srt-llama-3-3-70b-instruct")
        del service["spec"]["model"]
        got = select([catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], service)
        assert (got.selection.runtime.name, list(got.warnings), got.HasField("model")) == (
            "srt-llama-3-3-70b-instruct",
            [],
            False,
        )


class TestOtherNamedRuntimeWarnings:
    def test_size_and_format_failures_are_advisory(self) -> None:
        got = select([runtime("small", size=("500M", "2B")), model()], isvc(runtime_name="small"))
        assert list(got.warnings) == [
            'runtime "small" does not declare support for model "llama-3-2-3b-instruct" (runtime small does not support model safetensors: '
            "model size 3.21B is outside supported range [500M, 2B]); proceeding because the runtime was named explicitly"
        ]

    def test_a_broken_inheritance_chain_is_a_runtime_error(self) -> None:
        got = select(
            [runtime("sglang-llama-3-2-3b", inherit_from="sglang-profile"), model()],
            isvc(runtime_name="sglang-llama-3-2-3b"),
        )
        assert (got.runtime_error, got.HasField("selection")) == (
            'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])',
            False,
        )


class TestModelIsCheckedBeforeTheNamedRuntime:
    """ome-selection-facts.md: the webhook looks the model up first (5.2 step 4), the controller
    resolves the base model before the runtime (6.1), and ValidateRuntime validates the model
    before it fetches the runtime and checks ``disabled`` (3.16 steps 1-3)."""

    def test_unknown_model_and_missing_runtime(self) -> None:
        with pytest.raises(RequestError) as caught:
            select([model()], isvc("nope", runtime_name="missing"))
        assert (caught.value.code, caught.value.message) == (
            "NOT_FOUND",
            'referenced model "nope" not found in namespace "llama-demo": ensure a BaseModel exists in this namespace '
            "or a ClusterBaseModel exists cluster-wide with this name",
        )

    def test_unknown_model_and_disabled_runtime(self) -> None:
        with pytest.raises(RequestError) as caught:
            select([runtime("off", disabled=True), model()], isvc("nope", runtime_name="off"))
        assert caught.value.code == "NOT_FOUND"

    def test_model_without_format_and_disabled_runtime(self) -> None:
        got = select([runtime("off", disabled=True), model(format=None)], isvc(runtime_name="off"))
        assert got.model_error == "invalid model specification: modelFormat.name: model format name is required"

    def test_model_without_format_and_enabled_runtime(self) -> None:
        got = select([runtime("on"), model(format=None)], isvc(runtime_name="on"))
        assert (got.model_error, got.runtime_error, got.HasField("selection")) == (
            "invalid model specification: modelFormat.name: model format name is required",
            "",
            False,
        )
