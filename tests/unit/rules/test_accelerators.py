"""``accelerators.assign_accelerator``: the AcceleratorClass each component gets.

Sources: select-accelerators.md ("How OME picks a class", "Policies", Step 1 and Step 3, "Narrow
the choice with constraints", "Override the class for one component", Troubleshooting),
accelerator-classes.md ("Write an AcceleratorClass", "How InferenceServices use a class", "Change
or delete a class"), ome-selection-facts.md 4.1 and 4.2 where the docs are silent, and the classes
of ../shared/ome-cluster/acceleratorclasses.yaml. The docs' YAML is read from the pages themselves.
"""

from __future__ import annotations

import copy
import re
import textwrap
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml
from google.protobuf import json_format
from ome.v1beta1 import types_pb2
from ome_selector.domain.quantities import parse_quantity
from ome_selector.rules.accelerators import Assignment, assign_accelerator, memory_gib, passes_constraints
from ome_selector.texts.messages import accelerator_event_message

SHARED = Path(__file__).resolve().parents[4] / "shared"
SELECT_PAGE = SHARED / "ome-docs" / "guides" / "deploy-models" / "select-accelerators.md"
CLASSES_PAGE = SHARED / "ome-docs" / "concepts" / "runtimes" / "accelerator-classes.md"
CLUSTER_CLASSES = SHARED / "ome-cluster" / "acceleratorclasses.yaml"

STEP2_LIST = ["nvidia-h100", "nvidia-h200"]
NIL = "invalid memory address or nil pointer dereference"

# ---------------------------------------------------------------------------------------------
# inputs


def page_blocks(page: Path, title: str) -> list[str]:
    """The YAML code blocks titled ``title`` on a docs page, dedented (tabs indent them)."""
    pattern = re.compile(r'^([ \t]*)```yaml title="' + re.escape(title) + r'"\n(.*?)^\1```', re.S | re.M)
    return [textwrap.dedent(m.group(2)) for m in pattern.finditer(page.read_text())]


_QUANTITY_FIELDS = (
    ("capabilities", "memoryGB"),
    ("capabilities", "memoryBandwidthGBps"),
    ("cost", "perHour"),
    ("cost", "spotPerHour"),
    ("cost", "perMillionTokens"),
)


def accelerator_class(doc: dict[str, Any]) -> types_pb2.AcceleratorClass:
    """An AcceleratorClass proto; YAML numbers in quantity fields become text, as Kubernetes reads them."""
    doc = copy.deepcopy(doc)
    spec = doc.setdefault("spec", {})
    for parent, key in _QUANTITY_FIELDS:
        part = spec.get(parent) or {}
        if isinstance(part.get(key), (int, float)):
            part[key] = str(part[key])
    for resource in spec.get("resources") or []:
        if isinstance(resource.get("quantity"), (int, float)):
            resource["quantity"] = str(resource["quantity"])
    return json_format.ParseDict(doc, types_pb2.AcceleratorClass())


def classes_from(text: str) -> dict[str, types_pb2.AcceleratorClass]:
    """Classes by name from a multi-document YAML string."""
    out = {}
    for doc in yaml.safe_load_all(text):
        if doc:
            out[doc["metadata"]["name"]] = accelerator_class(doc)
    return out


def make_class(name: str, **spec: Any) -> types_pb2.AcceleratorClass:
    return accelerator_class({"metadata": {"name": name}, "spec": spec})


def isvc(source: Any = None, **spec: Any) -> types_pb2.InferenceService:
    """An InferenceService from a YAML string, or from ``spec`` keyword fields."""
    doc = (
        yaml.safe_load(source)
        if isinstance(source, str)
        else {"metadata": {"name": "isvc", "namespace": "llama-demo"}, "spec": spec}
    )
    return json_format.ParseDict(doc, types_pb2.InferenceService())


def selector(**fields: Any) -> types_pb2.InferenceService:
    """An InferenceService with only ``spec.acceleratorSelector``."""
    return isvc(acceleratorSelector=fields)


STEP1_CLASSES = classes_from(page_blocks(SELECT_PAGE, "accelerator-classes.yaml")[0])
CONCEPT_CLASSES = classes_from(page_blocks(CLASSES_PAGE, "accelerator-classes.yaml")[0])
CLUSTER = classes_from(CLUSTER_CLASSES.read_text())
CLUSTER_LIST = ["nvidia-h100-80gb", "nvidia-h200-141gb", "nvidia-a100-80gb", "nvidia-l40s-48gb"]
PIN_TAB, POLICY_TAB = page_blocks(SELECT_PAGE, "isvc.yaml")
PD_EXAMPLE = page_blocks(SELECT_PAGE, "isvc-pd.yaml")[0]


def engine(service: types_pb2.InferenceService, runtime_classes=STEP2_LIST, classes=None) -> Assignment:
    return assign_accelerator(service, runtime_classes, STEP1_CLASSES if classes is None else classes, "engine")


def picked(service: types_pb2.InferenceService, runtime_classes=STEP2_LIST, classes=None) -> str:
    return engine(service, runtime_classes, classes).accelerator_class


