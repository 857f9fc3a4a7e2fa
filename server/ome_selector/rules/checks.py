"""The selection checks, one function each, in the documented order.

Order (troubleshoot-runtime-selection.md, Step 2 table): disabled -> accelerator class ->
deployment mode (engine, then decoder) -> model format -> model size. Each check takes the
compiled runtime spec, the model's fit against it and the request, and returns the failures it
finds (an empty tuple when it passes). ``CHECKS`` is the canonical order; the first failure is
the one OME reports (the primary reason)."""

from __future__ import annotations

from ome_selector.rules.accelerator_class import check_accelerator_class
from ome_selector.rules.deployment_mode import check_deployment_mode
from ome_selector.rules.disabled import check_disabled
from ome_selector.rules.model_format import check_model_format
from ome_selector.rules.model_size import check_model_size

CHECKS = (check_disabled, check_accelerator_class, check_deployment_mode, check_model_format, check_model_size)
# The checks that read the request and the spec's ``disabled``, ``classes`` and declared modes,
# never the model's fit; the rest read the fit only. ``REQUEST_SIDE + MODEL_SIDE == CHECKS``.
REQUEST_SIDE = CHECKS[:3]
MODEL_SIDE = CHECKS[3:]
