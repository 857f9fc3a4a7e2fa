"""The model-format check: some supportedModelFormats entry must match the model strictly
(serving-runtimes.md, "Supported model formats"; model-version-matching.md;
diffusion-pipeline-runtime-matching.md), and ``fit_model``, a model's fit against one spec."""

from __future__ import annotations

from typing import Literal

from ome.v1beta1 import types_pb2

from ome_selector.domain.objects import Compiled, Entry, Model, Request, Spec
from ome_selector.domain.sizes import outside
from ome_selector.domain.versions import entry_accepts
from ome_selector.rules.results import Check, EntryMismatch, Failure, ModelFit
from ome_selector.rules.scoring import entry_score
from ome_selector.texts import messages

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


def _named_accepts(model: Spec, entry: Spec) -> bool:
    """``_named_difference(what, model, entry)`` is None, found without its text."""
    if model.name != entry.name:
        return False
    if model.version is not None and entry.version is not None:
        return entry_accepts(entry.parsed, entry.operator, model.parsed)
    return model.version is None and entry.version is None


def entry_matches(entry: Entry, model: Model) -> bool:
    """``entry`` matches ``model`` strictly (it has a ``modelFormat`` and ``entry_differences``
    is empty), found without the differences' texts."""
    if model.sharded or entry.model_format is None:
        return False
    if entry.pipeline is not None and pipeline_difference(model.pipeline, entry.pipeline) is not None:
        return False
    if model.architecture != entry.architecture or model.quantization != entry.quantization:
        return False  # ``_presence``: a difference unless both are the same value or both unset
    if not _named_accepts(model.model_format, entry.model_format):
        return False
    ew, mw = entry.model_framework, model.model_framework
    if ew is None or mw is None:
        return ew is None and mw is None
    return _named_accepts(mw, ew)


def format_matches(spec: Compiled, model: Model) -> bool:
    """``format_match(spec, model)`` finds an entry (no failure), found without the failure's
    texts: an answer that shows no reason needs only this."""
    return any(entry_matches(entry, model) for entry in spec.entries)


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


def check_model_format(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """Some entry must match the model strictly (serving-runtimes.md, "Supported model formats")."""
    return () if fit.format_failure is None else (fit.format_failure,)
