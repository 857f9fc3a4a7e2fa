"""Runtime revisions and pinning (concepts/runtimes/runtime-revisions.md), in process: the page's
walk-through with its manifests (runtime.yaml of serving-runtimes.md, the pinned isvc.yaml, the
rollback isvc.yaml), every row of its tables, its quoted messages, the pin mode / state / SYNC /
LIVE-RELATION tables of reference/kubectl-ome/runtime.md (effective), and revisions as cache
objects. Where the page gives no text: ome-selection-facts.md 8.8 and OME's controller.

The page's revisions (``...-590753e8``, ``...-af9539ac``) are fed to the cache as OME stored them;
a revision the service asks the controller to create is named with this service's hash of the
spec (``9cb717d7`` for runtime.yaml, ``422491be`` after the ``--mem-frac=0.85`` edit).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from google.protobuf import json_format
from helpers_docs import (
    FIRST_REVISION,
    INHERITANCE_ISVC,
    LLAMA_3_2_3B_CBM,
    PINNED_ISVC,
    PROFILE_COMMAND,
    ROLLBACK_ISVC,
    SECOND_REVISION,
    SGLANG_CHILD,
    SGLANG_PROFILE,
    SGLANG_RUNTIME,
    catalog,
    inference_service,
    load,
    objects,
    revision,
)
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_manifests
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.flows import revisions as pinning
from ome_selector.rpc import lifecycle, runtimes

RUNTIME = yaml.safe_load(SGLANG_RUNTIME)
LIVE_HASH = "9cb717d7"  # runtime.yaml merged over sglang-profile
CHANGED_HASH = "422491be"  # after --mem-frac=0.9 -> --mem-frac=0.85
OWN = f"r-llama-demo-sglang-llama-3-2-3b-{LIVE_HASH}"
CHANGED_OWN = f"r-llama-demo-sglang-llama-3-2-3b-{CHANGED_HASH}"
MISMATCH = "pinned r-llama-demo-sglang-llama-3-2-3b-590753e8, live spec differs; bump ome.io/runtime-sync annotation to advance"


def changed(doc: dict[str, Any] = RUNTIME, mem_frac: str = "0.85") -> dict[str, Any]:
    """runtime-revisions.md, "When the runtime changes": ``--mem-frac=0.9`` -> ``--mem-frac=0.85``."""
    out = copy.deepcopy(doc)
    args = out["spec"]["engineConfig"]["runner"]["args"]
    [at] = [i for i, arg in enumerate(args) if arg.startswith("--mem-frac=")]
    args[at] = f"--mem-frac={mem_frac}"
    return out


def service(
    text: str = PINNED_ISVC,
    *,
    pinned: str = "",
    token: str = "",
    sync: str | None = None,
    **runtime: Any,
) -> dict[str, Any]:
    """The page's isvc.yaml with ``status.pinnedRevisionName`` / ``lastRuntimeSyncToken``, the
    ``ome.io/runtime-sync`` annotation, and ``spec.runtime`` fields changed (None removes one)."""
    doc = yaml.safe_load(text)
    for key, value in runtime.items():
        if value is None:
            doc["spec"]["runtime"].pop(key, None)
        else:
            doc["spec"]["runtime"][key] = value
    if sync is not None:
        doc["metadata"]["annotations"] = {"ome.io/runtime-sync": sync}
    status = {k: v for k, v in (("pinnedRevisionName", pinned), ("lastRuntimeSyncToken", token)) if v}
    if status:
        doc["status"] = status
    return doc


def reconcile(
    sources: list[Any], isvc: Any, ome_namespace: str = "", has_condition: bool = False
) -> pb.ReconcileInferenceServiceResponse:
    store = load(*sources)
    request = pb.ReconcileInferenceServiceRequest(
        inference_service=inference_service(isvc),
        ome_namespace=ome_namespace,
        has_runtime_ready_condition=has_condition,
    )
    return lifecycle.reconcile_inference_service(store.snapshot, request)


def drifted(response: pb.ReconcileInferenceServiceResponse) -> tuple[str, str, str, str] | None:
    """The RuntimeDrifted condition to set, as (status, reason, message, severity); None for none."""
    if not response.HasField("runtime_drifted"):
        return None
    c = response.runtime_drifted
    assert c.type == "RuntimeDrifted"
    return (c.status, c.reason, c.message, c.severity)


def outcome(response: pb.ReconcileInferenceServiceResponse) -> tuple[Any, ...]:
    """(pinnedRevisionName to record, lastRuntimeSyncToken to record or None, served from a
    revision, RuntimeDrifted set, removed, workload untouched, requeue, events)."""
    pin = response.pin
    token = pin.last_runtime_sync_token if pin.HasField("last_runtime_sync_token") else None
    return (
        pin.pinned_revision_name,
        token,
        pin.served_from_revision,
        drifted(response),
        response.remove_runtime_drifted,
        response.workload_untouched,
        response.requeue,
        [(e.type, e.reason, e.message) for e in response.events],
    )


def paused(reason: str, message: str) -> tuple[Any, ...]:
    """The ``outcome`` of drift that pauses updates: nothing recorded, RuntimeDrifted set, the
    workload left as it is, no requeue, no event."""
    return ("", None, False, ("True", reason, message, ""), False, True, False, [])


def report(response: pb.ReconcileInferenceServiceResponse) -> tuple[str, str, str, str, str, str]:
    """(PIN mode, PIN state, SYNC, live hash, active hash, LIVE-RELATION) as kubectl-ome names them."""
    pin = response.pin
    return (
        pb.PinMode.Name(pin.mode),
        pb.PinState.Name(pin.state),
        pb.SyncState.Name(pin.sync),
        pin.live_hash,
        pin.active_hash,
        pb.LiveRelation.Name(pin.live_relation),
    )


def choice(value: pb.RevisionChoice) -> tuple[str, bool, str]:
    return (value.name, value.exists, value.hash)


BASE = [RUNTIME, LLAMA_3_2_3B_CBM]


# ---- "Pin an InferenceService" ------------------------------------------------------------------


class TestPinAnInferenceService:
    def test_the_first_reconcile_pins_the_live_spec(self) -> None:
        """OME stores the runtime's live spec in a revision and records its name in
        status.pinnedRevisionName; no RuntimeDrifted (DRIFTED <none>)."""
        got = reconcile(BASE, service())
        assert outcome(got) == (OWN, "", False, None, True, False, False, [])
        assert report(got) == (
            "PIN_MODE_MANAGED_PIN",
            "PIN_STATE_AWAITING_PIN",
            "SYNC_STATE_ABSENT",
            LIVE_HASH,
            LIVE_HASH,
            "LIVE_RELATION_EQUAL",
        )
        assert (got.selection.runtime.kind, got.selection.runtime.namespace, got.selection.runtime.name) == (
            pb.RUNTIME_KIND_SERVING_RUNTIME,
            "llama-demo",
            "sglang-llama-3-2-3b",
        )
        assert choice(got.pin.roll_forward) == (OWN, False, LIVE_HASH)

    def test_the_revision_to_create_is_a_controller_revision_in_omes_namespace(self) -> None:
        """ "Revisions are ControllerRevisions in OME's namespace, ome in a default install";
        labels-and-annotations.md lists their labels and annotation."""
        store = load(*BASE)
        request = pb.ReconcileInferenceServiceRequest(inference_service=inference_service(service()))
        created = lifecycle.reconcile_inference_service(store.snapshot, request).pin.create_revision
        assert json_format.MessageToDict(created)["metadata"] == {
            "name": OWN,
            "namespace": "ome",
            "labels": {
                "ome.io/runtime-of": "sglang-llama-3-2-3b",
                "ome.io/runtime-of-kind": "ServingRuntime",
                "ome.io/runtime-of-namespace": "llama-demo",
                "ome.io/revision-hash": LIVE_HASH,
            },
            "annotations": {"ome.io/created-by": "ome-controller"},
        }
        assert (created.api_version, created.kind, created.revision) == ("apps/v1", "ControllerRevision", 1)
        # It holds the runtime's spec as cached (with the CRD defaults).
        cached = store.snapshot.serving_runtimes[("llama-demo", "sglang-llama-3-2-3b")].spec
        assert created.data == cached
        assert list(created.data.engine_config.runner.args)[-1] == "--mem-frac=0.9"

    @pytest.mark.parametrize(
        ("kind", "expected"),
        [
            pytest.param(None, f"cr-sglang-llama-3-2-3b-{LIVE_HASH}", id="ClusterServingRuntime, the default"),
            pytest.param("ClusterServingRuntime", f"cr-sglang-llama-3-2-3b-{LIVE_HASH}", id="ClusterServingRuntime"),
            pytest.param("ServingRuntime", OWN, id="ServingRuntime"),
        ],
    )
    def test_the_revision_name_depends_on_spec_runtime_kind(self, kind: str | None, expected: str) -> None:
        """The revision-name table. A ServingRuntime named without kind: ServingRuntime is found
        by the fallback, and its revisions get cr- names ("Set kind: ServingRuntime ...")."""
        got = reconcile(BASE, service(kind=kind))
        assert (got.pin.pinned_revision_name, got.pin.create_revision.metadata.name) == (expected, expected)
        kind_label = got.pin.create_revision.metadata.labels["ome.io/runtime-of-kind"]
        assert kind_label == (kind or "ClusterServingRuntime")

    def test_a_cluster_runtime_of_the_catalog(self) -> None:
        csr = catalog("srt/meta/llama-3-2-3b-instruct-rt.yaml")
        got = reconcile([csr, LLAMA_3_2_3B_CBM], service(name="srt-llama-3-2-3b-instruct", kind=None))
        name = got.pin.pinned_revision_name
        assert (
            name.startswith("cr-srt-llama-3-2-3b-instruct-") and len(name) == len("cr-srt-llama-3-2-3b-instruct-") + 8
        )
        labels = dict(got.pin.create_revision.metadata.labels)
        assert (labels["ome.io/runtime-of-kind"], labels["ome.io/runtime-of-namespace"]) == (
            "ClusterServingRuntime",
            "",
        )

    def test_an_inheriting_runtime_pins_the_merged_spec(self) -> None:
        """ "For a runtime that inherits from another, the revision holds the merged spec"
        (runtime-inheritance.md: the profile's image and command, the child's args)."""
        isvc = service(INHERITANCE_ISVC, kind="ServingRuntime", autoSync=False)
        got = reconcile([SGLANG_PROFILE, SGLANG_CHILD, LLAMA_3_2_3B_CBM], isvc)
        runner = got.pin.create_revision.data.engine_config.runner
        assert (runner.image, list(runner.command), list(runner.args)) == (
            "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64",
            PROFILE_COMMAND,
            ["--tp-size=1", "--mem-frac=0.9"],
        )
        assert got.pin.create_revision.data.disabled is False and got.pin.create_revision.data.HasField("disabled")
        assert list(got.selection.inheritance_chain) == ["sglang-profile", "sglang-llama-3-2-3b"]

    def test_inference_services_pinned_to_the_same_spec_share_a_revision(self) -> None:
        """ "InferenceServices pinned to the same spec share a revision": the revision another one
        created is reused, none is created."""
        got = reconcile([*BASE, revision(FIRST_REVISION, RUNTIME)], service())
        assert outcome(got) == (FIRST_REVISION, "", False, None, True, False, False, [])
        assert not got.pin.HasField("create_revision")
        assert choice(got.pin.roll_forward) == (FIRST_REVISION, True, LIVE_HASH)

    def test_revisions_are_shared_by_runtime_name(self) -> None:
        """ "The ome.io/runtime-of label holds the runtime's name": OME finds a revision to reuse by
        that label and the hash, so a same-named runtime's revision of the same spec is shared;
        one labelled for the runtime's own kind and namespace comes first."""
        cluster = copy.deepcopy(RUNTIME)
        cluster["kind"] = "ClusterServingRuntime"
        del cluster["metadata"]["namespace"]
        same_name = revision("cr-sglang-llama-3-2-3b-590753e8", cluster)
        assert reconcile([*BASE, same_name], service()).pin.pinned_revision_name == "cr-sglang-llama-3-2-3b-590753e8"
        own = revision("r-llama-demo-sglang-llama-3-2-3b-00000000", RUNTIME)
        assert reconcile([*BASE, same_name, own], service()).pin.pinned_revision_name == own["metadata"]["name"]

    def test_revisions_are_read_in_the_ome_namespace_given(self) -> None:
        """ "If OME runs in another namespace, use it in place of ome"."""
        sources = [*BASE, revision(FIRST_REVISION, RUNTIME)]
        other = reconcile(sources, service(), ome_namespace="ome-system")
        assert (other.pin.pinned_revision_name, other.pin.create_revision.metadata.namespace) == (OWN, "ome-system")
        missing = reconcile(sources, service(pinned=FIRST_REVISION), ome_namespace="ome-system")
        assert drifted(missing) == (
            "True",
            "RevisionMissing",
            "pinned revision r-llama-demo-sglang-llama-3-2-3b-590753e8 missing from ome-system",
            "",
        )

    def test_only_a_named_runtime_can_be_pinned(self) -> None:
        """ "Only an InferenceService that names its runtime in spec.runtime.name can pin it": without
        a name autoSync: false does nothing (AutoSync)."""
        isvc = service(name=None, kind=None)
        got = reconcile([*BASE, catalog("srt/meta/llama-3-2-3b-instruct-rt.yaml")], isvc)
        assert outcome(got) == ("", None, False, None, False, False, False, [])
        assert report(got)[:2] == ("PIN_MODE_AUTO_SYNC", "PIN_STATE_NOT_APPLICABLE")

    def test_no_compatibility_check_and_no_advisory(self) -> None:
        """The pinned path skips the named runtime's compatibility check (ome-selection-facts.md 8.5)."""
        narrow = copy.deepcopy(RUNTIME)
        narrow["spec"]["modelSizeRange"] = {"min": "60B", "max": "75B"}
        assert outcome(reconcile([narrow, LLAMA_3_2_3B_CBM], service()))[7] == []
        followed = reconcile([narrow, LLAMA_3_2_3B_CBM], service(autoSync=True))
        assert [e.reason for e in followed.events] == ["RuntimeCompatibilityAdvisory"]


