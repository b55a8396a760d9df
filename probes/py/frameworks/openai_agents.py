"""OpenAI Agents SDK (Python, openai-agents): a function tool with
needs_approval in a model turn that calls two tools in parallel, driven by a
scripted Model (no network). The run's interruptions are approved or rejected
on its RunState, which is serialized (to_string) and restored (from_string)
like a durable approval workflow does. Cancel cancels the task that runs
Runner.run; timeout is the tool's own timeout."""

from __future__ import annotations

import asyncio
import json
import re

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.run_state import RunState
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from harness import TIMING, approval_probes, send_email, send_email_sync, stop_drive, stop_probes, turn_plan

set_tracing_disabled(True)

META = {
    "framework": "OpenAI Agents SDK",
    "package": "openai-agents",
    "primitive": "needs_approval with parallel tool calls (RunState serialization)",
}

PLAN = "P1"
CALL_DELETE = ("call_delete", "delete_file", {"path": "/data"})
CALL_SEND = ("call_send", "send_email", {"to": "ops@example.org"})


def _fc(cid, name, args):
    return ResponseFunctionToolCall(type="function_call", id=f"fc_{cid}", call_id=cid, name=name,
                                    arguments=json.dumps(args), status="completed")


def _msg(text):
    return ResponseOutputMessage(type="message", id="msg_final", role="assistant", status="completed",
                                 content=[ResponseOutputText(type="output_text", text=text, annotations=[])])


def _get(i, k):
    return i.get(k) if isinstance(i, dict) else getattr(i, k, None)


class ScriptedModel(Model):
    """The fake model: turn i answers script[i]; it ends the run when a tool
    result it sees reports a rejection."""

    def __init__(self, env, script):
        self.env = env
        self.script = script

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, *, previous_response_id=None, conversation_id=None, prompt=None, **kw):
        items = input if isinstance(input, list) else []
        seen = {_get(i, "call_id") for i in items if _get(i, "type") == "function_call"}
        turn = 0
        while turn < len(self.script) and all(c[0] in seen for c in self.script[turn]):
            turn += 1
        rejected = any(_get(i, "type") == "function_call_output" and re.search(r"not approved|reject", str(_get(i, "output")), re.I)
                       for i in items)
        if rejected or turn >= len(self.script):
            return ModelResponse(output=[_msg("stopping: the user rejected" if rejected else "done")], usage=Usage(), response_id=None)
        calls = self.script[turn]
        # the plan hook: a model wrapper registers the turn's calls with the gate
        plan = turn_plan([c[1] for c in calls])
        if plan["gated"]:
            await self.env.aplan(PLAN, **plan)
        return ModelResponse(output=[_fc(*c) for c in calls], usage=Usage(), response_id=None)

    def stream_response(self, *a, **kw):
        raise NotImplementedError("soundgate/probes: the scripted model does not stream")


def agent_for(env, script, body="none", timeout=None):
    @function_tool(name_override="delete_file", needs_approval=True)
    async def delete_file(path: str) -> str:
        """delete a file (needs approval)"""
        await env.agated_step("delete", PLAN, gated=True)
        return "deleted"

    kw = {"timeout": timeout} if timeout else {}
    if body == "uncooperative":
        # a blocking body called from an async tool (the SDK takes a timeout only
        # for async tools): it runs in a worker thread that nothing can stop
        @function_tool(name_override="send_email", **kw)
        async def send(to: str) -> str:
            """send an email"""
            await asyncio.to_thread(send_email_sync, env, PLAN, body)
            return "sent"
    else:
        @function_tool(name_override="send_email", **kw)
        async def send(to: str) -> str:
            """send an email"""
            await send_email(env, PLAN, body)
            return "sent"

    return Agent(name="probe", instructions="scripted", model=ScriptedModel(env, script), tools=[delete_file, send])


PARALLEL = [[CALL_DELETE, CALL_SEND]]
SEQUENTIAL = [[CALL_DELETE], [CALL_SEND]]


async def approval_run(env, a):
    agent = agent_for(env, PARALLEL if a["parallel"] else SEQUENTIAL)
    res = await Runner.run(agent, "clean up and tell ops")
    for _ in range(8):
        if not res.interruptions:
            break
        asks = [i.tool_name for i in res.interruptions]
        # a durable approval: the paused state is serialized and restored
        saved = res.to_state().to_string()

        async def resume(d):
            nonlocal res
            for attempt in range(2 if a["replay"] else 1):
                if attempt:
                    env.note("crash before the new state was saved; resuming the saved state again")
                state = await RunState.from_string(agent, saved)
                for i in state.get_interruptions():
                    state.approve(i) if d == "approve" else state.reject(i)
                res = await Runner.run(agent, state)

        await env.apaused(PLAN, asks, resume, a["decision"])


async def stop_run(env, how, body, control):
    timeout = TIMING["stop_after_ms"] / 1000 if how == "timeout" and not control else None
    agent = agent_for(env, [[CALL_SEND]], body, timeout)
    await stop_drive(env, how, control=control, name="run", cancel=lambda task: task.cancel(),
                     timeout_at_ms=TIMING["stop_after_ms"] + 5,
                     start=lambda: Runner.run(agent, "write it"),
                     resolved=lambda r: {"output": str(r.final_output)})


PROBES = [
    *approval_probes({
        "parallel": "one model turn calls delete_file (needs_approval) and send_email in parallel",
        "sequence": "delete_file in one turn, send_email in the next",
        "resume": "resume from the serialized RunState",
        "reject": "the scripted model stops at the rejection",
        "replay": "the worker crashes before saving the new state and the saved RunState is resumed again",
    }, approval_run),
    *stop_probes({
        "cancel": "the task running Runner.run is cancelled while the tool body runs",
        "timeout": "the tool's timeout fires while the body runs",
        "signal": "asyncio cancellation (an async tool)",
        "control": "run completes, then the task is cancelled",
    }, stop_run),
]
