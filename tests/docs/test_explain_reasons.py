"""reference/kubectl-ome/runtime.md, ``explain``: the eight REASON texts (five checks and three
CLI-only texts), the verdicts, the row order (candidates in rank order, then the others:
ServingRuntimes first, each group by name) and the reasons of a row (every failing check in
canonical order, the first one primary).
"""

from __future__ import annotations

import pytest
from helpers_docs import (
    LLAMA_3_2_3B_BASEMODEL,
    NO_AUTO_SELECT_ENTRY,
    NS,
    QWEN2_5_7B_CBM,
    QWEN2_5_7B_EXPLAIN_TABLE,
    QWEN2_5_7B_ISVC,
    SRT_MISTRAL_7B_INSTRUCT,
    SRT_QWEN2_5_7B,
    catalog,
    domain_entry,
    domain_model,
    domain_runtime_spec,
    entry,
    explain,
    isvc,
    load,
    model,
    row,
    runtime,
    select,
    spec_of,
    table,
    troubleshoot_qwen_sources,
)
from ome.selector.v1 import selector_pb2
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.domain.objects import Entry
from ome_selector.rules.model_format import entry_differences, fit_model

C = selector_pb2.Check
V = selector_pb2.Verdict
LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0"
MATCHING_FORMAT = (
    "matching format safetensors is not autoSelect-enabled (a different supportedModelFormats entry on this runtime "
    "has autoSelect=true, but not the one that matches this model)"
)


def one(rt: dict, service: dict | None = None, mdl: dict | None = None) -> selector_pb2.RuntimeExplanation:
    got = explain([rt, mdl or model()], service or isvc())
    return row(got, rt["metadata"]["name"])


def summary(r: selector_pb2.RuntimeExplanation) -> tuple:
    return (
        r.verdict,
        r.reason,
        [(x.check, x.message, x.primary) for x in r.reasons],
        r.HasField("priority"),
        r.HasField("weight"),
    )


