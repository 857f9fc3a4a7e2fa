"""WatchSelections, PreviewCacheChange and the runtime webhook's warning end to end (docs/api.md "Watch selections and preview a change"): the
real server (``serve --manifests`` of the OME catalog's runtimes and ome-cluster, whose eight
InferenceServices it caches) on 127.0.0.1, through the Python client and grpcurl, and the docs/api.md
section "Watch selections and preview a change" as written."""

from __future__ import annotations

import contextlib
import io
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from conftest import CATALOG_RUNTIMES, OME_CLUSTER, REPO_ROOT, ServerProcess
from helpers_docs import isvc, objects
from helpers_markdown import page, section
from helpers_watch import (
    CHILD,
    HOPPER,
    OMENATIVE,
    QWEN_32B,
    child,
    demo_serving_runtime,
    hopper,
    key,
    nobody_serving_runtime,
    qwen_32b_filled,
    rows,
)
from ome.selector.v1 import selector_pb2
from ome_selector_client import SelectionWatch, SelectorClient, SelectorError

ABSENT = None  # never failed: no RuntimeReady (ome-selection-facts.md 8.6)
API_PAGE = page("docs/api.md")


def start(running_server: Callable[..., ServerProcess], tmp_path: Path, *extra: str) -> ServerProcess:
    """The real cluster plus an InferenceService of the format-less model qwen2-5-32b."""
    extra_isvc = tmp_path / "qwen-32b.yaml"
    extra_isvc.write_text(yaml.safe_dump(isvc(QWEN_32B, namespace="demo", name="qwen-32b")))
    return running_server(manifests=[CATALOG_RUNTIMES, OME_CLUSTER, extra_isvc], extra_args=list(extra))


def until(watch: SelectionWatch, kind: str) -> list[selector_pb2.WatchSelectionsResponse]:
    """The events up to and including the next one of ``kind``."""
    out = []
    for event in watch:
        out.append(event)
        if event.HasField(kind):
            return out
    raise AssertionError(f"the stream ended before {kind}: {rows(out)}")


def brief(events: list[selector_pb2.WatchSelectionsResponse]) -> list[tuple[object, ...]]:
    """``rows`` with a change as (namespace/name, runtime before, runtime after, step)."""
    return [r if r[0] == "write" else r[:3] + r[5:6] for r in rows(events)]


@pytest.fixture
def client(running_server: Callable[..., ServerProcess], tmp_path: Path) -> Iterator[SelectorClient]:
    server = start(running_server, tmp_path)
    with SelectorClient(server.address) as c:
        c.wait_until_serving(timeout=30)
        yield c