def test_inputs_are_the_pages() -> None:
    assert list(STEP1_CLASSES) == ["nvidia-h100", "nvidia-h200"]
    assert STEP1_CLASSES["nvidia-h200"].spec.capabilities.memory_gb == "141Gi"
    assert STEP1_CLASSES["nvidia-h100"].spec.cost.per_hour == "10"
    assert list(CONCEPT_CLASSES) == ["nvidia-h100", "nvidia-l40s"]
    assert list(CLUSTER) == CLUSTER_LIST
    assert CLUSTER["nvidia-h200-141gb"].spec.capabilities.memory_bandwidth_gbps == "4800"


# ---------------------------------------------------------------------------------------------
# "How OME picks a class"


class TestHowOmePicks:
    def test_class_named_wins_even_with_a_policy(self) -> None:
        # Cheapest alone would pick nvidia-h100.
        assert engine(selector(acceleratorClass="nvidia-h200", policy="Cheapest")) == Assignment(
            "nvidia-h200", "SELECTOR"
        )

    def test_policy_picks_from_the_runtime_list(self) -> None:
        assert engine(selector(policy="MostCapable")) == Assignment("nvidia-h200", "POLICY", policy="MostCapable")

    def test_neither_gives_no_class(self) -> None:
        assert engine(isvc(engine={"minReplicas": 1})) == Assignment("", "NONE_NOT_REQUESTED")

    def test_router_never_gets_a_class(self) -> None:
        service = isvc(acceleratorSelector={"acceleratorClass": "nvidia-h100"}, router={"minReplicas": 1})
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "router") == Assignment("", "NONE_ROUTER")

    @pytest.mark.parametrize("runtime_classes", [[], ()])
    def test_runtime_lists_none_ignores_names_and_policies(self, runtime_classes) -> None:
        for service in (
            selector(acceleratorClass="nvidia-h100"),
            selector(acceleratorClass="no-such-class"),
            selector(policy="BestFit"),
            isvc(engine={"acceleratorOverride": {"acceleratorClass": "nvidia-h200"}}),
        ):
            for component in ("engine", "decoder"):
                assert assign_accelerator(service, runtime_classes, STEP1_CLASSES, component) == Assignment(
                    "", "NONE_RUNTIME_LISTS_NONE"
                )

    def test_named_class_the_runtime_does_not_list_is_used(self) -> None:
        # Troubleshooting: the pods get the named class if the runtime lists at least one class.
        assert engine(selector(acceleratorClass="nvidia-h200"), runtime_classes=["nvidia-h100"]) == Assignment(
            "nvidia-h200", "SELECTOR"
        )

    def test_constraints_and_annotation_do_not_pick_a_class(self) -> None:
        service = isvc(acceleratorSelector={"constraints": {"minMemory": 80}})
        service.metadata.annotations["ome.io/accelerator-class"] = "nvidia-h100"
        assert engine(service) == Assignment("", "NONE_NOT_REQUESTED")

    def test_unknown_component_is_a_programming_error(self) -> None:
        with pytest.raises(ValueError):
            assign_accelerator(selector(policy="Cheapest"), STEP2_LIST, STEP1_CLASSES, "predictor")


# ---------------------------------------------------------------------------------------------
# "Policies"


