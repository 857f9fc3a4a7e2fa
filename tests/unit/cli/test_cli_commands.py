"""The CLI's one table of commands (``commands.COMMANDS``): each row's RPC is an
``api.SELECTION_RPCS`` row (the table whose rows the servicer methods call) or the streaming
``WatchSelections``, its requests reach exactly that row offline and exactly that method with
``--server``, its exit-status rule, and a new row being all it takes to add a command."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES
from google.protobuf import message_factory
from google.protobuf.message import Message
from helpers_docs import SEED_A_FILE
from ome.selector.v1 import cache_pb2, selector_pb2, selector_pb2_grpc
from ome.v1beta1 import types_pb2
from ome_selector.cache.manifests import load_runtime, read_inference_services
from ome_selector.cli import app as cli
from ome_selector.cli import commands, labels, reports
from ome_selector.cli.commands import COMMANDS, Command
from ome_selector.cli.sources import INFERENCE_SERVICES
from ome_selector.rpc import api

RUNTIME_FILE = str(EXAMPLES / "llama-3-3-70b-hopper.yaml")
SEED_A_ISVC = read_inference_services(SEED_A_FILE)[0][0]
HOPPER = load_runtime(RUNTIME_FILE, "default")[1]
assert isinstance(HOPPER, types_pb2.ClusterServingRuntime)
HOPPER_OBJECT = cache_pb2.CacheObject(cluster_serving_runtime=HOPPER)

# command line -> (the RPC it calls, the request it sends), built here without the CLI's code.
CALLS = [
    (
        ["select", "-f", SEED_A_FILE],
        "SelectRuntime",
        selector_pb2.SelectRuntimeRequest(inference_service=SEED_A_ISVC, view=selector_pb2.SELECT_RUNTIME_VIEW_BASIC),
    ),
    (
        ["select", "-f", SEED_A_FILE, "--view", "full"],
        "SelectRuntime",
        selector_pb2.SelectRuntimeRequest(inference_service=SEED_A_ISVC, view=selector_pb2.SELECT_RUNTIME_VIEW_FULL),
    ),
    (
        ["explain", "-f", SEED_A_FILE],
        "ExplainRuntimes",
        selector_pb2.ExplainRuntimesRequest(inference_service=SEED_A_ISVC),
    ),
    (
        ["explain", "--model", "llama-3-2-3b-instruct", "-n", "llama-demo"],
        "ExplainRuntimes",
        selector_pb2.ExplainRuntimesRequest(
            model=selector_pb2.ModelLookup(name="llama-3-2-3b-instruct", namespace="llama-demo")
        ),
    ),
    (
        ["effective", "-f", SEED_A_FILE],
        "GetEffectiveRuntime",
        selector_pb2.GetEffectiveRuntimeRequest(
            inference_service=SEED_A_ISVC, ome_namespace="ome", collection_limit=1000
        ),
    ),
    (
        ["effective", "-f", SEED_A_FILE, "--ome-namespace", "ome-system"],
        "GetEffectiveRuntime",
        selector_pb2.GetEffectiveRuntimeRequest(
            inference_service=SEED_A_ISVC, ome_namespace="ome-system", collection_limit=1000
        ),
    ),
    (
        ["history", "-f", SEED_A_FILE],
        "GetRuntimeHistory",
        selector_pb2.GetRuntimeHistoryRequest(
            inference_service=SEED_A_ISVC, ome_namespace="ome", collection_limit=1000
        ),
    ),
    (
        ["sync", "-f", SEED_A_FILE, "--dry-run", "client", "--yes", "--context", "prod-us-east"],
        "PlanRuntimeSync",
        selector_pb2.PlanRuntimeSyncRequest(inference_service=SEED_A_ISVC, ome_namespace="ome", context="prod-us-east"),
    ),
    (
        ["admit", "-f", SEED_A_FILE],
        "AdmitInferenceService",
        selector_pb2.AdmitInferenceServiceRequest(inference_service=SEED_A_ISVC),
    ),
    (
        ["reconcile", "-f", SEED_A_FILE],
        "ReconcileInferenceService",
        selector_pb2.ReconcileInferenceServiceRequest(inference_service=SEED_A_ISVC),
    ),
    (
        ["reconcile", "-f", SEED_A_FILE, "--has-runtime-ready-condition"],
        "ReconcileInferenceService",
        selector_pb2.ReconcileInferenceServiceRequest(inference_service=SEED_A_ISVC, has_runtime_ready_condition=True),
    ),
    (
        ["validate-runtime", "-f", RUNTIME_FILE],
        "ValidateServingRuntime",
        selector_pb2.ValidateServingRuntimeRequest(cluster_serving_runtime=HOPPER),
    ),
    (
        ["what-if", "-f", RUNTIME_FILE],
        "PreviewCacheChange",
        selector_pb2.PreviewCacheChangeRequest(upserts=[HOPPER_OBJECT]),
    ),
    (
        ["what-if", "-f", RUNTIME_FILE, "--delete", "InferenceService/my-isvc", "--delete", "servingruntime/a/b"],
        "PreviewCacheChange",
        selector_pb2.PreviewCacheChangeRequest(
            upserts=[HOPPER_OBJECT],
            deletes=[
                cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_INFERENCE_SERVICE, namespace="default", name="my-isvc"),
                cache_pb2.ObjectKey(kind=cache_pb2.OBJECT_KIND_SERVING_RUNTIME, namespace="a", name="b"),
            ],
        ),
    ),
    (
        ["tree", "vllm-llama"],
        "GetRuntimeTree",
        selector_pb2.GetRuntimeTreeRequest(name="vllm-llama", namespace="default"),
    ),
    (
        ["tree", "team-llama", "-n", "team-a", "--kind", "ServingRuntime", "--show-unattributed-users"],
        "GetRuntimeTree",
        selector_pb2.GetRuntimeTreeRequest(
            name="team-llama", namespace="team-a", kind="ServingRuntime", show_unattributed_users=True
        ),
    ),
]
# The streaming command: --server only.
STREAM_CALLS = [
    (["watch"], "WatchSelections", selector_pb2.WatchSelectionsRequest()),
    (
        ["watch", "-n", "llama-demo", "-l", "team=llama"],
        "WatchSelections",
        selector_pb2.WatchSelectionsRequest(namespace="llama-demo", label_selector="team=llama"),
    ),
]
METHODS = {method.name: method for method in commands.SELECTION_SERVICE.methods}


def _empty_response(rpc: str) -> Message:
    return message_factory.GetMessageClass(METHODS[rpc].output_type)()


# SELECTION_RPCS rows that have no command: exactly these.
WITHOUT_COMMAND = ["GetRuntimeStatus", "PlanRevisionGC", "GetInferenceService"]


def test_one_command_per_selection_rpc_row() -> None:
    """Every command names an ``api.SELECTION_RPCS`` row or the streaming ``WatchSelections``, and
    every method but ``WITHOUT_COMMAND`` has one command."""
    assert {name: command.rpc for name, command in COMMANDS.items()} == {
        "select": "SelectRuntime",
        "explain": "ExplainRuntimes",
        "effective": "GetEffectiveRuntime",
        "history": "GetRuntimeHistory",
        "sync": "PlanRuntimeSync",
        "admit": "AdmitInferenceService",
        "reconcile": "ReconcileInferenceService",
        "validate-runtime": "ValidateServingRuntime",
        "what-if": "PreviewCacheChange",
        "watch": "WatchSelections",
        "tree": "GetRuntimeTree",
    }
    # GetRuntimeStatus has no command (kubectl-ome has no such subcommand: docs/cli.md);
    # PlanRevisionGC is a flag of history (``history --gc``), not a command of its own, and
    # GetInferenceService serves ``wait`` (which reads the InferenceService by name).
    from ome_selector.cli import gc_report

    assert gc_report._command().rpc == "PlanRevisionGC"
    assert any(flag.names == ("--gc",) for flag in COMMANDS["history"].flags)
    assert sorted(command.rpc for command in COMMANDS.values()) == sorted(
        {*api.SELECTION_RPCS, *api.STREAMING_RPCS} - set(WITHOUT_COMMAND)
    )
    assert sorted(set(METHODS) - set(WITHOUT_COMMAND)) == sorted(command.rpc for command in COMMANDS.values())
    for command in COMMANDS.values():
        assert command.request_type.DESCRIPTOR is METHODS[command.rpc].input_type
        assert command.streaming == (command.rpc in api.STREAMING_RPCS) == (not command.offline)


def test_the_parser_has_serve_then_the_table_in_order() -> None:
    """Then wait (its own parser, cli/wait.py: it follows a server, no table row) and the
    commands that ask nothing: completion, version."""
    parser = cli.build_parser()
    [subcommands] = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert list(subcommands.choices) == ["serve", *COMMANDS, "wait", "completion", "version"]


def test_an_unknown_rpc_is_refused_when_the_row_is_made() -> None:
    with pytest.raises(ValueError) as excinfo:
        Command(
            name="watch",
            rpc="WatchRuntimes",
            help="-",
            source=INFERENCE_SERVICES,
            remote=lambda client, request: request,
            render=lambda request, response: "",
            succeeded=lambda response: True,
            names=lambda request, response: "",
        )
    assert str(excinfo.value) == "command watch: SelectionService has no method WatchRuntimes"


def _recorder(name: str, calls: list[tuple[str, Message]]) -> Any:
    """A stand-in for the ``SELECTION_RPCS`` row ``name``: records (name, request), answers empty."""

    def answer(snapshot: Any, request: Message) -> Message:
        calls.append((name, request))
        return _empty_response(name)

    return answer


@pytest.mark.parametrize("argv, rpc, request_", CALLS, ids=[" ".join(Path(a).name for a in c[0]) for c in CALLS])
def test_offline_requests_reach_their_selection_rpcs_row(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str], rpc: str, request_: Message
) -> None:
    """Offline, ``api.answer`` hands the request to the ``SELECTION_RPCS`` row the command names."""
    calls: list[tuple[str, Message]] = []
    for name in api.SELECTION_RPCS:
        monkeypatch.setitem(api.SELECTION_RPCS, name, _recorder(name, calls))
    cli.main([*argv, "-o", "json"])
    assert calls == [(rpc, request_)]
    assert capsys.readouterr().out == "{}\n"


def _recording_servicer(calls: list[tuple[str, Message]]) -> Any:
    """A SelectionService whose every method records (method, request) and answers empty."""

    def method(name: str) -> Any:
        def handle(self: Any, request: Message, context: Any) -> Message:
            calls.append((name, request))
            return _empty_response(name)

        def stream(self: Any, request: Message, context: Any) -> Any:
            calls.append((name, request))
            yield _empty_response(name)

        return stream if METHODS[name].server_streaming else handle

    return type(
        "RecordingSelection", (selector_pb2_grpc.SelectionServiceServicer,), {name: method(name) for name in METHODS}
    )()


@pytest.mark.parametrize(
    "argv, rpc, request_",
    CALLS + STREAM_CALLS,
    ids=[" ".join(Path(a).name for a in c[0]) for c in CALLS + STREAM_CALLS],
)
def test_server_requests_reach_their_method_whole(
    fake_server: Any, capsys: pytest.CaptureFixture[str], argv: list[str], rpc: str, request_: Message
) -> None:
    """With ``--server``, the row's client call sends the whole request to the method it names."""
    calls: list[tuple[str, Message]] = []
    address = fake_server(_recording_servicer(calls))
    cli.main([*argv, "--server", address, "-o", "json"])
    assert calls == [(rpc, request_)]
    assert capsys.readouterr().out == "{}\n"


