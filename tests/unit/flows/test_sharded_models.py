"""``distribution: Sharded`` models through every RPC that matches a model.

* base-models.md, "Distribution": "``PerNode``, the default, puts a full copy on each selected
  node; leave the field out to get it. ``Sharded`` is for loading the model in chunks from a model
  cache provider, which this release can't configure yet. The admission webhook rejects
  InferenceServices that use a ``Sharded`` model, even when they name a runtime. The message
  includes ``no model cache provider is configured for sharded model loading``." And "How runtimes
  match the model": a named runtime is used even if it does not declare the model, "``Sharded``
  models are the exception".
* troubleshoot-runtime-selection.md, "The message mentions a model cache provider": "OME can't
  serve such models yet, even with a runtime you name."
* reference-a-runtime-explicitly.md, "The webhook rejects the InferenceService": the table row
  ``no model cache provider is configured for sharded model loading``.
* serving-runtimes.md, "Supported model formats": ``modelCacheProviders`` "Caches to load
  ``Sharded`` models from. None can be configured yet, so leave it out".
* ome-selection-facts.md 8.9 and 8.5, where the pages are silent: a Sharded model scores only
  against entries with the configured provider, so every entry fails with the text first in its
  part of the model-format reason; a named runtime's failure is an error (webhook denial,
  ``RuntimeValidationError``), never the advisory.
* ome-docs/reference/api/ome.v1beta1.md, ``Distribution``: allowed values ``PerNode``, ``Sharded``.

Expected messages are literals.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers_docs import (
    LLAMA_3_2_1B_CBM,
    LLAMA_3_2_1B_ISVC,
    QWEN2_5_7B_CBM,
    QWEN2_5_7B_ISVC,
    SRT_LLAMA_3_2_1B_INSTRUCT,
    SRT_MISTRAL_7B_INSTRUCT,
    SRT_QWEN2_5_7B,
    catalog,
    explain,
    inference_service,
    load,
    select,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cache import manifests
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.rpc import lifecycle, selection
from test_admission_operations import CREATE, UPDATE, admit, verdict, violations

SHARDED = "no model cache provider is configured for sharded model loading"
LLAMA_LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0"
QWEN_LABEL = "mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1"


def distributed(text: str, distribution: str | None = "Sharded") -> dict[str, Any]:
    out: dict[str, Any] = yaml.safe_load(text)
    if distribution is not None:
        out["spec"]["distribution"] = distribution
    return out


def auto(service: str) -> dict[str, Any]:
    out: dict[str, Any] = copy.deepcopy(yaml.safe_load(service))
    out["spec"].pop("runtime", None)
    return out


NAMED = [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), distributed(LLAMA_3_2_1B_CBM)]
NAMED_ERROR = (
    "runtime srt-llama-3-2-1b-instruct does not support model safetensors: model format "
    f"'{LLAMA_LABEL}' not in supported formats: {SHARDED}"
)
QWEN = [catalog(SRT_MISTRAL_7B_INSTRUCT), catalog(SRT_QWEN2_5_7B), distributed(QWEN2_5_7B_CBM)]
QWEN_NO_RUNTIME = (
    "no runtime found to support model safetensors with format safetensors in namespace demo. Checked 2 runtimes "
    "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-mistral-7b-instruct (model format "
    f"'{QWEN_LABEL}' not in supported formats: {SHARDED}, architecture mismatch (model=Qwen2ForCausalLM, "
    "runtime=MistralForCausalLM), framework version mismatch (model=4.40.1, runtime=4.36.0)); srt-qwen2-5-7b "
    f"(model format '{QWEN_LABEL}' not in supported formats: {SHARDED})"
)


class TestAdmission:
    def test_denied_even_when_it_names_a_runtime(self) -> None:
        """The runtime declares the model, so a PerNode copy is admitted with no warning."""
        got = admit(NAMED, CREATE, LLAMA_3_2_1B_ISVC)
        denial = f"runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: {NAMED_ERROR}"
        assert verdict(got) == (False, "ADMISSION_PATH_NAMED_RUNTIME", denial, [])
        assert SHARDED in got.denial_message
        per_node = [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), distributed(LLAMA_3_2_1B_CBM, "PerNode")]
        assert verdict(admit(per_node, CREATE, LLAMA_3_2_1B_ISVC)) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])

    def test_denied_on_update(self) -> None:
        got = admit(NAMED, UPDATE, LLAMA_3_2_1B_ISVC, LLAMA_3_2_1B_ISVC)
        assert not got.allowed and SHARDED in got.denial_message

    def test_a_failed_check_is_a_denial_not_the_advisory(self) -> None:
        """The named runtime also fails the size check: for a PerNode model that is the warning;
        for a Sharded one the first failure, the format, is the denial."""
        small = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        small["spec"]["modelSizeRange"] = {"min": "500M", "max": "1B"}
        model = distributed(LLAMA_3_2_1B_CBM)
        model["spec"]["modelParameterSize"] = "1.24B"
        got = admit([small, model], CREATE, LLAMA_3_2_1B_ISVC)
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_NAMED_RUNTIME",
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: runtime "
            "srt-llama-3-2-1b-instruct does not support model safetensors: model format "
            f"'{LLAMA_LABEL}' not in supported formats: {SHARDED}",
            [],
        )
        model["spec"].pop("distribution")
        assert verdict(admit([small, model], CREATE, LLAMA_3_2_1B_ISVC)) == (
            True,
            "ADMISSION_PATH_NAMED_RUNTIME",
            "",
            [
                'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-1b-instruct" '
                "(runtime srt-llama-3-2-1b-instruct does not support model safetensors: model size 1.24B is "
                "outside supported range [500M, 1B]); proceeding because the runtime was named explicitly"
            ],
        )

    def test_an_accelerator_class_failure_is_a_denial_too(self) -> None:
        service = yaml.safe_load(LLAMA_3_2_1B_ISVC)
        service["spec"]["acceleratorSelector"] = {"acceleratorClass": "nvidia-h100"}
        got = admit(NAMED, CREATE, service)
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_NAMED_RUNTIME",
            "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: runtime "
            "srt-llama-3-2-1b-instruct does not support model : runtime does not support the required accelerator class",
            [],
        )

    def test_auto_selection_denies_with_the_text_for_each_runtime(self) -> None:
        got = admit(QWEN, CREATE, QWEN2_5_7B_ISVC)
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_AUTO_SELECT",
            "no supporting runtime found for model qwen2-5-7b and engine does not have complete runner configuration: "
            + QWEN_NO_RUNTIME,
            [],
        )

    def test_model_cache_providers_have_no_effect(self) -> None:
        """serving-runtimes.md: "None can be configured yet"."""
        listing = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        listing["spec"]["supportedModelFormats"][0]["modelCacheProviders"] = ["DragonFly"]
        assert admit([listing, distributed(LLAMA_3_2_1B_CBM)], CREATE, LLAMA_3_2_1B_ISVC).denial_message == (
            f"runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: {NAMED_ERROR}"
        )
        per_node = [listing, distributed(LLAMA_3_2_1B_CBM, None)]
        assert verdict(admit(per_node, CREATE, LLAMA_3_2_1B_ISVC)) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])


class TestSelection:
    def test_no_runtime_found(self) -> None:
        got = select(QWEN, QWEN2_5_7B_ISVC)
        assert got.no_runtime_message == QWEN_NO_RUNTIME
        assert not got.HasField("selection") and list(got.candidates) == []
        assert got.exclusion_summary.text == "0/2 runtimes are candidates: 2 model format"

    def test_per_node_is_the_default(self) -> None:
        """The troubleshoot example's fixed runtime: auto-selected for a PerNode model."""
        fixed = catalog(SRT_QWEN2_5_7B)
        fixed["spec"]["supportedModelFormats"][0]["autoSelect"] = True
        for distribution in (None, "PerNode"):
            got = select([fixed, distributed(QWEN2_5_7B_CBM, distribution)], QWEN2_5_7B_ISVC)
            assert (got.selection.runtime.name, got.no_runtime_message) == ("srt-qwen2-5-7b", "")
        got = select([fixed, distributed(QWEN2_5_7B_CBM)], QWEN2_5_7B_ISVC)
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace demo. Checked 1 "
            f"runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: srt-qwen2-5-7b (model format "
            f"'{QWEN_LABEL}' not in supported formats: {SHARDED})"
        )

    def test_a_named_runtime_is_not_used(self) -> None:
        got = select(NAMED, LLAMA_3_2_1B_ISVC)
        assert (got.runtime_error, got.HasField("selection"), list(got.warnings)) == (NAMED_ERROR, False, [])

    def test_a_runtime_without_entries(self) -> None:
        empty = catalog(SRT_LLAMA_3_2_1B_INSTRUCT)
        empty["spec"]["supportedModelFormats"] = []
        got = select([empty, distributed(LLAMA_3_2_1B_CBM)], LLAMA_3_2_1B_ISVC)
        assert got.runtime_error == (
            "runtime srt-llama-3-2-1b-instruct does not support model safetensors: model format "
            f"'{LLAMA_LABEL}' not in supported formats: no supported formats defined"
        )

    def test_explain_rows(self) -> None:
        got = explain(QWEN, QWEN2_5_7B_ISVC)
        rows = {row.runtime.name: row for row in got.runtimes}
        assert rows["srt-qwen2-5-7b"].reason == f"model format '{QWEN_LABEL}' not in supported formats: {SHARDED}"
        assert [list(m.differences) for m in rows["srt-mistral-7b-instruct"].reasons[0].entry_mismatches] == [
            [
                SHARDED,
                "architecture mismatch (model=Qwen2ForCausalLM, runtime=MistralForCausalLM)",
                "framework version mismatch (model=4.40.1, runtime=4.36.0)",
            ]
        ]

    def test_an_inline_model_spec(self) -> None:
        request = pb.SelectRuntimeRequest(inference_service=inference_service(QWEN2_5_7B_ISVC))
        request.model_spec.model_format.name = "safetensors"
        request.model_spec.distribution = "Sharded"
        got = selection.select_runtime(load(catalog(SRT_QWEN2_5_7B)).snapshot, request)
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace demo. Checked 1 "
            "runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: srt-qwen2-5-7b (model format "
            f"'mt:safetensors' not in supported formats: {SHARDED}, model has no architecture but runtime requires "
            "Qwen2ForCausalLM, model has no format version but runtime requires 1.0.0, model has no framework but "
            "runtime requires transformers)"
        )
        request.model_spec.distribution = "Striped"
        with pytest.raises(RequestError) as error:
            selection.select_runtime(load(catalog(SRT_QWEN2_5_7B)).snapshot, request)
        assert violations(error) == [
            FieldViolation(
                "model_spec.distribution", 'Unsupported value: "Striped": supported values: "PerNode", "Sharded"'
            )
        ]

    def test_an_inline_model_spec_for_explain(self) -> None:
        request = pb.ExplainRuntimesRequest(inference_service=inference_service(QWEN2_5_7B_ISVC))
        request.model_spec.model_format.name = "safetensors"
        request.model_spec.distribution = ""
        with pytest.raises(RequestError) as error:
            selection.explain_runtimes(load(catalog(SRT_QWEN2_5_7B)).snapshot, request)
        assert violations(error) == [
            FieldViolation("model_spec.distribution", 'Unsupported value: "": supported values: "PerNode", "Sharded"')
        ]


