// Type declarations of @soundgate/client (index.mjs), written by hand: every
// export of index.mjs is declared here (test/package/pack.test.mjs holds the two
// lists together). Result shapes are docs/protocol.md's, field for field.

/** PROTOCOL_VERSION is the wire protocol version this client speaks. */
export declare const PROTOCOL_VERSION: 1;
/** LINE_BYTES_MAX bounds one request line (the gate's limit); answers may be longer. */
export declare const LINE_BYTES_MAX: number;
/** WAIT_MS_MAX is the longest wait_ms the server accepts for one admit. */
export declare const WAIT_MS_MAX: number;
/** RESULT_BYTES_MAX is the protocol's longest complete result, in bytes of UTF-8. */
export declare const RESULT_BYTES_MAX: number;
/** DESCRIPTION_BYTES_MAX bounds an admit's description and a decide's reason (UTF-8 bytes). */
export declare const DESCRIPTION_BYTES_MAX: number;
/** PENDING_LIMIT_MAX is the most approvals one pending page lists. */
export declare const PENDING_LIMIT_MAX: number;
/** argsDigest returns "sha256:" and the SHA-256 of `data` in lower-case hex: an admit's args digest. */
export declare function argsDigest(data: string | Uint8Array): string;

/** A role a token grants (docs/protocol.md, hello and roles). */
export type Role = "agent" | "approver" | "operator";
/** An admit answer. */
export type Answer = "admit" | "held" | "duplicate" | "denied";
/** Why an admit was denied. */
export type Reason = "cancelled" | "timed_out" | "stale_epoch" | "rejected" | "retired";
/** The recorded outcome of a completed effect. */
export type Outcome = "ok" | "failed";
/** An approver's decision. */
export type Decision = "approve" | "reject";
/** A run's status. */
export type RunStatus = "none" | "active" | "cancelled" | "timed_out" | "retired";
/** An effect's status. */
export type EffectStatus = "absent" | "held" | "released" | "admitted" | "completed" | "rejected";

/** ANSWERS are the admit answers. */
export declare const ANSWERS: readonly Answer[];
/** REASONS are the denial reasons. */
export declare const REASONS: readonly Reason[];

/** The `error.data` of a refusal: `type` is the stable name to switch on. */
export interface GateErrorData {
  type: string;
  field?: string;
  [member: string]: unknown;
}

/** GateError is a request the gate refused; `type` names the error (e.g. "forbidden"). */
export declare class GateError extends Error {
  constructor(method: string, err: { code: number; message: string; data?: GateErrorData });
  readonly name: "GateError";
  /** The method that was refused, or "connection" for an error about the connection. */
  method: string;
  /** The JSON-RPC code (-32602 is the caller's bug, -32000..-32099 a refusal). */
  code: number;
  /** The error's stable name (docs/protocol.md, errors); "unknown" if the gate sent none. */
  type: string;
  /** The request member at fault, when there is one ("params.epoch"). */
  field?: string;
  data?: GateErrorData;
}

/** ConnectionClosedError rejects every call in flight when the connection ends. */
export declare class ConnectionClosedError extends Error {
  constructor(cause?: unknown);
  readonly name: "ConnectionClosedError";
  cause?: unknown;
}

/** ProtocolError is an answer this client cannot read (a server or transport fault). */
export declare class ProtocolError extends Error {
  constructor(msg: string);
  readonly name: "ProtocolError";
}

/** The raw admit result, as the gate sends it. */
export interface AdmitResult {
  answer: Answer;
  reason?: Reason;
  epoch: number;
  outcome?: Outcome;
  result?: string;
}

/**
 * AdmitAnswer is the gate's answer to admit: `reason` is set when denied; `outcome`
 * and `result` for a duplicate of a completed effect.
 */
export declare class AdmitAnswer {
  constructor(raw: AdmitResult);
  answer: Answer;
  reason: Reason | undefined;
  /** The run's epoch after the request. */
  epoch: number;
  outcome: Outcome | undefined;
  /** The recorded result text (GatedRun records JSON; another tool may not). */
  result: string | undefined;
  /** admitted reports whether the caller may perform the effect now. */
  readonly admitted: boolean;
  readonly held: boolean;
  readonly duplicate: boolean;
  readonly denied: boolean;
  /** "admit", "held", "duplicate" or "denied(reason)". */
  toString(): string;
}

/** What connect needs to know of an AbortSignal (Node's and the DOM's both fit). */
export interface AbortSignalLike {
  readonly aborted: boolean;
  readonly reason?: unknown;
  addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void;
}

/** connect's options: TCP host and port, or the path of a Unix socket; a token. */
export interface ConnectOptions {
  /** TCP host; default "127.0.0.1". */
  host?: string;
  /** TCP port (the gate's default is 7433). */
  port?: number;
  /** A Unix socket's path; when set, host and port are not used. */
  path?: string;
  /** The credential, from the gate's roles file. */
  token: string;
  /** Aborts the connection attempt. */
  signal?: AbortSignalLike;
}

