"""The YAML loader of manifests: a SafeLoader with Kubernetes' reading of scalars, and a composer
that bounds each document before anything is built from it.

* Timestamps stay the text they were written as (``creationTimestamp`` reaches protobuf's JSON
  parser as RFC 3339); integers of more than ``MAX_INT_DIGITS`` digits stay text (Python refuses
  to convert numbers of more than 4,300 digits).
* While a document is composed (libyaml's parser, PyYAML's composer) every node is counted at
  its *expanded* size: a scalar costs its length plus one, a sequence or mapping one plus its
  items, and an alias the whole cost of the node it names, each time it is used. A document
  whose expanded size passes ``MAX_EXPANDED_BYTES`` (64 MiB, the manifest file bound), or that
  holds more than ``MAX_DOCUMENT_NODES`` nodes, nests deeper than ``MAX_DOCUMENT_DEPTH``, or holds
  an alias inside the node it names, raises
  ``DocumentTooLarge`` at that point: no Python object, no proto is built from it, so a 1 MB
  file that aliases a 1,000,000-character string 500 times costs about 70 MB of aliases before
  it is refused, not gigabytes.
"""

from __future__ import annotations

import sys
from typing import Any

import yaml
from yaml.composer import Composer, ComposerError
from yaml.events import AliasEvent, ScalarEvent

from ome_selector import validation as bounds

# Integers with more digits than this stay text (then fail the type check or a bound).
MAX_INT_DIGITS = 64
# A document's size with every alias expanded, at most (bytes, about: see the module docstring).
MAX_EXPANDED_BYTES = bounds.MAX_FILE_BYTES
# Nodes (scalars, sequences, mappings) composed for one document, at most; aliases are not
# nodes of their own (their expansion counts in MAX_EXPANDED_BYTES). A List of 5,000
# InferenceServices is about 300,000.
MAX_DOCUMENT_NODES = 1_000_000
# Sequences and mappings nested in one another, at most (protobuf stops at 64 already, but its
# error names the field); PyYAML's composer recurses about three frames per level.
MAX_DOCUMENT_DEPTH = 1000
_RECURSION_LIMIT = 1000 + 4 * MAX_DOCUMENT_DEPTH

_Base: type = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


class DocumentTooLarge(ComposerError):
    """A document passes ``MAX_EXPANDED_BYTES`` or ``MAX_DOCUMENT_NODES`` (or aliases itself);
    ``problem`` says which, ``problem_mark`` where composing stopped."""


class _BoundedComposer(Composer):
    """PyYAML's composer, counting each document's expanded size and nodes as it goes."""

    _spent = 0
    _nodes = 0
    _depth = 0
    _costs: dict[str, int]

    def compose_document(self) -> Any:
        self._spent, self._nodes, self._depth, self._costs = 0, 0, 0, {}
        if sys.getrecursionlimit() < _RECURSION_LIMIT:  # raised once, never lowered (threads)
            sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            return super().compose_document()
        finally:
            self._costs = {}

    def compose_node(self, parent: Any, index: Any) -> Any:
        event: Any = self.peek_event()  # type: ignore[attr-defined]  # the parser's, beside this class
        if isinstance(event, AliasEvent):
            cost = self._costs.get(event.anchor) if event.anchor is not None else None
            if cost is None and event.anchor in self.anchors:
                problem = f"alias *{event.anchor} is inside the node it names (a document without end)"
                where: Any = event.start_mark  # libyaml's Mark or PyYAML's
                raise DocumentTooLarge(None, None, problem, where)
            node = super().compose_node(parent, index)  # an undefined alias raises ComposerError
            self._spend(cost or 0, event)
            return node
        self._nodes += 1
        if self._nodes > MAX_DOCUMENT_NODES:
            raise DocumentTooLarge(
                None, None, f"document has more than {MAX_DOCUMENT_NODES} YAML nodes; not loaded", event.start_mark
            )
        start = self._spent
        self._spend(len(event.value) + 1 if isinstance(event, ScalarEvent) else 1, event)
        if isinstance(event, ScalarEvent):
            node = super().compose_node(parent, index)
        else:
            self._depth += 1
            if self._depth > MAX_DOCUMENT_DEPTH:
                raise DocumentTooLarge(
                    None, None, f"document nests deeper than {MAX_DOCUMENT_DEPTH} levels; not loaded", event.start_mark
                )
            node = super().compose_node(parent, index)
            self._depth -= 1
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            self._costs[anchor] = self._spent - start
        return node

    def _spend(self, cost: int, event: Any) -> None:
        self._spent += cost
        if self._spent > MAX_EXPANDED_BYTES:
            raise DocumentTooLarge(
                None,
                None,
                f"document expands to more than {MAX_EXPANDED_BYTES} bytes with its YAML aliases; not loaded",
                event.start_mark,
            )


class KubernetesLoader(_BoundedComposer, _Base):  # type: ignore[misc, valid-type]
    """SafeLoader (libyaml's parser when PyYAML has it) that leaves timestamps as text, integers
    of more than ``MAX_INT_DIGITS`` digits as text, and bounds each document while composing it
    (see the module docstring)."""

    def __init__(self, stream: Any) -> None:
        _Base.__init__(self, stream)  # type: ignore[misc]
        Composer.__init__(self)


def _construct_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    text = loader.construct_scalar(node)
    if isinstance(text, str) and len(text) > MAX_INT_DIGITS:
        return text
    return yaml.SafeLoader.construct_yaml_int(loader, node)


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
KubernetesLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
KubernetesLoader.add_constructor(_TIMESTAMP_TAG, yaml.SafeLoader.construct_yaml_str)
KubernetesLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
