"""One manifest file's text -> documents -> proto objects, each field checked against the proto
and the CRD (``crdfields``), with the problems a user reads."""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Iterator, NamedTuple

import yaml
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from ome.selector.v1 import cache_pb2
from ome.v1beta1 import types_pb2

from ome_selector import validation as bounds
from ome_selector.cache import crdfields
from ome_selector.cache.manifest_types import (
    _CACHE_KINDS,
    _LIST_KINDS,
    _QUANTITY_PATHS,
    MAX_DOCUMENT_VALUES,
    Problem,
    Rejection,
    _api_version,
    _Document,
    _FileResult,
    _short,
)
from ome_selector.cache.yamlload import KubernetesLoader
from ome_selector.domain import errors
from ome_selector.texts import fieldpaths

# --- documents ---------------------------------------------------------------------------------


class _Broken(NamedTuple):
    """A document that is not YAML (or not loadable): why."""

    reason: str


_SEPARATOR = re.compile(r"^---(?=[ \t\r]|$)", re.M)
_MEANINGLESS = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\r?\n?|%[^\n]*\n?)*\Z")


_UNDECODED = re.compile("[\udc80-\udcff]")


def _documents(text: str) -> Iterator[tuple[int, Any]]:
    """(index, document or ``_Broken``) of each YAML document, one at a time. After a YAML error
    (or in a text with bytes that are not UTF-8) the text is split at its ``---`` lines and each
    piece parsed alone, so one broken document costs only itself."""
    done = 0
    if not _UNDECODED.search(text):
        try:
            for doc in yaml.load_all(text, Loader=KubernetesLoader):
                yield done, doc
                done += 1
            return
        except yaml.YAMLError:
            pass
        except (RecursionError, ValueError, TypeError, OverflowError, MemoryError):
            pass
    for index, doc in _documents_one_by_one(text):
        if index >= done:
            yield index, doc


def _not_utf8(piece: str, first_line: int) -> _Broken | None:
    """Why ``piece`` (starting at 0-based line ``first_line``) cannot be read, when it holds a
    byte that is not UTF-8: ``cannot read: not UTF-8: byte 0xff (line L, column C)``."""
    found = _UNDECODED.search(piece)
    if found is None:
        return None
    line = first_line + piece.count("\n", 0, found.start()) + 1
    column = found.start() - (piece.rfind("\n", 0, found.start()) + 1) + 1
    byte = ord(found.group()) - 0xDC00
    return _Broken(f"cannot read: not UTF-8: byte 0x{byte:02x} (line {line}, column {column})")


def _documents_one_by_one(text: str) -> Iterator[tuple[int, Any]]:
    starts = [m.start() for m in _SEPARATOR.finditer(text)]
    pieces: list[tuple[int, str]] = []  # (first line, text)
    head = text[: starts[0]] if starts else text
    if not starts or not _MEANINGLESS.match(head):
        pieces.append((0, head))
    for i, start in enumerate(starts):
        pieces.append((text.count("\n", 0, start), text[start : starts[i + 1] if i + 1 < len(starts) else len(text)]))
    index = 0
    for first_line, piece in pieces:
        broken = _not_utf8(piece, first_line)
        if broken is not None:
            yield index, broken
            index += 1
            continue
        try:
            found = list(yaml.load_all(piece, Loader=KubernetesLoader))
        except yaml.YAMLError as exc:
            yield index, _Broken(f"invalid YAML: {yaml_problem(exc, first_line)}")
            index += 1
            continue
        except (RecursionError, ValueError, TypeError, OverflowError, MemoryError) as exc:
            yield index, _Broken(f"invalid YAML: {errors.bound(errors.printable(str(exc)), 256)}")
            index += 1
            continue
        for doc in found or [None]:
            yield index, doc
            index += 1


def _parse_text(
    file: str, text: str, *, raw_kinds: frozenset[str] = frozenset(), budget: int | None = None, limit: int = 0
) -> _FileResult:
    """The documents of ``text``; past ``budget`` objects (List items included) it stops and
    sets ``over_limit`` (``limit`` is the load's bound, for the message)."""
    out = _FileResult(raw_kinds=raw_kinds, budget=budget)
    for index, doc in _documents(text):
        try:
            _parse_document(file, index, None, doc, out)
        except Exception as exc:  # a bug must cost one document, not the file or the server
            reason = f"cannot load: unexpected {type(exc).__name__}: {errors.bound(errors.printable(str(exc)), 256)}"
            out.rejected.append(Rejection(file, index, None, "", "", (Problem("", reason),)))
        if budget is not None and len(out.documents) > budget:
            out.over_limit = (
                f"{errors.printable(file)}: document {index}: more than {limit} objects in one load (--max-objects); "
                "the load is refused"
            )
            break
    return out