# ---- "When the runtime changes" -------------------------------------------------------------------


class TestWhenTheRuntimeChanges:
    def test_pinned_and_unchanged(self) -> None:
        got = reconcile([*BASE, revision(FIRST_REVISION, RUNTIME)], service(pinned=FIRST_REVISION))
        assert outcome(got) == (FIRST_REVISION, None, True, None, True, False, False, [])
        assert report(got) == (
            "PIN_MODE_MANAGED_PIN",
            "PIN_STATE_RESOLVED",
            "SYNC_STATE_ABSENT",
            LIVE_HASH,
            LIVE_HASH,
            "LIVE_RELATION_EQUAL",
        )
        assert [c.component for c in got.components] == [pb.COMPONENT_ENGINE]

    def test_a_changed_runtime_is_revision_mismatch(self) -> None:
        """RuntimeDrifted True, RevisionMismatch, with the page's message; "Drift pauses updates":
        the workload is left as it is, and the reconcile does not fail."""
        got = reconcile(
            [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)], service(pinned=FIRST_REVISION)
        )
        assert outcome(got) == paused("RevisionMismatch", MISMATCH)
        assert report(got) == (
            "PIN_MODE_MANAGED_PIN",
            "PIN_STATE_RESOLVED",
            "SYNC_STATE_ABSENT",
            CHANGED_HASH,
            LIVE_HASH,
            "LIVE_RELATION_DIFFERENT",
        )
        assert (list(got.components), got.HasField("selection")) == ([], False)
        assert got.pin.drift_reason == pb.DRIFT_REASON_REVISION_MISMATCH
        assert choice(got.pin.roll_forward) == (CHANGED_OWN, False, CHANGED_HASH)

    def test_drift_does_not_touch_runtime_ready(self) -> None:
        """ "RuntimeDrifted doesn't affect Ready": RuntimeReady is left as it is."""
        got = reconcile(
            [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION),
            has_condition=True,
        )
        assert (got.HasField("runtime_ready"), drifted(got)[1]) == (False, "RevisionMismatch")  # type: ignore[index]

    def test_undoing_the_change_removes_the_drift(self) -> None:
        got = reconcile(
            [changed(changed(), "0.9"), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION),
        )
        assert outcome(got) == (FIRST_REVISION, None, True, None, True, False, False, [])

    def test_a_parent_change_drifts_the_pinned_child(self) -> None:
        """runtime-inheritance.md, "When a parent changes": with autoSync: false the
        InferenceService keeps its snapshot of the merged spec, and RuntimeDrifted is
        RevisionMismatch."""
        isvc = service(INHERITANCE_ISVC, kind="ServingRuntime", autoSync=False)
        first = reconcile([SGLANG_PROFILE, SGLANG_CHILD, LLAMA_3_2_3B_CBM], isvc)
        pinned_to = first.pin.create_revision
        profile = yaml.safe_load(SGLANG_PROFILE)
        profile["spec"]["engineConfig"]["runner"]["image"] = "docker.io/lmsysorg/sglang:v0.5.6"
        stored = cache_pb2.CacheObject(controller_revision=pinned_to)
        got = reconcile(
            [profile, SGLANG_CHILD, LLAMA_3_2_3B_CBM, stored],
            service(INHERITANCE_ISVC, pinned=pinned_to.metadata.name, kind="ServingRuntime", autoSync=False),
        )
        assert drifted(got) == (
            "True",
            "RevisionMismatch",
            f"pinned {pinned_to.metadata.name}, live spec differs; bump ome.io/runtime-sync annotation to advance",
            "",
        )


