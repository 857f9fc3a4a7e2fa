"""The selection checks, one function each, in the documented order.

Order (troubleshoot-runtime-selection.md, Step 2 table): disabled -> accelerator class ->
deployment mode (engine, then decoder) -> model format -> model size. Each check takes the
compiled runtime spec, the model's fit against it and the request, and returns the failures it
finds (an empty tuple when it passes). ``CHECKS`` is the canonical order; the first failure is
the one OME reports (the primary reason).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Literal

from ome.v1beta1 import types_pb2

from ome_selector.domain.objects import Compiled, Entry, Model, Request, Spec
from ome_selector.domain.sizes import outside
from ome_selector.domain.versions import entry_accepts
from ome_selector.texts import messages


class Check(enum.Enum):
    """Check names, in canonical order; the same names as the proto enum ``ome.selector.v1.Check``
    (api.CHECK_TO_PB maps them)."""

    DISABLED = enum.auto()
    ACCELERATOR_CLASS = enum.auto()
    DEPLOYMENT_MODE = enum.auto()
    MODEL_FORMAT = enum.auto()
    MODEL_SIZE = enum.auto()
    AUTO_SELECT = enum.auto()
    SCORE = enum.auto()


@dataclass(frozen=True, slots=True)
class EntryMismatch:
    """Why one entry does not match: its index and each difference, in OME's order."""

    index: int
    differences: tuple[str, ...]

    @property
    def text(self) -> str:
        """The differences joined by ``, `` (``unknown mismatch`` when there are none)."""
        return ", ".join(self.differences) if self.differences else messages.UNKNOWN_MISMATCH


@dataclass(frozen=True, slots=True)
class Failure:
    """A failed check: OME's exact ``message`` plus structured values."""

    check: Check
    message: str
    component: str = ""
    runtime_value: str = ""
    requested_value: str = ""
    entries: tuple[EntryMismatch, ...] = ()


@dataclass(frozen=True, slots=True)
class ModelFit:
    """How a model fits a runtime spec; depends only on the two, so it is memoised per snapshot.

    ``match`` is the first entry that strictly matches (or None); ``score`` and ``score_index``
    come from the lenient scorer (runtime-selection-scoring.md): the highest entry score (0 when
    none is above 0) and the index of the first entry with it (-1 when none); ``format_failure`` and
    ``size_failure`` are the model-format and model-size check results.
    """

    match: Entry | None
    score: int
    score_index: int
    format_failure: Failure | None
    size_failure: Failure | None
    distance_low: float | None
    distance_high: float | None


# ---- model-format helpers (model-version-matching.md, diffusion-pipeline-runtime-matching.md)

_PIPELINE_COMPONENTS: tuple[Literal["scheduler", "text_encoder", "tokenizer", "transformer", "vae"], ...] = (
    "scheduler",
    "text_encoder",
    "tokenizer",
    "transformer",
    "vae",
)
_PIPELINE_NAMES = {"text_encoder": "textEncoder"}


def _component_difference(
    name: str, model: types_pb2.DiffusionComponentSpec, entry: types_pb2.DiffusionComponentSpec
) -> str | None:
    if entry.library and model.library != entry.library:
        return messages.MISMATCH.format(what=f"{name} library", model=model.library, runtime=entry.library)
    if entry.type and model.type != entry.type:
        return messages.MISMATCH.format(what=f"{name} type", model=model.type, runtime=entry.type)
    return None


def pipeline_difference(
    model: types_pb2.DiffusionPipelineSpec | None, entry: types_pb2.DiffusionPipelineSpec
) -> str | None:
    """The first pipeline mismatch, or None (diffusion-pipeline-runtime-matching.md, reasons).

    ``additionalComponents`` keys are checked in sorted order (OME's map order is random).
    """
    if model is None:
        return messages.PIPELINE_MISSING
    if entry.HasField("class_name") and (not model.HasField("class_name") or model.class_name != entry.class_name):
        shown = model.class_name if model.HasField("class_name") else "<nil>"
        return messages.MISMATCH.format(what="pipeline class", model=shown, runtime=entry.class_name)
    for field in _PIPELINE_COMPONENTS:
        if not entry.HasField(field):
            continue
        name = _PIPELINE_NAMES.get(field, field)
        if not model.HasField(field):
            return messages.PIPELINE_COMPONENT_MISSING.format(name=name)
        diff = _component_difference(name, getattr(model, field), getattr(entry, field))
        if diff:
            return diff
    if entry.additional_components:
        if not model.additional_components:
            return messages.PIPELINE_ADDITIONAL_MISSING
        for key in sorted(entry.additional_components):
            if key not in model.additional_components:
                return messages.PIPELINE_ADDITIONAL_COMPONENT_MISSING.format(name=key)
            diff = _component_difference(key, model.additional_components[key], entry.additional_components[key])
            if diff:
                return diff
    return None


