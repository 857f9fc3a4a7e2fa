"""runtime-selection-scoring.md: the score formula, the ranking order, the tie-breaks, the worked
example and its ``kubectl ome runtime explain --model`` table; ome-selection-facts.md 3.12-3.14
and the worked example of 3.19.
"""

from __future__ import annotations

import pytest
from helpers_docs import (
    LLAMA_3_2_3B_BASEMODEL,
    NS,
    domain_entry,
    domain_model,
    domain_runtime_spec,
    domain_spec,
    entry,
    explain,
    isvc,
    load,
    model,
    ranking,
    runtime,
    select,
    spec_of,
    table,
    worked_example_runtimes,
)
from ome.selector.v1 import selector_pb2
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.rules.model_format import fit_model

SR = selector_pb2.RUNTIME_KIND_SERVING_RUNTIME
CSR = selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
TB = selector_pb2.TieBreak


def candidates(response: selector_pb2.SelectRuntimeResponse) -> list[tuple[str, int]]:
    return [(c.runtime.name, c.score) for c in response.candidates]


def fmt(weight: int | None = None, version: str = "1.0.0") -> dict:
    return spec_of("safetensors", version, weight=weight)


def fw(weight: int | None = None, version: str = "4.45.0.dev0") -> dict:
    return spec_of("transformers", version, weight=weight)


# ---- "How the score is computed" -------------------------------------------------------------


