"""The ``no runtime found`` message within ``max_message_bytes``: OME's text byte for byte when it
fits (or with no cap), else OME's head, whole entries nearest misses first and a tail counting
the rest by check; one text for SelectRuntime, admission, Reconcile and the watch outcomes.

Property tests on the random snapshots of test_fast_path (hypothesis, bounded in examples)."""

from __future__ import annotations

import re
from typing import Any
from unittest.mock import patch

import pytest
from helpers_docs import entry, inference_service, isvc, model, objects, runtime
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ome.selector.v1 import selector_pb2
from ome_selector.cache.ingest import compile_request
from ome_selector.cache.store import CacheStore
from ome_selector.engine import evaluation as engine
from ome_selector.engine.evaluation import Verdict
from ome_selector.flows import admission, outcomes, reconcile
from ome_selector.rpc import selection
from ome_selector.rules.results import Check
from ome_selector.texts import messages
from test_fast_path import clusters, models, services

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

HEAD = (
    "no runtime found to support model safetensors with format safetensors in namespace llama-demo. "
    "Checked 5 runtimes (0 namespace-scoped, 5 cluster-scoped). Excluded runtimes: "
)
FORMAT = "model format 'mt:safetensors:1.0.0:LlamaForCausalLM:transformers:4.45.0.dev0' not in supported formats: "
BIG = "c-big (model size 3.21B is outside supported range [70B, 75B])"
SMALL = "e-small (model size 3.21B is outside supported range [1B, 2B])"
OME_TEXT = (
    HEAD + "a-off (runtime is disabled); "
    f"b-gguf ({FORMAT}format name mismatch (model=safetensors, runtime=gguf)); {BIG}; "
    f"d-qwen ({FORMAT}architecture mismatch (model=LlamaForCausalLM, runtime=Qwen2ForCausalLM)); {SMALL}"
)
DOCS = [
    runtime("a-off", disabled=True),
    runtime("b-gguf", entry(format=("gguf", "1"))),
    runtime("c-big", size=("70B", "75B")),
    runtime("d-qwen", entry(architecture="Qwen2ForCausalLM")),
    runtime("e-small", size=("1B", "2B")),
    model(),
]


def _store(cap: int, docs: list[dict[str, Any]] = DOCS) -> CacheStore:
    store = CacheStore(max_message_bytes=cap)
    store.apply_snapshot("v1", objects(*docs))
    return store


def _message(store: CacheStore, view: int = selector_pb2.SELECT_RUNTIME_VIEW_BASIC) -> str:
    request = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(isvc()), view=view)
    return selection.select_runtime(store.snapshot, request).no_runtime_message


def test_omes_text_when_it_fits_the_cap_byte_for_byte() -> None:
    assert len(OME_TEXT.encode()) == 684
    assert _message(_store(684)) == OME_TEXT
    assert _message(_store(0)) == OME_TEXT  # no cap


def test_over_the_cap_keeps_the_near_misses_first_and_counts_the_rest() -> None:
    gguf = f"b-gguf ({FORMAT}format name mismatch (model=safetensors, runtime=gguf))"
    assert _message(_store(683)) == (
        HEAD + f"{BIG}; {SMALL}; {gguf}; … and 2 more: 1 disabled, 1 model format; ExplainRuntimes lists each"
    )
    expected = HEAD + f"{BIG}; {SMALL}; … and 3 more: 1 disabled, 2 model format; ExplainRuntimes lists each"
    assert len(expected.encode()) == 371
    assert _message(_store(371)) == expected
    # One byte less and the second near miss no longer fits whole: it is counted instead.
    assert _message(_store(370)) == (
        HEAD + f"{BIG}; … and 4 more: 1 disabled, 2 model format, 1 model size; ExplainRuntimes lists each"
    )


def test_a_cap_below_the_head_and_tail_keeps_both_and_no_entry() -> None:
    assert _message(_store(1)) == (
        HEAD + "… and 5 more: 1 disabled, 2 model format, 2 model size; ExplainRuntimes lists each"
    )


def test_full_view_carries_the_capped_text_and_every_exclusion() -> None:
    store = _store(371)
    request = selector_pb2.SelectRuntimeRequest(
        inference_service=inference_service(isvc()), view=selector_pb2.SELECT_RUNTIME_VIEW_FULL
    )
    response = selection.select_runtime(store.snapshot, request)
    assert response.no_runtime_message == _message(store)
    assert [x.runtime.name for x in response.exclusions] == ["a-off", "b-gguf", "c-big", "d-qwen", "e-small"]


def test_admission_reconcile_and_the_watch_outcome_carry_the_same_capped_text() -> None:
    store = _store(371)
    text = _message(store)
    assert text.endswith("… and 3 more: 1 disabled, 2 model format; ExplainRuntimes lists each")
    service = inference_service(isvc())
    denial = admission.admit(store.snapshot, service).denial
    assert denial == messages.NO_SUPPORTING_RUNTIME.format(model="llama-3-2-3b-instruct", error=text)
    result = reconcile.reconcile(store.snapshot, service, True)
    assert result.condition is not None and result.condition.message == text
    assert [(e.reason, e.message) for e in result.events] == [(messages.EVENT_RUNTIME_NOT_FOUND, text)]
    tracked = outcomes.evaluate(store.snapshot, service)
    assert tracked.outcome.condition is not None and tracked.outcome.condition.message == text


