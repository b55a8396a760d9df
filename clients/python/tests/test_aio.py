"""The asyncio client against a real gate: pipelining, out-of-order answers, timeouts, closing."""

from __future__ import annotations

import asyncio
import socket
import threading
import time

import pytest

import soundgate
from soundgate import aio
from gateproc import TOKENS, start_gate


def arun(coro):
    return asyncio.run(coro)


def test_roles_and_transports(gate):
    async def main():
        for name in ("agent", "approver", "operator"):
            for where in ({"port": gate.port}, {"path": gate.path}):
                async with await aio.connect(token=TOKENS[name], **where) as c:
                    assert c.role == name
    arun(main())


def test_parked_admit_is_answered_after_the_calls_behind_it(gate, run):
    async def main():
        agent = await aio.connect(token=TOKENS["agent"], port=gate.port)
        approver = await aio.connect(token=TOKENS["approver"], path=gate.path)
        try:
            assert (await agent.admit(run, "gate", 1, gated=True)).held
            parked = asyncio.ensure_future(agent.admit(run, "sibling", 1, wait_ms=20000))
            await asyncio.sleep(0.1)
            # the same connection goes on while the admit is parked
            s = await agent.status(run, "sibling")
            assert s["effect"]["status"] == "held" and not parked.done()
            await approver.decide(run, "gate", "approve")
            a = await asyncio.wait_for(parked, 10)
            assert a.admitted
        finally:
            await agent.close()
            await approver.close()
    arun(main())


def test_many_calls_pipeline_on_one_connection(gate, run):
    async def main():
        async with await aio.connect(token=TOKENS["agent"], port=gate.port) as agent:
            keys = [f"k{i}" for i in range(500)]
            answers = await asyncio.gather(*(agent.admit(run, k, 1) for k in keys))
            assert all(a.admitted for a in answers)
            await asyncio.gather(*(agent.complete(run, k, "ok", k.upper()) for k in keys))
            dups = await asyncio.gather(*(agent.admit(run, k, 1) for k in keys))
            assert [d.result for d in dups] == [k.upper() for k in keys]  # matched by id, not order
    arun(main())


def test_typed_errors_and_refusals_before_sending(gate, run):
    async def main():
        async with await aio.connect(token=TOKENS["agent"], port=gate.port) as agent:
            with pytest.raises(soundgate.Forbidden):
                await agent.cancel(run)
            with pytest.raises(soundgate.UnknownRun):
                await agent.status(run + "-never")
            with pytest.raises(soundgate.ArgumentError):
                await agent.admit(run, "k", True)
            with pytest.raises(soundgate.ArgumentError):
                await agent.admit(run, "\udc80", 1)
            assert (await agent.admit(run, "k", 1)).admitted  # the connection is fine
    arun(main())


def test_cancel_answers_parked_admits(gate, run):
    async def main():
        agent = await aio.connect(token=TOKENS["agent"], port=gate.port)
        operator = await aio.connect(token=TOKENS["operator"], port=gate.port)
        try:
            await agent.admit(run, "gate", 1, gated=True)
            parked = [asyncio.ensure_future(agent.admit(run, f"s{i}", 1, wait_ms=20000)) for i in range(5)]
            await asyncio.sleep(0.1)
            await operator.cancel(run)
            got = await asyncio.wait_for(asyncio.gather(*parked), 10)
            assert {(a.answer, a.reason) for a in got} == {("denied", "cancelled")}
        finally:
            await agent.close()
            await operator.close()
    arun(main())


def test_a_timed_out_call_leaves_the_connection_usable(tmp_path):
    # A fake gate: answers hello and the third request, never the second.
    srv = socket.socket(socket.AF_UNIX)
    path = str(tmp_path / "slow.sock")
    srv.bind(path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        f = conn.makefile("rb")
        import json
        for n, line in enumerate(f):
            req = json.loads(line)
            if n == 1:
                continue
            res = {"version": 1, "role": "agent", "server": "fake"} if n == 0 else {
                "run": "r", "status": "active", "epoch": 1, "pending": []}
            conn.sendall(json.dumps({"jsonrpc": "2.0", "id": req["id"], "result": res}).encode() + b"\n")
        conn.close()

    threading.Thread(target=serve, daemon=True).start()

    async def main():
        c = await aio.connect(token="t", path=path, timeout=0.3)
        t0 = time.monotonic()
        with pytest.raises(soundgate.CallTimeoutError):
            await c.status("r")
        assert 0.25 < time.monotonic() - t0 < 5
        assert (await c.status("r"))["status"] == "active"
        await c.close()
    arun(main())
    srv.close()


def test_calls_in_flight_fail_when_the_gate_goes_away(run_id):
    g = start_gate()

    async def main():
        operator = await aio.connect(token=TOKENS["operator"], port=g.port)
        agent = await aio.connect(token=TOKENS["agent"], port=g.port)
        await operator.open(run_id)
        await agent.admit(run_id, "gate", 1, gated=True)
        parked = asyncio.ensure_future(agent.admit(run_id, "s", 1, wait_ms=20000))
        await asyncio.sleep(0.1)
        await asyncio.get_running_loop().run_in_executor(None, g.stop)
        with pytest.raises((soundgate.ConnectionClosedError, soundgate.ShuttingDown)):
            await asyncio.wait_for(parked, 10)
        with pytest.raises(soundgate.ConnectionClosedError):
            await agent.status(run_id)
        await agent.close()
        await operator.close()
    arun(main())


def test_close_fails_calls_in_flight(gate, run):
    async def main():
        agent = await aio.connect(token=TOKENS["agent"], port=gate.port)
        await agent.admit(run, "gate", 1, gated=True)
        parked = asyncio.ensure_future(agent.admit(run, "s", 1, wait_ms=20000))
        await asyncio.sleep(0.1)
        await agent.close()
        with pytest.raises(soundgate.ConnectionClosedError):
            await parked
        assert agent.closed
    arun(main())
