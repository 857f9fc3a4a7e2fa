"""One test class per page of ome-docs/reference/matching/: every table row and every quoted
message, asserted through ``api.select_runtime`` / ``api.explain_runtimes`` on inputs built as
the page describes them.

Verdicts are read from the explain rows: ("Yes", "-") for a runtime auto-selection can choose,
("No", <REASON>) otherwise, exactly as ``kubectl ome runtime explain`` prints them.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from helpers_docs import (
    ACCELERATOR_REASON,
    LLAMA_3_2_3B_BASEMODEL,
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_HOPPER,
    LLAMA_3_3_70B_ISVC,
    LLAMA_3_70B_ISVC,
    MODEL_VERSION_EXAMPLES,
    NO_AUTO_SELECT_ENTRY,
    NS,
    QWEN_IMAGE_PVC,
    SRT_LLAMA_3_2_1B_INSTRUCT,
    SRT_LLAMA_3_2_3B_INSTRUCT,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_LLAMA_3_3_70B_MULTINODE,
    SRT_QWEN_IMAGE,
    SRT_QWEN_IMAGE_PIPELINE,
    catalog,
    entry,
    explain,
    inference_service,
    isvc,
    model,
    objects,
    ranking,
    row,
    runtime,
    select,
    spec_of,
    verdict_and_reason,
    worked_example_runtimes,
)
from ome.selector.v1 import selector_pb2
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.engine import evaluation as engine
from ome_selector.texts import messages

YES = ("Yes", "-")
LABEL = "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0"


def verdict(runtimes: list[Any], models: list[Any], service: Any, name: str) -> tuple[str, str]:
    return verdict_and_reason(explain([*runtimes, *models], service), name)


def no(reason: str) -> tuple[str, str]:
    return ("No", reason)


def one_runtime_verdict(rt: dict, mdl: dict, service: dict | None = None) -> tuple[str, str]:
    """Verdict of the single runtime ``rt`` for the model ``mdl``."""
    service = service or isvc(mdl["metadata"]["name"], namespace=mdl["metadata"].get("namespace", NS))
    return verdict([rt], [mdl], service, rt["metadata"]["name"])


def format_reason(label: str, *entry_texts: str) -> str:
    return f"model format '{label}' not in supported formats: " + "; ".join(entry_texts)


# =============================================================================================
# model-version-matching.md


class TestModelVersionMatching:
    # ---- "Where versions and operators are declared" table -----------------------------------

    @pytest.mark.parametrize("what", ["format", "framework"])
    def test_where_declared_row(self, what: str) -> None:
        """Format: spec.modelFormat.version vs supportedModelFormats[].modelFormat.version and
        .operator; Framework: the same with modelFramework."""

        def versions(entry_version: str, operator: str | None = None) -> dict:
            return spec_of("safetensors" if what == "format" else "transformers", entry_version, operator)

        if what == "format":
            rt = runtime("rt", entry(format=versions("1.8.0", "GreaterThan")))
            accepted = one_runtime_verdict(rt, model(format=versions("1.7.0")))
            refused = one_runtime_verdict(rt, model(format=versions("1.9.0")))
        else:
            rt = runtime("rt", entry(framework=versions("1.8.0", "GreaterThan")))
            accepted = one_runtime_verdict(rt, model(framework=versions("1.7.0")))
            refused = one_runtime_verdict(rt, model(framework=versions("1.9.0")))
        label = {
            "format": "mt:safetensors:1.9.0:LlamaForCausalLM:transformers:4.45.0.dev0",
            "framework": "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:1.9.0",
        }[what]
        assert accepted == YES
        assert refused == no(format_reason(label, f"{what} version mismatch (model=1.9.0, runtime=1.8.0)"))

    def test_selection_ignores_entry_name_and_version_and_model_operator_and_spec_version(self) -> None:
        rt = runtime("rt", entry(name="not-the-model", version="9.9.9", format=spec_of("safetensors", "1.0")))
        mdl = model(format=spec_of("safetensors", "1.0.0", "GreaterThan"), spec={"version": "7.0.0"})
        assert one_runtime_verdict(rt, mdl) == YES

    def test_the_docs_base_model_and_catalog_entry(self) -> None:
        """The catalog runtime srt-llama-3-2-3b-instruct accepts the BaseModel; it sets
        autoSelect: false, so OME uses it only for an InferenceService that names it."""
        store_sources = [catalog(SRT_LLAMA_3_2_3B_INSTRUCT), LLAMA_3_2_3B_BASEMODEL]
        assert verdict(store_sources, [], isvc(), "srt-llama-3-2-3b-instruct") == no(NO_AUTO_SELECT_ENTRY)
        named = select(store_sources, isvc(runtime_name="srt-llama-3-2-3b-instruct"))
        assert (named.selection.runtime.name, list(named.warnings), named.runtime_error) == (
            "srt-llama-3-2-3b-instruct",
            [],
            "",
        )

    def test_names_are_case_sensitive(self) -> None:
        got = one_runtime_verdict(runtime("rt"), model(format=("SafeTensors", "1.0.0")))
        assert got == no(
            format_reason(
                "mt:SafeTensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0",
                "format name mismatch (model=SafeTensors, runtime=safetensors)",
            )
        )

    # ---- the versions table (Model's version | Entry's version | Result) ---------------------

    @pytest.mark.parametrize(
        ("model_version", "entry_version", "expected"),
        [
            ("1.0.0", "1.0.0", YES),  # Set | Set: compared with the operator
            (
                "2.0.0",
                "1.0.0",
                no(
                    format_reason(
                        "mt:safetensors:2.0.0:LlamaForCausalLM:transformers:4.45.0.dev0",
                        "format version mismatch (model=2.0.0, runtime=1.0.0)",
                    )
                ),
            ),
            (None, None, YES),  # Not set | Not set: they match
            (
                None,
                "1.0.0",
                no(
                    format_reason(
                        "mt:safetensors:LlamaForCausalLM:transformers:4.45.0.dev0",
                        "model has no format version but runtime requires 1.0.0",
                    )
                ),
            ),
            (
                "1.0.0",
                None,
                no(format_reason(LABEL, "model has format version but runtime has no version requirement")),
            ),
        ],
        ids=["set-set-equal", "set-set-compared", "unset-unset", "unset-set", "set-unset"],
    )
    def test_versions_table_row_format(
        self, model_version: str | None, entry_version: str | None, expected: tuple[str, str]
    ) -> None:
        rt = runtime("rt", entry(format=spec_of("safetensors", entry_version)))
        assert one_runtime_verdict(rt, model(format=spec_of("safetensors", model_version))) == expected

    @pytest.mark.parametrize(
        ("model_version", "entry_version", "expected"),
        [
            ("4.45.0.dev0", "4.45.0.dev0", YES),
            (
                "4.46.0",
                "4.45.0.dev0",
                no(
                    format_reason(
                        "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0",
                        "framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)",
                    )
                ),
            ),
            (None, None, YES),
            (
                None,
                "4.45.0.dev0",
                no(
                    format_reason(
                        "mt:safetensors:1.0.0:LlamaForCausalLM:transformers",
                        "model has no framework version but runtime requires 4.45.0.dev0",
                    )
                ),
            ),
            (
                "4.45.0.dev0",
                None,
                no(format_reason(LABEL, "model has framework version but runtime has no version requirement")),
            ),
        ],
        ids=["set-set-equal", "set-set-compared", "unset-unset", "unset-set", "set-unset"],
    )
    def test_versions_table_row_framework(
        self, model_version: str | None, entry_version: str | None, expected: tuple[str, str]
    ) -> None:
        rt = runtime("rt", entry(framework=spec_of("transformers", entry_version)))
        assert one_runtime_verdict(rt, model(framework=spec_of("transformers", model_version))) == expected

    def test_a_model_needs_a_framework_to_match_any_entry(self) -> None:
        got = one_runtime_verdict(runtime("rt"), model(framework=None))
        assert got == no(
            format_reason(
                "mt:safetensors:1.0.0:LlamaForCausalLM", "model has no framework but runtime requires transformers"
            )
        )

    # ---- "Operators" table -------------------------------------------------------------------

    @staticmethod
    def _framework_case(entry_version: str, operator: str | None, model_version: str) -> tuple[str, str]:
        rt = runtime("rt", entry(framework=spec_of("transformers", entry_version, operator)))
        return one_runtime_verdict(rt, model(framework=("transformers", model_version)))

    @staticmethod
    def _framework_refusal(entry_version: str, model_version: str) -> tuple[str, str]:
        return no(
            format_reason(
                f"mt:safetensors:1.0.0:LlamaForCausalLM:transformers:{model_version}",
                f"framework version mismatch (model={model_version}, runtime={entry_version})",
            )
        )

    @pytest.mark.parametrize(
        ("entry_version", "model_version", "matches"),
        [
            ("1.0.0", "1.0.0", True),
            ("1.0", "1.0.0", True),  # a missing part counts as 0
            ("v1.0.0", "1.0.0", True),  # the v is ignored
            ("4.43.0+build", "4.43.0+build", True),
            ("4.43.0+build", "4.43.0+other", False),  # suffixes identical, the build included
            ("4.45.0.dev0", "4.45.0", False),
        ],
    )
    @pytest.mark.parametrize("operator", ["Equal", None])
    def test_operators_row_equal_the_default(
        self, operator: str | None, entry_version: str, model_version: str, matches: bool
    ) -> None:
        expected = YES if matches else self._framework_refusal(entry_version, model_version)
        assert self._framework_case(entry_version, operator, model_version) == expected

    @pytest.mark.parametrize(
        ("entry_version", "model_version", "matches"),
        [("1.8.0", "1.7.0", True), ("1.8.0", "1.8.0", False), ("1.8.0", "1.9.0", False)],
    )
    def test_operators_row_greater_than(self, entry_version: str, model_version: str, matches: bool) -> None:
        expected = YES if matches else self._framework_refusal(entry_version, model_version)
        assert self._framework_case(entry_version, "GreaterThan", model_version) == expected

    @pytest.mark.parametrize(
        ("entry_version", "model_version", "matches"),
        [("1.8.0", "1.7.0", True), ("1.8.0", "1.8.0", True), ("1.8.0", "1.9.0", False)],
    )
    def test_operators_row_greater_than_or_equal(self, entry_version: str, model_version: str, matches: bool) -> None:
        expected = YES if matches else self._framework_refusal(entry_version, model_version)
        assert self._framework_case(entry_version, "GreaterThanOrEqual", model_version) == expected

    @pytest.mark.parametrize("operator", ["LessThan", "equal"])
    @pytest.mark.parametrize(
        ("entry_version", "model_version", "matches"),
        [
            ("1.0.0", "1.0.0", True),
            ("1.0.0", "0.9.0", False),
            ("1.0", "1.0.0", False),  # same number of parts required
            ("v1.0.0", "1.0.0", False),  # and the same v
            ("4.45.0.dev0", "4.45.0.dev0", True),
        ],
    )
    def test_operators_row_any_other_value(
        self, operator: str, entry_version: str, model_version: str, matches: bool
    ) -> None:
        expected = YES if matches else self._framework_refusal(entry_version, model_version)
        assert self._framework_case(entry_version, operator, model_version) == expected

    @pytest.mark.parametrize(
        ("model_version", "matches"),
        [
            ("4.44.2", True),
            ("4.46.0", True),
            ("4.46.1", False),
            ("4.44", False),
            ("v4.44.2", False),
            ("4.45.0.dev0", False),
        ],
    )
    def test_greater_than_or_equal_4_46_0_entry(self, model_version: str, matches: bool) -> None:
        """The page's entry accepts versions up to 4.46.0 with three parts, no v and no suffix,
        such as 4.44.2, and refuses the BaseModel's 4.45.0.dev0."""
        expected = YES if matches else self._framework_refusal("4.46.0", model_version)
        assert self._framework_case("4.46.0", "GreaterThanOrEqual", model_version) == expected

    # ---- "Accepted version formats" table ------------------------------------------------------

    @pytest.mark.parametrize("version", ["1", "v1.12", "0.6.0", "v0.8.0"])
    def test_accepted_formats_row_parses(self, version: str) -> None:
        # Parses, no suffix: equal versions match, and GreaterThan refuses an equal version.
        assert self._framework_case(version, "Equal", version) == YES
        assert self._framework_case(version, "GreaterThan", version) == self._framework_refusal(version, version)

    @pytest.mark.parametrize("version", ["4.51.3-SAM-HQ-preview", "4.43.0+build", "4.45.0.dev0", "1.2.3.4"])
    def test_accepted_formats_row_parses_with_a_suffix(self, version: str) -> None:
        # With a suffix the ordering operators match only an equal version.
        assert self._framework_case(version, "Equal", version) == YES
        assert self._framework_case(version, "GreaterThan", version) == YES
        assert self._framework_case(version, "GreaterThanOrEqual", "0.0.1") == self._framework_refusal(version, "0.0.1")

    @pytest.mark.parametrize("version", ["1.08.0", "V1.0.0", "1.2-beta", "1.0.0-", ""])
    def test_accepted_formats_row_does_not_parse_never_matches(self, version: str) -> None:
        assert self._framework_case(version, "Equal", version) == self._framework_refusal(version, version)

    def test_empty_version_still_counts_as_set(self) -> None:
        rt = runtime("rt", entry(framework=spec_of("transformers", "")))
        got = one_runtime_verdict(rt, model(framework=spec_of("transformers")))
        assert got == no(
            format_reason(
                "mt:safetensors:1.0.0:LlamaForCausalLM:transformers",
                "model has no framework version but runtime requires ",
            )
        )

    # ---- "Examples" table ------------------------------------------------------------------------

    @pytest.mark.parametrize(("entry_version", "operator", "model_version", "matches"), MODEL_VERSION_EXAMPLES)
    def test_examples_row_framework(
        self, entry_version: str, operator: str | None, model_version: str, matches: bool
    ) -> None:
        expected = YES if matches else self._framework_refusal(entry_version, model_version)
        assert self._framework_case(entry_version, operator, model_version) == expected

    @pytest.mark.parametrize(("entry_version", "operator", "model_version", "matches"), MODEL_VERSION_EXAMPLES)
    def test_examples_row_format(
        self, entry_version: str, operator: str | None, model_version: str, matches: bool
    ) -> None:
        rt = runtime("rt", entry(format=spec_of("safetensors", entry_version, operator)))
        got = one_runtime_verdict(rt, model(format=("safetensors", model_version)))
        label = f"mt:safetensors:{model_version}:LlamaForCausalLM:transformers:4.45.0.dev0"
        assert got == (
            YES
            if matches
            else no(format_reason(label, f"format version mismatch (model={model_version}, runtime={entry_version})"))
        )

    def test_examples_not_set_operator_becomes_equal_on_ingestion(self) -> None:
        """Row 2: "The API sets Equal": the stored entry carries operator Equal."""
        store = CacheStore()
        store.apply_snapshot("v1", objects(runtime("rt", entry(format=spec_of("safetensors", "1.0.0")))))
        stored = store.snapshot.cluster_serving_runtimes["rt"]
        assert stored.spec.supported_model_formats[0].model_format.operator == "Equal"

    # ---- "Mismatch reasons" table ----------------------------------------------------------------

    @pytest.mark.parametrize(
        ("rt_entry", "mdl", "expected"),
        [
            (
                entry(),
                model(format=("gguf", "1.0.0")),
                format_reason(
                    "mt:gguf:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0",
                    "format name mismatch (model=gguf, runtime=safetensors)",
                ),
            ),
            (
                entry(),
                model(framework=("diffusers", "4.45.0.dev0")),
                format_reason(
                    "mt:safetensors:1.0.0:LlamaForCausalLM:diffusers:4.45.0.dev0",
                    "framework name mismatch (model=diffusers, runtime=transformers)",
                ),
            ),
            (
                entry(),
                model(format=("safetensors", "2.0.0")),
                format_reason(
                    "mt:safetensors:2.0.0:LlamaForCausalLM:transformers:4.45.0.dev0",
                    "format version mismatch (model=2.0.0, runtime=1.0.0)",
                ),
            ),
            (
                entry(),
                model(framework=("transformers", "4.46.0")),
                format_reason(
                    "mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0",
                    "framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)",
                ),
            ),
            (
                entry(),
                model(format=spec_of("safetensors")),
                format_reason(
                    "mt:safetensors:LlamaForCausalLM:transformers:4.45.0.dev0",
                    "model has no format version but runtime requires 1.0.0",
                ),
            ),
            (
                entry(),
                model(framework=spec_of("transformers")),
                format_reason(
                    "mt:safetensors:1.0.0:LlamaForCausalLM:transformers",
                    "model has no framework version but runtime requires 4.45.0.dev0",
                ),
            ),
            (
                entry(format=spec_of("safetensors")),
                model(),
                format_reason(LABEL, "model has format version but runtime has no version requirement"),
            ),
            (
                entry(framework=spec_of("transformers")),
                model(),
                format_reason(LABEL, "model has framework version but runtime has no version requirement"),
            ),
            (
                entry(),
                model(framework=None),
                format_reason(
                    "mt:safetensors:1.0.0:LlamaForCausalLM", "model has no framework but runtime requires transformers"
                ),
            ),
        ],
        ids=[
            "format-name",
            "framework-name",
            "format-version",
            "framework-version",
            "no-format-version",
            "no-framework-version",
            "format-version-no-requirement",
            "framework-version-no-requirement",
            "no-framework",
        ],
    )
    def test_mismatch_reasons_row(self, rt_entry: dict, mdl: dict, expected: str) -> None:
        assert one_runtime_verdict(runtime("rt", rt_entry), mdl) == no(expected)

    def test_mismatch_reason_for_a_malformed_version(self) -> None:
        rt = runtime("rt", entry(format=spec_of("safetensors", "1.08.0")))
        got = one_runtime_verdict(rt, model(format=("safetensors", "1.08.0")))
        assert got == no(
            format_reason(
                "mt:safetensors:1.08.0:LlamaForCausalLM:transformers:4.45.0.dev0",
                "format version mismatch (model=1.08.0, runtime=1.08.0)",
            )
        )

    def test_each_entry_differences_separated_by_semicolon(self) -> None:
        rt = runtime(
            "rt",
            entry(format=("gguf", "1.0.0")),
            entry(architecture="MistralForCausalLM", framework=("transformers", "4.36.0")),
        )
        assert one_runtime_verdict(rt, model()) == no(
            format_reason(
                LABEL,
                "format name mismatch (model=safetensors, runtime=gguf)",
                "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM), framework version mismatch (model=4.45.0.dev0, runtime=4.36.0)",
            )
        )

    QUOTED = "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.46.0' not in supported formats: framework version mismatch (model=4.46.0, runtime=4.45.0.dev0)"

    def _base_model_4_46_0(self) -> dict:
        doc = yaml.safe_load(LLAMA_3_2_3B_BASEMODEL)
        doc["spec"]["modelFramework"]["version"] = "4.46.0"
        return doc

    def test_quoted_example(self) -> None:
        got = verdict(
            [catalog(SRT_LLAMA_3_2_3B_INSTRUCT)], [self._base_model_4_46_0()], isvc(), "srt-llama-3-2-3b-instruct"
        )
        assert got == no(self.QUOTED)

    # ---- "Where a mismatch shows up" table -------------------------------------------------------

    def test_where_row_another_runtime_matches(self) -> None:
        sources = [
            catalog(SRT_LLAMA_3_2_3B_INSTRUCT),
            runtime("other", entry(framework=("transformers", "4.46.0"))),
            self._base_model_4_46_0(),
        ]
        picked = select(sources, isvc())
        assert (picked.selection.runtime.name, picked.no_runtime_message) == ("other", "")
        assert verdict_and_reason(explain(sources, isvc()), "srt-llama-3-2-3b-instruct") == no(self.QUOTED)

    def test_where_row_no_runtime_matches(self) -> None:
        picked = select([catalog(SRT_LLAMA_3_2_3B_INSTRUCT), self._base_model_4_46_0()], isvc())
        assert picked.HasField("selection") is False
        assert picked.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
            "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: srt-llama-3-2-3b-instruct ("
            + self.QUOTED
            + ")"
        )

    def test_where_row_the_inference_service_names_the_runtime(self) -> None:
        picked = select(
            [catalog(SRT_LLAMA_3_2_3B_INSTRUCT), self._base_model_4_46_0()],
            isvc(runtime_name="srt-llama-3-2-3b-instruct"),
        )
        assert (picked.selection.runtime.name, picked.selection.mode) == (
            "srt-llama-3-2-3b-instruct",
            selector_pb2.SELECTION_MODE_NAMED,
        )
        assert list(picked.warnings) == [
            'runtime "srt-llama-3-2-3b-instruct" does not declare support for model "llama-3-2-3b-instruct" '
            "(runtime srt-llama-3-2-3b-instruct does not support model safetensors: "
            + self.QUOTED
            + "); proceeding because the runtime was named explicitly"
        ]
        assert "does not declare support for model" in picked.warnings[0]