def yaml_problem(exc: yaml.YAMLError, first_line: int = 0) -> str:
    """A YAML error as `<problem> (line L, column C)`; ``first_line`` is the 0-based line of the
    file where the parsed text starts."""
    if isinstance(exc, yaml.MarkedYAMLError) and exc.problem:
        where = ""
        if exc.problem_mark is not None:
            where = f" (line {exc.problem_mark.line + first_line + 1}, column {exc.problem_mark.column + 1})"
        context = f"{exc.context}: " if exc.context else ""
        return errors.bound(errors.printable(f"{context}{exc.problem}{where}"), 512)
    return errors.bound(errors.printable(" ".join(str(exc).split())), 512)


def _text_of(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _parse_document(file: str, index: int, item: int | None, doc: Any, out: _FileResult) -> None:
    def reject(kind: str, name: str, *problems: Problem) -> None:
        out.rejected.append(Rejection(file, index, item, kind, name, tuple(problems)))

    if doc is None:
        return
    if isinstance(doc, _Broken):
        reject("", "", Problem("", doc.reason))
        return
    if not isinstance(doc, dict):
        reject("", "", Problem("", f"expected a mapping (a Kubernetes object), got {_yaml_type(doc)}"))
        return
    api_version, kind = doc.get("apiVersion"), doc.get("kind")
    metadata = doc.get("metadata")
    name = _text_of(metadata.get("name")) if isinstance(metadata, dict) else ""
    for key, value in (("apiVersion", api_version), ("kind", kind)):
        if value is not None and not isinstance(value, str):
            reject("", name, Problem(key, errors.invalid_value(_yaml_text(value), "must be of type string")))
            return
    where = f"{errors.printable(file)}: document {index}" + (f", items[{item}]" if item is not None else "")
    if item is None and (
        (kind == "List" and api_version == "v1")
        or (kind in _LIST_KINDS and api_version == _api_version(_LIST_KINDS[kind]))  # type: ignore[index]
    ):
        items = doc.get("items")
        if items is None:
            return
        if not isinstance(items, list):
            reject(kind, name, Problem("items", errors.invalid_value(_yaml_text(items), "must be of type array")))
            return
        for j, entry in enumerate(items):
            _parse_document(file, index, j, entry, out)
        return
    if kind not in _CACHE_KINDS or api_version != _api_version(kind):
        out.skipped.append(
            f"{where}: skipped {_short(kind or '<no kind>')} {_short(name)} "
            f"(apiVersion {_short(api_version or '<none>')})"
        )
        return
    assert isinstance(kind, str)
    for quantity in _QUANTITY_PATHS.get(kind, ()):
        _coerce_quantity(doc, quantity)
    message = _CACHE_KINDS[kind][0]()
    unknown: list[str] = []
    problems = _convert(doc, message, unknown)
    for path in unknown:
        out.warnings.append(f'{where}: {kind} {_short(name)}: unknown field "{_short(path, 256)}"')
    if problems:
        reject(kind, name, *problems)
        return
    if kind in out.raw_kinds:
        namespace = message.metadata.namespace  # type: ignore[attr-defined]
        out.documents.append(_Document(index, (kind, namespace, message.metadata.name), message))  # type: ignore[attr-defined]
        return
    oneof_field = _CACHE_KINDS[kind][1]
    obj = cache_pb2.CacheObject()
    getattr(obj, oneof_field).CopyFrom(message)
    violations = bounds.validate_object(obj)
    if violations:
        root = message.DESCRIPTOR
        reject(
            kind,
            name,
            *(
                Problem(_object_path(v.field, oneof_field, root), fieldpaths.present_violation(v).description)
                for v in violations
            ),
        )
        return
    out.documents.append(_Document(index, bounds.object_key(obj), obj))


def _object_path(path: str, oneof_field: str, root: Any) -> str:
    """``cluster_serving_runtime.metadata.name`` -> ``metadata.name`` (camelCase, under the object)."""
    relative = path[len(oneof_field) + 1 :] if path.startswith(oneof_field + ".") else path
    return errors.printable(fieldpaths.json_path(relative, root))


def _convert(doc: dict[str, Any], message: Message, unknown: list[str]) -> list[Problem]:
    """Check ``doc``'s types against ``message``'s fields (unknown field paths appended to
    ``unknown``), then parse it into ``message``; the problems that stop it."""
    problems: list[Problem] = []
    budget = [MAX_DOCUMENT_VALUES]
    _check_message(doc, message.DESCRIPTOR, "", problems, unknown, budget)
    if problems:
        return problems[: bounds.MAX_VIOLATIONS_PER_OBJECT]
    try:
        json_format.ParseDict(doc, message, ignore_unknown_fields=True, max_recursion_depth=64)
    except (json_format.ParseError, TypeError, ValueError, OverflowError, RecursionError) as exc:
        problem = parse_problem(exc)
        field_path, _, reason = (
            problem.partition(": ") if ": " in problem and not problem.startswith(" ") else ("", "", problem)
        )
        if not reason:
            field_path, reason = "", problem
        return [
            Problem(
                errors.printable(field_path), errors.bound(errors.printable(reason), fieldpaths.MAX_DESCRIPTION_BYTES)
            )
        ]
    return []


_TOP_LEVEL = frozenset({"apiVersion", "kind", "metadata", "spec", "status"})
_INT_TYPES = frozenset(
    {
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED32,
        FieldDescriptor.TYPE_SFIXED64,
    }
)
_INT_RANGES = {
    FieldDescriptor.TYPE_INT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SINT32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_SFIXED32: (-(2**31), 2**31 - 1),
    FieldDescriptor.TYPE_UINT32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_FIXED32: (0, 2**32 - 1),
    FieldDescriptor.TYPE_UINT64: (0, 2**64 - 1),
    FieldDescriptor.TYPE_FIXED64: (0, 2**64 - 1),
}
_INT64 = (-(2**63), 2**63 - 1)


def _join(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def _spent(path: str, problems: list[Problem], budget: list[int]) -> bool:
    """Count one value against the document's budget; True when the walk must stop (the budget
    is spent, reported once, or the object has as many problems as are reported)."""
    budget[0] -= 1
    if budget[0] < 0 or len(problems) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
        if budget[0] == -1:
            problems.append(
                Problem(path, f"Too long: more than {MAX_DOCUMENT_VALUES} values (after expanding YAML aliases)")
            )
        return True
    return False


def _check_struct(node: Any, path: str, problems: list[Problem], budget: list[int]) -> None:
    """A ``google.protobuf.Struct`` field: a JSON object passed through as written, any JSON
    inside with string keys. Walked with a stack (nothing bounds its depth before protobuf's
    parser does); every value counts against the budget."""
    if not isinstance(node, dict):
        problems.append(Problem(path, errors.invalid_value(_yaml_text(node), "must be of type object")))
        return
    stack: list[tuple[Any, str]] = [(node, path)]
    while stack:
        value, where = stack.pop()
        if _spent(where, problems, budget):
            return
        if isinstance(value, dict):
            for key, item in value.items():
                if not isinstance(key, str):
                    problems.append(
                        Problem(where, errors.invalid_value(_yaml_text(key), "field names must be of type string"))
                    )
                else:
                    stack.append((item, _join(where, key)))
        elif isinstance(value, list):
            stack += [(item, f"{where}[{i}]") for i, item in enumerate(value)]


def _check_message(
    node: Any, descriptor: Any, path: str, problems: list[Problem], unknown: list[str], budget: list[int]
) -> None:
    if _spent(path, problems, budget):
        return
    if not isinstance(node, dict):
        problems.append(Problem(path, errors.invalid_value(_yaml_text(node), "must be of type object")))
        return
    extra = crdfields.UNMODELLED.get(descriptor.full_name, frozenset())
    if descriptor.full_name == types_pb2.ObjectMeta.DESCRIPTOR.full_name:
        extra = crdfields.OBJECT_META
    top = not path
    for key, value in node.items():
        if not isinstance(key, str):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(key), "field names must be of type string")))
            continue
        fd = descriptor.fields_by_name.get(key) or _by_json_name(descriptor).get(key)
        sub = _join(path, key)
        if fd is None:
            if key not in extra and not (top and key in _TOP_LEVEL):
                if len(unknown) < bounds.MAX_VIOLATIONS_PER_OBJECT:
                    unknown.append(sub)
            continue
        if value is None:
            continue  # null is "not set", as the API server reads it
        _check_field(value, fd, sub, problems, unknown, budget)


