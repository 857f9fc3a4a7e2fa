"""How the ``ome-selector`` query commands print an answer: kubectl-style tables, one-line
reports, ``-o name`` lines, and the ``-o json`` / ``-o yaml`` documents.

Every function takes response protos (and, where the text names the object asked about, the
request) and returns text without a trailing newline; none prints, none raises for a
well-formed response. Cells are one line each (``_one_line`` folds white space); a missing
value is ``-``.

- ``format_explain``: ``kubectl ome runtime explain`` (reference/kubectl-ome/runtime.md,
  "explain", "Output fields"), plus SCORE.
- ``format_effective`` / ``format_effective_wide``: the Live view of ``kubectl ome runtime
  effective`` (runtime.md, "effective", "Output fields"), with the rows we add.
- ``format_history`` / ``format_history_wide``: ``kubectl ome runtime history``; ``sync_preview``
  / ``format_sync_result``: ``sync --dry-run client``'s preview (stderr) and ActionResult.
- ``format_selection``, ``format_reconcile``, ``format_admission``,
  ``format_runtime_validation``: ours (the docs have no such commands); the admission lines are
  kubectl's own (``<resource>/<name> admitted``, ``Error from server: admission webhook ...``).
- ``format_tree`` / ``format_tree_wide``: ``kubectl ome runtime tree`` (runtime.md, "tree",
  "Output fields"): the default output within 80 columns (``shorten_name``), wide with full names.
- ``*_name`` functions: kubectl's ``-o name`` (``<resource>.<group>/<name>``).
- ``format_json`` / ``format_yaml``: the responses in proto3 JSON names; ``format_json_line``:
  one stream event as one line of JSON.
- ``format_preview`` / ``format_preview_wide``, ``preview_notes``: ``what-if`` (PreviewCacheChange);
  ``format_watch_event``, ``WATCH_HEADING``: ``watch`` (WatchSelections), one line per event within
  120 columns; ``format_watch_event_wide``, ``WATCH_WIDE_HEADING``: ``watch -o wide``."""

from __future__ import annotations

import json
from typing import Sequence

import yaml
from google.protobuf.message import Message
from ome.selector.v1 import selector_pb2

from ome_selector.cli.documents import document
from ome_selector.cli.labels import _KIND
from ome_selector.cli.reports import _runtime_object

# --- -o name -------------------------------------------------------------------------------------


def selected_runtime_name(
    response: selector_pb2.SelectRuntimeResponse | selector_pb2.ReconcileInferenceServiceResponse,
) -> str:
    """``-o name`` of ``select`` and ``reconcile``: the selected runtime, or ``""``."""
    return _ref_name(response.selection.runtime) if response.HasField("selection") else ""


def candidate_names(response: selector_pb2.ExplainRuntimesResponse) -> str:
    """``-o name`` of ``explain``: each candidate in rank order, one a line."""
    return "\n".join(_ref_name(r.runtime) for r in response.runtimes if r.verdict == selector_pb2.VERDICT_CANDIDATE)


def effective_runtime_name(response: selector_pb2.GetEffectiveRuntimeResponse) -> str:
    """``-o name`` of ``effective``: the runtime the Live view names, or ``""``."""
    return _ref_name(response.runtime_ref) if response.HasField("runtime_ref") else ""


def admitted_name(
    request: selector_pb2.AdmitInferenceServiceRequest, response: selector_pb2.AdmitInferenceServiceResponse
) -> str:
    """``-o name`` of ``admit``: ``inferenceservice.ome.io/<name>`` when admitted, else ``""``."""
    return f"inferenceservice.ome.io/{request.inference_service.metadata.name}" if response.allowed else ""


def admitted_runtime_name(
    request: selector_pb2.ValidateServingRuntimeRequest, response: selector_pb2.ValidateServingRuntimeResponse
) -> str:
    """``-o name`` of ``validate-runtime``: the runtime when admitted, else ``""``."""
    return _runtime_object(request) if response.allowed else ""


def _ref_name(ref: selector_pb2.RuntimeRef) -> str:
    """``clusterservingruntime.ome.io/<name>`` or ``servingruntime.ome.io/<name>``."""
    return f"{_KIND.get(ref.kind, 'Runtime').lower()}.ome.io/{ref.name}"


# --- several answers, json and yaml ---------------------------------------------------------------


def with_heading(request: Message, text: str) -> str:
    """One answer among several: ``# inferenceservice.ome.io/<namespace>/<name>`` (``# request``
    for a request without an InferenceService), then ``text`` on the next line when there is one."""
    isvc = getattr(request, "inference_service", None)
    if isvc is None:
        subject = "request"
    else:
        subject = f"inferenceservice.ome.io/{isvc.metadata.namespace}/{isvc.metadata.name or '<no name>'}"
    return f"# {subject}\n{text}" if text else f"# {subject}"


def format_json(responses: Sequence[Message]) -> str:
    """``-o json``: one response as a JSON object, several as a JSON array, in order (proto3 JSON
    names, two-space indent)."""
    if len(responses) == 1:
        return json.dumps(document(responses[0]), indent=2, ensure_ascii=False)
    return json.dumps([document(response) for response in responses], indent=2, ensure_ascii=False)


def format_json_line(response: Message) -> str:
    """One response (a stream's event) as one line of JSON (proto3 JSON names)."""
    return json.dumps(document(response), ensure_ascii=False)


def format_yaml(responses: Sequence[Message]) -> str:
    """``-o yaml``: one YAML document per response, in order, separated by ``---`` (proto3 JSON
    names, fields in proto order)."""
    return "---\n".join(yaml.safe_dump(document(response), sort_keys=False) for response in responses).rstrip("\n")
