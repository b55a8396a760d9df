// @soundgate/client: a client for the soundgate effect gate, with no
// dependency beyond Node's standard library.
//
// One connection speaks newline-delimited JSON-RPC 2.0 (docs/protocol.md):
// every request carries a client-chosen id, so calls pipeline, and answers
// are matched by id, not by order. Answers are typed: admit resolves to an
// AdmitAnswer (admit | held | duplicate | denied with a reason); a refused
// request rejects with a GateError whose `type` is the server's error name
// (forbidden, unknown_run, bad_epoch, ...).
import { createHash } from "node:crypto";
import net from "node:net";

/** PROTOCOL_VERSION is the wire protocol version this client speaks. */
export const PROTOCOL_VERSION = 1;
/** LINE_BYTES_MAX bounds one request line (the gate's limit); answers may be longer. */
export const LINE_BYTES_MAX = 64 * 1024;
/** WAIT_MS_MAX is the longest wait_ms the server accepts for one admit. */
export const WAIT_MS_MAX = 5 * 60 * 1000;
/** DESCRIPTION_BYTES_MAX bounds an admit's description and a decide's reason (UTF-8 bytes). */
export const DESCRIPTION_BYTES_MAX = 512;
/** PENDING_LIMIT_MAX is the most approvals one pending page lists. */
export const PENDING_LIMIT_MAX = 1000;
const ARGS_DIGEST = /^(sha256:[0-9a-f]{64}|sha512:[0-9a-f]{128})$/;

