"""Request bytes that do not decode become INVALID_ARGUMENT, never UNKNOWN or a logged traceback.

gRPC calls a handler's ``request_deserializer`` before the servicer runs; when the generated
``Message.FromString`` raises, grpc logs a traceback and answers with a status of its own. Here:

- ``safe_deserializer(Message)`` wraps ``FromString``: a ``DecodeError`` (or any error of the
  parser) gives an ``UndecodableRequest`` marker instead of raising;
- ``guard(behavior)`` wraps a servicer method (``guard_stream`` a server-streaming one): a marker
  aborts the call with INVALID_ARGUMENT and a ``google.rpc.BadRequest`` (field ``request``)
  without calling the servicer;
- ``add_selection_service`` / ``add_cache_service`` register the servicers the way the generated
  ``add_*Servicer_to_server`` functions do, with both wrappers; every method's serializer sends
  ``bytes`` responses as they are (``passthrough``: WatchSelections' events, the answers an
  ``Rpc`` row encodes serialized).

The marker also raises ``RequestError`` (INVALID_ARGUMENT) on any attribute access, so a servicer
that receives one without ``guard`` still answers INVALID_ARGUMENT.
"""

from __future__ import annotations

import functools
from typing import Any, AsyncIterator, Awaitable, Callable, TypeVar

import grpc
from google.protobuf.message import Message
from grpc_status import rpc_status
from ome.selector.v1 import cache_pb2, selector_pb2

from ome_selector.cache.wire_objects import SplitSnapshotRequest, split_snapshot_request
from ome_selector.domain.errors import FieldViolation, RequestError

M = TypeVar("M", bound=Message)
_APPLY_SNAPSHOT = "ome.selector.v1.CacheService.ApplySnapshot"


class UndecodableRequest:
    """Marker for request bytes that do not parse as ``message_type`` (a full proto name)."""

    __slots__ = ("message_type", "size")

    def __init__(self, message_type: str, size: int) -> None:
        object.__setattr__(self, "message_type", message_type)
        object.__setattr__(self, "size", size)

    def error(self) -> RequestError:
        """The INVALID_ARGUMENT this request gets: ``request: cannot decode <type> (<n> bytes)``."""
        description = f"Invalid value: {self.size} bytes: cannot be decoded as {self.message_type}"
        return RequestError.invalid([FieldViolation("request", description)])

    def __getattr__(self, name: str) -> Any:
        raise self.error()

    def __repr__(self) -> str:
        return f"UndecodableRequest({self.message_type}, {self.size} bytes)"


def safe_deserializer(message_class: type[M]) -> Callable[[bytes], M | UndecodableRequest]:
    """``message_class.FromString`` that returns an ``UndecodableRequest`` instead of raising."""
    name = message_class.DESCRIPTOR.full_name

    def deserialize(data: bytes) -> M | UndecodableRequest:
        try:
            return message_class.FromString(data)
        except Exception:  # DecodeError, RecursionError, invalid UTF-8 ...: all the client's fault
            return UndecodableRequest(name, len(data))

    return deserialize


def snapshot_deserializer() -> Callable[
    [bytes], SplitSnapshotRequest | cache_pb2.ApplySnapshotRequest | UndecodableRequest
]:
    """ApplySnapshot's deserializer: the request split into its objects' bytes
    (``cache.wire_objects.split_snapshot_request``; the objects are decoded in the write), or,
    for a request not in the plain encoding, ``safe_deserializer``'s."""
    whole = safe_deserializer(cache_pb2.ApplySnapshotRequest)

    def deserialize(data: bytes) -> SplitSnapshotRequest | cache_pb2.ApplySnapshotRequest | UndecodableRequest:
        split = split_snapshot_request(data)
        return split if split is not None else whole(data)

    return deserialize


def guard(
    behavior: Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]],
) -> Callable[[Any, grpc.aio.ServicerContext], Awaitable[Any]]:
    """Wrap an async unary servicer method: an ``UndecodableRequest`` aborts with
    INVALID_ARGUMENT (``service.rich_status`` of ``UndecodableRequest.error()``)."""

    @functools.wraps(behavior)
    async def guarded(request: Any, context: grpc.aio.ServicerContext) -> Any:
        if isinstance(request, UndecodableRequest):
            from ome_selector.rpc.servicers import rich_status

            await context.abort_with_status(rpc_status.to_status(rich_status(request.error())))  # type: ignore[attr-defined]
            raise AssertionError("abort_with_status returned")  # pragma: no cover
        return await behavior(request, context)

    return guarded


def guard_stream(
    behavior: Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]],
) -> Callable[[Any, grpc.aio.ServicerContext], AsyncIterator[Any]]:
    """``guard`` for an async-generator (server streaming) servicer method."""

    @functools.wraps(behavior)
    async def guarded(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        if isinstance(request, UndecodableRequest):
            from ome_selector.rpc.servicers import rich_status

            await context.abort_with_status(rpc_status.to_status(rich_status(request.error())))  # type: ignore[attr-defined]
            return
        async for response in behavior(request, context):
            yield response

    return guarded


def passthrough(serialize: Callable[[Any], bytes]) -> Callable[[Any], bytes]:
    """A response serializer that sends ``bytes`` as they are (a message serialized once for
    many streams: WatchSelections' events) and serializes anything else with ``serialize``."""

    def serializer(response: Any) -> bytes:
        return response if type(response) is bytes else serialize(response)

    return serializer


def _register(
    service: Any, module: Any, servicer: Any, server: grpc.aio.Server, serializer: Callable[[Any], bytes] | None
) -> None:
    handlers = {}
    for method in service.methods:
        behavior = getattr(servicer, method.name)
        make, wrapped = (
            (grpc.unary_stream_rpc_method_handler, guard_stream(behavior))
            if method.server_streaming
            else (grpc.unary_unary_rpc_method_handler, guard(behavior))
        )
        serialize = serializer or getattr(module, method.output_type.name).SerializeToString
        handlers[method.name] = make(
            wrapped,
            request_deserializer=(
                snapshot_deserializer()
                if method.full_name == _APPLY_SNAPSHOT
                else safe_deserializer(getattr(module, method.input_type.name))
            ),
            response_serializer=passthrough(serialize),
        )
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service.full_name, handlers),))


def add_selection_service(
    servicer: Any, server: grpc.aio.Server, serializer: Callable[[Any], bytes] | None = None
) -> None:
    """Register ``ome.selector.v1.SelectionService`` with safe deserializers and ``guard``;
    ``serializer`` serialises the answers (default: each response's ``SerializeToString``)."""
    _register(selector_pb2.DESCRIPTOR.services_by_name["SelectionService"], selector_pb2, servicer, server, serializer)


def add_cache_service(servicer: Any, server: grpc.aio.Server) -> None:
    """Register ``ome.selector.v1.CacheService`` with safe deserializers and ``guard``."""
    _register(cache_pb2.DESCRIPTOR.services_by_name["CacheService"], cache_pb2, servicer, server, None)
