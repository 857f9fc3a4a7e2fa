"""Per-check table tests, in the shape of kube-scheduler's ``node_name_test.go``: for each check
of ``checks.py`` (and the helpers the checks and the explain rows are built from) one table of
named cases, small inputs -> the whole expected answer, compared with ``==``.

Inputs are written as the docs write manifests (camelCase dicts), turned into protos, given the
CRD defaults (``ingest.apply_defaults``) and compiled with ``ingest.compile_spec`` /
``compile_model`` / ``compile_request``, so a case reads like the docs' YAML. Every expected
message is a literal quoted from a docs page, named in the case id or in a comment beside it:

- AC   = reference/matching/runtime-accelerator-class-matching.md
- DM   = reference/matching/runtime-deployment-mode-matching.md
- MV   = reference/matching/model-version-matching.md
- MS   = reference/matching/model-size-range-matching.md
- SC   = reference/matching/runtime-selection-scoring.md
- DP   = reference/matching/diffusion-pipeline-runtime-matching.md
- TS   = guides/deploy-models/troubleshoot-runtime-selection.md
- KR   = reference/kubectl-ome/runtime.md
- FACTS = ../shared/reference/ome-selection-facts.md (what the docs leave open; section given)

Nothing here computes an expected value from the code under test: the expectations are literals.
"""

from __future__ import annotations

from typing import Any

import pytest
from google.protobuf import json_format
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache import ingest
from ome_selector.domain import objects as d
from ome_selector.rules import (
    accelerator_class,
    auto_select,
    checks,
    deployment_mode,
    disabled,
    model_format,
    model_size,
    scoring,
)
from ome_selector.rules.results import Check, EntryMismatch, Failure

# ---------------------------------------------------------------------------------------------
# builders (inputs only)

NS = "llama-demo"

# MV: the BaseModel llama-3-2-3b-instruct (format safetensors 1.0.0, framework transformers
# 4.45.0.dev0, LlamaForCausalLM, 3.21B).
MODEL: dict[str, Any] = {
    "modelArchitecture": "LlamaForCausalLM",
    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
    "modelFramework": {"name": "transformers", "version": "4.45.0.dev0"},
    "modelParameterSize": "3.21B",
}
MODEL_LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0"

# MV: the entry of the catalog runtime srt-llama-3-2-3b-instruct, with autoSelect: true.
ENTRY: dict[str, Any] = {
    "modelFramework": {"name": "transformers", "version": "4.45.0.dev0"},
    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
    "modelArchitecture": "LlamaForCausalLM",
    "autoSelect": True,
}

_UNSET = object()


def changed(base: dict[str, Any], **changes: Any) -> dict[str, Any]:
    """A copy of ``base`` with top-level fields replaced; ``_UNSET`` removes a field."""
    out = {k: v for k, v in base.items()}
    for key, value in changes.items():
        if value is _UNSET:
            out.pop(key, None)
        else:
            out[key] = value
    return out


def spec(metadata_annotations: dict[str, str] | None = None, **fields: Any) -> d.Compiled:
    """A ClusterServingRuntime spec (camelCase dict fields) with the CRD defaults, compiled."""
    metadata: dict[str, Any] = {"name": "rt"}
    if metadata_annotations:
        metadata["annotations"] = metadata_annotations
    message = json_format.ParseDict({"metadata": metadata, "spec": fields}, types_pb2.ClusterServingRuntime())
    defaulted = ingest.apply_defaults(cache_pb2.CacheObject(cluster_serving_runtime=message))
    return ingest.compile_spec(defaulted.cluster_serving_runtime.spec)


def runtime_of(*entries: dict[str, Any], **fields: Any) -> d.Compiled:
    """``spec`` with ``supportedModelFormats: entries``."""
    return spec(supportedModelFormats=list(entries), **fields)


def model_of(fields: dict[str, Any] = MODEL) -> d.Model:
    """A BaseModel spec with the CRD defaults, compiled."""
    message = json_format.ParseDict(
        {"metadata": {"name": "llama-3-2-3b-instruct", "namespace": NS}, "spec": fields}, types_pb2.BaseModel()
    )
    defaulted = ingest.apply_defaults(cache_pb2.CacheObject(base_model=message))
    return ingest.compile_model("BaseModel", NS, "llama-3-2-3b-instruct", defaulted.base_model.spec)


def request_of(isvc_spec: dict[str, Any], annotations: dict[str, str] | None = None) -> d.Request:
    """An InferenceService in llama-demo, compiled to its request."""
    metadata: dict[str, Any] = {"name": "llama-3-3-70b", "namespace": NS}
    if annotations:
        metadata["annotations"] = annotations
    isvc = json_format.ParseDict({"metadata": metadata, "spec": isvc_spec}, types_pb2.InferenceService())
    return ingest.compile_request(isvc)


def first_entry(entry: dict[str, Any]) -> d.Entry:
    """One compiled supportedModelFormats entry."""
    return runtime_of(entry).entries[0]


def pipeline(fields: dict[str, Any]) -> types_pb2.DiffusionPipelineSpec:
    return json_format.ParseDict(fields, types_pb2.DiffusionPipelineSpec())


MODEL_70B = {"name": "llama-3-3-70b-instruct"}


def with_class(name: str) -> dict[str, Any]:
    """AC: the example InferenceService naming ``name`` in ``spec.acceleratorSelector``."""
    return {"model": MODEL_70B, "acceleratorSelector": {"acceleratorClass": name}, "engine": {"minReplicas": 1}}


def mode(value: str) -> dict[str, Any]:
    """``{annotations: {ome.io/deploymentMode: value}}`` of a component."""
    return {"annotations": {"ome.io/deploymentMode": value}}


AC_REASON = "runtime does not support the required accelerator class"  # AC, "Where a rejection shows up"
HOPPER = ["nvidia-h100", "nvidia-h200"]


# ---------------------------------------------------------------------------------------------
# the check order (TS, Step 2: "OME runs these checks in order")


def test_checks_run_in_the_documented_order() -> None:
    assert checks.CHECKS == (
        disabled.check_disabled,
        accelerator_class.check_accelerator_class,
        deployment_mode.check_deployment_mode,
        model_format.check_model_format,
        model_size.check_model_size,
    )


