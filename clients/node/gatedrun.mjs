// GatedRun: the integration pattern shared by every framework adapter. It
// holds the agent's view of one gate run and offers the two hooks an agent
// framework needs: plan (register a plan's approvals and effects with the gate
// before any of its tools runs) and effect (the commit point: admit, then run
// the effect only if admitted, then complete). The other wirings are one
// client call each: the human decides with an approver's client, and the
// operator cancels the gate run when the framework cancels and fences it when
// the framework times out. No framework import: adapters call these hooks from
// the framework's own extension points.
import { AdmitAnswer } from "./index.mjs";

/** approvalKey is the gate key of the approval that guards effect `key`. */
export const approvalKey = (key) => `approval/${key}`;

/** EffectOutcome is what GatedRun.effect did: committed, or why not. */
export class EffectOutcome {
  constructor(status, answer, value) {
    this.status = status; // committed | duplicate | denied | held
    this.answer = answer; // the gate's AdmitAnswer
    this.value = value; // the effect's return value when committed
  }
  get committed() { return this.status === "committed"; }
}

/**
 * GatedRun binds an agent client to run `run` at `epoch`. `observe`, when
 * given, is called with every gate answer (for logs).
 */
export class GatedRun {
  constructor({ agent, run, epoch = 1, waitMs = 1000, totalWaitMs = 60000, observe } = {}) {
    if (!agent) throw new TypeError("soundgate/client: GatedRun needs an agent client");
    this.agent = agent;
    this.run = run;
    this.epoch = epoch;
    this.waitMs = waitMs;
    this.totalWaitMs = totalWaitMs;
    this.observe = observe ?? (() => {});
    this.preAdmitted = new Set();
  }

  /**
   * plan registers a plan with the gate before any of its effects runs:
   * each key in `gated` opens an approval (its approvalKey, gated), then every
   * key in `effects` is asked once without waiting so that the gate holds it
   * under that approval (and a rejection rejects it). Keys the gate already
   * knows are left alone, so calling plan again on resume or replay changes
   * nothing. A plan without gated keys registers nothing. Resolves to the
   * approval keys a human must decide.
   */
  async plan({ gated = [], effects = [] } = {}) {
    const approvals = gated.map(approvalKey);
    if (approvals.length === 0) return approvals;
    for (const ak of approvals) {
      if ((await this.agent.status(this.run, ak)).effect?.status !== "absent") continue;
      const a = await this.agent.admit(this.run, ak, this.epoch, { gated: true });
      this.observe({ key: ak, answer: a.toString(), why: "plan: approval requested" });
    }
    for (const k of effects) {
      if ((await this.agent.status(this.run, k)).effect?.status !== "absent") continue;
      const a = await this.agent.admit(this.run, k, this.epoch);
      this.observe({ key: k, answer: a.toString(), why: "plan: effect registered" });
      // admitted here only if every approval was already decided: the
      // admission is kept for the commit point of this process.
      if (a.admitted) this.preAdmitted.add(k);
    }
    return approvals;
  }

  /**
   * effect is the commit point of effect `key`: it asks the gate (waiting
   * while the answer is held) and runs `fn` only on admit, then records the
   * outcome with complete. A duplicate, a denial or a wait that ran out does
   * not run `fn`.
   */
  async effect(key, fn) {
    let a;
    if (this.preAdmitted.delete(key)) {
      a = new AdmitAnswer({ answer: "admit", epoch: this.epoch });
      this.observe({ key, answer: "admit", why: "admitted when the plan was registered" });
    } else {
      a = await this.agent.admit(this.run, key, this.epoch);
      this.observe({ key, answer: a.toString() });
    }
    if (a.held) {
      a = await this.agent.admitWait(this.run, key, this.epoch, { waitMs: this.waitMs, totalMs: this.totalWaitMs });
      this.observe({ key, answer: a.toString(), why: "after waiting" });
    }
    if (!a.admitted) return new EffectOutcome(a.duplicate ? "duplicate" : a.denied ? "denied" : "held", a);
    let value;
    try {
      value = await fn();
    } catch (e) {
      await this.agent.complete(this.run, key, "failed", String(e?.message ?? e).slice(0, 1024));
      throw e;
    }
    await this.agent.complete(this.run, key, "ok", typeof value === "string" ? value.slice(0, 1024) : "");
    return new EffectOutcome("committed", a, value);
  }
}
