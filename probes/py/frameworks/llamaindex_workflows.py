"""LlamaIndex Workflows (Python, llama-index-workflows): a start step fans out
two events; one step asks a human with an InputRequiredEvent (seen by the
caller on the event stream), a HumanResponseEvent step carries the answer.
While the run waits, its context is serialized (Context.to_dict) and the run
is resumed from it (Context.from_dict, run(ctx=...)) with the human's
response. Cancel is the handler's cancel_run(); timeout is the workflow's
own timeout."""

from __future__ import annotations

import asyncio

from workflows import Context, Workflow, step
from workflows.events import Event, HumanResponseEvent, InputRequiredEvent, StartEvent, StopEvent

from harness import TIMING, approval_probes, stop_drive, stop_probes, tool_body, tool_body_sync

META = {
    "framework": "LlamaIndex Workflows",
    "package": "llama-index-workflows",
    "primitive": "fan-out events with a human-request/response event (context serialization and resume)",
}

PLAN = "P1"


class DeleteEv(Event):
    path: str


class SendEv(Event):
    to: str


def build(env, parallel: bool, prepare_first: bool):
    class Probe(Workflow):
        @step
        async def start(self, ctx: Context, ev: StartEvent) -> DeleteEv | SendEv | None:
            # the fan-out point: the mediated adapter registers the plan here
            await env.aplan(PLAN, gated=["delete"], effects=(["prepare"] if prepare_first else []) + ["delete", "send_email"])
            ctx.send_event(DeleteEv(path="/data"))
            if parallel:
                ctx.send_event(SendEv(to="ops@example.org"))
            return None

        @step
        async def delete(self, ev: DeleteEv) -> InputRequiredEvent:
            if prepare_first:
                await env.agated_step("prepare", PLAN)
            return InputRequiredEvent(prefix=f"approve delete {ev.path}?")

        @step
        async def human(self, ctx: Context, ev: HumanResponseEvent) -> StopEvent | None:
            if ev.response != "approve":
                return StopEvent(result="rejected")
            await env.agated_step("delete", PLAN, gated=True)
            if not parallel:
                ctx.send_event(SendEv(to="ops@example.org"))
                return None
            return StopEvent(result="done")

        @step
        async def send(self, ev: SendEv) -> StopEvent | None:
            await asyncio.sleep(TIMING["sibling_ms"] / 1000)
            await env.agated_step("send_email", PLAN)
            # in the plan's sequence the run ends here; in parallel the human's step ends it
            return None if parallel else StopEvent(result="sent")

    return Probe(timeout=None)


async def approval_run(env, a):
    wf = build(env, a["parallel"], a["prepare"])
    handler = wf.run()
    ask = None
    async for ev in handler.stream_events():
        if isinstance(ev, InputRequiredEvent):
            ask = ev.prefix
            break
    # the durable pause: the context is serialized as a worker would store it
    saved = handler.ctx.to_dict()

    async def resume(d):
        for attempt in range(2 if a["replay"] else 1):
            if attempt:
                env.note("crash before a new context was saved; resuming the saved context again")
            ctx = Context.from_dict(wf, saved)
            h = wf.run(ctx=ctx)
            h.ctx.send_event(HumanResponseEvent(response=d))
            r = await h
            env.note("resumed run ended", result=str(r))
            await asyncio.sleep(0.05)  # let in-flight steps of the resumed run finish

    await env.apaused(PLAN, [ask], resume, a["decision"])
    await handler.cancel_run()


def stop_workflow(env, body: str, timeout):
    if body == "cooperative":
        class Stop(Workflow):
            @step
            async def work(self, ev: StartEvent) -> StopEvent:
                await tool_body("cooperative")
                await env.agated_step("write_file", "S1")
                return StopEvent(result="written")
    else:
        class Stop(Workflow):  # a blocking step: Workflows runs a sync step in a worker thread
            @step
            def work(self, ev: StartEvent) -> StopEvent:
                tool_body_sync("uncooperative")
                env.gated_step("write_file", "S1")
                return StopEvent(result="written")
    return Stop(timeout=timeout)


async def stop_run(env, how, body, control):
    wf = stop_workflow(env, body, TIMING["stop_after_ms"] / 1000 if how == "timeout" and not control else None)
    holder = {}

    async def start():
        holder["h"] = wf.run()
        return await holder["h"]

    def cancel(task):
        # the workflow's own cancel: handler.cancel_run(), on the run's loop
        asyncio.ensure_future(holder["h"].cancel_run())

    await stop_drive(env, how, control=control, start=start, cancel=cancel, name="run",
                     resolved=lambda r: {"result": str(r)})


PROBES = [
    *approval_probes({
        "parallel": "start fans out delete (asks a human) and send_email",
        "sequence": "send_email is sent only by the human-response step (nothing commits before the human request)",
        "resume": "resume from the serialized context",
        "reject": "the human-response step stops the run",
        "prepare": "delete commits 'prepare' before the human request",
        "replay": "the process crashes before a new context is saved and the saved context is resumed again",
    }, approval_run),
    *stop_probes({
        "cancel": "handler.cancel_run() while the step body runs",
        "timeout": "the workflow's timeout fires while the step body runs",
        "signal": "asyncio cancellation (an async step)",
        "control": "run completes, then cancel_run()",
    }, stop_run),
]
