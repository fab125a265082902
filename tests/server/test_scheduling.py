"""A slow document never holds up the others, and an outdated analysis is
cancelled (issue 13, item 3).

The slow document is a generated program of a few thousand functions
(bench/generate.py's blocks) whose every body reads `dim D`: changing D's
value re-checks all of them, which takes seconds.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time

import pytest
import pytest_lsp
from lsp_support import CONFIG, ROOT, Session, init_params
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcContentModified, JsonRpcException, JsonRpcRequestCancelled
from pytest_lsp import LanguageClient

BLOCKS = 320  # about 16,000 lines, 1,920 functions


def slow_program(blocks: int = BLOCKS, d: int = 64) -> str:
    import sys

    sys.path.insert(0, str(ROOT / "bench"))
    try:
        from generate import BLOCK, HEADER
    finally:
        sys.path.pop(0)
    return HEADER.replace("dim D = 64", f"dim D = {d}") + "".join(BLOCK.format(i=i) for i in range(blocks))


SMALL = "dim K = 4\n\nfn main():\n    x = randn([3 K], seed=1)\n    y = x + 1.0\n    print(y)\n"


@pytest_lsp.fixture(config=CONFIG)
async def editor(lsp_client: LanguageClient):
    await lsp_client.initialize_session(init_params("visual-studio-code", diagnostics={"debounceMs": 20}))
    yield
    await lsp_client.shutdown_session()


def published_versions(s: Session, uri: str) -> list[int]:
    return [p.version for p in s.client.published if p.uri == uri]


async def test_requests_on_a_small_document_do_not_wait_for_a_slow_one(editor: LanguageClient) -> None:
    s = Session(editor)
    await s.diagnostics(s.open(SMALL))  # the server has started and loaded everything
    big = s.open(slow_program(), s.uri("slow.qv"))
    small = s.open(SMALL)
    started = time.perf_counter()
    await s.diagnostics(small)
    first = time.perf_counter() - started
    x = SMALL.index("y = x") + 4
    delays: list[float] = []  # of each request, hover or pull
    counts = []  # of samples taken while the slow document was being analysed, in each round
    # While the slow document is being analysed (its first analysis, then a
    # change of D that re-checks every body): hovers and pulled diagnostics
    # of the small one.
    for round_ in range(2):
        if round_ == 1:
            await s.diagnostics(big, timeout=120)
            text = s.texts[big]
            at = text.index("dim D = 64") + len("dim D = ")
            s.change(big, at, at + 2, "65")
        await asyncio.sleep(0.1)  # the slow analysis is under way (and the large didOpen read)
        analysing = 0
        for _ in range(30):
            if published_versions(s, big) and published_versions(s, big)[-1] == s.versions[big]:
                break
            analysing += 1
            t0 = time.perf_counter()
            h = await s.hover(small, x)
            t1 = time.perf_counter()
            report = await s.client.text_document_diagnostic_async(
                lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(small))
            )
            delays += [t1 - t0, time.perf_counter() - t1]
            assert h is not None and h.contents.value == "```quiver\n(local) x: [3 K]\n```"
            assert list(report.items) == []
            await asyncio.sleep(0.02)
        counts.append(analysing)
    print(
        f"\nsmall document while a slow one is analysed: first diagnostics {first * 1000:.0f} ms; "
        f"{len(delays)} hovers and pulls: median {statistics.median(delays) * 1000:.1f} ms, "
        f"{counts} while analysing; 90th percentile {statistics.quantiles(delays, n=10)[-1] * 1000:.1f} ms, max {max(delays) * 1000:.0f} ms"
    )
    # Answered while the slow document was still being analysed, every time:
    # they did not wait for it (how fast they were is bench/lsp_latency.py's).
    assert min(counts) >= 5, "the slow document was analysed too fast to measure anything"
    await s.diagnostics(big, timeout=120)


def cpu_seconds(client: LanguageClient) -> float:
    """The server process' CPU time so far (Linux)."""
    server = client._server  # pygls' handle on the process it started
    assert server is not None
    with open(f"/proc/{server.pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="reads the server's CPU time from /proc")
async def test_an_outdated_analysis_is_cancelled(editor: LanguageClient) -> None:
    """Three quick changes of D, each of which re-checks every body: the
    analyses of the first two are cancelled when the next arrives, so the
    three cost about as much as one. (CPU time, not wall time: this machine
    may be shared.)"""
    s = Session(editor)
    big = s.open(slow_program(), s.uri("slow.qv"))
    await s.diagnostics(big, timeout=120)

    def set_d(value: int) -> int:
        text = s.texts[big]
        at = text.index("dim D = ") + len("dim D = ")
        end = text.index("\n", at)
        return s.change(big, at, end, str(value))

    cpu, wall = cpu_seconds(editor), time.perf_counter()
    v = set_d(65)
    await s.diagnostics(big, v, timeout=120)
    one_cpu, one_wall = cpu_seconds(editor) - cpu, time.perf_counter() - wall

    cpu, wall = cpu_seconds(editor), time.perf_counter()
    for value in (66, 67):
        set_d(value)
        await asyncio.sleep(0.1)  # its analysis starts (debounce 20 ms), then a newer version arrives
    v = set_d(68)
    await s.diagnostics(big, v, timeout=120)
    three_cpu, three_wall = cpu_seconds(editor) - cpu, time.perf_counter() - wall
    print(
        f"\none change of D: {one_wall * 1000:.0f} ms to its diagnostics ({one_cpu:.2f} s CPU); "
        f"three quick ones: {three_wall * 1000:.0f} ms ({three_cpu:.2f} s CPU)"
    )
    assert published_versions(s, big)[-2:] == [v - 3, v]  # the outdated versions were never published
    # Not cancelled, the three analyses would each run to the end: 3 x one.
    assert three_cpu < 2.2 * one_cpu, (one_cpu, three_cpu)


async def test_a_request_keeps_its_version_alive_until_the_client_cancels_it(editor: LanguageClient) -> None:
    """A request waits for the analysis of the version it was asked about,
    and is answered for that text even when newer versions arrive meanwhile.
    Once the client cancels the last request waiting for an outdated
    analysis, that analysis is cancelled too."""
    s = Session(editor)
    big = s.open(slow_program(), s.uri("slow.qv"))
    await s.diagnostics(big, timeout=120)
    text = s.texts[big]
    at = text.index("dim D = 64") + len("dim D = ")
    h_at = s.pos(big, text.index("h = relu"))

    def hover(msg_id: str):
        params = lsp.HoverParams(lsp.TextDocumentIdentifier(big), h_at)
        return asyncio.ensure_future(s.client.protocol.send_request_async("textDocument/hover", params, msg_id=msg_id))

    s.change(big, at, at + 2, "65")
    first = hover("waits-for-65")
    await asyncio.sleep(0.1)  # it waits for the analysis of D = 65
    s.change(big, at, at + 2, "66")
    h = await first
    assert h is not None and h.contents.value == "```quiver\n(local) h: [b H] NonNeg\n```"

    s.change(big, at, at + 2, "67")
    second = hover("waits-for-67")
    await asyncio.sleep(0.1)
    cpu = cpu_seconds(editor)
    v = s.change(big, at, at + 2, "68")
    s.raw_notify("$/cancelRequest", {"id": "waits-for-67"})
    with pytest.raises(JsonRpcException) as cancelled:
        await second
    assert cancelled.value.code == JsonRpcRequestCancelled.CODE
    await s.diagnostics(big, v, timeout=120)
    assert published_versions(s, big)[-1] == v and v - 1 not in published_versions(s, big)
    print(f"\nafter the cancel: {cpu_seconds(editor) - cpu:.2f} s CPU to the diagnostics of the last version")


async def test_a_request_on_a_document_closed_while_it_waits_gets_content_modified(editor: LanguageClient) -> None:
    s = Session(editor)
    text = slow_program()
    big = s.open(text, s.uri("slow.qv"))
    pending = asyncio.ensure_future(s.hover(big, text.index("h = relu")))
    pull = asyncio.ensure_future(
        s.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(big))
        )
    )
    await asyncio.sleep(0.1)  # both wait for the first analysis
    s.close(big)
    with pytest.raises(JsonRpcException) as error:
        await pending
    assert error.value.code == JsonRpcContentModified.CODE
    assert error.value.message == f"{big} changed or closed while this request waited for its analysis"
    # a diagnostic pull: ServerCancelled, asking the client to pull again
    with pytest.raises(JsonRpcException) as pull_error:
        await pull
    assert (pull_error.value.code, pull_error.value.data) == (-32802, {"retriggerRequest": True})
    small = s.open(SMALL)
    await s.diagnostics(small)  # and the server carries on
