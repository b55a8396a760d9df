// LlamaIndex.TS workflows (@llamaindex/workflow-core): a start handler fans
// out two events; one handler asks a human with a request event (an event no
// handler accepts, seen by the caller on the stream); the run is snapshotted
// while it waits and resumed from the snapshot with the human's response.
import { createWorkflow, workflowEvent } from "@llamaindex/workflow-core";
import { createStatefulMiddleware } from "@llamaindex/workflow-core/middleware/state";
import { approvalProbes, sleep, toolBody, TIMING } from "../lib/harness.mjs";

export const meta = {
  framework: "LlamaIndex.TS workflows",
  package: "@llamaindex/workflow-core",
  primitive: "fan-out events with a human-request event (snapshot and resume)",
};

const PLAN = "P1";

function build(env, { parallel, prepareFirst = false }) {
  const start = workflowEvent({ debugLabel: "start" });
  const deleteEv = workflowEvent({ debugLabel: "delete" });
  const sendEv = workflowEvent({ debugLabel: "send" });
  const humanRequest = workflowEvent({ debugLabel: "humanRequest" });
  const humanResponse = workflowEvent({ debugLabel: "humanResponse" });
  const stop = workflowEvent({ debugLabel: "stop" });
  const { withState } = createStatefulMiddleware(() => ({}));
  const wf = withState(createWorkflow());
  wf.handle([start], async (ctx) => {
    // the fan-out point: the mediated adapter registers the plan here
    await env.plan(PLAN, { gated: ["delete"], effects: [...(prepareFirst ? ["prepare"] : []), "delete", "send_email"] });
    ctx.sendEvent(deleteEv.with({ path: "/data" }));
    if (parallel) ctx.sendEvent(sendEv.with({ to: "ops@example.org" }));
  });
  wf.handle([deleteEv], async () => {
    if (prepareFirst) await env.gatedStep("prepare", PLAN);
    return humanRequest.with({ plan: PLAN, ask: "approve delete /data?" });
  });
  wf.handle([humanResponse], async (ctx, ev) => {
    if (ev.data.decision !== "approve") return stop.with("rejected");
    await env.gatedStep("delete", PLAN, { gated: true });
    if (!parallel) ctx.sendEvent(sendEv.with({ to: "ops@example.org" }));
    else return stop.with("done");
  });
  wf.handle([sendEv], async () => {
    await sleep(TIMING.siblingMs);
    await env.gatedStep("send_email", PLAN);
    return stop.with("sent");
  });
  return { wf, start, humanRequest, humanResponse, stop };
}

async function approvalRun(env, { parallel, prepare, decision, replay }) {
  const w = build(env, { parallel, prepareFirst: prepare });
  const ctx = w.wf.createContext();
  ctx.sendEvent(w.start.with());
  let ask = null;
  for await (const ev of ctx.stream) {
    if (w.humanRequest.include(ev)) { ask = ev.data; break; }
  }
  const snap = await ctx.snapshot();
  await env.paused(PLAN, [ask], async (d) => {
    for (let attempt = 0; attempt < (replay ? 2 : 1); attempt++) {
      if (attempt > 0) env.note("crash before a new snapshot was saved; resuming the saved snapshot again");
      const resumed = w.wf.resume(snap);
      resumed.sendEvent(w.humanResponse.with({ decision: d }));
      for await (const ev of resumed.stream) {
        if (w.stop.include(ev)) break;
      }
      await sleep(50); // let in-flight handlers of the resumed run finish
    }
  }, decision);
}

// stopRun cancels the run the way workflow-core provides: a handler that
// throws aborts the run's controller. There is no timeout primitive.
async function stopRun(env, body, { control = false } = {}) {
  const start = workflowEvent({ debugLabel: "start" });
  const cancelEv = workflowEvent({ debugLabel: "cancel" });
  const done = workflowEvent({ debugLabel: "done" });
  const wf = createWorkflow();
  wf.handle([start], async (ctx) => {
    await toolBody(body, ctx.signal);
    await env.gatedStep("write_file", "S1");
    return done.with();
  });
  wf.handle([cancelEv], () => {
    throw new Error("probe cancel");
  });
  const ctx = wf.createContext();
  ctx.signal.addEventListener("abort", () => env.note("run signal aborted"));
  ctx.sendEvent(start.with());
  if (control) {
    // the control stops the run only after its body has finished
    for await (const ev of ctx.stream) if (done.include(ev)) break;
  } else await sleep(TIMING.stopAfterMs);
  await env.stopped("cancel", null);
  try {
    ctx.sendEvent(cancelEv.with());
  } catch (e) {
    env.note("cancel raised", { error: String(e?.message || e) });
  }
  await sleep(TIMING.settleMs);
}

export const probes = [
  ...approvalProbes({
    parallel: "start fans out delete (asks a human) and send_email",
    sequence: "send_email is sent only by the human-response handler (nothing commits before the human request)",
    resume: "resume from the snapshot",
    reject: "the human-response handler stops the run",
    prepare: "delete commits 'prepare' before the human request",
    replay: "the process crashes before a new snapshot is saved and the saved snapshot is resumed again",
  }, approvalRun),
  { property: "B4", case: "cancel/cooperative", about: "a handler throws (aborts the run) while the body runs; body observes its context.signal", run: (env) => stopRun(env, "cooperative") },
  { property: "B4", case: "cancel/uncooperative", about: "a handler throws (aborts the run) while the body runs; body ignores signals", run: (env) => stopRun(env, "uncooperative") },
  { property: "B4", case: "timeout/cooperative", unavailable: "workflow-core has no timeout primitive" },
  { property: "B4", case: "timeout/uncooperative", unavailable: "workflow-core has no timeout primitive" },
  { property: "B4", case: "control", about: "the body completes, then the run is aborted", run: (env) => stopRun(env, "uncooperative", { control: true }) },
];
