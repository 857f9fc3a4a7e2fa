"""``kubectl ome runtime explain --model NAME -n NAMESPACE`` through ``selection.explain_runtimes`` with
``ExplainRuntimesRequest.model`` (reference/kubectl-ome/runtime.md, "explain").

With ``--model`` the accelerator-class and deployment-mode checks do not apply ("With --isvc, it
... also checks the accelerator class and the deployment modes the InferenceService asks for").
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers_docs import (
    QWEN2_5_7B_EXPLAIN_TABLE,
    TEAM_A_EXPLAIN_TABLE,
    entry,
    inference_service,
    isvc,
    load,
    model,
    runtime,
    spec_of,
    table,
    troubleshoot_qwen_sources,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import selection

MODE = "ome.io/deploymentMode"
EXPLICIT_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical."
NO_RUNTIMES_NOTE = "No serving runtimes found in the selected namespace or at cluster scope."


def explain_model(sources: list[Any], name: str, namespace: str) -> pb.ExplainRuntimesResponse:
    store = load(*sources)
    return selection.explain_runtimes(
        store.snapshot, pb.ExplainRuntimesRequest(model=pb.ModelLookup(name=name, namespace=namespace))
    )


def explain_isvc(sources: list[Any], service: Any) -> pb.ExplainRuntimesResponse:
    store = load(*sources)
    return selection.explain_runtimes(
        store.snapshot, pb.ExplainRuntimesRequest(inference_service=inference_service(service))
    )


# The runtimes of the docs example (kubectl-ome runtime.md, "Examples"): team-llama's entry has
# weights of 1 and a priority of 1; vllm-llama's has a format weight of 2 and a priority of 2 and
# inherits from vllm-base, which matches but sets no autoSelect: true; srt-llama-1b serves 500M-2B;
# vllm-legacy is disabled. The BaseModel llama-3-2-3b-instruct (3.21B) is in team-a.
TEAM_A = [
    model(namespace="team-a"),
    runtime("team-llama", entry(priority=1), namespace="team-a"),
    runtime("vllm-base", entry(auto_select=None)),
    runtime(
        "vllm-llama", entry(format=spec_of("safetensors", "1.0.0", weight=2), priority=2), inherit_from="vllm-base"
    ),
    runtime("srt-llama-1b", entry(priority=1), size=("500M", "2B")),
    runtime("vllm-legacy", entry(), disabled=True),
]


class TestDocsExample:
    def test_table(self) -> None:
        got = explain_model(TEAM_A, "llama-3-2-3b-instruct", "team-a")
        assert table(got) == TEAM_A_EXPLAIN_TABLE
        assert list(got.notes) == []

    def test_the_first_yes_row_is_the_pick(self) -> None:
        """ "OME would select the ServingRuntime team-llama, although its WEIGHT is lower"."""
        got = explain_model(TEAM_A, "llama-3-2-3b-instruct", "team-a")
        assert [(r.runtime.name, r.rank) for r in got.runtimes if r.verdict == pb.VERDICT_CANDIDATE] == [
            ("team-llama", 1),
            ("vllm-llama", 2),
        ]
        assert [r.rank for r in got.runtimes if r.verdict != pb.VERDICT_CANDIDATE] == [0, 0, 0]

    def test_verdicts(self) -> None:
        got = explain_model(TEAM_A, "llama-3-2-3b-instruct", "team-a")
        assert [pb.Verdict.Name(r.verdict) for r in got.runtimes] == [
            "VERDICT_CANDIDATE",
            "VERDICT_CANDIDATE",
            "VERDICT_EXCLUDED",
            "VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE",
            "VERDICT_EXCLUDED",
        ]
        assert got.runtimes[4].reasons[0].check == pb.CHECK_DISABLED

    def test_scope_column(self) -> None:
        got = explain_model(TEAM_A, "llama-3-2-3b-instruct", "team-a")
        assert [(r.runtime.kind, r.runtime.namespace) for r in got.runtimes][:2] == [
            (pb.RUNTIME_KIND_SERVING_RUNTIME, "team-a"),
            (pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, ""),
        ]

    def test_model_identity(self) -> None:
        got = explain_model(TEAM_A, "llama-3-2-3b-instruct", "team-a")
        assert (got.model.kind, got.model.namespace, got.model.name, got.model.label) == (
            "BaseModel",
            "team-a",
            "llama-3-2-3b-instruct",
            "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0",
        )

    def test_other_namespaces_servingruntimes_are_out_of_scope(self) -> None:
        """`explain` lists the ServingRuntimes in the namespace and the ClusterServingRuntimes."""
        sources = [*TEAM_A, model(namespace="team-b"), runtime("team-b-llama", namespace="team-b")]
        got = explain_model(sources, "llama-3-2-3b-instruct", "team-a")
        assert table(got) == TEAM_A_EXPLAIN_TABLE

    def test_the_isvc_form_prints_the_same_table(self) -> None:
        """ "It prints the same table, since llama-chat asks for no accelerator class or deployment
        mode ... and the command writes Note: ... to stderr"."""
        service = isvc("llama-3-2-3b-instruct", namespace="team-a", name="llama-chat", runtime_name="vllm-llama")
        got = explain_isvc(TEAM_A, service)
        assert table(got) == TEAM_A_EXPLAIN_TABLE
        assert list(got.notes) == [EXPLICIT_NOTE]