def test_every_kind_of_write_gives_its_exact_events(client: SelectorClient) -> None:
    with client.watch_selections() as watch:
        initial = until(watch, "initial_events_end")
        assert rows(initial)[-1] == ("initial_events_end", initial[-1].initial_events_end.cache_version, 9)
        assert [r[1:] for r in rows(initial)[3:7]] == [
            ("llama-demo/llama-70b", OMENATIVE),
            ("llama-demo/llama-70b-h100", HOPPER),
            ("llama-demo/llama-70b-l40s", None),
            ("llama-demo/llama-70b-native", OMENATIVE),
        ]

        client.upsert_objects(objects(nobody_serving_runtime()), "v2")  # moves nothing
        assert rows(until(watch, "write")) == [("write", "v2", 0, 0, 0)]

        client.upsert_objects(objects(hopper(4)), "v3")
        ranking = f"ClusterServingRuntime {HOPPER} ranks above ClusterServingRuntime {OMENATIVE} now: score 8 > 6"
        cause = [f"ClusterServingRuntime {HOPPER}: priority 2 → 4"]
        assert rows(until(watch, "write")) == [
            ("llama-demo/llama-70b", OMENATIVE, HOPPER, ABSENT, cause, "CHANGE_STEP_RANKING", ranking),
            ("llama-demo/llama-70b-native", OMENATIVE, HOPPER, ABSENT, cause, "CHANGE_STEP_RANKING", ranking),
            ("write", "v3", 6, 2, 2),
        ]
        client.upsert_objects(objects(hopper(2)), "v4")
        assert [(r[0], r[2]) for r in rows(until(watch, "write"))[:2]] == [
            ("llama-demo/llama-70b", OMENATIVE),
            ("llama-demo/llama-70b-native", OMENATIVE),
        ]

        client.upsert_objects(objects(child(("1B", "8B"))), "v5")  # the named runtime's warning appears
        events = until(watch, "write")
        assert [r[0:1] + r[5:] for r in rows(events)[:1]] + rows(events)[1:] == [
            (
                "team-a/llama-70b-named-child",
                "CHANGE_STEP_CHECK_FAILED",
                f"ServingRuntime team-a/{CHILD} fails the model size check now: "
                "model size 70B is outside supported range [1B, 8B]",
            ),
            ("write", "v5", 2, 1, 1),
        ]
        assert [w.reason for w in events[0].change.after.warnings] == ["RuntimeCompatibilityAdvisory"]
        client.upsert_objects(objects(child(("60B", "75B"))), "v6")  # ... and disappears
        events = until(watch, "write")
        assert (rows(events)[0][5], list(events[0].change.after.warnings)) == ("CHANGE_STEP_CHECK_PASSED", [])

        client.upsert_objects(objects(qwen_32b_filled()), "v7")  # a runtime becomes selectable
        assert brief(until(watch, "write")) == [
            ("demo/qwen-32b", None, "srt-deepseek-r1-distill-qwen-14b", "CHANGE_STEP_MODEL"),
            ("write", "v7", 1, 1, 1),
        ]

        client.upsert_objects(objects(demo_serving_runtime()), "v8")  # wins only in llama-demo
        assert brief(until(watch, "write")) == [
            ("llama-demo/llama-70b", OMENATIVE, "demo-llama-70b", "CHANGE_STEP_RUNTIME_ADDED"),
            ("llama-demo/llama-70b-l40s", None, None, "CHANGE_STEP_CONFIGURATION"),
            ("llama-demo/llama-70b-native", OMENATIVE, "demo-llama-70b", "CHANGE_STEP_RUNTIME_ADDED"),
            ("write", "v8", 4, 3, 3),
        ]

        client.delete_objects([key("CLUSTER_SERVING_RUNTIME", HOPPER)], "v9")  # RuntimeNotFound
        got = {r[0]: r for r in rows(until(watch, "write"))}
        assert got["llama-demo/llama-70b-h100"][1:4] + got["llama-demo/llama-70b-h100"][5:6] == (
            HOPPER,
            None,
            ("False", "RuntimeNotFound"),
            "CHANGE_STEP_RUNTIME_DELETED",
        )
        assert got["team-a/llama-70b-named-child"][5] == "CHANGE_STEP_NAMED_RUNTIME"
        assert got["write"] == ("write", "v9", 8, 5, 5)


def test_preview_applies_nothing_and_the_webhook_warns(client: SelectorClient) -> None:
    before = client.get_cache_status()
    preview = client.preview_cache_change(objects(hopper(4)))
    assert [(c.name, c.before.runtime.name, c.after.runtime.name) for c in preview.changes] == [
        ("llama-70b", OMENATIVE, HOPPER),
        ("llama-70b-native", OMENATIVE, HOPPER),
    ]
    assert (preview.reevaluated, client.get_cache_status().generation) == (6, before.generation)
    verdict = client.validate_serving_runtime(objects(hopper(4))[0].cluster_serving_runtime)
    assert (verdict.allowed, list(verdict.warnings)) == (
        True,
        [
            "this change moves 2 InferenceServices to another runtime (llama-demo/llama-70b, llama-demo/llama-70b-native)"
        ],
    )
    with pytest.raises(SelectorError) as caught:
        client.preview_cache_change(deletes=[key("SERVING_RUNTIME", "team-llama-70b")])
    assert (caught.value.code.name, caught.value.field_violations) == (
        "INVALID_ARGUMENT",
        [("deletes[0].namespace", "Required value")],
    )


def test_a_bad_label_selector_is_invalid_argument(client: SelectorClient) -> None:
    with pytest.raises(SelectorError) as caught:
        next(client.watch_selections(label_selector="team in x"))
    assert caught.value.code.name == "INVALID_ARGUMENT"
    assert [f for f, _ in caught.value.field_violations] == ["labelSelector"]


