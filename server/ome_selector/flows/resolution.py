"""Model and runtime resolution: the one flow every caller shares (SelectRuntime, admission,
reconcile, the effective view).

- ``resolve_model`` -> ``ModelResolution``: an inline spec, a BaseModel, else a ClusterBaseModel
  (base-models.md), with OME's errors for a disabled or format-less model.
- ``lookup_named``: the runtime ``spec.runtime`` names (reference-a-runtime-explicitly.md, "How
  OME resolves the name").
- ``decide`` -> ``Decision``: model first, then the named-runtime branch (ValidateRuntime's
  order) or the auto-selection branch (``engine.auto_select``) over the runtimes' own specs.

Pure Python, no gRPC.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from ome.v1beta1 import types_pb2

from ome_selector.cache.ingest import compile_model, compile_request
from ome_selector.cache.snapshot import Snapshot
from ome_selector.domain import objects as d
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import AutoSelection, Evaluation, Verdict
from ome_selector.rules.scoring import named_entry
from ome_selector.texts import messages


@dataclass(frozen=True, slots=True)
class ModelResolution:
    """The InferenceService's model. ``not_found`` and ``error`` hold OME's texts."""

    model: d.Model | None
    not_found: str = ""
    error: str = ""


def resolve_model(
    snapshot: Snapshot, isvc: types_pb2.InferenceService, model_spec: types_pb2.BaseModelSpec | None = None
) -> ModelResolution:
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


class Resolved(enum.Enum):
    """Which outcome a ``Decision`` is, in the order they are checked."""

    MODEL_NOT_FOUND = enum.auto()  # ``model.not_found``: OME's text
    MODEL_ERROR = enum.auto()  # ``model.error``: disabled, or no model format
    RUNTIME_NOT_FOUND = enum.auto()  # named: ``runtime_not_found``
    RUNTIME_ERROR = enum.auto()  # named: ``runtime_error`` (broken chain, disabled, a Sharded model failing a check)
    RUNTIME = enum.auto()  # ``runtime`` is the one to use (named, or the auto-selected one)
    NO_RUNTIME = enum.auto()  # auto-selection found none: ``auto.no_runtime_message``


@dataclass(frozen=True, slots=True)
class Decision:
    """How the runtime is resolved for one InferenceService: ``outcome`` says which of the
    ``Resolved`` cases applies; the texts are OME's for that case. ``evaluation`` holds the
    checks of the runtime (named, or the selected one); ``auto`` the auto-selection;
    ``named_entry`` the (index, score) of the supportedModelFormats entry OME applies to a named
    runtime evaluated against a model (``rules.scoring.named_entry``), else None.
    """

    outcome: Resolved
    named: bool
    model: ModelResolution
    runtime: d.Runtime | None = None
    runtime_not_found: str = ""
    runtime_error: str = ""
    evaluation: Evaluation | None = None
    auto: AutoSelection | None = None
    compatibility_error: str = ""  # named runtime that fails a check: ValidateRuntime's text
    named_entry: tuple[int, int] | None = None


@dataclass(frozen=True, slots=True)
class SelectQuery:
    """What a runtime is decided for: the InferenceService and its inline model spec (or None).
    SelectRuntime's view rides along: ``full`` (every exclusion) and the ranked candidates the
    answer carries at most (``candidate_limit``; 0 = all)."""

    isvc: types_pb2.InferenceService
    model_spec: types_pb2.BaseModelSpec | None = None
    full: bool = False
    candidate_limit: int = 0


def decide(snapshot: Snapshot, query: SelectQuery) -> Decision:
    """Resolve the model, then the runtime: the named one (ValidateRuntime's order, model first)
    or auto-selection over the runtimes' own specs."""
    isvc = query.isvc
    named = bool(isvc.spec.runtime.name)
    res = resolve_model(snapshot, isvc, query.model_spec)
    if res.not_found or res.error:
        return Decision(Resolved.MODEL_NOT_FOUND if res.not_found else Resolved.MODEL_ERROR, named, res)
    request = compile_request(isvc)
    if named:
        return _decide_named(snapshot, isvc.spec.runtime, res, request)
    return _decide_auto(snapshot, res, request)


def _decide_auto(snapshot: Snapshot, res: ModelResolution, request: d.Request) -> Decision:
    """Auto-selection (``engine.auto_select``): RUNTIME with the selected runtime, or NO_RUNTIME."""
    assert res.model is not None
    auto = engine.auto_select(snapshot, res.model, request, request.namespace)
    selected = auto.selected
    if selected is None:
        return Decision(Resolved.NO_RUNTIME, False, res, auto=auto)
    return Decision(Resolved.RUNTIME, False, res, runtime=selected.runtime, evaluation=selected, auto=auto)


def _decide_named(
    snapshot: Snapshot, ref: types_pb2.ServingRuntimeRef, res: ModelResolution, request: d.Request
) -> Decision:
    """The runtime ``spec.runtime`` names, used even when it fails a check
    (reference-a-runtime-explicitly.md): RUNTIME_NOT_FOUND; RUNTIME_ERROR for a broken chain, a
    disabled runtime, or a Sharded model failing a check; else RUNTIME (with ValidateRuntime's
    text as ``compatibility_error`` when a check fails)."""
    runtime, not_found = lookup_named(snapshot, ref, request.namespace)
    if runtime is None:
        return Decision(Resolved.RUNTIME_NOT_FOUND, True, res, runtime_not_found=not_found)
    unusable = _unusable(runtime)
    if unusable is not None:
        return Decision(Resolved.RUNTIME_ERROR, True, res, runtime=runtime, runtime_error=unusable)
    if res.model is None:  # no spec.model: OME skips all model work and every check
        return Decision(Resolved.RUNTIME, True, res, runtime=runtime)
    evaluation = engine.evaluate(runtime, runtime.named_compiled, res.model, request)
    entry = named_entry(evaluation.spec.entries, res.model)
    excluded = evaluation.verdict is Verdict.EXCLUDED
    error = engine.named_error(runtime, evaluation.failures, res.model) if excluded else ""
    # A Sharded model cannot load without a model cache provider: its failed check is an error,
    # not advisory, even for a named runtime (base-models.md, "Distribution").
    blocking = bool(error) and res.model.sharded
    return Decision(
        Resolved.RUNTIME_ERROR if blocking else Resolved.RUNTIME,
        True,
        res,
        runtime=runtime,
        runtime_error=error if blocking else "",
        evaluation=evaluation,
        compatibility_error="" if blocking else error,
        named_entry=entry,
    )


def _unusable(runtime: d.Runtime) -> str | None:
    """Why a named runtime cannot be used at all: its broken inheritance chain, or OME's
    ``disabled`` text; None when usable."""
    if runtime.inheritance_error is not None:
        return runtime.inheritance_error
    return messages.runtime_disabled(runtime.is_cluster, runtime.name) if runtime.named_compiled.disabled else None
