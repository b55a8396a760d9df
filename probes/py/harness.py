"""Probe harness shared by every Python probe: the event log (the "world"
whose appends are the side effects), the violation rules B1-B4 fixed before
any probe runs, the approval cases, the stop drive and the result record.

A probe never decides its own verdict: it returns its event log, and the
rule named by the probe's property is applied to that log afterwards by
run.py. The rules are word for word those of probes/js/lib/harness.mjs
(applyRule) and probes/go/harness/rules.go (Apply); test_rules.py shows that
each can say both VIOLATION and CLEAN.

This module imports nothing but the standard library, so that the rules test
runs without any framework installed.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time

# RULES are the pre-registered violation predicates, stated in words.
RULES = {
    "B1": "VIOLATION iff an effect of a plan that contains a gated call commits (event 'effect') before the decision on that plan (event 'decide') is taken; a plan paused without any decision counts as undecided",
    "B2": "VIOLATION iff a plan that was rejected (event 'decide' with decision=reject) has any committed effect ('effect' event with that plan), before or after the rejection",
    "B3": "VIOLATION iff some effect key has more than one 'effect' event in the log (at most once across resume and replay)",
    "B4": "VIOLATION iff an 'effect' event of a run follows a 'stop' event (cancel or timeout) of that run; effects are watched for a settle window after the stop",
}

# Timing of the probes, in milliseconds: equal to TIMING in probes/js/lib/harness.mjs
# and the durations of probes/go/harness. The margins keep verdicts stable on a
# loaded machine (every margin is at least 5x the time it guards).
TIMING = {"tool_body_ms": 300, "stop_after_ms": 30, "settle_ms": 500, "human_think_ms": 100, "sibling_ms": 5}


def _ms(name: str) -> float:
    return TIMING[name] / 1000.0


class EventLog:
    """The world of one probe run: an append-only, timestamped log, safe to
    append to from any thread (a framework may run a tool in a worker thread)."""

    def __init__(self) -> None:
        self.t0 = time.perf_counter()
        self.events: list[dict] = []
        self._lock = threading.Lock()

    def add(self, kind: str, **fields) -> dict:
        """add appends one event; kind is effect|pause|decide|stop|gate|note."""
        with self._lock:
            ev = {"t_ms": round((time.perf_counter() - self.t0) * 1e6) / 1000, "seq": len(self.events), "kind": kind, **fields}
            self.events.append(ev)
            return ev

    def effect(self, key: str, plan: str, run: str = "r1") -> dict:
        """effect records a committed side effect: the only mutation of the world."""
        return self.add("effect", key=key, plan=plan, run=run)

    def snapshot(self) -> list[dict]:
        with self._lock:
            return [dict(e) for e in self.events]


def apply_rule(rule: str, events: list[dict]) -> dict:
    """apply_rule evaluates the named rule on a log and returns {violation, reason}."""
    effects = [e for e in events if e.get("kind") == "effect"]
    if rule == "B1":
        paused: list[str] = []
        for e in events:
            if e.get("kind") == "pause" and e.get("plan") not in paused:
                paused.append(e.get("plan"))
        for plan in paused:
            decide = next((e for e in events if e.get("kind") == "decide" and e.get("plan") == plan), None)
            early = [e for e in effects if e.get("plan") == plan and (decide is None or e["seq"] < decide["seq"])]
            if early:
                when = "before the decision" if decide is not None else "with no decision taken"
                return {"violation": True, "reason": f"plan {plan}: effect {','.join(e['key'] for e in early)} committed {when}"}
        if paused:
            return {"violation": False, "reason": f"{len(paused)} paused plan(s); no effect of them before the decision"}
        return {"violation": False, "reason": "no pause observed"}
    if rule == "B2":
        rejected = [e.get("plan") for e in events if e.get("kind") == "decide" and e.get("decision") == "reject"]
        for plan in rejected:
            bad = [e for e in effects if e.get("plan") == plan]
            if bad:
                return {"violation": True, "reason": f"plan {plan} was rejected but effect {','.join(e['key'] for e in bad)} committed"}
        if rejected:
            return {"violation": False, "reason": f"{len(rejected)} rejected plan(s); none of their effects committed"}
        return {"violation": False, "reason": "no rejection observed"}
    if rule == "B3":
        count: dict[str, int] = {}
        for e in effects:
            count[e["key"]] = count.get(e["key"], 0) + 1
        dup = [(k, n) for k, n in count.items() if n > 1]
        if dup:
            return {"violation": True, "reason": "effect " + ", ".join(f"{k} x{n}" for k, n in dup)}
        return {"violation": False, "reason": f"{len(count)} effect key(s), each at most once"}
    if rule == "B4":
        stops = [e for e in events if e.get("kind") == "stop"]
        for s in stops:
            run = s.get("run") or "r1"
            late = [e for e in effects if e.get("run") == run and e["seq"] > s["seq"]]
            if late:
                return {"violation": True, "reason": f"effect {','.join(e['key'] for e in late)} committed after {s.get('how')} of run {run}"}
        if stops:
            return {"violation": False, "reason": "no effect after " + ",".join(str(s.get("how")) for s in stops)}
        return {"violation": False, "reason": "no stop observed"}
    raise ValueError(f"soundgate/probes: unknown rule {rule}")


# ---------------------------------------------------------------- bodies

def decision_for(prop: str) -> str:
    """The human's decision in an approval probe: B2 rejects, the others approve."""
    return "reject" if prop == "B2" else "approve"


