"""MCP (any host): a model turn's tool calls sent by an MCP host to an MCP
server over stdio, the host being the official Python SDK's ClientSession and
the server mcp_world.py (FastMCP), whose tools are the probe's effects.

Unmodified, the host calls the server directly and asks its user before a
tool that needs confirmation (delete_file), as hosts' per-tool permission
prompts do, while the turn's other calls go ahead; a cancel cancels the task
of the agent's step, a timeout is the step's own deadline. Mediated, the
host's config runs `soundgate mcp-proxy` in the server's place (the policy
gates delete_file) and auto-allows the tools: the human decides at the gate,
watching the run's pending approvals, and the host's dialog decides nothing.
Nothing of the host's code changes between the two but the server command.

The commit point of MCP is the tools/call: a B4 body is the agent's own work
before the call (its step), and the call is the effect. A call already
forwarded runs to its end in the server (the proxy gates calls, not what a
tool does inside them: docs/integrations/mcp.md)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from harness import TIMING, approval_probes, stop_drive, stop_probes

META = {
    "framework": "MCP (any host)",
    "package": "mcp",
    "primitive": "parallel tools/call from an MCP host over stdio; the host's confirmation of a tool (unmodified), soundgate mcp-proxy (mediated)",
}

PLAN = "P1"
WORLD = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mcp_world.py")
KEYS = {"delete_file": "delete", "send_email": "send_email", "write_file": "write_file"}
POLICY = {"servers": {"world": {"tools": {"delete_file": "gated", "send_email": "ungated", "write_file": "ungated"}}}}
# a held call stays open at most this long (the probe itself is bounded at 20 s)
MAX_HOLD = "15s"


class World:
    """The probe's end of mcp_world.py: a Unix socket whose every line is one
    effect of a tool, appended to the probe's event log under `plan`."""

    def __init__(self, env, plan: str) -> None:
        self.env, self.plan = env, plan
        self.dir = tempfile.mkdtemp(prefix="soundgate-mcp-probe-")
        self.path = os.path.join(self.dir, "world.sock")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        self.srv.listen(16)
        threading.Thread(target=self._serve, daemon=True, name="mcp-world").start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.srv.accept()
            except OSError:
                return
            with conn:
                line = conn.makefile().readline()
                try:
                    tool = json.loads(line)["tool"]
                    self.env.log.effect(KEYS[tool], self.plan)
                    conn.sendall(b"ok\n")
                except Exception as e:  # noqa: BLE001 - told to the tool, which fails the call
                    conn.sendall(f"bad effect line {line!r}: {e}\n".encode())

    def close(self) -> None:
        self.srv.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def server_params(env, world: World) -> StdioServerParameters:
    """The server command of the host's config: the world server itself, or the
    proxy standing in for it on the probe's run."""
    world_cmd = [sys.executable, WORLD, world.path]
    if env.variant != "mediated":
        return StdioServerParameters(command=world_cmd[0], args=world_cmd[1:], env=dict(os.environ))
    ep = env.gate_endpoint()
    token = os.path.join(world.dir, "agent.token")
    with open(os.open(token, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(ep["token"])
    policy = os.path.join(world.dir, "policy.json")
    with open(policy, "w") as f:
        json.dump(POLICY, f)
    binary = os.environ.get("SOUNDGATE_BIN") or "soundgate"
    return StdioServerParameters(command=binary, env=dict(os.environ), args=[
        "mcp-proxy", "--run", ep["run"], "--gate", ep["addr"], "--token-file", token, "--policy", policy,
        "--server", "world", "--max-hold", MAX_HOLD, "--", *world_cmd])


@contextlib.asynccontextmanager
async def session(env, world: World):
    """One session of the host with its configured server (a new process each time)."""
    with open(os.path.join(world.dir, "server.log"), "a") as errlog:
        async with stdio_client(server_params(env, world), errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                yield s


def _text(res) -> str:
    return " ".join(getattr(c, "text", "") for c in res.content)


def _done(env, name, res) -> bool:
    """Notes a call's answer; says whether the tool ran (not a tool error)."""
    env.note(f"{name} answered", is_error=bool(res.isError), answer=_text(res)[:160])
    return not res.isError


async def turn(env, s, a, replay: bool) -> None:
    """One model turn: delete_file (needs confirmation) and send_email, sent back
    to back (parallel) or one after the other (sequence)."""
    delete = lambda: s.call_tool("delete_file", {"path": "/data"})  # noqa: E731
    send = lambda: s.call_tool("send_email", {"to": "ops@example.org"})  # noqa: E731
    if env.variant == "mediated":
        # the host auto-allows: every call goes to the proxy; the human decides at
        # the gate (a replayed turn finds its calls recorded: nothing to decide)
        human = None if replay else asyncio.ensure_future(env.ahuman_at_gate(PLAN))
        if a["parallel"]:
            rd, rs = await asyncio.gather(delete(), send())
            _done(env, "delete_file", rd)
            _done(env, "send_email", rs)
        elif _done(env, "delete_file", await delete()):
            _done(env, "send_email", await send())
        else:
            env.note("the model stops at the answer: not executed")
        if human is not None:
            await human
        return

    # unmodified: the host's confirmation of delete_file; send_email needs none
    async def confirmed_delete():
        async def resume(d):
            if d != "approve":
                env.note("the host tells the model the user declined delete_file")
                return False
            return _done(env, "delete_file", await delete())
        return await env.apaused(PLAN, ["delete_file"], resume, a["decision"])

    async def sibling():
        _done(env, "send_email", await send())

    if a["parallel"]:
        await asyncio.gather(confirmed_delete(), sibling())
    elif await confirmed_delete():
        await sibling()
    else:
        env.note("the model stops at the user's refusal")


async def approval_run(env, a):
    world = World(env, PLAN)
    try:
        for attempt in range(2 if a["replay"] else 1):
            if attempt:
                env.note("the host crashed before it recorded the turn's results; restarted, it sends the turn again")
            async with session(env, world) as s:
                await turn(env, s, a, replay=attempt > 0)
    finally:
        world.close()


async def stop_run(env, how, body, control):
    world = World(env, "S1")
    try:
        async with session(env, world) as s:
            async def step():
                # the agent's own work before its tool call, then the call
                if body == "cooperative":
                    await asyncio.sleep(TIMING["tool_body_ms"] / 1000)
                else:
                    await asyncio.to_thread(time.sleep, TIMING["tool_body_ms"] / 1000)
                res = await s.call_tool("write_file", {"path": "/out"})
                _done(env, "write_file", res)
                return res

            def start():
                # uncooperative: the step ignores the stop (shielded), as a library that
                # swallows cancellation or a worker thread does
                w = step() if body == "cooperative" else asyncio.shield(asyncio.ensure_future(step()))
                if how == "timeout" and not control:
                    return asyncio.wait_for(w, TIMING["stop_after_ms"] / 1000)
                return w

            await stop_drive(env, how, control=control, name="step", cancel=lambda task: task.cancel(),
                             timeout_at_ms=TIMING["stop_after_ms"] + 5, start=start,
                             resolved=lambda r: {"is_error": bool(r.isError)})
    finally:
        world.close()


PROBES = [
    *approval_probes({
        "parallel": "one model turn sends tools/call delete_file (needs confirmation) and send_email back to back",
        "sequence": "delete_file, then send_email once it is answered",
        "resume": "the call goes on with the user's answer",
        "reject": "the model stops at the refusal",
        "replay": "the host crashes before recording the turn's results and, restarted, sends the turn again",
    }, approval_run),
    *stop_probes({
        "cancel": "the host cancels the agent's step (asyncio task cancel) while it works, before its tools/call write_file",
        "timeout": "the agent's step has a deadline (asyncio.wait_for) that passes while it works, before its tools/call",
        "signal": "the cancellation",
        "control": "the step runs to its end, then the host cancels",
    }, stop_run),
]