# =============================================================================================
# model-size-range-matching.md


class TestModelSizeRangeMatching:
    @staticmethod
    def _case(size_range: tuple[str | None, str | None] | None, size: str | None) -> tuple[str, str]:
        return one_runtime_verdict(runtime("rt", size=size_range), model(size=size))

    # ---- "The matching rule" table ---------------------------------------------------------------

    def test_matching_rule_row_min_rejects_a_model_below_it(self) -> None:
        assert self._case(("2B", None), "1B") == no("model size 1B is outside supported range [2B, inf)")
        assert self._case(("2B", None), "2B") == YES

    def test_matching_rule_row_max_rejects_a_model_above_it(self) -> None:
        assert self._case((None, "4B"), "5B") == no("model size 5B is outside supported range (-inf, 4B]")
        assert self._case((None, "4B"), "4B") == YES

    def test_matching_rule_row_model_parameter_size_is_compared(self) -> None:
        """The catalog runtime srt-llama-3-2-3b-instruct (2B to 4B) and the BaseModel (3.21B)."""
        sources = [catalog(SRT_LLAMA_3_2_3B_INSTRUCT), LLAMA_3_2_3B_BASEMODEL]
        # Passes the size check: its only remaining reason is the missing autoSelect.
        assert verdict(sources, [], isvc(), "srt-llama-3-2-3b-instruct") == no(NO_AUTO_SELECT_ENTRY)

    def test_min_above_max_rejects_any_model_with_a_size(self) -> None:
        assert self._case(("4B", "2B"), "3B") == no("model size 3B is outside supported range [4B, 2B]")
        assert self._case(("4B", "2B"), None) == YES

    def test_a_runtime_without_a_range_passes_every_model(self) -> None:
        assert [self._case(None, s) for s in ("1M", "3.21B", "1.5T")] == [YES, YES, YES]

    def test_one_range_covers_every_entry(self) -> None:
        rt = runtime("rt", entry(priority=1), entry(priority=2), size=("500M", "2B"))
        assert one_runtime_verdict(rt, model()) == no("model size 3.21B is outside supported range [500M, 2B]")

    # ---- "Units and format" table ------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("bound", "same_count", "above"),
        [("500M", "0.5B", "501M"), ("3.21B", "3210M", "3.22B"), ("1.5T", "1500B", "1.6T"), ("999", "999", "1000")],
        ids=["M", "B", "T", "None"],
    )
    def test_units_row(self, bound: str, same_count: str, above: str) -> None:
        assert self._case((bound, bound), same_count) == YES
        assert self._case((bound, bound), above) == no(
            f"model size {above} is outside supported range [{bound}, {bound}]"
        )

    def test_units_1500m_model_passes_min_1b(self) -> None:
        assert self._case(("1B", None), "1500M") == YES

    # ---- warning: OME reads a value it can't parse as 0 -------------------------------------------

    def test_max_4b_rejects_every_model_with_a_valid_size(self) -> None:
        assert self._case(("2B", "4b"), "3.21B") == no("model size 3.21B is outside supported range [2B, 4b]")
        assert self._case(("2B", "4b"), "2B") == no("model size 2B is outside supported range [2B, 4b]")

    def test_min_2b_sets_no_lower_limit(self) -> None:
        assert self._case(("2b", "4B"), "1M") == YES

    # ---- "Examples" table --------------------------------------------------------------------------

    @pytest.mark.parametrize(
        ("minimum", "maximum", "size", "expected"),
        [
            ("2B", "4B", "3.21B", YES),
            ("2B", "4B", "4B", YES),
            ("500M", "2B", "3.21B", no("model size 3.21B is outside supported range [500M, 2B]")),
            ("1B", "4B", "1500M", YES),
            ("70B", None, "405B", YES),
            (None, "13B", "3.21B", YES),
            ("2B", "4B", None, YES),
        ],
    )
    def test_examples_row(
        self, minimum: str | None, maximum: str | None, size: str | None, expected: tuple[str, str]
    ) -> None:
        assert self._case((minimum, maximum), size) == expected

    # ---- "Where a rejection shows up" ----------------------------------------------------------------

    QUOTED = "model size 3.21B is outside supported range [500M, 2B]"

    def test_quoted_reason_for_catalog_srt_llama_3_2_1b_instruct(self) -> None:
        got = verdict(
            [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_3B_BASEMODEL], [], isvc(), "srt-llama-3-2-1b-instruct"
        )
        assert got == no(self.QUOTED)

    def test_a_bound_left_out_shows_as_inf(self) -> None:
        assert self._case(("70B", None), "3.21B") == no("model size 3.21B is outside supported range [70B, inf)")
        assert self._case((None, "2B"), "3.21B") == no("model size 3.21B is outside supported range (-inf, 2B]")

    def test_size_is_checked_after_the_model_format(self) -> None:
        rt = runtime("rt", entry(architecture="MistralForCausalLM"), size=("500M", "2B"))
        r = row(explain([rt, model()], isvc()), "rt")
        assert r.reason == format_reason(
            LABEL, "architecture mismatch (model=LlamaForCausalLM, runtime=MistralForCausalLM)"
        )
        assert [(x.check, x.primary) for x in r.reasons] == [
            (selector_pb2.CHECK_MODEL_FORMAT, True),
            (selector_pb2.CHECK_MODEL_SIZE, False),
        ]

    def test_where_row_another_runtime_passes(self) -> None:
        sources = [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), runtime("other"), LLAMA_3_2_3B_BASEMODEL]
        assert select(sources, isvc()).selection.runtime.name == "other"
        assert verdict_and_reason(explain(sources, isvc()), "srt-llama-3-2-1b-instruct") == no(self.QUOTED)

    def test_where_row_no_runtime_passes(self) -> None:
        got = select([catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_3B_BASEMODEL], isvc())
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
            "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: srt-llama-3-2-1b-instruct (model size 3.21B is outside supported range [500M, 2B])"
        )

    def test_where_row_the_inference_service_names_the_runtime(self) -> None:
        got = select(
            [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_3B_BASEMODEL], isvc(runtime_name="srt-llama-3-2-1b-instruct")
        )
        assert got.selection.runtime.name == "srt-llama-3-2-1b-instruct"
        assert list(got.warnings) == [
            'runtime "srt-llama-3-2-1b-instruct" does not declare support for model "llama-3-2-3b-instruct" '
            "(runtime srt-llama-3-2-1b-instruct does not support model safetensors: model size 3.21B is outside supported range [500M, 2B]); "
            "proceeding because the runtime was named explicitly"
        ]


