"""The InferenceService webhook's ``deploymentStrategy`` warning (``api.admit_inference_service``).

deployment-modes.md, "For the whole InferenceService": "OMENative ignores a component's
``deploymentStrategy`` and paces rollouts with its ``lifecycle.updateStrategy`` instead [...]. The
webhook can warn about the unused field. For the engine under ``spec.deploymentMode: OMENative``,
the warning is:" (the literal below). The decoder's and router's forms follow the engine's with
the component's name. As kubectl shows warnings with an admission or a denial, the warning comes
with both; a denial before it (the OMENative pairing rule) has none.
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers_docs import (
    LLAMA_3_2_3B_CBM,
    LLAMA_3_3_70B_CBM,
    LLAMA_3_3_70B_HOPPER,
    SRT_LLAMA_3_2_3B_INSTRUCT,
    catalog,
    isvc,
)
from ome.selector.v1 import selector_pb2 as pb
from test_admission_operations import DELETE, admit, verdict

# deployment-modes.md, verbatim.
ENGINE_WARNING = (
    'engine.deploymentStrategy is set but deploymentMode is "OMENative"; deploymentStrategy applies only to '
    "RawDeployment and is ignored here — use engine.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
)
DECODER_WARNING = (
    'decoder.deploymentStrategy is set but deploymentMode is "OMENative"; deploymentStrategy applies only to '
    "RawDeployment and is ignored here — use decoder.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
)
ROUTER_WARNING = (
    'router.deploymentStrategy is set but deploymentMode is "OMENative"; deploymentStrategy applies only to '
    "RawDeployment and is ignored here — use router.lifecycle.updateStrategy.rollingUpdate for rollout pacing"
)
STRATEGY = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}
# deployment-modes.md, "For the whole InferenceService": the example, llama-3-2-3b-instruct on OMENative.
SOURCES = [catalog(SRT_LLAMA_3_2_3B_INSTRUCT), LLAMA_3_2_3B_CBM]
RUNTIME = "srt-llama-3-2-3b-instruct"


def component(**extra: Any) -> dict[str, Any]:
    return {"minReplicas": 1, "maxReplicas": 1, **extra}


def service(mode: str | None = "OMENative", **components: dict[str, Any]) -> dict[str, Any]:
    """deployment-modes.md's example InferenceService with the components given."""
    return isvc(
        "llama-3-2-3b-instruct",
        name="llama-3-2-3b-instruct",
        runtime_name=RUNTIME,
        deployment_mode=mode,
        engine=components.pop("engine", component()),
        **components,
    )


class TestTheWarning:
    def test_engine_under_omenative(self) -> None:
        got = admit(SOURCES, pb.ADMISSION_OPERATION_CREATE, service(engine=component(deploymentStrategy=STRATEGY)))
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [ENGINE_WARNING])

    def test_each_component_in_order(self) -> None:
        strategy = component(deploymentStrategy={"type": "Recreate"})
        got = admit(SOURCES, pb.ADMISSION_OPERATION_CREATE, service(engine=strategy, router=strategy))
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [ENGINE_WARNING, ROUTER_WARNING])

    def test_decoder(self) -> None:
        strategy = component(deploymentStrategy={})
        got = admit(SOURCES, pb.ADMISSION_OPERATION_UPDATE, service(decoder=strategy))
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [DECODER_WARNING])

    def test_before_the_auto_selection_warning(self) -> None:
        """runtime-accelerator-class-matching.md's example InferenceService, on OMENative."""
        auto = isvc(
            "llama-3-3-70b-instruct",
            accelerator_class="nvidia-h100",
            deployment_mode="OMENative",
            engine=component(deploymentStrategy=STRATEGY),
        )
        got = admit([LLAMA_3_3_70B_HOPPER, LLAMA_3_3_70B_CBM], pb.ADMISSION_OPERATION_CREATE, auto)
        assert verdict(got) == (
            True,
            "ADMISSION_PATH_AUTO_SELECT",
            "",
            [ENGINE_WARNING, "Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
        )

    def test_with_a_denial(self) -> None:
        got = admit(
            [LLAMA_3_2_3B_CBM], pb.ADMISSION_OPERATION_CREATE, service(engine=component(deploymentStrategy=STRATEGY))
        )
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_NAMED_RUNTIME",
            "runtime srt-llama-3-2-3b-instruct does not support model llama-3-2-3b-instruct: "
            "runtime srt-llama-3-2-3b-instruct not found in namespace llama-demo or at cluster scope",
            [ENGINE_WARNING],
        )

    def test_with_the_revision_pin_denial(self) -> None:
        """The pin is checked after the warning (ome-selection-facts.md 8.8's texts)."""
        pinned = service(engine=component(deploymentStrategy=STRATEGY))
        pinned["spec"]["runtime"]["revision"] = "cr-srt-llama-3-2-3b-instruct-590753e8"
        got = admit(SOURCES, pb.ADMISSION_OPERATION_CREATE, pinned)
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_SPEC",
            "spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin",
            [ENGINE_WARNING],
        )

    def test_without_an_engine_section(self) -> None:
        """The webhook checks the runtime only with an engine, but warns regardless."""
        no_engine = service(router=component(deploymentStrategy=STRATEGY))
        del no_engine["spec"]["engine"]
        got = admit([], pb.ADMISSION_OPERATION_CREATE, no_engine)
        assert verdict(got) == (True, "ADMISSION_PATH_NO_ENGINE", "", [ROUTER_WARNING])


class TestNoWarning:
    @pytest.mark.parametrize("mode", [None, "RawDeployment"])
    def test_not_under_raw_deployment(self, mode: str | None) -> None:
        got = admit(
            SOURCES, pb.ADMISSION_OPERATION_CREATE, service(mode, engine=component(deploymentStrategy=STRATEGY))
        )
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])

    def test_not_without_a_deployment_strategy(self) -> None:
        assert verdict(admit(SOURCES, pb.ADMISSION_OPERATION_CREATE, service())) == (
            True,
            "ADMISSION_PATH_NAMED_RUNTIME",
            "",
            [],
        )

    def test_only_spec_deployment_mode_counts(self) -> None:
        """The page's case is ``spec.deploymentMode``; a component annotation alone is not it."""
        annotated = component(annotations={"ome.io/deploymentMode": "OMENative"}, deploymentStrategy=STRATEGY)
        got = admit(SOURCES, pb.ADMISSION_OPERATION_CREATE, service(None, engine=annotated))
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])

    def test_not_with_a_denial_before_it(self) -> None:
        """deployment-modes.md, "For one component": the pairing rule denies first."""
        strategy = component(deploymentStrategy=STRATEGY)
        paired = service(engine=strategy, decoder=component(annotations={"ome.io/deploymentMode": "RawDeployment"}))
        got = admit(SOURCES, pb.ADMISSION_OPERATION_CREATE, paired)
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_SPEC",
            'InvalidDeploymentModeCombination: engine deploymentMode="OMENative" does not match decoder '
            'deploymentMode="RawDeployment"; when either is OMENative, both must use the same value',
            [],
        )

    def test_not_on_delete(self) -> None:
        got = admit(SOURCES, DELETE, old=service(engine=component(deploymentStrategy=STRATEGY)))
        assert verdict(got) == (True, "ADMISSION_PATH_DELETE", "", [])
