"""LangGraph (Python): the prebuilt ToolNode running the parallel tool calls
of one scripted model turn; one tool asks for approval with interrupt().
Resumed with Command(resume=...) from an InMemorySaver checkpoint; cancel
cancels the task that runs ainvoke, timeout is the graph's step_timeout."""

from __future__ import annotations

from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from harness import TIMING, approval_probes, send_email, send_email_sync, stop_drive, stop_probes, turn_plan

META = {
    "framework": "LangGraph",
    "package": "langgraph",
    "primitive": "prebuilt ToolNode, parallel tool calls, interrupt() in a tool",
}

PLAN = "P1"


def tools(env, body: str = "none"):
    @tool
    async def delete_file(path: str) -> str:
        """delete a file (needs approval)"""
        decision = interrupt({"plan": PLAN, "ask": f"approve delete {path}?"})
        if decision != "approve":
            return "rejected by the user"
        await env.agated_step("delete", PLAN, gated=True)
        return "deleted"

    if body == "uncooperative":
        # a blocking body: ToolNode runs a sync tool in a worker thread
        @tool
        def send_email_tool(to: str) -> str:
            """send an email"""
            send_email_sync(env, PLAN, body)
            return f"sent to {to}"
    else:
        @tool
        async def send_email_tool(to: str) -> str:
            """send an email"""
            await send_email(env, PLAN, body)
            return f"sent to {to}"
    send_email_tool.name = "send_email"
    return [delete_file, send_email_tool]


CALL_DELETE = {"name": "delete_file", "args": {"path": "/data"}, "id": "call_delete", "type": "tool_call"}
CALL_SEND = {"name": "send_email", "args": {"to": "ops@example.org"}, "id": "call_send", "type": "tool_call"}


def scripted_model(env, turns):
    """The fake model: it answers each turn from a fixed script, and ends the
    run as soon as a tool reports a rejection."""
    async def agent(state: MessagesState):
        msgs = state["messages"]
        last = msgs[-1] if msgs else None
        done = sum(1 for m in msgs if getattr(m, "type", "") == "ai")
        if last is not None and "rejected" in str(last.content):
            return {"messages": [AIMessage("stopping: the user rejected")]}
        calls = turns[done] if done < len(turns) else []
        plan = turn_plan([c["name"] for c in calls])
        if plan["gated"]:
            await env.aplan(PLAN, **plan)
        return {"messages": [AIMessage(content="", tool_calls=calls)]}
    return agent


def build(env, turns, body="none", checkpointer=True):
    g = StateGraph(MessagesState)
    g.add_node("agent", scripted_model(env, turns))
    g.add_node("tools", ToolNode(tools(env, body)))
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", lambda s: "tools" if getattr(s["messages"][-1], "tool_calls", None) else END, ["tools", END])
    g.add_edge("tools", "agent")
    return g.compile(checkpointer=InMemorySaver() if checkpointer else None)


PARALLEL = [[CALL_DELETE, CALL_SEND]]
SEQUENTIAL = [[CALL_DELETE], [CALL_SEND]]


async def approval_run(env, a):
    graph = build(env, PARALLEL if a["parallel"] else SEQUENTIAL)
    cfg = {"configurable": {"thread_id": "t1"}}
    res = await graph.ainvoke({"messages": [{"role": "user", "content": "clean up and tell ops"}]}, cfg)
    for rnd in range(8):
        intr = res.get("__interrupt__") or []
        if not intr:
            break
        saved = (await graph.aget_state(cfg)).config["configurable"]["checkpoint_id"]

        async def resume(d):
            nonlocal res
            res = await graph.ainvoke(Command(resume=d), cfg)
            if a["replay"] and rnd == 0:
                env.note("replay: resuming again from the checkpoint of the pause")
                await graph.ainvoke(Command(resume=d), {"configurable": {"thread_id": "t1", "checkpoint_id": saved}})

        await env.apaused(PLAN, [i.value for i in intr], resume, a["decision"])


async def stop_run(env, how, body, control):
    graph = build(env, [[CALL_SEND]], body)
    if how == "timeout" and not control:
        graph.step_timeout = TIMING["stop_after_ms"] / 1000
    cfg = {"configurable": {"thread_id": "t1"}}
    await stop_drive(env, how, control=control, cancel=lambda task: task.cancel(),
                     start=lambda: graph.ainvoke({"messages": [{"role": "user", "content": "write it"}]}, cfg))


PROBES = [
    *approval_probes({
        "parallel": "one model turn calls delete_file (interrupts) and send_email in parallel",
        "sequence": "delete_file in one turn, send_email in the next",
        "resume": "the resumed ToolNode runs again",
        "reject": "the scripted model stops at the rejection",
        "replay": "the run is resumed again from the checkpoint taken at the pause",
    }, approval_run),
    *stop_probes({
        "cancel": "the task running ainvoke is cancelled while the tool body runs",
        "timeout": "the graph's step_timeout fires while the tool body runs",
        "signal": "asyncio cancellation (an async tool)",
        "control": "run completes, then the task is cancelled",
    }, stop_run),
]
