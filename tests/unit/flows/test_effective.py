"""The Live view of ``kubectl ome runtime effective`` through ``views.get_effective_runtime``, and
each component's deployment mode through ``components.component_mode``.

Pages: concepts/architecture/deployment-modes.md ("How OME resolves the mode", "For the whole
InferenceService", "For one component", "Other mode values", the v1.2.2 upgrade warning);
reference/kubectl-ome/runtime.md (effective: STATE, REASON, RUNTIME as ``CSR/<name>`` or
``SR/<namespace>/<name>``, the mode sources, SELECTION ``Explicit``/``Selected``, the chain root
first); runtime-deployment-mode-matching.md ("The runtime's mode also sets the running mode");
runtime-inheritance.md (the example chain; "When the merged spec applies"); select-accelerators.md
and accelerator-classes.md (the class each component gets, and why).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers_docs import (
    LLAMA_3_3_70B_CBM,
    LLAMA_3_70B_ISVC,
    NVIDIA_H100,
    NVIDIA_H200,
    SRT_LLAMA_3_3_70B_INSTRUCT,
    SRT_LLAMA_3_3_70B_MULTINODE,
    cache_object,
    catalog,
    entry,
    inference_service,
    isvc,
    load,
    model,
    runtime,
    spec_of,
)
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.flows import components
from ome_selector.rpc import views

MODE = "ome.io/deploymentMode"


def effective(sources: list[Any], service: Any) -> pb.GetEffectiveRuntimeResponse:
    store = load(*sources)
    return views.get_effective_runtime(
        store.snapshot, pb.GetEffectiveRuntimeRequest(inference_service=inference_service(service))
    )


def modes(response: pb.GetEffectiveRuntimeResponse) -> dict[str, str]:
    """Each component row as `kubectl ome runtime effective` prints it: `MODE (SOURCE)`."""
    sources = {
        pb.MODE_SOURCE_SERVICE_ANNOTATION: "ServiceAnnotation",
        pb.MODE_SOURCE_COMPONENT_ANNOTATION: "ComponentAnnotation",
        pb.MODE_SOURCE_SERVICE_SPEC: "ServiceSpec",
        pb.MODE_SOURCE_LEADER_WORKER_SHAPE: "LeaderWorkerShape",
        pb.MODE_SOURCE_DEFAULT: "Default",
    }
    names = {pb.COMPONENT_ENGINE: "ENGINE", pb.COMPONENT_DECODER: "DECODER", pb.COMPONENT_ROUTER: "ROUTER"}
    return {names[c.component]: f"{c.deployment_mode} ({sources[c.mode_source]})" for c in response.components}


def mode_errors(response: pb.GetEffectiveRuntimeResponse) -> dict[str, str]:
    names = {pb.COMPONENT_ENGINE: "engine", pb.COMPONENT_DECODER: "decoder", pb.COMPONENT_ROUTER: "router"}
    return {names[c.component]: c.mode_error for c in response.components if c.mode_error}


def classes(response: pb.GetEffectiveRuntimeResponse) -> dict[str, tuple[str, str, str]]:
    names = {pb.COMPONENT_ENGINE: "engine", pb.COMPONENT_DECODER: "decoder", pb.COMPONENT_ROUTER: "router"}
    return {
        names[c.component]: (c.accelerator_class, pb.AcceleratorSource.Name(c.accelerator_source), c.accelerator_policy)
        for c in response.components
    }


def chain(response: pb.GetEffectiveRuntimeResponse) -> list[str]:
    """The chain, root first, as the ROOT-FIRST rows print it: `CSR/<name>` or `SR/<ns>/<name>`."""
    return [
        f"CSR/{r.name}" if r.kind == pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME else f"SR/{r.namespace}/{r.name}"
        for r in response.inheritance_chain
    ]


def runtime_spec(manifest: dict[str, Any]) -> Any:
    obj = cache_object(manifest)
    return getattr(obj, obj.WhichOneof("object")).spec


def ann(mode: str) -> dict[str, Any]:
    return {"annotations": {MODE: mode}}


def doc(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


MODEL = model()  # BaseModel llama-3-2-3b-instruct in llama-demo
PLAIN = runtime("plain")


# ---- "How OME resolves the mode" ---------------------------------------------------------------


class TestHowOMEResolvesTheMode:
    """deployment-modes.md: the first of (1) the component annotation, ISVC or runtime; (2)
    spec.deploymentMode; (3) a leader or worker -> OMENative; (4) RawDeployment."""

    @pytest.mark.parametrize("value", ["RawDeployment", "OMENative", "MultiNode"])
    def test_1_component_annotation_in_the_inference_service(self, value: str) -> None:
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", engine=ann(value), decoder=ann(value)))
        assert modes(got) == {"ENGINE": f"{value} (ComponentAnnotation)", "DECODER": f"{value} (ComponentAnnotation)"}

    def test_1_component_annotation_in_the_runtime(self) -> None:
        rt = runtime(
            "rt", engine_mode="OMENative", decoder_mode="MultiNode", spec={"routerConfig": ann("RawDeployment")}
        )
        got = effective([rt, MODEL], isvc(runtime_name="rt", decoder={}, router={}))
        assert modes(got) == {
            "ENGINE": "OMENative (ComponentAnnotation)",
            "DECODER": "MultiNode (ComponentAnnotation)",
            "ROUTER": "RawDeployment (ComponentAnnotation)",
        }

    def test_1_the_inference_services_value_wins(self) -> None:
        rt = runtime("rt", engine_mode="MultiNode")
        got = effective([rt, MODEL], isvc(runtime_name="rt", engine=ann("RawDeployment")))
        assert modes(got) == {"ENGINE": "RawDeployment (ComponentAnnotation)"}

    @pytest.mark.parametrize("value", ["MultiNodeRayVLLM", "Serverless", "omenative", "PDDisaggregated", ""])
    def test_1_any_other_value_is_skipped(self, value: str) -> None:
        """ "Other mode values": v1.2.2's MultiNodeRayVLLM (any other value) is skipped, and the next
        rule decides."""
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", engine=ann(value), deployment_mode="OMENative"))
        assert modes(got) == {"ENGINE": "OMENative (ServiceSpec)"}
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", engine={**ann(value), "leader": {}}))
        assert modes(got) == {"ENGINE": "OMENative (LeaderWorkerShape)"}
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", engine=ann(value)))
        assert modes(got) == {"ENGINE": "RawDeployment (Default)"}

    def test_1_a_skipped_runtime_value(self) -> None:
        rt = runtime("rt", engine_mode="MultiNodeRayVLLM")
        got = effective([rt, MODEL], isvc(runtime_name="rt", deployment_mode="OMENative"))
        assert modes(got) == {"ENGINE": "OMENative (ServiceSpec)"}

    @pytest.mark.parametrize("value", ["OMENative", "RawDeployment"])
    def test_2_spec_deployment_mode_for_every_component(self, value: str) -> None:
        """ "For the whole InferenceService": all the components, the router included."""
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", deployment_mode=value, decoder={}, router={}))
        assert modes(got) == {
            "ENGINE": f"{value} (ServiceSpec)",
            "DECODER": f"{value} (ServiceSpec)",
            "ROUTER": f"{value} (ServiceSpec)",
        }

    def test_2_spec_deployment_mode_beats_the_shape(self) -> None:
        got = effective(
            [PLAIN, MODEL],
            isvc(runtime_name="plain", deployment_mode="RawDeployment", engine={"leader": {}, "worker": {"size": 1}}),
        )
        assert modes(got) == {"ENGINE": "RawDeployment (ServiceSpec)"}

    def test_2_router_annotation_keeps_the_router_on_a_deployment(self) -> None:
        """ "...you can keep the router on a Deployment with ome.io/deploymentMode: RawDeployment in
        spec.router.annotations"."""
        got = effective(
            [PLAIN, MODEL], isvc(runtime_name="plain", deployment_mode="OMENative", router=ann("RawDeployment"))
        )
        assert modes(got) == {"ENGINE": "OMENative (ServiceSpec)", "ROUTER": "RawDeployment (ComponentAnnotation)"}

    @pytest.mark.parametrize(
        "shape",
        [{"leader": {}}, {"worker": {"size": 1}}, {"leader": {}, "worker": {"size": 2}}],
        ids=["leader", "worker", "both"],
    )
    def test_3_leader_or_worker_in_the_inference_service(self, shape: dict[str, Any]) -> None:
        got = effective(
            [PLAIN, MODEL], isvc(runtime_name="plain", engine=copy.deepcopy(shape), decoder=copy.deepcopy(shape))
        )
        assert modes(got) == {"ENGINE": "OMENative (LeaderWorkerShape)", "DECODER": "OMENative (LeaderWorkerShape)"}

    def test_3_leader_or_worker_in_the_runtime(self) -> None:
        rt = runtime("rt", spec={"engineConfig": {"leader": {}}, "decoderConfig": {"worker": {"size": 1}}})
        got = effective([rt, MODEL], isvc(runtime_name="rt", decoder={}, router={}))
        assert modes(got) == {
            "ENGINE": "OMENative (LeaderWorkerShape)",
            "DECODER": "OMENative (LeaderWorkerShape)",
            "ROUTER": "RawDeployment (Default)",  # the router never gets LeaderWorkerShape
        }

    def test_4_default(self) -> None:
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", decoder={}, router={}))
        assert modes(got) == {
            "ENGINE": "RawDeployment (Default)",
            "DECODER": "RawDeployment (Default)",
            "ROUTER": "RawDeployment (Default)",
        }

    def test_for_one_component_example(self) -> None:
        """deployment-modes.md, "For one component": the engine annotated OMENative; the router
        runs as a Deployment because nothing sets its mode."""
        got = effective(
            [PLAIN, MODEL],
            isvc(runtime_name="plain", engine={**ann("OMENative"), "minReplicas": 1}, router={"minReplicas": 1}),
        )
        assert modes(got) == {"ENGINE": "OMENative (ComponentAnnotation)", "ROUTER": "RawDeployment (Default)"}

    @pytest.mark.parametrize("value", ["MultiNode", "OMENative", "RawDeployment"])
    def test_metadata_annotation_sets_no_components_mode(self, value: str) -> None:
        """ "In the InferenceService's own metadata.annotations, the annotation sets no component's
        mode: only VirtualDeployment works there"."""
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", annotations={MODE: value}, decoder={}))
        assert modes(got) == {"ENGINE": "RawDeployment (Default)", "DECODER": "RawDeployment (Default)"}

    def test_v1_2_2_multinode_metadata_annotation_does_not_count(self) -> None:
        """ "Upgrading from v1.2.2": a leader or worker makes it OMENative; the annotation v1.2.2
        added to the metadata doesn't count."""
        got = effective(
            [PLAIN, MODEL],
            isvc(runtime_name="plain", annotations={MODE: "MultiNode"}, engine={"leader": {}, "worker": {"size": 1}}),
        )
        assert modes(got) == {"ENGINE": "OMENative (LeaderWorkerShape)"}

    def test_only_declared_components(self) -> None:
        """serving-runtimes.md: an InferenceService with only an engine gets no decoder or router."""
        rt = runtime("rt", decoder_mode="MultiNode", spec={"routerConfig": ann("RawDeployment")})
        assert list(modes(effective([rt, MODEL], isvc(runtime_name="rt")))) == ["ENGINE"]


