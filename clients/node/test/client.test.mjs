// Tests of @soundgate/client against the real gate (soundgate serve).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { connect, GateError, ConnectionClosedError, AdmitAnswer, argsDigest } from "../index.mjs";
import { startGate, TOKENS } from "./server.mjs";

let gate, agent, approver, operator;
let n = 0;
const run = () => `run-${process.pid}-${++n}`;

before(async () => {
  gate = await startGate();
  [agent, approver, operator] = await Promise.all([
    connect({ port: gate.port, token: TOKENS.agent }),
    connect({ port: gate.port, token: TOKENS.approver }),
    connect({ port: gate.port, token: TOKENS.operator }),
  ]);
});
after(async () => {
  for (const c of [agent, approver, operator]) c?.close();
  await gate?.stop();
});

test("hello grants the token's role", () => {
  assert.equal(agent.role, "agent");
  assert.equal(approver.role, "approver");
  assert.equal(operator.role, "operator");
});

test("admit answers, table-driven over the contract's cases", async (t) => {
  const cases = [
    { name: "ungated effect of a fresh run is admitted", steps: async (r) => agent.admit(r, "k", 1), want: "admit" },
    { name: "gated effect is held", steps: async (r) => agent.admit(r, "k", 1, { gated: true }), want: "held" },
    { name: "sibling of a pending approval is held", steps: async (r) => { await agent.admit(r, "g", 1, { gated: true }); return agent.admit(r, "s", 1); }, want: "held" },
    { name: "second admit of the same key is a duplicate", steps: async (r) => { await agent.admit(r, "k", 1); return agent.admit(r, "k", 1); }, want: "duplicate" },
    { name: "rejected key is denied(rejected)", steps: async (r) => { await agent.admit(r, "g", 1, { gated: true }); await approver.decide(r, "g", "reject"); return agent.admit(r, "g", 1); }, want: "denied(rejected)" },
    { name: "after cancel: denied(cancelled)", steps: async (r) => { await operator.cancel(r); return agent.admit(r, "k", 2); }, want: "denied(cancelled)" },
    { name: "old epoch after fence: denied(stale_epoch)", steps: async (r) => { await operator.fence(r); return agent.admit(r, "k", 1); }, want: "denied(stale_epoch)" },
    { name: "approved gated key is admitted", steps: async (r) => { await agent.admit(r, "g", 1, { gated: true }); await approver.decide(r, "g", "approve"); return agent.admit(r, "g", 1); }, want: "admit" },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const r = run();
      await operator.open(r);
      const a = await c.steps(r);
      assert.ok(a instanceof AdmitAnswer);
      assert.equal(a.toString(), c.want);
    });
  }
});

test("a parked admit (wait_ms) is answered by the decision", async () => {
  for (const [decision, want] of [["approve", "admit"], ["reject", "denied(rejected)"]]) {
    const r = run();
    await operator.open(r);
    assert.equal((await agent.admit(r, "g", 1, { gated: true })).toString(), "held");
    const parked = agent.admit(r, "s", 1, { waitMs: 5000 });
    await new Promise((res) => setTimeout(res, 50));
    await approver.decide(r, "g", decision);
    assert.equal((await parked).toString(), want);
  }
});

test("a parked admit runs out of wait and answers held", async () => {
  const r = run();
  await operator.open(r);
  await agent.admit(r, "g", 1, { gated: true });
  const t0 = Date.now();
  const a = await agent.admit(r, "s", 1, { waitMs: 100 });
  assert.equal(a.answer, "held");
  assert.ok(Date.now() - t0 >= 90, "the gate parked the admit");
});

test("admitWait keeps asking until the decision, then returns it", async () => {
  const r = run();
  await operator.open(r);
  await agent.admit(r, "g", 1, { gated: true });
  setTimeout(() => approver.decide(r, "g", "approve"), 250);
  const a = await agent.admitWait(r, "s", 1, { waitMs: 100, totalMs: 5000 });
  assert.equal(a.answer, "admit");
});

test("duplicate carries the recorded outcome of a completed effect", async () => {
  const r = run();
  await operator.open(r);
  assert.ok((await agent.admit(r, "k", 1)).admitted);
  await agent.complete(r, "k", "ok", "sent #42");
  const d = await agent.admit(r, "k", 1);
  assert.equal(d.answer, "duplicate");
  assert.equal(d.outcome, "ok");
  assert.equal(d.result, "sent #42");
});

test("a run's deadline times it out on the gate's clock", async () => {
  const r = run();
  await operator.open(r, { timeoutMs: 50 });
  await new Promise((res) => setTimeout(res, 120));
  assert.equal((await agent.admit(r, "k", 1)).toString(), "denied(timed_out)");
});

test("refused requests reject with typed GateErrors and change nothing", async (t) => {
  const r = run();
  await operator.open(r);
  const cases = [
    { name: "agent may not decide", call: () => agent.decide(r, "k", "approve"), type: "forbidden" },
    { name: "agent may not cancel", call: () => agent.cancel(r), type: "forbidden" },
    { name: "unknown run", call: () => agent.admit(`${r}-nope`, "k", 1), type: "unknown_run" },
    { name: "epoch above the run's", call: () => agent.admit(r, "k", 7), type: "bad_epoch" },
    { name: "decide what is not pending", call: () => approver.decide(r, "nothing", "approve"), type: "not_pending" },
    { name: "complete what was not admitted", call: () => agent.complete(r, "never", "ok"), type: "not_admitted" },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      await assert.rejects(c.call(), (e) => e instanceof GateError && e.type === c.type);
    });
  }
  const s = await agent.status(r);
  assert.equal(s.status, "active");
  assert.equal(s.epoch, 1);
  assert.deepEqual(s.pending, []);
});

