"""Kubernetes' own rules for names, namespaces, label and annotation keys and values, and
metadata (k8s.io/apimachinery ``pkg/util/validation``, ``pkg/api/validation``), with the API
server's texts; the limits every check uses (``MAX_*``; the package docstring lists them)."""

from __future__ import annotations

import re

from google.protobuf.message import Message

from ome_selector.domain import errors
from ome_selector.domain.errors import FieldViolation
from ome_selector.domain.versions import MAX_VERSION_LENGTH

MAX_NAME_LENGTH = 253
MAX_NAMESPACE_LENGTH = 63
MAX_LABEL_VALUE_LENGTH = 63
MAX_ANNOTATIONS_BYTES = 256 * 1024
MAX_OBJECT_BYTES = 1536 * 1024
MAX_LIST_ITEMS = 1024
MAX_FILE_BYTES = 64 * 1024 * 1024
# Violations reported for one object at most (the rest are not looked for).
MAX_VIOLATIONS_PER_OBJECT = 16

_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?\Z")
_QUALIFIED_NAME = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]\Z")

SUBDOMAIN_RULE = (
    "a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_RULE = (
    "a lowercase RFC 1123 label must consist of lowercase alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
QUALIFIED_NAME_RULE = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character, with an optional DNS subdomain prefix and '/'"
)
LABEL_VALUE_RULE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)


def _dns_problem(value: str, limit: int, pattern: re.Pattern[str], rule: str) -> str:
    """What is wrong with ``value`` as a DNS-1123 name of at most ``limit`` characters, as
    Kubernetes' ``IsDNS1123*`` says it (``must be no more than 253 characters``, or the rule;
    an empty value breaks the rule); ``""`` when nothing is."""
    if len(value) > limit:
        return f"must be no more than {limit} characters"
    return "" if pattern.match(value) else rule


def _dns(value: str, path: str, limit: int, pattern: re.Pattern[str], rule: str) -> list[FieldViolation]:
    """Violations of a required DNS-1123 name of at most ``limit`` characters."""
    if not value:
        return [FieldViolation(path, errors.required())]
    problem = _dns_problem(value, limit, pattern, rule)
    return [FieldViolation(path, errors.invalid_value(value, problem))] if problem else []


def name_problem(value: str) -> str:
    """What is wrong with ``value`` as an object name (a DNS-1123 subdomain of at most
    ``MAX_NAME_LENGTH`` characters): ``must be no more than 253 characters`` or
    ``SUBDOMAIN_RULE`` (also for ``""``); ``""`` for a valid name."""
    return _dns_problem(value, MAX_NAME_LENGTH, _SUBDOMAIN, SUBDOMAIN_RULE)


def subdomain(value: str, path: str) -> list[FieldViolation]:
    """Violations of a required DNS-1123 subdomain (an object name, at most 253 characters)."""
    return _dns(value, path, MAX_NAME_LENGTH, _SUBDOMAIN, SUBDOMAIN_RULE)


def label(value: str, path: str) -> list[FieldViolation]:
    """Violations of a required DNS-1123 label (a namespace, at most 63 characters)."""
    return _dns(value, path, MAX_NAMESPACE_LENGTH, _LABEL, LABEL_RULE)


def qualified_name(key: str, path: str) -> list[FieldViolation]:
    """Violations of a label or annotation key: ``[prefix/]name`` (prefix a DNS-1123
    subdomain of at most 253 characters, name at most 63)."""
    prefix, slash, name = key.rpartition("/")
    if slash and not prefix:
        return [FieldViolation(path, errors.invalid_value(key, "prefix part must be non-empty"))]
    if slash:
        if len(prefix) > MAX_NAME_LENGTH:
            return [
                FieldViolation(
                    path, errors.invalid_value(key, f"prefix part must be no more than {MAX_NAME_LENGTH} characters")
                )
            ]
        if not _SUBDOMAIN.match(prefix):
            return [FieldViolation(path, errors.invalid_value(key, "prefix part " + SUBDOMAIN_RULE))]
    if not name:
        return [FieldViolation(path, errors.invalid_value(key, "name part must be non-empty"))]
    if len(name) > MAX_LABEL_VALUE_LENGTH:
        return [
            FieldViolation(
                path, errors.invalid_value(key, f"name part must be no more than {MAX_LABEL_VALUE_LENGTH} characters")
            )
        ]
    if not _QUALIFIED_NAME.match(name):
        return [FieldViolation(path, errors.invalid_value(key, QUALIFIED_NAME_RULE))]
    return []