class TestComponentModeFunction:
    """``components.component_mode(isvc, component, runtime_spec)`` -> (mode, source, error)."""

    def test_rows_of_the_order(self) -> None:
        rt = runtime_spec(runtime("rt", engine_mode="MultiNode", spec={"decoderConfig": {"leader": {}}}))
        cases = [
            (isvc(engine=ann("OMENative")), "engine", rt, ("OMENative", "COMPONENT_ANNOTATION", "")),
            (isvc(), "engine", rt, ("MultiNode", "COMPONENT_ANNOTATION", "")),
            (isvc(deployment_mode="OMENative"), "engine", rt, ("MultiNode", "COMPONENT_ANNOTATION", "")),
            (isvc(deployment_mode="OMENative", decoder={}), "decoder", None, ("OMENative", "SERVICE_SPEC", "")),
            (isvc(decoder={}), "decoder", rt, ("OMENative", "LEADER_WORKER_SHAPE", "")),
            (isvc(decoder={}), "decoder", None, ("RawDeployment", "DEFAULT", "")),
            (isvc(router={}), "router", None, ("RawDeployment", "DEFAULT", "")),
        ]
        for service, component, spec, expected in cases:
            assert components.component_mode(inference_service(service), component, spec) == expected, (
                service,
                component,
            )

    def test_service_annotation(self) -> None:
        service = inference_service(isvc(annotations={MODE: "VirtualDeployment"}, engine=ann("OMENative"), router={}))
        for component in ("engine", "router"):
            assert components.component_mode(service, component, None) == (
                "VirtualDeployment",
                "SERVICE_ANNOTATION",
                "",
            )

    def test_invalid_modes(self) -> None:
        assert components.component_mode(inference_service(isvc(engine=ann("VirtualDeployment"))), "engine", None) == (
            "VirtualDeployment",
            "COMPONENT_ANNOTATION",
            "invalid deployment mode for engine",
        )
        assert (
            components.component_mode(inference_service(isvc(decoder=ann("VirtualDeployment"))), "decoder", None)[2]
            == "invalid deployment mode for decoder"
        )
        assert components.component_mode(inference_service(isvc(router=ann("MultiNode"))), "router", None) == (
            "MultiNode",
            "COMPONENT_ANNOTATION",
            "invalid deployment mode for router",
        )
        router_rt = runtime_spec(runtime("rt", spec={"routerConfig": ann("MultiNode")}))
        assert (
            components.component_mode(inference_service(isvc(router={})), "router", router_rt)[2]
            == "invalid deployment mode for router"
        )


