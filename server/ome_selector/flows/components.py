"""Component configuration: each component's deployment mode (and the rule that set it) and
accelerator class (concepts/architecture/deployment-modes.md, "How OME resolves the mode";
guides/deploy-models/select-accelerators.md). Pure Python, no gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.rules.accelerators import Assignment, assign_accelerator
from ome_selector.texts import messages
from ome_selector.validation import SERVICE_MODES

COMPONENTS: tuple[Literal["engine", "decoder", "router"], ...] = ("engine", "decoder", "router")


@dataclass(frozen=True, slots=True)
class ComponentConfig:
    """One component's deployment mode (and the rule that set it) and accelerator class."""

    component: str
    mode: str
    mode_source: str  # proto ModeSource name without prefix
    mode_error: str
    accelerator: Assignment


def _annotation_mode(isvc_annotations: object, runtime_annotations: object | None) -> str | None:
    """The merged component annotation: the InferenceService's value wins on the key, and only a
    valid mode counts (an invalid InferenceService value hides the runtime's, as the merge does)."""
    key = d.DEPLOYMENT_MODE_ANNOTATION
    if key in isvc_annotations:  # type: ignore[operator]
        value = isvc_annotations[key]  # type: ignore[index]
    elif runtime_annotations is not None and key in runtime_annotations:  # type: ignore[operator]
        value = runtime_annotations[key]  # type: ignore[index]
    else:
        return None
    return value if value in d.VALID_MODES else None


def component_mode(
    isvc: types_pb2.InferenceService, component: str, runtime_spec: types_pb2.ServingRuntimeSpec | None
) -> tuple[str, str, str]:
    """(mode, source, error) for one component, in the order of deployment-modes.md, "How OME
    resolves the mode": the service's VirtualDeployment annotation, the component annotation
    (InferenceService, then runtime), ``spec.deploymentMode``, a leader or worker (``OMENative``),
    else ``RawDeployment``. ``VirtualDeployment`` on a component, or ``MultiNode`` on the router,
    gives ``invalid deployment mode for <component>`` ("Other mode values")."""
    if isvc.metadata.annotations.get(d.DEPLOYMENT_MODE_ANNOTATION) == "VirtualDeployment":
        return "VirtualDeployment", "SERVICE_ANNOTATION", ""
    own = getattr(isvc.spec, component)
    config = getattr(runtime_spec, f"{component}_config") if runtime_spec is not None else None
    mode = _annotation_mode(own.annotations, config.annotations if config is not None else None)
    if mode is not None:
        source = "COMPONENT_ANNOTATION"
    elif isvc.spec.HasField("deployment_mode") and isvc.spec.deployment_mode in SERVICE_MODES:
        mode, source = isvc.spec.deployment_mode, "SERVICE_SPEC"
    elif component != "router" and (
        own.HasField("leader")
        or own.HasField("worker")
        or (config is not None and (config.HasField("leader") or config.HasField("worker")))
    ):
        mode, source = "OMENative", "LEADER_WORKER_SHAPE"
    else:
        mode, source = "RawDeployment", "DEFAULT"
    error = ""
    if mode == "VirtualDeployment" or (component == "router" and mode == "MultiNode"):
        error = messages.INVALID_COMPONENT_MODE.format(component=component)
    return mode, source, error


def components(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, runtime: d.Runtime | None, named: bool
) -> tuple[ComponentConfig, ...]:
    """The effective configuration of each component the InferenceService declares. A named
    runtime contributes its merged spec, an auto-selected one its own spec (runtime-inheritance.md,
    "When the merged spec applies")."""
    spec = None if runtime is None else (runtime.named_spec if named else runtime.spec)
    classes = () if spec is None else tuple(spec.accelerator_requirements.accelerator_classes)
    out = []
    for component in COMPONENTS:
        if not isvc.spec.HasField(component):
            continue
        mode, source, error = component_mode(isvc, component, spec)
        if runtime is None:  # no runtime to pick a class from
            assignment = Assignment("", "UNSPECIFIED")
        else:
            assignment = assign_accelerator(isvc, classes, snapshot.accelerator_classes, component)
        out.append(ComponentConfig(component, mode, source, error, assignment))
    return tuple(out)
