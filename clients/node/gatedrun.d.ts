// Type declarations of @soundgate/client/gatedrun (gatedrun.mjs), written by hand:
// every export of gatedrun.mjs is declared here (test/package/pack.test.mjs holds the
// two lists together).
import type { AdmitAnswer, Client } from "./index.js";

/** A value JSON can carry: what a replay decodes from a recorded result. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [member: string]: JsonValue };

/** The calls GatedRun makes, as an agent's Client offers them. */
export type AgentClient = Pick<Client, "admit" | "admitWait" | "complete" | "status">;

/** One gate answer as GatedRun saw it (for logs). */
export interface Observation {
  key: string;
  /** "admit", "held", "duplicate" or "denied(reason)". */
  answer: string;
  why?: string;
}

/** GatedRun's options. */
export interface GatedRunOptions {
  /** A connection with the agent role. */
  agent: AgentClient;
  run: string;
  /** The run's epoch; default 1. */
  epoch?: number;
  /** The wait of one parked admit while held; default 1000 ms. */
  waitMs?: number;
  /** How long a held effect waits for a decision in all; default 60000 ms. */
  totalWaitMs?: number;
  /** Called with every gate answer. */
  observe?: (o: Observation) => void;
}

/** approvalKey is the gate key of the approval that guards effect `key`. */
export declare function approvalKey(key: string): string;

/** CUT_MARK ends an error message that was cut to fit RESULT_BYTES_MAX. */
export declare const CUT_MARK: string;

/**
 * ResultNotStorableError: the effect ran, but its value has no JSON within
 * RESULT_BYTES_MAX bytes; it is left admitted and not completed.
 */
export declare class ResultNotStorableError extends Error {
  constructor(key: string, details?: { bytes?: number; value?: unknown; cause?: unknown });
  readonly name: "ResultNotStorableError";
  key: string;
  /** The JSON's length in bytes when it was too long; undefined when it could not be encoded. */
  bytes: number | undefined;
  /** RESULT_BYTES_MAX. */
  limit: number;
  /** What the effect returned. */
  value: unknown;
}

/** ResultDecodeError: a duplicate's recorded result is not JSON (another tool wrote it). */
export declare class ResultDecodeError extends Error {
  constructor(key: string, answer: AdmitAnswer, cause?: unknown);
  readonly name: "ResultDecodeError";
  key: string;
  /** The duplicate answer; its `result` is the text as recorded. */
  answer: AdmitAnswer;
}

/** What GatedRun.effect did. */
export type EffectStatusName = "committed" | "duplicate" | "denied" | "held";

/**
 * EffectOutcome is what GatedRun.effect did: committed, or why not. `value` is fn's
 * value (T) when committed, the recorded result decoded (JsonValue) for a duplicate
 * of an effect completed ok, else undefined; `error` is the recorded message of a
 * duplicate of a failed effect.
 */
export declare class EffectOutcome<T = unknown> {
  constructor(status: EffectStatusName, answer: AdmitAnswer, value?: T | JsonValue, error?: string);
  status: EffectStatusName;
  answer: AdmitAnswer;
  value: T | JsonValue | undefined;
  error: string | undefined;
  readonly committed: boolean;
  /** failed reports a duplicate of an effect whose recorded outcome is "failed". */
  readonly failed: boolean;
}

/** GatedRun binds an agent client to one gate run at one epoch. */
export declare class GatedRun {
  constructor(options: GatedRunOptions);
  agent: AgentClient;
  run: string;
  epoch: number;
  waitMs: number;
  totalWaitMs: number;
  observe: (o: Observation) => void;
  /** Keys admitted while the plan was registered, kept for their commit point. */
  preAdmitted: Set<string>;
  /**
   * plan registers a plan's approvals (`gated`) and effects with the gate before any
   * of them runs; resolves to the approval keys a human must decide.
   */
  plan(plan?: { gated?: string[]; effects?: string[] }): Promise<string[]>;
  /**
   * effect is the commit point of effect `key`: fn runs only if the gate admits it,
   * and its value is recorded as JSON. Rejects with ResultNotStorableError or
   * ResultDecodeError, or with what fn threw.
   */
  effect<T>(key: string, fn: () => T | PromiseLike<T>): Promise<EffectOutcome<Awaited<T>>>;
}