# ---- "Other mode values" -------------------------------------------------------------------------


class TestOtherModeValues:
    def test_virtual_deployment_on_the_metadata(self) -> None:
        """ServiceAnnotation: applies to every component; not an error."""
        got = effective(
            [PLAIN, MODEL],
            isvc(
                runtime_name="plain",
                annotations={MODE: "VirtualDeployment"},
                engine=ann("OMENative"),
                decoder={},
                router={},
            ),
        )
        assert modes(got) == {
            "ENGINE": "VirtualDeployment (ServiceAnnotation)",
            "DECODER": "VirtualDeployment (ServiceAnnotation)",
            "ROUTER": "VirtualDeployment (ServiceAnnotation)",
        }
        assert mode_errors(got) == {}

    @pytest.mark.parametrize("component", ["engine", "decoder", "router"])
    def test_virtual_deployment_on_a_component(self, component: str) -> None:
        kwargs = {component: ann("VirtualDeployment")}
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", **kwargs))
        assert mode_errors(got) == {component: f"invalid deployment mode for {component}"}

    def test_multinode_on_the_router(self) -> None:
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", router=ann("MultiNode")))
        assert modes(got)["ROUTER"] == "MultiNode (ComponentAnnotation)"
        assert mode_errors(got) == {"router": "invalid deployment mode for router"}

    def test_multinode_on_the_router_from_the_runtime(self) -> None:
        """runtime-deployment-mode-matching.md: a runtime whose routerConfig declares MultiNode."""
        rt = runtime("rt", spec={"routerConfig": ann("MultiNode")})
        got = effective([rt, MODEL], isvc(runtime_name="rt", router={}))
        assert mode_errors(got) == {"router": "invalid deployment mode for router"}

    def test_multinode_on_engine_and_decoder_is_fine(self) -> None:
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", engine=ann("MultiNode"), decoder=ann("MultiNode")))
        assert mode_errors(got) == {}

    def test_multinode_ray_vllm_is_skipped(self) -> None:
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", engine=ann("MultiNodeRayVLLM")))
        assert (modes(got), mode_errors(got)) == ({"ENGINE": "RawDeployment (Default)"}, {})


