"""``serve --max-message-bytes`` over gRPC on OME's catalog: the default caps the ``no runtime
found`` message at 8 KiB, ``0`` gives OME's whole text, and the environment variable works too."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from conftest import CATALOG_RUNTIMES, OME_CLUSTER, ServerProcess
from helpers_docs import inference_service, isvc
from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from ome_selector_client import SelectorClient

# afm-4-5b-base (ome-cluster): an ArceeForCausalLM model that no catalog runtime serves.
HEAD = (
    "no runtime found to support model safetensors with format safetensors in namespace default. "
    "Checked 206 runtimes (0 namespace-scoped, 206 cluster-scoped). Excluded runtimes: "
)


def _message(server: ServerProcess, model_name: str) -> str:
    with SelectorClient(server.address) as client:
        response = client.select_runtime(inference_service(isvc(model_name, namespace="default")))
    assert not response.HasField("selection")
    return response.no_runtime_message


@pytest.mark.parametrize(
    "extra, environ, capped",
    [([], {}, True), (["--max-message-bytes", "0"], {}, False), ([], {"OME_SELECTOR_MAX_MESSAGE_BYTES": "0"}, False)],
)
def test_the_cap_over_grpc(
    running_server: Callable[..., ServerProcess],
    monkeypatch: pytest.MonkeyPatch,
    extra: list[str],
    environ: dict[str, str],
    capped: bool,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    server = running_server(manifests=[CATALOG_RUNTIMES, OME_CLUSTER], extra_args=extra)
    text = _message(server, "afm-4-5b-base")
    assert text.startswith(HEAD)
    if capped:
        assert len(text.encode()) <= 8192
        assert text.endswith("… and 176 more: 176 model format; ExplainRuntimes lists each")
    else:
        assert len(text.encode()) == 55233
        store = CacheStore(max_message_bytes=0)
        store.apply_snapshot("v1", load_manifests([str(CATALOG_RUNTIMES), str(OME_CLUSTER)]).objects)
        mdl = store.snapshot.cluster_models["afm-4-5b-base"]
        assert text == engine.exhaustive_auto_select(store.snapshot, mdl, None, "default")[2]
    assert os.environ.get("OME_SELECTOR_MAX_MESSAGE_BYTES") == environ.get("OME_SELECTOR_MAX_MESSAGE_BYTES")