# ---------------------------------------------------------------------------------------------
# check_disabled (TS Step 2 and KR: "runtime is disabled" — "The runtime sets disabled: true")

DISABLED = Failure(Check.DISABLED, "runtime is disabled", runtime_value="true", requested_value="false")

DISABLED_CASES = [
    pytest.param({}, request_of({"model": MODEL_70B}), (), id="disabled unset passes"),
    pytest.param({"disabled": False}, request_of({"model": MODEL_70B}), (), id="disabled false passes"),
    pytest.param(
        {"disabled": True},
        request_of({"model": MODEL_70B}),
        (DISABLED,),
        id="TS/KR: disabled true -> runtime is disabled",
    ),
    pytest.param({"disabled": True}, None, (DISABLED,), id="disabled true without a request (explain --model)"),
]


@pytest.mark.parametrize(("fields", "request_", "want"), DISABLED_CASES)
def test_check_disabled(fields: dict[str, Any], request_: d.Request | None, want: tuple[Failure, ...]) -> None:
    compiled = runtime_of(ENTRY, **fields)
    fit = model_format.fit_model(compiled, model_of())
    assert disabled.check_disabled(compiled, fit, request_) == want


# ---------------------------------------------------------------------------------------------
# check_accelerator_class (AC, "The matching rule" table and the bullets under it)

ACCELERATOR_CASES = [
    pytest.param(HOPPER, None, (), id="no request (explain --model): skipped"),
    pytest.param(
        [],
        request_of({"acceleratorSelector": {"acceleratorClass": "nvidia-h100"}, "engine": {}}),
        (),
        id="AC since v1.3: no spec.model skips the check",
    ),
    pytest.param([], request_of({"model": MODEL_70B}), (), id="AC: no class, runtime lists none -> candidate"),
    pytest.param(HOPPER, request_of({"model": MODEL_70B}), (), id="AC: no class, any list -> candidate"),
    pytest.param(HOPPER, request_of(with_class("nvidia-h100")), (), id="AC: nvidia-h100 in [h100 h200] -> candidate"),
    pytest.param(
        [],
        request_of(with_class("nvidia-h100")),
        (Failure(Check.ACCELERATOR_CLASS, AC_REASON, runtime_value="[]", requested_value="[nvidia-h100]"),),
        id="AC: nvidia-h100, runtime lists none -> rejected",
    ),
    pytest.param(
        HOPPER,
        request_of(with_class("nvidia-a100")),
        (
            Failure(
                Check.ACCELERATOR_CLASS,
                AC_REASON,
                runtime_value="[nvidia-h100 nvidia-h200]",
                requested_value="[nvidia-a100]",
            ),
        ),
        id="AC: nvidia-a100 not in [h100 h200] -> rejected",
    ),
    pytest.param(
        HOPPER,
        request_of(
            {
                "model": MODEL_70B,
                "engine": {"acceleratorOverride": {"acceleratorClass": "nvidia-h100"}},
                "decoder": {"acceleratorOverride": {"acceleratorClass": "nvidia-h200"}},
            }
        ),
        (),
        id="AC: engine h100 + decoder h200, subset of [h100 h200] -> candidate",
    ),
    pytest.param(
        HOPPER,
        request_of(
            {
                "model": MODEL_70B,
                "engine": {"acceleratorOverride": {"acceleratorClass": "nvidia-h100"}},
                "decoder": {"acceleratorOverride": {"acceleratorClass": "nvidia-a100"}},
            }
        ),
        (
            Failure(
                Check.ACCELERATOR_CLASS,
                AC_REASON,
                runtime_value="[nvidia-h100 nvidia-h200]",
                requested_value="[nvidia-a100 nvidia-h100]",
            ),
        ),
        id="AC: engine h100 + decoder a100 -> rejected (pooled, sorted)",
    ),
    pytest.param(
        ["nvidia-a100", "nvidia-h100", "nvidia-h200"],
        request_of(
            {
                "model": MODEL_70B,
                "acceleratorSelector": {"acceleratorClass": "nvidia-h200"},
                "engine": {"acceleratorOverride": {"acceleratorClass": "nvidia-h100"}},
            },
            annotations={"ome.io/accelerator-class": "nvidia-a100"},
        ),
        (),
        id="AC: annotation + selector + override pooled, all listed -> candidate",
    ),
    pytest.param(
        HOPPER,
        request_of({"model": MODEL_70B}, annotations={"ome.io/accelerator-class": "nvidia-a100"}),
        (
            Failure(
                Check.ACCELERATOR_CLASS,
                AC_REASON,
                runtime_value="[nvidia-h100 nvidia-h200]",
                requested_value="[nvidia-a100]",
            ),
        ),
        id="AC: the ome.io/accelerator-class annotation counts",
    ),
    pytest.param(
        HOPPER,
        request_of(with_class("NVIDIA-H100")),
        (
            Failure(
                Check.ACCELERATOR_CLASS,
                AC_REASON,
                runtime_value="[nvidia-h100 nvidia-h200]",
                requested_value="[NVIDIA-H100]",
            ),
        ),
        id="AC: names match exactly, including case",
    ),
    pytest.param(
        HOPPER,
        request_of(with_class("")),
        (Failure(Check.ACCELERATOR_CLASS, AC_REASON, runtime_value="[nvidia-h100 nvidia-h200]", requested_value="[]"),),
        id="AC: an empty value counts as a class no runtime lists",
    ),
    pytest.param(
        HOPPER,
        request_of({"model": MODEL_70B, "acceleratorSelector": {"policy": "Cheapest"}}),
        (),
        id="AC: a policy alone names no class",
    ),
]


@pytest.mark.parametrize(("classes", "request_", "want"), ACCELERATOR_CASES)
def test_check_accelerator_class(classes: list[str], request_: d.Request | None, want: tuple[Failure, ...]) -> None:
    compiled = runtime_of(ENTRY, acceleratorRequirements={"acceleratorClasses": classes})
    fit = model_format.fit_model(compiled, model_of())
    assert accelerator_class.check_accelerator_class(compiled, fit, request_) == want