# ---- "Roll forward to the latest runtime" ------------------------------------------------------------


class TestRollForward:
    SOURCES = [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)]

    def test_a_new_token_pins_a_revision_of_the_live_spec(self) -> None:
        """OME pins the InferenceService to a revision of the live spec, removes RuntimeDrifted,
        records the token in status.lastRuntimeSyncToken, and rolls out pods of the new spec."""
        got = reconcile(self.SOURCES, service(pinned=FIRST_REVISION, sync="mem-frac-0-85"))
        assert outcome(got) == (CHANGED_OWN, "mem-frac-0-85", False, None, True, False, False, [])
        assert got.pin.create_revision.metadata.name == CHANGED_OWN
        assert list(got.pin.create_revision.data.engine_config.runner.args)[-1] == "--mem-frac=0.85"
        assert report(got)[2] == "SYNC_STATE_PENDING"
        assert [c.component for c in got.components] == [pb.COMPONENT_ENGINE]

    def test_rolling_forward_to_a_revision_that_exists(self) -> None:
        """The page's second revision already holds the new spec: OME pins it (NAME ...-af9539ac)."""
        sources = [*self.SOURCES, revision(SECOND_REVISION, changed())]
        got = reconcile(sources, service(pinned=FIRST_REVISION, sync="mem-frac-0-85"))
        assert outcome(got) == (SECOND_REVISION, "mem-frac-0-85", False, None, True, False, False, [])
        assert not got.pin.HasField("create_revision")
        after = reconcile(sources, service(pinned=SECOND_REVISION, token="mem-frac-0-85", sync="mem-frac-0-85"))
        assert outcome(after) == (SECOND_REVISION, None, True, None, True, False, False, [])
        assert report(after)[1:3] == ("PIN_STATE_RESOLVED", "SYNC_STATE_ACKNOWLEDGED")

    def test_a_token_is_used_once(self) -> None:
        """ "OME rolls forward once for each value": the same value again is drift."""
        got = reconcile(self.SOURCES, service(pinned=FIRST_REVISION, token="mem-frac-0-85", sync="mem-frac-0-85"))
        assert drifted(got) == ("True", "RevisionMismatch", MISMATCH, "")

    def test_a_token_set_before_the_change_waits(self) -> None:
        """ "A value that you set before you change the runtime waits, and rolls the
        InferenceService forward at the next change, without reporting drift first"."""
        sources = [*BASE, revision(FIRST_REVISION, RUNTIME)]
        before = reconcile(sources, service(pinned=FIRST_REVISION, sync="ticket-42"))
        assert outcome(before) == (FIRST_REVISION, None, True, None, True, False, False, [])
        assert report(before)[2] == "SYNC_STATE_PENDING"
        after = reconcile(self.SOURCES, service(pinned=FIRST_REVISION, sync="ticket-42"))
        assert outcome(after) == (CHANGED_OWN, "ticket-42", False, None, True, False, False, [])

    def test_the_first_pin_records_the_current_token(self) -> None:
        got = reconcile(BASE, service(sync="set-before-pinning"))
        assert outcome(got)[:2] == (OWN, "set-before-pinning")

    def test_rolling_forward_does_not_clear_revision_missing(self) -> None:
        """The RuntimeDrifted table: RevisionMissing, "Rolling forward doesn't clear this reason"."""
        got = reconcile([changed(), LLAMA_3_2_3B_CBM], service(pinned=FIRST_REVISION, sync="mem-frac-0-85"))
        assert outcome(got) == paused(
            "RevisionMissing", "pinned revision r-llama-demo-sglang-llama-3-2-3b-590753e8 missing from ome"
        )