R = selector_pb2
CANDIDATE = R.RuntimeExplanation(verdict=R.VERDICT_CANDIDATE)
EXCLUDED = R.RuntimeExplanation(verdict=R.VERDICT_EXCLUDED)


@pytest.mark.parametrize(
    "command, response, succeeded",
    [
        ("select", R.SelectRuntimeResponse(selection=R.Selection()), True),
        ("select", R.SelectRuntimeResponse(no_runtime_message="no runtime found"), False),
        ("explain", R.ExplainRuntimesResponse(runtimes=[EXCLUDED, CANDIDATE]), True),
        ("explain", R.ExplainRuntimesResponse(runtimes=[EXCLUDED]), True),  # finished: 0 (runtime.md)
        ("explain", R.ExplainRuntimesResponse(), True),  # no runtimes at all: 0 (kubectl-ome runtime.md)
        ("explain", R.ExplainRuntimesResponse(model_error="model x is disabled"), True),
        ("effective", R.GetEffectiveRuntimeResponse(state="Available"), True),
        ("effective", R.GetEffectiveRuntimeResponse(state="Unavailable"), True),  # finished: 0
        ("admit", R.AdmitInferenceServiceResponse(allowed=True), True),
        ("admit", R.AdmitInferenceServiceResponse(allowed=False), False),
        ("reconcile", R.ReconcileInferenceServiceResponse(selection=R.Selection()), True),
        ("reconcile", R.ReconcileInferenceServiceResponse(selection=R.Selection(), requeue=True), False),
        ("reconcile", R.ReconcileInferenceServiceResponse(), False),
        ("validate-runtime", R.ValidateServingRuntimeResponse(allowed=True), True),
        ("validate-runtime", R.ValidateServingRuntimeResponse(allowed=False), False),
        ("what-if", R.PreviewCacheChangeResponse(), True),  # nothing would change: 0, as `kubectl diff`
        ("what-if", R.PreviewCacheChangeResponse(changes=[R.SelectionChange()]), False),
        # tree: every answer is a printed tree (0); its errors are RPC errors (1).
        ("tree", R.GetRuntimeTreeResponse(), True),
        ("tree", R.GetRuntimeTreeResponse(snapshot=R.RUNTIME_TREE_SNAPSHOT_PARTIAL), True),
    ],
)
def test_exit_status_rules(command: str, response: Message, succeeded: bool) -> None:
    assert COMMANDS[command].succeeded(response) is succeeded