_JSON_NAMES: dict[str, dict[str, FieldDescriptor]] = {}


def _by_json_name(descriptor: Any) -> dict[str, FieldDescriptor]:
    names = _JSON_NAMES.get(descriptor.full_name)
    if names is None:
        names = _JSON_NAMES[descriptor.full_name] = {f.json_name: f for f in descriptor.fields}
    return names


def _check_field(
    value: Any, fd: FieldDescriptor, path: str, problems: list[Problem], unknown: list[str], budget: list[int]
) -> None:
    message_type = fd.message_type
    if message_type is not None and message_type.GetOptions().map_entry:
        if not isinstance(value, dict):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type object")))
            return
        value_fd = message_type.fields_by_name["value"]
        for key, item in value.items():
            budget[0] -= 1
            if not isinstance(key, str):
                problems.append(Problem(path, errors.invalid_value(_yaml_text(key), "keys must be of type string")))
            elif item is not None:
                _check_field(item, value_fd, f"{path}[{key}]", problems, unknown, budget)
            if budget[0] < 0 or len(problems) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
                return
        return
    if fd.is_repeated:
        if not isinstance(value, list):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type array")))
            return
        for i, item in enumerate(value):
            if budget[0] < 0 or len(problems) >= bounds.MAX_VIOLATIONS_PER_OBJECT:
                return
            _check_single(item, fd, f"{path}[{i}]", problems, unknown, budget)
        return
    _check_single(value, fd, path, problems, unknown, budget)