# ---- "Roll back to an earlier revision" -------------------------------------------------------------


class TestRollBack:
    SOURCES = [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME), revision(SECOND_REVISION, changed())]

    def test_spec_runtime_revision_pins_that_revision(self) -> None:
        """OME pins the InferenceService to the revision (PINNED ...-590753e8, DRIFTED <none>) and
        rolls out pods rendered from it."""
        got = reconcile(self.SOURCES, service(ROLLBACK_ISVC, pinned=SECOND_REVISION))
        assert outcome(got) == (FIRST_REVISION, None, True, None, True, False, False, [])
        assert report(got) == (
            "PIN_MODE_EXPLICIT_PIN",
            "PIN_STATE_DESIRED_REPORTED_MISMATCH",
            "SYNC_STATE_ABSENT",
            CHANGED_HASH,
            LIVE_HASH,
            "LIVE_RELATION_DIFFERENT",
        )
        assert choice(got.pin.rollback) == (FIRST_REVISION, True, LIVE_HASH)
        assert choice(got.pin.roll_forward) == (SECOND_REVISION, True, CHANGED_HASH)

    def test_runtime_changes_do_not_drift_an_explicit_pin(self) -> None:
        """ "While revision is set, the InferenceService stays on that revision, and changes to the
        runtime's spec don't make it drift"."""
        got = reconcile(self.SOURCES, service(ROLLBACK_ISVC, pinned=FIRST_REVISION))
        assert outcome(got) == (FIRST_REVISION, None, True, None, True, False, False, [])
        assert report(got)[1] == "PIN_STATE_RESOLVED"

    def test_runtime_sync_is_ignored_while_revision_is_set(self) -> None:
        got = reconcile(self.SOURCES, service(ROLLBACK_ISVC, pinned=FIRST_REVISION, sync="mem-frac-0-85"))
        assert outcome(got) == (FIRST_REVISION, None, True, None, True, False, False, [])

    def test_a_missing_revision_is_revision_missing(self) -> None:
        """The RuntimeDrifted table: "spec.runtime.revision names one that doesn't exist"."""
        got = reconcile([changed(), LLAMA_3_2_3B_CBM], service(ROLLBACK_ISVC))
        assert outcome(got) == paused(
            "RevisionMissing", "explicit pin r-llama-demo-sglang-llama-3-2-3b-590753e8 not found in namespace ome"
        )
        assert report(got)[1] == "PIN_STATE_REVISION_MISSING"
        assert choice(got.pin.rollback) == (FIRST_REVISION, False, "")

    def test_a_revision_of_another_runtime_is_runtime_mismatch(self) -> None:
        """The RuntimeDrifted table: "The revision in spec.runtime.revision belongs to a runtime
        with another name"."""
        other = revision(FIRST_REVISION, RUNTIME, owner="vllm-llama-3-2-3b")
        got = reconcile([*BASE, other], service(ROLLBACK_ISVC))
        assert outcome(got)[3:6] == (
            (
                "True",
                "RuntimeMismatch",
                'revision r-llama-demo-sglang-llama-3-2-3b-590753e8 belongs to runtime "vllm-llama-3-2-3b" '
                'but ISVC references "sglang-llama-3-2-3b"',
                "",
            ),
            False,
            True,
        )
        assert report(got)[1] == "PIN_STATE_REVISION_INVALID"

    def test_removing_revision_keeps_the_pin_and_compares_again(self) -> None:
        """ "When you remove revision and keep autoSync: false, the InferenceService stays on that
        revision, and OME compares it with the live runtime again"."""
        got = reconcile(self.SOURCES, service(ROLLBACK_ISVC, pinned=FIRST_REVISION, revision=None))
        assert drifted(got) == ("True", "RevisionMismatch", MISMATCH, "")


# ---- "Stop pinning" ------------------------------------------------------------------------------------


