// OpenAI Agents SDK for JS: a function tool with needsApproval in a model turn
// that calls two tools in parallel; the run's interruptions are approved or
// rejected on its RunState, which is serialized and restored like a durable
// approval workflow does.
import { Agent, run, tool, setTracingDisabled, Usage, RunState } from "@openai/agents";
import { z } from "zod";
import { approvalProbes, sendEmail, stopDrive, stopProbes, turnPlan, TIMING } from "../lib/harness.mjs";

setTracingDisabled(true);

export const meta = {
  framework: "OpenAI Agents SDK (JS)",
  package: "@openai/agents",
  primitive: "needsApproval with parallel tool calls",
};

const PLAN = "P1";
const fc = (callId, name, args) => ({ type: "function_call", id: `fc_${callId}`, callId, name, arguments: JSON.stringify(args), status: "completed" });
const msg = (text) => ({ type: "message", id: "msg_final", role: "assistant", status: "completed", content: [{ type: "output_text", text }] });
const callDelete = () => fc("call_delete", "delete_file", { path: "/data" });
const callSend = () => fc("call_send", "send_email", { to: "ops@example.org" });

// scriptedModel is the fake model: turn i answers script[i]; it ends the run
// when the last tool result it sees reports a rejection.
function scriptedModel(env, script) {
  return {
    async getResponse(req) {
      const items = Array.isArray(req.input) ? req.input : [];
      const turn = items.filter((i) => i.type === "function_call").length ? countTurns(items, script) : 0;
      const rejected = items.some((i) => i.type === "function_call_result" && /not approved|reject/i.test(JSON.stringify(i.output)));
      if (rejected || turn >= script.length) return { usage: new Usage(), output: [msg(rejected ? "stopping: the user rejected" : "done")] };
      const calls = script[turn]();
      // the plan hook: a model wrapper registers the turn's calls with the gate
      const plan = turnPlan(calls.map((c) => c.name));
      if (plan.gated.length) await env.plan(PLAN, plan);
      return { usage: new Usage(), output: calls };
    },
    async *getStreamedResponse() {
      throw new Error("soundgate/probes: the scripted model does not stream");
    },
  };
}
// countTurns counts how many scripted turns the input already contains.
function countTurns(items, script) {
  const seen = new Set(items.filter((i) => i.type === "function_call").map((i) => i.callId));
  let t = 0;
  while (t < script.length && script[t]().every((c) => seen.has(c.callId))) t++;
  return t;
}

function agentFor(env, script, { body = "none", timeoutMs } = {}) {
  const del = tool({
    name: "delete_file",
    description: "delete a file (needs approval)",
    parameters: z.object({ path: z.string() }),
    needsApproval: true,
    execute: async () => {
      await env.gatedStep("delete", PLAN, { gated: true });
      return "deleted";
    },
  });
  const send = tool({
    name: "send_email",
    description: "send an email",
    parameters: z.object({ to: z.string() }),
    ...(timeoutMs ? { timeoutMs } : {}),
    execute: async (_args, _ctx, details) => {
      await sendEmail(env, PLAN, body, details?.signal);
      return "sent";
    },
  });
  return new Agent({ name: "probe", instructions: "scripted", model: scriptedModel(env, script), tools: [del, send] });
}

async function approvalRun(env, { parallel, decision, replay }) {
  const agent = agentFor(env, parallel ? parallelTurns : sequentialTurns);
  let res = await run(agent, "clean up and tell ops");
  for (let round = 0; res.interruptions?.length && round < 8; round++) {
    const asks = res.interruptions.map((i) => i.rawItem?.name);
    // a durable approval: the paused state is serialized and restored
    const saved = res.state.toString();
    await env.paused(PLAN, asks, async (d) => {
      const state = await RunState.fromString(agent, saved);
      for (const i of state.getInterruptions()) d === "approve" ? state.approve(i) : state.reject(i);
      res = await run(agent, state);
      if (replay) {
        // the worker crashed before it saved the new state: the saved state is resumed again
        env.note("crash before the new state was saved; resuming the saved state again");
        const again = await RunState.fromString(agent, saved);
        for (const i of again.getInterruptions()) d === "approve" ? again.approve(i) : again.reject(i);
        res = await run(agent, again);
      }
    }, decision);
  }
}

// stopRun's timeout is the tool's own timeoutMs, which fires inside the SDK;
// the stop is recorded just after it.
async function stopRun(env, how, body, { control = false } = {}) {
  const ac = new AbortController();
  const agent = agentFor(env, [() => [callSend()]], { body, timeoutMs: how === "timeout" && !control ? TIMING.stopAfterMs : undefined });
  await stopDrive(env, how, {
    control, ac, name: "run", timeoutAtMs: TIMING.stopAfterMs + 5,
    start: () => run(agent, "write it", { signal: ac.signal }),
    resolved: (r) => ({ output: String(r.finalOutput) }),
  });
}

const parallelTurns = [() => [callDelete(), callSend()]];
const sequentialTurns = [() => [callDelete()], () => [callSend()]];

export const probes = [
  ...approvalProbes({
    parallel: "one model turn calls delete_file (needsApproval) and send_email in parallel",
    sequence: "delete_file in one turn, send_email in the next",
    resume: "resume from the serialized RunState",
    reject: "the scripted model stops at the rejection",
    replay: "the worker crashes before saving the new state and the saved RunState is resumed again",
  }, approvalRun),
  ...stopProbes({
    cancel: "run signal aborted while the tool body runs",
    timeout: "tool timeoutMs fires while the body runs",
    signal: "details.signal",
    control: "run completes, then the signal is aborted",
  }, stopRun),
];
