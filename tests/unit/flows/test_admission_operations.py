"""Admission operations: CREATE, UPDATE and DELETE, and the old object, on both webhooks
(``lifecycle.admit_inference_service``, ``runtimes.validate_serving_runtime``).

Every rule of the docs pages that depends on the operation or the old object:

* reference-a-runtime-explicitly.md, "The runtime was deleted or disabled": "the webhook rejects
  every update to the InferenceService, even a label change, unless the update names a runtime
  that exists. You can still delete the InferenceService."
* troubleshoot-runtime-selection.md, "How a selection failure shows up": "A new InferenceService
  isn't created [...]. One that already exists gets the same rejection on every update, even a
  label change, until a runtime matches or you name one."
* runtime-revisions.md, "The RuntimeDrifted condition": "While the runtime is missing or
  disabled, it rejects every update to an InferenceService that has spec.model and an engine
  section", with the quoted reason.
* base-models.md, "Disable a model": the webhook "rejects new and changed InferenceServices that
  use it, with ``model qwen2-5-7b-instruct is disabled``".
* accelerator-classes.md, "Change or delete a class", and runtime-accelerator-class-matching.md:
  "the admission webhook rejects creating or updating an enabled runtime that lists it"; "the
  webhook rejects their later updates [...] while they're enabled and still list it".
* runtime-inheritance.md, "What admission checks": "Deleting or changing a parent later can
  still break the chains below it" (the webhook does not stop it).
* ome-selection-facts.md 5.2 and 5.3: the webhooks run on create and update; the InferenceService
  one "does nothing on delete".

The one rule that reads the old object, the runtime webhook's ``scalingPolicy`` ratchet, is in
tests/test_runtime_scaling_checks.py. Every expected message is a literal from the pages.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from google.protobuf import json_format
from helpers_docs import (
    INHERITANCE_ISVC,
    LLAMA_3_2_1B_CBM,
    LLAMA_3_2_1B_ISVC,
    LLAMA_3_2_3B_CBM,
    QWEN2_5_7B_ISVC,
    QWEN2_5_7B_NO_RUNTIME_MESSAGE,
    SGLANG_CHILD,
    SGLANG_PROFILE,
    SRT_LLAMA_3_2_1B_INSTRUCT,
    accelerator_class,
    catalog,
    inference_service,
    load,
    model,
    runtime,
    troubleshoot_qwen_sources,
)
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2
from ome_selector.domain.errors import FieldViolation, RequestError
from ome_selector.rpc import lifecycle, runtimes

ISVC_WEBHOOK = "inferenceservice.ome-webhook-server.validator"
SR_WEBHOOK = "servingruntime.ome-webhook-server.validator"
CSR_WEBHOOK = "clusterservingruntime.ome-webhook-server.validator"
CREATE, UPDATE, DELETE = pb.ADMISSION_OPERATION_CREATE, pb.ADMISSION_OPERATION_UPDATE, pb.ADMISSION_OPERATION_DELETE


def doc(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


def labelled(service: Any, **labels: str) -> dict[str, Any]:
    """The InferenceService with labels added: an update that changes nothing the webhook reads."""
    out = copy.deepcopy(doc(service) if isinstance(service, str) else service)
    out["metadata"].setdefault("labels", {}).update(labels)
    return out


def admit(sources: list[Any], operation: int, new: Any = None, old: Any = None) -> pb.AdmitInferenceServiceResponse:
    request = pb.AdmitInferenceServiceRequest(operation=operation)  # type: ignore[arg-type]
    if new is not None:
        request.inference_service.CopyFrom(inference_service(new))
    if old is not None:
        request.old_inference_service.CopyFrom(inference_service(old))
    response = lifecycle.admit_inference_service(load(*sources).snapshot, request)
    assert response.webhook == ISVC_WEBHOOK
    return response


def verdict(response: pb.AdmitInferenceServiceResponse) -> tuple[bool, str, str, list[str]]:
    return response.allowed, pb.AdmissionPath.Name(response.path), response.denial_message, list(response.warnings)


def violations(error: pytest.ExceptionInfo[RequestError]) -> list[FieldViolation]:
    assert error.value.code == "INVALID_ARGUMENT"
    return error.value.violations


# ---- the InferenceService webhook: DELETE -----------------------------------------------------------------

QWEN_SOURCES = troubleshoot_qwen_sources()
QWEN_DENIAL = (
    "no supporting runtime found for model qwen2-5-7b and engine does not have complete runner configuration: "
    + QWEN2_5_7B_NO_RUNTIME_MESSAGE
)
MISSING_RUNTIME_DENIAL = (
    "runtime srt-llama-3-2-1b-instruct does not support model llama-3-2-1b-instruct: "
    "runtime srt-llama-3-2-1b-instruct not found in namespace llama-demo or at cluster scope"
)


class TestInferenceServiceDelete:
    """reference-a-runtime-explicitly.md: "You can still delete the InferenceService"; facts 5.2:
    the webhook "does nothing on delete"."""

    @pytest.mark.parametrize(
        "sources, service, path, create_denial",
        [
            pytest.param(
                [LLAMA_3_2_1B_CBM],
                LLAMA_3_2_1B_ISVC,
                "ADMISSION_PATH_NAMED_RUNTIME",
                MISSING_RUNTIME_DENIAL,
                id="runtime-deleted",
            ),
            pytest.param(
                QWEN_SOURCES, QWEN2_5_7B_ISVC, "ADMISSION_PATH_AUTO_SELECT", QWEN_DENIAL, id="no-runtime-matches"
            ),
        ],
    )
    def test_a_delete_is_allowed_where_create_and_update_are_denied(
        self, sources: list[Any], service: str, path: str, create_denial: str
    ) -> None:
        assert verdict(admit(sources, CREATE, service)) == (False, path, create_denial, [])
        assert verdict(admit(sources, UPDATE, labelled(service, team="a"), service)) == (False, path, create_denial, [])
        got = admit(sources, DELETE, old=service)
        assert verdict(got) == (True, "ADMISSION_PATH_DELETE", "", [])
        assert not got.HasField("selection")

    def test_a_delete_checks_not_even_the_name(self) -> None:
        """The name rule is the webhook's too (facts 5.2 step 1), and the webhook is not called."""
        bad = labelled(QWEN2_5_7B_ISVC)
        bad["metadata"]["name"] = "Qwen_2"
        assert admit([], CREATE, bad).denial_message == (
            'invalid InferenceService name "Qwen_2", must match "[a-z]([-a-z0-9]*[a-z0-9])?"'
        )
        assert verdict(admit([], DELETE, old=bad)) == (True, "ADMISSION_PATH_DELETE", "", [])

    def test_the_deleted_object_goes_in_the_old_object(self) -> None:
        with pytest.raises(RequestError) as error:
            admit([], DELETE, QWEN2_5_7B_ISVC)
        assert violations(error) == [
            FieldViolation("inference_service", "Forbidden: must not be set on DELETE; set old_inference_service"),
            FieldViolation("old_inference_service", "Required value"),
        ]

    def test_the_deleted_objects_namespace_is_required(self) -> None:
        service = doc(QWEN2_5_7B_ISVC)
        del service["metadata"]["namespace"]
        with pytest.raises(RequestError) as error:
            admit([], DELETE, old=service)
        assert violations(error) == [FieldViolation("old_inference_service.metadata.namespace", "Required value")]