class TestStopPinning:
    def test_auto_sync_true_follows_the_live_runtime(self) -> None:
        """The live spec renders; status.pinnedRevisionName and any RuntimeDrifted condition keep
        their last values (nothing recorded, nothing removed)."""
        got = reconcile(
            [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION, autoSync=True),
        )
        assert outcome(got) == ("", None, False, None, False, False, False, [])
        assert report(got) == (
            "PIN_MODE_AUTO_SYNC",
            "PIN_STATE_NOT_APPLICABLE",
            "SYNC_STATE_ABSENT",
            CHANGED_HASH,
            CHANGED_HASH,
            "LIVE_RELATION_EQUAL",
        )
        assert not got.pin.HasField("roll_forward")

    def test_auto_sync_false_again_resumes_from_the_revision(self) -> None:
        """ "If you set autoSync: false again, OME resumes from that revision, not from the live spec"."""
        got = reconcile(
            [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)], service(pinned=FIRST_REVISION)
        )
        assert drifted(got) == ("True", "RevisionMismatch", MISMATCH, "")


# ---- "The RuntimeDrifted condition" and RuntimePinError ---------------------------------------------------


@pytest.mark.parametrize(
    ("sources", "isvc", "reason", "pauses"),
    [
        pytest.param(
            [changed(), LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION),
            "RevisionMismatch",
            True,
            id="RevisionMismatch",
        ),
        pytest.param(BASE, service(pinned=FIRST_REVISION), "RevisionMissing", True, id="RevisionMissing"),
        pytest.param(
            [*BASE, revision(FIRST_REVISION, RUNTIME, owner="other")],
            service(ROLLBACK_ISVC),
            "RuntimeMismatch",
            True,
            id="RuntimeMismatch",
        ),
        pytest.param(
            [LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION),
            "SourceRuntimeMissing",
            False,
            id="SourceRuntimeMissing",
        ),
    ],
)
def test_the_runtime_drifted_table(sources: list[Any], isvc: dict[str, Any], reason: str, pauses: bool) -> None:
    """OME sets RuntimeDrifted only to True; "The first three reasons pause updates"."""
    got = reconcile(sources, isvc)
    assert (drifted(got)[:2], got.workload_untouched, got.requeue, bool(got.components)) == (  # type: ignore[index]
        ("True", reason),
        pauses,
        False,
        not pauses,
    )


class TestSourceRuntimeMissing:
    SOURCES = [LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)]

    def test_a_pinned_inference_service_survives_the_deletion_of_its_runtime(self) -> None:
        """Since v1.3: "The runtime doesn't exist, and OME keeps serving from the revision"."""
        got = reconcile(self.SOURCES, service(pinned=FIRST_REVISION))
        message = "runtime sglang-llama-3-2-3b not found; serving from pinned revision r-llama-demo-sglang-llama-3-2-3b-590753e8"
        assert outcome(got) == (
            FIRST_REVISION,
            None,
            True,
            ("True", "SourceRuntimeMissing", message, ""),
            False,
            False,
            False,
            [],
        )
        ((engine),) = got.components
        assert (engine.deployment_mode, engine.mode_source) == ("RawDeployment", pb.MODE_SOURCE_DEFAULT)
        assert (got.selection.runtime.kind, got.selection.runtime.namespace, got.selection.runtime.name) == (
            pb.RUNTIME_KIND_SERVING_RUNTIME,
            "llama-demo",
            "sglang-llama-3-2-3b",
        )
        assert report(got) == (
            "PIN_MODE_MANAGED_PIN",
            "PIN_STATE_RESOLVED",
            "SYNC_STATE_ABSENT",
            "",
            LIVE_HASH,
            "LIVE_RELATION_UNKNOWN",
        )
        assert not got.pin.HasField("roll_forward")

    def test_an_explicit_pin_survives_too(self) -> None:
        got = reconcile(self.SOURCES, service(ROLLBACK_ISVC))
        assert drifted(got)[1] == "SourceRuntimeMissing"  # type: ignore[index]
        assert got.pin.served_from_revision is True

    def test_recreating_the_runtime_clears_it(self) -> None:
        """ "Recreate the runtime"."""
        got = reconcile([RUNTIME, *self.SOURCES], service(pinned=FIRST_REVISION))
        assert outcome(got) == (FIRST_REVISION, None, True, None, True, False, False, [])


class TestRuntimePinError:
    """ "When OME can't pin the InferenceService at all, it records a RuntimePinError warning
    event, leaves the serving workload as it is, and retries"."""

    def test_the_runtime_does_not_exist_the_first_time(self) -> None:
        got = reconcile([LLAMA_3_2_3B_CBM], service())
        assert outcome(got) == (
            "",
            None,
            False,
            None,
            False,
            True,
            True,
            [
                (
                    "Warning",
                    "RuntimePinError",
                    "resolve live runtime sglang-llama-3-2-3b: ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo",
                )
            ],
        )
        assert report(got)[:2] == ("PIN_MODE_MANAGED_PIN", "PIN_STATE_UNAVAILABLE")

    @pytest.mark.parametrize("pinned", ["", FIRST_REVISION], ids=["not pinned yet", "pinned"])
    def test_the_inheritance_chain_does_not_resolve(self, pinned: str) -> None:
        isvc = service(INHERITANCE_ISVC, kind="ServingRuntime", autoSync=False, pinned=pinned)
        got = reconcile([SGLANG_CHILD, LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)], isvc)
        error = 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'
        assert outcome(got)[5:] == (
            True,
            True,
            [("Warning", "RuntimePinError", f"resolve live runtime sglang-llama-3-2-3b: {error}")],
        )
        assert report(got)[1] == "PIN_STATE_UNAVAILABLE"


# ---- kubectl-ome runtime.md, effective: the pin mode, pin state, SYNC and LIVE-RELATION tables ----------


@pytest.mark.parametrize(
    ("runtime", "mode"),
    [
        pytest.param({"name": None, "kind": None}, "PIN_MODE_AUTO_SYNC", id="AutoSync: names no runtime"),
        pytest.param({"autoSync": None}, "PIN_MODE_AUTO_SYNC", id="AutoSync: autoSync unset"),
        pytest.param({"autoSync": True}, "PIN_MODE_AUTO_SYNC", id="AutoSync: autoSync true"),
        pytest.param({}, "PIN_MODE_MANAGED_PIN", id="ManagedPin"),
        pytest.param({"revision": FIRST_REVISION}, "PIN_MODE_EXPLICIT_PIN", id="ExplicitPin"),
        pytest.param({"kind": "Runtime"}, "PIN_MODE_INVALID_PIN", id="InvalidPin"),
    ],
)
def test_the_pin_mode_table(runtime: dict[str, Any], mode: str) -> None:
    got = reconcile([*BASE, revision(FIRST_REVISION, RUNTIME)], service(**runtime))
    assert pb.PinMode.Name(got.pin.mode) == mode


