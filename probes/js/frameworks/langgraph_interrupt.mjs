// LangGraph.js: interrupt() inside one of two nodes that run in the same
// superstep, resumed with Command({resume}) from a MemorySaver checkpoint.
import { StateGraph, Annotation, START, END, interrupt, Command, MemorySaver } from "@langchain/langgraph";
import { sleep, stopDrive, stopProbes, toolBody, TIMING } from "../lib/harness.mjs";

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

function build(env, { parallel, prepareFirst = false, stopOnReject = false }) {
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
    g.addEdge("plan", "gated");
    if (stopOnReject) g.addConditionalEdges("gated", (s) => (s.decision === "approve" ? "sibling" : END), ["sibling", END]);
    else g.addEdge("gated", "sibling");
    g.addEdge("sibling", END);
  }
  return g.compile({ checkpointer: new MemorySaver() });
}

// approvalRun invokes the graph, and while it reports interrupts, records the
// pause, takes the decision and resumes.
async function approvalRun(env, graph, decision, { replay = false } = {}) {
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
  { property: "B1", case: "probe", about: "gated node interrupts while a sibling node runs in the same superstep; approve", run: (env) => approvalRun(env, build(env, { parallel: true }), "approve") },
  { property: "B1", case: "control", about: "same nodes in sequence (gated, then sibling); approve", run: (env) => approvalRun(env, build(env, { parallel: false }), "approve") },
  { property: "B2", case: "probe", about: "gated node interrupts while a sibling node runs in the same superstep; reject", run: (env) => approvalRun(env, build(env, { parallel: true }), "reject") },
  { property: "B2", case: "control", about: "same nodes in sequence, conditional edge ends the run on reject", run: (env) => approvalRun(env, build(env, { parallel: false, stopOnReject: true }), "reject") },
  { property: "B3", case: "probe", about: "gated node commits 'prepare' before interrupt(); resume re-executes the node", run: (env) => approvalRun(env, build(env, { parallel: true, prepareFirst: true }), "approve") },
  { property: "B3", case: "replay-after-crash", about: "parallel nodes; approve; the run is resumed again from the checkpoint taken at the pause", run: (env) => approvalRun(env, build(env, { parallel: true }), "approve", { replay: true }) },
  { property: "B3", case: "control", about: "no effect before interrupt(); resume after approval", run: (env) => approvalRun(env, build(env, { parallel: false }), "approve") },
  ...stopProbes({
    cancel: "AbortSignal aborted while the node body runs",
    timeout: "invoke config timeout fires while the node body runs",
    signal: "config.signal",
    control: "run completes, then the AbortSignal is aborted",
  }, stopRun),
];