# ---------------------------------------------------------------------------------------------
# check_deployment_mode (DM, "The matching rule" table, "Where each side declares a mode", and
# "Where a rejection shows up": "runtime engine deployment mode MultiNode does not match
# requested engine deployment mode OMENative"; KR: "For the decoder, the message says decoder")


def dm_failure(component: str, runtime_mode: str, requested: str) -> Failure:
    return Failure(
        Check.DEPLOYMENT_MODE,
        f"runtime {component} deployment mode {runtime_mode} does not match requested {component} deployment mode {requested}",
        component=component,
        runtime_value=runtime_mode,
        requested_value=requested,
    )


MODE_CASES = [
    pytest.param({"engineConfig": mode("MultiNode")}, None, (), id="no request (explain --model): skipped"),
    pytest.param(
        {"engineConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "engine": {}}),
        (),
        id="DM: none vs MultiNode passes",
    ),
    pytest.param(
        {}, request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}), (), id="DM: OMENative vs none passes"
    ),
    pytest.param(
        {"engineConfig": mode("OMENative")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}),
        (),
        id="DM: OMENative vs OMENative passes",
    ),
    pytest.param(
        {"engineConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}),
        (dm_failure("engine", "MultiNode", "OMENative"),),
        id="DM: OMENative vs MultiNode rejected (the quoted reason)",
    ),
    pytest.param(
        {"engineConfig": mode("OMENative")},
        request_of({"model": MODEL_70B, "engine": mode("RawDeployment")}),
        (dm_failure("engine", "OMENative", "RawDeployment"),),
        id="DM: RawDeployment vs OMENative rejected",
    ),
    pytest.param(
        {"engineConfig": mode("RawDeployment")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative", "engine": mode("RawDeployment")}),
        (),
        id="DM: spec.engine.annotations ahead of spec.deploymentMode",
    ),
    pytest.param(
        {"engineConfig": mode("multinode")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}),
        (),
        id="DM: a misspelled runtime annotation is no mode",
    ),
    pytest.param(
        {"engineConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "engine": {}}, annotations={"ome.io/deploymentMode": "OMENative"}),
        (),
        id="DM: InferenceService metadata.annotations do not count",
    ),
    pytest.param(
        {"metadata_annotations": {"ome.io/deploymentMode": "MultiNode"}},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}),
        (),
        id="DM: runtime metadata.annotations do not count",
    ),
    pytest.param(
        {"routerConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative", "router": mode("OMENative")}),
        (),
        id="DM: the router is not compared",
    ),
    pytest.param(
        {"decoderConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}),
        (),
        id="DM: decoder mode without spec.decoder is not compared",
    ),
    pytest.param(
        {"decoderConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative", "decoder": {}}),
        (dm_failure("decoder", "MultiNode", "OMENative"),),
        id="DM/KR: spec.decoder + spec.deploymentMode vs decoder MultiNode -> decoder rejected",
    ),
    pytest.param(
        {"decoderConfig": mode("MultiNode")},
        request_of({"model": MODEL_70B, "decoder": mode("RawDeployment")}),
        (dm_failure("decoder", "MultiNode", "RawDeployment"),),
        id="DM: decoder annotation vs decoder MultiNode -> rejected",
    ),
    pytest.param(
        {"engineConfig": mode("OMENative"), "decoderConfig": mode("OMENative")},
        request_of({"model": MODEL_70B, "engine": mode("OMENative"), "decoder": mode("OMENative")}),
        (),
        id="DM: engine and decoder both equal pass",
    ),
    pytest.param(
        {"engineConfig": mode("MultiNode"), "decoderConfig": mode("RawDeployment")},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative", "decoder": {}}),
        (dm_failure("engine", "MultiNode", "OMENative"), dm_failure("decoder", "RawDeployment", "OMENative")),
        id="DM: both differ -> engine first, then decoder",
    ),
    pytest.param(
        {"engineConfig": {"leader": {}, "worker": {"size": 1}}},
        request_of({"model": MODEL_70B, "deploymentMode": "OMENative"}),
        (),
        id="DM: a leader and worker alone declare no mode",
    ),
    pytest.param(
        {"engineConfig": mode("VirtualDeployment")},
        request_of({"model": MODEL_70B, "engine": mode("RawDeployment")}),
        (dm_failure("engine", "VirtualDeployment", "RawDeployment"),),
        id="DM: VirtualDeployment (legacy) counts as a mode",
    ),
]


@pytest.mark.parametrize(("fields", "request_", "want"), MODE_CASES)
def test_check_deployment_mode(fields: dict[str, Any], request_: d.Request | None, want: tuple[Failure, ...]) -> None:
    compiled = runtime_of(ENTRY, **fields)
    fit = model_format.fit_model(compiled, model_of())
    assert deployment_mode.check_deployment_mode(compiled, fit, request_) == want


# ---------------------------------------------------------------------------------------------
# check_model_format (MV "Mismatch reasons"; KR: "A runtime with no entries gets no supported
# formats defined after the colon"; TS Step 2 example; FACTS 3.11 "unknown mismatch")


def format_failure(label: str, count: int, *entries: tuple[int, tuple[str, ...]], detail: str) -> Failure:
    return Failure(
        Check.MODEL_FORMAT,
        f"model format '{label}' not in supported formats: {detail}",
        runtime_value=f"{count} supportedModelFormats entries",
        requested_value=label,
        entries=tuple(EntryMismatch(i, diffs) for i, diffs in entries),
    )


QWEN_MODEL = {
    "modelArchitecture": "Qwen2ForCausalLM",
    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
    "modelFramework": {"name": "transformers", "version": "4.40.1"},
}
MISTRAL_ENTRY = {
    "modelFormat": {"name": "safetensors", "version": "1.0.0"},
    "modelFramework": {"name": "transformers", "version": "4.36.0"},
    "modelArchitecture": "MistralForCausalLM",
    "autoSelect": True,
}

