"""The ServingRuntime / ClusterServingRuntime validating webhooks (``runtime_webhook.validate_runtime``).

Sources: runtime-inheritance.md ("Chain limits", "What admission checks"), accelerator-classes.md
("Change or delete a class"), runtime-accelerator-class-matching.md (the quoted denial),
serving-runtimes.md ("Common errors"), runtime-selection-scoring.md (``different priorities``)
and ome-selection-facts.md 5.3 and 8.7. Every expected string is a literal from those pages.
"""

from __future__ import annotations

import textwrap
from typing import Any

import pytest
import yaml
from google.protobuf import json_format
from helpers_docs import LLAMA_3_3_70B_HOPPER, SGLANG_CHILD, SGLANG_PROFILE
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2
from ome_selector.cache.snapshot import Snapshot
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.flows.runtime_webhook import RuntimeVerdict, validate_runtime

SR_WEBHOOK = "servingruntime.ome-webhook-server.validator"
CSR_WEBHOOK = "clusterservingruntime.ome-webhook-server.validator"
NS = "llama-demo"

_TYPES: dict[str, tuple[type, str]] = {
    "ServingRuntime": (types_pb2.ServingRuntime, "serving_runtime"),
    "ClusterServingRuntime": (types_pb2.ClusterServingRuntime, "cluster_serving_runtime"),
    "AcceleratorClass": (types_pb2.AcceleratorClass, "accelerator_class"),
}

# ---------------------------------------------------------------------------------------------
# Builders: YAML -> proto -> CacheObject -> snapshot


def parse(text: str) -> Any:
    """One object from YAML, as the proto of its ``kind``."""
    doc = yaml.safe_load(textwrap.dedent(text))
    message_type, _ = _TYPES[doc["kind"]]
    return json_format.ParseDict(doc, message_type(), ignore_unknown_fields=True)


def cache(message: Any) -> cache_pb2.CacheObject:
    field = _TYPES[message.kind][1]
    return cache_pb2.CacheObject(**{field: message})


def snapshot(*messages: Any) -> Snapshot:
    store = CacheStore()
    store.apply_snapshot("v1", [cache(m) for m in messages])
    return store.snapshot


def check(snap: Snapshot, message: Any) -> RuntimeVerdict:
    return validate_runtime(snap, message.kind, message)


def csr(name: str, parent: str | None = None, **spec: Any) -> types_pb2.ClusterServingRuntime:
    meta: dict[str, Any] = {"name": name}
    if parent is not None:
        meta["annotations"] = {"ome.io/inherit-from": parent}
    doc = {"apiVersion": "ome.io/v1beta1", "kind": "ClusterServingRuntime", "metadata": meta, "spec": spec}
    return json_format.ParseDict(doc, types_pb2.ClusterServingRuntime(), ignore_unknown_fields=True)


def sr(name: str, parent: str | None = None, namespace: str = NS, **spec: Any) -> types_pb2.ServingRuntime:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if parent is not None:
        meta["annotations"] = {"ome.io/inherit-from": parent}
    doc = {"apiVersion": "ome.io/v1beta1", "kind": "ServingRuntime", "metadata": meta, "spec": spec}
    return json_format.ParseDict(doc, types_pb2.ServingRuntime(), ignore_unknown_fields=True)


def accelerator_class(name: str) -> types_pb2.AcceleratorClass:
    return parse(
        f"""
        apiVersion: ome.io/v1beta1
        kind: AcceleratorClass
        metadata:
          name: {name}
        spec:
          vendor: nvidia
          resources:
            - name: nvidia.com/gpu
              quantity: "8"
        """
    )


def denied(message: str, webhook: str, chain: tuple[str, ...] = ()) -> RuntimeVerdict:
    return RuntimeVerdict(False, message, webhook, chain)


def allowed(webhook: str, chain: tuple[str, ...] = ()) -> RuntimeVerdict:
    return RuntimeVerdict(True, "", webhook, chain)


def kubectl(verdict: RuntimeVerdict) -> str:
    """What kubectl prints for a denial (runtime-inheritance.md, "What admission checks")."""
    return f'admission webhook "{verdict.webhook}" denied the request: {verdict.denial_message}'


# ---------------------------------------------------------------------------------------------
# runtime-inheritance.md, "Define a profile and inherit from it": profile.yaml and runtime.yaml

