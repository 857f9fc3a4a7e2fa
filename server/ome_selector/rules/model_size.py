"""The model-size check (model-size-range-matching.md): the model's size lies in ``modelSizeRange``."""

from __future__ import annotations

from ome_selector.domain.objects import Compiled, Request
from ome_selector.rules.results import Failure, ModelFit


def check_model_size(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """The model's size must lie in ``modelSizeRange`` (model-size-range-matching.md)."""
    return () if fit.size_failure is None else (fit.size_failure,)
