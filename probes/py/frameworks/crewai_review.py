"""CrewAI: the human review of a task (Task(human_input=True)), which the
paper calls a design contrast: the human is asked after the task's agent has
run its tools, to accept the output (an empty answer) or send feedback, on
which the agent runs its loop again. The agent is driven by a scripted LLM
(a BaseLLM in CrewAI's text tool-calling mode, no network); the human answers
through CrewAI's HumanInputProvider (set_provider), as a terminal user would.

What CrewAI offers no surface for is n/a, with why: there is no pause state
to resume or replay (B3), no cancel primitive, and its timeout takes whole
seconds (B4)."""

from __future__ import annotations

import os

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "true")

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.core.providers.human_input import SyncHumanInputProvider, reset_provider, set_provider  # noqa: E402
from crewai.llms.base_llm import BaseLLM  # noqa: E402
from crewai.tools import tool  # noqa: E402

from harness import TIMING, approval_probes, send_email_sync, turn_plan  # noqa: E402

META = {
    "framework": "CrewAI",
    "package": "crewai",
    "primitive": "post-hoc review: Task(human_input=True) after the task's tool calls",
    "note": "design contrast: the review comes after the task's tools ran; it has no pause before an effect, no resume state, no cancel",
}

PLAN = "P1"
REJECT_FEEDBACK = "rejected: do not delete /data and do not email ops"


class ScriptedLLM(BaseLLM):
    """The fake model, in CrewAI's text tool-calling mode: it calls delete_file,
    then send_email, then answers; a plan-only task answers with the plan; it
    stops as soon as its prompt reports a rejection."""

    def __init__(self, env, mode: str, **kw):
        super().__init__(model="scripted", **kw)
        self._env = env
        self._mode = mode  # "act" (calls the tools) or "plan" (describes them)

    def supports_function_calling(self) -> bool:
        return False

    def call(self, messages, tools=None, callbacks=None, available_functions=None, from_task=None,
             from_agent=None, response_model=None):
        text = messages if isinstance(messages, str) else "\n".join(str(m.get("content", "")) for m in messages)
        if "rejected" in text:
            return "Thought: the user rejected the plan\nFinal Answer: stopping: the user rejected"
        if self._mode == "plan":
            self._env.plan(PLAN, **turn_plan(["delete_file", "send_email"]))
            return "Thought: I have a plan\nFinal Answer: plan: delete_file /data, then send_email to ops"
        if "Observation: sent" in text:
            return "Thought: both done\nFinal Answer: deleted /data and told ops"
        if "Observation: deleted" in text:
            return 'Thought: now tell ops\nAction: send_email\nAction Input: {"to": "ops@example.org"}'
        # the plan hook: a model wrapper registers the task's calls with the gate
        self._env.plan(PLAN, **turn_plan(["delete_file", "send_email"]))
        return 'Thought: first delete\nAction: delete_file\nAction Input: {"path": "/data"}'


def tools(env):
    @tool("delete_file")
    def delete_file(path: str) -> str:
        """delete a file (needs approval)"""
        env.gated_step("delete", PLAN, gated=True)
        return "deleted"

    @tool("send_email")
    def send_email(to: str) -> str:
        """send an email"""
        send_email_sync(env, PLAN, "none")
        return "sent"

    return [delete_file, send_email]


class Human(SyncHumanInputProvider):
    """The human at CrewAI's review prompt: the first prompt is the review of
    the plan's task; an empty answer accepts, feedback rejects."""

    def __init__(self, env, decision: str, asks):
        super().__init__()
        self._env = env
        self._decision = decision
        self._asks = asks
        self._asked = 0

    def _prompt_input(self, crew):  # the terminal prompt of SyncHumanInputProvider
        self._asked += 1
        if self._asked > 1:
            return ""  # the rerun after feedback is accepted as it is
        d = self._env.paused(PLAN, self._asks, lambda d: d, self._decision)
        return "" if d == "approve" else REJECT_FEEDBACK


def approval_run(env, a):
    if a["parallel"]:
        # the probe: one task runs delete_file and send_email; its review follows
        llm = ScriptedLLM(env, "act")
        agent = Agent(role="ops", goal="clean up and tell ops", backstory="scripted", llm=llm, tools=tools(env), verbose=False)
        tasks = [Task(description="delete /data and tell ops", expected_output="what was done", agent=agent, human_input=True)]
        asks = ["review of the task's output"]
    else:
        # the control: a plan-only task is reviewed, then a second task acts on it
        planner = Agent(role="planner", goal="plan the clean-up", backstory="scripted", llm=ScriptedLLM(env, "plan"), verbose=False)
        doer = Agent(role="ops", goal="carry out the plan", backstory="scripted", llm=ScriptedLLM(env, "act"), tools=tools(env), verbose=False)
        tasks = [Task(description="plan: delete /data and tell ops", expected_output="the plan", agent=planner, human_input=True),
                 Task(description="carry out the reviewed plan", expected_output="what was done", agent=doer)]
        asks = ["review of the plan"]
    token = set_provider(Human(env, a["decision"], asks))
    try:
        r = Crew(agents=list({id(t.agent): t.agent for t in tasks}.values()), tasks=tasks, verbose=False).kickoff()
        env.note("kickoff resolved", output=str(r.raw))
    finally:
        reset_provider(token)


_B3 = ("human_input blocks the process in a terminal prompt: there is no pause state to resume from "
       "or to resume twice, so at-most-once across resume and replay has no surface")
_CANCEL = ("Crew.kickoff has no cancel primitive (kickoff_async runs the same blocking kickoff in a worker "
           "thread with asyncio.to_thread; cancelling the awaiting task leaves it running)")
_TIMEOUT = (f"Agent.max_execution_time takes whole seconds (a positive int): it cannot fire {TIMING['stop_after_ms']} ms "
            f"into a {TIMING['tool_body_ms']} ms body, the timing every framework's probe uses")

PROBES = [
    *[p for p in approval_probes({
        "parallel": "one task's agent calls delete_file, then send_email; the human reviews the task's output after it (human_input)",
        "sequence": "a plan-only task is reviewed (human_input) before a second task calls delete_file, then send_email",
        "resume": "an empty answer accepts the output",
        "reject": "the feedback makes the agent run again, and the scripted model stops at the rejection",
        "replay": "-",
    }, approval_run) if p["property"] != "B3"],
    {"property": "B3", "case": "probe", "unavailable": _B3},
    {"property": "B3", "case": "replay-after-crash", "unavailable": _B3},
    {"property": "B3", "case": "control", "unavailable": _B3},
    {"property": "B4", "case": "cancel/cooperative", "unavailable": _CANCEL},
    {"property": "B4", "case": "cancel/uncooperative", "unavailable": _CANCEL},
    {"property": "B4", "case": "timeout/cooperative", "unavailable": _TIMEOUT},
    {"property": "B4", "case": "timeout/uncooperative", "unavailable": _TIMEOUT},
    {"property": "B4", "case": "control", "unavailable": "no B4 case to control: " + _CANCEL.split(" (")[0] + "; " + _TIMEOUT.split(":")[0]},
]