class TestScoreFormula:
    @pytest.mark.parametrize(
        ("format_weight", "framework_weight", "priority", "score"),
        [
            (None, None, None, 2),  # defaults: (1 + 1) x 1
            (None, None, 3, 6),  # (1 + 1) x 3
            (2, None, 2, 6),  # vllm-llama: (2 + 1) x 2 = 6
            (0, None, 1, 11),  # format weight 0 counts as 10
            (None, 0, 1, 6),  # framework weight 0 counts as 5
            (0, 0, 2, 30),  # (10 + 5) x 2
            (5, 7, 3, 36),
            (-1, 3, 1, 2),  # a negative weight lowers the score
            (3, -1, 2, 4),
            (-1, 2, 3, 3),
        ],
    )
    def test_score(
        self, format_weight: int | None, framework_weight: int | None, priority: int | None, score: int
    ) -> None:
        rt = runtime("rt", entry(format=fmt(format_weight), framework=fw(framework_weight), priority=priority))
        got = select([rt, model()], isvc())
        assert (got.selection.runtime.name, got.selection.score, candidates(got)) == ("rt", score, [("rt", score)])

    def test_weight_0_raises_the_score_rather_than_switching_the_weight_off(self) -> None:
        zero = runtime("zero", entry(format=fmt(0)))
        one = runtime("one", entry(format=fmt(1)))
        got = select([zero, one, model()], isvc())
        assert candidates(got) == [("zero", 11), ("one", 2)]

    @pytest.mark.parametrize(("format_weight", "framework_weight"), [(-1, -1), (-3, 1), (1, -1), (-5, 2)])
    def test_a_score_of_zero_or_less_does_not_qualify(self, format_weight: int, framework_weight: int) -> None:
        rt = runtime("rt", entry(format=fmt(format_weight), framework=fw(framework_weight)))
        got = select([rt, model()], isvc())
        assert (ranking(got), got.exclusions[0].verdict, got.exclusions[0].reasons[0].message) == (
            [],
            selector_pb2.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE,
            "auto-select score is 0",
        )

    def test_the_documented_vllm_llama_entry_scores_6(self) -> None:
        vllm = {
            "apiVersion": "ome.io/v1beta1",
            "kind": "ClusterServingRuntime",
            "metadata": {"name": "vllm-llama"},
            "spec": {
                "supportedModelFormats": [
                    {
                        "modelFormat": {"name": "safetensors", "version": "1.0.0", "weight": 2},
                        "modelFramework": {"name": "transformers", "version": "4.45.0.dev0"},
                        "modelArchitecture": "LlamaForCausalLM",
                        "autoSelect": True,
                        "priority": 2,
                    }
                ]
            },
        }
        got = select([vllm, LLAMA_3_2_3B_BASEMODEL], isvc())
        assert (got.selection.runtime.name, got.selection.score) == ("vllm-llama", 6)

    def test_the_score_is_the_highest_among_the_entries(self) -> None:
        rt = runtime("rt", entry(priority=1), entry(priority=4), entry(priority=2))
        got = select([rt, model()], isvc())
        assert (got.selection.score, got.selection.supported_model_format_index) == (8, 1)

    def test_auto_select_false_leaves_the_entry_out_of_the_score(self) -> None:
        rt = runtime("rt", entry(priority=1), entry(auto_select=False, priority=10))
        got = select([rt, model()], isvc())
        assert (got.selection.score, got.selection.supported_model_format_index) == (2, 0)

    def test_unset_auto_select_counts(self) -> None:
        rt = runtime("rt", entry(format=("gguf", "1.0.0")), entry(auto_select=None, priority=3))
        got = select([rt, model()], isvc())
        assert (got.selection.runtime.name, got.selection.score, got.selection.supported_model_format_index) == (
            "rt",
            6,
            1,
        )

    def test_unset_auto_select_alone_does_not_qualify(self) -> None:
        got = select([runtime("rt", entry(auto_select=None)), model()], isvc())
        assert ranking(got) == []

    def test_the_score_ignores_architecture_quantization_and_pipeline(self) -> None:
        """An autoSelect: true entry with the same format and framework lets OME pick the runtime
        for a model that only an autoSelect: false entry matches."""
        rt = runtime(
            "rt",
            entry(auto_select=False, priority=1),
            entry(architecture="MistralForCausalLM", quantization="fp8", pipeline={"className": "X"}, priority=5),
        )
        got = select([rt, model()], isvc())
        assert (got.selection.runtime.name, got.selection.score, got.selection.supported_model_format_index) == (
            "rt",
            10,
            1,
        )
        # explain's PRIORITY and WEIGHT come from the first matching entry instead.
        assert table(explain([rt, model()], isvc())) == [("rt", "Cluster", "Yes", "1", "2", "-")]

    def test_the_score_is_more_lenient_than_the_match_on_versions(self) -> None:
        """ome-selection-facts.md 3.12: a version on one side only does not zero the score."""
        rt = runtime("rt", entry(auto_select=False), entry(format=spec_of("safetensors"), priority=4))
        got = select([rt, model()], isvc())
        assert (got.selection.score, got.selection.supported_model_format_index) == (8, 1)

    def test_an_entry_without_model_format_scores_its_framework(self) -> None:
        """ome-selection-facts.md 3.12: no modelFormat does not by itself give 0. The CRD requires
        a modelFormat, so the cache refuses such an entry (next test); the scorer still handles
        it, as OME's Go scorer does, checked on the compiled entries."""
        spec = domain_runtime_spec(
            domain_entry(0, auto_select=False),
            domain_entry(1, format=None, framework=domain_spec("transformers", "4.45.0.dev0", weight=2), priority=3),
        )
        fit = fit_model(spec, domain_model())
        assert (fit.score, fit.score_index) == (6, 1)

    def test_the_cache_refuses_an_entry_without_model_format(self) -> None:
        rt = runtime("rt", entry(auto_select=False), entry(format=None, framework=fw(weight=2), priority=3))
        with pytest.raises(RequestError) as err:
            load(rt, model())
        assert err.value.code == "INVALID_ARGUMENT"
        assert err.value.violations == [
            FieldViolation(
                "objects[0].cluster_serving_runtime.spec.supported_model_formats[1].model_format", "Required value"
            ),
        ]

    def test_versions_count_in_the_score(self) -> None:
        # The autoSelect: true entry has another framework version: it scores 0.
        rt = runtime("rt", entry(auto_select=False), entry(framework=fw(version="4.46.0"), priority=5))
        got = select([rt, model()], isvc())
        assert ranking(got) == []
        assert got.exclusions[0].reasons[0].message == (
            "matching format safetensors is not autoSelect-enabled (a different supportedModelFormats entry on this runtime "
            "has autoSelect=true, but not the one that matches this model)"
        )