// noteText checks a description or a reason as the gate does (docs/contract.md):
// at most DESCRIPTION_BYTES_MAX bytes of UTF-8, no control character but tab and LF.
function noteText(field, s) {
  if (typeof s !== "string") throw new TypeError(`soundgate/client: ${field} must be a string`);
  if (Buffer.byteLength(s, "utf8") > DESCRIPTION_BYTES_MAX) throw new TypeError(`soundgate/client: ${field} over ${DESCRIPTION_BYTES_MAX} bytes`);
  // eslint-disable-next-line no-control-regex
  const bad = s.search(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  if (bad >= 0) throw new TypeError(`soundgate/client: ${field} holds a control character at index ${bad}`);
  if (!s.isWellFormed()) throw new TypeError(`soundgate/client: ${field} holds a lone surrogate`);
  return s;
}

/** argsDigest returns "sha256:" and the SHA-256 of `data` in lower-case hex: an admit's args digest. */
export function argsDigest(data) {
  return "sha256:" + createHash("sha256").update(data).digest("hex");
}

/** RESULT_BYTES_MAX is the protocol's longest complete result, in bytes of UTF-8 (docs/protocol.md, limits). */
export const RESULT_BYTES_MAX = 16 * 1024;

/** GateError is a request the gate refused; `type` names the error (e.g. "forbidden"). */
export class GateError extends Error {
  constructor(method, err) {
    super(`soundgate/client: ${method}: ${err.message}`);
    this.name = "GateError";
    this.method = method;
    this.code = err.code;
    this.type = err.data?.type ?? "unknown";
    this.field = err.data?.field;
    this.data = err.data;
  }
}

/** ConnectionClosedError rejects every call in flight when the connection ends. */
export class ConnectionClosedError extends Error {
  constructor(cause) {
    super(`soundgate/client: connection closed${cause ? `: ${cause.message ?? cause}` : ""}`);
    this.name = "ConnectionClosedError";
    this.cause = cause;
  }
}

/** ProtocolError is an answer this client cannot read (a server or transport fault). */
export class ProtocolError extends Error {
  constructor(msg) {
    super(`soundgate/client: protocol: ${msg}`);
    this.name = "ProtocolError";
  }
}

/** ANSWERS are the admit answers; REASONS the denial reasons (docs/contract.md). */
export const ANSWERS = Object.freeze(["admit", "held", "duplicate", "denied"]);
export const REASONS = Object.freeze(["cancelled", "timed_out", "stale_epoch", "rejected", "retired"]);

/**
 * AdmitAnswer is the gate's answer to admit: `answer` is one of ANSWERS;
 * `reason` is set when denied; `epoch` is the run's epoch; `outcome` and
 * `result` are set for a duplicate of a completed effect.
 */
export class AdmitAnswer {
  constructor(raw) {
    if (!ANSWERS.includes(raw?.answer)) throw new ProtocolError(`unknown admit answer ${JSON.stringify(raw?.answer)}`);
    if (raw.answer === "denied" && !REASONS.includes(raw.reason)) throw new ProtocolError(`unknown denial reason ${JSON.stringify(raw.reason)}`);
    this.answer = raw.answer;
    this.reason = raw.reason;
    this.epoch = raw.epoch;
    this.outcome = raw.outcome;
    this.result = raw.result;
  }
  /** admitted reports whether the caller may perform the effect now. */
  get admitted() { return this.answer === "admit"; }
  get held() { return this.answer === "held"; }
  get duplicate() { return this.answer === "duplicate"; }
  get denied() { return this.answer === "denied"; }
  toString() { return this.denied ? `denied(${this.reason})` : this.answer; }
}

/**
 * connect opens a connection and presents `token` in a hello.
 * Options: {host, port} for TCP or {path} for a Unix socket; token (required).
 * Resolves to a Client whose `role` is what the server granted.
 */
export async function connect({ host = "127.0.0.1", port, path, token, signal } = {}) {
  if (!token) throw new TypeError("soundgate/client: connect needs a token");
  const sock = await new Promise((resolve, reject) => {
    const s = path ? net.connect({ path }) : net.connect({ host, port });
    const onErr = (e) => reject(new ConnectionClosedError(e));
    s.once("error", onErr);
    s.once("connect", () => { s.off("error", onErr); resolve(s); });
    signal?.addEventListener("abort", () => { s.destroy(); reject(signal.reason); }, { once: true });
  });
  const c = new Client(sock);
  const hello = await c._call("hello", { version: PROTOCOL_VERSION, token });
  c.role = hello.role;
  c.server = hello.server;
  return c;
}

/** Client is one connection to the gate. Calls may be issued concurrently (pipelined). */
export class Client {
  constructor(sock) {
    this._sock = sock;
    this._nextId = 1;
    this._inflight = new Map();
    this._buf = "";
    this._closed = null;
    sock.setEncoding("utf8");
    sock.setNoDelay(true);
    sock.on("data", (d) => this._onData(d));
    sock.on("error", (e) => this._fail(new ConnectionClosedError(e)));
    sock.on("close", () => this._fail(new ConnectionClosedError()));
  }

  _onData(chunk) {
    this._buf += chunk;
    let nl;
    while ((nl = this._buf.indexOf("\n")) >= 0) {
      const line = this._buf.slice(0, nl);
      this._buf = this._buf.slice(nl + 1);
      if (line.trim()) this._onLine(line);
    }
  }

  _onLine(line) {
    let msg;
    try { msg = JSON.parse(line); } catch { return this._fail(new ProtocolError(`not JSON: ${line.slice(0, 80)}`), true); }
    const w = this._inflight.get(msg.id);
    if (!w) {
      // an error without an id is about the connection itself (e.g. unauthenticated)
      if (msg.id == null && msg.error) return this._fail(new GateError("connection", msg.error), true);
      return;
    }
    this._inflight.delete(msg.id);
    if (msg.error) w.reject(new GateError(w.method, msg.error));
    else w.resolve(msg.result);
  }

  _fail(err, destroy = false) {
    if (!this._closed) this._closed = err;
    for (const w of this._inflight.values()) w.reject(this._closed);
    this._inflight.clear();
    if (destroy) this._sock.destroy();
  }

  _call(method, params) {
    if (this._closed) return Promise.reject(this._closed);
    // A lone surrogate has no UTF-8 form: the gate would answer parse_error with a null
    // id, which fails the whole connection; refuse it here and send nothing.
    for (const [field, v] of Object.entries(params)) {
      if (typeof v === "string" && !v.isWellFormed()) {
        return Promise.reject(new TypeError(`soundgate/client: ${field} holds a lone surrogate, which has no UTF-8 form`));
      }
    }
    const id = this._nextId++;
    return new Promise((resolve, reject) => {
      this._inflight.set(id, { method, resolve, reject });
      this._sock.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
    });
  }

  /** open creates run `run` (idempotent); timeoutMs sets its deadline on the gate's clock. */
  open(run, { timeoutMs } = {}) {
    return this._call("open", timeoutMs ? { run, timeout_ms: timeoutMs } : { run });
  }

  /**
   * admit asks to perform effect `key` of `run` now, at `epoch`. Options:
   * gated (the effect needs its own approval), waitMs (park on the gate up to
   * this long instead of answering held at once), description and argsDigest
   * (what the effect would do and a digest of its arguments, kept with the
   * approval a gated admit opens, for the approver; they change no answer).
   * Resolves to an AdmitAnswer.
   */
  async admit(run, key, epoch, { gated = false, waitMs = 0, description, argsDigest } = {}) {
    if (!Number.isSafeInteger(epoch) || epoch < 1) throw new TypeError("soundgate/client: epoch must be a positive integer");
    if (!Number.isSafeInteger(waitMs) || waitMs < 0 || waitMs > WAIT_MS_MAX) throw new TypeError(`soundgate/client: waitMs must be an integer in [0, ${WAIT_MS_MAX}]`);
    const params = { run, key, epoch };
    if (gated) params.gated = true;
    if (waitMs) params.wait_ms = waitMs;
    if (description !== undefined && noteText("description", description)) params.description = description;
    if (argsDigest !== undefined) {
      if (typeof argsDigest !== "string" || !ARGS_DIGEST.test(argsDigest)) throw new TypeError('soundgate/client: argsDigest must be "sha256:" and 64 lower-case hex digits, or "sha512:" and 128');
      params.args_digest = argsDigest;
    }
    return new AdmitAnswer(await this._call("admit", params));
  }

  /**
   * admitWait asks like admit and, while the answer is held, asks again with
   * waitMs per ask until `totalMs` has passed or `signal` aborts. It resolves
   * to the first answer that is not held, or to the last held answer.
   */
  async admitWait(run, key, epoch, { gated = false, waitMs = 1000, totalMs = 60000, signal, description, argsDigest } = {}) {
    const until = Date.now() + totalMs;
    let a = await this.admit(run, key, epoch, { gated, waitMs: Math.min(waitMs, totalMs), description, argsDigest });
    while (a.held && Date.now() < until && !signal?.aborted) {
      a = await this.admit(run, key, epoch, { waitMs: Math.max(1, Math.min(waitMs, until - Date.now())) });
    }
    return a;
  }

  /**
   * decide approves or rejects the pending approval `key` of `run` (approver role);
   * `reason` (the rule of a description) is kept with the effect, and status shows it.
   */
  decide(run, key, decision, { reason } = {}) {
    if (decision !== "approve" && decision !== "reject") throw new TypeError("soundgate/client: decision must be approve or reject");
    const params = { run, key, decision };
    if (reason !== undefined && noteText("reason", reason)) params.reason = reason;
    return this._call("decide", params);
  }

  /**
   * pending lists a page of the pending approvals the token may decide, oldest
   * first (approver and operator roles): {approvals, more, cursor?}. With more,
   * the next page is pending({cursor}).
   */
  pending({ limit, cursor } = {}) {
    const params = {};
    if (limit !== undefined) {
      if (!Number.isSafeInteger(limit) || limit < 1 || limit > PENDING_LIMIT_MAX) throw new TypeError(`soundgate/client: limit must be an integer in [1, ${PENDING_LIMIT_MAX}]`);
      params.limit = limit;
    }
    if (cursor !== undefined) params.cursor = cursor;
    return this._call("pending", params);
  }

  /** complete records the outcome ("ok" | "failed") and result of an admitted effect. */
  complete(run, key, outcome = "ok", result = "") {
    if (outcome !== "ok" && outcome !== "failed") throw new TypeError("soundgate/client: outcome must be ok or failed");
    return this._call("complete", result ? { run, key, outcome, result } : { run, key, outcome });
  }

  /** cancel makes `run` cancelled (operator role); resolves to {run, status, epoch}. */
  cancel(run) { return this._call("cancel", { run }); }

  /** fence moves `run` to a new epoch (operator role); resolves to {run, epoch}. */
  fence(run) { return this._call("fence", { run }); }

  /** status reads run `run`, and effect `key` when given. */
  status(run, key) { return this._call("status", key ? { run, key } : { run }); }

  /** close ends the connection; calls in flight reject with ConnectionClosedError. */
  close() {
    this._fail(new ConnectionClosedError());
    this._sock.end();
    this._sock.destroy();
  }
}