class TestPolicies:
    def test_best_fit_memory_closest_to_min_memory(self) -> None:
        service = selector(policy="BestFit", constraints={"minMemory": 40})
        assert picked(service, ["nvidia-h100", "nvidia-l40s"], CONCEPT_CLASSES) == "nvidia-l40s"

    def test_best_fit_compute_counts_for_less(self) -> None:
        exact = make_class("exact", capabilities={"memoryGB": "80Gi", "performance": {"fp16Tflops": 100}})
        # Equal memory: compute decides (0.7 + 0.3 * 1.0 against 0.7 + 0.3 * 0.1).
        classes = {
            "exact": exact,
            "fast": make_class("fast", capabilities={"memoryGB": "80Gi", "performance": {"fp16Tflops": 1000}}),
        }
        service = selector(policy="BestFit", constraints={"minMemory": 80, "minComputePerformanceTFLOPS": 1000})
        assert picked(service, ["exact", "fast"], classes) == "fast"
        # Twice the memory costs more than the compute gains: 0.7 + 0.3 * 0.2 = 0.76 beats 0.7 * 0.5 + 0.3 = 0.65.
        classes["fast"] = make_class("fast", capabilities={"memoryGB": "160Gi", "performance": {"fp16Tflops": 1000}})
        service = selector(policy="BestFit", constraints={"minMemory": 80, "minComputePerformanceTFLOPS": 500})
        assert picked(service, ["fast", "exact"], classes) == "exact"

    def test_cheapest_spot_per_hour_before_per_hour(self) -> None:
        assert picked(selector(policy="Cheapest"), ["nvidia-h100", "nvidia-l40s"], CONCEPT_CLASSES) == "nvidia-l40s"
        classes = {
            "spot-dear": make_class("spot-dear", cost={"perHour": "1", "spotPerHour": "5"}),
            "on-demand": make_class("on-demand", cost={"perHour": "3"}),
        }
        assert picked(selector(policy="Cheapest"), ["spot-dear", "on-demand"], classes) == "on-demand"

    def test_cheapest_per_million_tokens_then_tier_as_fallbacks(self) -> None:
        classes = {
            "tokens-cheap": make_class("tokens-cheap", cost={"perMillionTokens": "0.1", "tier": "low"}),
            "hourly": make_class("hourly", cost={"perHour": "99"}),
            "tokens-dear": make_class("tokens-dear", cost={"perMillionTokens": "0.5"}),
            "tier-low": make_class("tier-low", cost={"tier": "low"}),
            "tier-high": make_class("tier-high", cost={"tier": "HIGH"}),
            "tier-other": make_class("tier-other", cost={"tier": "premium"}),
            "tier-medium": make_class("tier-medium", cost={"tier": "medium"}),
        }
        cheapest = selector(policy="Cheapest")
        # Any hourly price wins over token prices, whatever the amounts.
        assert picked(cheapest, ["tokens-cheap", "hourly"], classes) == "hourly"
        assert picked(cheapest, ["tokens-dear", "tokens-cheap", "tier-low"], classes) == "tokens-cheap"
        assert picked(cheapest, ["tier-high", "tier-low"], classes) == "tier-low"
        # Unknown tiers count as medium; ties keep the earlier class.
        assert picked(cheapest, ["tier-high", "tier-other", "tier-medium"], classes) == "tier-other"
        assert picked(cheapest, ["tier-high", "tier-medium", "tier-other"], classes) == "tier-medium"

    def test_cheapest_leaves_out_classes_without_cost(self) -> None:
        classes = {
            "free": make_class("free"),
            "priced": make_class("priced", cost={"perHour": "100"}),
            "empty": make_class("empty", cost={}),
        }
        assert picked(selector(policy="Cheapest"), ["free", "empty", "priced"], classes) == "priced"
        assert engine(selector(policy="Cheapest"), ["free", "empty"], classes) == Assignment(
            "", "NONE_NO_CANDIDATE", policy="Cheapest"
        )

    def test_cheapest_leaves_out_a_lone_class_without_cost(self) -> None:
        """select-accelerators.md, Policies: "Classes without cost are left out"; Troubleshooting:
        "For Cheapest, at least one class sets cost" (the docs win over facts 4.2)."""
        classes = {"free": make_class("free")}
        assert engine(selector(policy="Cheapest"), ["free"], classes) == Assignment(
            "", "NONE_NO_CANDIDATE", policy="Cheapest"
        )

    def test_cheapest_single_candidate_with_cost(self) -> None:
        classes = {"paid": make_class("paid", cost={"perHour": "1"})}
        assert engine(selector(policy="Cheapest"), ["paid"], classes) == Assignment("paid", "POLICY", policy="Cheapest")

    def test_cheapest_compares_exact_quantities(self) -> None:
        classes = {
            "a": make_class("a", cost={"perHour": "4.50"}),
            "b": make_class("b", cost={"perHour": "4.5"}),
            "c": make_class("c", cost={"perHour": "4500m"}),
            "d": make_class("d", cost={"perHour": "4499m"}),
        }
        assert picked(selector(policy="Cheapest"), ["a", "b", "c"], classes) == "a"
        assert picked(selector(policy="Cheapest"), ["a", "b", "c", "d"], classes) == "d"

    def test_most_capable_memory_counts_most(self) -> None:
        classes = {
            "big": make_class(
                "big",
                capabilities={"memoryGB": "141Gi", "memoryBandwidthGBps": "3350", "performance": {"fp16Tflops": 989}},
            ),
            "fast": make_class(
                "fast",
                capabilities={"memoryGB": "80Gi", "memoryBandwidthGBps": "4800", "performance": {"fp16Tflops": 989}},
            ),
        }
        assert picked(selector(policy="MostCapable"), ["fast", "big"], classes) == "big"

    def test_most_capable_bandwidth_and_tflops(self) -> None:
        classes = {
            "a": make_class(
                "a",
                capabilities={"memoryGB": "80Gi", "memoryBandwidthGBps": "2000", "performance": {"fp16Tflops": 989}},
            ),
            "b": make_class(
                "b",
                capabilities={"memoryGB": "80Gi", "memoryBandwidthGBps": "3000", "performance": {"fp16Tflops": 800}},
            ),
            "c": make_class(
                "c",
                capabilities={"memoryGB": "80Gi", "memoryBandwidthGBps": "2000", "performance": {"fp16Tflops": 990}},
            ),
        }
        # b: 0.5 + 0.3 + 0.2 * 800/989 = 0.962 beats a: 0.5 + 0.3 * 2000/3000 + 0.2 = 0.9.
        assert picked(selector(policy="MostCapable"), ["a", "b"], classes) == "b"
        assert picked(selector(policy="MostCapable"), ["a", "c"], classes) == "c"
        # Equal scores keep the earlier class.
        assert picked(selector(policy="MostCapable"), ["c", "c2"], {**classes, "c2": classes["c"]}) == "c"

    def test_first_available_first_that_passes(self) -> None:
        assert picked(selector(policy="FirstAvailable"), ["nvidia-h200", "nvidia-h100"]) == "nvidia-h200"
        service = selector(policy="FirstAvailable", constraints={"excludedClasses": ["nvidia-h200"]})
        assert picked(service, ["nvidia-h200", "nvidia-h100"]) == "nvidia-h100"

    def test_other_policy_values_pick_nothing(self) -> None:
        assert engine(selector(policy="Random")) == Assignment("", "NONE_NO_CANDIDATE", policy="Random")
        assert engine(selector(policy="bestfit", constraints={"minMemory": 80})) == Assignment(
            "", "NONE_NO_CANDIDATE", policy="bestfit"
        )

    def test_no_class_passes_the_constraints(self) -> None:
        service = selector(policy="FirstAvailable", constraints={"minMemory": 200})
        assert engine(service) == Assignment("", "NONE_NO_CANDIDATE", policy="FirstAvailable")

    def test_repeated_runtime_entries_count_once(self) -> None:
        assert picked(selector(policy="FirstAvailable"), ["nvidia-h200", "nvidia-h100", "nvidia-h200"]) == "nvidia-h200"
        # One candidate after de-duplication: BestFit without constraints returns it.
        assert engine(selector(policy="BestFit"), ["nvidia-h100", "nvidia-h100"]) == Assignment(
            "nvidia-h100", "POLICY", policy="BestFit"
        )