# ---- seed B: the runtime's mode also sets the running mode ---------------------------------------------


class TestRuntimeModeSetsTheRunningMode:
    """runtime-deployment-mode-matching.md, "The runtime's mode also sets the running mode"."""

    def seed_b(self, **spec: Any) -> dict[str, Any]:
        out = doc(LLAMA_3_70B_ISVC)
        del out["spec"]["deploymentMode"]
        out["spec"]["runtime"] = {"name": "srt-llama-3-3-70b-instruct-multinode"}
        out["spec"].update(spec)
        return out

    def test_an_inference_service_that_declares_no_mode_runs_multinode(self) -> None:
        got = effective([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], self.seed_b())
        assert modes(got) == {"ENGINE": "MultiNode (ComponentAnnotation)"}

    def test_the_components_own_annotation_overrides_the_runtimes(self) -> None:
        got = effective(
            [SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], self.seed_b(engine={"minReplicas": 1, **ann("OMENative")})
        )
        assert modes(got) == {"ENGINE": "OMENative (ComponentAnnotation)"}

    def test_the_runtimes_annotation_beats_spec_deployment_mode(self) -> None:
        got = effective([SRT_LLAMA_3_3_70B_MULTINODE, LLAMA_3_3_70B_CBM], self.seed_b(deploymentMode="OMENative"))
        assert modes(got) == {"ENGINE": "MultiNode (ComponentAnnotation)"}

    def test_the_live_view_merges_the_chain_of_a_named_or_selected_runtime(self) -> None:
        """kubectl-ome runtime.md, effective: "The Live view is ... the one spec.runtime names, or
        the one OME selects for the model, merged with every runtime it inherits from"."""
        parent = runtime("mn-profile", disabled=True, engine_mode="MultiNode")
        child = runtime("mn-child", inherit_from="mn-profile", disabled=False)
        named = effective([parent, child, MODEL], isvc(runtime_name="mn-child"))
        assert (named.selection, modes(named)) == ("Explicit", {"ENGINE": "MultiNode (ComponentAnnotation)"})
        chosen = effective([parent, child, MODEL], isvc())
        assert (chosen.runtime, chosen.selection, modes(chosen)) == (
            "CSR/mn-child",
            "Selected",
            {"ENGINE": "MultiNode (ComponentAnnotation)"},
        )
        assert [r.name for r in chosen.inheritance_chain] == ["mn-profile", "mn-child"]