DISABLED = copy.deepcopy(RUNTIME)
DISABLED["spec"]["disabled"] = True


@pytest.mark.parametrize(
    ("sources", "isvc", "state"),
    [
        pytest.param(BASE, service(autoSync=True), "PIN_STATE_NOT_APPLICABLE", id="NotApplicable"),
        pytest.param(BASE, service(), "PIN_STATE_AWAITING_PIN", id="AwaitingPin"),
        pytest.param(
            [*BASE, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION),
            "PIN_STATE_RESOLVED",
            id="Resolved",
        ),
        pytest.param(
            [*BASE, revision(FIRST_REVISION, RUNTIME), revision(SECOND_REVISION, changed())],
            service(ROLLBACK_ISVC, pinned=SECOND_REVISION),
            "PIN_STATE_DESIRED_REPORTED_MISMATCH",
            id="DesiredReportedMismatch",
        ),
        pytest.param(BASE, service(pinned=FIRST_REVISION), "PIN_STATE_REVISION_MISSING", id="RevisionMissing"),
        pytest.param(
            [*BASE, revision(FIRST_REVISION, RUNTIME, ome_managed=False)],
            service(pinned=FIRST_REVISION),
            "PIN_STATE_REVISION_INVALID",
            id="RevisionInvalid: not written by OME",
        ),
        pytest.param(
            [*BASE, revision(FIRST_REVISION, RUNTIME, owner="other")],
            service(pinned=FIRST_REVISION),
            "PIN_STATE_REVISION_INVALID",
            id="RevisionInvalid: another runtime's",
        ),
        pytest.param(
            [*BASE, revision(FIRST_REVISION, DISABLED)],
            service(pinned=FIRST_REVISION),
            "PIN_STATE_REVISION_DISABLED",
            id="RevisionDisabled",
        ),
        pytest.param(
            [DISABLED, LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)],
            service(pinned=FIRST_REVISION),
            "PIN_STATE_UNAVAILABLE",
            id="Unavailable: the live runtime is disabled",
        ),
        pytest.param(
            [SGLANG_CHILD, LLAMA_3_2_3B_CBM],
            service(INHERITANCE_ISVC, kind="ServingRuntime", autoSync=True),
            "PIN_STATE_UNAVAILABLE",
            id="Unavailable: the live runtime cannot be read",
        ),
        pytest.param(
            [LLAMA_3_2_3B_CBM], service(autoSync=True), "PIN_STATE_UNAVAILABLE", id="Unavailable: AutoSync, no runtime"
        ),
        pytest.param(
            [LLAMA_3_2_3B_CBM],
            service(),
            "PIN_STATE_UNAVAILABLE",
            id="Unavailable: managed pin not reported, no runtime",
        ),
        pytest.param(BASE, service(kind="Runtime"), "PIN_STATE_INVALID_INTENT", id="InvalidIntent"),
    ],
)
def test_the_pin_state_table(sources: list[Any], isvc: dict[str, Any], state: str) -> None:
    assert pb.PinState.Name(reconcile(sources, isvc).pin.state) == state


@pytest.mark.parametrize(
    ("token", "sync", "expected"),
    [
        pytest.param("", None, "SYNC_STATE_ABSENT", id="Absent"),
        pytest.param("t1", None, "SYNC_STATE_STATUS_ONLY", id="StatusOnly"),
        pytest.param("t1", "t1", "SYNC_STATE_ACKNOWLEDGED", id="Acknowledged"),
        pytest.param("t1", "t2", "SYNC_STATE_PENDING", id="Pending"),
        pytest.param("", "t2", "SYNC_STATE_PENDING", id="Pending: no status token"),
    ],
)
def test_the_sync_table(token: str, sync: str | None, expected: str) -> None:
    got = reconcile([*BASE, revision(FIRST_REVISION, RUNTIME)], service(pinned=FIRST_REVISION, token=token, sync=sync))
    assert pb.SyncState.Name(got.pin.sync) == expected


@pytest.mark.parametrize(
    ("live", "active", "relation"),
    [
        pytest.param("a" * 64, "a" * 64, pinning.LiveRelation.EQUAL, id="Equal"),
        pytest.param("a" * 64, "b" * 64, pinning.LiveRelation.DIFFERENT, id="Different"),
        pytest.param("a" * 64, "a" * 8 + "b" * 56, pinning.LiveRelation.AMBIGUOUS, id="Ambiguous"),
        pytest.param("", "a" * 64, pinning.LiveRelation.UNKNOWN, id="Unknown: no live hash"),
        pytest.param("a" * 64, "", pinning.LiveRelation.UNKNOWN, id="Unknown: no active hash"),
    ],
)
def test_the_live_relation_rule(live: str, active: str, relation: Any) -> None:
    """LIVE-RELATION compares full hashes; Ambiguous when only the 8-character short forms match
    (two real specs that differ with equal short SHA-256 prefixes are not at hand)."""
    assert pinning.live_relation(live, active) is relation


# ---- revisions as cache objects ------------------------------------------------------------------------


def cache_revision(doc: dict[str, Any]) -> cache_pb2.CacheObject:
    return objects(doc)[0]


def violations(store: CacheStore, *docs: dict[str, Any]) -> list[tuple[str, str]]:
    with pytest.raises(RequestError) as caught:
        store.upsert("v2", [cache_revision(doc) for doc in docs])
    return [(v.field, v.description) for v in caught.value.violations]