# ---- the InferenceService webhook: UPDATE is judged as CREATE ---------------------------------------------


def pinned_isvc() -> dict[str, Any]:
    """runtime-revisions.md: the example InferenceService (runtime-inheritance.md's isvc.yaml)
    pinned to its ServingRuntime."""
    out = doc(INHERITANCE_ISVC)
    out["spec"]["runtime"].update(kind="ServingRuntime", autoSync=False)
    return out


class TestInferenceServiceUpdate:
    """An update gets the same checks as a create, on the new object: an existing InferenceService
    is not grandfathered, whatever the old object says."""

    def test_every_update_even_a_label_change_gets_the_selection_failure(self) -> None:
        """troubleshoot-runtime-selection.md, "How a selection failure shows up"."""
        assert admit(QWEN_SOURCES, CREATE, QWEN2_5_7B_ISVC).denial_message == QWEN_DENIAL
        got = admit(QWEN_SOURCES, UPDATE, labelled(QWEN2_5_7B_ISVC, team="a"), QWEN2_5_7B_ISVC)
        assert verdict(got) == (False, "ADMISSION_PATH_AUTO_SELECT", QWEN_DENIAL, [])

    def test_an_update_naming_a_runtime_gets_past_a_selection_failure(self) -> None:
        """troubleshoot-runtime-selection.md: "... until a runtime matches or you name one"."""
        named = labelled(QWEN2_5_7B_ISVC)
        named["spec"]["runtime"] = {"name": "srt-qwen2-5-7b"}
        got = admit(QWEN_SOURCES, UPDATE, named, QWEN2_5_7B_ISVC)
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])

    def test_every_update_of_a_service_whose_runtime_was_deleted_is_rejected(self) -> None:
        """reference-a-runtime-explicitly.md, "The runtime was deleted or disabled"."""
        got = admit([LLAMA_3_2_1B_CBM], UPDATE, labelled(LLAMA_3_2_1B_ISVC, team="a"), LLAMA_3_2_1B_ISVC)
        assert verdict(got) == (False, "ADMISSION_PATH_NAMED_RUNTIME", MISSING_RUNTIME_DENIAL, [])
        assert "srt-llama-3-2-1b-instruct not found in namespace llama-demo" in got.denial_message

    def test_unless_the_update_names_a_runtime_that_exists(self) -> None:
        sources = [LLAMA_3_2_1B_CBM, runtime("llama-small", namespace="llama-demo")]
        renamed = labelled(LLAMA_3_2_1B_ISVC)
        renamed["spec"]["runtime"] = {"name": "llama-small"}
        got = admit(sources, UPDATE, renamed, LLAMA_3_2_1B_ISVC)
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])
        assert got.selection.runtime.name == "llama-small"

    def test_a_pinned_service_whose_runtime_is_missing(self) -> None:
        """runtime-revisions.md: the quoted reason, on an update."""
        service = pinned_isvc()
        got = admit([LLAMA_3_2_3B_CBM], UPDATE, labelled(service, team="a"), service)
        assert verdict(got) == (
            False,
            "ADMISSION_PATH_NAMED_RUNTIME",
            "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
            "ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo",
            [],
        )

    def test_a_pinned_service_whose_runtime_is_disabled(self) -> None:
        """runtime-revisions.md: "While the runtime is missing or disabled"."""
        child = doc(SGLANG_CHILD)
        child["spec"]["disabled"] = True
        service = pinned_isvc()
        got = admit([SGLANG_PROFILE, child, LLAMA_3_2_3B_CBM], UPDATE, labelled(service, team="a"), service)
        assert got.denial_message == (
            "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
            "namespace-scoped runtime sglang-llama-3-2-3b is disabled"
        )

    def test_a_pinned_service_whose_runtime_exists_is_admitted(self) -> None:
        service = pinned_isvc()
        got = admit([SGLANG_PROFILE, SGLANG_CHILD, LLAMA_3_2_3B_CBM], UPDATE, labelled(service, team="a"), service)
        assert verdict(got) == (True, "ADMISSION_PATH_NAMED_RUNTIME", "", [])

    @pytest.mark.parametrize("operation", [CREATE, UPDATE])
    def test_new_and_changed_services_of_a_disabled_model(self, operation: int) -> None:
        """base-models.md, "Disable a model": the quoted message."""
        disabled = model("qwen2-5-7b-instruct", namespace=None, spec={"disabled": True})
        service = labelled(QWEN2_5_7B_ISVC)
        service["spec"]["model"]["name"] = "qwen2-5-7b-instruct"
        old = service if operation == UPDATE else None
        got = admit([disabled, catalog(SRT_LLAMA_3_2_1B_INSTRUCT)], operation, labelled(service, team="a"), old)
        assert verdict(got) == (False, "ADMISSION_PATH_AUTO_SELECT", "model qwen2-5-7b-instruct is disabled", [])

    def test_an_update_without_the_old_object_is_judged_the_same(self) -> None:
        got = admit(QWEN_SOURCES, UPDATE, labelled(QWEN2_5_7B_ISVC, team="a"))
        assert verdict(got) == (False, "ADMISSION_PATH_AUTO_SELECT", QWEN_DENIAL, [])

    def test_the_old_object_is_the_same_inference_service(self) -> None:
        other = labelled(QWEN2_5_7B_ISVC)
        other["metadata"].update(name="qwen-other", namespace="other")
        with pytest.raises(RequestError) as error:
            admit([], UPDATE, QWEN2_5_7B_ISVC, other)
        assert violations(error) == [
            FieldViolation(
                "old_inference_service.metadata.namespace",
                'Invalid value: "other": must equal inference_service.metadata.namespace ("demo"): an UPDATE keeps the object',
            ),
            FieldViolation(
                "old_inference_service.metadata.name",
                'Invalid value: "qwen-other": must equal inference_service.metadata.name ("qwen2-5-7b"): an UPDATE keeps the object',
            ),
        ]

    def test_an_update_needs_the_new_object(self) -> None:
        with pytest.raises(RequestError) as error:
            admit([], UPDATE, old=QWEN2_5_7B_ISVC)
        assert violations(error) == [FieldViolation("inference_service", "Required value")]