# ---------------------------------------------------------------------------------------------
# Step 3 with the Step 1 classes and the Step 2 list


class TestStep3:
    def test_pin_a_class_tab(self) -> None:
        assert engine(isvc(PIN_TAB)) == Assignment("nvidia-h100", "SELECTOR")

    def test_best_fit_tab_min_memory_80(self) -> None:
        service = isvc(POLICY_TAB)
        assert service.spec.accelerator_selector.constraints.min_memory == 80
        assert engine(service) == Assignment("nvidia-h100", "POLICY", policy="BestFit")

    @pytest.mark.parametrize(
        ("policy", "expected"),
        [("Cheapest", "nvidia-h100"), ("MostCapable", "nvidia-h200"), ("FirstAvailable", "nvidia-h100")],
    )
    def test_policy_row(self, policy: str, expected: str) -> None:
        doc = yaml.safe_load(POLICY_TAB)
        doc["spec"]["acceleratorSelector"] = {"policy": policy}
        assert engine(isvc(yaml.safe_dump(doc))) == Assignment(expected, "POLICY", policy=policy)

    def test_decoder_gets_the_same_pick(self) -> None:
        service = isvc(POLICY_TAB)
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "decoder") == Assignment(
            "nvidia-h100", "POLICY", policy="BestFit"
        )


# ---------------------------------------------------------------------------------------------
# "Set constraints with BestFit" / "BestFit doesn't create or update the workload"


class TestBestFitBug:
    BUG = Assignment("", "POLICY", policy="BestFit", error="", workload_blocked=True, log=NIL)

    def test_selector_without_constraints(self) -> None:
        assert engine(selector(policy="BestFit")) == self.BUG

    def test_override_without_selector_constraints(self) -> None:
        # Constraints in the override do not count.
        service = isvc(engine={"acceleratorOverride": {"policy": "BestFit", "constraints": {"minMemory": 80}}})
        assert engine(service) == self.BUG
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "decoder") == Assignment("", "NONE_NOT_REQUESTED")

    def test_cluster_classes(self) -> None:
        assert engine(selector(policy="BestFit"), CLUSTER_LIST, CLUSTER) == self.BUG

    def test_one_candidate_is_returned(self) -> None:
        assert engine(selector(policy="BestFit"), ["nvidia-h200"]) == Assignment(
            "nvidia-h200", "POLICY", policy="BestFit"
        )

    def test_one_candidate_left_after_a_deleted_class(self) -> None:
        assert engine(selector(policy="BestFit"), ["nvidia-l40s", "nvidia-h100"]) == Assignment(
            "nvidia-h100", "POLICY", policy="BestFit"
        )

    def test_empty_constraints_avoid_the_bug(self) -> None:
        # `constraints: {}` is set: every memory score is 1 and both have 989 TFLOPS, so the tie keeps the first.
        assert engine(selector(policy="BestFit", constraints={})) == Assignment(
            "nvidia-h100", "POLICY", policy="BestFit"
        )

    def test_named_class_avoids_the_bug(self) -> None:
        assert engine(selector(policy="BestFit", acceleratorClass="nvidia-h200")) == Assignment(
            "nvidia-h200", "SELECTOR"
        )


# ---------------------------------------------------------------------------------------------
# "Narrow the choice with constraints": one class per row


