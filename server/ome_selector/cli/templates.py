"""``-o jsonpath=TEMPLATE`` and ``-o custom-columns=SPEC``, kubectl's syntax, over the JSON that
``-o json`` prints (proto3 JSON names; one response at a time).

- jsonpath: ``TEMPLATE`` is text with ``{EXPR}`` parts; each ``EXPR`` (``.selection.runtime.name``,
  ``.runtimes[*].name``, ``$.x``) is evaluated by jsonpath-ng, its matches joined by one space
  (a string as is, anything else as compact JSON); the text outside the braces, and a quoted
  ``{"..."}``, is printed as written, with kubectl's escapes ``\\n`` and ``\\t``.
  ``{range EXPR}...{end}`` repeats what it encloses for each match of ``EXPR``, whose
  expressions are then relative to that match (kubectl's iteration); a range without ``{end}``
  runs to the template's end. Errors are kubectl's: ``error parsing jsonpath TEMPLATE,
  unclosed action`` for a ``{`` without ``}``, ``error executing jsonpath "TEMPLATE": not in
  range, nothing to end`` for an ``{end}`` without ``{range}``.
- custom-columns: ``SPEC`` is ``HEADER:EXPR[,HEADER:EXPR ...]``; one table row per response,
  ``<none>`` for an expression without matches, the header line left out with ``--no-headers``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from google.protobuf.message import Message

from ome_selector.cli.documents import document
from ome_selector.cli.sources import UsageError

JSONPATH = "jsonpath="
CUSTOM_COLUMNS = "custom-columns="


class Formats(tuple[str, ...]):
    """The ``choices`` of ``-o``: the fixed formats (what argparse lists), and any
    ``jsonpath=...`` / ``custom-columns=...`` value."""

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and (value.startswith((JSONPATH, CUSTOM_COLUMNS)) or super().__contains__(value))


def is_template(output: str) -> bool:
    return output.startswith((JSONPATH, CUSTOM_COLUMNS))


def _document(response: Message) -> Any:
    return document(response)


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


@dataclass(frozen=True)
class _Range:
    """``{range EXPR}BODY{end}``: ``BODY`` once per match of ``EXPR``, evaluated against it."""

    path: Any
    body: list[Any]


def _actions(template: str) -> Iterator[tuple[bool, str]]:
    """``template`` as (is_action, text) pieces: the text between actions as written, each
    ``{...}`` action without its braces (a ``}`` inside quotes does not close it). A ``{``
    without its ``}`` is kubectl's ``unclosed action``."""
    position = 0
    while (start := template.find("{", position)) >= 0:
        if start > position:
            yield False, template[position:start]
        i, quote = start + 1, ""
        while i < len(template) and (quote or template[i] != "}"):
            if quote and template[i] == "\\":
                i += 1
            elif template[i] in "\"'" and (not quote or template[i] == quote):
                quote = "" if quote else template[i]
            i += 1
        if i >= len(template):
            raise UsageError(f"error parsing jsonpath {template}, unclosed action")
        yield True, template[start + 1 : i]
        position = i + 1
    if position < len(template):
        yield False, template[position:]


def _parse_template(template: str) -> list[Any]:
    """The nodes of ``template``: text (``str``), compiled expressions, and ``_Range`` blocks.
    A ``{range}`` left open runs to the template's end (as kubectl runs it); an ``{end}``
    outside any range is kubectl's ``not in range, nothing to end``."""
    root: list[Any] = []
    stack = [root]
    for is_action, text in _actions(template):
        if not is_action:
            stack[-1].append(text.replace("\\n", "\n").replace("\\t", "\t"))
            continue
        expression = text.strip()
        keyword, _, rest = expression.partition(" ")
        if keyword == "range":
            block = _Range(_compile(rest), [])
            stack[-1].append(block)
            stack.append(block.body)
        elif keyword == "end":
            if len(stack) == 1:
                raise UsageError(f"error executing jsonpath {json.dumps(template)}: not in range, nothing to end")
            stack.pop()
        elif len(expression) >= 2 and expression[0] == expression[-1] and expression[0] in "\"'":
            stack[-1].append(expression[1:-1].replace("\\n", "\n").replace("\\t", "\t"))  # {"\n"}: a literal
        else:
            stack[-1].append(_compile(expression))
    return root


def _fill(nodes: Sequence[Any], document: Any, out: list[str]) -> None:
    for node in nodes:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, _Range):
            for match in node.path.find(document):
                _fill(node.body, match.value, out)
        else:
            out.append(" ".join(_matches(node, document)))


def format_jsonpath(template: str, responses: Sequence[Message]) -> str:
    """``template`` (after ``jsonpath=``) filled in for each response, the results concatenated.
    ``UsageError`` with kubectl's message for a template it cannot parse."""
    nodes = _parse_template(template)
    out: list[str] = []
    for response in responses:
        _fill(nodes, _document(response), out)
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
