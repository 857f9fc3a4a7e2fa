"""``kubectl ome runtime sync`` in process: ``rpc_views.plan_runtime_sync`` and its renderer on the
page's examples (helpers_views). Page: reference/kubectl-ome/runtime.md, "sync" (How the action
runs, Refusals, examples), "Exit codes"."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from helpers_docs import model, revision, runtime
from helpers_views import (
    DRIFTED,
    LIVE_HASH,
    LIVE_REVISION,
    PINNED,
    PINNED_HASH,
    REQUEST_ID,
    TEAM_A,
    UID,
    chat,
    llama_chat,
    merged_spec,
    page_revisions,
    page_sources,
    plan,
    vllm_runtimes,
)
from ome_selector.cli import labels, reports
from ome_selector.domain.errors import RequestError
from ome_selector.texts import messages

# --- sync ---------------------------------------------------------------------------------------------


def test_sync_example_preview_and_result() -> None:
    """runtime.md, sync "Examples": the preview (stderr) and the ActionResult (stdout)."""
    got = plan(page_sources(), llama_chat(), context="prod-us-east")
    assert reports.sync_preview(got)[0] == "ALPHA runtime sync preview (acceptance is not convergence)"
    assert reports.sync_preview(got)[1].splitlines() == [
        "FIELD             VALUE",
        "Action            runtime sync",
        "Context           prod-us-east",
        "Workload NS       team-a",
        "OME NS            ome",
        "Target            InferenceService/llama-chat",
        f"UID               {UID}",
        "ResourceVersion   4711",
        "Dry-run           client",
        "Generation        3",
        "Reported gen      3",
        "Freshness         Unverifiable (advisory global status)",
        f"Pin               {PINNED}",
        "Pin source        ClusterServingRuntime//vllm-llama",
        "Source            ClusterServingRuntime//vllm-base",
        "Source UID        a41c7e9d-2b5f-4c83-9e6a-1f8d3b7c05e2",
        "Source RV         187",
        "Source gen        1",
        "Source            ClusterServingRuntime//vllm-llama",
        "Source UID        3b8e1f6a-9c2d-4a7e-8f15-6d0b4c9a2e81",
        "Source RV         212",
        "Source gen        2",
        "Pin UID           c8f4a2e6-1d9b-4b7a-8e3c-5a0f7d2b9e64",
        "Pin RV            101",
        f"Current hash      {PINNED_HASH}",
        f"Target hash       {LIVE_HASH}",
        f"Predicted pin     {LIVE_REVISION}",
        "Target evidence   Existing",
        "Old sync token    Absent",
        "Target UID        0e6b9d3a-4f2c-4e1b-b7a8-3c5d9f1e8a20",
        "Target RV         102",
        "Pause state       Not recognized",
        f"Request UUID      {REQUEST_ID}",
        "Set annotation    ome.io/runtime-sync",
        f"New token         cli-runtime-sync-{REQUEST_ID}",
    ]
    assert reports.sync_preview(got)[2:] == [
        "API acceptance is not convergence or serving-revision readiness.",
        "Requests latest merged live runtime when controller consumes the token.",
        "Previewed content is not locked by this annotation.",
        "Parent CAS is not an atomic transaction across runtimes, revisions and IRs.",
        "Global observed generation is advisory; freshness is Unverifiable.",
        "Existing pause/freeze and lifecycle/rollout policies remain in effect.",
    ]
    assert reports.format_sync_result(got).splitlines() == [
        "FIELD           VALUE",
        "action          runtime sync",
        "target          InferenceService/team-a/llama-chat",
        "dry-run         client",
        "accepted        No",
        "applied         No",
        f"request-id      {REQUEST_ID}",
        f"revision-hash   {LIVE_HASH}",
        "message         Validated locally; no patch sent.",
        "follow-up       kubectl ome runtime effective llama-chat -n team-a --...",
        "hint            Use -o json or -o yaml for full values.",
    ]
    assert got.result.follow_up == (
        "kubectl ome runtime effective llama-chat -n team-a --context=prod-us-east --ome-namespace=ome"
    )
    assert (got.annotation, got.token) == ("ome.io/runtime-sync", f"cli-runtime-sync-{REQUEST_ID}")


def test_sync_cuts_values_to_56_characters() -> None:
    """runtime.md, sync: "the accepted message prints as ``API accepted annotation request;
    consumption and conv...``"."""
    text = "API accepted annotation request; consumption and convergence not observed."
    assert reports.cut(text, labels.SYNC_VALUE_WIDTH) == "API accepted annotation request; consumption and conv..."


