"""What a selection request carries: ``select_request`` (SelectRuntime), ``explain_request``
(ExplainRuntimes), and the InferenceService and inline ``model_spec`` checks both use."""

from __future__ import annotations

from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2

from ome_selector.domain import errors
from ome_selector.domain.errors import FieldViolation
from ome_selector.texts import requests
from ome_selector.validation.bounds import validate_spec
from ome_selector.validation.names import validate_name
from ome_selector.validation.objects import isvc_spec_violations, model_spec_violations


def inference_service(isvc: types_pb2.InferenceService, base: str = "inference_service") -> list[FieldViolation]:
    """Violations of what the API server validates before OME sees an InferenceService: its
    namespace and name (when set), the ``spec.deploymentMode`` and ``acceleratorSelector.policy``
    enums (``isvc_spec_violations``, which a cached InferenceService gets too)."""
    violations = validate_name(isvc.metadata.namespace, f"{base}.metadata.namespace", "namespace")
    if isvc.metadata.name:
        violations += validate_name(isvc.metadata.name, f"{base}.metadata.name")
    return violations + isvc_spec_violations(isvc.spec, base)


def model_spec(spec: types_pb2.BaseModelSpec, path: str = "model_spec") -> list[FieldViolation]:
    """Violations of an inline ``BaseModelSpec``: the bounds (``validate_spec``), then the CRD
    enums (``model_spec_violations``), as a cached BaseModel's spec is checked."""
    return validate_spec(spec, path) + model_spec_violations(spec, path)


def select_request(request: pb.SelectRuntimeRequest) -> list[FieldViolation]:
    """Every violation of a SelectRuntimeRequest: the InferenceService (required; ``inference_service``),
    a model (required without ``spec.runtime.name``, and with ``model_spec``), ``model_spec``,
    ``candidate_limit`` (0 or more)."""
    if not request.HasField("inference_service"):
        return [FieldViolation("inference_service", errors.required())]
    limit = []
    if request.HasField("candidate_limit") and request.candidate_limit < 0:
        limit = [FieldViolation("candidate_limit", requests.CANDIDATE_LIMIT.format(limit=request.candidate_limit))]
    isvc = request.inference_service
    violations = inference_service(isvc)
    has_spec = request.HasField("model_spec")
    if not isvc.spec.model.name and (has_spec or not isvc.spec.runtime.name):
        problem = requests.REQUIRED_WITH_MODEL_SPEC if has_spec else requests.MODEL_REQUIRED
        violations.append(FieldViolation("inference_service.spec.model.name", problem))
    return violations + (model_spec(request.model_spec) if has_spec else []) + limit


def explain_request(request: pb.ExplainRuntimesRequest) -> list[FieldViolation]:
    """The violations of an ExplainRuntimesRequest, the first kind found: exactly one of ``model``
    and ``inference_service``; ``model_spec`` only with an InferenceService; then the model's
    names, or the InferenceService (``inference_service``), its model and ``model_spec``."""
    by_model = request.HasField("model")
    if by_model == request.HasField("inference_service"):
        return [FieldViolation("model", requests.MODEL_OR_ISVC)]
    if by_model:
        if request.HasField("model_spec"):
            return [FieldViolation("model_spec", requests.MODEL_SPEC_WITH_ISVC)]
        lookup = request.model
        return validate_name(lookup.namespace, "model.namespace", "namespace") + validate_name(
            lookup.name, "model.name"
        )
    isvc = request.inference_service
    has_spec = request.HasField("model_spec")
    violations = inference_service(isvc)
    if violations:
        return violations
    if not isvc.spec.model.name and not has_spec:
        return [FieldViolation("inference_service.spec.model.name", requests.no_spec_model(isvc.metadata.name))]
    return model_spec(request.model_spec) if has_spec else []
