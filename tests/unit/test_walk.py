"""SelectRuntime's walk stays short (design/architecture.md, "One boundary per RPC"): the example
InferenceService passes at most 10 steps with at most 3 returns, as ``tools.trace_path`` counts
them (its docstring says what a step and a return are). A structural guard, not a timing test."""

from __future__ import annotations

from tools import trace_path

MAX_STEPS = 10
MAX_RETURNS = 3


def test_select_runtime_walk_is_decode_run_encode() -> None:
    got = trace_path.trace("SelectRuntime")
    assert got.names() == [
        "rpc.servicers:SelectionServicer.SelectRuntime",
        "rpc.servicers:SelectionServicer._answer",
        "rpc.common:Rpc.__call__",
        "rpc.selection:decode_select",
        "validation.selection:select_request",
        "validation.selection:inference_service",
        "flows.resolution:decide",
        "flows.resolution:resolve_model",
        "cache.ingest:compile_request",
        "rpc.selection:encode_select",
    ]
    assert len(got.steps) <= MAX_STEPS
    assert got.returns <= MAX_RETURNS
    assert got.below > 0  # the rule work under the walk is counted apart, not lost


def test_the_tracer_counts_steps_and_returns() -> None:
    # ExplainRuntimes turns more often (paging, then the rows): the counts are not fixed at 10 / 3.
    got = trace_path.trace("ExplainRuntimes")
    assert got.names()[:4] == [
        "rpc.servicers:SelectionServicer.ExplainRuntimes",
        "rpc.servicers:SelectionServicer._answer",
        "rpc.common:Rpc.__call__",
        "rpc.selection:decode_explain",
    ]
    assert got.names()[-1] == "rpc.selection:encode_explain"
    assert got.returns > MAX_RETURNS


def test_the_text_ends_with_the_counts() -> None:
    got = trace_path.trace("SelectRuntime")
    assert got.text().splitlines()[-1] == (
        f"SelectRuntime: steps=10 returns=3 return_events={got.return_events} below={got.below}"
    )
    assert got.return_events >= len(got.steps)  # every step returns at least once
