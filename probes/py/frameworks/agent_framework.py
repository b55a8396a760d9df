"""Microsoft Agent Framework (Python, agent-framework-core): a tool with
approval_mode="always_require" in a model turn that calls two tools in
parallel, driven by a scripted chat client (FunctionInvocationLayer over
BaseChatClient, no network). The run's function_approval_request contents are
answered with function_approval_response contents on the AgentSession, which
is serialized (to_dict) at the pause and restored (from_dict) like a durable
approval does. Cancel cancels the task that runs agent.run; timeout is the
function-invocation loop's max_duration_seconds."""

from __future__ import annotations

import json
import re

from agent_framework import Agent, AgentSession, BaseChatClient, ChatResponse, Content, Message, tool
from agent_framework._tools import FunctionInvocationLayer

from harness import TIMING, approval_probes, send_email, send_email_sync, stop_drive, stop_probes, turn_plan

META = {
    "framework": "Microsoft Agent Framework",
    "package": "agent-framework-core",
    "primitive": "tool approval (approval_mode=always_require) with parallel function calls",
}

PLAN = "P1"
CALL_DELETE = ("call_delete", "delete_file", {"path": "/data"})
CALL_SEND = ("call_send", "send_email", {"to": "ops@example.org"})


class ScriptedClient(FunctionInvocationLayer, BaseChatClient):
    """The fake model: turn i answers script[i]; it ends the run when a tool
    result it sees reports a rejection."""

    def __init__(self, env, script, **kw):
        super().__init__(**kw)
        self._env = env
        self._script = script

    async def _inner_get_response(self, *, messages, stream, options, **kwargs):
        turn = sum(1 for m in messages if m.role == "assistant" and any(c.type == "function_call" for c in m.contents))
        results = [c for m in messages for c in m.contents if c.type == "function_result"]
        rejected = any(re.search(r"reject|not approved|denied", str(c.result or c.exception or ""), re.I) for c in results)
        if rejected or turn >= len(self._script):
            text = "stopping: the user rejected" if rejected else "done"
            return ChatResponse(messages=[Message(role="assistant", contents=[text])], response_id=f"resp_{turn}")
        calls = self._script[turn]
        # the plan hook: a model wrapper registers the turn's calls with the gate
        plan = turn_plan([c[1] for c in calls])
        if plan["gated"]:
            await self._env.aplan(PLAN, **plan)
        contents = [Content.from_function_call(call_id=cid, name=name, arguments=json.dumps(args)) for cid, name, args in calls]
        return ChatResponse(messages=[Message(role="assistant", contents=contents)], response_id=f"resp_{turn}")


def agent_for(env, script, body="none", max_duration=None):
    @tool(name="delete_file", approval_mode="always_require")
    async def delete_file(path: str) -> str:
        """delete a file (needs approval)"""
        await env.agated_step("delete", PLAN, gated=True)
        return "deleted"

    if body == "uncooperative":
        # a blocking body: the framework runs a sync tool in a worker thread
        @tool(name="send_email")
        def send(to: str) -> str:
            """send an email"""
            send_email_sync(env, PLAN, body)
            return "sent"
    else:
        @tool(name="send_email")
        async def send(to: str) -> str:
            """send an email"""
            await send_email(env, PLAN, body)
            return "sent"

    cfg = {"max_duration_seconds": max_duration} if max_duration else None
    client = ScriptedClient(env, script, function_invocation_configuration=cfg)
    return Agent(client=client, tools=[delete_file, send], name="probe", instructions="scripted")


PARALLEL = [[CALL_DELETE, CALL_SEND]]
SEQUENTIAL = [[CALL_DELETE], [CALL_SEND]]


async def approval_run(env, a):
    agent = agent_for(env, PARALLEL if a["parallel"] else SEQUENTIAL)
    session = AgentSession()
    res = await agent.run("clean up and tell ops", session=session)
    for _ in range(8):
        reqs = [q for q in res.user_input_requests if q.type == "function_approval_request"]
        if not reqs:
            break
        asks = [q.function_call.name for q in reqs]
        # a durable approval: the paused session is serialized and restored
        saved = json.dumps(session.to_dict())

        async def resume(d):
            nonlocal res, session
            for attempt in range(2 if a["replay"] else 1):
                if attempt:
                    env.note("crash before the new session was saved; resuming the saved session again")
                session = AgentSession.from_dict(json.loads(saved))
                answers = [q.to_function_approval_response(approved=(d == "approve")) for q in reqs]
                res = await agent.run(Message(role="user", contents=answers), session=session)

        await env.apaused(PLAN, asks, resume, a["decision"])


async def stop_run(env, how, body, control):
    timeout = TIMING["stop_after_ms"] / 1000 if how == "timeout" and not control else None
    agent = agent_for(env, [[CALL_SEND]], body, max_duration=timeout)
    await stop_drive(env, how, control=control, name="run", cancel=lambda task: task.cancel(),
                     start=lambda: agent.run("write it", session=AgentSession()),
                     resolved=lambda r: {"output": r.text})


PROBES = [
    *approval_probes({
        "parallel": "one model turn calls delete_file (always_require) and send_email in parallel",
        "sequence": "delete_file in one turn, send_email in the next",
        "resume": "resume with a function_approval_response on the restored AgentSession",
        "reject": "the scripted model stops at the rejection",
        "replay": "the worker crashes before saving the new session and the saved AgentSession is resumed again",
    }, approval_run),
    *stop_probes({
        "cancel": "the task running agent.run is cancelled while the tool body runs",
        "timeout": "the function loop's max_duration_seconds runs out while the tool body runs",
        "signal": "asyncio cancellation (an async tool)",
        "control": "run completes, then the task is cancelled",
    }, stop_run),
]