# ---- identity, selection, chain -----------------------------------------------------------------


TEAM_A_MODEL = model(namespace="team-a")


def vllm_runtimes() -> list[dict[str, Any]]:
    """kubectl-ome runtime.md examples: vllm-llama inherits from vllm-base."""
    return [
        runtime("vllm-base", entry(auto_select=None)),
        runtime(
            "vllm-llama", entry(format=spec_of("safetensors", "1.0.0", weight=2), priority=2), inherit_from="vllm-base"
        ),
        runtime("team-llama", entry(priority=1), namespace="team-a"),
    ]


class TestRuntimeIdentity:
    def test_docs_example_llama_chat(self) -> None:
        """`kubectl ome runtime effective llama-chat -n team-a`: Live STATE Available, RUNTIME
        CSR/vllm-llama, ENGINE RawDeployment (Default); SELECTION Explicit; chain root first."""
        got = effective(
            [*vllm_runtimes(), TEAM_A_MODEL], isvc(namespace="team-a", name="llama-chat", runtime_name="vllm-llama")
        )
        assert (got.state, got.reason, got.runtime, got.selection) == ("Available", "", "CSR/vllm-llama", "Explicit")
        assert (got.runtime_ref.kind, got.runtime_ref.namespace, got.runtime_ref.name) == (
            pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME,
            "",
            "vllm-llama",
        )
        assert modes(got) == {"ENGINE": "RawDeployment (Default)"}
        # explain --with-effective: ROOT-FIRST rows CSR/vllm-base, CSR/vllm-llama
        assert chain(got) == ["CSR/vllm-base", "CSR/vllm-llama"]
        assert got.inheritance_error == ""

    def test_serving_runtime_identity(self) -> None:
        got = effective(
            [*vllm_runtimes(), TEAM_A_MODEL],
            isvc(namespace="team-a", runtime_name="team-llama", runtime_kind="ServingRuntime"),
        )
        assert (got.state, got.runtime, got.selection) == ("Available", "SR/team-a/team-llama", "Explicit")
        assert (got.runtime_ref.kind, got.runtime_ref.namespace, got.runtime_ref.name) == (
            pb.RUNTIME_KIND_SERVING_RUNTIME,
            "team-a",
            "team-llama",
        )

    def test_selected_the_way_explain_does(self) -> None:
        """`explain --model llama-3-2-3b-instruct -n team-a` ranks team-llama first."""
        got = effective([*vllm_runtimes(), TEAM_A_MODEL], isvc(namespace="team-a", name="llama-chat"))
        assert (got.state, got.runtime, got.selection) == ("Available", "SR/team-a/team-llama", "Selected")

    def test_selected_cluster_runtime(self) -> None:
        got = effective([vllm_runtimes()[1], TEAM_A_MODEL], isvc(namespace="team-a"))
        assert (got.runtime, got.selection) == ("CSR/vllm-llama", "Selected")

    def test_an_empty_runtime_name_is_selected(self) -> None:
        got = effective([*vllm_runtimes(), TEAM_A_MODEL], isvc(namespace="team-a", spec={"runtime": {"name": ""}}))
        assert (got.runtime, got.selection) == ("SR/team-a/team-llama", "Selected")

    def test_kind_decides_between_same_named_runtimes(self) -> None:
        """reference-a-runtime-explicitly.md, "How OME resolves the name"."""
        sources = [runtime("shared"), runtime("shared", namespace="team-a"), TEAM_A_MODEL]
        assert effective(sources, isvc(namespace="team-a", runtime_name="shared")).runtime == "CSR/shared"
        assert (
            effective(sources, isvc(namespace="team-a", runtime_name="shared", runtime_kind="ServingRuntime")).runtime
            == "SR/team-a/shared"
        )

    def test_runtime_inheritance_example_chain_root_first(self) -> None:
        profile = runtime(
            "sglang-profile",
            annotations={"ome.io/runtime-profile": "true"},
            disabled=True,
            spec={"supportedModelFormats": []},
        )
        child = runtime(
            "sglang-llama-3-2-3b",
            namespace="llama-demo",
            inherit_from="sglang-profile",
            disabled=False,
            size=("2B", "4B"),
        )
        got = effective([profile, child, MODEL], isvc(name="llama-3-2-3b-instruct", runtime_name="sglang-llama-3-2-3b"))
        assert (got.state, got.runtime, got.selection) == ("Available", "SR/llama-demo/sglang-llama-3-2-3b", "Explicit")
        # A ServingRuntime's parent may be a ClusterServingRuntime (runtime-inheritance.md, "Chain limits").
        assert chain(got) == ["CSR/sglang-profile", "SR/llama-demo/sglang-llama-3-2-3b"]

    def test_a_runtime_without_a_parent_is_its_own_chain(self) -> None:
        """ROOT-FIRST: "One row for each runtime in the chain, from the root to the runtime itself"."""
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain"))
        assert chain(got) == ["CSR/plain"]

    def test_named_runtime_without_model(self) -> None:
        """serving-runtimes.md: an InferenceService that names a runtime needs no base model."""
        got = effective([PLAIN], isvc(None, runtime_name="plain"))
        assert (got.state, got.runtime, got.selection) == ("Available", "CSR/plain", "Explicit")