class TestTheEightReasons:
    """The "A No row shows the first check the runtime fails" table, one test per row."""

    def test_runtime_is_disabled(self) -> None:
        r = one(runtime("rt", disabled=True))
        assert summary(r) == (
            V.VERDICT_EXCLUDED,
            "runtime is disabled",
            [(C.CHECK_DISABLED, "runtime is disabled", True)],
            False,
            False,
        )

    def test_runtime_does_not_support_the_required_accelerator_class(self) -> None:
        r = one(runtime("rt", classes=["nvidia-h200"]), isvc(accelerator_class="nvidia-h100"))
        reason = "runtime does not support the required accelerator class"
        assert summary(r) == (V.VERDICT_EXCLUDED, reason, [(C.CHECK_ACCELERATOR_CLASS, reason, True)], False, False)
        assert (r.reasons[0].runtime_value, r.reasons[0].requested_value) == ("[nvidia-h200]", "[nvidia-h100]")

    @pytest.mark.parametrize(
        ("component", "runtime_kw", "isvc_kw", "reason"),
        [
            (
                "engine",
                {"engine_mode": "MultiNode"},
                {"deployment_mode": "OMENative"},
                "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative",
            ),
            (
                "decoder",
                {"decoder_mode": "OMENative"},
                {"deployment_mode": "RawDeployment", "decoder": {"minReplicas": 1}},
                "runtime decoder deployment mode OMENative does not match requested decoder deployment mode RawDeployment",
            ),
        ],
    )
    def test_deployment_mode(self, component: str, runtime_kw: dict, isvc_kw: dict, reason: str) -> None:
        r = one(runtime("rt", **runtime_kw), isvc(**isvc_kw))
        assert summary(r) == (V.VERDICT_EXCLUDED, reason, [(C.CHECK_DEPLOYMENT_MODE, reason, True)], False, False)
        want = {"engine": selector_pb2.COMPONENT_ENGINE, "decoder": selector_pb2.COMPONENT_DECODER}[component]
        assert r.reasons[0].component == want

    def test_model_format_not_in_supported_formats(self) -> None:
        r = one(runtime("rt", entry(architecture="MistralForCausalLM"), entry(format=("gguf", "1.0.0"))))
        reason = (
            f"model format '{LABEL}' not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM); "
            "format name mismatch (model=safetensors, runtime=gguf)"
        )
        assert summary(r) == (V.VERDICT_EXCLUDED, reason, [(C.CHECK_MODEL_FORMAT, reason, True)], False, False)
        assert [(m.index, list(m.differences)) for m in r.reasons[0].entry_mismatches] == [
            (0, ["architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)"]),
            (1, ["format name mismatch (model=safetensors, runtime=gguf)"]),
        ]

    def test_model_format_with_no_entries(self) -> None:
        r = one(runtime("rt", spec={"supportedModelFormats": []}))
        reason = f"model format '{LABEL}' not in supported formats: no supported formats defined"
        assert summary(r) == (V.VERDICT_EXCLUDED, reason, [(C.CHECK_MODEL_FORMAT, reason, True)], False, False)

    def test_model_size_outside_supported_range(self) -> None:
        r = one(runtime("rt", size=("500M", "2B")))
        reason = "model size 3.21B is outside supported range [500M, 2B]"
        assert summary(r) == (V.VERDICT_EXCLUDED, reason, [(C.CHECK_MODEL_SIZE, reason, True)], False, False)
        assert (r.reasons[0].runtime_value, r.reasons[0].requested_value) == ("[500M, 2B]", "3.21B")

    @pytest.mark.parametrize("auto_select", [False, None], ids=["false", "unset"])
    def test_supports_the_model_but_has_no_auto_select_entry(self, auto_select: bool | None) -> None:
        r = one(runtime("rt", entry(auto_select=auto_select)))
        assert summary(r) == (
            V.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE,
            NO_AUTO_SELECT_ENTRY,
            [(C.CHECK_AUTO_SELECT, NO_AUTO_SELECT_ENTRY, True)],
            False,
            False,
        )

    def test_matching_format_is_not_auto_select_enabled(self) -> None:
        """The matching entry sets autoSelect: false; another entry sets it to true."""
        r = one(runtime("rt", entry(auto_select=False), entry(format=("gguf", "1.0.0"))))
        assert summary(r) == (
            V.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE,
            MATCHING_FORMAT,
            [(C.CHECK_AUTO_SELECT, MATCHING_FORMAT, True)],
            False,
            False,
        )

    def test_matching_format_unset_auto_select_with_a_negative_weight(self) -> None:
        """The matching entry leaves autoSelect unset: the score counts it, and the cause is a
        negative weight; the reason is still the matching-format text."""
        negative = entry(auto_select=None, format=spec_of("safetensors", "1.0.0", weight=-5))
        r = one(runtime("rt", negative, entry(format=("gguf", "1.0.0"))))
        assert (r.verdict, r.reason) == (V.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE, MATCHING_FORMAT)

    def test_matching_format_uses_the_first_matching_entry_format_name(self) -> None:
        """Deliberate choice: ``<format>`` is the format name of the first matching entry."""
        gguf_model = model(format=("gguf", "1"))
        r = one(
            runtime("rt", entry(auto_select=False, format=("gguf", "1")), entry(format=("onnx", "1"))), mdl=gguf_model
        )
        assert r.reason == MATCHING_FORMAT.replace("format safetensors", "format gguf")

    def test_auto_select_score_is_0(self) -> None:
        negative = entry(
            format=spec_of("safetensors", "1.0.0", weight=-1),
            framework=spec_of("transformers", "4.45.0.dev0", weight=-1),
        )
        r = one(runtime("rt", negative))
        assert summary(r) == (
            V.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE,
            "auto-select score is 0",
            [(C.CHECK_SCORE, "auto-select score is 0", True)],
            False,
            False,
        )

    def test_a_yes_row(self) -> None:
        r = one(runtime("rt", entry(priority=3)))
        assert (r.verdict, r.reason, list(r.reasons), r.rank, r.score, r.priority, r.weight) == (
            V.VERDICT_CANDIDATE,
            "-",
            [],
            1,
            6,
            3,
            6,
        )


