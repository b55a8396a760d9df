// LangGraph.js: the prebuilt ToolNode running the parallel tool calls of one
// scripted model turn; one tool asks for approval with interrupt().
import { StateGraph, MessagesAnnotation, START, END, interrupt, Command, MemorySaver } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { approvalProbes, sendEmail, stopDrive, stopProbes, turnPlan, TIMING } from "../lib/harness.mjs";

export const meta = {
  framework: "LangGraph.js",
  package: "@langchain/langgraph",
  primitive: "prebuilt ToolNode, parallel tool calls, interrupt() in a tool",
};

const PLAN = "P1";

function tools(env, { body = "none" } = {}) {
  const del = tool(
    async ({ path }) => {
      const decision = interrupt({ plan: PLAN, ask: `approve delete ${path}?` });
      if (decision !== "approve") return "rejected by the user";
      await env.gatedStep("delete", PLAN, { gated: true });
      return "deleted";
    },
    { name: "delete_file", description: "delete a file (needs approval)", schema: z.object({ path: z.string() }) },
  );
  const send = tool(
    async ({ to }, config) => {
      await sendEmail(env, PLAN, body, config?.signal);
      return `sent to ${to}`;
    },
    { name: "send_email", description: "send an email", schema: z.object({ to: z.string() }) },
  );
  return [del, send];
}

const callDelete = { name: "delete_file", args: { path: "/data" }, id: "call_delete", type: "tool_call" };
const callSend = { name: "send_email", args: { to: "ops@example.org" }, id: "call_send", type: "tool_call" };

// scriptedModel is the fake model: it answers each turn from a fixed script,
// and ends the run as soon as a tool reports a rejection.
function scriptedModel(env, turns) {
  return async (state) => {
    const last = state.messages[state.messages.length - 1];
    const done = state.messages.filter((m) => m._getType?.() === "ai" || m.getType?.() === "ai").length;
    if (last && String(last.content).includes("rejected")) return { messages: [new AIMessage("stopping: the user rejected")] };
    const calls = turns[done];
    const plan = turnPlan((calls || []).map((c) => c.name));
    if (plan.gated.length) await env.plan(PLAN, plan);
    return { messages: [new AIMessage({ content: "", tool_calls: calls || [] })] };
  };
}

function build(env, turns, opts = {}) {
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", scriptedModel(env, turns))
    .addNode("tools", new ToolNode(tools(env, opts)))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => (s.messages[s.messages.length - 1].tool_calls?.length ? "tools" : END), ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer: new MemorySaver() });
}

async function approvalRun(env, { parallel, decision, replay }) {
  const graph = build(env, parallel ? parallelTurns : sequentialTurns);
  const cfg = { configurable: { thread_id: "t1" } };
  let res = await graph.invoke({ messages: [{ role: "user", content: "clean up and tell ops" }] }, cfg);
  for (let round = 0; res.__interrupt__?.length && round < 8; round++) {
    const saved = (await graph.getState(cfg)).config.configurable.checkpoint_id;
    await env.paused(PLAN, res.__interrupt__.map((i) => i.value), async (d) => {
      res = await graph.invoke(new Command({ resume: d }), cfg);
      if (replay && round === 0) {
        env.note("replay: resuming again from the checkpoint of the pause");
        await graph.invoke(new Command({ resume: d }), { configurable: { thread_id: "t1", checkpoint_id: saved } });
      }
    }, decision);
  }
}

async function stopRun(env, how, body, { control = false } = {}) {
  const graph = build(env, [[callSend]], { body });
  const ac = new AbortController();
  const cfg = { configurable: { thread_id: "t1" }, ...(how === "timeout" && !control ? { timeout: TIMING.stopAfterMs } : { signal: ac.signal }) };
  await stopDrive(env, how, { control, ac, start: () => graph.invoke({ messages: [{ role: "user", content: "write it" }] }, cfg) });
}

const parallelTurns = [[callDelete, callSend]];
const sequentialTurns = [[callDelete], [callSend]];

export const probes = [
  ...approvalProbes({
    parallel: "one model turn calls delete_file (interrupts) and send_email in parallel",
    sequence: "delete_file in one turn, send_email in the next",
    resume: "the resumed ToolNode runs again",
    reject: "the scripted model stops at the rejection",
    replay: "the run is resumed again from the checkpoint taken at the pause",
  }, approvalRun),
  ...stopProbes({
    cancel: "AbortSignal aborted while the tool body runs",
    timeout: "invoke config timeout fires while the tool body runs",
    signal: "config.signal",
    control: "run completes, then the AbortSignal is aborted",
  }, stopRun),
];
