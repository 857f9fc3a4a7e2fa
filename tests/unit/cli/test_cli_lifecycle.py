"""The ``ome-selector`` lifecycle commands: ``explain --model``, ``effective``, ``admit``,
``reconcile`` and ``validate-runtime``, offline and against a server: exact output, exit codes."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from google.protobuf import json_format
from helpers_docs import ACCELERATOR_REASON, SCORING_FILE, SEED_A_A100_FILE, SEED_A_FILE, SEED_A_NAMED_FILE, SEED_B_FILE
from ome.selector.v1 import selector_pb2
from ome_selector.cache.manifests import load_manifests, manifests_version
from ome_selector.cli import app as cli
from ome_selector.examples import example_paths

HOPPER = str(EXAMPLES / "llama-3-3-70b-hopper.yaml")
MODELS = str(EXAMPLES / "models.yaml")
EXAMPLES_VERSION = manifests_version(load_manifests(example_paths()).objects)
NO_RUNTIMES_NOTE = "No serving runtimes found in the selected namespace or at cluster scope.\n"
EXPLICIT_NOTE = "Note: spec.runtime is explicit; automatic selection below is hypothetical.\n"
ISVC_WEBHOOK_DENIED = (
    'Error from server: admission webhook "inferenceservice.ome-webhook-server.validator" denied the request: '
)
NO_RUNTIME_A100 = (
    "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
    "Checked 7 runtimes (1 namespace-scoped, 6 cluster-scoped). Excluded runtimes: "
    + "; ".join(
        f"{name} ({ACCELERATOR_REASON})"
        for name in (
            "team-llama",
            "llama-3-3-70b-hopper",
            "srt-llama-3-3-70b-instruct",
            "srt-llama-3-3-70b-instruct-multinode",
            "srt-llama-large",
            "srt-llama-small",
            "vllm-llama",
        )
    )
)
NAMED_CHECK = "runtime srt-llama-3-3-70b-instruct does not support model : runtime does not support the required accelerator class"
FRAMEWORK_4_45 = (
    "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: "
    "framework version mismatch (model=4.45.0.dev0, runtime=4.47.0.dev0)"
)

# Runtimes and models the example catalog lacks: an inheritance chain (a ClusterServingRuntime
# child whose router declares MultiNode, and a ServingRuntime child), a cycle, a disabled runtime,
# a profile, and a disabled model. Loaded after the examples with --manifests.
EXTRA_CATALOG = """\
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: vllm-base
spec:
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
  engineConfig:
    runner: {name: ome-container, image: docker.io/vllm/vllm-openai:v0.11.0}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: vllm-child
  annotations: {ome.io/inherit-from: vllm-base}
spec:
  routerConfig:
    annotations: {ome.io/deploymentMode: MultiNode}
---
apiVersion: ome.io/v1beta1
kind: ServingRuntime
metadata:
  name: team-child
  namespace: llama-demo
  annotations: {ome.io/inherit-from: vllm-base}
spec: {}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: loop-a
  annotations: {ome.io/inherit-from: loop-b}
spec: {}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: loop-b
  annotations: {ome.io/inherit-from: loop-a}
spec: {}
---
apiVersion: ome.io/v1beta1
kind: ClusterServingRuntime
metadata:
  name: retired
spec:
  disabled: true
  supportedModelFormats:
    - modelFormat: {name: safetensors, version: "1.0.0"}
      modelFramework: {name: transformers, version: "4.45.0.dev0"}
      modelArchitecture: LlamaForCausalLM
      autoSelect: true