# =============================================================================================
# diffusion-pipeline-runtime-matching.md

DIFFUSERS = ("diffusers", "0.34.0.dev0")
QWEN_LABEL = "mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0"


def diffusion_entry(pipeline: dict | None, **kw: Any) -> dict:
    kw.setdefault("architecture", "QwenImagePipeline")
    return entry(format=DIFFUSERS, framework=DIFFUSERS, pipeline=pipeline, **kw)


def diffusion_model(pipeline: dict | None, **kw: Any) -> dict:
    kw.setdefault("architecture", "QwenImagePipeline")
    return model(
        "qwen-image", namespace=None, format=DIFFUSERS, framework=DIFFUSERS, size=None, pipeline=pipeline, **kw
    )


def pipeline_case(entry_pipeline: dict | None, model_pipeline: dict | None) -> tuple[str, str]:
    return one_runtime_verdict(
        runtime("rt", diffusion_entry(entry_pipeline)), diffusion_model(model_pipeline), isvc("qwen-image")
    )


def pipeline_refusal(reason: str) -> tuple[str, str]:
    return no(format_reason(QWEN_LABEL, reason))


FULL_PIPELINE = {
    "className": "QwenImagePipeline",
    "scheduler": {"library": "diffusers", "type": "FlowMatchEulerDiscreteScheduler"},
    "textEncoder": {"library": "transformers", "type": "Qwen2_5_VLForConditionalGeneration"},
    "tokenizer": {"library": "transformers", "type": "Qwen2Tokenizer"},
    "transformer": {"library": "diffusers", "type": "QwenImageTransformer2DModel"},
    "vae": {"library": "diffusers", "type": "AutoencoderKLQwenImage"},
    "additionalComponents": {"safety_checker": {"library": "diffusers", "type": "StableDiffusionSafetyChecker"}},
}