class TestCreate:
    """Unspecified is CREATE, so requests from before the field answer as they did."""

    @pytest.mark.parametrize(
        "sources, service, expected",
        [
            pytest.param(
                QWEN_SOURCES, QWEN2_5_7B_ISVC, (False, "ADMISSION_PATH_AUTO_SELECT", QWEN_DENIAL, []), id="denied"
            ),
            pytest.param(
                [catalog(SRT_LLAMA_3_2_1B_INSTRUCT), LLAMA_3_2_1B_CBM],
                LLAMA_3_2_1B_ISVC,
                (True, "ADMISSION_PATH_NAMED_RUNTIME", "", []),
                id="allowed",
            ),
        ],
    )
    def test_unspecified_is_create(self, sources: list[Any], service: str, expected: tuple[Any, ...]) -> None:
        unspecified = admit(sources, pb.ADMISSION_OPERATION_UNSPECIFIED, service)
        assert verdict(unspecified) == expected
        assert unspecified == admit(sources, CREATE, service)

    @pytest.mark.parametrize("operation", [pb.ADMISSION_OPERATION_UNSPECIFIED, CREATE])
    def test_a_create_has_no_old_object(self, operation: int) -> None:
        with pytest.raises(RequestError) as error:
            admit([], operation, QWEN2_5_7B_ISVC, QWEN2_5_7B_ISVC)
        assert violations(error) == [
            FieldViolation("old_inference_service", "Forbidden: must not be set on CREATE, only on UPDATE and DELETE")
        ]

    def test_an_operation_outside_the_enum(self) -> None:
        with pytest.raises(RequestError) as error:
            admit([], 9, QWEN2_5_7B_ISVC)
        assert violations(error) == [
            FieldViolation("operation", 'Unsupported value: 9: supported values: "CREATE", "UPDATE", "DELETE"')
        ]