"""

# InferenceServices in llama-demo for the extra catalog: name -> spec (and annotations).
SCENARIOS = {
    "chain": "spec:\n  model: {name: llama-3-2-3b-instruct, kind: BaseModel}\n  runtime: {name: vllm-child}\n"
    "  engine: {minReplicas: 1}\n  decoder: {minReplicas: 1}\n  router: {minReplicas: 1}\n",
    "team-chain": "spec:\n  model: {name: llama-3-2-3b-instruct}\n  runtime: {name: team-child, kind: ServingRuntime}\n"
    "  engine: {minReplicas: 1}\n",
    "missing": "spec:\n  model: {name: llama-3-2-3b-instruct}\n  runtime: {name: nope}\n  engine: {minReplicas: 1}\n",
    "loop": "spec:\n  model: {name: llama-3-2-3b-instruct}\n  runtime: {name: loop-a}\n  engine: {minReplicas: 1}\n",
    "disabled": "spec:\n  model: {name: llama-3-2-3b-instruct}\n  runtime: {name: retired}\n  engine: {minReplicas: 1}\n",
    "b200": "spec:\n  model: {name: llama-3-3-70b-instruct}\n  runtime: {name: llama-3-3-70b-hopper}\n"
    "  acceleratorSelector: {acceleratorClass: nvidia-b200}\n  engine: {minReplicas: 1}\n",
    "cheapest": "spec:\n  model: {name: llama-3-3-70b-instruct}\n  runtime: {name: llama-3-3-70b-hopper}\n"
    "  acceleratorSelector: {policy: Cheapest}\n  engine: {minReplicas: 1}\n",
    "virtual": "  annotations: {ome.io/deploymentMode: VirtualDeployment}\n"
    "spec:\n  model: {name: llama-3-3-70b-instruct}\n  engine: {minReplicas: 1}\n",
    "no-engine": "spec:\n  model: {name: llama-3-3-70b-instruct}\n",
    "decoder-only": "spec:\n  model: {name: llama-3-3-70b-instruct}\n  decoder: {minReplicas: 1}\n",
    "no-model": "spec:\n  engine: {minReplicas: 1}\n",
}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def table(*lines: str) -> str:
    return "\n".join(lines) + "\n"


@pytest.fixture
def extra(tmp_path: Path) -> Path:
    path = tmp_path / "extra.yaml"
    path.write_text(EXTRA_CATALOG)
    return path


@pytest.fixture
def scenario(tmp_path: Path) -> Any:
    def write(name: str) -> str:
        path = tmp_path / f"{name}.yaml"
        path.write_text(
            f"apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata:\n  name: {name}\n  namespace: llama-demo\n"
            + SCENARIOS[name]
        )
        return str(path)

    return write


def with_extra(extra: Path) -> list[str]:
    return ["--manifests", *example_paths(), str(extra)]


# --- explain --model ----------------------------------------------------------------------------


def test_explain_model_scoring_page_order(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo")
    assert (code, err) == (0, "")
    assert out == table(
        "RUNTIME                                SCOPE        COMPATIBLE   PRIORITY   WEIGHT   SCORE   REASON",
        "team-llama                             Namespaced   Yes          1          2        2       -",
        "vllm-llama                             Cluster      Yes          2          6        6       -",
        "srt-llama-small                        Cluster      Yes          3          6        6       -",
        "srt-llama-large                        Cluster      Yes          3          6        6       -",
        f"llama-3-3-70b-hopper                   Cluster      No           -          -        -       {FRAMEWORK_4_45}",
        f"srt-llama-3-3-70b-instruct             Cluster      No           -          -        -       {FRAMEWORK_4_45}",
        f"srt-llama-3-3-70b-instruct-multinode   Cluster      No           -          -        -       {FRAMEWORK_4_45}",
    )


def test_explain_model_matches_explain_isvc_without_isvc_checks(capsys: pytest.CaptureFixture[str]) -> None:
    # The InferenceService of the scoring example asks for no class or mode: the same table.
    by_isvc = run(capsys, "explain", "-f", SCORING_FILE)
    by_model = run(capsys, "explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo")
    assert by_model == by_isvc
    # seed A asks for nvidia-h100, so --isvc excludes runtimes that --model ranks.
    code, out, _ = run(capsys, "explain", "--model", "llama-3-3-70b-instruct")  # a ClusterBaseModel, from "default"
    assert code == 0
    assert [line.split()[:3] for line in out.splitlines()[1:4]] == [
        ["srt-llama-3-3-70b-instruct-multinode", "Cluster", "Yes"],
        ["llama-3-3-70b-hopper", "Cluster", "Yes"],
        ["srt-llama-3-3-70b-instruct", "Cluster", "No"],
    ]


def test_explain_model_unknown_model_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    # A BaseModel of llama-demo is not found from another namespace.
    assert run(capsys, "explain", "--model", "llama-3-2-3b-instruct") == (
        1,
        "",
        'error: clusterbasemodels.ome.io "llama-3-2-3b-instruct" not found\n',  # the API server's error alone
    )


def test_explain_model_invalid_name_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "--model", "Not_A_Name", "-n", "llama-demo")
    assert (code, out) == (1, "")
    assert err == (
        'error: invalid request: model.name: Invalid value: "Not_A_Name": a lowercase RFC 1123 subdomain must '
        "consist of lowercase alphanumeric characters, '-' or '.', and must start and end with an alphanumeric "
        "character\n"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["explain"],
        ["explain", "-n", "llama-demo"],
        ["explain", "--model", "llama-3-2-3b-instruct", "-f", SCORING_FILE],
    ],
)
def test_explain_needs_exactly_one_of_model_and_file(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert run(capsys, *argv) == (1, "", "error: exactly one of --model or --isvc is required\n")


def test_explain_model_without_runtimes_exits_0_without_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "explain", "--model", "llama-3-3-70b-instruct", "--manifests", MODELS) == (
        0,
        "",
        NO_RUNTIMES_NOTE,
    )
    # -o json carries the note in the response instead of stderr.
    code, out, err = run(capsys, "explain", "--model", "llama-3-3-70b-instruct", "--manifests", MODELS, "-o", "json")
    assert (code, err) == (0, "")
    response = json_format.Parse(out, selector_pb2.ExplainRuntimesResponse())
    assert (list(response.notes), len(response.runtimes)) == ([NO_RUNTIMES_NOTE.strip()], 0)


def test_explain_notes_come_from_the_response(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "explain", "-f", SEED_A_NAMED_FILE)
    assert (code, err) == (0, EXPLICIT_NOTE)
    code, out, err = run(capsys, "explain", "-f", SEED_A_NAMED_FILE, "-o", "json")
    assert (code, err) == (0, "")
    assert list(json_format.Parse(out, selector_pb2.ExplainRuntimesResponse()).notes) == [EXPLICIT_NOTE.strip()]
    # Both notes at once: a named runtime and no runtimes at all.
    assert run(capsys, "explain", "-f", SEED_A_NAMED_FILE, "--manifests", MODELS) == (
        0,
        "",
        EXPLICIT_NOTE + NO_RUNTIMES_NOTE,
    )


def test_explain_model_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo", "-o", "json")
    assert code == 0
    response = json_format.Parse(out, selector_pb2.ExplainRuntimesResponse())
    assert (response.model.kind, response.model.namespace, response.model.name) == (
        "BaseModel",
        "llama-demo",
        "llama-3-2-3b-instruct",
    )
    assert [r.runtime.name for r in response.runtimes if r.verdict == selector_pb2.VERDICT_CANDIDATE] == [
        "team-llama",
        "vllm-llama",
        "srt-llama-small",
        "srt-llama-large",
    ]
    assert response.cache_version == EXAMPLES_VERSION


# --- effective ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "isvc, code, expected",
    [
        (
            SCORING_FILE,
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              SR/llama-demo/team-llama",
                "Live      HASH                 a0a4b049",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   - (RuntimeListsNone)",
                "Active    STATE                Available",
                "Active    RUNTIME              SR/llama-demo/team-llama",
                "Active    HASH                 a0a4b049",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           SR/llama-demo/team-llama",
            ],
        ),
        (
            SEED_A_FILE,
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              CSR/llama-3-3-70b-hopper",
                "Live      HASH                 28a67c61",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   nvidia-h100 (Selector)",
                "Active    STATE                Available",
                "Active    RUNTIME              CSR/llama-3-3-70b-hopper",
                "Active    HASH                 28a67c61",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/llama-3-3-70b-hopper",
            ],
        ),
        (
            SEED_B_FILE,
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              CSR/llama-3-3-70b-hopper",
                "Live      HASH                 28a67c61",
                "Live      ENGINE               OMENative (ServiceSpec)",
                "Live      ENGINE-ACCELERATOR   - (NotRequested)",
                "Active    STATE                Available",
                "Active    RUNTIME              CSR/llama-3-3-70b-hopper",
                "Active    HASH                 28a67c61",
                "Active    ENGINE               OMENative (ServiceSpec)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/llama-3-3-70b-hopper",
            ],
        ),
        (
            SEED_A_NAMED_FILE,
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              CSR/srt-llama-3-3-70b-instruct",
                "Live      HASH                 1ffc4ead",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   - (RuntimeListsNone)",
                "Active    STATE                Available",
                "Active    RUNTIME              CSR/srt-llama-3-3-70b-instruct",
                "Active    HASH                 1ffc4ead",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                DeclaredCompatibilityMismatch",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/srt-llama-3-3-70b-instruct",
            ],
        ),
        (
            SEED_A_A100_FILE,
            0,  # finished: 0 (kubectl-ome runtime.md, Exit codes)
            [
                "SCOPE     FIELD           VALUE",
                "Live      STATE           Unavailable",
                "Live      REASON          NotFound",
                "Live      ENGINE          RawDeployment (Default)",
                "Active    STATE           Unavailable",
                "Active    REASON          NotFound",
                "Active    ENGINE          RawDeployment (Default)",
                "Service   PIN             AutoSync/Unavailable",
                "Service   SYNC            Absent",
                "Service   STATUS          Unobserved",
                "Service   DRIFT           NotReported",
                "Service   LIVE-RELATION   Unknown",
                "Service   ISSUE           LiveRuntimeUnavailable",
                "Service   ISSUE           StatusUnobserved",
                "Source    INHERITANCE     Unavailable",
                "Source    REASON          NotFound",
            ],
        ),
    ],
)
def test_effective_examples(capsys: pytest.CaptureFixture[str], isvc: str, code: int, expected: list[str]) -> None:
    assert run(capsys, "effective", "-f", isvc) == (code, table(*expected), "")


@pytest.mark.parametrize(
    "name, code, expected",
    [
        (
            "chain",
            0,
            [
                "SCOPE     FIELD                 VALUE",
                "Live      STATE                 Available",
                "Live      RUNTIME               CSR/vllm-child",
                "Live      HASH                  026fb404",
                "Live      ENGINE                RawDeployment (Default)",
                "Live      DECODER               RawDeployment (Default)",
                "Live      ROUTER                MultiNode (ComponentAnnotation)",
                "Live      ENGINE-ACCELERATOR    - (RuntimeListsNone)",
                "Live      DECODER-ACCELERATOR   - (RuntimeListsNone)",
                "Live      ROUTER-ACCELERATOR    - (Router)",
                "Live      ROUTER-ERROR          invalid deployment mode for router",
                "Active    STATE                 Available",
                "Active    RUNTIME               CSR/vllm-child",
                "Active    HASH                  026fb404",
                "Active    ENGINE                RawDeployment (Default)",
                "Active    DECODER               RawDeployment (Default)",
                "Active    ROUTER                MultiNode (ComponentAnnotation)",
                "Service   PIN                   AutoSync/NotApplicable",
                "Service   SYNC                  Absent",
                "Service   STATUS                Unobserved",
                "Service   DRIFT                 NotReported",
                "Service   LIVE-RELATION         Equal",
                "Service   ISSUE                 StatusUnobserved",
                "Source    INHERITANCE           Observed",
                "Source    ROOT-FIRST            CSR/vllm-base",
                "Source    ROOT-FIRST            CSR/vllm-child",
            ],
        ),
        (
            "team-chain",
            0,
            [  # a ServingRuntime's parent shows with its kind: the chain is RuntimeRefs
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              SR/llama-demo/team-child",
                "Live      HASH                 1dcce786",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   - (RuntimeListsNone)",
                "Active    STATE                Available",
                "Active    RUNTIME              SR/llama-demo/team-child",
                "Active    HASH                 1dcce786",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/vllm-base",
                "Source    ROOT-FIRST           SR/llama-demo/team-child",
            ],
        ),
        (
            "missing",
            0,  # finished: 0 (kubectl-ome runtime.md, Exit codes)
            [  # no runtime: no accelerator row
                "SCOPE     FIELD           VALUE",
                "Live      STATE           Unavailable",
                "Live      REASON          NotFound",
                "Live      ENGINE          RawDeployment (Default)",
                "Active    STATE           Unavailable",
                "Active    REASON          NotFound",
                "Active    ENGINE          RawDeployment (Default)",
                "Service   PIN             AutoSync/Unavailable",
                "Service   SYNC            Absent",
                "Service   STATUS          Unobserved",
                "Service   DRIFT           NotReported",
                "Service   LIVE-RELATION   Unknown",
                "Service   ISSUE           InheritanceUnavailable",
                "Service   ISSUE           LiveRuntimeUnavailable",
                "Service   ISSUE           StatusUnobserved",
                "Source    INHERITANCE     Unavailable",
                "Source    REASON          NotFound",
            ],
        ),
        (
            "loop",
            0,  # finished: 0 (kubectl-ome runtime.md, Exit codes)
            [  # Live REASON Unreadable, Source REASON the inheritance_reason; the chain gives no spec, so no accelerator row
                "SCOPE     FIELD           VALUE",
                "Live      STATE           Unavailable",
                "Live      REASON          Unreadable",
                "Live      RUNTIME         CSR/loop-a",
                "Live      ENGINE          RawDeployment (Default)",
                "Active    STATE           Unavailable",
                "Active    REASON          Unreadable",
                "Active    ENGINE          RawDeployment (Default)",
                "Service   PIN             AutoSync/Unavailable",
                "Service   SYNC            Absent",
                "Service   STATUS          Unobserved",
                "Service   DRIFT           NotReported",
                "Service   LIVE-RELATION   Unknown",
                "Service   ISSUE           InheritanceUnavailable",
                "Service   ISSUE           LiveRuntimeUnavailable",
                "Service   ISSUE           StatusUnobserved",
                "Source    INHERITANCE     Unavailable",
                "Source    REASON          Cycle",
            ],
        ),
        (
            "disabled",
            0,  # finished: 0 (kubectl-ome runtime.md, Exit codes)
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Unavailable",
                "Live      REASON               Disabled",
                "Live      RUNTIME              CSR/retired",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   - (RuntimeListsNone)",
                "Active    STATE                Unavailable",
                "Active    REASON               Disabled",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/Unavailable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Unknown",
                "Service   ISSUE                LiveRuntimeUnavailable",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/retired",
            ],
        ),
        (
            "b200",
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              CSR/llama-3-3-70b-hopper",
                "Live      HASH                 28a67c61",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   nvidia-b200 (Selector)",
                "Live      ENGINE-ERROR         accelerator class nvidia-b200 not found at clu...",
                "Active    STATE                Available",
                "Active    RUNTIME              CSR/llama-3-3-70b-hopper",
                "Active    HASH                 28a67c61",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                DeclaredCompatibilityMismatch",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/llama-3-3-70b-hopper",
            ],
        ),
        (
            "cheapest",
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              CSR/llama-3-3-70b-hopper",
                "Live      HASH                 28a67c61",
                "Live      ENGINE               RawDeployment (Default)",
                "Live      ENGINE-ACCELERATOR   nvidia-h100 (Policy/Cheapest)",
                "Active    STATE                Available",
                "Active    RUNTIME              CSR/llama-3-3-70b-hopper",
                "Active    HASH                 28a67c61",
                "Active    ENGINE               RawDeployment (Default)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/llama-3-3-70b-hopper",
            ],
        ),
        (
            "virtual",
            0,
            [
                "SCOPE     FIELD                VALUE",
                "Live      STATE                Available",
                "Live      RUNTIME              CSR/srt-llama-3-3-70b-instruct-multinode",
                "Live      HASH                 d2315ab8",
                "Live      ENGINE               VirtualDeployment (ServiceAnnotation)",
                "Live      ENGINE-ACCELERATOR   - (RuntimeListsNone)",
                "Active    STATE                Available",
                "Active    RUNTIME              CSR/srt-llama-3-3-70b-instruct-multinode",
                "Active    HASH                 d2315ab8",
                "Active    ENGINE               VirtualDeployment (ServiceAnnotation)",
                "Service   PIN                  AutoSync/NotApplicable",
                "Service   SYNC                 Absent",
                "Service   STATUS               Unobserved",
                "Service   DRIFT                NotReported",
                "Service   LIVE-RELATION        Equal",
                "Service   ISSUE                StatusUnobserved",
                "Source    INHERITANCE          Observed",
                "Source    ROOT-FIRST           CSR/srt-llama-3-3-70b-instruct-multinode",
            ],
        ),
        (
            "no-model",
            0,  # finished: 0 (kubectl-ome runtime.md, Exit codes)
            [  # no runtime: no accelerator row
                "SCOPE     FIELD           VALUE",
                "Live      STATE           Unavailable",
                "Live      REASON          NotConfigured",
                "Live      ENGINE          RawDeployment (Default)",
                "Active    STATE           Unavailable",
                "Active    REASON          NotConfigured",
                "Active    ENGINE          RawDeployment (Default)",
                "Service   PIN             AutoSync/Unavailable",
                "Service   SYNC            Absent",
                "Service   STATUS          Unobserved",
                "Service   DRIFT           NotReported",
                "Service   LIVE-RELATION   Unknown",
                "Service   ISSUE           StatusUnobserved",
                "Source    INHERITANCE     Unavailable",
                "Source    REASON          NotConfigured",
            ],
        ),
    ],
)
def test_effective_scenarios(
    capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any, name: str, code: int, expected: list[str]
) -> None:
    assert run(capsys, "effective", "-f", scenario(name), *with_extra(extra)) == (code, table(*expected), "")


def test_effective_wide(capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any) -> None:
    """runtime.md, effective -o wide: one row per view and component, the Service fields on each row."""
    assert run(capsys, "effective", "-f", SEED_A_FILE, "-o", "wide") == (
        0,
        table(
            "VIEW     STATE       REASON   RUNTIME                                      REVISION   HASH       COMPONENT   MODE            MODE-SOURCE   PIN        PIN-STATE       SYNC     STATUS       DRIFT         LIVE-RELATION   ISSUES             ACCELERATOR   ACCELERATOR-SOURCE   POLICY   ERROR",
            "Live     Available   -        ClusterServingRuntime/llama-3-3-70b-hopper   -          28a67c61   engine      RawDeployment   Default       AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   nvidia-h100   Selector             -        -",
            "Active   Available   -        ClusterServingRuntime/llama-3-3-70b-hopper   -          28a67c61   engine      RawDeployment   Default       AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   nvidia-h100   Selector             -        -",
        ),
        "",
    )
    assert run(capsys, "effective", "-f", SEED_A_A100_FILE, "-o", "wide") == (
        0,
        table(
            "VIEW     STATE         REASON     RUNTIME   REVISION   HASH   COMPONENT   MODE            MODE-SOURCE   PIN        PIN-STATE     SYNC     STATUS       DRIFT         LIVE-RELATION   ISSUES                                    ACCELERATOR   ACCELERATOR-SOURCE   POLICY   ERROR",
            "Live     Unavailable   NotFound   -         -          -      engine      RawDeployment   Default       AutoSync   Unavailable   Absent   Unobserved   NotReported   Unknown         LiveRuntimeUnavailable,StatusUnobserved   -             -                    -        -",
            "Active   Unavailable   NotFound   -         -          -      engine      RawDeployment   Default       AutoSync   Unavailable   Absent   Unobserved   NotReported   Unknown         LiveRuntimeUnavailable,StatusUnobserved   -             -                    -        -",
        ),
        "",
    )
    assert run(capsys, "effective", "-f", scenario("chain"), "-o", "wide", *with_extra(extra)) == (
        0,
        table(
            "VIEW     STATE       REASON   RUNTIME                            REVISION   HASH       COMPONENT   MODE            MODE-SOURCE           PIN        PIN-STATE       SYNC     STATUS       DRIFT         LIVE-RELATION   ISSUES             ACCELERATOR   ACCELERATOR-SOURCE   POLICY   ERROR",
            "Live     Available   -        ClusterServingRuntime/vllm-child   -          026fb404   engine      RawDeployment   Default               AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   -             RuntimeListsNone     -        -",
            "Live     Available   -        ClusterServingRuntime/vllm-child   -          026fb404   decoder     RawDeployment   Default               AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   -             RuntimeListsNone     -        -",
            "Live     Available   -        ClusterServingRuntime/vllm-child   -          026fb404   router      MultiNode       ComponentAnnotation   AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   -             Router               -        invalid deployment mode for router",
            "Active   Available   -        ClusterServingRuntime/vllm-child   -          026fb404   engine      RawDeployment   Default               AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   -             RuntimeListsNone     -        -",
            "Active   Available   -        ClusterServingRuntime/vllm-child   -          026fb404   decoder     RawDeployment   Default               AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   -             RuntimeListsNone     -        -",
            "Active   Available   -        ClusterServingRuntime/vllm-child   -          026fb404   router      MultiNode       ComponentAnnotation   AutoSync   NotApplicable   Absent   Unobserved   NotReported   Equal           StatusUnobserved   -             Router               -        invalid deployment mode for router",
        ),
        "",
    )


def test_effective_json(capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any) -> None:
    code, out, err = run(capsys, "effective", "-f", scenario("chain"), "-o", "json", *with_extra(extra))
    assert (code, err) == (0, "")
    response = json_format.Parse(out, selector_pb2.GetEffectiveRuntimeResponse())
    assert (response.state, response.runtime, response.selection, list(response.inheritance_chain)) == (
        "Available",
        "CSR/vllm-child",
        "Explicit",
        [
            selector_pb2.RuntimeRef(kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="vllm-base"),
            selector_pb2.RuntimeRef(kind=selector_pb2.RUNTIME_KIND_CLUSTER_SERVING_RUNTIME, name="vllm-child"),
        ],
    )
    assert [(c.component, c.mode_source, c.mode_error) for c in response.components] == [
        (selector_pb2.COMPONENT_ENGINE, selector_pb2.MODE_SOURCE_DEFAULT, ""),
        (selector_pb2.COMPONENT_DECODER, selector_pb2.MODE_SOURCE_DEFAULT, ""),
        (
            selector_pb2.COMPONENT_ROUTER,
            selector_pb2.MODE_SOURCE_COMPONENT_ANNOTATION,
            "invalid deployment mode for router",
        ),
    ]
    code, out, _ = run(capsys, "effective", "-f", SEED_A_A100_FILE, "-o", "json")
    assert code == 0
    assert json_format.Parse(out, selector_pb2.GetEffectiveRuntimeResponse()).reason == "NotFound"


def test_effective_unknown_model_is_unavailable(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    isvc = tmp_path / "isvc.yaml"
    isvc.write_text(
        "apiVersion: ome.io/v1beta1\nkind: InferenceService\nmetadata: {name: x, namespace: ns}\nspec:\n  model: {name: nope}\n"
    )
    # No longer an error: the view is Unavailable, reason NotFound (a table; finished: exit 0).
    assert run(capsys, "effective", "-f", str(isvc)) == (
        0,
        table(
            "SCOPE     FIELD           VALUE",
            "Live      STATE           Unavailable",
            "Live      REASON          NotFound",
            "Active    STATE           Unavailable",
            "Active    REASON          NotFound",
            "Service   PIN             AutoSync/Unavailable",
            "Service   SYNC            Absent",
            "Service   STATUS          Unobserved",
            "Service   DRIFT           NotReported",
            "Service   LIVE-RELATION   Unknown",
            "Service   ISSUE           LiveRuntimeUnavailable",
            "Service   ISSUE           StatusUnobserved",
            "Source    INHERITANCE     Unavailable",
            "Source    REASON          NotFound",
        ),
        "",
    )


def test_effective_help_lists_the_views_and_the_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as excinfo:
        cli.main(["effective", "--help"])
    assert excinfo.value.code == 0
    help_text = " ".join(capsys.readouterr().out.split())
    assert "Live rows first, then Active rows, then Service rows" in help_text
    assert "from at most 1,000 runtimes (the CLI's collection limit)" in help_text
    assert "ServiceAnnotation, ComponentAnnotation, ServiceSpec, LeaderWorkerShape and Default" in help_text


# --- admit -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "isvc, code, out, err",
    [
        (
            SEED_A_FILE,
            0,
            "inferenceservice.ome.io/llama-3-3-70b admitted (path AutoSelect)\n",
            "Warning: Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct\n",
        ),
        (
            SCORING_FILE,
            0,
            "inferenceservice.ome.io/llama-3-2-3b admitted (path AutoSelect)\n",
            "Warning: Runtime team-llama will be auto-selected for model llama-3-2-3b-instruct\n",
        ),
        (
            SEED_A_NAMED_FILE,
            0,
            "inferenceservice.ome.io/llama-3-3-70b-named admitted (path NamedRuntime)\n",
            'Warning: runtime "srt-llama-3-3-70b-instruct" does not declare support for model "llama-3-3-70b-instruct" '
            f"({NAMED_CHECK}); proceeding because the runtime was named explicitly\n",
        ),
        (
            SEED_A_A100_FILE,
            1,
            "",
            ISVC_WEBHOOK_DENIED
            + "no supporting runtime found for model llama-3-3-70b-instruct and engine does not have complete "
            f"runner configuration: {NO_RUNTIME_A100}\n",
        ),
    ],
)
def test_admit_examples(capsys: pytest.CaptureFixture[str], isvc: str, code: int, out: str, err: str) -> None:
    assert run(capsys, "admit", "-f", isvc) == (code, out, err)


@pytest.mark.parametrize(
    "name, code, out, err",
    [
        ("chain", 0, "inferenceservice.ome.io/chain admitted (path NamedRuntime)\n", ""),
        ("no-engine", 0, "inferenceservice.ome.io/no-engine admitted (path NoEngine)\n", ""),
        ("decoder-only", 1, "", ISVC_WEBHOOK_DENIED + "decoder cannot be specified without engine\n"),
        (
            "missing",
            1,
            "",
            ISVC_WEBHOOK_DENIED + "runtime nope does not support model llama-3-2-3b-instruct: "
            "runtime nope not found in namespace llama-demo or at cluster scope\n",
        ),
        (
            "loop",
            1,
            "",
            ISVC_WEBHOOK_DENIED + "runtime loop-a does not support model llama-3-2-3b-instruct: "
            "inheritance cycle detected: [loop-a loop-b loop-a]\n",
        ),
        (
            "disabled",
            1,
            "",
            ISVC_WEBHOOK_DENIED + "runtime retired does not support model llama-3-2-3b-instruct: "
            "cluster-scoped runtime retired is disabled\n",
        ),
        (
            "no-model",
            1,
            "",
            ISVC_WEBHOOK_DENIED + "model reference is required when runtime is not specified and engine "
            "does not have complete runner configuration\n",
        ),
    ],
)
def test_admit_scenarios(
    capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any, name: str, code: int, out: str, err: str
) -> None:
    assert run(capsys, "admit", "-f", scenario(name), *with_extra(extra)) == (code, out, err)


def test_admit_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "admit", "-f", SEED_A_A100_FILE, "-o", "json")
    assert (code, err) == (1, "")
    response = json_format.Parse(out, selector_pb2.AdmitInferenceServiceResponse())
    assert (response.allowed, response.path, response.webhook) == (
        False,
        selector_pb2.ADMISSION_PATH_AUTO_SELECT,
        "inferenceservice.ome-webhook-server.validator",
    )
    code, out, err = run(capsys, "admit", "-f", SEED_A_FILE, "-o", "json")
    assert (code, err) == (0, "")
    response = json_format.Parse(out, selector_pb2.AdmitInferenceServiceResponse())
    assert (response.allowed, response.selection.runtime.name, list(response.warnings)) == (
        True,
        "llama-3-3-70b-hopper",
        ["Runtime llama-3-3-70b-hopper will be auto-selected for model llama-3-3-70b-instruct"],
    )


# --- reconcile ---------------------------------------------------------------------------------


COMPONENTS_HEADER = "COMPONENT   MODE            MODE-SOURCE   ACCELERATOR   ACCELERATOR-SOURCE   POLICY   ERROR"


def test_reconcile_auto_selected(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "reconcile", "-f", SEED_A_FILE) == (
        0,
        table(
            "Selected runtime: ClusterServingRuntime/llama-3-3-70b-hopper",
            "Selection: auto, score 2, supportedModelFormats entry 0",
            "Requeue: No",
            "Workload untouched: No",
            f"Cache version: {EXAMPLES_VERSION}",
            "",
            "RuntimeReady condition: unchanged",
            "",
            "Events: none",
            "",
            "Logs: none",
            "",
            "Components:",
            COMPONENTS_HEADER,
            "engine      RawDeployment   Default       nvidia-h100   Selector             -        -",
        ),
        "",
    )


def test_reconcile_with_a_runtime_ready_condition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "reconcile", "-f", SEED_A_FILE, "--has-runtime-ready-condition")
    assert (code, err) == (0, "")
    assert out.split("\n\n")[1] == table(
        "RuntimeReady condition:",
        "TYPE           STATUS   REASON            MESSAGE",
        "RuntimeReady   True     RuntimeResolved   -",
    ).rstrip("\n")


def test_reconcile_no_runtime_found(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "reconcile", "-f", SEED_A_A100_FILE) == (
        1,
        table(
            "No runtime selected",
            "Requeue: No",
            "Workload untouched: Yes",
            f"Cache version: {EXAMPLES_VERSION}",
            "",
            "RuntimeReady condition:",
            "TYPE           STATUS   REASON            MESSAGE",
            f"RuntimeReady   False    RuntimeNotFound   {NO_RUNTIME_A100}",
            "",
            "Events:",
            "TYPE      REASON            MESSAGE",
            f"Warning   RuntimeNotFound   {NO_RUNTIME_A100}",
            "",
            "Logs: none",
            "",
            "Components: none",
        ),
        "",
    )


def test_reconcile_named_runtime_advisory(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "reconcile", "-f", SEED_A_NAMED_FILE) == (
        0,
        table(
            "Selected runtime: ClusterServingRuntime/srt-llama-3-3-70b-instruct",
            "Selection: named, score 2, supportedModelFormats entry 0",
            f"Failing check: {ACCELERATOR_REASON}",
            "Requeue: No",
            "Workload untouched: No",
            f"Cache version: {EXAMPLES_VERSION}",
            "",
            "RuntimeReady condition: unchanged",
            "",
            "Events:",
            "TYPE      REASON                         MESSAGE",
            "Warning   RuntimeCompatibilityAdvisory   Runtime srt-llama-3-3-70b-instruct does not declare support for model "
            f"llama-3-3-70b-instruct ({NAMED_CHECK}); proceeding because the runtime was named explicitly",
            "",
            "Logs: none",
            "",
            "Components:",
            COMPONENTS_HEADER,
            "engine      RawDeployment   Default       -             RuntimeListsNone     -        -",
        ),
        "",
    )


def test_reconcile_accelerator_class_error_requeues(
    capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any
) -> None:
    code, out, err = run(capsys, "reconcile", "-f", scenario("b200"), *with_extra(extra))
    assert (code, err) == (1, "")
    sections = out.split("\n\n")
    assert sections[0].splitlines()[3:5] == ["Requeue: Yes", "Workload untouched: Yes"]
    assert sections[2].splitlines()[-1] == (
        "Warning   AcceleratorClassError          Failed to get accelerator class for engine: "
        "accelerator class nvidia-b200 not found at cluster scope"
    )
    assert sections[4].splitlines()[-1] == (
        "engine      RawDeployment   Default       nvidia-b200   Selector             -        "
        "accelerator class nvidia-b200 not found at cluster scope"
    )


def test_reconcile_logs_a_component_mode_error(capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any) -> None:
    code, out, err = run(capsys, "reconcile", "-f", scenario("chain"), *with_extra(extra))
    assert (code, err) == (1, "")
    sections = out.split("\n\n")
    assert sections[0].splitlines() == [
        "Selected runtime: ClusterServingRuntime/vllm-child",
        "Selection: named, score 2, supportedModelFormats entry 0",
        "Inheritance chain: vllm-base -> vllm-child",
        "Requeue: Yes",
        "Workload untouched: No",  # only the router (the last component) is blocked
        f"Cache version: {manifests_version(load_manifests([*example_paths(), str(extra)]).objects)}",
    ]
    assert sections[3] == "Logs:\n  Failed to reconcile component: invalid deployment mode for router"


@pytest.mark.parametrize(
    "name, code, event",
    [
        (
            "missing",
            1,
            "Warning   RuntimeNotFound   runtime nope not found in namespace llama-demo or at cluster scope",
        ),
        (
            "loop",
            1,
            "Warning   RuntimeValidationError   Runtime loop-a does not support model llama-3-2-3b-instruct: "
            "inheritance cycle detected: [loop-a loop-b loop-a]",
        ),
        ("no-model", 1, "Warning   ModelReconcileError   model reference is required"),
    ],
)
def test_reconcile_failures(
    capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any, name: str, code: int, event: str
) -> None:
    status, out, err = run(capsys, "reconcile", "-f", scenario(name), *with_extra(extra))
    assert (status, err) == (code, "")
    assert out.splitlines()[0] == "No runtime selected"
    assert out.split("\n\n")[2].splitlines()[-1] == event


def test_reconcile_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "reconcile", "-f", SEED_A_A100_FILE, "-o", "json", "--has-runtime-ready-condition")
    assert (code, err) == (1, "")
    response = json_format.Parse(out, selector_pb2.ReconcileInferenceServiceResponse())
    assert (response.runtime_ready.status, response.runtime_ready.reason, response.runtime_ready.severity) == (
        "False",
        "RuntimeNotFound",
        "Info",
    )
    assert [(e.type, e.reason) for e in response.events] == [("Warning", "RuntimeNotFound")]
    assert (response.requeue, response.workload_untouched, response.HasField("selection")) == (False, True, False)


# --- validate-runtime --------------------------------------------------------------------------


def test_validate_runtime_admits(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate-runtime", "-f", HOPPER) == (
        0,
        "clusterservingruntime.ome.io/llama-3-3-70b-hopper admitted\n",
        "",
    )
    # The first runtime of a file with several: the ServingRuntime team-llama.
    assert run(capsys, "validate-runtime", "-f", str(EXAMPLES / "scoring-worked-example.yaml")) == (
        0,
        "servingruntime.ome.io/team-llama admitted\n",
        "",
    )


def test_validate_runtime_denies_unknown_classes(capsys: pytest.CaptureFixture[str]) -> None:
    # Without the example AcceleratorClasses, the classes hopper lists are unknown.
    assert run(capsys, "validate-runtime", "-f", HOPPER, "--manifests", MODELS) == (
        1,
        "",
        'Error from server: admission webhook "clusterservingruntime.ome-webhook-server.validator" denied the request: '
        "unknown accelerator classes referenced in AcceleratorRequirements: [nvidia-h100 nvidia-h200]\n",
    )


RUNTIME_DENIALS = [
    (
        "kind: ServingRuntime\nmetadata:\n  name: sglang-llama-3-2-3b\n  namespace: llama-demo\n"
        "  annotations: {ome.io/inherit-from: sglang-profile}\nspec: {}\n",
        "servingruntime.ome-webhook-server.validator",
        'inherit-from parent "sglang-profile" not found (chain so far: [sglang-llama-3-2-3b])',
    ),
    (
        'kind: ClusterServingRuntime\nmetadata:\n  name: sglang-profile\n  annotations: {ome.io/runtime-profile: "true"}\nspec: {}\n',
        "clusterservingruntime.ome-webhook-server.validator",
        'runtimes carrying ome.io/runtime-profile="true" must also set spec.disabled: true',
    ),
    (
        "kind: ClusterServingRuntime\nmetadata:\n  name: self\n  annotations: {ome.io/inherit-from: self}\nspec: {}\n",
        "clusterservingruntime.ome-webhook-server.validator",
        "inheritance cycle detected: [self self]",
    ),
]


@pytest.mark.parametrize("body, webhook, message", RUNTIME_DENIALS)
def test_validate_runtime_denials(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, body: str, webhook: str, message: str
) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text("apiVersion: ome.io/v1beta1\n" + body)
    assert run(capsys, "validate-runtime", "-f", str(runtime)) == (
        1,
        "",
        f'Error from server: admission webhook "{webhook}" denied the request: {message}\n',
    )


def test_validate_runtime_child_of_an_example(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    runtime = tmp_path / "runtime.yaml"
    runtime.write_text(
        "apiVersion: ome.io/v1beta1\nkind: ServingRuntime\nmetadata:\n  name: child\n"
        "  annotations: {ome.io/inherit-from: vllm-llama}\nspec: {}\n"
    )
    # No namespace in the file: -n gives it one.
    assert run(capsys, "validate-runtime", "-f", str(runtime), "-n", "llama-demo") == (
        0,
        "servingruntime.ome.io/child admitted\n",
        "",
    )
    code, out, err = run(capsys, "validate-runtime", "-f", str(runtime), "-o", "json")
    assert (code, err) == (0, "")
    response = json_format.Parse(out, selector_pb2.ValidateServingRuntimeResponse())
    assert (response.allowed, list(response.inheritance_chain), response.webhook) == (
        True,
        ["vllm-llama", "child"],
        "servingruntime.ome-webhook-server.validator",
    )


def test_validate_runtime_reads_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("---\n" + Path(HOPPER).read_text()))
    assert run(capsys, "validate-runtime", "-f", "-") == (
        0,
        "clusterservingruntime.ome.io/llama-3-3-70b-hopper admitted\n",
        "",
    )


def test_validate_runtime_input_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys, "validate-runtime", "-f", MODELS) == (
        2,
        "",
        f"error: {MODELS}: no ServingRuntime or ClusterServingRuntime (ome.io/v1beta1) found\n",
    )
    assert run(capsys, "validate-runtime", "-f", "/nonexistent/rt.yaml") == (
        2,
        "",
        "error: /nonexistent/rt.yaml: cannot read: No such file or directory\n",
    )
    assert run(capsys, "validate-runtime", "-f", str(tmp_path)) == (
        2,
        "",
        f"error: {tmp_path}: is a directory, expected a ServingRuntime or ClusterServingRuntime file\n",
    )
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: [unclosed\n")
    code, out, err = run(capsys, "validate-runtime", "-f", str(bad))
    assert (code, out) == (2, "")
    assert err.startswith(f"error: {bad}: document 0: invalid YAML: ")
    typed = tmp_path / "typed.yaml"
    typed.write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: x}\nspec: {disabled: maybe}\n"
    )
    code, out, err = run(capsys, "validate-runtime", "-f", str(typed))
    assert (code, out) == (2, "")
    assert err == f'error: {typed}: document 0: spec.disabled: Invalid value: "maybe": must be of type boolean\n'
    # An object the API server would refuse is an input error, not a denial.
    invalid = tmp_path / "invalid.yaml"
    invalid.write_text(
        "apiVersion: ome.io/v1beta1\nkind: ClusterServingRuntime\nmetadata: {name: x}\nspec:\n"
        "  supportedModelFormats:\n    - modelFormat: {name: safetensors}\n      modelFramework: {name: transformers}\n      priority: 0\n"
    )
    assert run(capsys, "validate-runtime", "-f", str(invalid)) == (
        2,
        "",
        "error: INVALID_ARGUMENT: invalid request: clusterServingRuntime.spec.supportedModelFormats[0].priority: "
        "Invalid value: 0: must be greater than or equal to 1\n",
    )


# --- against a server --------------------------------------------------------------------------


def test_server_mode_answers_like_offline_mode(
    running_server: Any, capsys: pytest.CaptureFixture[str], extra: Path, scenario: Any
) -> None:
    server = running_server()
    cases = [
        ["explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo"],
        ["explain", "--model", "llama-3-2-3b-instruct"],  # NOT_FOUND
        ["explain", "--model", "llama-3-3-70b-instruct", "-o", "json"],
        ["explain", "-f", SEED_A_NAMED_FILE],
    ]
    for isvc in (SEED_A_FILE, SEED_A_A100_FILE, SEED_A_NAMED_FILE, SEED_B_FILE, SCORING_FILE):
        cases += [
            ["effective", "-f", isvc],
            ["effective", "-f", isvc, "-o", "wide"],
            ["effective", "-f", isvc, "-o", "json"],
            ["admit", "-f", isvc],
            ["admit", "-f", isvc, "-o", "json"],
            ["reconcile", "-f", isvc],
            ["reconcile", "-f", isvc, "--has-runtime-ready-condition", "-o", "json"],
        ]
    cases += [
        ["validate-runtime", "-f", HOPPER],
        ["validate-runtime", "-f", str(EXAMPLES / "scoring-worked-example.yaml"), "-o", "json"],
    ]
    for argv in cases:
        offline = run(capsys, *argv)
        online = run(capsys, *argv, "--server", server.address)
        assert online == offline, argv

    catalog = [*example_paths(), str(extra)]
    server = running_server(manifests=catalog)
    for name in ("chain", "team-chain", "missing", "loop", "disabled", "b200", "no-model"):
        for command in ("effective", "admit", "reconcile"):
            argv = [command, "-f", scenario(name)]
            assert run(capsys, *argv, "--server", server.address) == run(capsys, *argv, "--manifests", *catalog), argv
    # The runtime webhook sees the server's cache: the profile check, and hopper without its classes.
    profile = Path(scenario("chain")).with_name("profile.yaml")
    profile.write_text("apiVersion: ome.io/v1beta1\n" + RUNTIME_DENIALS[1][0])
    argv = ["validate-runtime", "-f", str(profile)]
    assert run(capsys, *argv, "--server", server.address) == run(capsys, *argv, "--manifests", *catalog)
    server = running_server(manifests=[MODELS])
    argv = ["validate-runtime", "-f", HOPPER]
    denied = run(capsys, *argv, "--server", server.address)
    assert denied == run(capsys, *argv, "--manifests", MODELS)
    assert denied[0] == 1


def test_server_mode_errors_exit_2(running_server: Any, capsys: pytest.CaptureFixture[str]) -> None:
    server = running_server(wait_for_sync=True)
    code, out, err = run(capsys, "admit", "-f", SEED_A_FILE, "--server", server.address, "--timeout", "2")
    assert (code, out) == (2, "")
    assert err == "error: UNAVAILABLE: cache not synced yet\n"


# --- usage -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["effective"],
        ["admit"],
        ["reconcile"],
        ["validate-runtime"],
        ["admit", "-f", SEED_A_FILE, "-o", "xml"],
        ["effective", "-f", SEED_A_FILE, "-o", "csv"],
        ["select", "-f", SEED_A_FILE, "--has-runtime-ready-condition"],
        ["effective", "-f", SEED_A_FILE, "--manifests", "x", "--server", "127.0.0.1:1"],
    ],
)
def test_usage_errors_exit_2_or_1(capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    """argparse's usage errors: 2, but 1 for the commands of kubectl-ome runtime.md ("No
    `runtime` subcommand returns 2"), and 1 for an unknown flag on any command (select has no
    --has-runtime-ready-condition)."""
    with pytest.raises(SystemExit) as excinfo:
        cli.main(argv)
    assert excinfo.value.code == (1 if argv[0] == "effective" or "--has-runtime-ready-condition" in argv else 2)
    err = capsys.readouterr().err
    assert err.startswith("usage: ome-selector")
    assert "Traceback" not in err


def test_top_level_help_lists_the_new_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    listed = [
        line.split()[0]
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("    ") and not line.startswith("     ")
    ]
    assert listed == [
        "serve",
        "select",
        "explain",
        "effective",
        "history",
        "sync",
        "admit",
        "reconcile",
        "validate-runtime",
        "what-if",
        "watch",
        "tree",
        "wait",
        "completion",
        "version",
    ]


def test_console_script_subprocess() -> None:
    process = subprocess.run(
        [sys.executable, "-m", "ome_selector.cli", "admit", "-f", SEED_A_A100_FILE],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (process.returncode, process.stdout) == (1, "")
    assert process.stderr.startswith(ISVC_WEBHOOK_DENIED)
    assert "Traceback" not in process.stderr