class TestDiffusionPipelineRuntimeMatching:
    # ---- "The matching rule" table ---------------------------------------------------------------

    def test_rule_row_diffusion_pipeline_even_empty(self) -> None:
        refusal = pipeline_refusal("diffusion pipeline required by runtime but not specified in model")
        assert pipeline_case({}, None) == refusal
        assert pipeline_case({"className": "QwenImagePipeline"}, None) == refusal
        assert pipeline_case({}, {}) == YES
        assert pipeline_case({}, FULL_PIPELINE) == YES

    def test_rule_row_class_name(self) -> None:
        assert pipeline_case(
            {"className": "QwenImagePipeline"}, {"className": "QwenImageEditPipeline"}
        ) == pipeline_refusal("pipeline class mismatch (model=QwenImageEditPipeline, runtime=QwenImagePipeline)")
        assert pipeline_case(
            {"className": "QwenImagePipeline"}, {"transformer": {"library": "diffusers"}}
        ) == pipeline_refusal("pipeline class mismatch (model=<nil>, runtime=QwenImagePipeline)")
        assert pipeline_case({"className": "QwenImagePipeline"}, {"className": "QwenImagePipeline"}) == YES

    @pytest.mark.parametrize(
        ("field", "shown"),
        [
            ("scheduler", "scheduler"),
            ("textEncoder", "textEncoder"),
            ("tokenizer", "tokenizer"),
            ("transformer", "transformer"),
            ("vae", "vae"),
        ],
    )
    def test_rule_row_component_even_empty(self, field: str, shown: str) -> None:
        without = {k: v for k, v in FULL_PIPELINE.items() if k != field}
        assert pipeline_case({field: {}}, without) == pipeline_refusal(
            f"component {shown} required by runtime but not specified in model"
        )
        assert pipeline_case({field: {}}, {field: {}}) == YES

    def test_rule_row_library_in_a_component(self) -> None:
        required = {"transformer": {"library": "diffusers"}}
        assert pipeline_case(required, {"transformer": {"library": "transformers"}}) == pipeline_refusal(
            "transformer library mismatch (model=transformers, runtime=diffusers)"
        )
        assert pipeline_case(required, {"transformer": {"type": "QwenImageTransformer2DModel"}}) == pipeline_refusal(
            "transformer library mismatch (model=, runtime=diffusers)"
        )
        assert pipeline_case(required, {"transformer": {"library": "diffusers", "type": "X"}}) == YES

    def test_rule_row_type_in_a_component(self) -> None:
        required = {"scheduler": {"type": "FlowMatchEulerDiscreteScheduler"}}
        assert pipeline_case(required, {"scheduler": {"type": "EulerDiscreteScheduler"}}) == pipeline_refusal(
            "scheduler type mismatch (model=EulerDiscreteScheduler, runtime=FlowMatchEulerDiscreteScheduler)"
        )
        assert pipeline_case(required, {"scheduler": {"library": "diffusers"}}) == pipeline_refusal(
            "scheduler type mismatch (model=, runtime=FlowMatchEulerDiscreteScheduler)"
        )
        assert (
            pipeline_case(required, {"scheduler": {"library": "diffusers", "type": "FlowMatchEulerDiscreteScheduler"}})
            == YES
        )

    def test_rule_row_a_key_in_additional_components(self) -> None:
        required = {
            "additionalComponents": {"safety_checker": {"library": "diffusers", "type": "StableDiffusionSafetyChecker"}}
        }
        assert pipeline_case(required, {"className": "X"}) == pipeline_refusal(
            "diffusion pipeline missing required additional components"
        )
        assert pipeline_case(
            required, {"additionalComponents": {"feature_extractor": {"library": "transformers"}}}
        ) == pipeline_refusal("diffusion component safety_checker missing in model")
        assert pipeline_case(
            required,
            {
                "additionalComponents": {
                    "safety_checker": {"library": "transformers", "type": "StableDiffusionSafetyChecker"}
                }
            },
        ) == pipeline_refusal("safety_checker library mismatch (model=transformers, runtime=diffusers)")
        assert pipeline_case(
            required, {"additionalComponents": {"safety_checker": {"library": "diffusers", "type": "Other"}}}
        ) == pipeline_refusal("safety_checker type mismatch (model=Other, runtime=StableDiffusionSafetyChecker)")
        assert pipeline_case(required, FULL_PIPELINE) == YES

    def test_values_are_exact_case_sensitive_strings(self) -> None:
        assert pipeline_case(
            {"className": "QwenImagePipeline"}, {"className": "qwenimagepipeline"}
        ) == pipeline_refusal("pipeline class mismatch (model=qwenimagepipeline, runtime=QwenImagePipeline)")
        assert pipeline_case({"vae": {"library": "diffusers"}}, {"vae": {"library": "Diffusers"}}) == pipeline_refusal(
            "vae library mismatch (model=Diffusers, runtime=diffusers)"
        )

    def test_an_entry_without_diffusion_pipeline_passes_every_model(self) -> None:
        assert [pipeline_case(None, p) for p in (None, {}, FULL_PIPELINE)] == [YES, YES, YES]

    # ---- "Where a rejection shows up" reasons table (8 rows) --------------------------------------

    @pytest.mark.parametrize(
        ("entry_pipeline", "model_pipeline", "reason"),
        [
            (
                {"className": "QwenImagePipeline"},
                None,
                "diffusion pipeline required by runtime but not specified in model",
            ),
            (
                {"className": "QwenImagePipeline"},
                {"className": "QwenImageEditPipeline"},
                "pipeline class mismatch (model=QwenImageEditPipeline, runtime=QwenImagePipeline)",
            ),
            (
                {"transformer": {"library": "diffusers"}},
                {"className": "QwenImagePipeline"},
                "component transformer required by runtime but not specified in model",
            ),
            (
                {"transformer": {"library": "diffusers"}},
                {"transformer": {"library": "transformers"}},
                "transformer library mismatch (model=transformers, runtime=diffusers)",
            ),
            (
                {"scheduler": {"type": "FlowMatchEulerDiscreteScheduler"}},
                {"scheduler": {"library": "diffusers", "type": "EulerDiscreteScheduler"}},
                "scheduler type mismatch (model=EulerDiscreteScheduler, runtime=FlowMatchEulerDiscreteScheduler)",
            ),
            (
                {"additionalComponents": {"safety_checker": {}}},
                {"className": "QwenImagePipeline"},
                "diffusion pipeline missing required additional components",
            ),
            (
                {"additionalComponents": {"safety_checker": {}}},
                {"additionalComponents": {"watermarker": {}}},
                "diffusion component safety_checker missing in model",
            ),
        ],
        ids=["no-pipeline", "class", "component", "library", "type", "no-additional", "additional-key"],
    )
    def test_reasons_row(self, entry_pipeline: dict, model_pipeline: dict | None, reason: str) -> None:
        assert pipeline_case(entry_pipeline, model_pipeline) == pipeline_refusal(reason)

    def test_reasons_row_model_has_architecture_but_runtime_has_no_architecture_requirement(self) -> None:
        rt = runtime("rt", diffusion_entry(None, architecture=None))
        got = one_runtime_verdict(rt, diffusion_model(FULL_PIPELINE), isvc("qwen-image"))
        assert got == pipeline_refusal(
            "model has architecture QwenImagePipeline but runtime has no architecture requirement"
        )

    def test_the_pipeline_check_names_only_its_first_mismatch(self) -> None:
        entry_pipeline = {
            "className": "QwenImagePipeline",
            "scheduler": {"type": "A"},
            "transformer": {"library": "diffusers"},
        }
        model_pipeline = {"className": "Other", "scheduler": {"type": "B"}, "transformer": {"library": "transformers"}}
        assert pipeline_case(entry_pipeline, model_pipeline) == pipeline_refusal(
            "pipeline class mismatch (model=Other, runtime=QwenImagePipeline)"
        )
        model_pipeline["className"] = "QwenImagePipeline"
        assert pipeline_case(entry_pipeline, model_pipeline) == pipeline_refusal(
            "scheduler type mismatch (model=B, runtime=A)"
        )

    def test_additional_components_in_sorted_key_order(self) -> None:
        """Deliberate deviation: OME's map order is random; we check keys in sorted order."""
        required: dict[str, Any] = {
            "additionalComponents": {"safety_checker": {}, "feature_extractor": {}, "watermarker": {}}
        }
        assert pipeline_case(required, {"additionalComponents": {"other": {}}}) == pipeline_refusal(
            "diffusion component feature_extractor missing in model"
        )
        keys = ["h_part", "b_part", "g_part", "a_part", "c_part", "f_part", "d_part", "e_part"]
        required = {"additionalComponents": {k: {"library": "a"} for k in keys}}
        got = pipeline_case(required, {"additionalComponents": {k: {"library": "b"} for k in keys}})
        assert got == pipeline_refusal("a_part library mismatch (model=b, runtime=a)")
        got = pipeline_case(required, {"additionalComponents": {"other": {}}})
        assert got == pipeline_refusal("diffusion component a_part missing in model")

    QUOTED = "srt-qwen-image-pipeline (model format 'mt:diffusers:0.34.0.dev0:QwenImagePipeline:diffusers:0.34.0.dev0' not in supported formats: diffusion pipeline required by runtime but not specified in model)"

    def test_quoted_exclusion_for_qwen_image_pvc(self) -> None:
        got = select([SRT_QWEN_IMAGE_PIPELINE, QWEN_IMAGE_PVC], isvc("qwen-image-pvc", namespace="demo"))
        assert got.no_runtime_message == (
            "no runtime found to support model diffusers with format diffusers in namespace demo. "
            "Checked 1 runtimes (0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: " + self.QUOTED
        )

    def test_patched_model_matches_the_example_runtime(self) -> None:
        patched = yaml.safe_load(QWEN_IMAGE_PVC)
        patched["spec"]["diffusionPipeline"] = {
            "className": "QwenImagePipeline",
            "transformer": {"library": "diffusers"},
        }
        got = select([SRT_QWEN_IMAGE_PIPELINE, patched], isvc("qwen-image-pvc", namespace="demo"))
        assert (got.selection.runtime.name, list(got.warnings)) == (
            "srt-qwen-image-pipeline",
            ["Runtime srt-qwen-image-pipeline will be auto-selected for model qwen-image-pvc"],
        )

    def test_priority_2_prefers_the_example_runtime_to_srt_qwen_image(self) -> None:
        patched = yaml.safe_load(QWEN_IMAGE_PVC)
        patched["spec"]["diffusionPipeline"] = {
            "className": "QwenImagePipeline",
            "transformer": {"library": "diffusers"},
        }
        got = select(
            [catalog(SRT_QWEN_IMAGE), SRT_QWEN_IMAGE_PIPELINE, patched], isvc("qwen-image-pvc", namespace="demo")
        )
        assert [(c.runtime.name, c.score) for c in got.candidates] == [
            ("srt-qwen-image-pipeline", 4),
            ("srt-qwen-image", 2),
        ]

    def test_adds_nothing_to_the_score(self) -> None:
        with_pipeline = runtime("with-pipeline", diffusion_entry({"className": "QwenImagePipeline"}, priority=2))
        without = runtime("without", diffusion_entry(None, priority=2))
        got = select([with_pipeline, without, diffusion_model({"className": "QwenImagePipeline"})], isvc("qwen-image"))
        assert [(c.runtime.name, c.score) for c in got.candidates] == [("with-pipeline", 4), ("without", 4)]

    def test_catalog_runtime_matches_on_the_class_through_model_architecture(self) -> None:
        got = select([catalog(SRT_QWEN_IMAGE), QWEN_IMAGE_PVC], isvc("qwen-image-pvc", namespace="demo"))
        assert got.selection.runtime.name == "srt-qwen-image"

    def test_recorded_stable_diffusion_pipeline_matches_an_entry_that_requires_it(self) -> None:
        recorded = {
            "className": "StableDiffusionPipeline",
            "scheduler": {"library": "diffusers", "type": "EulerDiscreteScheduler"},
            "textEncoder": {"library": "transformers", "type": "CLIPTextModel"},
            "tokenizer": {"library": "transformers", "type": "CLIPTokenizer"},
            "transformer": {"library": "diffusers", "type": "UNet2DConditionModel"},
            "vae": {"library": "diffusers", "type": "AutoencoderKL"},
            "additionalComponents": {
                "safety_checker": {"library": "diffusers", "type": "StableDiffusionSafetyChecker"}
            },
        }
        version = ("diffusers", "0.24.0")
        rt = runtime(
            "sd",
            entry(
                format=version,
                framework=version,
                architecture="StableDiffusionPipeline",
                pipeline={
                    "className": "StableDiffusionPipeline",
                    "transformer": {"type": "UNet2DConditionModel"},
                    "additionalComponents": {"safety_checker": {"library": "diffusers"}},
                },
            ),
        )
        mdl = model(
            "sd-1-5",
            namespace=None,
            format=version,
            framework=version,
            architecture="StableDiffusionPipeline",
            size=None,
            pipeline=recorded,
        )
        assert one_runtime_verdict(rt, mdl, isvc("sd-1-5")) == YES

    # ---- "Where a rejection shows up" second table --------------------------------------------

    def test_where_row_another_runtime_matches(self) -> None:
        sources = [SRT_QWEN_IMAGE_PIPELINE, catalog(SRT_QWEN_IMAGE), QWEN_IMAGE_PVC]
        service = isvc("qwen-image-pvc", namespace="demo")
        assert select(sources, service).selection.runtime.name == "srt-qwen-image"
        assert verdict_and_reason(explain(sources, service), "srt-qwen-image-pipeline") == no(
            format_reason(QWEN_LABEL, "diffusion pipeline required by runtime but not specified in model")
        )

    def test_where_row_the_inference_service_names_the_runtime(self) -> None:
        got = select(
            [SRT_QWEN_IMAGE_PIPELINE, QWEN_IMAGE_PVC],
            isvc("qwen-image-pvc", namespace="demo", runtime_name="srt-qwen-image-pipeline"),
        )
        assert got.selection.runtime.name == "srt-qwen-image-pipeline"
        assert list(got.warnings) == [
            'runtime "srt-qwen-image-pipeline" does not declare support for model "qwen-image-pvc" (runtime srt-qwen-image-pipeline does not support model diffusers: '
            + format_reason(QWEN_LABEL, "diffusion pipeline required by runtime but not specified in model")
            + "); proceeding because the runtime was named explicitly"
        ]


