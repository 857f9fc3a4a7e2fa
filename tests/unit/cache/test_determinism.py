"""The same objects applied in any order give byte-identical answers, and runtimes are fetched
in OME's order: ServingRuntimes first, then ClusterServingRuntimes, each list newest
``creationTimestamp`` first, then by name (ome-selection-facts.md 3.2).
"""

from __future__ import annotations

import random

import pytest
import yaml
from google.protobuf import json_format
from helpers_docs import (
    LLAMA_3_2_3B_BASEMODEL,
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_HOPPER,
    LLAMA_3_3_70B_ISVC,
    LLAMA_3_70B_ISVC,
    NS,
    QWEN2_5_7B_CBM,
    QWEN2_5_7B_ISVC,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_LLAMA_3_3_70B_MULTINODE,
    SRT_MISTRAL_7B_INSTRUCT,
    SRT_QWEN2_5_7B,
    catalog,
    entry,
    explain,
    inference_service,
    isvc,
    load,
    model,
    objects,
    runtime,
    select,
    worked_example_runtimes,
)
from ome.selector.v1 import selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.rpc import selection

SEEDS = [0, 1, 2, 3, 7, 42, 1234, 99991]


def cluster() -> list:
    """Runtimes of every doc example, with ties in creationTimestamp and name across kinds."""
    return objects(
        *worked_example_runtimes(),
        runtime("srt-llama-tie-b", entry(priority=3), size=("1B", "8B"), created="2025-01-01T00:00:00Z"),
        runtime("srt-llama-tie-a", entry(priority=3), size=("1B", "8B"), created="2025-01-01T00:00:00Z"),
        runtime("team-llama-2", entry(priority=1), namespace=NS, created="2025-03-01T00:00:00Z"),
        runtime("dup", disabled=True, namespace=NS),
        runtime("dup", size=("500M", "2B")),
        runtime("old-disabled", disabled=True, created="2020-01-01T00:00:00Z"),
        runtime("no-auto", entry(auto_select=False), created="2026-01-01T00:00:00Z"),
        runtime(
            "mistral",
            entry(architecture="MistralForCausalLM"),
            entry(format=("gguf", "1")),
            created="2025-01-01T00:00:00Z",
        ),
        catalog(SRT_MISTRAL_7B_INSTRUCT),
        catalog(SRT_QWEN2_5_7B),
        catalog(SRT_LLAMA_3_3_70B_INSTRUCT),
        LLAMA_3_3_70B_HOPPER,
        SRT_LLAMA_3_3_70B_MULTINODE,
        LLAMA_3_2_3B_BASEMODEL,
        LLAMA_3_3_70B_CBM,
        QWEN2_5_7B_CBM,
        model("llama-3-2-3b-instruct", namespace=None, size="3.21B"),
    )


def with_a100() -> dict:
    doc = yaml.safe_load(LLAMA_3_3_70B_ISVC)
    doc["spec"]["acceleratorSelector"]["acceleratorClass"] = "nvidia-a100"
    return doc


SERVICES = {
    "worked-example": isvc(),
    "other-namespace": isvc(namespace="other"),
    "troubleshoot": QWEN2_5_7B_ISVC,
    "accelerator-h100": LLAMA_3_3_70B_ISVC,
    "accelerator-a100": with_a100(),
    "deployment-mode": LLAMA_3_70B_ISVC,
    "named": isvc(runtime_name="srt-llama-small"),
    "named-warning": isvc(runtime_name="dup"),
}


def answers(store: CacheStore) -> dict[str, bytes]:
    out = {}
    for key, service in SERVICES.items():
        out["select/" + key] = select(store, service).SerializeToString(deterministic=True)
        if key.startswith("named"):
            continue
        out["explain/" + key] = explain(store, service).SerializeToString(deterministic=True)
    return out


@pytest.fixture(scope="module")
def baseline() -> dict[str, bytes]:
    return answers(load(cluster(), version="same"))


def test_the_baseline_has_every_kind_of_answer(baseline: dict[str, bytes]) -> None:
    store = load(cluster(), version="same")
    assert select(store, SERVICES["worked-example"]).selection.runtime.name == "team-llama"
    assert select(store, SERVICES["troubleshoot"]).no_runtime_message.startswith(
        "no runtime found to support model safetensors"
    )
    assert list(select(store, SERVICES["named-warning"]).warnings) != []
    assert len(baseline) == 14


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffled_objects_give_byte_identical_answers(seed: int, baseline: dict[str, bytes]) -> None:
    shuffled = cluster()
    random.Random(seed).shuffle(shuffled)
    assert answers(load(shuffled, version="same")) == baseline


@pytest.mark.parametrize("seed", SEEDS)
def test_shuffled_upserts_give_byte_identical_answers(seed: int, baseline: dict[str, bytes]) -> None:
    """The same objects arriving one upsert at a time, in a shuffled order."""
    shuffled = cluster()
    random.Random(seed).shuffle(shuffled)
    store = CacheStore()
    store.apply_snapshot("same", [])
    for obj in shuffled:
        store.upsert("same", [obj])
    assert answers(store) == baseline