class TestRevisionsInTheCache:
    def test_upsert_compile_count_and_delete(self) -> None:
        store = load(*BASE)
        status = store.upsert("v2", [cache_revision(revision(FIRST_REVISION, RUNTIME, created="2026-09-28T14:15:57Z"))])
        counts = {cache_pb2.ObjectKind.Name(c.kind): c.count for c in status.counts}
        assert counts == {
            "OBJECT_KIND_SERVING_RUNTIME": 1,
            "OBJECT_KIND_CLUSTER_SERVING_RUNTIME": 0,
            "OBJECT_KIND_BASE_MODEL": 0,
            "OBJECT_KIND_CLUSTER_BASE_MODEL": 1,
            "OBJECT_KIND_ACCELERATOR_CLASS": 0,
            "OBJECT_KIND_INFERENCE_SERVICE": 0,
            "OBJECT_KIND_CONTROLLER_REVISION": 1,
        }
        compiled = store.snapshot.revisions[("ome", FIRST_REVISION)]
        assert (
            compiled.owner_name,
            compiled.owner_kind,
            compiled.owner_namespace,
            compiled.short_hash,
            compiled.number,
            compiled.ome_managed,
            compiled.created,
        ) == ("sglang-llama-3-2-3b", "ServingRuntime", "llama-demo", LIVE_HASH, 1, True, 1790604957.0)
        key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CONTROLLER_REVISION, namespace="ome", name=FIRST_REVISION)
        status, missing = store.delete("v3", [key])
        assert (missing, ("ome", FIRST_REVISION) in store.snapshot.revisions) == ([], False)
        assert store.snapshot.revisions_holding("ome", "sglang-llama-3-2-3b", compiled.full_hash) == ()

    def test_replacing_a_revision_reindexes_its_content(self) -> None:
        store = load(*BASE, revision(FIRST_REVISION, RUNTIME))
        full = store.snapshot.revisions[("ome", FIRST_REVISION)].full_hash
        store.upsert("v2", [cache_revision(revision(FIRST_REVISION, changed()))])
        assert store.snapshot.revisions_holding("ome", "sglang-llama-3-2-3b", full) == ()
        assert store.snapshot.revisions[("ome", FIRST_REVISION)].short_hash == CHANGED_HASH

    def test_validated_like_the_other_kinds(self) -> None:
        store = load(*BASE)
        before = store.status()
        no_data = revision(FIRST_REVISION, RUNTIME)
        del no_data["data"]
        negative = revision(SECOND_REVISION, RUNTIME)
        negative["revision"] = -1
        cluster_scoped = revision("cr-x-00000000", RUNTIME)
        del cluster_scoped["metadata"]["namespace"]
        wrong = revision("Bad_Name", RUNTIME)
        wrong["apiVersion"] = "ome.io/v1beta1"
        bad_entry = revision("r-a-b-00000000", RUNTIME)
        bad_entry["data"]["supportedModelFormats"][0]["priority"] = 0
        assert violations(store, no_data, negative, cluster_scoped, wrong, bad_entry) == [
            ("objects[0].controller_revision.data", "Required value: data is mandatory"),
            ("objects[1].controller_revision.revision", "Invalid value: -1: must be greater than or equal to 0"),
            ("objects[2].controller_revision.metadata.namespace", "Required value"),
            (
                "objects[3].controller_revision.metadata.name",
                'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lowercase alphanumeric '
                "characters, '-' or '.', and must start and end with an alphanumeric character",
            ),
            (
                "objects[3].controller_revision.api_version",
                'Unsupported value: "ome.io/v1beta1": supported values: "apps/v1"',
            ),
            (
                "objects[4].controller_revision.data.supported_model_formats[0].priority",
                "Invalid value: 0: must be greater than or equal to 1",
            ),
        ]
        assert store.status() == before  # a rejected write changes nothing

    def test_a_delete_key_needs_the_namespace(self) -> None:
        store = load(*BASE)
        key = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CONTROLLER_REVISION, name=FIRST_REVISION)
        with pytest.raises(RequestError) as caught:
            store.delete("v2", [key])
        assert [(v.field, v.description) for v in caught.value.violations] == [("keys[0].namespace", "Required value")]

    def test_the_loader_reads_kubectl_get_controllerrevisions(self, tmp_path: Any) -> None:
        """`kubectl get controllerrevisions -n ome -l ome.io/runtime-of=sglang-llama-3-2-3b -o yaml`
        prints a List; its revisions load as cache objects, with no unknown-field warnings for the
        parts of the spec the protos do not model (ports, volumes, probes ...)."""
        listing = {
            "apiVersion": "v1",
            "kind": "List",
            "items": [
                revision(FIRST_REVISION, RUNTIME, created="2026-09-28T14:15:57Z"),
                revision(SECOND_REVISION, changed(), created="2026-09-28T14:17:13Z"),
            ],
        }
        path = tmp_path / "revisions.yaml"
        path.write_text(yaml.safe_dump(listing))
        result = load_manifests([str(path)])
        assert (result.errors, result.warnings) == ([], [])
        assert [o.controller_revision.metadata.name for o in result.objects] == [FIRST_REVISION, SECOND_REVISION]
        store = CacheStore()
        store.apply_snapshot("v1", result.objects)
        assert [store.snapshot.revisions[("ome", n)].short_hash for n in (FIRST_REVISION, SECOND_REVISION)] == [
            LIVE_HASH,
            CHANGED_HASH,
        ]

    def test_a_revision_of_another_api_version_is_skipped(self, tmp_path: Any) -> None:
        doc = revision(FIRST_REVISION, RUNTIME)
        doc["apiVersion"] = "apps/v1beta1"
        path = tmp_path / "revision.yaml"
        path.write_text(yaml.safe_dump(doc))
        result = load_manifests([str(path)])
        assert (result.objects, result.skipped) == (
            [],
            [f"{path}: document 0: skipped ControllerRevision {FIRST_REVISION} (apiVersion apps/v1beta1)"],
        )


def test_reconcile_rejects_a_bad_ome_namespace() -> None:
    store = load(*BASE)
    request = pb.ReconcileInferenceServiceRequest(inference_service=inference_service(service()), ome_namespace="OME")
    with pytest.raises(RequestError) as caught:
        lifecycle.reconcile_inference_service(store.snapshot, request)
    assert [(v.field, v.description) for v in caught.value.violations] == [
        (
            "ome_namespace",
            'Invalid value: "OME": a lowercase RFC 1123 label must consist of lowercase alphanumeric characters or '
            "'-', and must start and end with an alphanumeric character",
        )
    ]


# ---- the admission webhook's pin messages ----------------------------------------------------------------


def admit(sources: list[Any], isvc: Any) -> pb.AdmitInferenceServiceResponse:
    store = load(*sources)
    return lifecycle.admit_inference_service(
        store.snapshot, pb.AdmitInferenceServiceRequest(inference_service=inference_service(isvc))
    )