PROFILE = parse(SGLANG_PROFILE)
RUNTIME = parse(SGLANG_CHILD)


def inheriting(message: Any, parent: str) -> Any:
    out = type(message)()
    out.CopyFrom(message)
    out.metadata.annotations["ome.io/inherit-from"] = parent
    return out


def spec_changed(message: Any, **fields: Any) -> Any:
    doc = json_format.MessageToDict(message)
    doc["spec"].update(fields)
    return json_format.ParseDict(doc, type(message)(), ignore_unknown_fields=True)


class TestTheProfileExample:
    def test_profile_yaml_is_admitted(self) -> None:
        assert check(snapshot(), PROFILE) == allowed(CSR_WEBHOOK)

    def test_runtime_yaml_after_profile_yaml_is_admitted_with_its_chain_root_first(self) -> None:
        assert check(snapshot(PROFILE), RUNTIME) == allowed(SR_WEBHOOK, ("sglang-profile", "sglang-llama-3-2-3b"))

    def test_a_runtime_without_a_parent_reports_no_chain(self) -> None:
        plain = parse(SGLANG_CHILD)
        del plain.metadata.annotations["ome.io/inherit-from"]
        assert check(snapshot(), plain) == allowed(SR_WEBHOOK)

    def test_an_empty_inherit_from_means_no_parent(self) -> None:
        assert check(snapshot(), inheriting(RUNTIME, "")) == allowed(SR_WEBHOOK)


# ---------------------------------------------------------------------------------------------
# runtime-inheritance.md, "What admission checks" (the four rows)