def test_a_slow_watcher_gets_resync_and_the_full_state(
    running_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = start(running_server, tmp_path, "--watch-queue", "2")
    with SelectorClient(server.address) as client, client.watch_selections(namespace="llama-demo") as watch:
        until(watch, "initial_events_end")
        client.upsert_objects(objects(hopper(4)), "v2")  # 2 changes and the stats do not fit in 2
        assert rows(until(watch, "initial_events_end")) == [
            ("resync", "the watcher fell behind by more than 2 events; the full state follows"),
            ("current", "llama-demo/llama-70b", HOPPER),
            ("current", "llama-demo/llama-70b-h100", HOPPER),
            ("current", "llama-demo/llama-70b-l40s", None),
            ("current", "llama-demo/llama-70b-native", HOPPER),
            ("initial_events_end", "v2", 4),
        ]


def test_a_watcher_past_its_byte_bound_gets_resync(
    running_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = start(running_server, tmp_path, "--watch-queue-bytes", "600")
    with SelectorClient(server.address) as client, client.watch_selections(namespace="llama-demo") as watch:
        until(watch, "initial_events_end")
        client.upsert_objects(objects(nobody_serving_runtime()), "v2")  # the stats alone fit
        assert rows(until(watch, "write")) == [("write", "v2", 0, 0, 0)]
        client.upsert_objects(objects(hopper(4)), "v3")  # two changed outcomes do not fit in 600 bytes
        got = rows(until(watch, "initial_events_end"))
        assert got[0] == ("resync", "the watcher fell behind by more than 600 bytes of events; the full state follows")
        assert got[-1] == ("initial_events_end", "v3", 4)


def test_the_stream_ends_cleanly_when_the_server_drains(
    running_server: Callable[..., ServerProcess], tmp_path: Path
) -> None:
    server = start(running_server, tmp_path)
    with SelectorClient(server.address) as client:
        watch = client.watch_selections()
        until(watch, "initial_events_end")
        assert server.stop() == 0
        assert list(watch) == []  # ended with OK: no error raised
    assert any("WatchSelections code=OK" in line for line in server.lines)


def _section(title: str) -> str:
    return section(API_PAGE, title)


def test_the_readme_section_runs_as_written(running_server: Callable[..., ServerProcess]) -> None:
    server = running_server(manifests=[CATALOG_RUNTIMES, OME_CLUSTER])
    section = _section("Watch selections and preview a change")
    [code] = re.findall(r"```python\n(.*?)```", section, re.S)
    [commands] = re.findall(r"```sh\n(.*?)```", section, re.S)
    expected = [line.strip()[2:] for line in code.splitlines() if line.strip().startswith("# ") and "?" not in line]
    expected = [line for line in expected if not line.startswith(("The current", "What would"))]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code.replace("127.0.0.1:50051", server.address), "docs/api.md", "exec"), {})
    assert out.getvalue().splitlines() == expected

    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    script = commands.replace("127.0.0.1:50051", server.address)
    watch_line = next(line for line in script.splitlines() if "WatchSelections" in line)
    watcher = subprocess.Popen(
        ["bash", "-euo", "pipefail", "-c", watch_line], cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    assert watcher.stdout is not None
    seen = []
    for line in watcher.stdout:  # grpcurl prints each message as it arrives
        seen.append(line)
        if '"initialEventsEnd"' in line or "initial_events_end" in line:
            break
    rest = script.replace(watch_line + "\n", "")
    preview = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", rest], cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert preview.returncode == 0, preview.stderr
    assert f"{HOPPER} was deleted" in preview.stdout
    assert server.stop() == 0  # the watch ends with OK, so grpcurl exits 0
    rest_of_watch = watcher.stdout.read()
    assert watcher.wait(timeout=30) == 0
    text = "".join(seen) + rest_of_watch
    assert text.count('"current"') == 4
    assert '"name": "llama-70b-l40s"' in text


def test_a_watch_opened_right_after_a_write_starts_at_that_write_or_later(client: SelectorClient) -> None:
    """Read-your-writes: 40 times, a write (moving two InferenceServices, then back), then at once
    a new WatchSelections; its initial state is at the write's generation or later, and no event
    it gets afterwards is of that write or an earlier one."""
    for i in range(40):
        status = client.upsert_objects(objects(hopper(4 if i % 2 == 0 else 2)), f"ryw-{i}")
        with client.watch_selections("llama-demo") as watch:
            initial = until(watch, "initial_events_end")
            end = initial[-1].initial_events_end
            assert end.generation >= status.generation, (i, end.generation, status.generation)
            held = {e.current.name: e.current.runtime.name for e in initial if e.HasField("current")}
            assert held["llama-70b"] == (HOPPER if i % 2 == 0 else OMENATIVE), i