# =============================================================================================
# runtime-accelerator-class-matching.md

H100, H200, A100 = "nvidia-h100", "nvidia-h200", "nvidia-a100"


def hopper(classes: list[str] | None = (H100, H200), **kw: Any) -> dict:  # type: ignore[assignment]
    doc = yaml.safe_load(LLAMA_3_3_70B_HOPPER)
    if classes is None:
        doc["spec"].pop("acceleratorRequirements")
    else:
        doc["spec"]["acceleratorRequirements"]["acceleratorClasses"] = list(classes)
    doc["spec"].update(kw)
    return doc


def llama70b_isvc(**kw: Any) -> dict:
    return isvc("llama-3-3-70b-instruct", name="llama-3-3-70b", **kw)


def hopper_verdict(service: dict, classes: list[str] | None = (H100, H200)) -> tuple[str, str]:  # type: ignore[assignment]
    return verdict([hopper(classes)], [LLAMA_3_3_70B_CBM], service, "llama-3-3-70b-hopper")


class TestRuntimeAcceleratorClassMatching:
    # ---- "The matching rule" table -----------------------------------------------------------------

    @pytest.mark.parametrize("classes", [[H100, H200], [A100], None, []], ids=["list", "other-list", "none", "empty"])
    def test_rule_row_no_class_any_list_or_none_is_candidate(self, classes: list[str] | None) -> None:
        assert hopper_verdict(llama70b_isvc(), classes) == YES

    def test_rule_row_h100_with_h100_h200_is_candidate(self) -> None:
        assert hopper_verdict(llama70b_isvc(accelerator_class=H100), [H100, H200]) == YES

    @pytest.mark.parametrize("classes", [None, []], ids=["none", "empty-list"])
    def test_rule_row_h100_with_none_or_empty_list_is_rejected(self, classes: list[str] | None) -> None:
        assert hopper_verdict(llama70b_isvc(accelerator_class=H100), classes) == no(ACCELERATOR_REASON)

    def test_rule_row_a100_with_h100_h200_is_rejected(self) -> None:
        assert hopper_verdict(llama70b_isvc(accelerator_class=A100), [H100, H200]) == no(ACCELERATOR_REASON)

    def test_rule_row_engine_h100_decoder_h200_is_candidate(self) -> None:
        service = llama70b_isvc(
            engine={"acceleratorOverride": {"acceleratorClass": H100}},
            decoder={"acceleratorOverride": {"acceleratorClass": H200}},
        )
        assert hopper_verdict(service, [H100, H200]) == YES

    def test_rule_row_engine_h100_decoder_a100_is_rejected(self) -> None:
        service = llama70b_isvc(
            engine={"acceleratorOverride": {"acceleratorClass": H100}},
            decoder={"acceleratorOverride": {"acceleratorClass": A100}},
        )
        assert hopper_verdict(service, [H100, H200]) == no(ACCELERATOR_REASON)

    def test_names_match_exactly_including_case(self) -> None:
        assert hopper_verdict(llama70b_isvc(accelerator_class="NVIDIA-H100")) == no(ACCELERATOR_REASON)

    def test_only_accelerator_classes_counts(self) -> None:
        strict = hopper(
            [H100],
            acceleratorRequirements={
                "acceleratorClasses": [H100],
                "minMemory": 10**15,
                "requiredFeatures": ["nothing-has-this"],
            },
        )
        got = verdict([strict], [LLAMA_3_3_70B_CBM], llama70b_isvc(accelerator_class=H100), "llama-3-3-70b-hopper")
        assert got == YES
        no_classes = hopper(None, acceleratorRequirements={"minMemory": 1, "requiredFeatures": ["tensor-cores"]})
        got = verdict([no_classes], [LLAMA_3_3_70B_CBM], llama70b_isvc(accelerator_class=H100), "llama-3-3-70b-hopper")
        assert got == no(ACCELERATOR_REASON)

    def test_auto_selection_reads_own_classes_not_inherited(self) -> None:
        parent = runtime("hopper-profile", entry(), classes=[H100], disabled=True, spec={"supportedModelFormats": []})
        child = hopper(None)
        child["metadata"]["annotations"] = {"ome.io/inherit-from": "hopper-profile"}
        got = verdict(
            [parent, child], [LLAMA_3_3_70B_CBM], llama70b_isvc(accelerator_class=H100), "llama-3-3-70b-hopper"
        )
        assert got == no(ACCELERATOR_REASON)

    # ---- "Where an InferenceService names a class" table -------------------------------------------

    @pytest.mark.parametrize(
        "where",
        ["annotation", "selector", "engine-override", "decoder-override"],
    )
    def test_where_row(self, where: str) -> None:
        def service(cls: str) -> dict:
            if where == "annotation":
                return llama70b_isvc(annotations={"ome.io/accelerator-class": cls})
            if where == "selector":
                return llama70b_isvc(accelerator_class=cls)
            if where == "engine-override":
                return llama70b_isvc(engine={"acceleratorOverride": {"acceleratorClass": cls}})
            return llama70b_isvc(decoder={"acceleratorOverride": {"acceleratorClass": cls}})

        assert hopper_verdict(service(A100)) == no(ACCELERATOR_REASON)
        assert hopper_verdict(service(H200)) == YES

    def test_only_names_count_policy_and_constraints_do_not_filter(self) -> None:
        service = llama70b_isvc(
            spec={
                "acceleratorSelector": {
                    "policy": "Cheapest",
                    "constraints": {"minMemory": 10**15, "excludedClasses": [H100, H200]},
                }
            }
        )
        assert hopper_verdict(service, [H100, H200]) == YES
        assert hopper_verdict(service, None) == YES

    @pytest.mark.parametrize("where", ["annotation", "selector"])
    def test_an_empty_value_rejects_every_runtime(self, where: str) -> None:
        service = (
            llama70b_isvc(annotations={"ome.io/accelerator-class": ""})
            if where == "annotation"
            else llama70b_isvc(accelerator_class="")
        )
        assert hopper_verdict(service, [H100, H200]) == no(ACCELERATOR_REASON)
        assert hopper_verdict(service, None) == no(ACCELERATOR_REASON)

    # ---- quoted messages ------------------------------------------------------------------------------

    def test_auto_selected_warning_for_the_example(self) -> None:
        sources = [LLAMA_3_3_70B_HOPPER, catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM]
        got = select(sources, LLAMA_3_3_70B_ISVC)
        assert got.selection.runtime.name == "llama-3-3-70b-hopper"
        assert list(got.warnings) == [
            "Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"
        ]

    def test_quoted_reason(self) -> None:
        sources = [LLAMA_3_3_70B_HOPPER, catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM]
        got = explain(sources, LLAMA_3_3_70B_ISVC)
        assert (
            row(got, "srt-llama-3-3-70b-instruct").reason == "runtime does not support the required accelerator class"
        )

    def test_quoted_no_runtime_message_for_nvidia_a100(self) -> None:
        service = yaml.safe_load(LLAMA_3_3_70B_ISVC)
        service["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-a100"
        got = select([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], service)
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 1 runtimes "
            "(0 namespace-scoped, 1 cluster-scoped). Excluded runtimes: llama-3-3-70b-hopper (runtime does not support the required accelerator class)"
        )

    def test_check_runs_before_the_format_check(self) -> None:
        mistral = runtime("mistral", entry(architecture="MistralForCausalLM", framework=("transformers", "4.36.0")))
        r = row(explain([mistral, LLAMA_3_3_70B_CBM], LLAMA_3_3_70B_ISVC), "mistral")
        assert r.reason == ACCELERATOR_REASON
        assert [(x.check, x.primary) for x in r.reasons] == [
            (selector_pb2.CHECK_ACCELERATOR_CLASS, True),
            (selector_pb2.CHECK_MODEL_FORMAT, False),
        ]

    def test_the_check_adds_nothing_to_the_score(self) -> None:
        got = select([hopper([H100, H200]), LLAMA_3_3_70B_CBM], llama70b_isvc(accelerator_class=H100))
        plain = select([hopper(None), LLAMA_3_3_70B_CBM], llama70b_isvc())
        assert (got.selection.score, plain.selection.score) == (2, 2)

    # ---- "Where a rejection shows up" table ---------------------------------------------------------

    def test_where_rejection_row_named_runtime_warns(self) -> None:
        sources = [catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM]
        service = yaml.safe_load(LLAMA_3_3_70B_ISVC)
        service["spec"]["runtime"] = {"name": "srt-llama-3-3-70b-instruct"}
        got = select(sources, service)
        assert got.selection.runtime.name == "srt-llama-3-3-70b-instruct"
        assert list(got.warnings) == [
            'runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" (runtime srt-llama-3-3-70b-instruct does not support model : runtime does not support the required accelerator class); proceeding because the runtime was named explicitly'
        ]


