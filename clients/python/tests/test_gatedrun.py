"""GatedRun and AsyncGatedRun against a real gate: the commit point, replays, JSON results."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

import soundgate
from soundgate import aio
from soundgate.gatedrun import (
    CUT_MARK,
    AsyncGatedRun,
    GatedRun,
    ResultDecodeError,
    ResultNotStorableError,
    approval_key,
    failure_message,
)
from gateproc import TOKENS

VALUES = [
    {"id": 42, "to": ["a@example.com"], "ok": True, "cost": 1.5, "note": None, "text": "h\u00e9llo \U0001F600"},
    [1, [2, [3, []]], {"nested": {"deeper": False}}],
    "plain text",
    0,
    None,
    True,
]


@pytest.mark.parametrize("value", VALUES, ids=lambda v: type(v).__name__)
def test_a_replay_gets_back_the_value_of_the_first_run(agent, run, value):
    calls = []
    first = GatedRun(agent=agent, run=run).effect("send", lambda: calls.append(1) or value)
    assert first.committed and first.value == value
    again = GatedRun(agent=agent, run=run).effect("send", lambda: calls.append(1) or "must not run")
    assert again.status == "duplicate" and again.value == value and type(again.value) is type(value)
    assert calls == [1]


def test_a_value_over_the_limit_is_an_error_and_no_result_is_recorded(agent, run):
    gr = GatedRun(agent=agent, run=run)
    with pytest.raises(ResultNotStorableError) as e:
        gr.effect("big", lambda: "x" * 20000)
    assert "20002 bytes" in str(e.value)
    eff = agent.status(run, "big")["effect"]
    assert eff["status"] == "admitted" and "outcome" not in eff  # it ran; nothing made up
    d = gr.effect("big", lambda: "again")
    assert d.status == "duplicate" and d.answer.outcome is None and d.value is None


@pytest.mark.parametrize("value", [{1, 2}, float("nan"), object(), b"bytes"], ids=repr)
def test_a_value_that_is_not_json_is_an_error(agent, run, value):
    with pytest.raises(ResultNotStorableError):
        GatedRun(agent=agent, run=run).effect("k", lambda: value)
    assert agent.status(run, "k")["effect"]["status"] == "admitted"


def test_a_recorded_result_that_is_not_json_is_a_decode_error(agent, run):
    agent.admit(run, "k", 1)
    agent.complete(run, "k", "ok", "250 OK")  # written by something other than GatedRun
    with pytest.raises(ResultDecodeError) as e:
        GatedRun(agent=agent, run=run).effect("k", lambda: None)
    assert e.value.result == "250 OK"


def test_a_failure_is_recorded_with_its_message_cut_on_a_character(agent, run):
    msg = "\u20ac" * 7000  # 21,000 bytes
    def boom():
        raise RuntimeError(msg)
    with pytest.raises(RuntimeError):
        GatedRun(agent=agent, run=run).effect("k", boom)
    d = agent.admit(run, "k", 1)
    assert d.outcome == "failed"
    assert d.result.endswith(CUT_MARK) and len(d.result.encode()) <= soundgate.RESULT_BYTES_MAX
    assert set(d.result[: -len(CUT_MARK)]) == {"\u20ac"}
    again = GatedRun(agent=agent, run=run).effect("k", lambda: "x")
    assert again.status == "duplicate" and again.value is None  # a failure hands back no value
    assert again.failed and again.error == d.result


def test_a_short_failure_message_is_kept_whole():
    assert failure_message(ValueError("nope")) == "nope"
    assert failure_message(ValueError()) == "ValueError"
    cut = failure_message(ValueError("a" * 20000))
    assert len(cut.encode()) == soundgate.RESULT_BYTES_MAX and cut.endswith(CUT_MARK)


def test_an_interrupted_effect_records_nothing(agent, run):
    def interrupted():
        raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        GatedRun(agent=agent, run=run).effect("k", interrupted)
    assert agent.status(run, "k")["effect"]["status"] == "admitted"


def test_plan_holds_the_siblings_until_the_human_decides(agent, approver, run):
    seen = []
    gr = GatedRun(agent=agent, run=run, wait_ms=200, total_wait_ms=10000, observe=seen.append)
    assert gr.plan(gated=["wire"], effects=["wire", "email"]) == [approval_key("wire")]
    assert agent.status(run)["pending"] == [approval_key("wire")]
    assert gr.plan(gated=["wire"], effects=["wire", "email"]) == [approval_key("wire")]  # replay: no change
    world = []

    def human():
        time.sleep(0.3)
        world.append("decided")
        approver.decide(run, approval_key("wire"), "approve")

    threading.Thread(target=human).start()
    out = gr.effect("email", lambda: world.append("email") or "sent")
    assert out.committed and world == ["decided", "email"]  # P1: the sibling waited
    assert gr.effect("wire", lambda: world.append("wire")).committed
    assert any(o.get("why") == "after waiting" for o in seen)


def test_a_rejected_plan_runs_nothing(agent, approver, run):
    gr = GatedRun(agent=agent, run=run, wait_ms=200, total_wait_ms=5000)
    gr.plan(gated=["wire"], effects=["wire", "email"])
    approver.decide(run, approval_key("wire"), "reject")
    for k in ("wire", "email"):
        out = gr.effect(k, lambda: pytest.fail("ran after a rejection"))
        assert (out.status, out.answer.reason) == ("denied", "rejected")


def test_a_wait_that_runs_out_is_held_and_runs_nothing(agent, run):
    gr = GatedRun(agent=agent, run=run, wait_ms=100, total_wait_ms=300)
    gr.plan(gated=["wire"], effects=["email"])
    assert gr.effect("email", lambda: pytest.fail("ran while held")).status == "held"


def test_needs_an_agent():
    with pytest.raises(TypeError):
        GatedRun(agent=None, run="r")


def test_async_gated_run(gate, run):
    async def main():
        agent = await aio.connect(token=TOKENS["agent"], port=gate.port)
        approver = await aio.connect(token=TOKENS["approver"], port=gate.port)
        try:
            gr = AsyncGatedRun(agent=agent, run=run, wait_ms=200, total_wait_ms=10000)
            await gr.plan(gated=["wire"], effects=["wire", "email"])
            world = []

            async def send():
                world.append("email")
                return {"status": 250}

            async def human():
                await asyncio.sleep(0.3)
                world.append("decided")
                await approver.decide(run, approval_key("wire"), "approve")

            out, _ = await asyncio.gather(gr.effect("email", send), human())
            assert out.committed and out.value == {"status": 250} and world == ["decided", "email"]
            again = await AsyncGatedRun(agent=agent, run=run).effect("email", send)
            assert again.status == "duplicate" and again.value == {"status": 250} and world.count("email") == 1
            assert (await gr.effect("wire", lambda: "sync fn is fine")).value == "sync fn is fine"
            with pytest.raises(ResultNotStorableError):
                await gr.effect("big", lambda: ["y" * 17000])
        finally:
            await agent.close()
            await approver.close()
    asyncio.run(main())
