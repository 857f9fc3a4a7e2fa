"""``-o jsonpath=TEMPLATE`` and ``-o custom-columns=SPEC``, kubectl's syntax, over the JSON that
``-o json`` prints (proto3 JSON names; one response at a time).

- jsonpath: ``TEMPLATE`` is text with ``{EXPR}`` parts; each ``EXPR`` (``.selection.runtime.name``,
  ``.runtimes[*].name``, ``$.x``) is evaluated by jsonpath-ng, its matches joined by one space
  (a string as is, anything else as compact JSON); the text outside the braces, and a quoted
  ``{"..."}``, is printed as written, with kubectl's escapes ``\\n`` and ``\\t``.
  kubectl's ``{range}``/``{end}`` blocks are not supported (a ``UsageError``).
- custom-columns: ``SPEC`` is ``HEADER:EXPR[,HEADER:EXPR ...]``; one table row per response,
  ``<none>`` for an expression without matches, the header line left out with ``--no-headers``.
"""

from __future__ import annotations

import json
import re
from typing import Any, Sequence

from google.protobuf import json_format
from google.protobuf.message import Message

from ome_selector.cli.sources import UsageError

JSONPATH = "jsonpath="
CUSTOM_COLUMNS = "custom-columns="
_BRACES = re.compile(r"\{([^{}]*)\}")


class Formats(tuple[str, ...]):
    """The ``choices`` of ``-o``: the fixed formats (what argparse lists), and any
    ``jsonpath=...`` / ``custom-columns=...`` value."""

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and (value.startswith((JSONPATH, CUSTOM_COLUMNS)) or super().__contains__(value))


def is_template(output: str) -> bool:
    return output.startswith((JSONPATH, CUSTOM_COLUMNS))


def _document(response: Message) -> Any:
    return json_format.MessageToDict(response, preserving_proto_field_name=False)


def _compile(expression: str) -> Any:
    """jsonpath-ng's parse of a kubectl expression (``.a.b`` is ``$.a.b``)."""
    from jsonpath_ng.exceptions import JsonPathLexerError, JsonPathParserError
    from jsonpath_ng.ext import parse

    text = expression.strip()
    if text in ("", ".", "$"):
        text = "$"
    elif text.startswith("."):
        text = "$" + text
    try:
        return parse(text)
    except (JsonPathLexerError, JsonPathParserError, Exception) as exc:  # the parser raises plain Exception too
        raise UsageError(f"error parsing jsonpath {expression!r}: {exc}") from None


def _value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _matches(path: Any, document: Any) -> list[str]:
    return [_value(match.value) for match in path.find(document)]


def format_jsonpath(template: str, responses: Sequence[Message]) -> str:
    """``template`` (after ``jsonpath=``) filled in for each response, the results concatenated."""
    parts: list[str | Any] = []
    position = 0
    for found in _BRACES.finditer(template):
        parts.append(template[position : found.start()])
        expression = found.group(1).strip()
        if expression.split(" ", 1)[0] in ("range", "end"):
            raise UsageError(f"jsonpath {template!r}: {{range}} and {{end}} are not supported")
        if len(expression) >= 2 and expression[0] == expression[-1] == '"':  # {"\n"}: a literal
            parts.append(expression[1:-1])
        else:
            parts.append(_compile(expression))
        position = found.end()
    tail = template[position:]
    if "{" in tail or "}" in tail:
        raise UsageError(f"error parsing jsonpath {template!r}: unclosed or stray brace")
    parts.append(tail)
    out = []
    for response in responses:
        document = _document(response)
        for part in parts:
            if isinstance(part, str):
                out.append(part.replace("\\n", "\n").replace("\\t", "\t"))
            else:
                out.append(" ".join(_matches(part, document)))
    return "".join(out)


def column_spec(spec: str) -> list[tuple[str, Any]]:
    """``HEADER:EXPR,...`` as (header, compiled expression) pairs; ``UsageError`` for a column
    without ``:`` (kubectl: ``expected <header>:<json-path-expr>``)."""
    columns = []
    for column in spec.split(","):
        header, sep, expression = column.partition(":")
        if not sep or not header:
            raise UsageError(f"custom-columns format: expected <header>:<json-path-expr>, got {column!r}")
        if expression.startswith("{") and expression.endswith("}"):
            expression = expression[1:-1]
        columns.append((header, _compile(expression)))
    return columns


def custom_column_rows(spec: str, responses: Sequence[Message]) -> tuple[list[str], list[list[str]]]:
    """The headers and one row per response (``<none>`` for no match, matches joined by ``,``)."""
    columns = column_spec(spec)
    rows = []
    for response in responses:
        document = _document(response)
        rows.append([",".join(_matches(path, document)) or "<none>" for _, path in columns])
    return [header for header, _ in columns], rows