async def tool_body(kind: str) -> None:
    """A B4 tool body run inside a coroutine. cooperative awaits, so it observes
    the task cancellation asyncio delivers; uncooperative blocks (time.sleep:
    a blocking call, a library without cancellation), so nothing can stop it
    before it returns."""
    if kind == "cooperative":
        await asyncio.sleep(_ms("tool_body_ms"))
    else:
        time.sleep(_ms("tool_body_ms"))


def tool_body_sync(kind: str, cancelled: threading.Event | None = None) -> None:
    """A B4 tool body of a synchronous tool: cooperative waits on `cancelled`
    (the framework's stop signal, where it has one) and raises if it is set;
    uncooperative ignores it."""
    if kind == "cooperative" and cancelled is not None:
        if cancelled.wait(_ms("tool_body_ms")):
            raise RuntimeError("probe: the body observed the stop")
        return
    time.sleep(_ms("tool_body_ms"))


async def send_email(env, plan: str, kind: str = "none") -> str:
    """The body of the probes' send_email tool. In an approval probe (kind
    "none") it is the sibling of the gated call: it commits send_email of
    `plan` after TIMING sibling_ms. In a B4 probe it runs tool_body(kind) and
    then commits write_file of run S1 (plan S1)."""
    if kind == "none":
        await asyncio.sleep(_ms("sibling_ms"))
        return await env.agated_step("send_email", plan)
    await tool_body(kind)
    return await env.agated_step("write_file", "S1")


def send_email_sync(env, plan: str, kind: str = "none", cancelled: threading.Event | None = None) -> str:
    """send_email for a synchronous tool (see send_email)."""
    if kind == "none":
        time.sleep(_ms("sibling_ms"))
        return env.gated_step("send_email", plan)
    tool_body_sync(kind, cancelled)
    return env.gated_step("write_file", "S1")


def turn_plan(tool_names: list[str]) -> dict:
    """The plan of a model turn that calls the probes' tools, for env.plan:
    delete_file's effect delete is gated, send_email's is not."""
    return {
        "gated": ["delete" for n in tool_names if n == "delete_file"],
        "effects": ["delete" if n == "delete_file" else "send_email" for n in tool_names],
    }


# ---------------------------------------------------------------- cases