# =============================================================================================
# runtime-deployment-mode-matching.md

MODE_ANNOTATION = "ome.io/deploymentMode"


def mode_runtime(
    name: str = "rt", *, engine: str | None = None, decoder: str | None = None, spec: dict | None = None, **kw: Any
) -> dict:
    return runtime(
        name,
        entry(framework=("transformers", "4.47.0.dev0")),
        engine_mode=engine,
        decoder_mode=decoder,
        spec=spec,
        **kw,
    )


def mode_verdict(rt: dict, service: dict) -> tuple[str, str]:
    return verdict([rt], [LLAMA_3_3_70B_CBM], service, rt["metadata"]["name"])


def mode_isvc(**kw: Any) -> dict:
    return isvc("llama-3-3-70b-instruct", name="llama-3-70b", **kw)


def mode_refusal(component: str, runtime_mode: str, requested: str) -> tuple[str, str]:
    return no(
        f"runtime {component} deployment mode {runtime_mode} does not match requested {component} deployment mode {requested}"
    )


class TestRuntimeDeploymentModeMatching:
    # ---- "The matching rule" table (engine) --------------------------------------------------------

    @pytest.mark.parametrize(
        ("isvc_mode", "runtime_mode", "expected"),
        [
            (None, "MultiNode", YES),
            ("OMENative", None, YES),
            ("OMENative", "OMENative", YES),
            ("OMENative", "MultiNode", mode_refusal("engine", "MultiNode", "OMENative")),
            ("RawDeployment", "OMENative", mode_refusal("engine", "OMENative", "RawDeployment")),
        ],
    )
    def test_rule_row(self, isvc_mode: str | None, runtime_mode: str | None, expected: tuple[str, str]) -> None:
        assert mode_verdict(mode_runtime(engine=runtime_mode), mode_isvc(deployment_mode=isvc_mode)) == expected

    def test_the_check_adds_nothing_to_the_score(self) -> None:
        got = select(
            [mode_runtime("declares", engine="OMENative"), mode_runtime("silent"), LLAMA_3_3_70B_CBM],
            mode_isvc(deployment_mode="OMENative"),
        )
        assert [(c.runtime.name, c.score) for c in got.candidates] == [("declares", 2), ("silent", 2)]

    def test_mode_is_checked_before_the_model_format(self) -> None:
        other = runtime("other-model", entry(architecture="MistralForCausalLM"), engine_mode="MultiNode")
        r = row(explain([other, LLAMA_3_3_70B_CBM], mode_isvc(deployment_mode="OMENative")), "other-model")
        assert (
            r.reason
            == "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative"
        )
        assert [x.check for x in r.reasons] == [selector_pb2.CHECK_DEPLOYMENT_MODE, selector_pb2.CHECK_MODEL_FORMAT]

    def test_engine_is_compared_before_the_decoder(self) -> None:
        rt = mode_runtime(engine="MultiNode", decoder="RawDeployment")
        r = row(
            explain([rt, LLAMA_3_3_70B_CBM], mode_isvc(deployment_mode="OMENative", decoder={"minReplicas": 1})), "rt"
        )
        assert [(x.message, x.component, x.primary) for x in r.reasons] == [
            (
                "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative",
                selector_pb2.COMPONENT_ENGINE,
                True,
            ),
            (
                "runtime decoder deployment mode RawDeployment does not match requested decoder deployment mode OMENative",
                selector_pb2.COMPONENT_DECODER,
                False,
            ),
        ]

    def test_the_router_is_not_compared(self) -> None:
        rt = mode_runtime(spec={"routerConfig": {"annotations": {MODE_ANNOTATION: "RawDeployment"}}})
        service = mode_isvc(router={"annotations": {MODE_ANNOTATION: "OMENative"}})
        assert mode_verdict(rt, service) == YES

    # ---- "Where each side declares a mode" table ------------------------------------------------------

    def test_where_row_runtime_engine_config_annotations_count_for_the_engine(self) -> None:
        assert mode_verdict(
            mode_runtime(engine="RawDeployment"), mode_isvc(deployment_mode="OMENative")
        ) == mode_refusal("engine", "RawDeployment", "OMENative")

    def test_where_row_runtime_decoder_config_annotations_count_for_the_decoder(self) -> None:
        rt = mode_runtime(decoder="MultiNode")
        assert mode_verdict(rt, mode_isvc(deployment_mode="OMENative", decoder={"minReplicas": 1})) == mode_refusal(
            "decoder", "MultiNode", "OMENative"
        )
        # The decoder is compared only when the InferenceService has a spec.decoder.
        assert mode_verdict(rt, mode_isvc(deployment_mode="OMENative")) == YES

    def test_where_row_inherited_annotation_counts_only_when_named(self) -> None:
        parent = runtime(
            "multinode-profile", entry(), engine_mode="MultiNode", disabled=True, spec={"supportedModelFormats": []}
        )
        child = mode_runtime("child", inherit_from="multinode-profile", disabled=False)
        sources = [parent, child, LLAMA_3_3_70B_CBM]
        assert verdict_and_reason(explain(sources, mode_isvc(deployment_mode="OMENative")), "child") == YES
        named = select(sources, mode_isvc(deployment_mode="OMENative", runtime_name="child"))
        assert list(named.warnings) == [
            'runtime "child" does not declare support for model "llama-3-3-70b-instruct" (runtime child does not support model : '
            "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative); proceeding because the runtime was named explicitly"
        ]

    @pytest.mark.parametrize(
        "declaration",
        [
            {"metadata_annotation": True},
            {"spec": {"routerConfig": {"annotations": {MODE_ANNOTATION: "MultiNode"}}}},
            {
                "spec": {
                    "engineConfig": {
                        "leader": {"runner": {"name": "ome-container"}},
                        "worker": {"size": 1, "runner": {"name": "ome-container"}},
                    }
                }
            },
        ],
        ids=["metadata-annotations", "router-config-annotations", "leader-and-worker-alone"],
    )
    def test_where_row_runtime_sources_that_do_not_count(self, declaration: dict) -> None:
        if declaration.get("metadata_annotation"):
            rt = mode_runtime(annotations={MODE_ANNOTATION: "MultiNode"})
        else:
            rt = mode_runtime(spec=declaration["spec"])
        service = mode_isvc(deployment_mode="OMENative", router={"minReplicas": 1})
        assert mode_verdict(rt, service) == YES

    @pytest.mark.parametrize("component", ["engine", "decoder"])
    def test_where_row_isvc_component_annotations_count_ahead_of_spec_deployment_mode(self, component: str) -> None:
        annotated = {"annotations": {MODE_ANNOTATION: "RawDeployment"}}
        if component == "engine":
            service = mode_isvc(deployment_mode="OMENative", engine=annotated, decoder={"minReplicas": 1})
            declares_omenative, declares_raw = mode_runtime(engine="OMENative"), mode_runtime(engine="RawDeployment")
        else:
            service = mode_isvc(deployment_mode="OMENative", decoder=annotated)
            declares_omenative, declares_raw = mode_runtime(decoder="OMENative"), mode_runtime(decoder="RawDeployment")
        assert mode_verdict(declares_omenative, service) == mode_refusal(component, "OMENative", "RawDeployment")
        assert mode_verdict(declares_raw, service) == YES

    def test_where_row_spec_deployment_mode_counts_for_each_component_without_an_annotation(self) -> None:
        rt = mode_runtime(engine="RawDeployment", decoder="RawDeployment")
        # Engine: counts even without spec.engine; decoder: needs spec.decoder.
        got = row(
            explain(
                [rt, LLAMA_3_3_70B_CBM], mode_isvc(deployment_mode="OMENative", engine={}, decoder={"minReplicas": 1})
            ),
            "rt",
        )
        assert [x.message for x in got.reasons] == [
            "runtime engine deployment mode RawDeployment does not match requested engine deployment mode OMENative",
            "runtime decoder deployment mode RawDeployment does not match requested decoder deployment mode OMENative",
        ]
        # A component whose annotation sets a mode keeps it.
        service = mode_isvc(
            deployment_mode="OMENative",
            engine={"annotations": {MODE_ANNOTATION: "RawDeployment"}},
            decoder={"minReplicas": 1},
        )
        assert mode_verdict(rt, service) == mode_refusal("decoder", "RawDeployment", "OMENative")

    def test_where_row_multinode_needs_the_annotation(self) -> None:
        service = mode_isvc(engine={"annotations": {MODE_ANNOTATION: "MultiNode"}})
        assert mode_verdict(mode_runtime(engine="MultiNode"), service) == YES
        assert mode_verdict(mode_runtime(engine="OMENative"), service) == mode_refusal(
            "engine", "OMENative", "MultiNode"
        )

    def test_where_row_isvc_metadata_annotations_do_not_count(self) -> None:
        service = mode_isvc(annotations={MODE_ANNOTATION: "OMENative"})
        assert mode_verdict(mode_runtime(engine="MultiNode"), service) == YES

    # ---- which values count -------------------------------------------------------------------------------

    @pytest.mark.parametrize("value", ["RawDeployment", "OMENative", "MultiNode", "VirtualDeployment"])
    def test_a_valid_mode_counts(self, value: str) -> None:
        other = "RawDeployment" if value != "RawDeployment" else "OMENative"
        service = mode_isvc(engine={"annotations": {MODE_ANNOTATION: other}})
        assert mode_verdict(mode_runtime(engine=value), service) == mode_refusal("engine", value, other)

    @pytest.mark.parametrize(
        "value", ["omenative", "Multinode", "rawdeployment", "Serverless", "MultiNodeRayVLLM", "PDDisaggregated", ""]
    )
    def test_a_misspelled_mode_is_no_mode(self, value: str) -> None:
        assert mode_verdict(mode_runtime(engine=value), mode_isvc(deployment_mode="OMENative")) == YES
        # On the InferenceService's annotation, spec.deploymentMode then applies.
        service = mode_isvc(deployment_mode="OMENative", engine={"annotations": {MODE_ANNOTATION: value}})
        assert mode_verdict(mode_runtime(engine="MultiNode"), service) == mode_refusal(
            "engine", "MultiNode", "OMENative"
        )

    # ---- the example and the quoted messages ------------------------------------------------------------

    QUOTED_REASON = "runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative"

    def test_quoted_reason_for_the_example(self) -> None:
        got = explain([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], LLAMA_3_70B_ISVC)
        assert verdict_and_reason(got, "srt-llama-3-3-70b-instruct-multinode") == no(self.QUOTED_REASON)

    def test_quoted_no_runtime_message(self) -> None:
        got = select(
            [SRT_LLAMA_3_3_70B_MULTINODE, catalog(SRT_LLAMA_3_3_70B_INSTRUCT), LLAMA_3_3_70B_CBM], LLAMA_3_70B_ISVC
        )
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 2 runtimes "
            "(0 namespace-scoped, 2 cluster-scoped). Excluded runtimes: srt-llama-3-3-70b-instruct-multinode "
            "(runtime engine deployment mode MultiNode does not match requested engine deployment mode OMENative)"
        )

    def test_quoted_named_runtime_event(self) -> None:
        """The RuntimeCompatibilityAdvisory event text, from the engine's error for the named
        runtime (the API returns the webhook warning form, asserted alongside)."""
        service = yaml.safe_load(LLAMA_3_70B_ISVC)
        service["spec"]["runtime"] = {"name": "srt-llama-3-3-70b-instruct-multinode"}
        store = CacheStore()
        store.apply_snapshot("v1", objects(SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM))
        got = select(store, service)
        assert list(got.warnings) == [
            'runtime "srt-llama-3-3-70b-instruct-multinode" does not declare support for model "llama-3-3-70b-instruct" '
            "(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode MultiNode does not match "
            "requested engine deployment mode OMENative); proceeding because the runtime was named explicitly"
        ]
        snapshot = store.snapshot
        rt = snapshot.cluster_serving_runtimes["srt-llama-3-3-70b-instruct-multinode"]
        mdl = snapshot.cluster_models["llama-3-3-70b-instruct"]
        evaluation = engine.evaluate(rt, rt.effective or rt.own, mdl, compile_request(inference_service(service)))
        event = messages.named_runtime_advisory(rt.name, mdl.name, engine.named_error(rt, evaluation.failures, mdl))
        assert event == (
            "Runtime srt-llama-3-3-70b-instruct-multinode does not declare support for model llama-3-3-70b-instruct "
            "(runtime srt-llama-3-3-70b-instruct-multinode does not support model : runtime engine deployment mode MultiNode does not match "
            "requested engine deployment mode OMENative); proceeding because the runtime was named explicitly"
        )

    def test_where_rejection_row_another_runtime_passes(self) -> None:
        sources = [SRT_LLAMA_3_3_70B_MULTINODE, mode_runtime("plain"), LLAMA_3_3_70B_CBM]
        assert select(sources, LLAMA_3_70B_ISVC).selection.runtime.name == "plain"
        assert verdict_and_reason(explain(sources, LLAMA_3_70B_ISVC), "srt-llama-3-3-70b-instruct-multinode") == no(
            self.QUOTED_REASON
        )

    def test_an_isvc_without_a_mode_can_get_a_multinode_runtime(self) -> None:
        got = select([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], mode_isvc())
        assert got.selection.runtime.name == "srt-llama-3-3-70b-instruct-multinode"