def test_repeated_requests_on_one_snapshot_are_identical(baseline: dict[str, bytes]) -> None:
    store = load(cluster(), version="same")
    assert [answers(store) for _ in range(3)] == [baseline] * 3


class TestFetchOrder:
    RUNTIMES = [
        runtime("sr-old", disabled=True, namespace=NS, created="2024-01-01T00:00:00Z"),
        runtime("sr-new", disabled=True, namespace=NS, created="2025-01-01T00:00:00Z"),
        runtime("sr-b-same", disabled=True, namespace=NS, created="2024-06-01T00:00:00Z"),
        runtime("sr-a-same", disabled=True, namespace=NS, created="2024-06-01T00:00:00Z"),
        runtime("csr-b", disabled=True, created="2025-01-01T00:00:00Z"),
        runtime("csr-a", disabled=True, created="2025-01-01T00:00:00Z"),
        runtime("csr-newest", disabled=True, created="2026-01-01T00:00:00Z"),
        runtime("csr-old", disabled=True, created="2023-01-01T00:00:01Z"),
        runtime("csr-subsecond", disabled=True, created="2023-01-01T00:00:01.5Z"),
    ]
    ORDER = ["sr-new", "sr-a-same", "sr-b-same", "sr-old", "csr-newest", "csr-a", "csr-b", "csr-subsecond", "csr-old"]

    @pytest.mark.parametrize("seed", SEEDS)
    def test_exclusions_in_fetch_order(self, seed: int) -> None:
        shuffled = list(self.RUNTIMES)
        random.Random(seed).shuffle(shuffled)
        got = select([*shuffled, model()], isvc())
        assert [e.runtime.name for e in got.exclusions] == self.ORDER

    @pytest.mark.parametrize("seed", SEEDS)
    def test_no_runtime_message_in_fetch_order(self, seed: int) -> None:
        shuffled = list(self.RUNTIMES)
        random.Random(seed).shuffle(shuffled)
        got = select([*shuffled, model()], isvc())
        listed = "; ".join(f"{name} (runtime is disabled)" for name in self.ORDER)
        assert got.no_runtime_message == (
            "no runtime found to support model safetensors with format safetensors in namespace llama-demo. Checked 9 runtimes "
            "(4 namespace-scoped, 5 cluster-scoped). Excluded runtimes: " + listed
        )

    def test_a_runtime_without_a_timestamp_counts_as_oldest(self) -> None:
        """Our choice (every object in a cluster has a creationTimestamp)."""
        got = select(
            [
                runtime("a-none", disabled=True),
                runtime("z-dated", disabled=True, created="2000-01-01T00:00:00Z"),
                model(),
            ],
            isvc(),
        )
        assert [e.runtime.name for e in got.exclusions] == ["z-dated", "a-none"]

    @pytest.mark.parametrize("seed", SEEDS)
    def test_fetch_order_never_changes_the_winner(self, seed: int) -> None:
        runtimes = [
            runtime("b", created="2026-01-01T00:00:00Z"),
            runtime("a", created="2020-01-01T00:00:00Z"),
            runtime("c", created="2023-01-01T00:00:00Z"),
        ]
        random.Random(seed).shuffle(runtimes)
        assert [c.runtime.name for c in select([*runtimes, model()], isvc()).candidates] == ["a", "b", "c"]


class TestAnswersDoNotDependOnEarlierRequests:
    """An answer depends on the snapshot and the request only, not on what was asked before
    (the per-snapshot memo must not leak one request's answer into another's)."""

    @staticmethod
    def _inline(call: str, store: CacheStore, model_name: str) -> bytes:
        spec = json_format.ParseDict(model()["spec"], types_pb2.BaseModelSpec())
        service = inference_service(isvc(model_name))
        if call == "select":
            return selection.select_runtime(
                store.snapshot, selector_pb2.SelectRuntimeRequest(inference_service=service, model_spec=spec)
            ).SerializeToString(deterministic=True)
        return selection.explain_runtimes(
            store.snapshot, selector_pb2.ExplainRuntimesRequest(inference_service=service, model_spec=spec)
        ).SerializeToString(deterministic=True)

    def test_select_with_an_inline_model_spec(self) -> None:
        fresh = self._inline("select", load(runtime("rt")), "second")
        store = load(runtime("rt"))
        self._inline("select", store, "first")
        assert self._inline("select", store, "second") == fresh

    def test_explain_with_an_inline_model_spec(self) -> None:
        fresh = self._inline("explain", load(runtime("rt")), "second")
        store = load(runtime("rt"))
        self._inline("explain", store, "first")
        assert self._inline("explain", store, "second") == fresh

    def test_snapshot_models_in_any_order(self) -> None:
        services = [isvc(), isvc(namespace="other"), QWEN2_5_7B_ISVC, LLAMA_3_3_70B_ISVC, LLAMA_3_70B_ISVC]
        fresh = [answers_for(load(cluster(), version="same"), s) for s in services]
        store = load(cluster(), version="same")
        assert [answers_for(store, s) for s in reversed(services)][::-1] == fresh


def answers_for(store: CacheStore, service: object) -> bytes:
    return select(store, service).SerializeToString(deterministic=True) + explain(store, service).SerializeToString(
        deterministic=True
    )
