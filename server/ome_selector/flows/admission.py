"""The InferenceService validating webhook (v1.3): what it checks, its warnings and denials.

``admit(snapshot, isvc, operation)`` -> ``Admission``. Pages: guides/deploy-models/reference-a-
runtime-explicitly.md, troubleshoot-runtime-selection.md; concepts/architecture/deployment-modes.md;
concepts/runtimes/runtime-revisions.md; concepts/models/base-models.md; where they are silent,
ome-selection-facts.md 5.2, 7-8. Pure Python, no gRPC.

Operations: OME registers the webhook for CREATE and UPDATE (ome-selection-facts.md 5.2: "It does
nothing on delete"). A DELETE is allowed with nothing checked (reference-a-runtime-explicitly.md:
"You can still delete the InferenceService"). An UPDATE is judged on the new object exactly as a
CREATE: no rule of these pages compares it with the stored one, and an existing InferenceService
"gets the same rejection on every update, even a label change" (troubleshoot-runtime-selection.md,
"How a selection failure shows up"; reference-a-runtime-explicitly.md, "The runtime was deleted or
disabled"; runtime-revisions.md, the pinned InferenceService's live runtime; base-models.md,
"new and changed InferenceServices" of a disabled model).
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, replace
from typing import Literal

from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import requested_mode
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.flows.resolution import Decision, SelectQuery, decide, resolve_model
from ome_selector.flows.revisions import revision_prefix
from ome_selector.texts import messages
from ome_selector.texts.fieldpaths import json_path
from ome_selector.validation import isvc_spec_violations

ISVC_WEBHOOK = "inferenceservice.ome-webhook-server.validator"
_ISVC_NAME = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?\Z")


class AdmissionPath(enum.Enum):
    """What the webhook checked (proto ``AdmissionPath``)."""

    NO_ENGINE = enum.auto()  # no engine: nothing to resolve
    DEFERRED_FULL_RUNNER = enum.auto()  # a full runner: the runtime is resolved at reconcile
    AUTO_SELECT = enum.auto()
    NAMED_RUNTIME = enum.auto()
    NAMED_RUNTIME_NO_MODEL = enum.auto()
    PINNED_NO_MODEL = enum.auto()
    SPEC = enum.auto()  # denied on the spec alone
    DELETE = enum.auto()  # allowed, nothing checked


@dataclass(frozen=True, slots=True)
class Admission:
    """The webhook's verdict and the ``path`` it took."""

    allowed: bool
    path: AdmissionPath
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
    ``spec.deploymentMode`` and ``policy`` outside their enums (the API server's message), and
    the OMENative pairing rule (deployment-modes.md, "For one component")."""
    name = isvc.metadata.name
    if name and not _ISVC_NAME.match(name):
        return messages.INVALID_ISVC_NAME.format(name=name)
    spec = isvc.spec
    if spec.HasField("decoder") and not spec.HasField("engine"):
        return messages.DECODER_WITHOUT_ENGINE
    enums = isvc_spec_violations(spec, "inference_service")  # the rule a cached InferenceService gets
    if enums:
        path = json_path(enums[0].field).removeprefix("inferenceService.")
        return f"{path}: {enums[0].description}"
    if spec.HasField("engine") and spec.HasField("decoder"):
        engine_mode, decoder_mode = requested_mode(spec, "engine") or "", requested_mode(spec, "decoder") or ""
        if "OMENative" in (engine_mode, decoder_mode) and engine_mode != decoder_mode:
            return messages.INVALID_MODE_COMBINATION.format(engine=engine_mode, decoder=decoder_mode)
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
        return messages.REVISION_NEEDS_PIN
    kind = ref.kind if ref.HasField("kind") else d.CLUSTER_SERVING_RUNTIME
    if kind not in (d.CLUSTER_SERVING_RUNTIME, d.SERVING_RUNTIME):
        return ""  # an invalid pin kind: kubectl-ome's InvalidPin, not a webhook check the docs give
    prefix = revision_prefix(kind, isvc.metadata.namespace, ref.name)
    if ref.revision.startswith(prefix) and _REVISION_HASH.match(ref.revision[len(prefix) :]):
        return ""
    return messages.REVISION_NAME.format(revision=ref.revision, runtime=ref.name, kind=kind, prefix=prefix)


COMPONENTS: tuple[Literal["engine", "decoder", "router"], ...] = ("engine", "decoder", "router")


def deployment_strategy_warnings(isvc: types_pb2.InferenceService) -> tuple[str, ...]:
    """deployment-modes.md, "For the whole InferenceService": OMENative ignores a component's
    ``deploymentStrategy``, so under ``spec.deploymentMode: OMENative`` the webhook warns about
    each component (engine, decoder, router, in that order) that sets one. Only
    ``spec.deploymentMode`` is read, as the page's example; the field takes only ``OMENative``
    and ``RawDeployment``."""
    spec = isvc.spec
    if not spec.HasField("deployment_mode") or spec.deployment_mode != "OMENative":
        return ()
    return tuple(
        messages.deployment_strategy_ignored(component, spec.deployment_mode)
        for component in COMPONENTS
        if spec.HasField(component) and getattr(spec, component).HasField("deployment_strategy")
    )


def admit(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, operation: d.Operation = d.Operation.CREATE
) -> Admission:
    """The InferenceService validating webhook (v1.3) on ``operation`` (the module docstring:
    DELETE checks nothing; UPDATE is judged as CREATE). ``isvc`` is the new object (for a
    DELETE, the one being deleted).

    Order (ome-selection-facts.md 5.2): the denials of ``spec_denial``; then the warnings of
    ``deployment_strategy_warnings``, which come with every later answer, admission or denial;
    the revision pin (runtime-revisions.md); then the runtime and model checks of ``_checked``.
    """
    if operation is d.Operation.DELETE:
        return Admission(True, AdmissionPath.DELETE)
    denial = spec_denial(isvc)
    if denial:
        return Admission(False, AdmissionPath.SPEC, denial=denial)
    warnings = deployment_strategy_warnings(isvc)
    revision_denial = _revision_denial(isvc)
    result = (
        Admission(False, AdmissionPath.SPEC, denial=revision_denial) if revision_denial else _checked(snapshot, isvc)
    )
    return replace(result, warnings=warnings + result.warnings) if warnings else result


def _checked(snapshot: Snapshot, isvc: types_pb2.InferenceService) -> Admission:
    """The runtime and model checks of the webhook (v1.3).

    Only an InferenceService with an ``engine`` section gets the runtime and model checks. A named
    runtime is checked whenever there is a model: a failing check is a warning (``does not declare
    support for model``), a missing or disabled runtime, a broken chain, or a missing, disabled or
    format-less model is a denial ``runtime X does not support model Y: <error>``. Without a model,
    only availability is checked (skipped with ``autoSync: false``; a missing runtime is admitted).
    Auto-selection is left until after admission when the engine has its own runner image;
    otherwise it runs and warns ``Runtime X will be auto-selected for model Y`` or denies with
    ``no supporting runtime found for model Y and engine does not have complete runner
    configuration: <error>``. A ``distribution: Sharded`` model that fails the named runtime's
    checks is a denial, not a warning (base-models.md, "Distribution"; ``resolution.decide``).
    """
    spec = isvc.spec
    if not spec.HasField("engine"):
        return Admission(True, AdmissionPath.NO_ENGINE)
    model_name = spec.model.name
    if spec.runtime.name:
        rt = spec.runtime.name
        if not spec.HasField("model") or not model_name:
            if spec.runtime.HasField("auto_sync") and not spec.runtime.auto_sync:
                return Admission(True, AdmissionPath.PINNED_NO_MODEL)
            decision = decide(snapshot, SelectQuery(isvc))
            if decision.runtime_error:  # disabled, or a broken chain; a missing runtime is admitted
                return Admission(
                    False, AdmissionPath.NAMED_RUNTIME_NO_MODEL, denial=decision.runtime_error, decision=decision
                )
            return Admission(True, AdmissionPath.NAMED_RUNTIME_NO_MODEL, decision=decision)
        decision = decide(snapshot, SelectQuery(isvc))
        res = decision.model
        if res.not_found:
            return Admission(False, AdmissionPath.NAMED_RUNTIME, denial=res.not_found, decision=decision)
        if res.error and res.model is not None and res.model.disabled:
            return Admission(False, AdmissionPath.NAMED_RUNTIME, denial=res.error, decision=decision)
        error = res.error or decision.runtime_not_found or decision.runtime_error
        if error:
            return Admission(
                False,
                AdmissionPath.NAMED_RUNTIME,
                denial=messages.runtime_does_not_support(rt, model_name, error),
                decision=decision,
            )
        warnings: tuple[str, ...] = ()
        if decision.compatibility_error:
            warnings = (messages.named_runtime_warning(rt, model_name, decision.compatibility_error),)
        return Admission(True, AdmissionPath.NAMED_RUNTIME, warnings=warnings, decision=decision)
    if model_name:  # the model is checked even when auto-selection is deferred
        res = resolve_model(snapshot, isvc)
        if res.not_found:
            return Admission(False, AdmissionPath.AUTO_SELECT, denial=res.not_found)
        if res.model is not None and res.model.disabled:
            return Admission(False, AdmissionPath.AUTO_SELECT, denial=res.error)
    if _full_runner(spec.engine):
        return Admission(True, AdmissionPath.DEFERRED_FULL_RUNNER)
    if not spec.HasField("model") or not model_name:
        return Admission(False, AdmissionPath.AUTO_SELECT, denial=messages.MODEL_REFERENCE_REQUIRED_FOR_AUTO_SELECT)
    decision = decide(snapshot, SelectQuery(isvc))  # the model exists and is enabled (checked above)
    res = decision.model
    failure = res.error or (decision.auto.no_runtime_message if decision.auto and decision.runtime is None else "")
    if failure:
        return Admission(
            False,
            AdmissionPath.AUTO_SELECT,
            denial=messages.NO_SUPPORTING_RUNTIME.format(model=model_name, error=failure),
            decision=decision,
        )
    assert decision.runtime is not None
    return Admission(
        True,
        AdmissionPath.AUTO_SELECT,
        warnings=(messages.auto_selected(decision.runtime.name, model_name),),
        decision=decision,
    )
