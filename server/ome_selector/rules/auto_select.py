"""Why auto-selection skips a runtime that passes every check (reference/kubectl-ome/runtime.md,
explain REASON)."""

from __future__ import annotations

from ome_selector.domain.objects import Compiled, Model
from ome_selector.rules.results import Check, Failure, ModelFit
from ome_selector.texts import messages


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