# ---- Unavailable -------------------------------------------------------------------------------


# reference/kubectl-ome/runtime.md, effective "REASON is one of".
DOCUMENTED_REASONS = {
    "NotConfigured",
    "NotFound",
    "Disabled",
    "MalformedPayload",
    "Forbidden",
    "UnsupportedAPI",
    "Unreadable",
}


class TestUnavailable:
    def test_not_configured(self) -> None:
        """The InferenceService names neither a runtime nor a model."""
        got = effective([PLAIN], isvc(None))
        assert (got.state, got.reason, got.runtime, got.selection) == ("Unavailable", "NotConfigured", "", "Selected")

    def test_not_found_named(self) -> None:
        got = effective([MODEL], isvc(runtime_name="gone"))
        assert (got.state, got.reason, got.runtime, got.selection) == ("Unavailable", "NotFound", "", "Explicit")

    def test_not_found_with_kind_serving_runtime(self) -> None:
        got = effective([PLAIN, MODEL], isvc(runtime_name="plain", runtime_kind="ServingRuntime"))
        assert (got.state, got.reason) == ("Unavailable", "NotFound")

    def test_not_found_when_a_parent_is_missing(self) -> None:
        child = runtime("child", inherit_from="gone-parent")
        got = effective([child, MODEL], isvc(runtime_name="child"))
        assert (got.state, got.reason, got.runtime) == ("Unavailable", "NotFound", "CSR/child")
        assert got.inheritance_error == 'inherit-from parent "gone-parent" not found (chain so far: [child])'

    def test_disabled(self) -> None:
        got = effective([runtime("off", disabled=True), MODEL], isvc(runtime_name="off"))
        assert (got.state, got.reason, got.runtime) == ("Unavailable", "Disabled", "CSR/off")

    def test_disabled_through_the_chain(self) -> None:
        parent = runtime("profile", disabled=True)
        child = runtime("child", inherit_from="profile")
        got = effective([parent, child, MODEL], isvc(runtime_name="child"))
        assert (got.state, got.reason) == ("Unavailable", "Disabled")

    def test_nothing_selected(self) -> None:
        got = effective([runtime("other", entry(architecture="MistralForCausalLM")), MODEL], isvc())
        assert (got.state, got.reason, got.selection) == ("Unavailable", "NotFound", "Selected")

    def test_components_are_still_shown(self) -> None:
        got = effective([MODEL], isvc(runtime_name="gone", deployment_mode="OMENative", router={}))
        assert modes(got) == {"ENGINE": "OMENative (ServiceSpec)", "ROUTER": "OMENative (ServiceSpec)"}

    def test_cycle_reason_is_a_documented_live_view_reason(self) -> None:
        looping = [runtime("a", inherit_from="b"), runtime("b", inherit_from="a"), MODEL]
        got = effective(looping, isvc(runtime_name="a"))
        assert got.state == "Unavailable"
        assert got.reason in DOCUMENTED_REASONS


# ---- the accelerator class each component gets -----------------------------------------------------