def _check_single(
    value: Any, fd: FieldDescriptor, path: str, problems: list[Problem], unknown: list[str], budget: list[int]
) -> None:
    budget[0] -= 1
    message_type = fd.message_type
    if message_type is not None:
        if message_type.full_name == "google.protobuf.Struct":
            _check_struct(value, path, problems, budget)
            return
        if message_type.full_name == "google.protobuf.Value":  # x-kubernetes-int-or-string
            if isinstance(value, bool) or not isinstance(value, (int, float, str)):
                problems.append(
                    Problem(path, errors.invalid_value(_yaml_text(value), "must be of type integer or string"))
                )
            return
        if message_type.full_name == "google.protobuf.Timestamp":
            if not isinstance(value, str):
                problems.append(
                    Problem(
                        path, errors.invalid_value(_yaml_text(value), "must be of type string (an RFC 3339 date-time)")
                    )
                )
            return
        _check_message(value, message_type, path, problems, unknown, budget)
        return
    kind = fd.type
    if kind == FieldDescriptor.TYPE_STRING:
        if not isinstance(value, str):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type string")))
    elif kind == FieldDescriptor.TYPE_BOOL:
        if not isinstance(value, bool):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type boolean")))
    elif kind in _INT_TYPES:
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type integer")))
            return
        low, high = _INT_RANGES.get(kind, _INT64)
        if not low <= value <= high:
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), f"must be between {low} and {high}")))
    elif kind in (FieldDescriptor.TYPE_FLOAT, FieldDescriptor.TYPE_DOUBLE):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type number")))
    elif kind == FieldDescriptor.TYPE_ENUM:
        if not isinstance(value, (str, int)) or isinstance(value, bool):
            problems.append(Problem(path, errors.invalid_value(_yaml_text(value), "must be of type string")))


def _yaml_text(value: Any) -> str | int | float | bool:
    """A YAML value as an error shows it: scalars as they are, collections in flow style."""
    if isinstance(value, (str, bool, int, float)):
        return value
    if value is None:
        return "null"
    try:
        text = yaml.safe_dump(value, default_flow_style=True, width=10**9).strip()
    except Exception:
        text = type(value).__name__
    return text.removesuffix("\n...").strip()


_FAILED_FIELD = re.compile(r"Failed to parse (\S+) field: ")


def parse_problem(exc: Exception) -> str:
    """``spec.cost.perHour: <reason>`` from json_format's nested ``Failed to parse X field: ...``."""
    text = " ".join(str(exc).split())
    path = []
    while match := _FAILED_FIELD.match(text):
        path.append(match.group(1))
        text = text[match.end() :]
    text = text.rstrip(".")  # json_format appends "..."
    return f"{'.'.join(path)}: {text}" if path else text


def _yaml_type(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return type(value).__name__


def _coerce_quantity(node: Any, path: tuple[str, ...]) -> None:
    """Turn each number at ``path`` under ``node`` into its text, in place (``[]``: every item
    of a list; ``{}``: every value of a map)."""
    head, rest = path[0], path[1:]
    keys: Iterable[Any]
    if head == "[]":
        keys = range(len(node)) if isinstance(node, list) else ()
    elif head == "{}":
        keys = list(node) if isinstance(node, dict) else ()
    else:
        keys = (head,) if isinstance(node, dict) and head in node else ()
    for key in keys:
        value = node[key]
        if rest:
            _coerce_quantity(value, rest)
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        elif isinstance(value, int) or math.isfinite(value):  # a non-finite float: the type check reports it
            node[key] = str(value) if isinstance(value, int) else repr(value)