FORMAT_CASES = [
    pytest.param([ENTRY], MODEL, (), id="MV: the catalog entry matches the BaseModel"),
    pytest.param(
        [],
        MODEL,
        (format_failure(MODEL_LABEL, 0, detail="no supported formats defined"),),
        id="KR: no entries -> no supported formats defined",
    ),
    pytest.param(
        [ENTRY],
        changed(MODEL, modelFramework={"name": "transformers", "version": "4.46.0"}),
        (
            format_failure(
                "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0",
                1,
                (0, ("framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)",)),
                detail="framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)",
            ),
        ),
        id="MV: framework 4.46.0 -> the quoted reason",
    ),
    pytest.param(
        [MISTRAL_ENTRY],
        QWEN_MODEL,
        (
            format_failure(
                "mt:safetensors:1.0.0:Qwen2ForCausalLM:transformers:4.40.1",
                1,
                (
                    0,
                    (
                        "architecture mismatch (model=Qwen2ForCausalLM, runtime=MistralForCausalLM)",
                        "framework version mismatch (model=4.40.1, runtime=4.36.0)",
                    ),
                ),
                detail="architecture mismatch (model=Qwen2ForCausalLM, runtime=MistralForCausalLM), "
                "framework version mismatch (model=4.40.1, runtime=4.36.0)",
            ),
        ),
        id="TS Step 1: srt-mistral-7b-instruct's differences joined by ', '",
    ),
    pytest.param(
        [changed(ENTRY, modelFormat={"name": "gguf"}), ENTRY],
        MODEL,
        (),
        id="a later entry that matches is enough",
    ),
    pytest.param(
        [changed(ENTRY, modelFormat={"name": "gguf"}), changed(ENTRY, modelArchitecture="MistralForCausalLM")],
        MODEL,
        (
            format_failure(
                MODEL_LABEL,
                2,
                (0, ("format name mismatch (model=safetensors, runtime=gguf)",)),
                (1, ("architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",)),
                detail="format name mismatch (model=safetensors, runtime=gguf); "
                "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
            ),
        ),
        id="MV: one text per entry, separated by '; '",
    ),
    pytest.param(
        [changed(ENTRY, modelFormat=_UNSET)],
        MODEL,
        (format_failure(MODEL_LABEL, 1, (0, ()), detail="unknown mismatch"),),
        id="FACTS 3.11: an entry without modelFormat never matches -> unknown mismatch",
    ),
    pytest.param(
        [changed(ENTRY, quantization="fp8")],
        changed(MODEL, quantization="fp8", modelParameterSize=_UNSET),
        (),
        id="TS: quantization on both sides, equal",
    ),
    pytest.param(
        [ENTRY],
        changed(MODEL, quantization="fp8"),
        (
            format_failure(
                "mt:safetensors:1.0.0:LlamaForCausalLM:fp8:transformers:4.45.0.dev0",
                1,
                (0, ("model has quantization fp8 but runtime has no quantization requirement",)),
                detail="model has quantization fp8 but runtime has no quantization requirement",
            ),
        ),
        id="TS/FACTS 3.10: the label carries the quantization",
    ),
]


@pytest.mark.parametrize(("entries", "model", "want"), FORMAT_CASES)
def test_check_model_format(entries: list[dict[str, Any]], model: dict[str, Any], want: tuple[Failure, ...]) -> None:
    compiled = runtime_of(*entries)
    fit = model_format.fit_model(compiled, model_of(model))
    assert model_format.check_model_format(compiled, fit, None) == want


# ---------------------------------------------------------------------------------------------
# check_model_size (MS, "Examples" table and "Where a rejection shows up": "model size 3.21B is
# outside supported range [500M, 2B]"; since v1.3 a missing bound shows as "(-inf" or "inf)")


def size_failure(size: str, label: str) -> Failure:
    return Failure(
        Check.MODEL_SIZE,
        f"model size {size} is outside supported range {label}",
        runtime_value=label,
        requested_value=size,
    )


SIZE_CASES = [
    pytest.param({"min": "2B", "max": "4B"}, "3.21B", (), id="MS: 2B-4B, 3.21B passes"),
    pytest.param({"min": "2B", "max": "4B"}, "4B", (), id="MS: bounds are inclusive (max)"),
    pytest.param({"min": "2B", "max": "4B"}, "2B", (), id="MS: bounds are inclusive (min)"),
    pytest.param(
        {"min": "500M", "max": "2B"},
        "3.21B",
        (size_failure("3.21B", "[500M, 2B]"),),
        id="MS: above max -> the quoted reason",
    ),
    pytest.param({"min": "2B", "max": "4B"}, "1B", (size_failure("1B", "[2B, 4B]"),), id="MS: below min rejected"),
    pytest.param({"min": "1B", "max": "4B"}, "1500M", (), id="MS: suffixes can differ (1500M passes min 1B)"),
    pytest.param({"min": "500M", "max": "2B"}, "0.5B", (), id="MS: 0.5B equals 500M"),
    pytest.param({"min": "70B"}, "405B", (), id="MS: no upper limit"),
    pytest.param({"min": "70B"}, "8B", (size_failure("8B", "[70B, inf)"),), id="MS since v1.3: min only -> [70B, inf)"),
    pytest.param({"max": "13B"}, "3.21B", (), id="MS: no lower limit"),
    pytest.param(
        {"max": "13B"}, "70B", (size_failure("70B", "(-inf, 13B]"),), id="MS since v1.3: max only -> (-inf, 13B]"
    ),
    pytest.param({"min": "2B", "max": "4B"}, None, (), id="MS: a model without a size always passes"),
    pytest.param(None, "3.21B", (), id="MS: a runtime without a range passes every model"),
    pytest.param(
        {"min": "4B", "max": "2B"}, "3B", (size_failure("3B", "[4B, 2B]"),), id="MS: min above max rejects any size"
    ),
    pytest.param(
        {"min": "2B", "max": "4B"}, "4b", (size_failure("4b", "[2B, 4B]"),), id="MS: 4b reads as 0 -> below min"
    ),
    pytest.param({"max": "1T"}, "1.5T", (size_failure("1.5T", "(-inf, 1T]"),), id="MS: T suffix"),
    pytest.param({"min": "1000"}, "999", (size_failure("999", "[1000, inf)"),), id="MS: no suffix multiplies by 1"),
]


@pytest.mark.parametrize(("size_range", "size", "want"), SIZE_CASES)
def test_check_model_size(size_range: dict[str, str] | None, size: str | None, want: tuple[Failure, ...]) -> None:
    fields: dict[str, Any] = {} if size_range is None else {"modelSizeRange": size_range}
    compiled = runtime_of(ENTRY, **fields)
    model = changed(MODEL, modelParameterSize=_UNSET if size is None else size)
    fit = model_format.fit_model(compiled, model_of(model))
    assert model_size.check_model_size(compiled, fit, None) == want