# ---- the runtime webhooks ---------------------------------------------------------------------------------


def validate(
    sources: list[Any], operation: int, new: dict[str, Any] | None = None, old: dict[str, Any] | None = None
) -> pb.ValidateServingRuntimeResponse:
    request = pb.ValidateServingRuntimeRequest(operation=operation)  # type: ignore[arg-type]
    for prefix, item in (("", new), ("old_", old)):
        if item is not None:
            kind = item["kind"]
            message_type = types_pb2.ServingRuntime if kind == "ServingRuntime" else types_pb2.ClusterServingRuntime
            field = prefix + ("serving_runtime" if kind == "ServingRuntime" else "cluster_serving_runtime")
            getattr(request, field).CopyFrom(json_format.ParseDict(item, message_type(), ignore_unknown_fields=True))
    return runtimes.validate_serving_runtime(load(*sources).snapshot, request)


def runtime_verdict(response: pb.ValidateServingRuntimeResponse) -> tuple[bool, str, str, list[str]]:
    return response.allowed, response.denial_message, response.webhook, list(response.inheritance_chain)


def listing(*classes: str, disabled: bool | None = None) -> dict[str, Any]:
    """accelerator-classes.md: a ClusterServingRuntime that lists classes."""
    return runtime("srt-llama-3-3-70b-instruct", classes=list(classes), disabled=disabled)