class TestAdmissionTable:
    def test_parent_not_found_when_runtime_yaml_is_applied_before_profile_yaml(self) -> None:
        verdict = check(snapshot(), RUNTIME)
        assert verdict == denied(
            'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])', SR_WEBHOOK
        )
        assert kubectl(verdict) == (
            'admission webhook "servingruntime.ome-webhook-server.validator" denied the request: '
            'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
        )

    def test_parent_not_found_further_up_lists_the_chain_walked(self) -> None:
        snap = snapshot(csr("mid", "gone"))
        assert check(snap, csr("top", "mid")) == denied(
            'inherit-from parent "gone" not found (chain so far: [top mid])', CSR_WEBHOOK
        )

    def test_a_runtime_naming_itself_is_a_cycle(self) -> None:
        verdict = check(snapshot(PROFILE), inheriting(RUNTIME, "sglang-llama-3-2-3b"))
        assert verdict == denied("inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]", SR_WEBHOOK)

    def test_a_cluster_runtime_naming_itself_is_a_cycle(self) -> None:
        assert check(snapshot(), csr("x", "x")) == denied("inheritance cycle detected: [x x]", CSR_WEBHOOK)

    def test_a_serving_runtime_naming_a_cluster_runtime_with_its_own_name_is_a_cycle(self) -> None:
        snap = snapshot(csr("sglang-llama-3-2-3b"))
        verdict = check(snap, inheriting(RUNTIME, "sglang-llama-3-2-3b"))
        assert verdict == denied("inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]", SR_WEBHOOK)

    def test_a_longer_loop_is_a_cycle(self) -> None:
        snap = snapshot(csr("b", "a"))
        assert check(snap, csr("a", "b")) == denied("inheritance cycle detected: [a b a]", CSR_WEBHOOK)

    def test_an_update_that_closes_a_loop_through_the_stored_copy_is_a_cycle(self) -> None:
        # The stored ``a`` has no parent; the update of ``a`` replaces it for the check.
        snap = snapshot(csr("a"), csr("b", "a"))
        assert snap.cluster_serving_runtimes["b"].chain == ("a", "b")
        assert check(snap, csr("a", "b")) == denied("inheritance cycle detected: [a b a]", CSR_WEBHOOK)

    def test_more_than_five_runtimes_exceed_the_max_depth(self) -> None:
        snap = snapshot(csr("a"), csr("b", "a"), csr("c", "b"), csr("d", "c"), csr("e", "d"))
        verdict = check(snap, csr("f", "e"))
        assert verdict.denial_message.startswith("inheritance chain exceeds max depth 5")
        assert verdict == denied("inheritance chain exceeds max depth 5 (chain: [f e d c b])", CSR_WEBHOOK)

    def test_five_runtimes_are_allowed(self) -> None:
        snap = snapshot(csr("a"), csr("b", "a"), csr("c", "b"), csr("d", "c"))
        assert check(snap, csr("e", "d")) == allowed(CSR_WEBHOOK, ("a", "b", "c", "d", "e"))

    def test_depth_is_checked_before_a_missing_parent(self) -> None:
        snap = snapshot(csr("b", "missing"), csr("c", "b"), csr("d", "c"), csr("e", "d"))
        assert check(snap, csr("f", "e")) == denied(
            "inheritance chain exceeds max depth 5 (chain: [f e d c b])", CSR_WEBHOOK
        )

    def test_depth_is_checked_before_a_cycle(self) -> None:
        snap = snapshot(csr("b", "f"), csr("c", "b"), csr("d", "c"), csr("e", "d"))
        assert check(snap, csr("f", "e")) == denied(
            "inheritance chain exceeds max depth 5 (chain: [f e d c b])", CSR_WEBHOOK
        )

    def test_a_profile_without_disabled_is_denied(self) -> None:
        profile = parse(SGLANG_PROFILE)
        profile.spec.ClearField("disabled")
        verdict = check(snapshot(), profile)
        assert verdict == denied(
            'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true', CSR_WEBHOOK
        )
        assert kubectl(verdict) == (
            'admission webhook "clusterservingruntime.ome-webhook-server.validator" denied the request: '
            'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
        )

    def test_a_profile_with_disabled_false_is_denied(self) -> None:
        profile = spec_changed(PROFILE, disabled=False)
        assert (
            check(snapshot(), profile).denial_message
            == 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
        )

    def test_a_namespaced_profile_is_denied_by_the_servingruntime_webhook(self) -> None:
        profile = sr("ns-profile")
        profile.metadata.annotations["ome.io/runtime-profile"] = "true"
        assert check(snapshot(), profile) == denied(
            'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true', SR_WEBHOOK
        )

    def test_only_the_exact_string_true_marks_a_profile(self) -> None:
        # facts 8.7: the marker is the exact string "true".
        marked = csr("not-a-profile")
        marked.metadata.annotations["ome.io/runtime-profile"] = "True"
        assert check(snapshot(), marked) == allowed(CSR_WEBHOOK)

    def test_a_child_does_not_inherit_the_profile_marker(self) -> None:
        # "the parent's ome.io/runtime-profile annotation and other metadata stay on the parent"
        assert check(snapshot(PROFILE), RUNTIME).allowed

    def test_a_disabled_runtime_is_still_checked_for_its_chain(self) -> None:
        disabled = spec_changed(RUNTIME, disabled=True)
        verdict = check(snapshot(), disabled)
        assert verdict == denied(
            'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])', SR_WEBHOOK
        )

    def test_profile_marker_is_checked_before_the_chain(self) -> None:
        # Order chosen by this module (the docs name both checks without ordering them).
        broken = csr("orphan-profile", "nowhere")
        broken.metadata.annotations["ome.io/runtime-profile"] = "true"
        assert (
            check(snapshot(), broken).denial_message
            == 'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true'
        )


# ---------------------------------------------------------------------------------------------
# runtime-inheritance.md, "Chain limits": where OME looks for the parents in a chain