# ---- properties ---------------------------------------------------------------------------------

_LISTED = (Check.MODEL_SIZE, Check.MODEL_FORMAT, Check.DEPLOYMENT_MODE, Check.ACCELERATOR_CLASS, Check.DISABLED)
_TAIL = re.compile(r"… and (\d+) more: (.*); ExplainRuntimes lists each\Z")
_LABELS = {label: check for check, label in messages.SUMMARY_LABELS.items()}


@SETTINGS
@given(clusters(), models(), services(), st.one_of(st.just(0), st.integers(min_value=1, max_value=4000)))
def test_capped_message_is_omes_head_entries_and_counted_rest(
    cluster: list[dict[str, Any]], model_doc: dict[str, Any], service: dict[str, Any], cap: int
) -> None:
    store = CacheStore(max_message_bytes=cap)
    store.apply_snapshot("v1", objects(*cluster, model_doc))
    snapshot = store.snapshot
    mdl = snapshot.cluster_models["m"]
    request = compile_request(inference_service(service))
    namespace = service["metadata"]["namespace"]
    text = engine.auto_select(snapshot, mdl, request, namespace).no_runtime_message
    evaluations, ranked, ome = engine.exhaustive_auto_select(snapshot, mdl, request, namespace)
    if ome is None:
        assert text is None
        return
    assert text is not None
    if cap == 0 or len(ome.encode()) <= cap or messages.EXCLUDED_RUNTIMES not in ome:  # fits, or no list
        assert text == ome
        return
    # OME's entries, nearest misses first (latest check failed first), then fetch order.
    excluded = [(i, e) for i, e in enumerate(evaluations) if e.verdict is Verdict.EXCLUDED]
    excluded.sort(key=lambda item: (_LISTED.index(item[1].failures[0].check), item[0]))
    entries = [
        (e.failures[0].check, messages.excluded_runtime(e.runtime.name, e.failures[0].message)) for _, e in excluded
    ]
    assert all(entry in ome for _, entry in entries)
    head = ome[: ome.index(messages.EXCLUDED_RUNTIMES)] + messages.EXCLUDED_RUNTIMES
    assert text.startswith(head)
    tail = _TAIL.search(text)
    assert tail is not None
    body = text[len(head) : tail.start()]
    shown = next(k for k in range(len(entries) + 1) if body == "".join(f"{e}; " for _, e in entries[:k]))
    left = entries[shown:]
    assert left  # over the cap, something is left out
    assert int(tail.group(1)) == len(left)
    counts = [part.split(" ", 1) for part in tail.group(2).split(", ")]
    expected = {check: sum(1 for c, _ in left if c is check) for check in Check}
    assert [(int(n), _LABELS[label]) for n, label in counts] == [(n, check.name) for check, n in expected.items() if n]
    assert sum(int(n) for n, _ in counts) == len(left)
    if shown:
        assert len(text.encode()) <= cap
    if len(left) > 1:  # whole entries, as many as fit: the next one would not
        after = expected.copy()
        after[left[0][0]] -= 1
        longer = head + "".join(f"{e}; " for _, e in entries[: shown + 1])
        longer += messages.excluded_tail([(c.name, n) for c, n in after.items() if c in _LISTED])
        assert len(longer.encode()) > cap


@pytest.mark.parametrize("cap", [0, 8192])
def test_no_runtime_in_scope_is_the_bare_head(cap: int) -> None:
    store = _store(cap, [model()])
    assert _message(store) == (
        "no runtime found to support model safetensors with format safetensors in namespace llama-demo"
    )


def test_a_kept_list_is_shared_only_by_heads_of_its_length() -> None:
    # The ClusterServingRuntimes' result is shared across namespaces, and the message's list is
    # kept on it per head length: at 371 bytes "llama-demo" fits two near misses, a namespace
    # one byte longer fits one, a namespace as long as "llama-demo" shares the first list.
    docs = [*DOCS[:-1], model(namespace=None)]
    shared = _store(371, docs)

    def asked(store: CacheStore, namespace: str) -> str:
        doc = isvc(namespace=namespace)
        request = selector_pb2.SelectRuntimeRequest(inference_service=inference_service(doc))
        return selection.select_runtime(store.snapshot, request).no_runtime_message

    with patch.object(engine, "MEMO_MIN_RUNTIMES", 1):  # five runtimes: keep the group's results
        answers = {ns: asked(shared, ns) for ns in ("llama-demo", "llama-demo2", "llama-demx", "llama-demo")}
        results = [r for r in shared.snapshot.cluster.memo.values() if isinstance(r, engine.GroupResult)]
    lists = sorted(key for r in results for key in r.memo if isinstance(key, tuple))
    assert lists == [("message", 0, 152, 371), ("message", 0, 153, 371)]  # one list per head length
    assert answers == {ns: asked(_store(371, docs), ns) for ns in answers}  # each from a fresh store
    assert answers["llama-demo"].endswith(
        f"{BIG}; {SMALL}; … and 3 more: 1 disabled, 2 model format; ExplainRuntimes lists each"
    )
    assert answers["llama-demo2"].endswith(
        f"{BIG}; … and 4 more: 1 disabled, 2 model format, 1 model size; ExplainRuntimes lists each"
    )
    assert answers["llama-demx"] == answers["llama-demo"].replace("llama-demo", "llama-demx")