class TestRuntimeCreateAndUpdate:
    """accelerator-classes.md, "Change or delete a class": "the admission webhook rejects creating
    or updating an enabled runtime that lists it"."""

    DENIAL = "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h200]"

    @pytest.mark.parametrize("operation", [pb.ADMISSION_OPERATION_UNSPECIFIED, CREATE, UPDATE])
    def test_an_enabled_runtime_that_lists_a_deleted_class(self, operation: int) -> None:
        stored = listing("nvidia-h100", "nvidia-h200")
        changed = copy.deepcopy(stored)
        changed["metadata"]["labels"] = {"team": "a"}
        old = stored if operation == UPDATE else None
        got = validate([accelerator_class("nvidia-h100"), stored], operation, changed, old)
        assert runtime_verdict(got) == (False, self.DENIAL, CSR_WEBHOOK, [])

    def test_an_update_that_disables_it_is_allowed(self) -> None:
        """ "... while they're enabled and still list it" (runtime-accelerator-class-matching.md)."""
        stored = listing("nvidia-h100", "nvidia-h200")
        got = validate(
            [accelerator_class("nvidia-h100")], UPDATE, listing("nvidia-h100", "nvidia-h200", disabled=True), stored
        )
        assert runtime_verdict(got) == (True, "", CSR_WEBHOOK, [])

    def test_an_update_that_removes_the_class_is_allowed(self) -> None:
        got = validate(
            [accelerator_class("nvidia-h100")], UPDATE, listing("nvidia-h100"), listing("nvidia-h100", "nvidia-h200")
        )
        assert runtime_verdict(got) == (True, "", CSR_WEBHOOK, [])

    def test_changing_a_parent_that_breaks_a_chain_below_is_allowed(self) -> None:
        """runtime-inheritance.md: "Deleting or changing a parent later can still break the chains
        below it": a parent whose own chain resolves is admitted, though its child's chain then
        exceeds five runtimes."""
        chain = [runtime("r1"), runtime("r2", inherit_from="r1"), runtime("r3", inherit_from="r2")]
        chain += [runtime("r4", inherit_from="r3"), runtime("child", inherit_from="r4"), runtime("r0")]
        got = validate(chain, UPDATE, runtime("r1", inherit_from="r0"), runtime("r1"))
        assert runtime_verdict(got) == (True, "", CSR_WEBHOOK, ["r0", "r1"])
        broken = validate([*chain[1:], runtime("r1", inherit_from="r0")], UPDATE, chain[4], chain[4])
        assert runtime_verdict(broken) == (
            False,
            "inheritance chain exceeds max depth 5 (chain: [child r4 r3 r2 r1])",
            CSR_WEBHOOK,
            [],
        )