class TestChainScope:
    def test_a_cluster_runtime_parent_must_be_a_cluster_runtime(self) -> None:
        snap = snapshot(sr("base"))
        assert check(snap, csr("child", "base")) == denied(
            'inherit-from parent "base" not found (chain so far: [child])', CSR_WEBHOOK
        )

    def test_a_cluster_runtime_finds_a_cluster_parent(self) -> None:
        assert check(snapshot(csr("base")), csr("child", "base")) == allowed(CSR_WEBHOOK, ("base", "child"))

    def test_a_serving_runtime_prefers_its_namespace(self) -> None:
        snap = snapshot(csr("root-a"), csr("root-b"), sr("base", "root-a"), csr("base", "root-b"))
        assert check(snap, sr("child", "base")) == allowed(SR_WEBHOOK, ("root-a", "base", "child"))

    def test_a_serving_runtime_falls_back_to_cluster_runtimes(self) -> None:
        snap = snapshot(csr("root-b"), csr("base", "root-b"))
        assert check(snap, sr("child", "base")) == allowed(SR_WEBHOOK, ("root-b", "base", "child"))

    def test_a_serving_runtime_in_another_namespace_is_not_a_parent(self) -> None:
        snap = snapshot(sr("base", namespace="other"))
        assert check(snap, sr("child", "base")) == denied(
            'inherit-from parent "base" not found (chain so far: [child])', SR_WEBHOOK
        )

    def test_namespace_first_holds_for_the_whole_walk(self) -> None:
        # child (SR) -> mid (CSR) -> leaf: the ServingRuntime ``leaf`` of the child's namespace
        # wins over the ClusterServingRuntime ``leaf`` even after the walk stepped onto a CSR.
        snap = snapshot(
            csr("sr-root"),
            csr("csr-root"),
            sr("leaf", "sr-root"),
            csr("leaf", "csr-root"),
            csr("mid", "leaf"),
        )
        assert check(snap, sr("child", "mid")) == allowed(SR_WEBHOOK, ("sr-root", "leaf", "mid", "child"))
        # The same ClusterServingRuntime, admitted itself, resolves among ClusterServingRuntimes.
        assert check(snap, csr("mid", "leaf")) == allowed(CSR_WEBHOOK, ("csr-root", "leaf", "mid"))

    def test_namespace_first_walk_can_break_only_for_the_namespaced_child(self) -> None:
        # The namespaced ``leaf`` names a parent that exists nowhere.
        snap = snapshot(csr("csr-root"), sr("leaf", "ghost"), csr("leaf", "csr-root"), csr("mid", "leaf"))
        assert check(snap, sr("child", "mid")) == denied(
            'inherit-from parent "ghost" not found (chain so far: [child mid leaf])', SR_WEBHOOK
        )
        assert check(snap, csr("mid", "leaf")) == allowed(CSR_WEBHOOK, ("csr-root", "leaf", "mid"))

    def test_names_alone_count_across_kinds(self) -> None:
        # SR ``x`` -> CSR ``y`` -> ``x``: the name ``x`` is already in the chain.
        snap = snapshot(csr("y", "x"), csr("x"))
        assert check(snap, sr("x", "y")) == denied("inheritance cycle detected: [x y x]", SR_WEBHOOK)


# ---------------------------------------------------------------------------------------------
# runtime-accelerator-class-matching.md and accelerator-classes.md

HOPPER = parse(LLAMA_3_3_70B_HOPPER)