def metadata(meta: Message, path: str) -> list[FieldViolation]:
    """Violations of ``labels`` and ``annotations`` under ``path`` (an ObjectMeta)."""
    out: list[FieldViolation] = []
    labels, annotations = meta.labels, meta.annotations  # type: ignore[attr-defined]
    if not labels and not annotations:
        return out
    for key in sorted(labels):
        out += qualified_name(key, f"{path}.labels")
        value = labels[key]
        if len(value) > MAX_LABEL_VALUE_LENGTH:
            out.append(FieldViolation(f"{path}.labels", errors.too_long_value(value, MAX_LABEL_VALUE_LENGTH)))
        elif value and not _QUALIFIED_NAME.match(value):
            out.append(FieldViolation(f"{path}.labels", errors.invalid_value(value, LABEL_VALUE_RULE)))
        if len(out) >= MAX_VIOLATIONS_PER_OBJECT:
            return out
    total = 0
    for key in sorted(annotations):
        out += qualified_name(key, f"{path}.annotations")
        total += len(key.encode("utf-8", "surrogatepass")) + len(annotations[key].encode("utf-8", "surrogatepass"))
        if len(out) >= MAX_VIOLATIONS_PER_OBJECT:
            return out
    if total > MAX_ANNOTATIONS_BYTES:
        out.append(FieldViolation(f"{path}.annotations", errors.too_long_bytes(MAX_ANNOTATIONS_BYTES)))
    return out


MAX_CACHE_VERSION_LENGTH = 253


def cache_version(value: str, path: str) -> list[FieldViolation]:
    """A cache (snapshot) version longer than 253 characters or with control characters (it is
    echoed in every answer and written to the log)."""
    if len(value) > MAX_CACHE_VERSION_LENGTH:
        return [FieldViolation(path, errors.too_long_value(value, MAX_CACHE_VERSION_LENGTH))]
    if not value.isprintable():
        return [FieldViolation(path, errors.invalid_value(value, "must not contain control characters"))]
    return []


def version(value: str, path: str) -> FieldViolation:
    """The violation of a version longer than ``MAX_VERSION_LENGTH`` characters (the caller
    checks the length, so a path is formatted only for what is reported)."""
    return FieldViolation(path, errors.too_long_value(value, MAX_VERSION_LENGTH))


def items(count: int, path: str) -> FieldViolation:
    """The violation of a list or map of ``count`` items, more than ``MAX_LIST_ITEMS`` (the
    caller checks the count)."""
    return FieldViolation(path, errors.too_many(count, MAX_LIST_ITEMS))


def validate_name(value: str, path: str, what: str = "name") -> list[FieldViolation]:
    """Violations for a Kubernetes object name (DNS-1123 subdomain, at most 253 characters), or
    for a namespace when ``what`` is ``namespace`` (DNS-1123 label, at most 63 characters).

    Texts are the API server's (``Required value``; ``Invalid value: "aaaa…" (20000 characters):
    must be no more than 63 characters``; ``Invalid value: "Bad_Name": a lowercase RFC 1123
    subdomain must ...``), the value cut to ``errors.VALUE_PREVIEW`` characters; see py.
    """
    if what == "namespace":
        return label(value, path)
    if len(value) <= MAX_NAME_LENGTH and _SUBDOMAIN.match(value):
        return []  # the common case, without the calls that word a violation
    return subdomain(value, path)
