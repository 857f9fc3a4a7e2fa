"""The disabled check (troubleshoot-runtime-selection.md, Step 2: ``runtime is disabled``)."""

from __future__ import annotations

from ome_selector.domain.objects import Compiled, Request
from ome_selector.rules.results import Check, Failure, ModelFit
from ome_selector.texts import messages


def check_disabled(spec: Compiled, fit: ModelFit, request: Request | None) -> tuple[Failure, ...]:
    """``runtime is disabled`` when ``spec.disabled`` is true."""
    if spec.disabled:
        return (Failure(Check.DISABLED, messages.RUNTIME_DISABLED, runtime_value="true", requested_value="false"),)
    return ()