class TestAcceleratorClasses:
    def test_the_quoted_denial_for_missing_classes(self) -> None:
        verdict = check(snapshot(), HOPPER)
        assert verdict == denied(
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h100 nvidia-h200]", CSR_WEBHOOK
        )
        assert kubectl(verdict) == (
            'admission webhook "clusterservingruntime.ome-webhook-server.validator" denied the request: '
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h100 nvidia-h200]"
        )

    def test_only_the_missing_classes_are_listed(self) -> None:
        verdict = check(snapshot(accelerator_class("nvidia-h100")), HOPPER)
        assert (
            verdict.denial_message == "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h200]"
        )

    def test_classes_created_first_admit_the_runtime(self) -> None:
        assert check(snapshot(accelerator_class("nvidia-h100"), accelerator_class("nvidia-h200")), HOPPER) == allowed(
            CSR_WEBHOOK
        )

    def test_missing_names_keep_list_order_and_duplicates(self) -> None:
        runtime = csr(
            "dup",
            acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s", "nvidia-h100", "nvidia-a10", "nvidia-l40s"]},
        )
        verdict = check(snapshot(accelerator_class("nvidia-h100")), runtime)
        assert (
            verdict.denial_message
            == "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-l40s nvidia-a10 nvidia-l40s]"
        )

    def test_the_servingruntime_webhook_denies_the_same_way(self) -> None:
        runtime = sr("l40s-rt", acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s"]})
        assert check(snapshot(), runtime) == denied(
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-l40s]", SR_WEBHOOK
        )

    def test_deleting_a_class_rejects_the_next_update_of_an_enabled_runtime(self) -> None:
        runtime = csr("l40s-rt", acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s"]})
        store = CacheStore()
        store.apply_snapshot("v1", [cache(accelerator_class("nvidia-l40s")), cache(runtime)])
        assert check(store.snapshot, runtime) == allowed(CSR_WEBHOOK)
        store.delete("v2", [cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_ACCELERATOR_CLASS, name="nvidia-l40s")])
        updated = spec_changed(runtime, modelSizeRange={"min": "1B", "max": "9B"})
        assert check(store.snapshot, updated) == denied(
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-l40s]", CSR_WEBHOOK
        )

    def test_a_disabled_runtime_listing_a_deleted_class_can_still_be_updated(self) -> None:
        runtime = csr("l40s-rt", acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s"]})
        store = CacheStore()
        store.apply_snapshot("v1", [cache(runtime)])  # the class is gone
        assert check(store.snapshot, spec_changed(runtime, disabled=True)) == allowed(CSR_WEBHOOK)

    def test_a_disabled_runtime_listing_unknown_classes_can_be_created(self) -> None:
        assert check(snapshot(), spec_changed(HOPPER, disabled=True)) == allowed(CSR_WEBHOOK)

    def test_a_disabled_profile_with_unknown_classes_is_admitted(self) -> None:
        profile = spec_changed(PROFILE, acceleratorRequirements={"acceleratorClasses": ["nvidia-h100"]})
        assert check(snapshot(), profile) == allowed(CSR_WEBHOOK)

    def test_the_chain_is_reported_when_a_later_check_denies(self) -> None:
        child = sr("child", "sglang-profile", acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s"]})
        verdict = check(snapshot(PROFILE), child)
        assert verdict == denied(
            "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-l40s]",
            SR_WEBHOOK,
            ("sglang-profile", "child"),
        )

    def test_a_child_that_does_not_set_disabled_counts_as_enabled(self) -> None:
        # The profile's ``disabled: true`` is inherited by the merged spec, but the webhook
        # reads the runtime's own spec (like the profile rule and auto-selection do).
        child = sr("child", "sglang-profile", acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s"]})
        child.spec.ClearField("disabled")
        assert (
            check(snapshot(PROFILE), child).denial_message
            == "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-l40s]"
        )

    def test_a_broken_chain_is_reported_before_unknown_classes(self) -> None:
        child = sr("child", "sglang-profile", acceleratorRequirements={"acceleratorClasses": ["nvidia-l40s"]})
        assert (
            check(snapshot(), child).denial_message
            == 'inherit-from parent "sglang-profile" not found (chain so far: [child])'
        )


# ---------------------------------------------------------------------------------------------
# runtime-selection-scoring.md / serving-runtimes.md "Common errors" / facts 5.3


def fmt(
    name: str | None, priority: int | None, auto_select: bool | None = True, format_name: str = "safetensors"
) -> dict[str, Any]:
    out: dict[str, Any] = {"modelFormat": {"name": format_name}, "modelFramework": {"name": "transformers"}}
    if name is not None:
        out["name"] = name
    if auto_select is not None:
        out["autoSelect"] = auto_select
    if priority is not None:
        out["priority"] = priority
    return out


class TestPriorities:
    def test_named_entries_with_different_priorities(self) -> None:
        runtime = sr("vllm-rt", supportedModelFormats=[fmt("vllm", 1), fmt("vllm", 2)])
        verdict = check(snapshot(), runtime)
        assert verdict == denied(
            "different priorities assigned for the model format vllm under the servingruntime vllm-rt", SR_WEBHOOK
        )
        assert verdict.denial_message.startswith("different priorities assigned for the model format")

    def test_the_clusterservingruntime_wording(self) -> None:
        runtime = csr("vllm-rt", supportedModelFormats=[fmt("vllm", 1), fmt("vllm", 2)])
        assert check(snapshot(), runtime) == denied(
            "different priorities assigned for the model format vllm under the clusterservingruntime vllm-rt",
            CSR_WEBHOOK,
        )

    def test_unnamed_entries_share_the_empty_key_and_leave_a_double_space(self) -> None:
        runtime = csr(
            "catalog-like",
            supportedModelFormats=[fmt(None, 1, format_name="safetensors"), fmt(None, 3, format_name="gguf")],
        )
        assert check(snapshot(), runtime) == denied(
            "different priorities assigned for the model format  under the clusterservingruntime catalog-like",
            CSR_WEBHOOK,
        )

    def test_checked_even_for_the_first_runtime_of_its_kind(self) -> None:
        # The docs state the rule without the public code's "other runtimes must exist" quirk.
        runtime = sr("first", supportedModelFormats=[fmt(None, 1), fmt(None, 2)])
        assert (
            check(snapshot(), runtime).denial_message
            == "different priorities assigned for the model format  under the servingruntime first"
        )

    def test_one_priority_is_fine(self) -> None:
        runtime = sr("same", supportedModelFormats=[fmt("vllm", 2), fmt("vllm", 2)])
        assert check(snapshot(), runtime) == allowed(SR_WEBHOOK)

    def test_an_unset_priority_is_not_compared(self) -> None:
        runtime = sr("unset", supportedModelFormats=[fmt("vllm", 2), fmt("vllm", None)])
        assert check(snapshot(), runtime) == allowed(SR_WEBHOOK)

    def test_set_priorities_of_one_name_must_agree_even_after_an_unset_one(self) -> None:
        # runtime-selection-scoring.md: entries that share a name "can't set different priorities"
        # (the public code compares with the first entry only, which sets none here; docs win).
        runtime = sr("first-unset", supportedModelFormats=[fmt("vllm", None), fmt("vllm", 1), fmt("vllm", 2)])
        assert (
            check(snapshot(), runtime).denial_message
            == "different priorities assigned for the model format vllm under the servingruntime first-unset"
        )

    def test_the_clash_names_the_later_entry_that_differs_from_the_first(self) -> None:
        runtime = sr("third", supportedModelFormats=[fmt("a", 1), fmt("a", 1), fmt("a", 4)])
        assert (
            check(snapshot(), runtime).denial_message
            == "different priorities assigned for the model format a under the servingruntime third"
        )

    def test_different_names_do_not_clash(self) -> None:
        runtime = sr("names", supportedModelFormats=[fmt("a", 1), fmt("b", 2), fmt(None, 3)])
        assert check(snapshot(), runtime) == allowed(SR_WEBHOOK)

    @pytest.mark.parametrize("auto_select", [False, None])
    def test_only_auto_select_true_entries_count(self, auto_select: bool | None) -> None:
        runtime = sr("manual", supportedModelFormats=[fmt("a", 1), fmt("a", 2, auto_select=auto_select)])
        assert check(snapshot(), runtime) == allowed(SR_WEBHOOK)

    def test_a_disabled_runtime_is_not_checked(self) -> None:
        runtime = sr("off", supportedModelFormats=[fmt("a", 1), fmt("a", 2)], disabled=True)
        assert check(snapshot(), runtime) == allowed(SR_WEBHOOK)

    def test_unknown_classes_are_reported_before_priorities(self) -> None:
        runtime = sr(
            "both",
            supportedModelFormats=[fmt("a", 1), fmt("a", 2)],
            acceleratorRequirements={"acceleratorClasses": ["nvidia-h200"]},
        )
        assert (
            check(snapshot(), runtime).denial_message
            == "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h200]"
        )


# ---------------------------------------------------------------------------------------------
# Inputs and purity


class TestInputs:
    def test_the_snapshot_is_not_changed(self) -> None:
        snap = snapshot(csr("a"), csr("b", "a"))
        before = dict(snap.objects)
        check(snap, csr("a", "b"))
        assert dict(snap.objects) == before
        assert snap.cluster_serving_runtimes["b"].chain == ("a", "b")
        assert snap.cluster_serving_runtimes["a"].parent is None

    def test_an_object_the_api_server_would_refuse_is_invalid_argument(self) -> None:
        with pytest.raises(RequestError) as err:
            check(snapshot(), sr("Bad_Name"))
        assert err.value.code == "INVALID_ARGUMENT"
        assert err.value.violations[0].field == "serving_runtime.metadata.name"

    def test_a_priority_below_one_is_invalid_argument(self) -> None:
        with pytest.raises(RequestError) as err:
            check(snapshot(), csr("zero", supportedModelFormats=[fmt("a", 0)]))
        assert err.value.violations[0].field == "cluster_serving_runtime.spec.supported_model_formats[0].priority"

    def test_kind_must_match_the_message(self) -> None:
        with pytest.raises(TypeError):
            validate_runtime(snapshot(), "ServingRuntime", csr("x"))
        with pytest.raises(ValueError):
            validate_runtime(snapshot(), "BaseModel", csr("x"))