class TestConstraints:
    def passes(self, cls: types_pb2.AcceleratorClass, **constraints: Any) -> bool:
        parsed = json_format.ParseDict(constraints, types_pb2.AcceleratorConstraints())
        return passes_constraints(cls.metadata.name, cls, parsed)

    def test_excluded_classes(self) -> None:
        h100 = STEP1_CLASSES["nvidia-h100"]
        assert not self.passes(h100, excludedClasses=["nvidia-h100"])
        assert self.passes(h100, excludedClasses=["nvidia-h200", "NVIDIA-H100"])
        assert picked(selector(policy="Cheapest", constraints={"excludedClasses": ["nvidia-h100"]})) == "nvidia-h200"

    @pytest.mark.parametrize(
        ("families", "passes"),
        [
            (["hopper"], True),
            (["nvidia-hopper"], True),
            (["HOPPER"], True),
            (["NVIDIA-Hopper"], True),
            (["ampere", "hopper"], True),
            (["ampere"], False),
            (["amd-hopper"], False),
            (["nvidia"], False),
        ],
    )
    def test_architecture_families(self, families: list[str], passes: bool) -> None:
        assert self.passes(STEP1_CLASSES["nvidia-h100"], architectureFamilies=families) is passes

    def test_hyphen_in_family_only_matches_vendor_form(self) -> None:
        l40s = CLUSTER["nvidia-l40s-48gb"]
        assert not self.passes(l40s, architectureFamilies=["ada-lovelace"])
        assert self.passes(l40s, architectureFamilies=["nvidia-ada-lovelace"])

    def test_memory_rounded_down_to_whole_gib(self) -> None:
        decimal_80g = make_class("decimal-80g", capabilities={"memoryGB": "80G"})
        assert memory_gib(decimal_80g) == 74
        assert not self.passes(decimal_80g, minMemory=80)
        assert self.passes(decimal_80g, minMemory=74)
        assert self.passes(decimal_80g, maxMemory=74)
        assert not self.passes(decimal_80g, maxMemory=73)
        h100 = STEP1_CLASSES["nvidia-h100"]
        assert memory_gib(h100) == 80
        assert self.passes(h100, minMemory=80, maxMemory=80)
        assert not self.passes(h100, minMemory=81)

    def test_bare_number_is_bytes(self) -> None:
        bytes_80 = make_class("bytes-80", capabilities={"memoryGB": "80"})
        assert memory_gib(bytes_80) == 0
        assert not self.passes(bytes_80, minMemory=1)
        assert self.passes(bytes_80, maxMemory=0)

    def test_no_memory_fails_memory_constraints(self) -> None:
        bare = make_class("bare", capabilities={})
        assert not self.passes(bare, minMemory=0)
        assert not self.passes(bare, maxMemory=1000)
        assert self.passes(bare)

    def test_required_features(self) -> None:
        h100, l40s = CONCEPT_CLASSES["nvidia-h100"], CONCEPT_CLASSES["nvidia-l40s"]
        assert self.passes(h100, requiredFeatures=["fp8", "nvlink"])
        assert self.passes(h100, requiredFeatures=["NVLink", "Tensor-Cores"])
        assert not self.passes(l40s, requiredFeatures=["fp8", "nvlink"])
        service = selector(policy="Cheapest", constraints={"requiredFeatures": ["nvlink"]})
        assert picked(service, ["nvidia-l40s", "nvidia-h100"], CONCEPT_CLASSES) == "nvidia-h100"

    def test_min_architecture_version_compares_as_text(self) -> None:
        blackwell = make_class("cc-10", capabilities={"computeCapability": "10.0"})
        hopper = STEP1_CLASSES["nvidia-h100"]
        assert not self.passes(blackwell, minArchitectureVersion="9.0")
        assert self.passes(hopper, minArchitectureVersion="9.0")
        assert self.passes(hopper, minArchitectureVersion="10.0")
        assert not self.passes(CONCEPT_CLASSES["nvidia-l40s"], minArchitectureVersion="9.0")
        assert not self.passes(make_class("no-cc", capabilities={}), minArchitectureVersion="1.0")

    def test_min_compute_never_filters_but_best_fit_scores_it(self) -> None:
        assert self.passes(STEP1_CLASSES["nvidia-h100"], minComputePerformanceTFLOPS=100000)
        # a100 (624 int8 TOPS) and h100 (1979) both have 80Gi.
        order = ["nvidia-a100-80gb", "nvidia-h100-80gb"]
        assert picked(selector(policy="BestFit", constraints={"minMemory": 80}), order, CLUSTER) == "nvidia-a100-80gb"
        service = selector(policy="BestFit", constraints={"minMemory": 80, "minComputePerformanceTFLOPS": 1000})
        assert picked(service, order, CLUSTER) == "nvidia-h100-80gb"

    def test_preferred_precisions_never_filter(self) -> None:
        no_perf = make_class("no-perf", capabilities={"memoryGB": "80Gi"})
        assert self.passes(no_perf, preferredPrecisions=["bf16"])

    def test_preferred_precisions_fp8_reads_int8_tops(self) -> None:
        classes = {
            "fp16-strong": make_class(
                "fp16-strong",
                capabilities={
                    "memoryGB": "80Gi",
                    "memoryBandwidthGBps": "3000",
                    "performance": {"fp16Tflops": 1000, "int8Tops": 100},
                },
            ),
            "int8-strong": make_class(
                "int8-strong",
                capabilities={
                    "memoryGB": "80Gi",
                    "memoryBandwidthGBps": "3000",
                    "performance": {"fp16Tflops": 100, "int8Tops": 2000},
                },
            ),
        }
        order = ["fp16-strong", "int8-strong"]
        assert picked(selector(policy="MostCapable"), order, classes) == "fp16-strong"
        for precision in ("fp8", "int8", "FP8"):
            assert (
                picked(selector(policy="MostCapable", constraints={"preferredPrecisions": [precision]}), order, classes)
                == "int8-strong"
            )
        # bf16 reads 0 for every class: TFLOPS no longer decide, the tie keeps the first.
        assert (
            picked(
                selector(policy="MostCapable", constraints={"preferredPrecisions": ["bf16"]}),
                ["int8-strong", "fp16-strong"],
                classes,
            )
            == "int8-strong"
        )
        assert (
            picked(selector(policy="MostCapable", constraints={"preferredPrecisions": ["bf16", "fp8"]}), order, classes)
            == "int8-strong"
        )

    def test_best_fit_reads_first_listed_precision_a_class_has(self) -> None:
        classes = {
            "int8-only": make_class("int8-only", capabilities={"memoryGB": "80Gi", "performance": {"int8Tops": 500}}),
            "fp16-only": make_class("fp16-only", capabilities={"memoryGB": "80Gi", "performance": {"fp16Tflops": 500}}),
        }
        order = ["int8-only", "fp16-only"]
        # fp16-only scores 1 for its first precision, int8-only 0.5 (second in the list).
        service = selector(policy="BestFit", constraints={"minMemory": 80, "preferredPrecisions": ["fp16", "fp8"]})
        assert picked(service, order, classes) == "fp16-only"
        service = selector(policy="BestFit", constraints={"minMemory": 80, "preferredPrecisions": ["fp8", "fp16"]})
        assert picked(service, list(reversed(order)), classes) == "int8-only"

    def test_constraints_apply_to_every_component(self) -> None:
        service = isvc(
            acceleratorSelector={"policy": "FirstAvailable", "constraints": {"excludedClasses": ["nvidia-h100"]}},
            decoder={"minReplicas": 1},
        )
        for component in ("engine", "decoder"):
            assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, component).accelerator_class == "nvidia-h200"

    def test_named_class_skips_constraints(self) -> None:
        service = selector(
            acceleratorClass="nvidia-h100", constraints={"excludedClasses": ["nvidia-h100"], "minMemory": 500}
        )
        assert engine(service) == Assignment("nvidia-h100", "SELECTOR")