test("bad arguments are refused before they reach the wire", async () => {
  await assert.rejects(agent.admit("r", "k", 0), TypeError);
  await assert.rejects(agent.admit("r", "k", 1.5), TypeError);
  await assert.rejects(agent.admit("r", "k", 1, { waitMs: -1 }), TypeError);
  assert.throws(() => approver.decide("r", "k", "maybe"), TypeError);
  const r = run();
  await operator.open(r);
  for (const bad of ["a\ud800", "\udc00b"]) {
    await assert.rejects(agent.admit(r, bad, 1), /lone surrogate/);
    await assert.rejects(agent.complete(r, "k", "ok", bad), /lone surrogate/);
  }
  assert.ok((await agent.admit(r, "k", 1)).admitted, "the connection is still usable");
});

test("pipelining: many calls in flight on one connection are matched by id", async () => {
  const r = run();
  await operator.open(r);
  const keys = Array.from({ length: 200 }, (_, i) => `k${i}`);
  const answers = await Promise.all(keys.map((k) => agent.admit(r, k, 1)));
  assert.equal(answers.filter((a) => a.admitted).length, keys.length);
  const again = await Promise.all(keys.map((k) => agent.admit(r, k, 1)));
  assert.ok(again.every((a) => a.duplicate));
});

test("an answer line longer than any request is read (a status of 700 pending keys, 180 KB)", async () => {
  const r = run();
  await operator.open(r);
  const keys = Array.from({ length: 700 }, (_, i) => `${String(i).padStart(4, "0")}-${"k".repeat(245)}`);
  for (const k of keys) assert.ok((await agent.admit(r, k, 1, { gated: true })).held);
  const s = await agent.status(r);
  assert.ok(JSON.stringify(s).length > 2 * 64 * 1024);
  assert.deepEqual(s.pending, [...keys].sort());
});

test("a wrong token is refused and the connection closes", async () => {
  await assert.rejects(connect({ port: gate.port, token: "not-a-token-0123456789" }), (e) => e instanceof GateError || e instanceof ConnectionClosedError);
});

test("close rejects calls in flight with ConnectionClosedError", async () => {
  const c = await connect({ port: gate.port, token: TOKENS.agent });
  const r = run();
  await operator.open(r);
  await c.admit(r, "g", 1, { gated: true });
  const parked = c.admit(r, "s", 1, { waitMs: 5000 });
  c.close();
  await assert.rejects(parked, ConnectionClosedError);
  await assert.rejects(c.status(r), ConnectionClosedError);
});

// What an approval says, and the inbox: the approver reads the description and the
// digest, oldest first, a page at a time; the reason is kept; an agent may not read
// the inbox; bad notes are refused before anything is sent.
test("pending lists what an approval says; decide keeps its reason", async () => {
  const r = run();
  await operator.open(r);
  const digest = argsDigest('{"to":"ACME","eur":120}');
  assert.match(digest, /^sha256:[0-9a-f]{64}$/);
  assert.equal((await agent.admit(r, "wire", 1, { gated: true, description: "Wire 120 EUR\nto ACME", argsDigest: digest })).toString(), "held");
  await new Promise((res) => setTimeout(res, 10)); // the inbox orders by the millisecond, then run and key
  assert.equal((await agent.admit(r, "mail", 1, { gated: true })).toString(), "held");
  const mine = [];
  let page = await approver.pending({ limit: 1 });
  for (;;) { // other tests' approvals share the gate: follow the pages
    mine.push(...page.approvals.filter((a) => a.run === r));
    if (!page.more) break;
    page = await approver.pending({ limit: 1, cursor: page.cursor });
  }
  assert.deepEqual(mine.map((a) => a.key), ["wire", "mail"]);
  assert.equal(mine[0].description, "Wire 120 EUR\nto ACME");
  assert.equal(mine[0].args_digest, digest);
  assert.ok(mine[0].age_ms >= 0 && mine[0].since_ms > 0);
  assert.deepEqual(await approver.decide(r, "wire", "reject", { reason: "not this vendor" }), { decision: "reject", repeat: false });
  const st = await approver.status(r, "wire");
  assert.equal(st.effect.reason, "not this vendor");
  assert.equal(st.effect.description, "Wire 120 EUR\nto ACME");
  await assert.rejects(agent.pending(), (e) => e instanceof GateError && e.type === "forbidden");
  await assert.rejects(approver.pending({ cursor: "nope" }), (e) => e instanceof GateError && e.type === "out_of_range" && e.field === "params.cursor");
  for (const bad of [
    async () => agent.admit(r, "k", 1, { description: "\u001b[2J" }),
    async () => agent.admit(r, "k", 1, { description: "x".repeat(513) }),
    async () => agent.admit(r, "k", 1, { argsDigest: "sha256:ABC" }),
    async () => approver.decide(r, "k", "approve", { reason: "no\u0007" }),
    async () => approver.pending({ limit: 0 }),
  ]) await assert.rejects(bad, TypeError);
  assert.deepEqual((await agent.status(r, "k")).effect.status, "absent", "the refused calls sent nothing");
});