def _presence(what: str, model_value: str | None, entry_value: str | None) -> str | None:
    if model_value is not None and entry_value is not None:
        return (
            None
            if model_value == entry_value
            else messages.MISMATCH.format(what=what, model=model_value, runtime=entry_value)
        )
    if entry_value is not None:
        return messages.MODEL_LACKS.format(what=what, runtime=entry_value)
    if model_value is not None:
        return messages.RUNTIME_LACKS.format(what=what, model=model_value)
    return None


def _version_difference(what: str, model: Spec, entry: Spec) -> str | None:
    if model.version is not None and entry.version is not None:
        if entry_accepts(entry.parsed, entry.operator, model.parsed):
            return None
        return messages.MISMATCH.format(what=f"{what} version", model=model.version, runtime=entry.version)
    if entry.version is not None:
        return messages.MODEL_LACKS_VERSION.format(what=what, runtime=entry.version)
    if model.version is not None:
        return messages.RUNTIME_LACKS_VERSION.format(what=what)
    return None


def _named_difference(what: str, model: Spec, entry: Spec) -> str | None:
    """A name mismatch, else the version difference, of a format or framework."""
    if model.name != entry.name:
        return messages.MISMATCH.format(what=f"{what} name", model=model.name, runtime=entry.name)
    return _version_difference(what, model, entry)


def entry_differences(entry: Entry, model: Model) -> tuple[str, ...]:
    """Every way ``entry`` differs from ``model``, in OME's order: model cache provider (a
    ``distribution: Sharded`` model, base-models.md "Distribution": no entry can list a
    configured provider yet, so it comes first for every entry), pipeline, architecture,
    quantization, format, framework. Empty (with a ``modelFormat``) means a strict match."""
    out: list[str] = [messages.SHARDED_NO_CACHE_PROVIDER] if model.sharded else []
    if entry.pipeline is not None:
        pipeline = pipeline_difference(model.pipeline, entry.pipeline)
        if pipeline is not None:
            out.append(pipeline)
    for what, model_value, entry_value in (
        ("architecture", model.architecture, entry.architecture),
        ("quantization", model.quantization, entry.quantization),
    ):
        diff = _presence(what, model_value, entry_value)
        if diff:
            out.append(diff)
    ef, ew, mw = entry.model_format, entry.model_framework, model.model_framework
    diffs = [
        _named_difference("format", model.model_format, ef) if ef is not None else None,
        _named_difference("framework", mw, ew) if ew is not None and mw is not None else None,
    ]
    out += [diff for diff in diffs if diff]
    if ew is not None and mw is None:
        out.append(messages.MODEL_LACKS.format(what="framework", runtime=ew.name))
    elif mw is not None and ew is None:
        out.append(messages.RUNTIME_LACKS.format(what="framework", model=mw.name))
    return tuple(out)


def _versions_fit(model: Spec, entry: Spec) -> bool:
    if model.version is not None and entry.version is not None:
        return entry_accepts(entry.parsed, entry.operator, model.parsed)
    return True


def entry_score(entry: Entry, model: Model, priority: int) -> int:
    """The lenient score of one entry (runtime-selection-scoring.md, "How the score is computed").

    Architecture, quantization and pipeline are ignored. ``(format weight + framework weight) x
    priority``, a weight of 0 counting as 10 (format) or 5 (framework); 0 when names or versions
    differ or a framework is on one side only.
    """
    ef, mf = entry.model_format, model.model_format
    fmt_ok = False
    if ef is not None:
        if ef.name != mf.name or not _versions_fit(mf, ef):
            return 0
        fmt_ok = True
    ew, mw = entry.model_framework, model.model_framework
    fw_ok = False
    if ew is not None and mw is not None:
        if ew.name != mw.name or not _versions_fit(mw, ew):
            return 0
        fw_ok = True
    if not ((fmt_ok or ef is None) and (fw_ok or (ew is None and mw is None))):
        return 0
    score = 0
    if fmt_ok and ef is not None:
        score = int64(score + int64((ef.weight or 10) * priority))
    if fw_ok and ew is not None:
        score = int64(score + int64((ew.weight or 5) * priority))
    return score


def int64(value: int) -> int:
    """``value`` wrapped to a signed 64-bit integer, as OME's Go arithmetic on int64 weights
    wraps silently (weights are any int64; their products can overflow)."""
    return (value + 2**63) % 2**64 - 2**63


def format_match(spec: Compiled, model: Model) -> tuple[Entry | None, Failure | None]:
    """The first entry that matches ``model`` strictly, or the model-format failure listing why
    each entry does not (serving-runtimes.md, "Supported model formats"; model-version-matching.md,
    "Mismatch reasons"). Exactly one of the two is None. The failure depends only on what
    ``spec.format_id`` stands for and on the model."""
    mismatches: list[EntryMismatch] = []
    for entry in spec.entries:
        diffs = entry_differences(entry, model)
        if not diffs and entry.model_format is not None:
            return entry, None
        mismatches.append(EntryMismatch(entry.index, diffs))
    return None, Failure(
        Check.MODEL_FORMAT,
        messages.model_format(model.label, [m.text for m in mismatches]),
        runtime_value=f"{len(spec.entries)} supportedModelFormats entries",
        requested_value=model.label,
        entries=tuple(mismatches),
    )