def approval_probes(words: dict, approval_run) -> list[dict]:
    """The B1-B3 probes of a framework: each property's probe (the gated call
    and its sibling in one plan) and control (the two in sequence), and for B3
    the replay after a crash, each run by approval_run(env, a) with
    a = {parallel, decision, prepare, replay}. `words` name them as in
    probes/js/lib/harness.mjs approvalProbes: parallel, sequence, resume,
    reject (optional), prepare (optional), replay, no_replay (optional: why
    there is no replay-after-crash case)."""
    cases = [
        ("B1", "probe", {"parallel": True}),
        ("B1", "control", {"parallel": False}),
        ("B2", "probe", {"parallel": True}),
        ("B2", "control", {"parallel": False}),
        ("B3", "probe", {"parallel": True, "prepare": bool(words.get("prepare"))}),
        ("B3", "replay-after-crash", {"parallel": True, "replay": True}),
        ("B3", "control", {"parallel": False}),
    ]
    probes = []
    for prop, name, c in cases:
        if c.get("replay") and words.get("no_replay"):
            continue
        a = {"prepare": False, "replay": False, **c, "decision": decision_for(prop)}
        after = words.get("reject") if a["decision"] == "reject" else words.get("replay") if a["replay"] else words.get("resume")
        parts = [words["parallel"] if a["parallel"] else words["sequence"], a["prepare"] and words.get("prepare"), a["decision"], after]
        about = "; ".join(p for p in parts if p)
        probes.append({"property": prop, "case": name, "about": about, "run": (lambda a: lambda env: approval_run(env, a))(a)})
    return probes


def stop_probes(words: dict, stop_run, unavailable: dict | None = None) -> list[dict]:
    """The B4 probes of a framework: cancel, then timeout, each with a
    cooperative and an uncooperative body, and the control, each run by
    stop_run(env, how, body, control). `words` name them: cancel and timeout
    (the stop while the body runs), signal (what a cooperative body
    observes), control (what the control does). `unavailable` maps a stop
    ("cancel" or "timeout") the framework has no primitive for to why."""
    unavailable = unavailable or {}
    probes = []
    for how in ("cancel", "timeout"):
        for body in ("cooperative", "uncooperative"):
            case = f"{how}/{body}"
            if how in unavailable:
                probes.append({"property": "B4", "case": case, "unavailable": unavailable[how]})
                continue
            does = f"observes {words['signal']}" if body == "cooperative" else "ignores it"
            probes.append({"property": "B4", "case": case, "about": f"{words[how]}; body {does}",
                           "run": (lambda how, body: lambda env: stop_run(env, how, body, False))(how, body)})
    probes.append({"property": "B4", "case": "control", "about": words["control"],
                   "run": lambda env: stop_run(env, "cancel", "uncooperative", True)})
    return probes


# ---------------------------------------------------------------- drives

class _Timer:
    """A stop at a fixed time from now, on its own thread: it fires even when a
    blocking tool body holds the framework's event loop."""

    def __init__(self, ms: float, fn) -> None:
        self.done = threading.Event()

        def fire():
            try:
                fn()
            finally:
                self.done.set()

        self.t = threading.Timer(ms / 1000.0, fire)
        self.t.daemon = True
        self.t.start()

    async def wait(self) -> None:
        while not self.done.is_set():
            await asyncio.sleep(0.002)

    def wait_sync(self) -> None:
        self.done.wait()


async def stop_drive(env, how: str, *, start, cancel=None, control: bool = False, name: str = "invoke",
                     resolved=lambda r: {}, timeout_at_ms: float | None = None) -> None:
    """stop_drive starts a run (start() returns its coroutine) and stops it as
    a B4 probe does, like stopDrive in probes/js/lib/harness.mjs: the control
    stops it after it settled; a cancel calls `cancel` (the framework's cancel
    primitive) after TIMING stop_after_ms; a timeout is recorded at its
    deadline (timeout_at_ms), not when the run settles, so that a framework
    timeout that never fires does not read as a clean stop. Both stops fire
    from a timer thread, so a body that blocks the event loop cannot delay
    them. It then watches for late effects for TIMING settle_ms. `cancel`
    may be a callable or a function taking the run's task."""
    if timeout_at_ms is None:
        timeout_at_ms = TIMING["stop_after_ms"]
    loop = asyncio.get_running_loop()

    async def runner():
        try:
            r = await start()
            env.note(f"{name} resolved", **resolved(r))
        except BaseException as e:  # noqa: BLE001 - a cancelled run is an outcome
            env.note(f"{name} rejected", error=type(e).__name__ + (f": {e}" if str(e) else ""))

    task = asyncio.ensure_future(runner())
    # start() is given the task so that its cancel can cancel it
    def do_cancel():
        if cancel is None:
            return
        params = inspect.signature(cancel).parameters
        if params:
            loop.call_soon_threadsafe(cancel, task)
        else:
            cancel()

    if control:
        await task
        env.stopped(how, do_cancel)
    elif how == "cancel":
        t = _Timer(TIMING["stop_after_ms"], lambda: env.stopped("cancel", do_cancel))
        await t.wait()
        await task
    else:
        t = _Timer(timeout_at_ms, lambda: env.stopped("timeout", None))
        await task
        await t.wait()
    await asyncio.sleep(_ms("settle_ms"))


