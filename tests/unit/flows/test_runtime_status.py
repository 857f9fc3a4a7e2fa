"""``GetRuntimeStatus``: what OME's controller writes on a runtime (concepts/runtimes/
runtime-inheritance.md, "What admission checks" and "When a chain breaks"), in process: the
merged spec with its chain, ``status.inheritanceChain`` (kept after a parent is deleted), the
``InheritanceReady`` condition with the reasons of the page's table, and the Warning event.
The ``Resolved`` message is OME's controller's (the page gives none)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from helpers_docs import PROFILE_COMMAND, SGLANG_CHILD, SGLANG_PROFILE, SGLANG_RUNTIME, load, objects, runtime
from ome.selector.v1 import cache_pb2
from ome.selector.v1 import selector_pb2 as pb
from ome_selector.cache.store import CacheStore
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import runtimes

CHILD = pb.RuntimeRef(kind=pb.RUNTIME_KIND_SERVING_RUNTIME, namespace="llama-demo", name="sglang-llama-3-2-3b")
PROFILE = pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="sglang-profile")
CHAIN = ["sglang-profile", "sglang-llama-3-2-3b"]
PARENT_NOT_FOUND = 'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])'


def status(store: CacheStore, ref: pb.RuntimeRef = CHILD) -> pb.GetRuntimeStatusResponse:
    return runtimes.get_runtime_status(store.snapshot, pb.GetRuntimeStatusRequest(runtime=ref))


def condition(response: pb.GetRuntimeStatusResponse) -> tuple[str, str, str, str]:
    """The page's columns: READY and REASON of InheritanceReady, and its message and type."""
    (c,) = response.status.conditions
    return (c.type, c.status, c.reason, c.message)


def refs(response: pb.GetRuntimeStatusResponse) -> list[tuple[int, str, str]]:
    return [(r.kind, r.namespace, r.name) for r in response.inheritance_chain]


def events(response: pb.GetRuntimeStatusResponse) -> list[tuple[str, str, str]]:
    return [(e.type, e.reason, e.message) for e in response.events]


def delete(store: CacheStore, kind: int, name: str, namespace: str = "") -> None:
    store.delete("", [cache_pb2.ObjectKey(kind=kind, namespace=namespace, name=name)])


