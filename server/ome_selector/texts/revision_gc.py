"""The texts of the revision garbage-collection plan (concepts/runtimes/runtime-revisions.md,
"Garbage collection"; reference/api/labels-and-annotations.md, "ControllerRevisions").

Each reason's rule is the page's sentence for it; a plan entry's message is
``<verdict>: <what it is>; <rule>``, as ``message`` builds it."""

from __future__ import annotations

from collections.abc import Sequence

GC_ELIGIBLE_SINCE_ANNOTATION = "ome.io/gc-eligible-since"
CREATED_BY_ANNOTATION = "ome.io/created-by"

# The rule behind each reason, in the pages' words.
RULES = {
    # labels-and-annotations.md, ``ome.io/created-by``.
    "NOT_OME_MANAGED": "garbage collection handles only those",
    # runtime-revisions.md, "Garbage collection".
    "REQUESTED": "OME keeps every revision that an InferenceService names in `spec.runtime.revision` or "
    "`status.pinnedRevisionName`",
    "REPORTED": "OME keeps every revision that an InferenceService names in `spec.runtime.revision` or "
    "`status.pinnedRevisionName`",
    "NEWEST": "OME keeps ... the ten newest revisions of each runtime name",
    "ELIGIBLE": "It deletes any other revision after a 24-hour grace period",
}

# The plan's table (``history --gc``).
GC_HEADERS = ("REVISION", "RUNTIME-OF", "RANK", "VERDICT", "ACTION", "REASON", "DELETE-AFTER")
GC_WIDE_HEADERS = ("CREATED", "USED-BY", "MESSAGE")
VERDICTS = {"KEEP": "Keep", "DELETE": "Delete"}
ACTIONS = {"NONE": "-", "UNMARK": "Unmark", "MARK": "Mark", "WAIT": "Wait", "DELETE": "Delete"}
REASONS = {
    "NOT_OME_MANAGED": "NotOMEManaged",
    "REQUESTED": "Requested",
    "REPORTED": "Reported",
    "NEWEST": "Newest",
    "ELIGIBLE": "Eligible",
}
NO_REVISIONS = "No runtime revisions found in the OME namespace."


def message(reason: str, action: str, users: Sequence[str], rank: int, runtime: str, delete_after: str) -> str:
    """One entry's message: what holds for the revision, what the controller does, and the rule.

    >>> message("NEWEST", "NONE", [], 3, "vllm-llama", "")
    'kept: newest revision 3 of runtime name vllm-llama; OME keeps ... the ten newest revisions of each runtime name'
    """
    rule = RULES[reason]
    if reason == "NOT_OME_MANAGED":
        return f"left alone: no {CREATED_BY_ANNOTATION}: ome-controller; {rule}"
    if reason in ("REQUESTED", "REPORTED"):
        field = "spec.runtime.revision" if reason == "REQUESTED" else "status.pinnedRevisionName"
        names = ", ".join(f"InferenceService {u}" for u in users)
        text = f"kept: {names} names it in {field}"
    elif reason == "NEWEST":
        text = f"kept: newest revision {rank} of runtime name {runtime}"
    elif action == "MARK":
        text = f"eligible: mark {GC_ELIGIBLE_SINCE_ANNOTATION} now, delete after {delete_after}"
    elif action == "WAIT":
        text = f"eligible: marked {GC_ELIGIBLE_SINCE_ANNOTATION}, delete after {delete_after}"
    else:
        text = f"delete: marked {GC_ELIGIBLE_SINCE_ANNOTATION} and the grace period ended at {delete_after}"
    if action == "UNMARK":
        text += f", remove {GC_ELIGIBLE_SINCE_ANNOTATION}"
    return f"{text}; {rule}"
