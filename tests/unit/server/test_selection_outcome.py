"""The ``outcome`` label of ``ome_selector_selections_total`` for answers given as messages and
as their bytes (a kept BASIC answer comes serialized: ``rpc.selection.encode_select``)."""

from __future__ import annotations

from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from ome.selector.v1 import selector_pb2
from ome_selector.cache.store import CacheStore
from ome_selector.rpc import selection as rpc_selection
from ome_selector.server.metrics import selection_outcome


def test_a_serialized_answer_counts_as_the_answer_it_holds() -> None:
    fits = entry(format={"name": "safetensors", "version": "1.0.0"}, priority=2)
    store = CacheStore()  # 40 runtimes: the answer is kept, and given serialized
    docs = [runtime(f"rt-{i}", fits, created="2025-01-01T00:00:00Z") for i in range(40)]
    store.apply_snapshot("v1", objects(*docs, model("m", namespace=None, format=("safetensors", "1.0.0"))))
    asked = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc("m", namespace="team-a")))
    answer = rpc_selection.select_runtime(store.snapshot, asked, True)
    assert isinstance(answer, bytes)
    assert selection_outcome(answer, "OK") == "auto_selected"
    assert selection_outcome(selector_pb2.SelectRuntimeResponse.FromString(answer), "OK") == "auto_selected"
    assert selection_outcome(selector_pb2.SelectRuntimeResponse(no_runtime_message="x"), "OK") == "no_runtime_found"
    assert selection_outcome(None, "INVALID_ARGUMENT") == "error"
