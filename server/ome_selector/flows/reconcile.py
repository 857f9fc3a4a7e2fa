"""What the controller does about the runtime for one reconcile: the runtime to use, the
``RuntimeReady`` condition, events, requeue, log lines and component configuration
(troubleshoot-runtime-selection.md Step 1; reference-a-runtime-explicitly.md; select-accelerators.md;
deployment-modes.md; where they are silent, ome-selection-facts.md 6 and 8). Pure Python, no gRPC.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from ome.v1beta1 import types_pb2

from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.domain.objects import Event
from ome_selector.flows import revisions as pinning
from ome_selector.flows.components import ComponentConfig, components
from ome_selector.flows.resolution import Decision, SelectQuery, decide
from ome_selector.flows.revisions import PinOutcome
from ome_selector.texts import messages
from ome_selector.texts.messages import accelerator_event_message


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
    # A pinned InferenceService (``autoSync: false``): what the pin did (pinning.resolve).
    pin: PinOutcome | None = None


def ready_left(isvc: types_pb2.InferenceService) -> types_pb2.Condition | None:
    """The InferenceService's ``Ready`` condition while ``RuntimeReady`` is ``False``: left as it
    is, since "``RuntimeReady`` doesn't count toward ``Ready``, so the InferenceService stays
    ``Ready`` while they serve" (reference-a-runtime-explicitly.md, "The runtime was deleted or
    disabled"; serving-runtimes.md, the common errors table) and "one that's serving keeps its
    pods and stays ``Ready``" (troubleshoot-runtime-selection.md). None when it has none: "a new
    InferenceService then gets no pods", and OME writes no ``Ready`` for it (the reconcile returns
    before the status step, ome-selection-facts.md 6.1 and 8.6). With several, the last one
    (Kubernetes keeps one per type; the last write wins)."""
    found = [c for c in isvc.status.conditions if c.type == messages.CONDITION_READY]
    return found[-1] if found else None


def has_runtime_ready(isvc: types_pb2.InferenceService) -> bool:
    """Whether ``status.conditions`` holds a ``RuntimeReady`` condition. OME writes one only once
    the runtime could not be resolved; from then on a resolved runtime sets it ``True`` with
    ``RuntimeResolved`` (troubleshoot-runtime-selection.md Step 1 and "Step 5";
    ome-selection-facts.md 8.6)."""
    return any(c.type == messages.CONDITION_RUNTIME_READY for c in isvc.status.conditions)


def _not_found(decision: Decision, message: str) -> Reconcile:
    """A runtime that cannot be resolved: ``RuntimeReady=False`` with ``RuntimeNotFound`` and a
    Warning event of the same reason and message; no error requeue; workloads untouched."""
    return Reconcile(
        None,
        decision,
        condition=ConditionValue("False", messages.CONDITION_RUNTIME_NOT_FOUND, message),
        events=(Event("Warning", messages.EVENT_RUNTIME_NOT_FOUND, message),),
        workload_untouched=True,
    )


def _error(decision: Decision | None, reason: str, message: str) -> Reconcile:
    """A reconcile that stops with a Warning event and an error requeue, the workload untouched."""
    return Reconcile(None, decision, events=(Event("Warning", reason, message),), requeue=True, workload_untouched=True)


def reconcile(
    snapshot: Snapshot,
    isvc: types_pb2.InferenceService,
    has_condition: bool,
    ome_namespace: str = d.DEFAULT_OME_NAMESPACE,
) -> Reconcile:
    """The controller's runtime step (troubleshoot-runtime-selection.md, Step 1 and "The message
    says the model format name is required"; reference-a-runtime-explicitly.md, "The runtime was
    deleted or disabled"; select-accelerators.md, "AcceleratorClassError"; deployment-modes.md,
    "Other mode values"; runtime-revisions.md for ``autoSync: false``, whose revisions are looked
    up in ``ome_namespace``)."""
    spec = isvc.spec
    if isvc.metadata.annotations.get(d.DEPLOYMENT_MODE_ANNOTATION) == "VirtualDeployment":
        return Reconcile(None, None, components=components(snapshot, isvc, None, False))
    named = bool(spec.runtime.name)
    model_name = spec.model.name
    if not named and not model_name:
        return _error(None, messages.EVENT_MODEL_RECONCILE_ERROR, messages.MODEL_REFERENCE_REQUIRED)
    decision = decide(snapshot, SelectQuery(isvc))
    res = decision.model
    if res.not_found:
        return _error(
            decision, messages.EVENT_MODEL_RECONCILE_ERROR, messages.NO_MODEL_WITH_NAME.format(model=model_name)
        )
    if res.model is not None and res.model.disabled:
        return _error(
            decision, messages.EVENT_MODEL_RECONCILE_ERROR, messages.BASE_MODEL_DISABLED.format(model=model_name)
        )
    events: list[Event] = []
    if pinning.pinned(isvc):
        return _pinned(snapshot, isvc, decision, has_condition, ome_namespace)
    if named:
        rt = spec.runtime.name
        if decision.runtime_not_found:
            return _not_found(decision, decision.runtime_not_found)
        if res.error:
            return _error(
                decision,
                messages.EVENT_RUNTIME_VALIDATION_ERROR,
                messages.named_runtime_event(rt, model_name, res.error),
            )
        elif decision.runtime_error:
            if not model_name and decision.runtime is not None and decision.runtime.inheritance_error is not None:
                return _error(decision, messages.EVENT_RUNTIME_FETCH_ERROR, decision.runtime_error)
            message = (
                messages.named_runtime_event(rt, model_name, decision.runtime_error)
                if model_name
                else messages.RUNTIME_FAILED_VALIDATION.format(runtime=rt, error=decision.runtime_error)
            )
            return _error(decision, messages.EVENT_RUNTIME_VALIDATION_ERROR, message)
        elif decision.compatibility_error:
            advisory = messages.named_runtime_advisory(rt, model_name, decision.compatibility_error)
            events.append(Event("Warning", messages.EVENT_RUNTIME_COMPATIBILITY_ADVISORY, advisory))
    else:
        if res.error:
            return _error(
                decision,
                messages.EVENT_RUNTIME_SELECTION_ERROR,
                messages.FAILED_TO_FIND_RUNTIME.format(model=model_name, error=res.error),
            )
        if decision.runtime is None:
            assert decision.auto is not None and decision.auto.no_runtime_message is not None
            return _not_found(decision, decision.auto.no_runtime_message)
    assert decision.runtime is not None
    return _build(snapshot, isvc, decision.runtime, decision, events, has_condition)


def _pinned(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, decision: Decision, has_condition: bool, ome_namespace: str
) -> Reconcile:
    """``autoSync: false``: the pods render from a revision of the merged runtime, with no
    compatibility check and so no advisory (runtime-revisions.md; runtime-inheritance.md "When a
    chain breaks" for the ``RuntimePinError``). Drift that pauses updates leaves the workload as
    it is without an error requeue."""
    outcome = pinning.resolve(snapshot, isvc, ome_namespace)
    if outcome.error:
        return dataclasses.replace(_error(decision, messages.EVENT_RUNTIME_PIN_ERROR, outcome.error), pin=outcome)
    if outcome.paused:
        return Reconcile(None, decision, workload_untouched=True, pin=outcome)
    assert outcome.runtime is not None
    return dataclasses.replace(_build(snapshot, isvc, outcome.runtime, decision, [], has_condition), pin=outcome)


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


def _build(
    snapshot: Snapshot,
    isvc: types_pb2.InferenceService,
    runtime: d.Runtime,
    decision: Decision,
    events: list[Event],
    has_condition: bool,
) -> Reconcile:
    """After the runtime is resolved: the engine must exist (``DeploymentModeError``), the model
    must exist under its declared kind (a log only), each component's class must resolve
    (``AcceleratorClassError``, or the BestFit log), and each component must be able to run in its
    mode (``Failed to reconcile component``), in the controller's order (ome-selection-facts.md
    6.1, 8.4, 8.11)."""
    named = decision.named
    condition = ConditionValue("True", messages.CONDITION_RUNTIME_RESOLVED) if has_condition else None
    configs = components(snapshot, isvc, runtime, named)

    def stop(*, event: Event | None = None, log: str = "", untouched: bool = True) -> Reconcile:
        return Reconcile(
            runtime,
            decision,
            condition=condition,
            events=tuple(events) + ((event,) if event else ()),
            requeue=True,
            workload_untouched=untouched,
            logs=(log,) if log else (),
            components=configs,
        )

    if not isvc.spec.HasField("engine"):
        return stop(event=Event("Warning", messages.EVENT_DEPLOYMENT_MODE_ERROR, messages.ENGINE_REQUIRED))
    if isvc.spec.model.name and not _referenced_model_exists(snapshot, isvc):
        kind = isvc.spec.model.kind if isvc.spec.model.HasField("kind") else d.CLUSTER_BASE_MODEL
        return stop(log=messages.FAILED_TO_GET_MODEL_LOG.format(kind=kind))
    # Classes are resolved while the engine and decoder are built, before any component is
    # reconciled with its mode (ome-selection-facts.md 6.1 steps 8-10).
    blocked = next((c for c in configs if c.accelerator.error or c.accelerator.log), None)
    if blocked is not None:
        if blocked.accelerator.error:
            message = accelerator_event_message(blocked.component, blocked.accelerator.error)
            return stop(event=Event("Warning", messages.EVENT_ACCELERATOR_CLASS_ERROR, message))
        return stop(log=blocked.accelerator.log)
    failing = next((c for c in configs if c.mode_error), None)
    if failing is not None:
        # No workload for that component or any after it (engine, decoder, router): the serving
        # workload as a whole is untouched only when the engine fails.
        return stop(
            log=messages.FAILED_TO_RECONCILE_COMPONENT_LOG.format(error=failing.mode_error),
            untouched=failing.component == "engine",
        )
    return Reconcile(runtime, decision, condition=condition, events=tuple(events), components=configs)