# =============================================================================================
# runtime-selection-scoring.md (the tables; formula, ranking and tie-breaks: test_scoring_ranking.py)


class TestRuntimeSelectionScoring:
    # ---- "How the score is computed" table ----------------------------------------------------------

    @staticmethod
    def _score(*entries: dict) -> int:
        got = select([runtime("rt", *entries), model()], isvc())
        return got.selection.score if got.HasField("selection") else 0

    def test_field_row_model_format_weight(self) -> None:
        assert self._score(entry()) == 2  # default 1
        assert self._score(entry(format=spec_of("safetensors", "1.0.0", weight=0))) == 11  # 0 counts as 10

    def test_field_row_model_framework_weight(self) -> None:
        assert self._score(entry(framework=spec_of("transformers", "4.45.0.dev0", weight=0))) == 6  # 0 counts as 5

    def test_field_row_priority(self) -> None:
        assert self._score(entry(priority=None)) == 2  # default 1
        with pytest.raises(RequestError) as caught:  # must be at least 1
            select([runtime("rt", entry(priority=0)), model()], isvc())
        assert caught.value.code == "INVALID_ARGUMENT"
        assert (
            caught.value.violations[0].field
            == "objects[0].cluster_serving_runtime.spec.supported_model_formats[0].priority"
        )

    def test_field_row_auto_select(self) -> None:
        # false leaves the entry out of the score; unset counts.
        assert self._score(entry(priority=1), entry(auto_select=False, priority=5)) == 2
        assert self._score(entry(format=("gguf", "1")), entry(auto_select=None, priority=5)) == 10

    # ---- "The ranking order": what qualifies ------------------------------------------------------

    def test_qualifies_only_when_every_condition_holds(self) -> None:
        sources = [
            runtime("ok"),
            runtime("disabled", disabled=True),
            runtime("accelerator", classes=[A100]),
            runtime("mode", engine_mode="MultiNode"),
            runtime("format", entry(architecture="MistralForCausalLM")),
            runtime("size", size=("500M", "2B")),
            runtime("no-auto-select", entry(auto_select=False)),
            runtime(
                "zero-score",
                entry(
                    format=spec_of("safetensors", "1.0.0", weight=-1),
                    framework=spec_of("transformers", "4.45.0.dev0", weight=-1),
                ),
            ),
            model(),
        ]
        got = select(sources, isvc(accelerator_class=H100, deployment_mode="OMENative"))
        assert ranking(got) == []
        got = select(sources, isvc(deployment_mode="OMENative"))
        assert ranking(got) == ["accelerator", "ok"]

    # ---- "Check the ranking": where OME shows the runtime it picked ----------------------------------

    def test_where_row_the_warning_from_kubectl_apply(self) -> None:
        got = select([*worked_example_runtimes(), model()], isvc())
        assert list(got.warnings) == ["Runtime team-llama will be auto-selected for model llama-3-2-3b-instruct"]