class TestFormatReasonParts:
    """troubleshoot-runtime-selection.md, Step 2: "A value that only one side sets counts as a
    mismatch, so an entry needs modelArchitecture and quantization exactly when the model has
    them" (the texts of ome-selection-facts.md 3.11)."""

    @pytest.mark.parametrize(
        ("rt_entry", "mdl", "label", "text"),
        [
            (
                entry(architecture="MistralForCausalLM"),
                model(),
                LABEL,
                "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
            ),
            (
                entry(),
                model(architecture=None),
                "mt:safetensors:1.0.0:transformers:4.45.0.dev0",
                "model has no architecture but runtime requires LlamaForCausalLM",
            ),
            (
                entry(architecture=None),
                model(),
                LABEL,
                "model has architecture LlamaForCausalLM but runtime has no architecture requirement",
            ),
            (
                entry(quantization="fp8"),
                model(quantization="int4"),
                "mt:safetensors:1.0.0:LlamaForCausalLM:int4:transformers:4.45.0.dev0",
                "quantization mismatch (model=int4, runtime=fp8)",
            ),
            (entry(quantization="fp8"), model(), LABEL, "model has no quantization but runtime requires fp8"),
            (
                entry(),
                model(quantization="fp8"),
                "mt:safetensors:1.0.0:LlamaForCausalLM:fp8:transformers:4.45.0.dev0",
                "model has quantization fp8 but runtime has no quantization requirement",
            ),
        ],
        ids=[
            "arch-differs",
            "arch-entry-only",
            "arch-model-only",
            "quant-differs",
            "quant-entry-only",
            "quant-model-only",
        ],
    )
    def test_part(self, rt_entry: dict, mdl: dict, label: str, text: str) -> None:
        r = one(runtime("rt", rt_entry), mdl=mdl)
        assert (r.verdict, r.reason) == (V.VERDICT_EXCLUDED, f"model format '{label}' not in supported formats: {text}")

    # The CRD requires modelFormat and modelFramework on every entry, so the cache refuses an
    # entry without one (model-version-matching.md: "The API requires a modelFramework on every
    # entry"). The matcher still handles such an entry, as OME's Go matcher does: its texts are
    # checked on the compiled entry.
    @pytest.mark.parametrize(
        ("rt_entry", "differences", "text"),
        [
            (
                domain_entry(framework=None),
                ("model has framework transformers but runtime has no framework requirement",),
                "model has framework transformers but runtime has no framework requirement",
            ),
            (domain_entry(format=None), (), "unknown mismatch"),
        ],
        ids=["framework-model-only", "no-model-format"],
    )
    def test_part_of_an_entry_the_api_refuses(self, rt_entry: Entry, differences: tuple[str, ...], text: str) -> None:
        mdl = domain_model()
        assert entry_differences(rt_entry, mdl) == differences
        fit = fit_model(domain_runtime_spec(rt_entry), mdl)
        assert fit.match is None
        assert fit.format_failure is not None
        assert fit.format_failure.message == f"model format '{LABEL}' not in supported formats: {text}"

    @pytest.mark.parametrize(
        ("rt_entry", "field"),
        [(entry(framework=None), "model_framework"), (entry(format=None), "model_format")],
        ids=["framework-model-only", "no-model-format"],
    )
    def test_the_cache_refuses_an_entry_without_it(self, rt_entry: dict, field: str) -> None:
        with pytest.raises(RequestError) as err:
            load(runtime("rt", rt_entry), model())
        assert err.value.code == "INVALID_ARGUMENT"
        assert err.value.violations == [
            FieldViolation(
                f"objects[0].cluster_serving_runtime.spec.supported_model_formats[0].{field}", "Required value"
            ),
        ]

    def test_every_difference_of_an_entry_joined_by_comma(self) -> None:
        rt_entry = entry(
            architecture="MistralForCausalLM",
            quantization="fp8",
            format=("safetensors", "2.0.0"),
            framework=("transformers", "4.36.0"),
        )
        r = one(runtime("rt", rt_entry))
        assert r.reason == (
            f"model format '{LABEL}' not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM), "
            "model has no quantization but runtime requires fp8, format version mismatch (model=1.0.0, runtime=2.0.0), "
            "framework version mismatch (model=4.45.0.dev0, runtime=4.36.0)"
        )


