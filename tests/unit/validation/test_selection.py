"""The validation package is the one verdict on an input: a request field every selection RPC carries is
refused alike by each of them (design/architecture.md, "One boundary per RPC")."""

from __future__ import annotations

import grpc
import pytest
from ome.selector.v1 import selector_pb2
from ome.v1beta1 import types_pb2
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import api
from ome_selector.server.inprocess import synced_store

LONG = "1" * 5000
VIOLATION = (
    "model_spec.model_format.version",
    f'Invalid value: "{"1" * 64}…" (5000 characters): must be no more than 128 characters',
)


def _isvc() -> types_pb2.InferenceService:
    isvc = types_pb2.InferenceService()
    isvc.metadata.name, isvc.metadata.namespace = "llama", "default"
    isvc.spec.model.name = "llama-3-3-70b-instruct"
    return isvc


def _long_version_spec() -> types_pb2.BaseModelSpec:
    return types_pb2.BaseModelSpec(model_format=types_pb2.ModelFormat(name="safetensors", version=LONG))


@pytest.mark.parametrize(
    "request_",
    [
        pytest.param(
            selector_pb2.SelectRuntimeRequest(inference_service=_isvc(), model_spec=_long_version_spec()),
            id="SelectRuntime",
        ),
        pytest.param(
            selector_pb2.ExplainRuntimesRequest(inference_service=_isvc(), model_spec=_long_version_spec()),
            id="ExplainRuntimes",
        ),
    ],
)
def test_a_5000_character_model_spec_version_is_refused_by_every_rpc_that_takes_one(request_: object) -> None:
    with pytest.raises(RequestError) as caught:
        api.answer(synced_store().snapshot, request_)  # type: ignore[arg-type]
    assert caught.value.code == "INVALID_ARGUMENT"
    assert [(v.field, v.description) for v in caught.value.violations] == [VIOLATION]


def test_the_grpc_status_is_invalid_argument_for_explain_too() -> None:
    from ome.selector.v1 import selector_pb2_grpc
    from ome_selector.server.inprocess import InProcessServer

    with InProcessServer(synced_store()) as server, grpc.insecure_channel(server.address) as channel:
        stub = selector_pb2_grpc.SelectionServiceStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.ExplainRuntimes(
                selector_pb2.ExplainRuntimesRequest(inference_service=_isvc(), model_spec=_long_version_spec())
            )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
