"""LangGraph (Python): interrupt() inside one of two nodes that run in the same
superstep, resumed with Command(resume=...) from an InMemorySaver checkpoint.
The graph runs with ainvoke; cancel cancels the task that runs it (asyncio's
cancellation, which LangGraph passes to its node tasks) and timeout is the
compiled graph's step_timeout."""

from __future__ import annotations

import asyncio
import operator
from typing import Annotated, TypedDict

from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from harness import TIMING, approval_probes, stop_drive, stop_probes, tool_body, tool_body_sync

META = {
    "framework": "LangGraph",
    "package": "langgraph",
    "primitive": "interrupt() with parallel nodes in one superstep",
}

PLAN = "P1"


class State(TypedDict, total=False):
    out: Annotated[list, operator.add]
    decision: str


def gated_node(env, prepare_first: bool):
    # asks for approval with interrupt(); on approval it commits "delete".
    # With prepare_first it commits "prepare" before asking.
    async def node(state: State):
        if prepare_first:
            await env.agated_step("prepare", PLAN)
        decision = interrupt({"plan": PLAN, "ask": "approve delete?"})
        if decision == "approve":
            await env.agated_step("delete", PLAN, gated=True)
        return {"out": ["gated"], "decision": decision}
    return node


def sibling_node(env):
    async def node(state: State):
        await asyncio.sleep(TIMING["sibling_ms"] / 1000)
        await env.agated_step("send_email", PLAN)
        return {"out": ["sibling"]}
    return node


def build(env, parallel: bool, prepare_first: bool = False):
    effects = (["prepare"] if prepare_first else []) + ["delete", "send_email"]

    # plan is the step that decides what the next superstep does; the mediated
    # variant's adapter registers the plan with the gate here.
    async def plan(state: State):
        await env.aplan(PLAN, gated=["delete"], effects=effects)
        return {}

    g = StateGraph(State)
    g.add_node("plan", plan)
    g.add_node("gated", gated_node(env, prepare_first))
    g.add_node("sibling", sibling_node(env))
    g.add_edge(START, "plan")
    if parallel:
        g.add_edge("plan", "gated")
        g.add_edge("plan", "sibling")
        g.add_edge("gated", END)
        g.add_edge("sibling", END)
    else:
        # in sequence, a rejected plan ends before its sibling
        g.add_edge("plan", "gated")
        g.add_conditional_edges("gated", lambda s: "sibling" if s.get("decision") == "approve" else END, ["sibling", END])
        g.add_edge("sibling", END)
    return g.compile(checkpointer=InMemorySaver())


async def approval_run(env, a):
    graph = build(env, a["parallel"], a["prepare"])
    cfg = {"configurable": {"thread_id": "t1"}}
    res = await graph.ainvoke({"out": []}, cfg)
    for _ in range(8):
        intr = res.get("__interrupt__") or []
        if not intr:
            break
        saved = (await graph.aget_state(cfg)).config["configurable"]["checkpoint_id"]

        async def resume(d):
            nonlocal res
            res = await graph.ainvoke(Command(resume=d), cfg)
            if a["replay"]:
                # a second worker resumes from the checkpoint it saw at the pause
                env.note("replay: resuming again from the checkpoint of the pause")
                await graph.ainvoke(Command(resume=d), {"configurable": {"thread_id": "t1", "checkpoint_id": saved}})

        await env.apaused(PLAN, [i.value for i in intr], resume, a["decision"])


def stop_graph(env, body: str, step_timeout: float | None):
    if body == "cooperative":
        async def work(state: State):
            await tool_body("cooperative")
            await env.agated_step("write_file", "S1")
            return {"out": ["work"]}
    else:
        # a blocking body: LangGraph runs a sync node in a worker thread
        def work(state: State):
            tool_body_sync("uncooperative")
            env.gated_step("write_file", "S1")
            return {"out": ["work"]}
    g = StateGraph(State)
    g.add_node("work", work)
    g.add_edge(START, "work")
    g.add_edge("work", END)
    graph = g.compile()
    if step_timeout is not None:
        graph.step_timeout = step_timeout
    return graph


async def stop_run(env, how, body, control):
    timeout = TIMING["stop_after_ms"] / 1000 if how == "timeout" and not control else None
    graph = stop_graph(env, body, timeout)
    await stop_drive(env, how, control=control, start=lambda: graph.ainvoke({"out": []}),
                     cancel=lambda task: task.cancel())


PROBES = [
    *approval_probes({
        "parallel": "gated node interrupts while a sibling node runs in the same superstep",
        "sequence": "same nodes in sequence (gated, then sibling; nothing commits before interrupt()), a conditional edge ends the run on reject",
        "resume": "resume re-executes the gated node",
        "prepare": "the gated node commits 'prepare' before interrupt()",
        "replay": "the run is resumed again from the checkpoint taken at the pause",
    }, approval_run),
    *stop_probes({
        "cancel": "the task running ainvoke is cancelled while the node body runs",
        "timeout": "the graph's step_timeout fires while the node body runs",
        "signal": "asyncio cancellation (an async node)",
        "control": "run completes, then the task is cancelled",
    }, stop_run),
]