# ---------------------------------------------------------------------------------------------
# entry_differences (MV "Mismatch reasons"; TS Step 2; DP "exclusion reasons"; FACTS 3.11 for
# the architecture/quantization forms and the framework-on-the-model-only form)

NO_VERSION_FORMAT = {"name": "safetensors"}
NO_VERSION_FRAMEWORK = {"name": "transformers"}

DIFFERENCE_CASES = [
    pytest.param(ENTRY, MODEL, (), id="MV: strict match"),
    pytest.param(
        changed(ENTRY, modelArchitecture="MistralForCausalLM"),
        MODEL,
        ("architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",),
        id="TS: architecture mismatch",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelArchitecture=_UNSET),
        ("model has no architecture but runtime requires LlamaForCausalLM",),
        id="FACTS 3.11: only the entry has an architecture",
    ),
    pytest.param(
        changed(ENTRY, modelArchitecture=_UNSET),
        MODEL,
        ("model has architecture LlamaForCausalLM but runtime has no architecture requirement",),
        id="DP: only the model has an architecture",
    ),
    pytest.param(
        changed(ENTRY, quantization="int4"),
        changed(MODEL, quantization="fp8"),
        ("quantization mismatch (model=fp8, runtime=int4)",),
        id="FACTS 3.11: quantization mismatch",
    ),
    pytest.param(
        changed(ENTRY, quantization="fp8"),
        MODEL,
        ("model has no quantization but runtime requires fp8",),
        id="FACTS 3.11: only the entry has a quantization",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, quantization="fp8"),
        ("model has quantization fp8 but runtime has no quantization requirement",),
        id="FACTS 3.11: only the model has a quantization",
    ),
    pytest.param(
        changed(ENTRY, modelFormat={"name": "safetensors", "version": "1.0.0"}),
        changed(MODEL, modelFormat={"name": "gguf", "version": "1.0.0"}),
        ("format name mismatch (model=gguf, runtime=safetensors)",),
        id="MV: format name mismatch",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFormat={"name": "SafeTensors", "version": "1.0.0"}),
        ("format name mismatch (model=SafeTensors, runtime=safetensors)",),
        id="MV: names are case-sensitive",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFormat={"name": "safetensors", "version": "2.0.0"}),
        ("format version mismatch (model=2.0.0, runtime=1.0.0)",),
        id="MV: format version mismatch",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFormat=NO_VERSION_FORMAT),
        ("model has no format version but runtime requires 1.0.0",),
        id="MV: only the entry has a format version",
    ),
    pytest.param(
        changed(ENTRY, modelFormat=NO_VERSION_FORMAT),
        MODEL,
        ("model has format version but runtime has no version requirement",),
        id="MV: only the model has a format version",
    ),
    pytest.param(
        changed(ENTRY, modelFormat=NO_VERSION_FORMAT),
        changed(MODEL, modelFormat=NO_VERSION_FORMAT),
        (),
        id="MV: neither sets a format version -> match",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFramework={"name": "diffusers", "version": "4.45.0.dev0"}),
        ("framework name mismatch (model=diffusers, runtime=transformers)",),
        id="MV: framework name mismatch",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFramework={"name": "transformers", "version": "4.46.0"}),
        ("framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)",),
        id="MV: framework version mismatch",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFramework=NO_VERSION_FRAMEWORK),
        ("model has no framework version but runtime requires 4.45.0.dev0",),
        id="MV: only the entry has a framework version",
    ),
    pytest.param(
        changed(ENTRY, modelFramework=NO_VERSION_FRAMEWORK),
        MODEL,
        ("model has framework version but runtime has no version requirement",),
        id="MV: only the model has a framework version",
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFramework=_UNSET),
        ("model has no framework but runtime requires transformers",),
        id="MV: the model has no modelFramework",
    ),
    pytest.param(
        changed(ENTRY, modelFramework=_UNSET),
        MODEL,
        ("model has framework transformers but runtime has no framework requirement",),
        id="FACTS 3.11: only the model has a framework",
    ),
    pytest.param(
        changed(ENTRY, modelFramework=_UNSET),
        changed(MODEL, modelFramework=_UNSET),
        (),
        id="FACTS 3.5: no framework on either side",
    ),
    pytest.param(
        changed(ENTRY, modelFormat=_UNSET),
        MODEL,
        (),
        id="FACTS 3.11: no modelFormat on the entry adds no format item",
    ),
    pytest.param(
        changed(ENTRY, diffusionPipeline={"className": "QwenImagePipeline"}),
        MODEL,
        ("diffusion pipeline required by runtime but not specified in model",),
        id="DP: the model has no pipeline",
    ),
    pytest.param(
        changed(
            ENTRY,
            diffusionPipeline={"className": "QwenImagePipeline"},
            modelArchitecture="MistralForCausalLM",
            quantization="fp8",
            modelFormat={"name": "gguf"},
            modelFramework={"name": "diffusers"},
        ),
        MODEL,
        (
            "diffusion pipeline required by runtime but not specified in model",
            "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
            "model has no quantization but runtime requires fp8",
            "format name mismatch (model=safetensors, runtime=gguf)",
            "framework name mismatch (model=transformers, runtime=diffusers)",
        ),
        id="FACTS 3.11: every difference, in order pipeline, architecture, quantization, format, framework",
    ),
]


@pytest.mark.parametrize(("entry", "model", "want"), DIFFERENCE_CASES)
def test_entry_differences(entry: dict[str, Any], model: dict[str, Any], want: tuple[str, ...]) -> None:
    assert model_format.entry_differences(first_entry(entry), model_of(model)) == want