# ---------------------------------------------------------------------------------------------
# "Override the class for one component"


class TestOverride:
    def test_pd_example(self) -> None:
        service = isvc(PD_EXAMPLE)
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "engine") == Assignment(
            "nvidia-h100", "POLICY", policy="Cheapest"
        )
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "decoder") == Assignment(
            "nvidia-h200", "COMPONENT_OVERRIDE"
        )
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "router") == Assignment("", "NONE_ROUTER")

    def test_override_policy_has_no_effect_while_selector_names_a_class(self) -> None:
        service = isvc(
            acceleratorSelector={"acceleratorClass": "nvidia-h200"},
            engine={"acceleratorOverride": {"policy": "Cheapest"}},
        )
        assert engine(service) == Assignment("nvidia-h200", "SELECTOR")

    def test_override_wins_for_the_same_field(self) -> None:
        service = isvc(
            acceleratorSelector={"policy": "Cheapest"},
            engine={"acceleratorOverride": {"policy": "MostCapable"}},
            decoder={"minReplicas": 1},
        )
        assert engine(service) == Assignment("nvidia-h200", "POLICY", policy="MostCapable")
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "decoder") == Assignment(
            "nvidia-h100", "POLICY", policy="Cheapest"
        )
        service = isvc(
            acceleratorSelector={"acceleratorClass": "nvidia-h100"},
            engine={"acceleratorOverride": {"acceleratorClass": "nvidia-h200"}},
        )
        assert engine(service) == Assignment("nvidia-h200", "COMPONENT_OVERRIDE")
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "decoder") == Assignment(
            "nvidia-h100", "SELECTOR"
        )

    def test_override_constraints_have_no_effect(self) -> None:
        service = isvc(
            engine={
                "acceleratorOverride": {"policy": "FirstAvailable", "constraints": {"excludedClasses": ["nvidia-h100"]}}
            }
        )
        assert engine(service) == Assignment("nvidia-h100", "POLICY", policy="FirstAvailable")

    def test_decoder_override_policy_alone(self) -> None:
        service = isvc(decoder={"acceleratorOverride": {"policy": "MostCapable"}})
        assert assign_accelerator(service, STEP2_LIST, STEP1_CLASSES, "decoder") == Assignment(
            "nvidia-h200", "POLICY", policy="MostCapable"
        )
        assert engine(service) == Assignment("", "NONE_NOT_REQUESTED")

    def test_present_but_empty_override_class_falls_through_to_the_policy(self) -> None:
        # facts 4.1: the empty override takes the override's place and names nothing, so the
        # selector's class is not used and the policy step runs.
        service = isvc(
            acceleratorSelector={"acceleratorClass": "nvidia-h200", "policy": "Cheapest"},
            engine={"acceleratorOverride": {"acceleratorClass": ""}},
        )
        assert engine(service) == Assignment("nvidia-h100", "POLICY", policy="Cheapest")
        service = isvc(
            acceleratorSelector={"acceleratorClass": "nvidia-h200"},
            engine={"acceleratorOverride": {"acceleratorClass": ""}},
        )
        assert engine(service) == Assignment("", "NONE_NOT_REQUESTED")

    def test_empty_selector_class_names_nothing(self) -> None:
        assert engine(selector(acceleratorClass="", policy="MostCapable")) == Assignment(
            "nvidia-h200", "POLICY", policy="MostCapable"
        )

    def test_override_policy_with_empty_value_falls_back_to_selector(self) -> None:
        service = isvc(acceleratorSelector={"policy": "MostCapable"}, engine={"acceleratorOverride": {"policy": ""}})
        assert engine(service) == Assignment("nvidia-h200", "POLICY", policy="MostCapable")


