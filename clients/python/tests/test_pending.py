"""What an approval says (description, args_digest, reason) and the inbox (pending),
against a real gate, with the sync and the asyncio clients."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, List

import pytest

import soundgate
from soundgate import aio
from gateproc import TOKENS


def inbox_of(c: soundgate.Client, run: str, limit: int = 2) -> List[Dict[str, Any]]:
    """Every pending approval of run, following the pages (other tests' runs share the gate)."""
    out: List[Dict[str, Any]] = []
    page = c.pending(limit=limit)
    while True:
        out += [a for a in page["approvals"] if a["run"] == run]
        if not page["more"]:
            return out
        page = c.pending(limit=limit, cursor=page["cursor"])


def test_the_approver_reads_what_an_approval_says(agent, approver, run):
    digest = soundgate.args_digest(b'{"to":"ACME","eur":120}')
    assert agent.admit(run, "wire", 1, gated=True, description="Wire 120 EUR\nto ACME", args_digest=digest).held
    time.sleep(0.01)  # the inbox orders by the millisecond, then by run and key
    assert agent.admit(run, "mail", 1, gated=True).held
    listed = inbox_of(approver, run, limit=1)
    assert [a["key"] for a in listed] == ["wire", "mail"]  # oldest first
    wire = listed[0]
    assert wire["description"] == "Wire 120 EUR\nto ACME" and wire["args_digest"] == digest
    assert wire["age_ms"] >= 0 and wire["since_ms"] > 0
    assert "description" not in listed[1]
    assert approver.decide(run, "wire", "approve", reason="invoice checked") == {"decision": "approve", "repeat": False}
    effect = approver.status(run, "wire")["effect"]
    assert effect["reason"] == "invoice checked" and effect["description"] == "Wire 120 EUR\nto ACME"
    assert [a["key"] for a in inbox_of(approver, run)] == ["mail"]


def test_an_agent_may_not_read_the_inbox(agent, run):
    with pytest.raises(soundgate.Forbidden) as e:
        agent.pending()
    assert e.value.method == "pending"


@pytest.mark.parametrize("call,field", [
    (lambda a, r: a.admit(r, "k", 1, gated=True, description="\x1b[2J"), "description"),
    (lambda a, r: a.admit(r, "k", 1, description="x" * 513), "description"),
    (lambda a, r: a.admit(r, "k", 1, args_digest="sha256:ABC"), "args_digest"),
    (lambda a, r: a.decide(r, "k", "reject", reason="no\x07"), "reason"),
    (lambda a, r: a.pending(limit=0), "limit"),
    (lambda a, r: a.pending(limit=1001), "limit"),
])
def test_bad_notes_are_refused_before_anything_is_sent(agent, run, call, field):
    with pytest.raises(soundgate.ArgumentError) as e:
        call(agent, run)
    assert e.value.field == field
    assert agent.status(run)["pending"] == []  # nothing reached the gate


def test_the_gate_refuses_a_cursor_it_did_not_give(approver):
    with pytest.raises(soundgate.OutOfRange) as e:
        approver.pending(cursor="not-a-cursor")
    assert e.value.field == "params.cursor"


def test_asyncio_notes_and_inbox(gate, run):
    async def main() -> None:
        agent = await aio.connect(token=TOKENS["agent"], port=gate.port)
        approver = await aio.connect(token=TOKENS["approver"], path=gate.path)
        try:
            a = await agent.admit(run, "refund", 1, gated=True, description="refund order 4411")
            assert a.held
            mine: List[Dict[str, Any]] = []
            page = await approver.pending(limit=1000)
            while True:  # other tests' approvals share the gate: follow the pages
                mine += [x for x in page["approvals"] if x["run"] == run]
                if not page["more"]:
                    break
                page = await approver.pending(limit=1000, cursor=page["cursor"])
            assert [x["description"] for x in mine] == ["refund order 4411"]
            await approver.decide(run, "refund", "reject", reason="never paid")
            assert (await approver.status(run, "refund"))["effect"]["reason"] == "never paid"
            assert (await agent.admit(run, "refund", 1)).denied
        finally:
            await agent.close()
            await approver.close()
    asyncio.run(main())