# MV "Examples" table (and "Operators"): entry version, operator, model version -> matches.
# A row that does not match gives the format version reason of MV "Mismatch reasons".
VERSION_ROWS = [
    ("1.0.0", "Equal", "1.0.0", True),
    ("1.0.0", None, "1.0", True),
    ("1.8.0", "GreaterThan", "1.7.0", True),
    ("1.8.0", "GreaterThan", "1.8.0", False),
    ("1.8.0", "GreaterThanOrEqual", "1.8.0", True),
    ("4.50.0", "GreaterThanOrEqual", "4.36.2", True),
    ("4.50.0", "GreaterThanOrEqual", "4.51.0", False),
    ("1.8.0-dev", "GreaterThan", "1.8.0-dev", True),
    ("4.45.0.dev0", "GreaterThanOrEqual", "4.44.0", False),
    ("4.50.0", "GreaterThanOrEqual", "4.45.0.dev0", False),
    ("1.8", "GreaterThan", "1.7.0", False),
    # MV "Operators": Equal ignores the v and a missing part; suffixes must be identical.
    ("v1.0.0", "Equal", "1.0", True),
    ("4.43.0+build", "Equal", "4.43.0", False),
    # MV "Operators": any other value is Equal plus same parts and same v.
    ("1.0.0", "LessThan", "1.0.0", True),
    ("1.0.0", "equal", "1.0", False),
    ("v1.0.0", "LessThan", "1.0.0", False),
    # MV "Operators": GreaterThan needs the same v on both sides.
    ("v1.8.0", "GreaterThan", "v1.7.0", True),
    ("v1.8.0", "GreaterThan", "1.7.0", False),
    # MV "Accepted version formats": a version that does not parse never matches.
    ("1.08.0", "Equal", "1.08.0", False),
    ("V1.0.0", "Equal", "V1.0.0", False),
    ("1.2-beta", "Equal", "1.2-beta", False),
    ("1.0.0-", "Equal", "1.0.0-", False),
    ("", "Equal", "", False),
    ("1.2.3.4", "Equal", "1.2.3.4", True),
    ("4.51.3-SAM-HQ-preview", "GreaterThanOrEqual", "4.51.3-SAM-HQ-preview", True),
]


@pytest.mark.parametrize(
    ("entry_version", "operator", "model_version", "matches"),
    [
        pytest.param(*row, id=f"MV: {row[0]!r} {row[1]} {row[2]!r} -> {'match' if row[3] else 'no match'}")
        for row in VERSION_ROWS
    ],
)
def test_entry_differences_versions_and_operators(
    entry_version: str, operator: str | None, model_version: str, matches: bool
) -> None:
    entry_format: dict[str, Any] = {"name": "safetensors", "version": entry_version}
    if operator is not None:
        entry_format["operator"] = operator
    entry = changed(ENTRY, modelFormat=entry_format)
    model = changed(MODEL, modelFormat={"name": "safetensors", "version": model_version})
    want = () if matches else (f"format version mismatch (model={model_version}, runtime={entry_version})",)
    assert model_format.entry_differences(first_entry(entry), model_of(model)) == want


def test_the_framework_version_uses_the_frameworks_operator() -> None:
    # MV: "This entry accepts transformers versions up to 4.46.0 that have three parts ... such as
    # 4.44.2. It refuses the BaseModel above, whose 4.45.0.dev0 has a suffix".
    entry = changed(
        ENTRY, modelFramework={"name": "transformers", "version": "4.46.0", "operator": "GreaterThanOrEqual"}
    )
    assert (
        model_format.entry_differences(
            first_entry(entry), model_of(changed(MODEL, modelFramework={"name": "transformers", "version": "4.44.2"}))
        )
        == ()
    )
    assert model_format.entry_differences(first_entry(entry), model_of()) == (
        "framework version mismatch (model=4.45.0.dev0, runtime=4.46.0)",
    )


# ---------------------------------------------------------------------------------------------
# pipeline_difference (DP, "Where a rejection shows up" table; FACTS 3.6 for the order)

QWEN = {
    "className": "QwenImagePipeline",
    "scheduler": {"library": "diffusers", "type": "FlowMatchEulerDiscreteScheduler"},
    "textEncoder": {"library": "transformers", "type": "Qwen2_5_VLForConditionalGeneration"},
    "transformer": {"library": "diffusers", "type": "QwenImageTransformer2DModel"},
}

PIPELINE_CASES = [
    pytest.param(
        None,
        QWEN,
        "diffusion pipeline required by runtime but not specified in model",
        id="DP: the model has no pipeline",
    ),
    pytest.param(QWEN, QWEN, None, id="DP: equal pipelines match"),
    pytest.param(
        changed(QWEN, className="QwenImageEditPipeline"),
        QWEN,
        "pipeline class mismatch (model=QwenImageEditPipeline, runtime=QwenImagePipeline)",
        id="DP: class mismatch",
    ),
    pytest.param(
        changed(QWEN, className=_UNSET),
        QWEN,
        "pipeline class mismatch (model=<nil>, runtime=QwenImagePipeline)",
        id="DP: the model's pipeline has no class (model=<nil>)",
    ),
    pytest.param(
        changed(QWEN, className="Other"), changed(QWEN, className=_UNSET), None, id="FACTS 3.6: the entry sets no class"
    ),
    pytest.param(
        changed(QWEN, transformer=_UNSET),
        QWEN,
        "component transformer required by runtime but not specified in model",
        id="DP: the model has no such component",
    ),
    pytest.param(
        changed(QWEN, textEncoder=_UNSET),
        QWEN,
        "component textEncoder required by runtime but not specified in model",
        id="FACTS 3.6: textEncoder is named in camelCase",
    ),
    pytest.param(
        changed(QWEN, transformer={"library": "transformers", "type": "QwenImageTransformer2DModel"}),
        QWEN,
        "transformer library mismatch (model=transformers, runtime=diffusers)",
        id="DP: library mismatch",
    ),
    pytest.param(
        changed(QWEN, transformer={"type": "QwenImageTransformer2DModel"}),
        QWEN,
        "transformer library mismatch (model=, runtime=diffusers)",
        id="DP: the model's component has no library (model=)",
    ),
    pytest.param(
        changed(QWEN, scheduler={"library": "diffusers", "type": "EulerDiscreteScheduler"}),
        QWEN,
        "scheduler type mismatch (model=EulerDiscreteScheduler, runtime=FlowMatchEulerDiscreteScheduler)",
        id="DP: type mismatch",
    ),
    pytest.param(
        changed(QWEN, scheduler={"library": "diffusers"}),
        QWEN,
        "scheduler type mismatch (model=, runtime=FlowMatchEulerDiscreteScheduler)",
        id="DP: the model's component has no type",
    ),
    pytest.param(
        changed(QWEN, scheduler={"library": "other", "type": "Other"}),
        changed(QWEN, scheduler={}),
        None,
        id="FACTS 3.6: an entry component with no library or type checks nothing",
    ),
    pytest.param(
        changed(QWEN, scheduler={"library": "x", "type": "y"}, transformer={"library": "z", "type": "w"}),
        QWEN,
        "scheduler library mismatch (model=x, runtime=diffusers)",
        id="DP: only the first mismatch (scheduler before transformer)",
    ),
    pytest.param(
        QWEN,
        changed(QWEN, additionalComponents={"safety_checker": {"library": "diffusers"}}),
        "diffusion pipeline missing required additional components",
        id="DP: additionalComponents the model lacks",
    ),
    pytest.param(
        changed(QWEN, additionalComponents={"feature_extractor": {"library": "transformers"}}),
        changed(QWEN, additionalComponents={"safety_checker": {"library": "diffusers"}}),
        "diffusion component safety_checker missing in model",
        id="DP: a missing additional component",
    ),
    pytest.param(
        changed(QWEN, additionalComponents={"safety_checker": {"library": "transformers"}}),
        changed(QWEN, additionalComponents={"safety_checker": {"library": "diffusers"}}),
        "safety_checker library mismatch (model=transformers, runtime=diffusers)",
        id="FACTS 3.6: additional component compared by key",
    ),
    pytest.param(
        changed(QWEN, additionalComponents={"c": {}}),
        changed(QWEN, additionalComponents={"b": {"library": "x"}, "a": {"library": "y"}}),
        "diffusion component a missing in model",
        id="additionalComponents keys in sorted order",
    ),
    pytest.param(
        changed(QWEN, additionalComponents={"safety_checker": {"library": "diffusers"}, "extra": {}}),
        changed(QWEN, additionalComponents={"safety_checker": {"library": "diffusers"}}),
        None,
        id="extra model components are fine",
    ),
]