def with_classes(manifest: dict[str, Any], names: list[str]) -> dict[str, Any]:
    """select-accelerators.md, Step 2: the patch that adds the classes."""
    out = copy.deepcopy(manifest)
    out["spec"]["acceleratorRequirements"] = {"acceleratorClasses": names}
    return out


SRT_70B = with_classes(catalog(SRT_LLAMA_3_3_70B_INSTRUCT), ["nvidia-h100", "nvidia-h200"])
SOURCES_70B = [SRT_70B, NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM]


def isvc_70b(**spec: Any) -> dict[str, Any]:
    """select-accelerators.md, Step 3."""
    out = isvc("llama-3-3-70b-instruct", name="llama-3-3-70b-instruct", runtime_name="srt-llama-3-3-70b-instruct")
    out["spec"].update(copy.deepcopy(spec))
    return out


class TestAcceleratorClassPerComponent:
    def test_pin_a_class(self) -> None:
        got = effective(SOURCES_70B, isvc_70b(acceleratorSelector={"acceleratorClass": "nvidia-h100"}))
        assert classes(got) == {"engine": ("nvidia-h100", "ACCELERATOR_SOURCE_SELECTOR", "")}

    @pytest.mark.parametrize(
        ("selector", "picked"),
        [
            ({"policy": "BestFit", "constraints": {"minMemory": 80}}, "nvidia-h100"),
            ({"policy": "Cheapest"}, "nvidia-h100"),
            ({"policy": "MostCapable"}, "nvidia-h200"),
            ({"policy": "FirstAvailable"}, "nvidia-h100"),
        ],
        ids=["BestFit", "Cheapest", "MostCapable", "FirstAvailable"],
    )
    def test_policy_table(self, selector: dict[str, Any], picked: str) -> None:
        """select-accelerators.md: "With the classes from Step 1, the policies pick"."""
        got = effective(SOURCES_70B, isvc_70b(acceleratorSelector=selector))
        assert classes(got) == {"engine": (picked, "ACCELERATOR_SOURCE_POLICY", selector["policy"])}

    def test_first_available_follows_the_runtimes_order(self) -> None:
        reordered = with_classes(catalog(SRT_LLAMA_3_3_70B_INSTRUCT), ["nvidia-h200", "nvidia-h100"])
        got = effective(
            [reordered, NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM],
            isvc_70b(acceleratorSelector={"policy": "FirstAvailable"}),
        )
        assert classes(got)["engine"][0] == "nvidia-h200"

    def test_a_class_name_wins_over_a_policy(self) -> None:
        got = effective(
            SOURCES_70B, isvc_70b(acceleratorSelector={"acceleratorClass": "nvidia-h200", "policy": "Cheapest"})
        )
        assert classes(got) == {"engine": ("nvidia-h200", "ACCELERATOR_SOURCE_SELECTOR", "")}

    def test_prefill_decode_example(self) -> None:
        """select-accelerators.md, "Override the class for one component": the engine gets what
        Cheapest picks, the decoder is pinned to nvidia-h200, the router never gets a class."""
        pd = with_classes(catalog("srt/meta/llama-3-3-70b-instruct-pd-rt.yaml"), ["nvidia-h100", "nvidia-h200"])
        service = isvc(
            "llama-3-3-70b-instruct",
            name="llama-3-3-70b-instruct-pd",
            runtime_name="srt-llama-3-3-70b-instruct-pd",
            decoder={"minReplicas": 1, "maxReplicas": 1, "acceleratorOverride": {"acceleratorClass": "nvidia-h200"}},
            router={"minReplicas": 1, "maxReplicas": 1},
            spec={"acceleratorSelector": {"policy": "Cheapest"}},
        )
        got = effective([pd, NVIDIA_H100, NVIDIA_H200, LLAMA_3_3_70B_CBM], service)
        assert classes(got) == {
            "engine": ("nvidia-h100", "ACCELERATOR_SOURCE_POLICY", "Cheapest"),
            "decoder": ("nvidia-h200", "ACCELERATOR_SOURCE_COMPONENT_OVERRIDE", ""),
            "router": ("", "ACCELERATOR_SOURCE_NONE_ROUTER", ""),
        }

    def test_an_override_policy_has_no_effect_while_the_selector_names_a_class(self) -> None:
        service = isvc_70b(
            acceleratorSelector={"acceleratorClass": "nvidia-h100"},
            engine={"acceleratorOverride": {"policy": "MostCapable"}},
        )
        assert classes(effective(SOURCES_70B, service)) == {
            "engine": ("nvidia-h100", "ACCELERATOR_SOURCE_SELECTOR", "")
        }

    def test_override_policy(self) -> None:
        service = isvc_70b(engine={"acceleratorOverride": {"policy": "MostCapable"}})
        assert classes(effective(SOURCES_70B, service)) == {
            "engine": ("nvidia-h200", "ACCELERATOR_SOURCE_POLICY", "MostCapable")
        }

    def test_constraints_in_an_override_have_no_effect(self) -> None:
        service = isvc_70b(
            engine={
                "acceleratorOverride": {"policy": "FirstAvailable", "constraints": {"excludedClasses": ["nvidia-h100"]}}
            }
        )
        assert classes(effective(SOURCES_70B, service))["engine"][0] == "nvidia-h100"
        service = isvc_70b(
            acceleratorSelector={"policy": "FirstAvailable", "constraints": {"excludedClasses": ["nvidia-h100"]}}
        )
        assert classes(effective(SOURCES_70B, service))["engine"][0] == "nvidia-h200"

    def test_runtime_lists_none(self) -> None:
        """ "If the list is empty, no component gets a class, even one that the InferenceService names"."""
        got = effective(
            [catalog(SRT_LLAMA_3_3_70B_INSTRUCT), NVIDIA_H100, LLAMA_3_3_70B_CBM],
            isvc_70b(acceleratorSelector={"acceleratorClass": "nvidia-h100"}, decoder={}),
        )
        assert classes(got) == {
            "engine": ("", "ACCELERATOR_SOURCE_NONE_RUNTIME_LISTS_NONE", ""),
            "decoder": ("", "ACCELERATOR_SOURCE_NONE_RUNTIME_LISTS_NONE", ""),
        }

    def test_neither_a_class_nor_a_policy(self) -> None:
        """ "Neither: No class"; constraints alone don't pick a class."""
        got = effective(SOURCES_70B, isvc_70b(acceleratorSelector={"constraints": {"minMemory": 80}}))
        assert classes(got) == {"engine": ("", "ACCELERATOR_SOURCE_NONE_NOT_REQUESTED", "")}

    def test_the_annotation_gives_no_class(self) -> None:
        """runtime-accelerator-class-matching.md: the ome.io/accelerator-class annotation counts only
        for matching."""
        service = isvc_70b()
        service["metadata"]["annotations"] = {"ome.io/accelerator-class": "nvidia-h100"}
        assert classes(effective(SOURCES_70B, service)) == {"engine": ("", "ACCELERATOR_SOURCE_NONE_NOT_REQUESTED", "")}

    def test_no_class_passes_the_constraints(self) -> None:
        got = effective(
            SOURCES_70B, isvc_70b(acceleratorSelector={"policy": "FirstAvailable", "constraints": {"minMemory": 200}})
        )
        assert classes(got) == {"engine": ("", "ACCELERATOR_SOURCE_NONE_NO_CANDIDATE", "FirstAvailable")}

    def test_missing_named_class(self) -> None:
        got = effective(
            [SRT_70B, NVIDIA_H200, LLAMA_3_3_70B_CBM], isvc_70b(acceleratorSelector={"acceleratorClass": "nvidia-h100"})
        )
        (engine,) = got.components
        assert (engine.accelerator_class, engine.accelerator_source, engine.accelerator_error) == (
            "nvidia-h100",
            pb.ACCELERATOR_SOURCE_SELECTOR,
            "accelerator class nvidia-h100 not found at cluster scope",
        )

    def test_inherited_classes_in_the_live_view(self) -> None:
        parent = runtime("hopper-profile", disabled=True, classes=["nvidia-h100", "nvidia-h200"])
        child = runtime("hopper-child", inherit_from="hopper-profile", disabled=False)
        service = isvc(spec={"acceleratorSelector": {"policy": "FirstAvailable"}})
        named = copy.deepcopy(service)
        named["spec"]["runtime"] = {"name": "hopper-child"}
        sources = [parent, child, NVIDIA_H100, NVIDIA_H200, MODEL]
        assert classes(effective(sources, named)) == {
            "engine": ("nvidia-h100", "ACCELERATOR_SOURCE_POLICY", "FirstAvailable")
        }
        chosen = effective(sources, service)  # the Live view merges a selected runtime's chain too
        assert chosen.runtime == "CSR/hopper-child"
        assert classes(chosen) == {"engine": ("nvidia-h100", "ACCELERATOR_SOURCE_POLICY", "FirstAvailable")}