def fit_model(spec: Compiled, model: Model) -> ModelFit:
    """Compute the model's fit against one runtime spec (format, size and score). A
    ``distribution: Sharded`` model scores only against entries that list the configured model
    cache provider, and none can be configured yet, so it scores 0 (ome-selection-facts.md 8.9)."""
    match, format_failure = format_match(spec, model)
    size_failure = None
    rng = spec.size_range
    if (
        model.size is not None
        and model.size_text is not None
        and rng is not None
        and outside(model.size, rng.low, rng.high)
    ):
        size_failure = Failure(
            Check.MODEL_SIZE,
            messages.model_size(model.size_text, rng.label),
            runtime_value=rng.label,
            requested_value=model.size_text,
        )
    best, best_index = 0, -1
    for entry in () if model.sharded else spec.entries:
        if entry.auto_select is False:
            continue
        score = entry_score(entry, model, entry.effective_priority)
        if score > best:
            best, best_index = score, entry.index
    return ModelFit(
        match=match,
        score=best,
        score_index=best_index,
        format_failure=format_failure,
        size_failure=size_failure,
        distance_low=rng.low if rng is not None else None,
        distance_high=rng.high if rng is not None else None,
    )


# ---- the checks, in order -------------------------------------------------------------------


def check_disabled(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """``runtime is disabled`` when ``spec.disabled`` is true."""
    if spec.disabled:
        return (Failure(Check.DISABLED, messages.RUNTIME_DISABLED, runtime_value="true", requested_value="false"),)
    return ()


def check_accelerator_class(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """The runtime must list every class the InferenceService names
    (runtime-accelerator-class-matching.md, "The matching rule"). Skipped without a request or
    without ``spec.model``; passes when no class is named."""
    if request is None or not request.required_classes:
        return ()
    if spec.class_set and request.required_classes <= spec.class_set:
        return ()
    return (
        Failure(
            Check.ACCELERATOR_CLASS,
            messages.ACCELERATOR_CLASS,
            runtime_value=messages.go_list(spec.classes),
            requested_value=messages.go_list(sorted(request.required_classes)),
        ),
    )


def check_deployment_mode(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """Engine, then decoder (only with ``spec.decoder``): rejected when both sides declare a mode
    and the modes differ (runtime-deployment-mode-matching.md, "The matching rule")."""
    if request is None:
        return ()
    out = []
    pairs = [("engine", spec.engine_mode, request.engine_mode)]
    if request.has_decoder:
        pairs.append(("decoder", spec.decoder_mode, request.decoder_mode))
    for component, runtime_mode, requested in pairs:
        if runtime_mode is not None and requested is not None and runtime_mode != requested:
            out.append(
                Failure(
                    Check.DEPLOYMENT_MODE,
                    messages.deployment_mode(component, runtime_mode, requested),
                    component=component,
                    runtime_value=runtime_mode,
                    requested_value=requested,
                )
            )
    return tuple(out)


def check_model_format(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """Some entry must match the model strictly (serving-runtimes.md, "Supported model formats")."""
    return () if fit.format_failure is None else (fit.format_failure,)


def check_model_size(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """The model's size must lie in ``modelSizeRange`` (model-size-range-matching.md)."""
    return () if fit.size_failure is None else (fit.size_failure,)


CHECKS = (check_disabled, check_accelerator_class, check_deployment_mode, check_model_format, check_model_size)


def auto_select_failure(spec: Compiled, fit: ModelFit, model: Model) -> Failure | None:
    """Why auto-selection skips a runtime that passes every check, or None for a candidate
    (reference/kubectl-ome/runtime.md, explain REASON)."""
    if not spec.any_auto_select:
        return Failure(
            Check.AUTO_SELECT,
            messages.NO_AUTO_SELECT_ENTRY,
            runtime_value="autoSelect unset or false",
            requested_value="autoSelect=true",
        )
    if fit.score > 0:
        return None
    match = fit.match
    if match is not None and match.auto_select is True:
        return Failure(
            Check.SCORE, messages.AUTO_SELECT_SCORE_ZERO, runtime_value=str(fit.score), requested_value="> 0"
        )
    format_name = (
        match.model_format.name if match is not None and match.model_format is not None else model.model_format.name
    )
    return Failure(
        Check.AUTO_SELECT,
        messages.matching_format_not_auto_select(format_name),
        runtime_value=str(fit.score),
        requested_value="> 0",
    )


def explain_columns(fit: ModelFit) -> tuple[int, int] | None:
    """PRIORITY and WEIGHT of an explain row: the first matching entry's priority (or 1) and its
    format + framework weights times the priority, leaving out weights of 0 or less."""
    entry = fit.match
    if entry is None:
        return None
    priority = entry.effective_priority
    weight = 0
    for spec in (entry.model_format, entry.model_framework):
        if spec is not None and spec.weight > 0:
            weight = int64(weight + int64(spec.weight * priority))
    return priority, weight