class TestOutputFields:
    def test_priority_is_1_when_the_entry_sets_none(self) -> None:
        r = one(runtime("rt", entry(priority=None)))
        assert (r.priority, r.weight) == (1, 2)

    def test_weight_leaves_out_weights_of_0_or_less(self) -> None:
        r = one(
            runtime(
                "rt",
                entry(
                    format=spec_of("safetensors", "1.0.0", weight=0),
                    framework=spec_of("transformers", "4.45.0.dev0", weight=4),
                    priority=2,
                ),
            )
        )
        assert (r.score, r.priority, r.weight) == (28, 2, 8)
        r = one(
            runtime(
                "rt",
                entry(
                    format=spec_of("safetensors", "1.0.0", weight=-1),
                    framework=spec_of("transformers", "4.45.0.dev0", weight=3),
                ),
            )
        )
        assert (r.score, r.priority, r.weight) == (2, 1, 3)

    def test_weight_looks_only_at_the_first_matching_entry(self) -> None:
        r = one(
            runtime("rt", entry(architecture="MistralForCausalLM", priority=9), entry(priority=1), entry(priority=4))
        )
        assert (r.score, r.priority, r.weight, r.supported_model_format_index) == (18, 1, 2, 1)


class TestRowOrder:
    def test_yes_rows_in_rank_order_then_no_rows_serving_runtimes_first_each_by_name(self) -> None:
        sources = [
            runtime("z-csr-yes", entry(priority=9)),
            runtime("a-csr-yes", entry(priority=1)),
            runtime("m-sr-yes", namespace=NS),
            runtime("b-csr-no", disabled=True),
            runtime("a-csr-no", entry(auto_select=False)),
            runtime("z-sr-no", disabled=True, namespace=NS),
            runtime("c-sr-no", size=("1B", "2B"), namespace=NS),
            runtime("other-namespace", namespace="elsewhere"),
            model(),
        ]
        got = explain(sources, isvc())
        assert [(r.runtime.name, r.verdict, r.rank) for r in got.runtimes] == [
            ("m-sr-yes", V.VERDICT_CANDIDATE, 1),
            ("z-csr-yes", V.VERDICT_CANDIDATE, 2),
            ("a-csr-yes", V.VERDICT_CANDIDATE, 3),
            ("c-sr-no", V.VERDICT_EXCLUDED, 0),
            ("z-sr-no", V.VERDICT_EXCLUDED, 0),
            ("a-csr-no", V.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE, 0),
            ("b-csr-no", V.VERDICT_EXCLUDED, 0),
        ]

    def test_same_name_sr_and_csr_both_get_a_row(self) -> None:
        sources = [runtime("dup", disabled=True, namespace=NS), runtime("dup", size=("1B", "2B")), model()]
        got = explain(sources, isvc())
        assert [(r.runtime.kind, r.reason) for r in got.runtimes] == [
            (selector_pb2.RUNTIME_KIND_SERVING_RUNTIME, "runtime is disabled"),
            (selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, "model size 3.21B is outside supported range [1B, 2B]"),
        ]

    def test_no_runtimes_at_all_gives_no_rows(self) -> None:
        got = explain([model()], isvc())
        assert list(got.runtimes) == []


class TestEveryFailingCheck:
    def test_all_failures_in_canonical_order_first_primary(self) -> None:
        rt = runtime(
            "rt",
            entry(architecture="MistralForCausalLM"),
            disabled=True,
            classes=["nvidia-a100"],
            engine_mode="MultiNode",
            decoder_mode="RawDeployment",
            size=("500M", "2B"),
        )
        service = isvc(accelerator_class="nvidia-h100", deployment_mode="OMENative", decoder={"minReplicas": 1})
        r = one(rt, service)
        assert [(x.check, x.component, x.message, x.primary) for x in r.reasons] == [
            (C.CHECK_DISABLED, selector_pb2.COMPONENT_UNSPECIFIED, "runtime is disabled", True),
            (
                C.CHECK_ACCELERATOR_CLASS,
                selector_pb2.COMPONENT_UNSPECIFIED,
                "runtime does not support the required accelerator class",
                False,
            ),
            (
                C.CHECK_DEPLOYMENT_MODE,
                selector_pb2.COMPONENT_ENGINE,
                "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative",
                False,
            ),
            (
                C.CHECK_DEPLOYMENT_MODE,
                selector_pb2.COMPONENT_DECODER,
                "runtime decoder deployment mode RawDeployment does not match requested decoder deployment mode OMENative",
                False,
            ),
            (
                C.CHECK_MODEL_FORMAT,
                selector_pb2.COMPONENT_UNSPECIFIED,
                f"model format '{LABEL}' not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
                False,
            ),
            (
                C.CHECK_MODEL_SIZE,
                selector_pb2.COMPONENT_UNSPECIFIED,
                "model size 3.21B is outside supported range [500M, 2B]",
                False,
            ),
        ]
        assert (r.verdict, r.reason) == (V.VERDICT_EXCLUDED, "runtime is disabled")

    def test_select_exclusions_carry_the_primary_reason_only(self) -> None:
        """selector.proto: an Exclusion holds the primary reason, without per-entry mismatches;
        ExplainRuntimes lists every failing check."""
        rt = runtime("rt", entry(architecture="MistralForCausalLM"), size=("500M", "2B"))
        got = select([rt, model()], isvc())
        primary = f"model format '{LABEL}' not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)"
        assert [(x.check, x.message, x.primary, len(x.entry_mismatches)) for x in got.exclusions[0].reasons] == [
            (C.CHECK_MODEL_FORMAT, primary, True, 0)
        ]
        explained = one(rt)
        assert [(x.check, x.primary, len(x.entry_mismatches)) for x in explained.reasons] == [
            (C.CHECK_MODEL_FORMAT, True, 1),
            (C.CHECK_MODEL_SIZE, False, 0),
        ]


