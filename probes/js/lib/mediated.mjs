// The mediated environment: the same probes, with every effect admitted
// through a running gate (soundgate serve) at its commit point, the human's
// decision taken at the gate, and cancel/timeout wired to the gate's
// cancel/fence. The violation rules are the same (lib/harness.mjs).
import { connect } from "../../../clients/node/index.mjs";
import { GatedRun } from "../../../clients/node/gatedrun.mjs";
import { startGate, TOKENS } from "../../../clients/node/test/server.mjs";
import { EventLog, sleep, TIMING, decisionFor } from "./harness.mjs";

let gate = null; // {server, port, agent, approver, operator}
let runs = 0;

/**
 * gateAvailable starts a gate for the mediated probes ($SOUNDGATE_BIN, or a binary
 * built from this repository), with the project's roles fixture. It resolves to ""
 * when the gate runs, or to why it cannot.
 */
export async function gateAvailable() {
  try {
    const server = await startGate();
    const [agent, approver, operator] = await Promise.all(
      [TOKENS.agent, TOKENS.approver, TOKENS.operator].map((token) => connect({ port: server.port, token })));
    gate = { server, port: server.port, agent, approver, operator };
    return "";
  } catch (e) {
    return `gate unavailable: ${String(e?.message || e).split("\n")[0]}`;
  }
}

/** stopGate ends the gate started by gateAvailable. */
export async function stopGate() {
  if (!gate) return;
  for (const c of [gate.agent, gate.approver, gate.operator]) c.close();
  await gate.server.stop();
  gate = null;
}

/** mediatedEnv returns the environment of one mediated probe run, on a fresh gate run. */
export async function mediatedEnv(_mod, probe, id) {
  const log = new EventLog();
  const run = `probe-${process.pid}-${++runs}`;
  await gate.operator.open(run);
  log.add("gate", { op: "open", run, note: id });
  const gr = new GatedRun({ agent: gate.agent, run, epoch: 1, waitMs: 1000, totalWaitMs: 10000, observe: (o) => log.add("gate", o) });
  const decisions = new Map(); // plan -> Promise<decision>, taken by the human at the gate
  const decision = decisionFor(probe);
  return {
    variant: "mediated",
    log,
    run,
    /**
     * plan registers the plan's approvals and effects with the gate and lets
     * the human, who watches the gate's pending approvals, decide them.
     */
    async plan(plan, { gated = [], effects = [] } = {}) {
      const approvals = await gr.plan({ gated, effects });
      if (approvals.length && !decisions.has(plan)) {
        decisions.set(plan, (async () => {
          await sleep(TIMING.humanThinkMs);
          log.add("decide", { plan, decision, at: "gate", keys: approvals });
          for (const k of approvals) log.add("gate", { op: "decide", key: k, ...(await gate.approver.decide(run, k, decision)) });
          return decision;
        })());
      }
    },
    async gatedStep(key, plan, opts = {}) {
      const out = await gr.effect(key, async () => { log.effect(key, plan, opts.run); return "committed"; });
      return out.status;
    },
    async paused(plan, asks, resume, fallback) {
      log.add("pause", { plan, asks });
      let d;
      if (decisions.has(plan)) {
        d = await decisions.get(plan);
        log.add("note", { text: `framework resumed with the gate's decision (${d})` });
      } else {
        await sleep(TIMING.humanThinkMs);
        d = fallback;
        log.add("decide", { plan, decision: d, at: "framework", note: "no approval registered with the gate for this plan" });
      }
      await resume(d);
    },
    async stopped(how, ac, r = "r1") {
      log.add("stop", { how, run: r });
      if (how === "cancel") log.add("gate", { op: "cancel", ...(await gate.operator.cancel(run)) });
      else {
        try {
          log.add("gate", { op: "fence", ...(await gate.operator.fence(run)) });
        } catch (e) {
          log.add("gate", { op: "fence", error: e.type ?? String(e) });
        }
      }
      if (ac) ac.abort(new Error(`probe ${how}`));
    },
    note(text, fields = {}) {
      log.add("note", { text, ...fields });
    },
  };
}