class TestReconcile:
    def test_a_named_runtime_is_a_validation_error_not_an_advisory(self) -> None:
        """facts 8.5: "anything else (disabled, broken chain, Sharded+incompatible) → Warning
        RuntimeValidationError"; the workload is left as it is and the reconcile is retried."""
        request = pb.ReconcileInferenceServiceRequest(inference_service=inference_service(LLAMA_3_2_1B_ISVC))
        got = lifecycle.reconcile_inference_service(load(*NAMED).snapshot, request)
        assert [(e.type, e.reason, e.message) for e in got.events] == [
            (
                "Warning",
                "RuntimeValidationError",
                f"Runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: {NAMED_ERROR}",
            )
        ]
        assert (got.requeue, got.workload_untouched, got.HasField("selection"), got.HasField("runtime_ready")) == (
            True,
            True,
            False,
            False,
        )

    def test_auto_selection_finds_no_runtime(self) -> None:
        request = pb.ReconcileInferenceServiceRequest(inference_service=inference_service(QWEN2_5_7B_ISVC))
        got = lifecycle.reconcile_inference_service(load(*QWEN).snapshot, request)
        assert (got.runtime_ready.status, got.runtime_ready.reason, got.runtime_ready.message) == (
            "False",
            "RuntimeNotFound",
            QWEN_NO_RUNTIME,
        )


class TestTheField:
    def test_the_loader_reads_it(self, tmp_path: Any) -> None:
        path = tmp_path / "models.yaml"
        docs = [distributed(QWEN2_5_7B_CBM), distributed(LLAMA_3_2_1B_CBM, "PerNode")]
        path.write_text(yaml.safe_dump_all(docs))
        result = manifests.load_manifests([str(path)])
        assert (result.errors, result.warnings) == ([], [])
        assert [o.cluster_base_model.spec.distribution for o in result.objects] == ["Sharded", "PerNode"]

    def test_a_value_outside_the_enum_rejects_the_model(self, tmp_path: Any) -> None:
        path = tmp_path / "models.yaml"
        path.write_text(yaml.safe_dump(distributed(QWEN2_5_7B_CBM, "sharded")))
        result = manifests.load_manifests([str(path)])
        assert result.errors == [
            f"{path}: document 0: invalid ClusterBaseModel qwen2-5-7b: spec.distribution: "
            'Unsupported value: "sharded": supported values: "PerNode", "Sharded"'
        ]
