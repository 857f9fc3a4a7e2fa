"""Errors raised by the pure selection core (no gRPC imports).

The gRPC servicers map ``RequestError.code`` to a status code; ``violations`` become a
``google.rpc.BadRequest`` detail, one field violation each.
"""
from __future__ import annotations

from typing import NamedTuple


class FieldViolation(NamedTuple):
    """One bad field: a proto field path (e.g. ``objects[3].cluster_serving_runtime.metadata.name``)
    and what is wrong with it."""

    field: str
    description: str


class RequestError(Exception):
    """A request the service cannot answer.

    ``code`` is a gRPC status code name: ``INVALID_ARGUMENT`` (bad input; ``violations`` names
    each bad field), ``NOT_FOUND`` (unknown model or named runtime), ``UNAVAILABLE`` (cache never
    synced).
    """

    def __init__(self, code: str, message: str, violations: list[FieldViolation] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.violations = list(violations or [])

    @classmethod
    def invalid(cls, violations: list[FieldViolation]) -> "RequestError":
        """INVALID_ARGUMENT summarising every violation."""
        summary = "; ".join(f"{v.field}: {v.description}" for v in violations)
        return cls("INVALID_ARGUMENT", f"invalid request: {summary}", violations)