class TestModelChecksOnly:
    """With --model, the accelerator-class and deployment-mode checks do not apply."""

    SOURCES = [
        model(namespace="team-a"),
        runtime(
            "multinode",
            spec={"engineConfig": {"annotations": {MODE: "MultiNode"}, "leader": {}, "worker": {"size": 1}}},
        ),
        runtime("hopper-only", classes=["nvidia-h100", "nvidia-h200"]),
        runtime("no-classes", classes=[]),
        runtime("omenative-decoder", decoder_mode="OMENative"),
    ]

    def test_all_stay_yes(self) -> None:
        got = explain_model(self.SOURCES, "llama-3-2-3b-instruct", "team-a")
        assert [(name, compatible) for name, _, compatible, *_ in table(got)] == [
            ("hopper-only", "Yes"),
            ("multinode", "Yes"),
            ("no-classes", "Yes"),
            ("omenative-decoder", "Yes"),
        ]

    def test_the_isvc_form_applies_the_deployment_mode(self) -> None:
        service = isvc("llama-3-2-3b-instruct", namespace="team-a", deployment_mode="OMENative")
        got = explain_isvc(self.SOURCES, service)
        assert table(got) == [
            ("hopper-only", "Cluster", "Yes", "1", "2", "-"),
            ("no-classes", "Cluster", "Yes", "1", "2", "-"),
            ("omenative-decoder", "Cluster", "Yes", "1", "2", "-"),  # no spec.decoder: the decoder is not compared
            (
                "multinode",
                "Cluster",
                "No",
                "-",
                "-",
                "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative",
            ),
        ]

    def test_the_isvc_form_applies_the_accelerator_class(self) -> None:
        service = isvc("llama-3-2-3b-instruct", namespace="team-a", accelerator_class="nvidia-h100")
        got = explain_isvc(self.SOURCES, service)
        assert table(got) == [
            ("hopper-only", "Cluster", "Yes", "1", "2", "-"),
            ("multinode", "Cluster", "No", "-", "-", "runtime does not support the required accelerator class"),
            ("no-classes", "Cluster", "No", "-", "-", "runtime does not support the required accelerator class"),
            ("omenative-decoder", "Cluster", "No", "-", "-", "runtime does not support the required accelerator class"),
        ]

    def test_the_other_checks_still_apply(self) -> None:
        """disabled, format and size reasons, in the documented order (disabled first)."""
        sources = [
            model(namespace="team-a"),
            runtime("off-and-wrong", entry(architecture="MistralForCausalLM"), disabled=True, classes=[]),
            runtime("wrong-arch", entry(architecture="MistralForCausalLM"), engine_mode="MultiNode"),
        ]
        got = explain_model(sources, "llama-3-2-3b-instruct", "team-a")
        assert table(got) == [
            ("off-and-wrong", "Cluster", "No", "-", "-", "runtime is disabled"),
            (
                "wrong-arch",
                "Cluster",
                "No",
                "-",
                "-",
                "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: "
                "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
            ),
        ]


class TestColumns:
    """PRIORITY: the first matching entry's priority, or 1; WEIGHT: that entry's format plus
    framework weight, each times the priority, leaving out weights of 0 or less (so it can differ
    from the score)."""

    def test_priority_and_weight(self) -> None:
        sources = [
            model(namespace="team-a"),
            runtime("zero-weight", entry(format=spec_of("safetensors", "1.0.0", weight=0), priority=3)),
            runtime("no-priority", entry()),
        ]
        got = explain_model(sources, "llama-3-2-3b-instruct", "team-a")
        assert table(got) == [
            ("zero-weight", "Cluster", "Yes", "3", "3", "-"),
            ("no-priority", "Cluster", "Yes", "1", "2", "-"),
        ]
        assert [r.score for r in got.runtimes] == [33, 2]  # a weight of 0 counts as 10 in the score

    def test_score_reasons(self) -> None:
        sources = [
            model(namespace="team-a"),
            runtime("negative", entry(format=spec_of("safetensors", "1.0.0", weight=-5))),
            runtime("other-entry", entry(auto_select=False), entry(format=("gguf", "1.0.0"), auto_select=True)),
        ]
        got = explain_model(sources, "llama-3-2-3b-instruct", "team-a")
        assert table(got) == [
            ("negative", "Cluster", "No", "-", "-", "auto-select score is 0"),
            (
                "other-entry",
                "Cluster",
                "No",
                "-",
                "-",
                "matching format safetensors is not autoSelect-enabled (a different supportedModelFormats entry on this "
                "runtime has autoSelect=true, but not the one that matches this model)",
            ),
        ]


