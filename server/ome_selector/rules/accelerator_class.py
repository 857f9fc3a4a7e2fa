"""The accelerator-class check (runtime-accelerator-class-matching.md, "The matching rule")."""

from __future__ import annotations

from ome_selector.domain.objects import Compiled, Request
from ome_selector.rules.results import Check, Failure, ModelFit
from ome_selector.texts import messages


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
