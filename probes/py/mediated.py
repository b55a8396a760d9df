"""The mediated environment: the same probes, with every effect admitted
through a running gate (soundgate serve) at its commit point, the human's
decision taken at the gate, and cancel/timeout wired to the gate's
cancel/fence. The violation rules are the same (harness.py).

It uses the project's Python client (clients/python/src/soundgate) on an
event loop of its own, on its own thread: a probe's commit point may be a
coroutine on the framework's loop, a sync tool on a worker thread, or a
blocking body on the framework's loop itself, and every one of them reaches
the gate the same way. The gate call is shielded from the framework's
cancellation, so that the gate, not a cancelled task, decides what a late
effect may do (as the Go adapter's detached context does).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(REPO, "clients", "python", "src"))
sys.path.insert(0, os.path.join(REPO, "clients", "python", "tests"))

from harness import TIMING, EventLog, decision_for  # noqa: E402

_gate = None  # {"proc", "loop", "thread", "agent", "approver", "operator"}
_runs = itertools.count(1)


def _on_gate(coro):
    """Runs coro on the gate's loop and returns a concurrent future."""
    return asyncio.run_coroutine_threadsafe(coro, _gate["loop"])


def _call(coro, timeout: float = 30.0):
    return _on_gate(coro).result(timeout)


async def _acall(coro):
    # shielded: a cancelled framework task stops waiting, the gate call goes on
    return await asyncio.shield(asyncio.wrap_future(_on_gate(coro)))


def gate_available() -> str:
    """Starts a gate for the mediated probes ($SOUNDGATE_BIN, or a binary built
    from this repository) with the project's roles fixture, and connects an
    agent, an approver and an operator. Returns "" when the gate runs, or why
    it cannot."""
    global _gate
    try:
        from gateproc import TOKENS, start_gate  # noqa: PLC0415
        from soundgate import aio  # noqa: PLC0415

        proc = start_gate()
        loop = asyncio.new_event_loop()
        th = threading.Thread(target=loop.run_forever, daemon=True, name="gate-loop")
        th.start()
        _gate = {"proc": proc, "loop": loop, "thread": th}

        async def conns():
            return [await aio.connect(token=TOKENS[r], port=proc.port) for r in ("agent", "approver", "operator")]

        _gate["agent"], _gate["approver"], _gate["operator"] = _call(conns())
        return ""
    except Exception as e:  # noqa: BLE001
        return f"gate unavailable: {str(e).splitlines()[0] if str(e) else type(e).__name__}"


def stop_gate() -> None:
    global _gate
    if not _gate:
        return
    if "agent" in _gate:
        async def close():
            for c in (_gate["agent"], _gate["approver"], _gate["operator"]):
                await c.close()
        try:
            _call(close(), 5)
        except Exception:  # noqa: BLE001
            pass
    _gate["loop"].call_soon_threadsafe(_gate["loop"].stop)
    _gate["proc"].stop()
    _gate = None