class TestTroubleshootPageExample:
    def test_qwen2_5_7b(self) -> None:
        """troubleshoot-runtime-selection.md, Step 3 (unwrapped)."""
        got = explain_model(troubleshoot_qwen_sources(), "qwen2-5-7b", "demo")
        assert table(got) == QWEN2_5_7B_EXPLAIN_TABLE


class TestModelLookup:
    def test_basemodel_first_then_clusterbasemodel(self) -> None:
        """ "explain --model looks in that namespace for a BaseModel with the name, then for a
        ClusterBaseModel"."""
        cluster = model(namespace=None, architecture="MistralForCausalLM")
        got = explain_model([model(namespace="team-a"), cluster, runtime("rt")], "llama-3-2-3b-instruct", "team-a")
        assert (got.model.kind, got.model.namespace) == ("BaseModel", "team-a")
        assert table(got)[0][2] == "Yes"
        got = explain_model([model(namespace="team-a"), cluster, runtime("rt")], "llama-3-2-3b-instruct", "team-b")
        assert (got.model.kind, got.model.namespace) == ("ClusterBaseModel", "")
        assert table(got)[0][2] == "No"

    def test_unknown_model(self) -> None:
        """ "... fails with the API server's error, such as clusterbasemodels.ome.io
        "llama-3-2-3b-instruct" not found"."""
        with pytest.raises(RequestError) as raised:
            explain_model([runtime("rt"), model(namespace="team-b")], "llama-3-2-3b-instruct", "team-a")
        assert (raised.value.code, raised.value.message) == (
            "NOT_FOUND",
            'clusterbasemodels.ome.io "llama-3-2-3b-instruct" not found',
        )

    def test_unknown_model_through_the_isvc(self) -> None:
        service = isvc("llama-3-2-3b-instruct", namespace="team-a", name="llama-chat")
        with pytest.raises(RequestError) as raised:
            explain_isvc([runtime("rt")], service)
        assert (raised.value.code, raised.value.message) == (
            "NOT_FOUND",
            'clusterbasemodels.ome.io "llama-3-2-3b-instruct" not found',
        )


class TestNotesAndErrors:
    def test_no_runtimes_note(self) -> None:
        """ "When there are no runtimes at all, it prints no table, writes No serving runtimes found
        in the selected namespace or at cluster scope. to stderr, and exits 0"."""
        got = explain_model([model(namespace="team-a")], "llama-3-2-3b-instruct", "team-a")
        assert (list(got.runtimes), list(got.notes)) == ([], [NO_RUNTIMES_NOTE])

    def test_other_namespaces_runtimes_do_not_count(self) -> None:
        got = explain_model(
            [model(namespace="team-a"), runtime("elsewhere", namespace="team-b")], "llama-3-2-3b-instruct", "team-a"
        )
        assert (list(got.runtimes), list(got.notes)) == ([], [NO_RUNTIMES_NOTE])

    def test_explicit_runtime_note_and_no_runtimes_note(self) -> None:
        service = isvc("llama-3-2-3b-instruct", namespace="team-a", name="llama-chat", runtime_name="vllm-llama")
        got = explain_isvc([model(namespace="team-a")], service)
        assert list(got.notes) == [EXPLICIT_NOTE, NO_RUNTIMES_NOTE]

    def test_no_explicit_note_for_auto_selection(self) -> None:
        got = explain_isvc(TEAM_A, isvc("llama-3-2-3b-instruct", namespace="team-a", name="llama-chat"))
        assert list(got.notes) == []

    def test_no_explicit_note_with_model(self) -> None:
        got = explain_model(TEAM_A, "llama-3-2-3b-instruct", "team-a")
        assert EXPLICIT_NOTE not in got.notes

    @pytest.mark.parametrize("both", [False, True], ids=["neither", "both"])
    def test_exactly_one_of_model_or_isvc(self, both: bool) -> None:
        request = pb.ExplainRuntimesRequest()
        if both:
            request.model.CopyFrom(pb.ModelLookup(name="llama-3-2-3b-instruct", namespace="team-a"))
            request.inference_service.CopyFrom(inference_service(isvc("llama-3-2-3b-instruct", namespace="team-a")))
        with pytest.raises(RequestError) as raised:
            selection.explain_runtimes(load(*TEAM_A).snapshot, request)
        assert raised.value.code == "INVALID_ARGUMENT"
        assert [v.description for v in raised.value.violations] == [
            "exactly one of model or inference_service is required"
        ]

    def test_isvc_without_spec_model(self) -> None:
        service = isvc(None, namespace="team-a", name="llama-chat", runtime_name="vllm-llama")
        with pytest.raises(RequestError) as raised:
            explain_isvc(TEAM_A, service)
        assert raised.value.code == "INVALID_ARGUMENT"
        assert [v.description for v in raised.value.violations] == [
            'InferenceService "llama-chat" has no spec.model; pass --model instead'
        ]

    def test_model_without_format(self) -> None:
        formatless = model(namespace="team-a", format=None)
        got = explain_model([formatless, runtime("rt")], "llama-3-2-3b-instruct", "team-a")
        assert got.model_error == "invalid model specification: modelFormat.name: model format name is required"
        assert list(got.runtimes) == []