# ---------------------------------------------------------------------------------------------
# Missing classes: "The InferenceService has an AcceleratorClassError event", "Change or delete a class"


class TestMissingClasses:
    def test_deleted_named_class(self) -> None:
        runtime = ["nvidia-h100", "nvidia-l40s"]
        remaining = {"nvidia-h100": CONCEPT_CLASSES["nvidia-h100"]}
        result = engine(selector(acceleratorClass="nvidia-l40s"), runtime, remaining)
        assert result == Assignment(
            "nvidia-l40s",
            "SELECTOR",
            error="accelerator class nvidia-l40s not found at cluster scope",
            workload_blocked=True,
        )
        assert (
            accelerator_event_message("engine", result.error)
            == "Failed to get accelerator class for engine: accelerator class nvidia-l40s not found at cluster scope"
        )

    def test_troubleshooting_event(self) -> None:
        result = engine(isvc(PIN_TAB), STEP2_LIST, {"nvidia-h200": STEP1_CLASSES["nvidia-h200"]})
        assert result.error == "accelerator class nvidia-h100 not found at cluster scope"
        assert result.workload_blocked and result.log == ""
        assert (
            accelerator_event_message("engine", result.error)
            == "Failed to get accelerator class for engine: accelerator class nvidia-h100 not found at cluster scope"
        )

    def test_deleted_override_class_for_decoder(self) -> None:
        service = isvc(PD_EXAMPLE)
        result = assign_accelerator(service, STEP2_LIST, {"nvidia-h100": STEP1_CLASSES["nvidia-h100"]}, "decoder")
        assert result == Assignment(
            "nvidia-h200",
            "COMPONENT_OVERRIDE",
            error="accelerator class nvidia-h200 not found at cluster scope",
            workload_blocked=True,
        )
        assert (
            accelerator_event_message("decoder", result.error)
            == "Failed to get accelerator class for decoder: accelerator class nvidia-h200 not found at cluster scope"
        )

    def test_policy_picks_again_from_the_other_classes(self) -> None:
        runtime = ["nvidia-h100", "nvidia-l40s"]
        assert picked(selector(policy="Cheapest"), runtime, CONCEPT_CLASSES) == "nvidia-l40s"
        remaining = {"nvidia-h100": CONCEPT_CLASSES["nvidia-h100"]}
        assert engine(selector(policy="Cheapest"), runtime, remaining) == Assignment(
            "nvidia-h100", "POLICY", policy="Cheapest"
        )

    def test_policy_runs_without_a_class_when_none_qualifies(self) -> None:
        assert engine(selector(policy="Cheapest"), ["nvidia-l40s"], {}) == Assignment(
            "", "NONE_NO_CANDIDATE", policy="Cheapest"
        )
        service = selector(policy="FirstAvailable", constraints={"architectureFamilies": ["ada"]})
        assert engine(
            service, ["nvidia-h100", "nvidia-l40s"], {"nvidia-h100": CONCEPT_CLASSES["nvidia-h100"]}
        ) == Assignment("", "NONE_NO_CANDIDATE", policy="FirstAvailable")


# ---------------------------------------------------------------------------------------------
# The ome-cluster classes