@pytest.mark.parametrize(("model_pipeline", "entry_pipeline", "want"), PIPELINE_CASES)
def test_pipeline_difference(
    model_pipeline: dict[str, Any] | None, entry_pipeline: dict[str, Any], want: str | None
) -> None:
    model = None if model_pipeline is None else pipeline(model_pipeline)
    assert model_format.pipeline_difference(model, pipeline(entry_pipeline)) == want


# ---------------------------------------------------------------------------------------------
# entry_score (SC, "How the score is computed"; FACTS 3.12 for the lenient parts; int64 weights
# wrap as Go's int64 arithmetic does)

INT64_MIN = -9223372036854775808
INT64_MAX = 9223372036854775807


def weights(fmt: int | None = None, fw: int | None = None, **entry: Any) -> dict[str, Any]:
    out = dict(ENTRY, **entry)
    if fmt is not None:
        out["modelFormat"] = dict(ENTRY["modelFormat"], weight=fmt)
    if fw is not None:
        out["modelFramework"] = dict(ENTRY["modelFramework"], weight=fw)
    return out


SCORE_CASES = [
    pytest.param(ENTRY, MODEL, 2, id="SC: defaults (1 + 1) x 1 = 2"),
    pytest.param(weights(priority=3), MODEL, 6, id="SC: srt-llama-small (1 + 1) x 3 = 6"),
    pytest.param(weights(fmt=2, priority=2), MODEL, 6, id="SC: vllm-llama (2 + 1) x 2 = 6"),
    pytest.param(weights(priority=4), MODEL, 8, id="SC: priority 4 -> (1 + 1) x 4 = 8"),
    pytest.param(weights(fmt=0), MODEL, 11, id="SC: format weight 0 counts as 10"),
    pytest.param(weights(fw=0), MODEL, 6, id="SC: framework weight 0 counts as 5"),
    pytest.param(weights(fmt=0, fw=0, priority=2), MODEL, 30, id="SC: both 0 -> (10 + 5) x 2"),
    pytest.param(weights(fmt=-5), MODEL, -4, id="SC: a negative weight lowers the score"),
    pytest.param(
        weights(modelArchitecture="MistralForCausalLM", quantization="fp8"),
        MODEL,
        2,
        id="SC: architecture and quantization ignored",
    ),
    pytest.param(
        weights(diffusionPipeline={"className": "QwenImagePipeline"}), MODEL, 2, id="SC: diffusionPipeline ignored"
    ),
    pytest.param(weights(modelFormat={"name": "gguf"}), MODEL, 0, id="SC: format name differs -> 0"),
    pytest.param(
        weights(modelFormat={"name": "safetensors", "version": "2.0.0"}), MODEL, 0, id="SC: format version fails -> 0"
    ),
    pytest.param(
        weights(modelFramework={"name": "diffusers", "version": "4.45.0.dev0"}),
        MODEL,
        0,
        id="SC: framework name differs -> 0",
    ),
    pytest.param(
        weights(modelFramework={"name": "transformers", "version": "4.46.0"}),
        MODEL,
        0,
        id="SC: framework version fails -> 0",
    ),
    pytest.param(
        weights(modelFormat=NO_VERSION_FORMAT), MODEL, 2, id="FACTS 3.12: one-sided format version still scores"
    ),
    pytest.param(
        ENTRY,
        changed(MODEL, modelFramework=NO_VERSION_FRAMEWORK),
        2,
        id="FACTS 3.12: one-sided framework version still scores",
    ),
    pytest.param(ENTRY, changed(MODEL, modelFramework=_UNSET), 0, id="FACTS 3.12: framework on the entry only -> 0"),
    pytest.param(changed(ENTRY, modelFramework=_UNSET), MODEL, 0, id="FACTS 3.12: framework on the model only -> 0"),
    pytest.param(
        changed(ENTRY, modelFramework=_UNSET, priority=3),
        changed(MODEL, modelFramework=_UNSET),
        3,
        id="FACTS 3.12: no framework on either side -> format weight x priority",
    ),
    pytest.param(
        changed(ENTRY, modelFormat=_UNSET, priority=2),
        MODEL,
        2,
        id="FACTS 3.12: no modelFormat on the entry -> framework only",
    ),
    pytest.param(weights(fmt=INT64_MAX), MODEL, INT64_MIN, id="int64: (MAX + 1) wraps to MIN"),
    pytest.param(weights(fmt=2**62, priority=4), MODEL, 4, id="int64: 2**62 x 4 wraps to 0, plus 1 x 4"),
    pytest.param(weights(fmt=INT64_MIN, fw=-1), MODEL, INT64_MAX, id="int64: MIN - 1 wraps to MAX"),
]