# ---- "The ranking order" ----------------------------------------------------------------------


class TestRankingOrder:
    def test_serving_runtimes_come_first_whatever_their_scores(self) -> None:
        sources = [runtime("team", entry(priority=1), namespace=NS), runtime("cluster", entry(priority=50)), model()]
        got = select(sources, isvc())
        assert candidates(got) == [("team", 2), ("cluster", 100)]
        assert [c.tie_break for c in got.candidates] == [TB.TIE_BREAK_UNSPECIFIED, TB.TIE_BREAK_SCOPE]

    def test_serving_runtimes_rank_by_score_among_themselves(self) -> None:
        sources = [
            runtime("a-low", entry(priority=1), namespace=NS),
            runtime("z-high", entry(priority=2), namespace=NS),
            runtime("cluster", entry(priority=9)),
            model(),
        ]
        got = select(sources, isvc())
        assert candidates(got) == [("z-high", 4), ("a-low", 2), ("cluster", 18)]
        assert [c.rank for c in got.candidates] == [1, 2, 3]
        assert [c.tie_break for c in got.candidates] == [
            TB.TIE_BREAK_UNSPECIFIED,
            TB.TIE_BREAK_SCORE,
            TB.TIE_BREAK_SCOPE,
        ]

    def test_serving_runtimes_of_other_namespaces_are_not_considered(self) -> None:
        sources = [runtime("elsewhere", entry(priority=9), namespace="other"), runtime("cluster"), model()]
        got = select(sources, isvc())
        assert ranking(got) == ["cluster"]
        assert [e.runtime.name for e in got.exclusions] == []

    def test_higher_score_comes_first(self) -> None:
        got = select([runtime("a"), runtime("b", entry(priority=2)), model()], isvc())
        assert candidates(got) == [("b", 4), ("a", 2)]


# ---- "Tie-breaks" ------------------------------------------------------------------------------


class TestTieBreaks:
    def test_narrowest_range_comes_first(self) -> None:
        sources = [
            runtime("a-wide", size=("1B", "70B")),
            runtime("b-narrow", size=("3B", "4B")),
            runtime("c-mid", size=("2B", "8B")),
            model(),
        ]
        got = select(sources, isvc())
        assert [(c.runtime.name, c.size_distance) for c in got.candidates] == [
            ("b-narrow", 1e9),
            ("c-mid", 6e9),
            ("a-wide", 69e9),
        ]
        assert [c.tie_break for c in got.candidates] == [
            TB.TIE_BREAK_UNSPECIFIED,
            TB.TIE_BREAK_SIZE_DISTANCE,
            TB.TIE_BREAK_SIZE_DISTANCE,
        ]

    def test_no_range_beats_any_range(self) -> None:
        sources = [runtime("a-tight", size=("3.2B", "3.3B")), runtime("z-none"), model()]
        got = select(sources, isvc())
        assert [(c.runtime.name, c.size_distance) for c in got.candidates] == [
            ("z-none", 0.0),
            ("a-tight", pytest.approx(1e8)),
        ]

    def test_a_range_with_one_bound_counts_the_distance_to_that_bound(self) -> None:
        sources = [
            runtime("a-max-only", size=(None, "70B")),  # 66.79B
            runtime("b-both", size=("2B", "4B")),  # 2B
            runtime("c-min-only", size=("3B", None)),  # 0.21B
            runtime("d-max-close", size=(None, "4B")),  # 0.79B
            model(),
        ]
        got = select(sources, isvc())
        assert [(c.runtime.name, c.size_distance) for c in got.candidates] == [
            ("c-min-only", pytest.approx(0.21e9)),
            ("d-max-close", pytest.approx(0.79e9)),
            ("b-both", pytest.approx(2e9)),
            ("a-max-only", pytest.approx(66.79e9)),
        ]

    def test_size_distance_applies_only_to_a_model_with_a_size(self) -> None:
        sources = [runtime("b-none"), runtime("a-ranged", size=("1B", "70B")), model(size=None)]
        got = select(sources, isvc())
        assert ranking(got) == ["a-ranged", "b-none"]
        assert [c.HasField("size_distance") for c in got.candidates] == [False, False]
        assert got.candidates[1].tie_break == TB.TIE_BREAK_NAME

    def test_name_order_settles_the_rest(self) -> None:
        sources = [runtime("runtime-b"), runtime("runtime-c"), runtime("runtime-a"), model()]
        got = select(sources, isvc())
        assert ranking(got) == ["runtime-a", "runtime-b", "runtime-c"]
        assert [c.tie_break for c in got.candidates] == [TB.TIE_BREAK_UNSPECIFIED, TB.TIE_BREAK_NAME, TB.TIE_BREAK_NAME]

    def test_equal_ranges_tie_on_distance_then_name(self) -> None:
        sources = [runtime("b", size=("1B", "8B")), runtime("a", size=("1B", "8B")), model()]
        assert ranking(select(sources, isvc())) == ["a", "b"]

    def test_distances_differing_by_less_than_one_count_as_equal(self) -> None:
        sources = [runtime("a-wider", size=("9", "11.5")), runtime("b-narrower", size=("9", "11")), model(size="10")]
        got = select(sources, isvc())
        assert ranking(got) == ["a-wider", "b-narrower"]
        assert got.candidates[1].tie_break == TB.TIE_BREAK_NAME

    def test_a_higher_priority_settles_a_size_or_name_tie(self) -> None:
        sources = [runtime("a-none"), runtime("z-ranged", entry(priority=2), size=("1B", "8B")), model()]
        assert ranking(select(sources, isvc())) == ["z-ranged", "a-none"]

    def test_tie_breaks_apply_within_serving_runtimes_too(self) -> None:
        sources = [
            runtime("b-ranged", size=("1B", "8B"), namespace=NS),
            runtime("c-none", namespace=NS),
            runtime("a-wide", size=("1B", "70B"), namespace=NS),
            model(),
        ]
        assert ranking(select(sources, isvc())) == ["c-none", "b-ranged", "a-wide"]