class TestClusterClasses:
    @pytest.mark.parametrize(
        ("selector_fields", "expected"),
        [
            ({"policy": "FirstAvailable"}, "nvidia-h100-80gb"),
            ({"policy": "Cheapest"}, "nvidia-l40s-48gb"),
            ({"policy": "MostCapable"}, "nvidia-h200-141gb"),
            ({"policy": "BestFit", "constraints": {"minMemory": 80}}, "nvidia-h100-80gb"),
            ({"policy": "BestFit", "constraints": {"minMemory": 40}}, "nvidia-l40s-48gb"),
            ({"policy": "BestFit", "constraints": {"minMemory": 100}}, "nvidia-h200-141gb"),
            ({"policy": "Cheapest", "constraints": {"requiredFeatures": ["fp8"]}}, "nvidia-l40s-48gb"),
            ({"policy": "Cheapest", "constraints": {"requiredFeatures": ["fp8", "nvlink"]}}, "nvidia-h100-80gb"),
            ({"policy": "Cheapest", "constraints": {"minArchitectureVersion": "9.0"}}, "nvidia-h100-80gb"),
            ({"policy": "Cheapest", "constraints": {"excludedClasses": ["nvidia-l40s-48gb"]}}, "nvidia-a100-80gb"),
            ({"policy": "FirstAvailable", "constraints": {"architectureFamilies": ["ampere"]}}, "nvidia-a100-80gb"),
            (
                {"policy": "FirstAvailable", "constraints": {"architectureFamilies": ["nvidia-ada-lovelace"]}},
                "nvidia-l40s-48gb",
            ),
            ({"policy": "MostCapable", "constraints": {"maxMemory": 79}}, "nvidia-l40s-48gb"),
            ({"policy": "MostCapable", "constraints": {"maxMemory": 80}}, "nvidia-h100-80gb"),
            (
                {
                    "policy": "MostCapable",
                    "constraints": {"architectureFamilies": ["hopper"], "preferredPrecisions": ["int8"]},
                },
                "nvidia-h200-141gb",
            ),
            ({"acceleratorClass": "nvidia-a100-80gb", "policy": "MostCapable"}, "nvidia-a100-80gb"),
        ],
    )
    def test_pick(self, selector_fields: dict[str, Any], expected: str) -> None:
        assert picked(selector(**selector_fields), CLUSTER_LIST, CLUSTER) == expected

    def test_hyphenated_family_matches_nothing(self) -> None:
        service = selector(policy="FirstAvailable", constraints={"architectureFamilies": ["ada-lovelace"]})
        assert engine(service, CLUSTER_LIST, CLUSTER) == Assignment("", "NONE_NO_CANDIDATE", policy="FirstAvailable")

    def test_cheapest_exact_decimal_costs(self) -> None:
        order = ["nvidia-h200-141gb", "nvidia-h100-80gb", "nvidia-a100-80gb"]
        assert picked(selector(policy="Cheapest"), order, CLUSTER) == "nvidia-a100-80gb"
        assert picked(selector(policy="Cheapest"), order[:2], CLUSTER) == "nvidia-h100-80gb"


# ---------------------------------------------------------------------------------------------
# Kubernetes quantities


class TestQuantities:
    @pytest.mark.parametrize(
        ("text", "value"),
        [
            ("80Gi", Decimal(80 * 2**30)),
            ("141Gi", Decimal(141 * 2**30)),
            ("80G", Decimal(80_000_000_000)),
            ("3350", Decimal(3350)),
            ("4.50", Decimal("4.5")),
            ("1e3", Decimal(1000)),
            ("1E3", Decimal(1000)),
            ("1e-3", Decimal("0.001")),
            ("500m", Decimal("0.5")),
            ("1.5Ki", Decimal(1536)),
            ("2Mi", Decimal(2 * 2**20)),
            ("1Ti", Decimal(2**40)),
            ("1Pi", Decimal(2**50)),
            ("1Ei", Decimal(2**60)),
            ("1k", Decimal(1000)),
            ("1M", Decimal(10**6)),
            ("1T", Decimal(10**12)),
            ("1P", Decimal(10**15)),
            ("1E", Decimal(10**18)),
            ("5u", Decimal("0.000005")),
            ("5n", Decimal("0.000000005")),
            (".5", Decimal("0.5")),
            ("1.", Decimal(1)),
            ("+2", Decimal(2)),
            ("-2Gi", Decimal(-2 * 2**30)),
        ],
    )
    def test_parse(self, text: str, value: Decimal) -> None:
        assert parse_quantity(text) == value

    @pytest.mark.parametrize(
        "text", ["", "abc", "80 Gi", " 80Gi", "80gi", "1K", "1e", "Gi", ".", "1e3.5", "80GiB", "1E30"]
    )
    def test_invalid(self, text: str) -> None:
        assert parse_quantity(text) is None

    def test_invalid_memory_counts_as_absent(self) -> None:
        odd = make_class("odd", capabilities={"memoryGB": "lots"})
        assert memory_gib(odd) is None
        assert not passes_constraints("odd", odd, types_pb2.AcceleratorConstraints(min_memory=0))

    def test_invalid_cost_counts_as_absent(self) -> None:
        classes = {
            "odd": make_class("odd", cost={"perHour": "cheap", "tier": "low"}),
            "priced": make_class("priced", cost={"perHour": "10"}),
        }
        assert picked(selector(policy="Cheapest"), ["odd", "priced"], classes) == "priced"

    def test_memory_gib_rounds_up_bytes_then_down_gib(self) -> None:
        assert memory_gib(make_class("m", capabilities={"memoryGB": "1073741823.5"})) == 1
        assert memory_gib(make_class("m", capabilities={"memoryGB": "1073741823"})) == 0
        assert memory_gib(make_class("m", capabilities={"memoryGB": "1.5Gi"})) == 1