class MediatedEnv:
    """The environment of one mediated probe run, on a fresh gate run."""

    variant = "mediated"

    def __init__(self, probe: dict, pid: str) -> None:
        from soundgate.gatedrun import AsyncGatedRun  # noqa: PLC0415

        self.log = EventLog()
        self.run = f"probe-py-{os.getpid()}-{next(_runs)}"
        _call(_gate["operator"].open(self.run))
        self.log.add("gate", op="open", run=self.run, note=pid)
        self.gr = AsyncGatedRun(agent=_gate["agent"], run=self.run, epoch=1, wait_ms=1000, total_wait_ms=10000,
                                observe=lambda o: self.log.add("gate", **o))
        self.decision = decision_for(probe["property"])
        self.decisions: dict = {}  # plan -> concurrent future of the decision the human takes at the gate
        self._lock = threading.Lock()

    # plan hook: registers the plan's approvals and effects with the gate and
    # lets the human, who watches the gate's pending approvals, decide them
    async def _plan(self, plan, gated, effects):
        approvals = await self.gr.plan(gated=list(gated), effects=list(effects))
        with self._lock:
            if approvals and plan not in self.decisions:
                self.decisions[plan] = _on_gate(self._human(plan, approvals))

    async def _human(self, plan, approvals):
        await asyncio.sleep(TIMING["human_think_ms"] / 1000)
        self.log.add("decide", plan=plan, decision=self.decision, at="gate", keys=approvals)
        for k in approvals:
            r = await _gate["approver"].decide(self.run, k, self.decision)
            self.log.add("gate", op="decide", key=k, **r)
        return self.decision

    # the gate as an agent's program outside this process reaches it (the MCP probe's
    # soundgate mcp-proxy): its address, an agent's credential and this probe's run
    def gate_endpoint(self):
        from gateproc import TOKENS  # noqa: PLC0415
        return {"addr": f"127.0.0.1:{_gate['proc'].port}", "token": TOKENS["agent"], "run": self.run}

    # the human at the gate with nothing registered beforehand: watches the run's
    # pending approvals (status), and decides each one that appears
    async def _watch(self, plan, within_s):
        deadline = time.monotonic() + within_s
        while True:
            pending = (await _gate["approver"].status(self.run)).get("pending") or []
            if pending:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"no approval of run {self.run} became pending within {within_s} s")
            await asyncio.sleep(0.005)
        self.log.add("pause", plan=plan, asks=list(pending), at="gate")
        await asyncio.sleep(TIMING["human_think_ms"] / 1000)
        self.log.add("decide", plan=plan, decision=self.decision, at="gate", keys=list(pending))
        for k in pending:
            r = await _gate["approver"].decide(self.run, k, self.decision)
            self.log.add("gate", op="decide", key=k, **r)
        return self.decision

    async def ahuman_at_gate(self, plan, within_s=10.0):
        return await _acall(self._watch(plan, within_s))

    def plan(self, plan, gated=(), effects=()):
        return _call(self._plan(plan, gated, effects))

    async def aplan(self, plan, gated=(), effects=()):
        return await _acall(self._plan(plan, gated, effects))

    # commit point: admit (waiting while held), the effect only on admit, complete
    async def _step(self, key, plan, run):
        async def commit():
            self.log.effect(key, plan, run or "r1")
            return "committed"
        out = await self.gr.effect(key, commit)
        return out.status

    def gated_step(self, key, plan, run=None, gated=False):
        return _call(self._step(key, plan, run))

    async def agated_step(self, key, plan, run=None, gated=False):
        return await _acall(self._step(key, plan, run))

    def _take(self, plan, asks, fallback):
        self.log.add("pause", plan=plan, asks=list(asks))
        with self._lock:
            fut = self.decisions.get(plan)
        if fut is not None:
            return fut, None
        return None, fallback

    def paused(self, plan, asks, resume, fallback):
        fut, d = self._take(plan, asks, fallback)
        if fut is not None:
            d = fut.result(30)
            self.log.add("note", text=f"framework resumed with the gate's decision ({d})")
        else:
            time.sleep(TIMING["human_think_ms"] / 1000)
            self.log.add("decide", plan=plan, decision=d, at="framework", note="no approval registered with the gate for this plan")
        return resume(d)

    async def apaused(self, plan, asks, resume, fallback):
        fut, d = self._take(plan, asks, fallback)
        if fut is not None:
            d = await asyncio.wrap_future(fut)
            self.log.add("note", text=f"framework resumed with the gate's decision ({d})")
        else:
            await asyncio.sleep(TIMING["human_think_ms"] / 1000)
            self.log.add("decide", plan=plan, decision=d, at="framework", note="no approval registered with the gate for this plan")
        r = resume(d)
        if asyncio.iscoroutine(r) or isinstance(r, asyncio.Future):
            r = await r
        return r

    # a framework cancel calls the gate's cancel, a framework timeout its
    # fence, before the framework's own cancellation runs
    def stopped(self, how, cancel=None, run="r1"):
        self.log.add("stop", how=how, run=run)
        if how == "cancel":
            self.log.add("gate", op="cancel", **_call(_gate["operator"].cancel(self.run)))
        else:
            try:
                self.log.add("gate", op="fence", **_call(_gate["operator"].fence(self.run)))
            except Exception as e:  # noqa: BLE001
                self.log.add("gate", op="fence", error=getattr(e, "type", None) or str(e))
        if cancel is not None:
            cancel()

    def note(self, text, **fields):
        self.log.add("note", text=text, **fields)

    def close(self):
        return None