class TestRuntimeDelete:
    """Facts 5.3: the runtime webhooks run on create and update only, so a delete is allowed with
    nothing checked; runtime-inheritance.md: deleting a parent "can still break the chains below
    it"."""

    def test_deleting_a_parent_is_allowed(self) -> None:
        profile, child = doc(SGLANG_PROFILE), doc(SGLANG_CHILD)
        assert runtime_verdict(validate([profile, child], DELETE, old=profile)) == (True, "", CSR_WEBHOOK, [])
        assert runtime_verdict(validate([profile, child], DELETE, old=child)) == (True, "", SR_WEBHOOK, [])

    def test_deleting_a_runtime_create_would_deny(self) -> None:
        stored = listing("nvidia-h200")
        assert not validate([], CREATE, stored).allowed
        assert runtime_verdict(validate([], DELETE, old=stored)) == (True, "", CSR_WEBHOOK, [])

    def test_the_deleted_runtime_goes_in_the_old_runtime(self) -> None:
        with pytest.raises(RequestError) as error:
            validate([], DELETE, listing())
        assert violations(error) == [
            FieldViolation("cluster_serving_runtime", "Forbidden: must not be set on DELETE; set old_runtime"),
            FieldViolation(
                "old_runtime", "exactly one of oldServingRuntime or oldClusterServingRuntime is required on DELETE"
            ),
        ]

    def test_the_deleted_runtimes_name_is_validated(self) -> None:
        bad = runtime("Bad_Name", namespace="llama-demo")
        with pytest.raises(RequestError) as error:
            validate([], DELETE, old=bad)
        assert [v.field for v in violations(error)] == ["old_serving_runtime.metadata.name"]


class TestRuntimeRequestShape:
    def test_an_update_keeps_the_kind(self) -> None:
        with pytest.raises(RequestError) as error:
            validate([], UPDATE, runtime("rt"), runtime("rt", namespace="llama-demo"))
        assert violations(error) == [
            FieldViolation(
                "old_serving_runtime", "Forbidden: an UPDATE keeps the kind; set old_cluster_serving_runtime"
            )
        ]

    def test_an_update_keeps_the_name(self) -> None:
        with pytest.raises(RequestError) as error:
            validate([], UPDATE, runtime("rt"), runtime("other"))
        assert violations(error) == [
            FieldViolation(
                "old_cluster_serving_runtime.metadata.name",
                'Invalid value: "other": must equal cluster_serving_runtime.metadata.name ("rt"): an UPDATE keeps the object',
            )
        ]

    @pytest.mark.parametrize("operation", [pb.ADMISSION_OPERATION_UNSPECIFIED, CREATE])
    def test_a_create_has_no_old_runtime(self, operation: int) -> None:
        with pytest.raises(RequestError) as error:
            validate([], operation, runtime("rt"), runtime("rt"))
        assert violations(error) == [
            FieldViolation(
                "old_cluster_serving_runtime", "Forbidden: must not be set on CREATE, only on UPDATE and DELETE"
            )
        ]

    @pytest.mark.parametrize("operation", [pb.ADMISSION_OPERATION_UNSPECIFIED, CREATE, UPDATE])
    def test_create_and_update_need_the_runtime(self, operation: int) -> None:
        with pytest.raises(RequestError) as error:
            validate([], operation)
        assert violations(error) == [
            FieldViolation("runtime", "exactly one of servingRuntime or clusterServingRuntime is required")
        ]

    def test_an_operation_outside_the_enum(self) -> None:
        with pytest.raises(RequestError) as error:
            validate([], -1, runtime("rt"))
        assert violations(error) == [
            FieldViolation("operation", 'Unsupported value: -1: supported values: "CREATE", "UPDATE", "DELETE"')
        ]
