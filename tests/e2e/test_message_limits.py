"""The server's request limits on 127.0.0.1 and a unix socket: the listener that carries
CacheService takes requests up to 256 MiB (an ApplySnapshot of 50,000 of OME's catalog
runtimes is about 77 MiB), a listener without it 64 MiB, and the Python client sends that much.

The large requests are valid requests followed by an unknown field of padding (the parser keeps
it and the service ignores it), so the test needs the bytes but not 50,000 objects."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import grpc
import pytest
from conftest import ServerProcess
from ome.selector.v1 import cache_pb2, selector_pb2
from ome_selector_client.client import CHANNEL_OPTIONS

Start = Callable[..., ServerProcess]
MIB = 1024 * 1024
APPLY = "/ome.selector.v1.CacheService/ApplySnapshot"
STATUS = "/ome.selector.v1.CacheService/GetCacheStatus"
SELECT = "/ome.selector.v1.SelectionService/SelectRuntime"


def _padded(message: bytes, size: int) -> bytes:
    """``message`` and an unknown length-delimited field 1000, ``size`` bytes in all."""
    tag = bytes([(1000 << 3 | 2) & 0x7F | 0x80, (1000 << 3 | 2) >> 7])
    for length_bytes in range(1, 6):
        payload = size - len(message) - len(tag) - length_bytes
        length = bytearray()
        value = payload
        while True:
            length.append(value & 0x7F | (0x80 if value > 0x7F else 0))
            value >>= 7
            if not value:
                break
        if len(length) == length_bytes:
            return message + tag + bytes(length) + b"\0" * payload
    raise AssertionError(size)


def _snapshot(version: str, size: int) -> bytes:
    model = cache_pb2.CacheObject()
    model.cluster_base_model.metadata.name = "padded-model"
    model.cluster_base_model.spec.model_format.name = "safetensors"
    request = cache_pb2.ApplySnapshotRequest(version=version, objects=[model])
    return _padded(request.SerializeToString(), size)


def _call(address: str, method: str, data: bytes) -> bytes:
    with grpc.insecure_channel(address, options=CHANNEL_OPTIONS) as channel:
        return channel.unary_unary(method, request_serializer=None, response_deserializer=None)(data, timeout=60)


def _version(address: str) -> str:
    raw = _call(address, STATUS, cache_pb2.GetCacheStatusRequest().SerializeToString())
    return cache_pb2.GetCacheStatusResponse.FromString(raw).status.version


def test_padding_makes_a_request_of_the_size_asked() -> None:
    data = _snapshot("v", 65 * MIB)
    assert len(data) == 65 * MIB
    decoded = cache_pb2.ApplySnapshotRequest.FromString(data)
    assert (decoded.version, [o.cluster_base_model.metadata.name for o in decoded.objects]) == ("v", ["padded-model"])


def test_one_listener_takes_a_snapshot_over_64_mib(running_server: Start) -> None:
    server = running_server()
    _call(server.address, APPLY, _snapshot("over-64-mib", 65 * MIB))
    assert _version(server.address) == "over-64-mib"


def test_the_cache_listener_takes_256_mib_and_the_api_listener_64(running_server: Start, tmp_path: Path) -> None:
    socket = f"unix:{tmp_path / 'cache.sock'}"
    server = running_server(extra_args=["--cache-listen", socket])
    server.wait_for_line(r"CacheService on \S+ \(only there\)")
    _call(socket, APPLY, _snapshot("over-64-mib", 65 * MIB))
    assert _version(socket) == "over-64-mib"

    select = selector_pb2.SelectRuntimeRequest()
    select.inference_service.metadata.name = "padded"
    select.inference_service.metadata.namespace = "default"
    with pytest.raises(grpc.RpcError) as refused:
        _call(server.address, SELECT, _padded(select.SerializeToString(), 65 * MIB))
    assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "Received message larger than max" in (refused.value.details() or "")