class TestAdmission:
    def test_a_pinned_inference_service_whose_runtime_is_missing(self) -> None:
        """ "While the runtime is missing or disabled, it rejects every update to an
        InferenceService that has spec.model and an engine section"; the page's reason."""
        got = admit([LLAMA_3_2_3B_CBM, revision(FIRST_REVISION, RUNTIME)], service(pinned=FIRST_REVISION))
        assert (got.allowed, got.denial_message) == (
            False,
            "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
            "ServingRuntime sglang-llama-3-2-3b not found in namespace llama-demo",
        )

    def test_a_pinned_inference_service_whose_runtime_is_disabled(self) -> None:
        got = admit([DISABLED, LLAMA_3_2_3B_CBM], service())
        assert (got.allowed, got.denial_message) == (
            False,
            "runtime sglang-llama-3-2-3b does not support model llama-3-2-3b-instruct: "
            "namespace-scoped runtime sglang-llama-3-2-3b is disabled",
        )

    def test_the_webhook_does_not_check_that_the_revision_exists(self) -> None:
        got = admit(BASE, service(ROLLBACK_ISVC))
        assert (got.allowed, got.denial_message, list(got.warnings)) == (True, "", [])

    def test_a_cluster_revision_for_kind_serving_runtime(self) -> None:
        """The page's quoted reason, with the page's pinned isvc.yaml."""
        got = admit(BASE, service(revision="cr-sglang-llama-3-2-3b-590753e8"))
        assert (got.allowed, got.denial_message) == (
            False,
            'spec.runtime.revision "cr-sglang-llama-3-2-3b-590753e8" does not match the expected naming convention '
            'for runtime "sglang-llama-3-2-3b" (ServingRuntime); expected the form '
            "r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>",
        )

    @pytest.mark.parametrize(
        "name",
        [
            "r-llama-demo-sglang-llama-3-2-3b-590753E8",
            "r-llama-demo-sglang-llama-3-2-3b-590753e",
            "r-team-a-sglang-llama-3-2-3b-590753e8",
        ],
        ids=["uppercase hex", "7 hex chars", "another namespace"],
    )
    def test_the_name_must_have_the_form_for_the_runtime(self, name: str) -> None:
        got = admit(BASE, service(revision=name))
        assert got.denial_message == (
            f'spec.runtime.revision "{name}" does not match the expected naming convention for runtime '
            '"sglang-llama-3-2-3b" (ServingRuntime); expected the form r-llama-demo-sglang-llama-3-2-3b-<8 lowercase hex chars>'
        )

    def test_a_revision_needs_auto_sync_false(self) -> None:
        got = admit(BASE, service(ROLLBACK_ISVC, autoSync=None))
        assert (got.allowed, got.denial_message) == (
            False,
            "spec.runtime.revision requires spec.runtime.autoSync=false; AutoSync=true would silently ignore the pin",
        )


def test_an_inference_service_status_parses_from_yaml() -> None:
    """The status fields the pin reads, as `kubectl get inferenceservice -o yaml` prints them."""
    doc = service(pinned=FIRST_REVISION, token="mem-frac-0-85")
    doc["status"]["conditions"] = [
        {"type": "RuntimeDrifted", "status": "True", "reason": "RevisionMismatch", "message": MISMATCH}
    ]
    doc["status"]["observedGeneration"] = 3
    parsed = json_format.ParseDict(doc, types_pb2.InferenceService())
    assert (
        parsed.status.pinned_revision_name,
        parsed.status.last_runtime_sync_token,
        parsed.status.observed_generation,
        parsed.status.conditions[0].reason,
    ) == (FIRST_REVISION, "mem-frac-0-85", 3, "RevisionMismatch")


# ---- cached pinned InferenceServices: PreviewCacheChange / WatchSelections ---------------------------


class TestCachedPinnedInferenceServices:
    """A revision write moves the outcome of a cached pinned InferenceService (its dependencies
    include the revisions it names), with the revision as the cause and the pin as the reason."""

    STORE_SOURCES = [*BASE, revision(FIRST_REVISION, RUNTIME), service(pinned=FIRST_REVISION)]
    KEY = cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_CONTROLLER_REVISION, namespace="ome", name=FIRST_REVISION)

    def preview(
        self, upserts: tuple[Any, ...] = (), deletes: tuple[cache_pb2.ObjectKey, ...] = ()
    ) -> pb.PreviewCacheChangeResponse:
        store = load(*self.STORE_SOURCES)
        return runtimes.preview_cache_change(
            store.snapshot, pb.PreviewCacheChangeRequest(upserts=objects(*upserts), deletes=deletes)
        )

    def test_deleting_the_pinned_revision(self) -> None:
        (change,) = self.preview(deletes=(self.KEY,)).changes
        assert ([c.text for c in change.causes], change.reason.step, change.reason.text) == (
            [f"ControllerRevision ome/{FIRST_REVISION}: deleted"],
            pb.CHANGE_STEP_NAMED_RUNTIME,
            f"named runtime sglang-llama-3-2-3b: revision {FIRST_REVISION} → RuntimeDrifted RevisionMissing: "
            f"pinned revision {FIRST_REVISION} missing from ome",
        )
        assert (change.before.runtime.name, change.after.HasField("runtime"), list(change.after.components)) == (
            "sglang-llama-3-2-3b",
            False,
            [],
        )

    def test_replacing_the_pinned_revision(self) -> None:
        (change,) = self.preview(upserts=(revision(FIRST_REVISION, changed()),)).changes
        assert [c.text for c in change.causes] == [f"ControllerRevision ome/{FIRST_REVISION}: data changed"]
        assert change.reason.text == (
            f"named runtime sglang-llama-3-2-3b: revision {FIRST_REVISION} → RuntimeDrifted RevisionMismatch: {MISMATCH}"
        )

    def test_deleting_the_runtime_moves_nothing(self) -> None:
        """SourceRuntimeMissing: the revision keeps serving, so the outcome stays."""
        runtime_key = cache_pb2.ObjectKey(
            kind=cache_pb2.OBJECT_KIND_SERVING_RUNTIME, namespace="llama-demo", name="sglang-llama-3-2-3b"
        )
        assert list(self.preview(deletes=(runtime_key,)).changes) == []

    def test_another_revision_moves_nothing(self) -> None:
        got = self.preview(upserts=(revision(SECOND_REVISION, changed()),))
        assert (list(got.changes), got.reevaluated) == ([], 0)