class TestDocsExamples:
    def test_explain_model_llama_3_2_3b_instruct_in_team_a(self) -> None:
        """The "Examples" table of ``kubectl ome runtime explain --model ... -n team-a``."""
        sources = [
            runtime("team-llama", entry(priority=1), namespace="team-a"),
            runtime(
                "vllm-llama",
                entry(format=spec_of("safetensors", "1.0.0", weight=2), priority=2),
                inherit_from="vllm-base",
            ),
            runtime("vllm-base", entry(auto_select=None)),
            runtime("srt-llama-1b", entry(auto_select=False), size=("500M", "2B")),
            runtime("vllm-legacy", disabled=True),
            model(namespace="team-a"),
        ]
        got = explain(sources, isvc(namespace="team-a"))
        assert table(got) == [
            ("team-llama", "Namespaced", "Yes", "1", "2", "-"),
            ("vllm-llama", "Cluster", "Yes", "2", "6", "-"),
            ("srt-llama-1b", "Cluster", "No", "-", "-", "model size 3.21B is outside supported range [500M, 2B]"),
            ("vllm-base", "Cluster", "No", "-", "-", NO_AUTO_SELECT_ENTRY),
            ("vllm-legacy", "Cluster", "No", "-", "-", "runtime is disabled"),
        ]

    def test_named_runtime_selection_is_hypothetical(self) -> None:
        sources = [runtime("team-llama", namespace=NS), runtime("vllm-llama", entry(priority=2)), model()]
        plain = explain(sources, isvc())
        named = explain(sources, isvc(runtime_name="vllm-llama"))
        assert (
            table(named)
            == table(plain)
            == [
                ("team-llama", "Namespaced", "Yes", "1", "2", "-"),
                ("vllm-llama", "Cluster", "Yes", "2", "4", "-"),
            ]
        )

    def test_troubleshoot_step_3_explain(self) -> None:
        """troubleshoot-runtime-selection.md, Step 3: ``kubectl ome runtime explain --model qwen2-5-7b -n demo``."""
        got = explain(troubleshoot_qwen_sources(), QWEN2_5_7B_ISVC)
        assert table(got) == QWEN2_5_7B_EXPLAIN_TABLE

    def test_troubleshoot_step_4_patch_makes_srt_qwen2_5_7b_selectable(self) -> None:
        patched = catalog(SRT_QWEN2_5_7B)
        patched["spec"]["supportedModelFormats"][0]["autoSelect"] = True
        sources = [catalog(SRT_MISTRAL_7B_INSTRUCT), patched, QWEN2_5_7B_CBM]
        got = select(sources, QWEN2_5_7B_ISVC)
        assert list(got.warnings) == ["Runtime srt-qwen2-5-7b will be auto-selected for model qwen2-5-7b"]
        assert table(explain(sources, QWEN2_5_7B_ISVC))[0] == ("srt-qwen2-5-7b", "Cluster", "Yes", "1", "2", "-")

    def test_the_base_model_manifest_of_the_docs(self) -> None:
        got = explain([runtime("rt"), LLAMA_3_2_3B_BASEMODEL], isvc())
        assert got.model.label == LABEL
        assert (got.model.kind, got.model.namespace, got.model.name) == (
            "BaseModel",
            "llama-demo",
            "llama-3-2-3b-instruct",
        )