# ---- "Worked example" and "Check the ranking" ----------------------------------------------------


class TestWorkedExample:
    def _sources(self) -> list:
        return [*worked_example_runtimes(), LLAMA_3_2_3B_BASEMODEL]

    def test_the_table(self) -> None:
        """Runtime | Kind | modelSizeRange | Score | Distance, in OME's order."""
        got = select(self._sources(), isvc())
        assert [(c.runtime.name, c.runtime.kind, c.score, c.size_distance) for c in got.candidates] == [
            ("team-llama", SR, 2, 0),
            ("vllm-llama", CSR, 6, 0),
            ("srt-llama-small", CSR, 6, 7e9),
            ("srt-llama-large", CSR, 6, 69e9),
        ]

    def test_ome_ranks_them_in_this_order(self) -> None:
        got = select(self._sources(), isvc())
        assert ranking(got) == ["team-llama", "vllm-llama", "srt-llama-small", "srt-llama-large"]
        assert [c.rank for c in got.candidates] == [1, 2, 3, 4]
        # 1. the only ServingRuntime; 2. ties at 6 with distance 0; 3. narrower range; 4.
        assert [c.tie_break for c in got.candidates] == [
            TB.TIE_BREAK_UNSPECIFIED,
            TB.TIE_BREAK_SCOPE,
            TB.TIE_BREAK_SIZE_DISTANCE,
            TB.TIE_BREAK_SIZE_DISTANCE,
        ]
        assert (got.selection.runtime.name, got.selection.runtime.kind, got.selection.score, got.selection.mode) == (
            "team-llama",
            SR,
            2,
            selector_pb2.SELECTION_MODE_AUTO,
        )
        assert list(got.warnings) == ["Runtime team-llama will be auto-selected for model llama-3-2-3b-instruct"]

    def test_raising_srt_llama_small_priority_to_4(self) -> None:
        runtimes = worked_example_runtimes()
        runtimes[2]["spec"]["supportedModelFormats"][0]["priority"] = 4
        got = select([*runtimes, LLAMA_3_2_3B_BASEMODEL], isvc())
        assert candidates(got) == [("team-llama", 2), ("srt-llama-small", 8), ("vllm-llama", 6), ("srt-llama-large", 6)]
        assert got.selection.runtime.name == "team-llama"

    def test_outside_llama_demo_the_first_cluster_runtime_wins(self) -> None:
        model_elsewhere = model(namespace="other")
        got = select([*worked_example_runtimes(), model_elsewhere], isvc(namespace="other"))
        assert ranking(got) == ["vllm-llama", "srt-llama-small", "srt-llama-large"]

    def test_explain_model_table(self) -> None:
        """``kubectl ome runtime explain --model llama-3-2-3b-instruct -n llama-demo``."""
        assert table(explain(self._sources(), isvc())) == [
            ("team-llama", "Namespaced", "Yes", "1", "2", "-"),
            ("vllm-llama", "Cluster", "Yes", "2", "6", "-"),
            ("srt-llama-small", "Cluster", "Yes", "3", "6", "-"),
            ("srt-llama-large", "Cluster", "Yes", "3", "6", "-"),
        ]

    def test_explain_weight_can_differ_from_the_score(self) -> None:
        rt = runtime("rt", entry(format=fmt(0), priority=2))
        got = explain([rt, model()], isvc())
        assert (got.runtimes[0].score, got.runtimes[0].priority, got.runtimes[0].weight) == (22, 2, 2)