def test_sync_target_not_found_and_pause_states() -> None:
    """``Target evidence`` NotFound (no revision holds the live spec: the controller creates
    ``cr-vllm-llama-<hash>``), no Target UID/RV; ``Pause state`` Paused and Freeze."""
    sources = [*vllm_runtimes(), model(namespace=TEAM_A), page_revisions()[0]]
    fields = dict((f.field, f.value) for f in plan(sources, llama_chat()).preview)
    assert (fields["Predicted pin"], fields["Target evidence"]) == (f"cr-vllm-llama-{LIVE_HASH}", "NotFound")
    assert "Target UID" not in fields
    for value, state in (("true", "Paused"), ("freeze", "Freeze"), ("later", "Not recognized")):
        got = plan(page_sources(), chat(annotations={"ome.io/rollout-paused": value}))
        assert dict((f.field, f.value) for f in got.preview)["Pause state"] == state


def test_sync_draws_a_request_id() -> None:
    got = plan(page_sources(), llama_chat(), request_id="")
    assert got.token == f"cli-runtime-sync-{uuid.UUID(got.result.request_id)}"
    with pytest.raises(RequestError) as excinfo:
        plan(page_sources(), llama_chat(), request_id="not-a-uuid")
    assert [v.field for v in excinfo.value.violations] == ["request_id"]


def _many_revisions(count: int) -> list[dict[str, Any]]:
    llama = vllm_runtimes()[1]
    return [
        revision(f"cr-vllm-llama-{i:08x}", llama, data={**merged_spec(page_sources()[:3]), "modelSizeRange": {"min": f"{i + 1}M"}})
        for i in range(count)
    ]  # fmt: skip


@pytest.mark.parametrize(
    "doc, extra, message",
    [
        # The refusals every action shares.
        (chat(metadata={"uid": ""}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(metadata={"name": ""}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(metadata={"resourceVersion": ""}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(metadata={"generation": 0}), [], messages.REFUSAL_TARGET_IDENTITY),
        (chat(annotations={"ome.io/placement-origin": "x"}), [], messages.REFUSAL_PLACEMENT),
        (chat(labels={"ome.io/cluster-selector": "x"}), [], messages.REFUSAL_PLACEMENT),
        (chat(annotations={f"a/{i}": "x" for i in range(257)}), [], messages.REFUSAL_INSPECTION_BOUNDS),
        # a component on OMENative: its InferenceReplicas cannot be read from the cache
        (chat() | {"spec": {**chat()["spec"], "deploymentMode": "OMENative"}}, [], messages.REFUSAL_INSPECTION_BOUNDS),
        # sync's own.
        (chat(annotations={"ome.io/rollout-rollback": "x"}), [], messages.REFUSAL_MAILBOX),
        (chat(annotations={"ome.io/rollout-promote": "x"}), [], messages.REFUSAL_MAILBOX),
        (chat(annotations={"ome.io/rollout-repin": "x"}), [], messages.REFUSAL_MAILBOX),
        (chat(runtime={"autoSync": True}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(runtime={"revision": PINNED}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(runtime={"apiGroup": "example.com"}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(status={"observedGeneration": 3, "pinnedRevisionName": PINNED}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(status={"observedGeneration": 3, "pinnedRevisionName": LIVE_REVISION, "conditions": [DRIFTED]}), [],
         messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(annotations={"ome.io/runtime-sync": "t1"}), [], messages.REFUSAL_MANAGED_EVIDENCE),
        # a same-named ServingRuntime's revision shares the label
        (llama_chat(), [revision("r-team-a-vllm-llama-1baf272d", runtime("vllm-llama", namespace=TEAM_A))],
         messages.REFUSAL_MANAGED_EVIDENCE),
        (llama_chat(), _many_revisions(31), messages.REFUSAL_MANAGED_EVIDENCE),
        (chat(metadata={"uid": "u" * 769}), [], messages.REFUSAL_UNSAFE_VALUE),
    ],
)  # fmt: skip
def test_sync_refusals(doc: dict[str, Any], extra: list[Any], message: str) -> None:
    """runtime.md, sync: "How the action runs" (the shared refusals) and "Refusals"."""
    got = plan([*page_sources(), *extra], doc)
    assert (got.refusal_message, len(got.preview), got.token) == (message, 0, "")
    assert reports.sync_preview(got) == [f"error: {message}"]
    assert reports.format_sync_result(got) == ""


def test_sync_goes_ahead_with_32_revisions_and_refuses_a_tab() -> None:
    """At most 32 revisions (30 more here); a preview value with a tab is unsafe to show."""
    assert plan([*page_sources(), *_many_revisions(30)], llama_chat()).refusal_message == ""
    got = plan(page_sources(), llama_chat(), context="prod\tus")
    assert got.refusal_message == messages.REFUSAL_UNSAFE_VALUE


def test_disabled_runtime_refuses() -> None:
    base, llama = vllm_runtimes()
    llama["spec"]["disabled"] = True
    got = plan([base, llama, model(namespace=TEAM_A), *page_revisions()], llama_chat())
    assert got.refusal_message == messages.REFUSAL_MANAGED_EVIDENCE
