// GatedRun: the integration pattern shared by every framework adapter. It
// holds the agent's view of one gate run and offers the two hooks an agent
// framework needs: plan (register a plan's approvals and effects with the gate
// before any of its tools runs) and effect (the commit point: admit, then run
// the effect only if admitted, then complete). The other wirings are one
// client call each: the human decides with an approver's client, and the
// operator cancels the gate run when the framework cancels and fences it when
// the framework times out. No framework import: adapters call these hooks from
// the framework's own extension points.
import { AdmitAnswer, RESULT_BYTES_MAX } from "./index.mjs";

/** approvalKey is the gate key of the approval that guards effect `key`. */
export const approvalKey = (key) => `approval/${key}`;

/** CUT_MARK ends an error message that was cut to fit the protocol's result limit. */
export const CUT_MARK = "…[cut]";

/**
 * ResultNotStorableError: the effect ran, but its return value cannot be recorded
 * (not encodable as JSON, or its JSON is over RESULT_BYTES_MAX bytes). The effect is
 * left admitted and not completed: a replay gets a duplicate without an outcome, the
 * truth, where a cut or invented result would replay as something it never returned.
 */
export class ResultNotStorableError extends Error {
  constructor(key, { bytes, value, cause } = {}) {
    super(bytes === undefined
      ? `soundgate/gatedrun: effect ${JSON.stringify(key)} ran, but its result is not encodable as JSON (${cause?.message ?? cause}); it stays admitted and not completed`
      : `soundgate/gatedrun: effect ${JSON.stringify(key)} ran, but its result is ${bytes} bytes of JSON, over the limit of ${RESULT_BYTES_MAX}; it stays admitted and not completed`,
    cause === undefined ? undefined : { cause });
    this.name = "ResultNotStorableError";
    this.key = key;
    this.bytes = bytes;
    this.limit = RESULT_BYTES_MAX;
    this.value = value;
  }
}

/**
 * ResultDecodeError: a duplicate's recorded result is not JSON (another tool completed
 * the effect). The effect did not run here; `answer.result` holds the text as recorded.
 */
export class ResultDecodeError extends Error {
  constructor(key, answer, cause) {
    super(`soundgate/gatedrun: the recorded result of effect ${JSON.stringify(key)} is not JSON: ${cause?.message ?? cause}`, { cause });
    this.name = "ResultDecodeError";
    this.key = key;
    this.answer = answer;
  }
}

/**
 * EffectOutcome is what GatedRun.effect did: committed, or why not. `value` is the
 * effect's return value when committed, and the recorded result decoded from JSON for
 * a duplicate of an effect completed "ok" (the same shape the first run returned);
 * `error` is the recorded message for a duplicate of an effect that failed.
 */
export class EffectOutcome {
  constructor(status, answer, value, error) {
    this.status = status; // committed | duplicate | denied | held
    this.answer = answer; // the gate's AdmitAnswer
    this.value = value;
    this.error = error;
  }
  get committed() { return this.status === "committed"; }
  /** failed reports a duplicate of an effect whose recorded outcome is "failed". */
  get failed() { return this.answer?.outcome === "failed"; }
}

const utf8Bytes = (s) => Buffer.byteLength(s, "utf8");

/**
 * encodeResult is the JSON text complete records for `value` (undefined is null).
 * It throws ResultNotStorableError rather than cut or invent a result.
 */
function encodeResult(key, value) {
  let text;
  try {
    text = value === undefined ? "null" : JSON.stringify(value);
  } catch (cause) {
    throw new ResultNotStorableError(key, { value, cause });
  }
  // JSON.stringify answers undefined for a function or a symbol: there is no JSON of it.
  if (text === undefined) throw new ResultNotStorableError(key, { value, cause: new TypeError(`${typeof value} has no JSON form`) });
  const bytes = utf8Bytes(text);
  if (bytes > RESULT_BYTES_MAX) throw new ResultNotStorableError(key, { bytes, value });
  return text;
}

/**
 * cutMessage fits an error message into RESULT_BYTES_MAX bytes of UTF-8: an error
 * message is for people, so a cut one is still worth recording, marked with CUT_MARK.
 * It cuts after the last whole character (code point, never half a surrogate pair) that
 * fits, and replaces lone surrogates, which the gate refuses.
 */
function cutMessage(msg) {
  msg = msg.toWellFormed();
  if (utf8Bytes(msg) <= RESULT_BYTES_MAX) return msg;
  const budget = RESULT_BYTES_MAX - utf8Bytes(CUT_MARK);
  let used = 0;
  let end = 0;
  for (const ch of msg) {
    const n = utf8Bytes(ch);
    if (used + n > budget) break;
    used += n;
    end += ch.length;
  }
  return msg.slice(0, end) + CUT_MARK;
}

/** replayed is the EffectOutcome of a duplicate: its recorded outcome, decoded. */
function replayed(key, a) {
  if (a.outcome === "failed") return new EffectOutcome("duplicate", a, undefined, a.result ?? "");
  if (a.outcome !== "ok") return new EffectOutcome("duplicate", a); // admitted, never completed
  let value;
  try {
    value = JSON.parse(a.result ?? "");
  } catch (cause) {
    throw new ResultDecodeError(key, a, cause);
  }
  return new EffectOutcome("duplicate", a, value);
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
   * outcome with complete: "ok" with the JSON of fn's return value, or
   * "failed" with the message of what fn threw (cut to the limit, marked), and
   * the throw goes on to the caller. A duplicate, a denial or a wait that ran
   * out does not run `fn`; a duplicate's value is the recorded result, decoded.
   * Throws ResultNotStorableError when fn's value has no JSON within
   * RESULT_BYTES_MAX bytes (the effect happened; nothing is recorded), and
   * ResultDecodeError when a recorded result is not JSON.
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
    if (a.duplicate) return replayed(key, a);
    if (!a.admitted) return new EffectOutcome(a.denied ? "denied" : "held", a);
    let value;
    try {
      value = await fn();
    } catch (e) {
      await this.agent.complete(this.run, key, "failed", cutMessage(String(e?.message ?? e)));
      throw e;
    }
    await this.agent.complete(this.run, key, "ok", encodeResult(key, value));
    return new EffectOutcome("committed", a, value);
  }
}