class TestChainHealthInStatus:
    def test_the_pages_runtime(self) -> None:
        """CHAIN sglang-profile,sglang-llama-3-2-3b, READY True, REASON Resolved."""
        got = status(load(SGLANG_PROFILE, SGLANG_CHILD))
        assert list(got.status.inheritance_chain) == CHAIN
        assert condition(got) == ("InheritanceReady", "True", "Resolved", "inheritance chain resolved")
        assert refs(got) == [
            (pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, "", "sglang-profile"),
            (pb.RUNTIME_KIND_SERVING_RUNTIME, "llama-demo", "sglang-llama-3-2-3b"),
        ]
        assert events(got) == []
        assert (got.runtime.kind, got.runtime.namespace, got.runtime.name) == (
            pb.RUNTIME_KIND_SERVING_RUNTIME,
            "llama-demo",
            "sglang-llama-3-2-3b",
        )

    def test_the_merged_spec(self) -> None:
        """runtime-inheritance.md, "What merges": the image and the command from the profile, the
        flags from the child; disabled: false overrides the profile's true; the child's formats."""
        spec = status(load(SGLANG_PROFILE, SGLANG_CHILD)).spec
        runner = spec.engine_config.runner
        assert (runner.name, runner.image, list(runner.command), list(runner.args)) == (
            "ome-container",
            "docker.io/lmsysorg/sglang:v0.5.5.post3-cu129-amd64",
            PROFILE_COMMAND,
            ["--tp-size=1", "--mem-frac=0.9"],
        )
        assert (spec.HasField("disabled"), spec.disabled) == (True, False)
        assert (spec.model_size_range.min, spec.model_size_range.max) == ("2B", "4B")
        assert [e.model_architecture for e in spec.supported_model_formats] == ["LlamaForCausalLM"]

    def test_a_runtime_without_a_parent_is_its_own_chain(self) -> None:
        got = status(load(SGLANG_PROFILE), PROFILE)
        assert (list(got.status.inheritance_chain), refs(got)) == (
            ["sglang-profile"],
            [(pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, "", "sglang-profile")],
        )
        assert condition(got) == ("InheritanceReady", "True", "Resolved", "inheritance chain resolved")
        assert (got.spec.disabled, got.spec.engine_config.runner.args) == (True, [])

    def test_deleting_the_parent_breaks_the_chain_and_keeps_it_in_status(self) -> None:
        """ "If you delete sglang-profile ... InheritanceReady turns False, with a reason from What
        admission checks ... OME also records a warning event on the runtime, and
        inheritanceChain keeps the last chain that resolved"."""
        store = load(SGLANG_PROFILE, SGLANG_CHILD)
        delete(store, cache_pb2.OBJECT_KIND_CLUSTER_SERVING_RUNTIME, "sglang-profile")
        got = status(store)
        assert condition(got) == ("InheritanceReady", "False", "ParentNotFound", PARENT_NOT_FOUND)
        assert list(got.status.inheritance_chain) == CHAIN
        assert events(got) == [("Warning", "ParentNotFound", PARENT_NOT_FOUND)]
        assert (got.HasField("spec"), refs(got), got.spec_hash) == (False, [], "")

    def test_creating_the_missing_parent_returns_to_resolved(self) -> None:
        store = load(SGLANG_CHILD)
        assert condition(status(store))[1:3] == ("False", "ParentNotFound")
        store.upsert("", objects(SGLANG_PROFILE))
        got = status(store)
        assert (condition(got)[1:3], list(got.status.inheritance_chain), events(got)) == (
            ("True", "Resolved"),
            CHAIN,
            [],
        )

    def test_a_new_snapshot_without_the_parent_keeps_the_chain(self) -> None:
        """ApplySnapshot replaces the cache; the chain the runtime had before is kept all the same."""
        store = load(SGLANG_PROFILE, SGLANG_CHILD)
        store.apply_snapshot("v2", objects(SGLANG_CHILD))
        assert list(status(store).status.inheritance_chain) == CHAIN

    def test_the_status_the_controller_sent_is_kept(self) -> None:
        """A runtime cached with the status OME's controller wrote keeps that chain when it is
        broken from the start here."""
        child = yaml.safe_load(SGLANG_CHILD)
        child["status"] = {"inheritanceChain": CHAIN}
        got = status(load(child))
        assert (condition(got)[2], list(got.status.inheritance_chain)) == ("ParentNotFound", CHAIN)

    def test_never_resolved_has_no_chain(self) -> None:
        assert list(status(load(SGLANG_CHILD)).status.inheritance_chain) == []

    def test_the_generation_is_observed(self) -> None:
        child = yaml.safe_load(SGLANG_CHILD)
        child["metadata"]["generation"] = 4
        (c,) = status(load(SGLANG_PROFILE, child)).status.conditions
        assert c.observed_generation == 4


# ---- the table of "What admission checks": the InheritanceReady reason column -----------------------


def _self_reference() -> list[Any]:
    child = yaml.safe_load(SGLANG_CHILD)
    child["metadata"]["annotations"]["ome.io/inherit-from"] = "sglang-llama-3-2-3b"
    return [child]


def _same_name_cluster_runtime() -> list[Any]:
    cluster = copy.deepcopy(yaml.safe_load(SGLANG_PROFILE))
    cluster["metadata"] = {"name": "sglang-llama-3-2-3b", "annotations": {"ome.io/inherit-from": "sglang-llama-3-2-3b"}}
    child = yaml.safe_load(SGLANG_CHILD)
    child["metadata"]["annotations"]["ome.io/inherit-from"] = "sglang-llama-3-2-3b"
    return [cluster, child]


def _too_deep() -> list[Any]:
    chain = [runtime(f"r{i}", inherit_from=f"r{i + 1}" if i < 5 else None) for i in range(6)]
    child = yaml.safe_load(SGLANG_CHILD)
    child["metadata"]["annotations"]["ome.io/inherit-from"] = "r0"
    return [*chain, child]


