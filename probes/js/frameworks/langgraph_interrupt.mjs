// LangGraph.js: interrupt() inside one of two nodes that run in the same
// superstep, resumed with Command({resume}) from a MemorySaver checkpoint.
import { StateGraph, Annotation, START, END, interrupt, Command, MemorySaver } from "@langchain/langgraph";
import { approvalProbes, sleep, stopDrive, stopProbes, toolBody, TIMING } from "../lib/harness.mjs";

export const meta = {
  framework: "LangGraph.js",
  package: "@langchain/langgraph",
  primitive: "interrupt() with parallel nodes in one superstep",
};

const State = Annotation.Root({
  out: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
  decision: Annotation({ reducer: (_a, b) => b, default: () => "" }),
});

const PLAN = "P1";

// gatedNode asks for approval with interrupt(); on approval it commits "delete".
// With prepareFirst it commits "prepare" before asking (a common shape: do the
// cheap part, then ask before the irreversible part).
function gatedNode(env, { prepareFirst = false } = {}) {
  return async () => {
    if (prepareFirst) await env.gatedStep("prepare", PLAN);
    const decision = interrupt({ plan: PLAN, ask: "approve delete?" });
    if (decision === "approve") await env.gatedStep("delete", PLAN, { gated: true });
    return { out: ["gated"], decision };
  };
}

function siblingNode(env) {
  return async () => {
    await sleep(TIMING.siblingMs);
    await env.gatedStep("send_email", PLAN);
    return { out: ["sibling"] };
  };
}

function build(env, { parallel, prepareFirst = false }) {
  // plan is the step that decides what the next superstep does; the
  // mediated variant's adapter registers the plan with the gate here.
  const effects = [...(prepareFirst ? ["prepare"] : []), "delete", "send_email"];
  const g = new StateGraph(State)
    .addNode("plan", async () => { await env.plan(PLAN, { gated: ["delete"], effects }); return {}; })
    .addNode("gated", gatedNode(env, { prepareFirst }))
    .addNode("sibling", siblingNode(env))
    .addEdge(START, "plan");
  if (parallel) {
    g.addEdge("plan", "gated").addEdge("plan", "sibling").addEdge("gated", END).addEdge("sibling", END);
  } else {
    // in sequence, a rejected plan ends before its sibling
    g.addEdge("plan", "gated");
    g.addConditionalEdges("gated", (s) => (s.decision === "approve" ? "sibling" : END), ["sibling", END]);
    g.addEdge("sibling", END);
  }
  return g.compile({ checkpointer: new MemorySaver() });
}

// approvalRun invokes the graph, and while it reports interrupts, records the
// pause, takes the decision and resumes.
async function approvalRun(env, { parallel, prepare, decision, replay }) {
  const graph = build(env, { parallel, prepareFirst: prepare });
  const cfg = { configurable: { thread_id: "t1" } };
  let res = await graph.invoke({ out: [] }, cfg);
  for (let round = 0; res.__interrupt__?.length && round < 8; round++) {
    const saved = (await graph.getState(cfg)).config.configurable.checkpoint_id;
    await env.paused(PLAN, res.__interrupt__.map((i) => i.value), async (d) => {
      res = await graph.invoke(new Command({ resume: d }), cfg);
      if (replay) {
        // a second worker resumes from the checkpoint it saw at the pause
        env.note("replay: resuming again from the checkpoint of the pause");
        await graph.invoke(new Command({ resume: d }), { configurable: { thread_id: "t1", checkpoint_id: saved } });
      }
    }, decision);
  }
}

function stopGraph(env, body) {
  return new StateGraph(State)
    .addNode("work", async (_s, config) => {
      await toolBody(body, config?.signal);
      await env.gatedStep("write_file", "S1");
      return { out: ["work"] };
    })
    .addEdge(START, "work")
    .addEdge("work", END)
    .compile();
}

async function stopRun(env, how, body, { control = false } = {}) {
  const graph = stopGraph(env, body);
  const ac = new AbortController();
  const cfg = how === "timeout" && !control ? { timeout: TIMING.stopAfterMs } : { signal: ac.signal };
  await stopDrive(env, how, { control, ac, start: () => graph.invoke({ out: [] }, cfg) });
}

export const probes = [
  ...approvalProbes({
    parallel: "gated node interrupts while a sibling node runs in the same superstep",
    sequence: "same nodes in sequence (gated, then sibling; nothing commits before interrupt()), a conditional edge ends the run on reject",
    resume: "resume re-executes the gated node",
    prepare: "the gated node commits 'prepare' before interrupt()",
    replay: "the run is resumed again from the checkpoint taken at the pause",
  }, approvalRun),
  ...stopProbes({
    cancel: "AbortSignal aborted while the node body runs",
    timeout: "invoke config timeout fires while the node body runs",
    signal: "config.signal",
    control: "run completes, then the AbortSignal is aborted",
  }, stopRun),
];
