"""Table cells: padding, cutting to a width, the kubectl column layout."""

from __future__ import annotations

from typing import Sequence

from ome.selector.v1 import selector_pb2

from ome_selector.cli.labels import _ACCELERATOR_SOURCE, _COMPONENT, _KIND, _MODE_SOURCE

# --- cells ---------------------------------------------------------------------------------------


def _component(config: selector_pb2.ComponentConfiguration) -> str:
    return _COMPONENT.get(config.component, "-")


def _accelerator_source(config: selector_pb2.ComponentConfiguration) -> str:
    """``Selector``, ``Policy/Cheapest``, ``NoCandidate/BestFit`` ..."""
    source = _ACCELERATOR_SOURCE.get(config.accelerator_source, "-")
    return f"{source}/{config.accelerator_policy}" if config.accelerator_policy else source


def _component_error(config: selector_pb2.ComponentConfiguration) -> str:
    return "; ".join(e for e in (config.mode_error, config.accelerator_error) if e)


def _component_cells(config: selector_pb2.ComponentConfiguration) -> tuple[str, ...]:
    """COMPONENT MODE MODE-SOURCE ACCELERATOR ACCELERATOR-SOURCE POLICY ERROR."""
    return (
        _component(config),
        config.deployment_mode or "-",
        _MODE_SOURCE.get(config.mode_source, "-"),
        config.accelerator_class or "-",
        _ACCELERATOR_SOURCE.get(config.accelerator_source, "-"),
        config.accelerator_policy or "-",
        _one_line(_component_error(config)) or "-",
    )


def _chain_refs(response: selector_pb2.GetEffectiveRuntimeResponse) -> list[str]:
    """The ROOT-FIRST rows: the chain as ``CSR/<name>`` / ``SR/<namespace>/<name>``, root first,
    ending with the runtime itself."""
    return [
        f"CSR/{ref.name}"
        if ref.kind == selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME
        else f"SR/{ref.namespace}/{ref.name}"
        for ref in response.inheritance_chain
    ]


def _yes_no(value: bool) -> str:
    return "Yes" if value else "No"


def runtime_ref(ref: selector_pb2.RuntimeRef) -> str:
    """``ClusterServingRuntime/<name>`` or ``ServingRuntime/<namespace>/<name>``."""
    kind = _KIND.get(ref.kind, "Runtime")
    return f"{kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{kind}/{ref.name}"


def primary_reason(reasons: Sequence[selector_pb2.Reason]) -> str:
    """The message of the primary reason (the first failing check); ``""`` for no reasons."""
    for reason in reasons:
        if reason.primary:
            return reason.message
    return reasons[0].message if reasons else ""


def format_size(value: float) -> str:
    """A parameter count as OME writes sizes: ``7B``, ``500M``, ``1.5T`` (``%g``; below a
    million, the number itself)."""
    for factor, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M")):
        if abs(value) >= factor:
            return f"{value / factor:g}{suffix}"
    return f"{value:g}"


def _one_line(text: str) -> str:
    return " ".join(text.split())
