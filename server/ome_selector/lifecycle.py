"""What OME does around the ranking: resolve the model and the runtime, admit or deny the
InferenceService, reconcile it, and the effective configuration of each component.

Pure Python, no gRPC. Shapes:
- ``decide(snapshot, isvc, model_spec)`` -> ``Decision``: the one resolution flow every caller
  shares (SelectRuntime, admission, reconcile, effective view).
- ``admit(snapshot, isvc)`` -> ``Admission``: the InferenceService validating webhook.
- ``reconcile(snapshot, isvc, has_condition)`` -> ``Reconcile``: the runtime to use, the
  ``RuntimeReady`` condition, events, requeue, log lines and component configuration.
- ``effective(snapshot, isvc)`` -> ``Effective``: the Live view of ``kubectl ome runtime effective``.

Pages: guides/deploy-models/reference-a-runtime-explicitly.md, troubleshoot-runtime-selection.md,
select-accelerators.md; concepts/architecture/deployment-modes.md; concepts/runtimes/
runtime-inheritance.md, serving-runtimes.md; reference/kubectl-ome/runtime.md. Where the pages are
silent, ome-selection-facts.md sections 5-8.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ome.v1beta1 import types_pb2

from . import domain as d
from . import engine, messages
from .accelerators import Assignment, accelerator_event_message, assign_accelerator
from .engine import AutoSelection, Evaluation, Verdict
from .ingest import compile_model, compile_request, requested_mode
from .snapshot import Snapshot

ISVC_WEBHOOK = "inferenceservice.ome-webhook-server.validator"
_ISVC_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")
SERVICE_MODES = ("OMENative", "RawDeployment")
POLICIES = ("BestFit", "Cheapest", "MostCapable", "FirstAvailable")


def policy_fields(isvc: types_pb2.InferenceService) -> list[tuple[str, types_pb2.AcceleratorSelector]]:
    """(proto path, selector) of each AcceleratorSelector with a ``policy`` set: the service's
    ``spec.acceleratorSelector`` and the engine's and decoder's ``acceleratorOverride``."""
    spec = isvc.spec
    out = [("spec.accelerator_selector", spec.accelerator_selector)]
    out += [(f"spec.{c}.accelerator_override", getattr(spec, c).accelerator_override) for c in ("engine", "decoder")]
    return [(f"{path}.policy", selector) for path, selector in out if selector.HasField("policy")]
COMPONENTS: tuple[Literal["engine", "decoder", "router"], ...] = ("engine", "decoder", "router")


# ---- resolution -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ModelResolution:
    """The InferenceService's model. ``not_found`` and ``error`` hold OME's texts."""

    model: d.Model | None
    not_found: str = ""
    error: str = ""


def resolve_model(snapshot: Snapshot, isvc: types_pb2.InferenceService, model_spec: types_pb2.BaseModelSpec | None = None) -> ModelResolution:
    """The model: an inline spec, else a BaseModel of ``spec.model.name`` in the namespace, else a
    ClusterBaseModel of that name, whatever ``spec.model.kind`` says (base-models.md). ``error``
    is ``model X is disabled`` or the missing-format error (troubleshoot-runtime-selection.md)."""
    namespace, name = isvc.metadata.namespace, isvc.spec.model.name
    if model_spec is not None:
        model = compile_model("", "", name, model_spec)
    elif name:
        found = snapshot.base_models.get((namespace, name)) or snapshot.cluster_models.get(name)
        if found is None:
            return ModelResolution(None, not_found=messages.model_not_found(name, namespace))
        model = found
    else:
        return ModelResolution(None)
    return model_errors(model, name or model.name)


def model_errors(model: d.Model, name: str) -> ModelResolution:
    """A found model with OME's error when it cannot be matched: ``model X is disabled``, or the
    missing-format error (troubleshoot-runtime-selection.md)."""
    if model.disabled:
        return ModelResolution(model, error=messages.model_disabled(name))
    if not model.model_format.name:
        return ModelResolution(model, error=messages.MODEL_FORMAT_REQUIRED)
    return ModelResolution(model)


def lookup_named(snapshot: Snapshot, ref: types_pb2.ServingRuntimeRef, namespace: str) -> tuple[d.Runtime | None, str]:
    """The runtime ``spec.runtime`` names and, when missing, OME's not-found text
    (reference-a-runtime-explicitly.md, "How OME resolves the name"): ``ClusterServingRuntime``
    (the default) looks at cluster scope first, then in the namespace; ``ServingRuntime`` only in
    the namespace; an empty kind (no API-server defaulting) in the namespace first."""
    kind = ref.kind if ref.HasField("kind") else d.CLUSTER_SERVING_RUNTIME
    sr = snapshot.serving_runtimes.get((namespace, ref.name))
    csr = snapshot.cluster_serving_runtimes.get(ref.name)
    if kind == d.SERVING_RUNTIME:
        found = sr
    elif kind == d.CLUSTER_SERVING_RUNTIME:
        found = csr or sr
    else:
        found = sr or csr
    if found is not None:
        return found, ""
    if kind == d.SERVING_RUNTIME:
        return None, messages.serving_runtime_not_found(ref.name, namespace)
    return None, messages.runtime_not_found(ref.name, namespace)


@dataclass(frozen=True, slots=True)
class Decision:
    """How the runtime is resolved for one InferenceService.

    Exactly one outcome applies, checked in this order: ``model.not_found``, ``model.error``,
    ``runtime_not_found`` (named), ``runtime_error`` (named: broken chain or disabled), then a
    runtime (``runtime`` set; ``evaluation`` holds its checks) or, for auto-selection, none
    (``auto.no_runtime_message``).
    """

    named: bool
    model: ModelResolution
    runtime: d.Runtime | None = None
    runtime_not_found: str = ""
    runtime_error: str = ""
    evaluation: Evaluation | None = None
    auto: AutoSelection | None = None
    compatibility_error: str = ""  # named runtime that fails a check: ValidateRuntime's text


def decide(snapshot: Snapshot, isvc: types_pb2.InferenceService, model_spec: types_pb2.BaseModelSpec | None = None) -> Decision:
    """Resolve the model, then the runtime (named: ValidateRuntime's order, model first; auto:
    auto-selection over the runtimes' own specs)."""
    named = bool(isvc.spec.runtime.name)
    res = resolve_model(snapshot, isvc, model_spec)
    if res.not_found or res.error:
        return Decision(named, res)
    if not named:
        assert res.model is not None
        auto = engine.auto_select(snapshot, res.model, compile_request(isvc), isvc.metadata.namespace)
        selected = auto.selected
        return Decision(False, res, runtime=selected.runtime if selected else None, evaluation=selected, auto=auto)
    runtime, not_found = lookup_named(snapshot, isvc.spec.runtime, isvc.metadata.namespace)
    if runtime is None:
        return Decision(True, res, runtime_not_found=not_found)
    if runtime.inheritance_error is not None:
        return Decision(True, res, runtime=runtime, runtime_error=runtime.inheritance_error)
    spec = runtime.named_compiled
    if spec.disabled:
        return Decision(True, res, runtime=runtime, runtime_error=messages.runtime_disabled(runtime.is_cluster, runtime.name))
    if res.model is None:  # no spec.model: OME skips all model work and every check
        return Decision(True, res, runtime=runtime)
    evaluation = engine.evaluate(runtime, spec, res.model, compile_request(isvc))
    error = ""
    if evaluation.verdict is Verdict.EXCLUDED:
        error = engine.named_error(runtime, evaluation.failures, res.model)
    return Decision(True, res, runtime=runtime, evaluation=evaluation, compatibility_error=error)


# ---- admission (the InferenceService validating webhook) ---------------------------------------


@dataclass(frozen=True, slots=True)
class Admission:
    """The webhook's verdict. ``path`` names what was checked (proto ``AdmissionPath``)."""

    allowed: bool
    path: str
    denial: str = ""
    warnings: tuple[str, ...] = ()
    decision: Decision | None = None


def _full_runner(engine_spec: types_pb2.EngineSpec) -> bool:
    """``engine.runner.image``, or both ``engine.leader.runner.image`` and
    ``engine.worker.runner.image`` (troubleshoot-runtime-selection.md)."""
    if engine_spec.runner.image:
        return True
    return bool(engine_spec.leader.runner.image and engine_spec.worker.runner.image)


def spec_denial(isvc: types_pb2.InferenceService) -> str:
    """Denials that need no runtime or model, in order: the name, decoder without engine,
    ``spec.deploymentMode`` outside its enum (the API server's message), and the OMENative
    pairing rule (deployment-modes.md, "For one component")."""
    name = isvc.metadata.name
    if name and not _ISVC_NAME.match(name):
        return f'invalid InferenceService name "{name}", must match "[a-z]([-a-z0-9]*[a-z0-9])?"'
    spec = isvc.spec
    if spec.HasField("decoder") and not spec.HasField("engine"):
        return "decoder cannot be specified without engine"
    if spec.HasField("deployment_mode") and spec.deployment_mode not in SERVICE_MODES:
        return f'spec.deploymentMode: Unsupported value: "{spec.deployment_mode}": supported values: "OMENative", "RawDeployment"'
    for path, selector in policy_fields(isvc):
        if selector.policy and selector.policy not in POLICIES:
            json_path = path.replace("accelerator_selector", "acceleratorSelector").replace("accelerator_override", "acceleratorOverride")
            supported = ", ".join(f'"{p}"' for p in POLICIES)
            return f'{json_path}: Unsupported value: "{selector.policy}": supported values: {supported}'
    revision_denial = _revision_denial(isvc)
    if revision_denial:
        return revision_denial
    if spec.HasField("engine") and spec.HasField("decoder"):
        engine_mode, decoder_mode = requested_mode(isvc, "engine") or "", requested_mode(isvc, "decoder") or ""
        if "OMENative" in (engine_mode, decoder_mode) and engine_mode != decoder_mode:
            return (
                f'InvalidDeploymentModeCombination: engine deploymentMode="{engine_mode}" does not match decoder '
                f'deploymentMode="{decoder_mode}"; when either is OMENative, both must use the same value'
            )
    return ""


_REVISION_HASH = re.compile(r"[0-9a-f]{8}\Z")


def _revision_denial(isvc: types_pb2.InferenceService) -> str:
    """runtime-revisions.md, "Pin a specific revision": with ``spec.runtime.revision`` set, the
    webhook checks that ``autoSync`` is ``false`` and that the name has the form for the runtime:
    ``cr-<runtime>-<hash>`` for a ClusterServingRuntime, ``r-<namespace>-<runtime>-<hash>`` for a
    ServingRuntime (texts from ome-selection-facts.md 8.8)."""
    ref = isvc.spec.runtime
    if not ref.revision:
        return ""
    if not (ref.HasField("auto_sync") and not ref.auto_sync):
        return "spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin"
    kind = ref.kind if ref.HasField("kind") else d.CLUSTER_SERVING_RUNTIME
    if kind == d.CLUSTER_SERVING_RUNTIME:
        prefix = f"cr-{ref.name}-"
    elif kind == d.SERVING_RUNTIME:
        prefix = f"r-{isvc.metadata.namespace}-{ref.name}-"
    else:
        return ""  # an invalid pin kind: kubectl-ome's InvalidPin, not a webhook check the docs give
    if ref.revision.startswith(prefix) and _REVISION_HASH.match(ref.revision[len(prefix):]):
        return ""
    return (
        f'spec.runtime.revision "{ref.revision}" does not match the expected naming convention for runtime '
        f'"{ref.name}" ({kind}); expected the form {prefix}<8 lowercase hex chars>'
    )


def admit(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> Admission:
    """The InferenceService validating webhook (v1.3).

    Only an InferenceService with an ``engine`` section gets the runtime and model checks. A named
    runtime is checked whenever there is a model: a failing check is a warning (``does not declare
    support for model``), a missing or disabled runtime, a broken chain, or a missing, disabled or
    format-less model is a denial ``runtime X does not support model Y: <error>``. Without a model,
    only availability is checked (skipped with ``autoSync: false``; a missing runtime is admitted).
    Auto-selection is left until after admission when the engine has its own runner image;
    otherwise it runs and warns ``Runtime X will be auto-selected for model Y`` or denies with
    ``no supporting runtime found for model Y and engine does not have complete runner
    configuration: <error>``.
    """
    denial = spec_denial(isvc)
    if denial:
        return Admission(False, "SPEC", denial=denial)
    spec = isvc.spec
    if not spec.HasField("engine"):
        return Admission(True, "NO_ENGINE")
    model_name = spec.model.name
    if spec.runtime.name:
        rt = spec.runtime.name
        if not spec.HasField("model") or not model_name:
            if spec.runtime.HasField("auto_sync") and not spec.runtime.auto_sync:
                return Admission(True, "PINNED_NO_MODEL")
            decision = decide(snapshot, isvc)
            if decision.runtime_error:  # disabled, or a broken chain; a missing runtime is admitted
                return Admission(False, "NAMED_RUNTIME_NO_MODEL", denial=decision.runtime_error, decision=decision)
            return Admission(True, "NAMED_RUNTIME_NO_MODEL", decision=decision)
        decision = decide(snapshot, isvc)
        res = decision.model
        if res.not_found:
            return Admission(False, "NAMED_RUNTIME", denial=res.not_found, decision=decision)
        if res.error and res.model is not None and res.model.disabled:
            return Admission(False, "NAMED_RUNTIME", denial=res.error, decision=decision)
        error = res.error or decision.runtime_not_found or decision.runtime_error
        if error:
            return Admission(False, "NAMED_RUNTIME", denial=messages.runtime_does_not_support(rt, model_name, error), decision=decision)
        warnings: tuple[str, ...] = ()
        if decision.compatibility_error:
            warnings = (messages.named_runtime_warning(rt, model_name, decision.compatibility_error),)
        return Admission(True, "NAMED_RUNTIME", warnings=warnings, decision=decision)
    if model_name:  # the model is checked even when auto-selection is deferred
        res = resolve_model(snapshot, isvc)
        if res.not_found:
            return Admission(False, "AUTO_SELECT", denial=res.not_found)
        if res.model is not None and res.model.disabled:
            return Admission(False, "AUTO_SELECT", denial=res.error)
    if _full_runner(spec.engine):
        return Admission(True, "DEFERRED_FULL_RUNNER")
    if not spec.HasField("model") or not model_name:
        return Admission(False, "AUTO_SELECT", denial="model reference is required when runtime is not specified and engine does not have complete runner configuration")
    decision = decide(snapshot, isvc)  # the model exists and is enabled (checked above)
    res = decision.model
    failure = res.error or (decision.auto.no_runtime_message if decision.auto and decision.runtime is None else "")
    if failure:
        return Admission(
            False,
            "AUTO_SELECT",
            denial=f"no supporting runtime found for model {model_name} and engine does not have complete runner configuration: {failure}",
            decision=decision,
        )
    assert decision.runtime is not None
    return Admission(True, "AUTO_SELECT", warnings=(messages.auto_selected(decision.runtime.name, model_name),), decision=decision)


# ---- effective configuration ------------------------------------------------------------------


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


def component_mode(isvc: types_pb2.InferenceService, component: str, runtime_spec: types_pb2.ServingRuntimeSpec | None) -> tuple[str, str, str]:
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
        own.HasField("leader") or own.HasField("worker") or (config is not None and (config.HasField("leader") or config.HasField("worker")))
    ):
        mode, source = "OMENative", "LEADER_WORKER_SHAPE"
    else:
        mode, source = "RawDeployment", "DEFAULT"
    error = ""
    if mode == "VirtualDeployment" or (component == "router" and mode == "MultiNode"):
        error = f"invalid deployment mode for {component}"
    return mode, source, error


def components(snapshot: Snapshot, isvc: types_pb2.InferenceService, runtime: d.Runtime | None, named: bool) -> tuple[ComponentConfig, ...]:
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


@dataclass(frozen=True, slots=True)
class Effective:
    """The Live view of ``kubectl ome runtime effective``."""

    state: str
    reason: str
    runtime: d.Runtime | None
    selection: str
    chain: tuple[tuple[str, str, str], ...]  # (kind, namespace, name), root first, ending with the runtime
    inheritance_error: str
    components: tuple[ComponentConfig, ...]
    inheritance_reason: str = ""  # NotFound, Cycle or MaxDepthExceeded when the chain is broken


def effective(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> Effective:
    """The Live view of ``kubectl ome runtime effective`` (reference/kubectl-ome/runtime.md): the
    runtime ``spec.runtime`` names, or the one OME selects for the model, merged with every
    runtime it inherits from; its chain, root first; each component's mode and class from the
    merged spec. ``Unavailable`` reasons: ``NotConfigured`` (neither runtime nor model),
    ``NotFound`` (the runtime or a parent is missing, or no runtime is selected), ``Disabled``
    (the merged spec is disabled), ``Unreadable`` (a cycle or a chain over the depth limit).
    ``inheritance_reason`` is what ``explain --with-effective`` shows for a broken chain:
    ``NotFound``, ``Cycle`` or ``MaxDepthExceeded``."""
    named = bool(isvc.spec.runtime.name)
    selection = "Explicit" if named else "Selected"

    def unavailable(reason: str, runtime: d.Runtime | None = None, error: str = "", chain_reason: str = "") -> Effective:
        return Effective("Unavailable", reason, runtime, selection, (), error, components(snapshot, isvc, None, named), chain_reason)

    if named:
        runtime, _ = lookup_named(snapshot, isvc.spec.runtime, isvc.metadata.namespace)
        if runtime is None:
            return unavailable("NotFound", chain_reason="NotFound")
    elif not isvc.spec.model.name:
        return unavailable("NotConfigured")
    else:
        runtime = decide(snapshot, isvc).runtime
        if runtime is None:  # unknown, disabled or format-less model, or no runtime qualifies
            return unavailable("NotFound")
    error = runtime.inheritance_error
    if error is not None:
        chain_reason = runtime.inheritance_reason or d.CHAIN_NOT_FOUND
        return unavailable("NotFound" if chain_reason == d.CHAIN_NOT_FOUND else "Unreadable", runtime, error, chain_reason)
    chain = runtime.chain_keys or (runtime.key,)
    state, reason = ("Unavailable", "Disabled") if runtime.named_compiled.disabled else ("Available", "")
    return Effective(state, reason, runtime, selection, chain, "", components(snapshot, isvc, runtime, True))


# ---- reconcile (the controller) -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes event: type, reason, OME's exact message."""

    type: str
    reason: str
    message: str


@dataclass(frozen=True, slots=True)
class ConditionValue:
    """The ``RuntimeReady`` condition to set (severity ``Info``: it never affects ``Ready``)."""

    status: str
    reason: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class Reconcile:
    """What the controller does about the runtime for one reconcile."""

    runtime: d.Runtime | None
    decision: Decision | None
    condition: ConditionValue | None = None
    events: tuple[Event, ...] = ()
    requeue: bool = False
    workload_untouched: bool = False
    logs: tuple[str, ...] = ()
    components: tuple[ComponentConfig, ...] = field(default=())


def _not_found(decision: Decision, message: str) -> Reconcile:
    """A runtime that cannot be resolved: ``RuntimeReady=False`` with ``RuntimeNotFound`` and a
    Warning event of the same reason and message; no error requeue; workloads untouched."""
    return Reconcile(
        None,
        decision,
        condition=ConditionValue("False", "RuntimeNotFound", message),
        events=(Event("Warning", "RuntimeNotFound", message),),
        workload_untouched=True,
    )


def reconcile(snapshot: Snapshot, isvc: types_pb2.InferenceService, has_condition: bool) -> Reconcile:
    """The controller's runtime step (troubleshoot-runtime-selection.md, Step 1 and "The message
    says the model format name is required"; reference-a-runtime-explicitly.md, "The runtime was
    deleted or disabled"; select-accelerators.md, "AcceleratorClassError"; deployment-modes.md,
    "Other mode values")."""
    spec = isvc.spec
    if isvc.metadata.annotations.get(d.DEPLOYMENT_MODE_ANNOTATION) == "VirtualDeployment":
        return Reconcile(None, None, components=components(snapshot, isvc, None, False))
    named = bool(spec.runtime.name)
    pinned = named and spec.runtime.HasField("auto_sync") and not spec.runtime.auto_sync
    model_name = spec.model.name
    if not named and not model_name:
        return Reconcile(None, None, events=(Event("Warning", "ModelReconcileError", "model reference is required"),), requeue=True, workload_untouched=True)
    decision = decide(snapshot, isvc)
    res = decision.model
    if res.not_found:
        text = f"No BaseModel or ClusterBaseModel with the name: {model_name}"
        return Reconcile(None, decision, events=(Event("Warning", "ModelReconcileError", text),), requeue=True, workload_untouched=True)
    if res.model is not None and res.model.disabled:
        text = f"specified base model {model_name} is disabled"
        return Reconcile(None, decision, events=(Event("Warning", "ModelReconcileError", text),), requeue=True, workload_untouched=True)
    events: list[Event] = []
    if pinned:
        # autoSync: false serves a pinned revision of the merged runtime with no compatibility
        # check, so no advisory (runtime-revisions.md). Revisions are not modelled here: the live
        # runtime stands in for the revision; a missing one is reported as no runtime, no event.
        runtime, _ = lookup_named(snapshot, spec.runtime, isvc.metadata.namespace)
        if runtime is None:
            return Reconcile(None, decision)
        if runtime.inheritance_error is not None:  # runtime-inheritance.md, "When a chain breaks"
            return Reconcile(None, decision, events=(Event("Warning", "RuntimePinError", runtime.inheritance_error),), requeue=True, workload_untouched=True)
        return _build(snapshot, isvc, runtime, decision, events, has_condition)
    if named:
        rt = spec.runtime.name
        if decision.runtime_not_found:
            return _not_found(decision, decision.runtime_not_found)
        if res.error:
            message = messages.named_runtime_event(rt, model_name, res.error)
            return Reconcile(None, decision, events=(Event("Warning", "RuntimeValidationError", message),), requeue=True, workload_untouched=True)
        elif decision.runtime_error:
            if not model_name and decision.runtime is not None and decision.runtime.inheritance_error is not None:
                return Reconcile(None, decision, events=(Event("Warning", "RuntimeFetchError", decision.runtime_error),), requeue=True, workload_untouched=True)
            message = (
                messages.named_runtime_event(rt, model_name, decision.runtime_error)
                if model_name
                else f"Runtime {rt} failed validation: {decision.runtime_error}"
            )
            return Reconcile(None, decision, events=(Event("Warning", "RuntimeValidationError", message),), requeue=True, workload_untouched=True)
        elif decision.compatibility_error:
            events.append(Event("Warning", "RuntimeCompatibilityAdvisory", messages.named_runtime_advisory(rt, model_name, decision.compatibility_error)))
    else:
        if res.error:
            message = f"Failed to find runtime for model {model_name}: {res.error}"
            return Reconcile(None, decision, events=(Event("Warning", "RuntimeSelectionError", message),), requeue=True, workload_untouched=True)
        if decision.runtime is None:
            assert decision.auto is not None and decision.auto.no_runtime_message is not None
            return _not_found(decision, decision.auto.no_runtime_message)
    assert decision.runtime is not None
    return _build(snapshot, isvc, decision.runtime, decision, events, has_condition)


def _referenced_model_exists(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> bool:
    """Whether the model exists under the kind ``spec.model.kind`` names (default
    ``ClusterBaseModel``): the part of the reconcile that builds the workload reads it strictly by
    kind (base-models.md: "With the wrong kind, OME admits the InferenceService but doesn't create
    or update its serving workload")."""
    ref = isvc.spec.model
    kind = ref.kind if ref.HasField("kind") else d.CLUSTER_BASE_MODEL
    if kind == d.BASE_MODEL:
        return (isvc.metadata.namespace, ref.name) in snapshot.base_models
    return kind == d.CLUSTER_BASE_MODEL and ref.name in snapshot.cluster_models


def _build(snapshot: Snapshot, isvc: types_pb2.InferenceService, runtime: d.Runtime, decision: Decision, events: list[Event], has_condition: bool) -> Reconcile:
    """After the runtime is resolved: the engine must exist (``DeploymentModeError``), the model
    must exist under its declared kind (a log only), each component's class must resolve
    (``AcceleratorClassError``, or the BestFit log), and each component must be able to run in its
    mode (``Failed to reconcile component``), in the controller's order (ome-selection-facts.md
    6.1, 8.4, 8.11)."""
    named = decision.named
    condition = ConditionValue("True", "RuntimeResolved") if has_condition else None
    configs = components(snapshot, isvc, runtime, named)

    def stop(*, event: Event | None = None, log: str = "", untouched: bool = True) -> Reconcile:
        return Reconcile(
            runtime, decision, condition=condition, events=tuple(events) + ((event,) if event else ()),
            requeue=True, workload_untouched=untouched, logs=(log,) if log else (), components=configs,
        )

    if not isvc.spec.HasField("engine"):
        return stop(event=Event("Warning", "DeploymentModeError", "engine component is required"))
    if isvc.spec.model.name and not _referenced_model_exists(snapshot, isvc):
        kind = isvc.spec.model.kind if isvc.spec.model.HasField("kind") else d.CLUSTER_BASE_MODEL
        return stop(log=f"Failed to get referenced {kind}")
    # Classes are resolved while the engine and decoder are built, before any component is
    # reconciled with its mode (ome-selection-facts.md 6.1 steps 8-10).
    blocked = next((c for c in configs if c.accelerator.error or c.accelerator.log), None)
    if blocked is not None:
        if blocked.accelerator.error:
            return stop(event=Event("Warning", "AcceleratorClassError", accelerator_event_message(blocked.component, blocked.accelerator.error)))
        return stop(log=blocked.accelerator.log)
    failing = next((c for c in configs if c.mode_error), None)
    if failing is not None:
        # No workload for that component or any after it (engine, decoder, router): the serving
        # workload as a whole is untouched only when the engine fails.
        return stop(log=f"Failed to reconcile component: {failing.mode_error}", untouched=failing.component == "engine")
    return Reconcile(runtime, decision, condition=condition, events=tuple(events), components=configs)