# ---- ome-selection-facts.md 3.19 -----------------------------------------------------------------


class TestFactsWorkedExample:
    MODEL = model(
        "llama-3-3-70b-instruct",
        namespace=None,
        framework=("transformers", "4.47.0.dev0"),
        size="70B",
    )

    def _runtimes(self) -> list:
        e = lambda **kw: entry(framework=("transformers", "4.47.0.dev0"), **kw)  # noqa: E731
        return [
            runtime("a", e(priority=1), size=("60B", "75B")),
            runtime("b", e(priority=2), size=("60B", "75B")),
            runtime("c", e(priority=2)),
            runtime("d", e(priority=5, auto_select=False), size=("60B", "75B")),
            runtime("e", e(architecture="MistralForCausalLM")),
        ]

    def test_order_is_c_b_a(self) -> None:
        got = select([*self._runtimes(), self.MODEL], isvc("llama-3-3-70b-instruct"))
        assert [(c.runtime.name, c.score, c.size_distance) for c in got.candidates] == [
            ("c", 4, 0),
            ("b", 4, 15e9),
            ("a", 2, 15e9),
        ]

    def test_d_is_compatible_but_not_a_candidate_and_e_is_not_compatible(self) -> None:
        got = select([*self._runtimes(), self.MODEL], isvc("llama-3-3-70b-instruct"))
        assert [(x.runtime.name, x.verdict, x.reasons[0].message) for x in got.exclusions] == [
            (
                "d",
                selector_pb2.VERDICT_COMPATIBLE_NOT_AUTO_SELECTABLE,
                "supports the model but has no supportedModelFormats[].autoSelect=true entry, so automatic selection skips it (pin it explicitly via spec.runtime.name instead)",
            ),
            (
                "e",
                selector_pb2.VERDICT_EXCLUDED,
                "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0' not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)",
            ),
        ]

    def test_d_never_appears_in_an_exclusion_list(self) -> None:
        runtimes = [r for r in self._runtimes() if r["metadata"]["name"] in ("d", "e")]
        got = select([*runtimes, self.MODEL], isvc("llama-3-3-70b-instruct"))
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: e (model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.47.0.dev0' "
            "not in supported formats: architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM))"
        )

    def test_a_namespaced_runtime_n_comes_first(self) -> None:
        n = runtime("n", entry(framework=("transformers", "4.47.0.dev0")), namespace=NS)
        got = select([*self._runtimes(), n, self.MODEL], isvc("llama-3-3-70b-instruct"))
        assert candidates(got) == [("n", 2), ("c", 4), ("b", 4), ("a", 2)]
