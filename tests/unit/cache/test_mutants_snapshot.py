"""What ``snapshot`` does that no other test pinned down (found by ``scripts/mutation.py``):
inheritance merges a chain from the root down (runtime-inheritance.md, "What merges").
"""

from __future__ import annotations

from helpers_docs import load, runtime


def test_a_chain_merges_from_the_root_down() -> None:
    # runtime-inheritance.md, "What merges": OME merges a chain from the root down, laying each
    # runtime's spec over the result for its parent; objects such as modelSizeRange merge field by
    # field, so a child can set modelSizeRange.max and keep its parent's min.
    store = load(
        runtime("base", size=("1B", None)),
        runtime("mid", size=(None, "70B"), inherit_from="base"),
        runtime("leaf", inherit_from="mid", spec={"modelSizeRange": {"max": "8B"}}),
    )
    leaf = store.snapshot.cluster_serving_runtimes["leaf"]
    assert leaf.chain == ("base", "mid", "leaf")
    assert (leaf.merged_spec.model_size_range.min, leaf.merged_spec.model_size_range.max) == ("1B", "8B")
    mid = store.snapshot.cluster_serving_runtimes["mid"]
    assert (mid.merged_spec.model_size_range.min, mid.merged_spec.model_size_range.max) == ("1B", "70B")