def test_a_new_row_is_a_new_command(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A row in ``COMMANDS`` (an existing RPC, its own renderer and rule) is parsed, answered and
    printed with nothing else changed."""
    monkeypatch.setitem(
        COMMANDS,
        "winner",
        Command(
            name="winner",
            rpc="SelectRuntime",
            help="print the selected runtime's name",
            source=INFERENCE_SERVICES,
            remote=lambda client, request: client.select_runtime(request.inference_service),
            render=lambda request, response: response.selection.runtime.name,
            succeeded=lambda response: response.HasField("selection"),
            names=lambda request, response: "",
        ),
    )
    assert cli.main(["winner", "-f", SEED_A_FILE]) == 0
    assert capsys.readouterr() == ("llama-3-3-70b-hopper\n", "")
    assert cli.main(["winner", "-f", SEED_A_FILE, "-o", "name"]) == 0
    assert capsys.readouterr() == ("", "")


def test_request_type_is_the_rpc_input() -> None:
    assert COMMANDS["select"].request_type is selector_pb2.SelectRuntimeRequest
    assert COMMANDS["validate-runtime"].request_type is selector_pb2.ValidateServingRuntimeRequest


def test_renderer_picks_wide_only_where_a_command_has_one() -> None:
    effective, select = COMMANDS["effective"], COMMANDS["select"]
    response = R.GetEffectiveRuntimeResponse(state="Available")
    wide, table = effective.renderer("wide")(None, response), effective.renderer("table")(None, response)
    assert (wide, table) == (reports.format_effective_wide(response), reports.format_effective(response))
    assert wide.splitlines()[0].split() == list(labels.EFFECTIVE_WIDE_HEADERS)
    assert table.splitlines()[0].split() == list(labels.EFFECTIVE_HEADERS)
    assert select.renderer("wide") is select.render


def test_a_streaming_command_needs_a_server_and_takes_table_wide_or_json(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, status in (
        (["watch"], 2),
        (["watch", "--server", "127.0.0.1:1", "-o", "yaml"], 2),
        (["watch", "--server", "a", "--manifests", "x"], 1),  # an unknown flag, as on every command
    ):
        with pytest.raises(SystemExit) as exited:
            cli.main(argv)
        assert exited.value.code == status
    errors = capsys.readouterr().err.splitlines()
    assert [line for line in errors if "error:" in line] == [
        "ome-selector watch: error: the following arguments are required: --server",
        "ome-selector watch: error: argument -o/--output: invalid choice: 'yaml' (choose from 'table', 'wide', 'json')",
        "error: unknown flag: --manifests",
    ]