/** connect opens a connection and presents `token` in a hello. */
export declare function connect(options: ConnectOptions): Promise<Client>;

/** The result of open. */
export interface OpenResult {
  run: string;
  status: RunStatus;
  epoch: number;
  /** The deadline on the gate's clock, in milliseconds since the Unix epoch. */
  deadline_ms?: number;
  created: boolean;
}

/** The result of decide. */
export interface DecideResult {
  decision: Decision;
  repeat: boolean;
}

/** The result of complete. */
export interface CompleteResult {
  repeat: boolean;
}

/** The result of cancel. */
export interface CancelResult {
  run: string;
  status: RunStatus;
  epoch: number;
}

/** The result of fence: the run's new epoch. */
export interface FenceResult {
  run: string;
  epoch: number;
}

/** One effect as status reports it; the last four are what its approval says. */
export interface EffectStatusResult {
  key: string;
  status: EffectStatus;
  epoch?: number;
  gated?: boolean;
  approved?: boolean;
  outcome?: Outcome;
  result?: string;
  /** When its approval became pending, on the gate's clock (ms since the Unix epoch). */
  since_ms?: number;
  description?: string;
  args_digest?: string;
  /** The reason of the decision on it. */
  reason?: string;
}

/** One pending approval as pending lists it. */
export interface PendingApproval {
  run: string;
  key: string;
  /** When it became pending, on the gate's clock; absent when not known (then no age). */
  since_ms?: number;
  /** How long it has been pending, on the gate's clock. */
  age_ms?: number;
  description?: string;
  args_digest?: string;
}

/** The result of pending: a page of the inbox, oldest first. */
export interface PendingResult {
  approvals: PendingApproval[];
  /** More approvals follow: ask again with `cursor`. */
  more: boolean;
  cursor?: string;
}

/** pending's options. */
export interface PendingOptions {
  /** The most approvals to list (1..PENDING_LIMIT_MAX); default the gate's (100). */
  limit?: number;
  /** List after this place: the `cursor` of the page before. */
  cursor?: string;
}

/** decide's options. */
export interface DecideOptions {
  /** Why: at most DESCRIPTION_BYTES_MAX bytes, no control character but tab and line feed. */
  reason?: string;
}

/** The result of status; `effect` when a key was given. */
export interface StatusResult {
  run: string;
  status: RunStatus;
  epoch: number;
  /** Keys whose approval is open, sorted. */
  pending: string[];
  deadline_ms?: number;
  effect?: EffectStatusResult;
}

/** admit's options. */
export interface AdmitOptions {
  /** The effect needs its own approval (a human decides with decide). */
  gated?: boolean;
  /** Park on the gate up to this long (0..WAIT_MS_MAX) instead of answering held. */
  waitMs?: number;
  /** What the effect would do, for the approver (kept with the approval a gated admit opens). */
  description?: string;
  /** A digest of its arguments: "sha256:" and 64 lower-case hex digits (argsDigest). */
  argsDigest?: string;
}

/** admitWait's options. */
export interface AdmitWaitOptions {
  gated?: boolean;
  /** The wait of one parked admit; default 1000. */
  waitMs?: number;
  /** How long to keep asking in all; default 60000. */
  totalMs?: number;
  signal?: AbortSignalLike;
  description?: string;
  argsDigest?: string;
}

/** Client is one connection to the gate, made by connect. Calls may be pipelined. */
export declare class Client {
  private constructor();
  /** The role the gate granted to the token. */
  role: Role;
  /** The gate's name and version ("soundgate 0.1.0-dev"). */
  server: string;
  /** open creates run `run` (idempotent; operator role). */
  open(run: string, options?: { timeoutMs?: number }): Promise<OpenResult>;
  /** admit asks to perform effect `key` of `run` now, at `epoch` (agent role). */
  admit(run: string, key: string, epoch: number, options?: AdmitOptions): Promise<AdmitAnswer>;
  /** admitWait asks like admit and asks again while the answer is held. */
  admitWait(run: string, key: string, epoch: number, options?: AdmitWaitOptions): Promise<AdmitAnswer>;
  /** decide approves or rejects the pending approval `key` of `run` (approver role). */
  decide(run: string, key: string, decision: Decision, options?: DecideOptions): Promise<DecideResult>;
  /** pending lists a page of the pending approvals the token may decide (approver, operator). */
  pending(options?: PendingOptions): Promise<PendingResult>;
  /** complete records the outcome and result (0..RESULT_BYTES_MAX bytes) of an admitted effect. */
  complete(run: string, key: string, outcome?: Outcome, result?: string): Promise<CompleteResult>;
  /** cancel makes `run` cancelled (operator role). */
  cancel(run: string): Promise<CancelResult>;
  /** fence moves `run` to a new epoch (operator role). */
  fence(run: string): Promise<FenceResult>;
  /** status reads run `run`, and effect `key` when given. */
  status(run: string, key?: string): Promise<StatusResult>;
  /** close ends the connection; calls in flight reject with ConnectionClosedError. */
  close(): void;
}
