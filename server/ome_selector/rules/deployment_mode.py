"""The deployment-mode check, engine then decoder (runtime-deployment-mode-matching.md, "The
matching rule")."""

from __future__ import annotations

from ome_selector.domain.objects import Compiled, Request
from ome_selector.rules.results import Check, Failure, ModelFit
from ome_selector.texts import messages


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