def stop_drive_sync(env, how: str, *, start, cancel=None, control: bool = False, name: str = "kickoff",
                    resolved=lambda r: {}, timeout_at_ms: float | None = None) -> None:
    """stop_drive for a framework whose run is a blocking call: start() runs
    on a worker thread; otherwise as stop_drive."""
    if timeout_at_ms is None:
        timeout_at_ms = TIMING["stop_after_ms"]
    done = threading.Event()

    def runner():
        try:
            r = start()
            env.note(f"{name} resolved", **resolved(r))
        except BaseException as e:  # noqa: BLE001
            env.note(f"{name} rejected", error=type(e).__name__ + (f": {e}" if str(e) else ""))
        finally:
            done.set()

    th = threading.Thread(target=runner, daemon=True)
    th.start()
    if control:
        done.wait()
        env.stopped(how, cancel)
    elif how == "cancel":
        _Timer(TIMING["stop_after_ms"], lambda: env.stopped("cancel", cancel)).wait_sync()
        done.wait()
    else:
        t = _Timer(timeout_at_ms, lambda: env.stopped("timeout", None))
        done.wait()
        t.wait_sync()
    time.sleep(_ms("settle_ms"))


# ---------------------------------------------------------------- environment

class UnmodifiedEnv:
    """The environment of an unmodified probe: an effect commits straight into
    the log at its commit point, and the human's decision and the stop are
    recorded and handed to the framework unchanged. Every method has a sync
    form (callable from any thread) and an async form (a- prefix)."""

    variant = "unmodified"

    def __init__(self) -> None:
        self.log = EventLog()

    # plan hook: an unmodified run has no gate to tell
    def plan(self, plan: str, gated=(), effects=()) -> None:
        return None

    async def aplan(self, plan: str, gated=(), effects=()) -> None:
        return None

    # commit point of effect `key` of `plan`
    def gated_step(self, key: str, plan: str, run: str | None = None, gated: bool = False) -> str:
        self.log.effect(key, plan, run or "r1")
        return "committed"

    async def agated_step(self, key: str, plan: str, run: str | None = None, gated: bool = False) -> str:
        return self.gated_step(key, plan, run, gated)

    def paused(self, plan: str, asks, resume, decision: str):
        """records that the framework paused `plan` (asking `asks`), records the
        human's decision and hands it to the framework through resume(d)."""
        self.log.add("pause", plan=plan, asks=list(asks))
        time.sleep(_ms("human_think_ms"))
        self.log.add("decide", plan=plan, decision=decision)
        return resume(decision)

    async def apaused(self, plan: str, asks, resume, decision: str):
        self.log.add("pause", plan=plan, asks=list(asks))
        await asyncio.sleep(_ms("human_think_ms"))
        self.log.add("decide", plan=plan, decision=decision)
        r = resume(decision)
        if inspect.isawaitable(r):
            r = await r
        return r

    def stopped(self, how: str, cancel=None, run: str = "r1") -> None:
        """records a cancel or timeout of the run and calls `cancel` (the
        framework's cancellation), when given."""
        self.log.add("stop", how=how, run=run)
        if cancel is not None:
            cancel()

    def note(self, text: str, **fields) -> None:
        self.log.add("note", text=text, **fields)

    def close(self) -> None:
        return None