@pytest.mark.parametrize(
    ("sources", "reason", "message"),
    [
        pytest.param([SGLANG_CHILD], "ParentNotFound", PARENT_NOT_FOUND, id="a parent doesn't exist"),
        pytest.param(
            _self_reference(),
            "InheritanceCycle",
            "inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]",
            id="a runtime names itself",
        ),
        pytest.param(
            _same_name_cluster_runtime(),
            "InheritanceCycle",
            "inheritance cycle detected: [sglang-llama-3-2-3b sglang-llama-3-2-3b]",
            id="a ServingRuntime names a ClusterServingRuntime with its own name",
        ),
        pytest.param(
            _too_deep(),
            "MaxDepthExceeded",
            "inheritance chain exceeds max depth 5 (chain: [sglang-llama-3-2-3b r0 r1 r2 r3])",
            id="more than five runtimes",
        ),
    ],
)
def test_the_inheritance_ready_reasons(sources: list[Any], reason: str, message: str) -> None:
    got = status(load(*sources))
    assert condition(got) == ("InheritanceReady", "False", reason, message)
    assert events(got) == [("Warning", reason, message)]


def test_a_profile_without_disabled_is_not_an_inheritance_problem() -> None:
    """The table's last row: the profile marker has no InheritanceReady reason (the webhook's rule)."""
    profile = yaml.safe_load(SGLANG_PROFILE)
    del profile["spec"]["disabled"]
    assert condition(status(load(profile), PROFILE))[1:3] == ("True", "Resolved")


def test_the_spec_hash_is_a_revisions_hash() -> None:
    """The short hash a revision pinned to the spec now gets: serving-runtimes.md's runtime.yaml
    gives 9cb717d7, as r-llama-demo-sglang-llama-3-2-3b-9cb717d7 in test_runtime_revisions.py."""
    assert status(load(SGLANG_RUNTIME)).spec_hash == "9cb717d7"


# ---- bad requests --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ref", "expected"),
    [
        pytest.param(pb.RuntimeRef(name="x"), [("runtime.kind", "Required value")], id="no kind"),
        pytest.param(
            pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, namespace="ns", name="x"),
            [("runtime.namespace", "Forbidden: ClusterServingRuntime is cluster-scoped and takes no namespace")],
            id="a cluster runtime with a namespace",
        ),
        pytest.param(
            pb.RuntimeRef(kind=pb.RUNTIME_KIND_SERVING_RUNTIME, name="x"),
            [("runtime.namespace", "Required value")],
            id="a namespaced runtime without one",
        ),
        pytest.param(
            pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME),
            [("runtime.name", "Required value")],
            id="no name",
        ),
        pytest.param(
            pb.RuntimeRef(kind=7, name="x"),  # type: ignore[arg-type]
            [("runtime.kind", "unknown kind 7")],
            id="an unknown kind",
        ),
    ],
)
def test_bad_requests_are_invalid_argument(ref: pb.RuntimeRef, expected: list[tuple[str, str]]) -> None:
    with pytest.raises(RequestError) as caught:
        status(load(SGLANG_PROFILE), ref)
    assert (caught.value.code, [(v.field, v.description) for v in caught.value.violations]) == (
        "INVALID_ARGUMENT",
        expected,
    )


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        pytest.param(CHILD, 'servingruntimes.ome.io "sglang-llama-3-2-3b" not found', id="ServingRuntime"),
        pytest.param(
            pb.RuntimeRef(kind=pb.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="sglang-llama-3-2-3b"),
            'clusterservingruntimes.ome.io "sglang-llama-3-2-3b" not found',
            id="ClusterServingRuntime",
        ),
    ],
)
def test_an_unknown_runtime_is_not_found(ref: pb.RuntimeRef, message: str) -> None:
    with pytest.raises(RequestError) as caught:
        status(load(SGLANG_PROFILE), ref)
    assert (caught.value.code, str(caught.value)) == ("NOT_FOUND", message)


def test_unavailable_until_synced() -> None:
    with pytest.raises(RequestError) as caught:
        status(CacheStore())
    assert caught.value.code == "UNAVAILABLE"