@pytest.mark.parametrize(("entry", "model", "want"), SCORE_CASES)
def test_entry_score(entry: dict[str, Any], model: dict[str, Any], want: int) -> None:
    compiled = first_entry(entry)
    assert scoring.entry_score(compiled, model_of(model), compiled.effective_priority) == want


# ---------------------------------------------------------------------------------------------
# auto_select_failure (KR "Output fields", the REASON of a runtime that passes every check)

NO_AUTO_SELECT = Failure(
    Check.AUTO_SELECT,
    "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it "
    "(pin it explicitly via spec.runtime.name instead)",
    runtime_value="autoSelect unset or false",
    requested_value="autoSelect=true",
)


def not_auto_select_enabled(format_name: str) -> Failure:
    return Failure(
        Check.AUTO_SELECT,
        f"matching format {format_name} is not autoSelect-enabled (a different supportedModelFormats entry on this runtime "
        "has autoSelect=true, but not the one that matches this model)",
        runtime_value="0",
        requested_value="> 0",
    )


GGUF_AUTO = changed(ENTRY, modelFormat={"name": "gguf"}, autoSelect=True)

AUTO_SELECT_CASES = [
    pytest.param([ENTRY], None, id="SC: autoSelect true and a score above 0 -> candidate"),
    pytest.param([changed(ENTRY, autoSelect=False)], NO_AUTO_SELECT, id="KR/MV: autoSelect false on every entry"),
    pytest.param([changed(ENTRY, autoSelect=_UNSET)], NO_AUTO_SELECT, id="KR/TS Step 3: unset doesn't count"),
    pytest.param(
        [weights(fmt=-5, fw=1)],
        Failure(Check.SCORE, "auto-select score is 0", runtime_value="0", requested_value="> 0"),
        id="KR: the matching entry sets autoSelect true, score <= 0 (negative weight)",
    ),
    pytest.param(
        [changed(ENTRY, autoSelect=False), GGUF_AUTO],
        not_auto_select_enabled("safetensors"),
        id="KR: another entry sets autoSelect true, the matching one false",
    ),
    pytest.param(
        [changed(weights(fmt=-5), autoSelect=_UNSET), GGUF_AUTO],
        not_auto_select_enabled("safetensors"),
        id="KR: matching entry unset, score 0 from a negative weight",
    ),
    pytest.param(
        [changed(ENTRY, autoSelect=False), changed(ENTRY, modelArchitecture="MistralForCausalLM", autoSelect=True)],
        None,
        id="SC/FACTS 3.13: the score can come from an entry that does not match strictly",
    ),
    pytest.param(
        [changed(ENTRY, modelArchitecture="MistralForCausalLM", autoSelect=True, modelFramework={"name": "diffusers"})],
        not_auto_select_enabled("safetensors"),
        id="no matching entry: the model's format is named",
    ),
]


@pytest.mark.parametrize(("entries", "want"), AUTO_SELECT_CASES)
def test_auto_select_failure(entries: list[dict[str, Any]], want: Failure | None) -> None:
    compiled = runtime_of(*entries)
    model = model_of()
    assert auto_select.auto_select_failure(compiled, model_format.fit_model(compiled, model), model) == want


# ---------------------------------------------------------------------------------------------
# explain_columns (KR "Output fields": PRIORITY is the first matching entry's priority or 1;
# WEIGHT its format + framework weights, each times the priority, leaving out weights of 0 or
# less; SC "Check the ranking" output for the worked example)

COLUMN_CASES = [
    pytest.param(MODEL, [changed(ENTRY, modelFormat={"name": "gguf"})], None, id="KR: no matching entry -> '-'"),
    pytest.param(MODEL, [ENTRY], (1, 2), id="SC: team-llama 1 / 2"),
    pytest.param(MODEL, [weights(fmt=2, priority=2)], (2, 6), id="SC: vllm-llama 2 / 6"),
    pytest.param(MODEL, [weights(priority=3)], (3, 6), id="SC: srt-llama-small 3 / 6"),
    pytest.param(MODEL, [weights(fmt=0)], (1, 1), id="KR: a weight of 0 is left out (not 10)"),
    pytest.param(MODEL, [weights(fw=0, priority=2)], (2, 2), id="KR: a framework weight of 0 is left out (not 5)"),
    pytest.param(MODEL, [weights(fmt=-5, priority=2)], (2, 2), id="KR: a negative weight is left out"),
    pytest.param(
        MODEL,
        [changed(ENTRY, modelArchitecture="MistralForCausalLM", priority=9), ENTRY, weights(priority=3)],
        (1, 2),
        id="KR: the first matching entry, not the best",
    ),
    pytest.param(
        MODEL,
        [changed(ENTRY, autoSelect=False, priority=2)],
        (2, 4),
        id="KR: autoSelect does not matter for the columns",
    ),
    pytest.param(
        changed(MODEL, modelFramework=_UNSET),
        [changed(ENTRY, modelFramework=_UNSET, priority=2)],
        (2, 2),
        id="no framework on either side: format weight only",
    ),
    pytest.param(MODEL, [weights(fmt=2**62, fw=2**62)], (1, INT64_MIN), id="int64: 2**62 + 2**62 wraps to MIN"),
    pytest.param(MODEL, [weights(fmt=2**62, priority=4)], (4, 4), id="int64: 2**62 x 4 wraps to 0"),
]


@pytest.mark.parametrize(("model", "entries", "want"), COLUMN_CASES)
def test_explain_columns(model: dict[str, Any], entries: list[dict[str, Any]], want: tuple[int, int] | None) -> None:
    compiled = runtime_of(*entries)
    assert scoring.explain_columns(model_format.fit_model(compiled, model_of(model))) == want
