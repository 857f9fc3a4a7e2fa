"""The path one request's InferenceService takes through ome_selector: ``python -m tools.trace_path
SelectRuntime`` (or ``ExplainRuntimes``, ``Reconcile``).

It loads the embedded example catalog into a ``CacheStore``, then sends the example
InferenceService ``llama-3-3-70b`` (OME auto-selects ``llama-3-3-70b-hopper``) to the method of
the in-process ``SelectionServicer`` under ``sys.setprofile``, and prints the walk.

What counts:

- A **step** is a distinct ome_selector function that is handed the request, its
  InferenceService, or a typed query or outcome holding one of them (a dataclass field, or a
  tuple item) as an argument: the walk a reader follows from the servicer's method to the
  response. A function handed only a part (a name, a metadata proto, a compiled model) works for
  the step that calls it and is not a step; the tool counts those calls apart, as ``below``.
- Never counted: generated ``*_pb2`` code, the ``texts/`` tables, dataclass-generated methods
  (``__init__`` and the like, whose code is not in a file of the package), comprehensions and
  generator expressions (part of the function they are written in), and everything done before
  the call (loading the catalog, building the snapshot and its caches).
- A **return** is a step's ``return`` event after which the walk goes down into another step:
  the walk coming back up and turning. A straight descent has none; ``decode -> run -> encode``
  has two (decode hands back the query, run hands back the outcome). Every ``return`` event of a
  step is counted too, as ``return_events`` (at least one per step call).

Output: one line per step, in the order first entered, indented by depth, then
``steps=N returns=N return_events=N below=N``. ``trace(method)`` returns the same as a ``Trace``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

import ome_selector
from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cache.manifests import load_inference_service
from ome_selector.examples import inference_service_paths
from ome_selector.rpc.servicers import SelectionServicer
from ome_selector.server.inprocess import synced_store

PACKAGE = os.path.dirname(os.path.abspath(ome_selector.__file__)) + os.sep
EXAMPLE = "llama-3-3-70b.yaml"
ISVC = "ome.v1beta1.InferenceService"
_INLINE = {"<listcomp>", "<dictcomp>", "<setcomp>", "<genexpr>"}


@dataclass
class Trace:
    """The walk of one request: ``steps`` as (depth, ``module:qualname``) in the order first
    entered; ``returns`` and ``return_events`` as defined in the module docstring; ``below``
    counts the calls of package functions that are not steps."""

    method: str
    steps: list[tuple[int, str]] = field(default_factory=list)
    returns: int = 0
    return_events: int = 0
    below: int = 0

    def names(self) -> list[str]:
        return [name for _, name in self.steps]

    def text(self) -> str:
        lines = [f"{'  ' * depth}{name}" for depth, name in self.steps]
        lines.append(
            f"{self.method}: steps={len(self.steps)} returns={self.returns}"
            f" return_events={self.return_events} below={self.below}"
        )
        return "\n".join(lines)


def _carries(value: Any, kinds: frozenset[str], depth: int = 0) -> bool:
    """Whether ``value`` is a message of ``kinds`` or a dataclass / tuple holding one."""
    if isinstance(value, Message):
        return value.DESCRIPTOR.full_name in kinds
    if depth > 1:
        return False
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return any(_carries(getattr(value, f.name), kinds, depth + 1) for f in dataclasses.fields(value))
    if isinstance(value, tuple):
        return any(_carries(item, kinds, depth + 1) for item in value)
    return False


def _name(frame: FrameType) -> str:
    code = frame.f_code
    module = code.co_filename[len(PACKAGE) :].removesuffix(".py").replace(os.sep, ".")
    return f"{module}:{code.co_qualname}"


def _counted(frame: FrameType) -> bool:
    code = frame.f_code
    path = code.co_filename
    return (
        path.startswith(PACKAGE)
        and "_pb2" not in path
        and not path[len(PACKAGE) :].startswith("texts" + os.sep)
        and code.co_name not in _INLINE
    )


def _request(method: str) -> tuple[str, Message]:
    """The servicer method and the request of ``method`` for the example InferenceService."""
    path = next(p for p in inference_service_paths() if os.path.basename(p) == EXAMPLE)
    isvc = load_inference_service(path)
    if method == "SelectRuntime":
        return method, pb.SelectRuntimeRequest(inference_service=isvc)
    if method == "ExplainRuntimes":
        return method, pb.ExplainRuntimesRequest(inference_service=isvc)
    if method == "Reconcile":
        return "ReconcileInferenceService", pb.ReconcileInferenceServiceRequest(inference_service=isvc)
    raise ValueError(f"unknown method {method!r}: SelectRuntime, ExplainRuntimes or Reconcile")


class _Context:
    """The part of ``grpc.aio.ServicerContext`` a unary method uses: a failed call raises."""

    async def abort_with_status(self, status: object) -> None:
        raise RuntimeError(f"the call failed: {status}")


def trace(method: str) -> Trace:
    """The walk of ``method``'s example request (module docstring); raises when the call fails."""
    rpc, request = _request(method)
    servicer = SelectionServicer(synced_store())
    kinds = frozenset({ISVC, request.DESCRIPTOR.full_name})
    result = Trace(method)
    seen: set[str] = set()
    stack: list[bool] = []  # per open package frame: is it a step
    pending_return = False

    def profile(frame: FrameType, event: str, arg: object) -> None:
        nonlocal pending_return
        if event not in ("call", "return") or not _counted(frame):
            return
        if event == "return":
            if stack and stack.pop():
                result.return_events += 1
                pending_return = True
            return
        args = frame.f_code.co_varnames[: frame.f_code.co_argcount + frame.f_code.co_kwonlyargcount]
        step = any(_carries(frame.f_locals.get(a), kinds) for a in args)
        stack.append(step)
        if not step:
            result.below += 1
            return
        if pending_return:
            result.returns += 1
            pending_return = False
        name = _name(frame)
        if name not in seen:
            seen.add(name)
            result.steps.append((sum(stack) - 1, name))

    async def call() -> None:
        sys.setprofile(profile)
        try:
            await getattr(servicer, rpc)(request, _Context())
        finally:
            sys.setprofile(None)

    asyncio.run(call())
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.trace_path", description=__doc__.splitlines()[0])
    parser.add_argument("method", choices=("SelectRuntime", "ExplainRuntimes", "Reconcile"))
    args = parser.parse_args(argv)
    print(trace(args.method).text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
