"""ExplainRuntimes pages (AIP-158: ``page_size``, ``page_token``, ``next_page_token``,
``total_size``) and the filter by runtime name. Unset paging returns every row, as before."""

from __future__ import annotations

import pytest
from helpers_docs import NS, inference_service, isvc, load, model, runtime, worked_example_runtimes
from ome.selector.v1 import selector_pb2
from ome_selector.domain.errors import RequestError
from ome_selector.rpc import selection

# The worked example (4 candidates) plus two runtimes that are not candidates, one of them
# sharing a name with the namespaced team-llama.
SOURCES = [
    *worked_example_runtimes(),
    runtime("disabled-one", disabled=True),
    runtime("team-llama", size=("1B", "2B")),
    model(),
]
ALL_ROWS = [
    ("team-llama", "VERDICT_CANDIDATE", 1),
    ("vllm-llama", "VERDICT_CANDIDATE", 2),
    ("srt-llama-small", "VERDICT_CANDIDATE", 3),
    ("srt-llama-large", "VERDICT_CANDIDATE", 4),
    ("disabled-one", "VERDICT_EXCLUDED", 0),
    ("team-llama", "VERDICT_EXCLUDED", 0),
]


def _explain(store: object, **paging: object) -> selector_pb2.ExplainRuntimesResponse:
    request = selector_pb2.ExplainRuntimesRequest(inference_service=inference_service(isvc(namespace=NS)), **paging)  # type: ignore[arg-type]
    return selection.explain_runtimes(store.snapshot, request)  # type: ignore[attr-defined]


def _rows(response: selector_pb2.ExplainRuntimesResponse) -> list[tuple[str, str, int]]:
    return [(r.runtime.name, selector_pb2.Verdict.Name(r.verdict), r.rank) for r in response.runtimes]


def test_unset_paging_returns_every_row() -> None:
    response = _explain(load(*SOURCES))
    assert _rows(response) == ALL_ROWS
    assert (response.next_page_token, response.total_size) == ("", 6)


def test_pages_of_four_then_two() -> None:
    store = load(*SOURCES)
    first = _explain(store, page_size=4)
    assert _rows(first) == ALL_ROWS[:4]
    assert first.total_size == 6 and first.next_page_token
    second = _explain(store, page_size=4, page_token=first.next_page_token)
    assert _rows(second) == ALL_ROWS[4:]
    assert (second.next_page_token, second.total_size) == ("", 6)
    # The excluded rows keep every failing check (the page evaluates only its own rows).
    assert [r.reason for r in second.runtimes] == [
        "runtime is disabled",
        "model size 3.21B is outside supported range [1B, 2B]",
    ]


def test_page_size_may_change_between_pages() -> None:
    store = load(*SOURCES)
    first = _explain(store, page_size=1)
    rest = _explain(store, page_size=100, page_token=first.next_page_token)
    assert _rows(first) + _rows(rest) == ALL_ROWS


def test_filter_by_runtime_name_keeps_the_ranks_of_the_whole_table() -> None:
    response = _explain(load(*SOURCES), runtime_name="team-llama")
    assert _rows(response) == [("team-llama", "VERDICT_CANDIDATE", 1), ("team-llama", "VERDICT_EXCLUDED", 0)]
    assert [selector_pb2.RuntimeKind.Name(r.runtime.kind) for r in response.runtimes] == [
        "RUNTIME_KIND_SERVING_RUNTIME",
        "RUNTIME_KIND_CLUSTER_SERVING_RUNTIME",
    ]
    assert response.total_size == 2
    assert _rows(_explain(load(*SOURCES), runtime_name="no-such-runtime")) == []


@pytest.mark.parametrize(
    "paging, field, description",
    [
        ({"page_size": -1}, "page_size", "page_size must be between 0 and 1000, got -1"),
        ({"page_size": 1001}, "page_size", "page_size must be between 0 and 1000, got 1001"),
        (
            {"page_token": "not-a-token"},
            "page_token",
            "page_token is not a token of this request (it must come from next_page_token of the same request)",
        ),
    ],
)
def test_bad_paging_is_invalid_argument(paging: dict, field: str, description: str) -> None:
    with pytest.raises(RequestError) as err:
        _explain(load(*SOURCES), **paging)
    assert err.value.code == "INVALID_ARGUMENT"
    assert [(v.field, v.description) for v in err.value.violations] == [(field, description)]


def test_a_token_is_bound_to_its_request() -> None:
    store = load(*SOURCES)
    token = _explain(store, page_size=2).next_page_token
    with pytest.raises(RequestError) as err:
        _explain(store, page_size=2, page_token=token, runtime_name="team-llama")
    assert [v.field for v in err.value.violations] == ["page_token"]
