"""The overhead benchmark's parts (`rxagent bench`): the fake server, the variants, the phases."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import aiohttp
import pytest
from hypothesis import given
from hypothesis import strategies as st

from rxagent.testing._bench_server import FakeOpenAI, latency_of, running
from rxagent.testing._overhead import (
    RAW,
    RXAGENT,
    BenchError,
    Settings,
    ToolCounter,
    first_messages,
    measure_concurrency,
    measure_phase,
    peak_rss_mb,
    raw_aiohttp,
    rxagent_variant,
    server_stats,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

CHUNKS = 4  # text chunks of a streamed final answer: "done" + " done" * 3


@pytest.fixture
async def root() -> AsyncIterator[str]:
    """The fake server (K=3), in this test's event loop, on a free port of 127.0.0.1."""
    async with running(FakeOpenAI(3, CHUNKS)) as port:
        yield f"http://127.0.0.1:{port}"


async def _post(
    session: aiohttp.ClientSession, url: str, body: Any
) -> tuple[int, bytes, str | None]:
    async with session.post(url, json=body) as r:
        return r.status, await r.read(), r.headers.get("Content-Type")


def _tool_messages(count: int) -> list[dict[str, Any]]:
    return [*first_messages(), *({"role": "tool", "content": "3"} for _ in range(count))]


async def test_the_server_counts_what_it_answers(root: str) -> None:
    url = root + "/v1/chat/completions"
    async with aiohttp.ClientSession() as session:
        status, body, _ = await _post(session, url, {"messages": _tool_messages(0)})
        assert status == 200
        assert b'"tool_calls":[{"id":"call_1"' in body  # ids spliced in per request
        status, body, _ = await _post(session, url, {"messages": _tool_messages(3)})
        assert b'"content":"done"' in body
        stream = {"messages": _tool_messages(3), "stream": True}
        status, body, kind = await _post(session, url, stream)
        assert kind == "text/event-stream"
        assert body.count(b'"content":" done"') == CHUNKS - 1
        assert body.endswith(b"data: [DONE]\n\n")
        assert (await _post(session, url, {"no": "messages"}))[0] == 400
        async with session.get(root + "/v1/models") as r:
            assert r.status == 404
        stats = await server_stats(session, root)
        assert stats == {
            "requests": 3,
            "stream_requests": 1,
            "tool_call_responses": 1,
            "final_responses": 2,
            "bad_requests": 1,
            "other_paths": 1,
        }
        assert (await server_stats(session, root, reset=True)) == stats
        assert set((await server_stats(session, root)).values()) == {0}
        async with session.get(root + "/last") as r:
            assert (await r.json())["stream"] is True


async def test_the_server_waits_the_latency_the_path_asks_for(root: str) -> None:
    body = {"messages": _tool_messages(3)}
    async with aiohttp.ClientSession() as session:
        await _post(session, root + "/v1/chat/completions", body)  # connect first
        t0 = time.perf_counter()
        await _post(session, root + "/v1/chat/completions", body)
        fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        status, _, _ = await _post(session, root + "/lat/80/v1/chat/completions", body)
        slow = time.perf_counter() - t0
    assert status == 200
    assert slow >= 0.08 > fast


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_latency_of_reads_milliseconds_from_the_path(ms: float) -> None:
    assert latency_of(f"/lat/{ms!r}/v1/chat/completions") == pytest.approx(ms / 1000)
    assert latency_of(f"/v1/{ms!r}/chat/completions") == 0.0


@pytest.mark.parametrize("path", ["/lat/", "/lat/x/v1", "/lat/-5/v1", "/lat"])
def test_latency_of_a_bad_path_is_none(path: str) -> None:
    assert latency_of(path) == 0.0


@pytest.mark.parametrize("stream", [False, True], ids=["nonstream", "stream"])
@pytest.mark.parametrize("variant", [raw_aiohttp, rxagent_variant], ids=[RAW, RXAGENT])
async def test_a_variant_runs_the_workload(root: str, stream: bool, variant: Any) -> None:
    v = variant(root + "/v1", stream)
    calls = ToolCounter.calls
    try:
        text = await v.run()
    finally:
        await v.close()
    assert text == (" ".join(["done"] * CHUNKS) if stream else "done")
    assert ToolCounter.calls - calls == 3
    if v.checks is not None:
        assert v.checks() == (
            {"hooks_saw_events": True, "hooks_saw_every_consumed_event": True}
            if stream
            else {"hooks_saw_events": True}
        )
    async with aiohttp.ClientSession() as session:
        stats = await server_stats(session, root)
    assert stats["requests"] == 4
    assert stats["stream_requests"] == (4 if stream else 0)
    assert stats["final_responses"] == 1


async def test_a_phase_pairs_the_variants_and_checks_every_run(root: str) -> None:
    settings = Settings(n=3, warmup=1, block=2, chunks=CHUNKS)
    phase = await measure_phase([raw_aiohttp, rxagent_variant], root, settings, stream=True)
    assert phase["verified"], phase["checks"]
    assert phase["server_stats"]["requests"] == 2 * 3 * 4  # warm-up runs are not counted
    assert phase["tool_calls"] == 2 * 3 * 3
    raw, rx = phase["variants"][RAW], phase["variants"][RXAGENT]
    assert raw["runs"] == rx["runs"] == 3
    assert rx["ratio"] == pytest.approx(rx["run_ms_median"] / raw["run_ms_median"])
    assert rx["cpu_step_us_median"] == pytest.approx(rx["cpu_run_ms_median"] * 1e3 / 4)
    assert "ratio" not in raw


async def test_the_concurrency_phase_counts_runs_per_second(root: str) -> None:
    settings = Settings(conc_m=5, conc_batches=2, latency_ms=20)
    phase = await measure_concurrency([raw_aiohttp, rxagent_variant], root, settings)
    assert phase["verified"], phase["checks"]
    for result in phase["variants"].values():
        assert len(result["batch_wall_s"]) == 2
        assert min(result["batch_wall_s"]) >= 4 * 0.02  # 4 model calls a run, one after another
        assert result["runs_per_s"] == pytest.approx(5 / result["wall_s_median"])
    rx = phase["variants"][RXAGENT]
    assert rx["ratio"] == pytest.approx(rx["runs_per_s"] / phase["variants"][RAW]["runs_per_s"])


async def test_a_failing_run_fails_the_phase(root: str) -> None:
    def broken(base_url: str, stream: bool) -> Any:
        v = raw_aiohttp(base_url, stream)
        run = v.run

        async def wrong() -> str:
            await run()
            return "nothing"

        v.run = wrong
        return v

    with pytest.raises(BenchError, match="unexpected final text 'nothing'"):
        await measure_concurrency([broken], root, Settings(conc_m=2, conc_batches=1))


def test_peak_rss_is_this_process_s() -> None:
    assert 1 < peak_rss_mb() < 100_000
