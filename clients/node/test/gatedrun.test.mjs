// Tests of GatedRun (the adapters' shared pattern) against the real gate.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { connect, RESULT_BYTES_MAX } from "../index.mjs";
import { GatedRun, approvalKey, ResultNotStorableError, ResultDecodeError, CUT_MARK } from "../gatedrun.mjs";
import { startGate, TOKENS } from "./server.mjs";

let gate, agent, approver, operator;
let n = 0;
const run = () => `gr-${process.pid}-${++n}`;

before(async () => {
  gate = await startGate();
  [agent, approver, operator] = await Promise.all([TOKENS.agent, TOKENS.approver, TOKENS.operator].map((token) => connect({ port: gate.port, token })));
});
after(async () => {
  for (const c of [agent, approver, operator]) c?.close();
  await gate?.stop();
});

test("a plan is held until the human decides, then performed or denied", async (t) => {
  const cases = [
    { name: "approve", stop: (r) => approver.decide(r, approvalKey("delete"), "approve"), want: { delete: "committed", send: "committed" } },
    { name: "reject", stop: (r) => approver.decide(r, approvalKey("delete"), "reject"), want: { delete: "denied", send: "denied" } },
    { name: "cancel", stop: (r) => operator.cancel(r), want: { delete: "denied", send: "denied" } },
    { name: "fence", stop: (r) => operator.fence(r), want: { delete: "denied", send: "denied" } },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const r = run();
      await operator.open(r);
      const seen = [];
      const g = new GatedRun({ agent, run: r, waitMs: 200, totalWaitMs: 5000, observe: (o) => seen.push(o) });
      assert.deepEqual(await g.plan({ gated: ["delete"], effects: ["delete", "send"] }), [approvalKey("delete")]);
      const registered = seen.length;
      await g.plan({ gated: ["delete"], effects: ["delete", "send"] });
      assert.equal(seen.length, registered, "a second plan changes nothing");
      const ran = [];
      // the sibling asks first and waits at its commit point for the decision
      const send = g.effect("send", async () => { ran.push("send"); return "sent"; });
      await new Promise((res) => setTimeout(res, 100));
      assert.deepEqual(ran, [], "nothing runs before the decision");
      await c.stop(r);
      const del = await g.effect("delete", async () => { ran.push("delete"); return "deleted"; });
      assert.equal((await send).status, c.want.send);
      assert.equal(del.status, c.want.delete);
      assert.equal(ran.length, Object.values(c.want).filter((s) => s === "committed").length);
    });
  }
});

test("a replayed effect is a duplicate and does not run again", async () => {
  const r = run();
  await operator.open(r);
  const g = new GatedRun({ agent, run: r });
  let runs = 0;
  assert.equal((await g.effect("k", async () => { runs++; return "v"; })).status, "committed");
  const again = await g.effect("k", async () => { runs++; return "v"; });
  assert.equal(again.status, "duplicate");
  assert.equal(again.value, "v");
  assert.equal(again.answer.result, '"v"', "the gate holds the JSON of the value");
  assert.equal(runs, 1);
});

test("results of any JSON shape round-trip through complete and a later duplicate", async (t) => {
  const values = {
    object: { a: [1, 2.5, -3e-7, true, false, null, "ü€😀\n\"q\"", { b: { c: [] } }], n: 0, s: "" },
    array: [[], [{}], [1, [2, [3]]]],
    number: 42.125,
    "negative zero is JSON 0": -0,
    true: true,
    false: false,
    null: null,
    string: "250 OK",
    "string that looks like JSON": '{"not":"parsed twice"}',
    undefined,
  };
  for (const [name, value] of Object.entries(values)) {
    await t.test(name, async () => {
      const r = run();
      await operator.open(r);
      const first = await new GatedRun({ agent, run: r }).effect("k", async () => value);
      assert.equal(first.status, "committed");
      assert.equal(first.value, value, "committed: the value as fn returned it");
      const want = value === undefined ? null : JSON.parse(JSON.stringify(value));
      const st = await agent.status(r, "k");
      assert.equal(st.effect.status, "completed");
      assert.equal(st.effect.outcome, "ok");
      assert.equal(st.effect.result, JSON.stringify(want));
      // a new process replaying the run: a fresh GatedRun, the effect must not run again
      const again = await new GatedRun({ agent, run: r }).effect("k", async () => assert.fail("ran twice"));
      assert.equal(again.status, "duplicate");
      assert.deepEqual(again.value, want);
      assert.equal(again.failed, false);
    });
  }
});

test("a result at the limit is stored; one byte over, or 20 KB, is refused and left admitted", async (t) => {
  // "€" is 3 bytes of UTF-8 and one UTF-16 unit: the limit is counted in bytes
  const atLimit = "€".repeat(5460) + "xx"; // JSON: 2 quotes + 16380 + 2 bytes
  assert.equal(Buffer.byteLength(JSON.stringify(atLimit)), RESULT_BYTES_MAX);
  const cases = [
    { name: "exactly RESULT_BYTES_MAX bytes", value: atLimit, stored: true },
    { name: "one byte over", value: atLimit + "x", bytes: RESULT_BYTES_MAX + 1 },
    { name: "within the limit in UTF-16 units, over it in bytes", value: "€".repeat(6000), bytes: 18002 },
    { name: "a 20 KB object", value: { blob: "x".repeat(20000) }, bytes: 20011 },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const r = run();
      await operator.open(r);
      let runs = 0;
      const p = new GatedRun({ agent, run: r }).effect("big", async () => { runs++; return c.value; });
      if (c.stored) {
        assert.equal((await p).status, "committed");
        assert.equal((await agent.status(r, "big")).effect.status, "completed");
        return;
      }
      await assert.rejects(p, (e) => {
        assert.ok(e instanceof ResultNotStorableError, String(e));
        assert.equal(e.bytes, c.bytes);
        assert.equal(e.limit, RESULT_BYTES_MAX);
        assert.match(e.message, new RegExp(`\\b${c.bytes} bytes\\b.*\\b${RESULT_BYTES_MAX}\\b`));
        assert.equal(e.value, c.value, "the value fn returned is not lost");
        return true;
      });
      assert.equal(runs, 1, "the effect ran");
      const st = await agent.status(r, "big");
      assert.equal(st.effect.status, "admitted", "admitted and not completed");
      assert.equal(st.effect.outcome, undefined);
      assert.equal(st.effect.result, undefined);
      const again = await new GatedRun({ agent, run: r }).effect("big", async () => { runs++; });
      assert.equal(again.status, "duplicate");
      assert.equal(again.answer.outcome, undefined, "a replay hears: it ran, no outcome");
      assert.equal(again.value, undefined);
      assert.equal(runs, 1);
    });
  }
});

test("a result with no JSON form is refused, not recorded, and left admitted", async (t) => {
  const cyclic = { a: 1 };
  cyclic.self = cyclic;
  const cases = { bigint: 10n, "nested bigint": { n: [1n] }, cycle: cyclic, function: () => 1, symbol: Symbol("s") };
  for (const [name, value] of Object.entries(cases)) {
    await t.test(name, async () => {
      const r = run();
      await operator.open(r);
      await assert.rejects(new GatedRun({ agent, run: r }).effect("k", async () => value), (e) => {
        assert.ok(e instanceof ResultNotStorableError, String(e));
        assert.equal(e.bytes, undefined);
        assert.match(e.message, /not encodable as JSON/);
        return true;
      });
      assert.equal((await agent.status(r, "k")).effect.status, "admitted");
    });
  }
});

test("a recorded result that is not JSON is a ResultDecodeError, never a string", async (t) => {
  for (const recorded of ["250 OK", "{truncated", ""]) {
    await t.test(JSON.stringify(recorded), async () => {
      const r = run();
      await operator.open(r);
      // another tool admitted and completed the effect with a plain text result
      assert.ok((await agent.admit(r, "k", 1)).admitted);
      await agent.complete(r, "k", "ok", recorded);
      await assert.rejects(new GatedRun({ agent, run: r }).effect("k", async () => assert.fail("ran twice")), (e) => {
        assert.ok(e instanceof ResultDecodeError, String(e));
        assert.equal(e.answer.result ?? "", recorded, "the gate hands back \"\" as no result");
        assert.equal(e.answer.duplicate, true);
        return true;
      });
    });
  }
});

test("a failed effect records its message, a long one cut on a character boundary and marked", async (t) => {
  const markBytes = Buffer.byteLength(CUT_MARK);
  const cases = [
    { name: "short", message: "boom: ü", cut: false },
    { name: "exactly the limit", message: "a".repeat(RESULT_BYTES_MAX - 2) + "ü", cut: false },
    { name: "one byte over", message: "a".repeat(RESULT_BYTES_MAX - 1) + "ü", cut: true },
    // 1 + 7 bytes a pair: the budget (limit - mark) falls inside a character, and
    // "😀" is a surrogate pair in UTF-16
    { name: "long, 3- and 4-byte characters", message: "x" + "€😀".repeat(3000), cut: true },
    { name: "long, 4-byte characters after a 2-byte one", message: "é" + "😀".repeat(5000), cut: true },
    // half a pair has no UTF-8: the gate would refuse the line (and drop the connection)
    { name: "a lone surrogate", message: "half \ud83d of a pair", cut: false, recorded: "half \ufffd of a pair" },
  ];
  for (const c of cases) {
    await t.test(c.name, async () => {
      const r = run();
      await operator.open(r);
      const g = new GatedRun({ agent, run: r });
      await assert.rejects(g.effect("k", async () => { throw new Error(c.message); }), { message: c.message });
      const st = await agent.status(r, "k");
      assert.equal(st.effect.outcome, "failed");
      const got = st.effect.result;
      assert.ok(Buffer.byteLength(got) <= RESULT_BYTES_MAX, `${Buffer.byteLength(got)} bytes`);
      assert.equal(got, got.toWellFormed(), "no half of a surrogate pair");
      if (!c.cut) {
        assert.equal(got, c.recorded ?? c.message);
      } else {
        assert.ok(got.endsWith(CUT_MARK), "the cut is marked");
        const kept = got.slice(0, -CUT_MARK.length);
        assert.ok(c.message.startsWith(kept), "a prefix of the message");
        const next = String.fromCodePoint(c.message.codePointAt(kept.length));
        assert.ok(Buffer.byteLength(kept) + Buffer.byteLength(next) + markBytes > RESULT_BYTES_MAX, "the last whole character that fits");
      }
      const again = await g.effect("k", async () => assert.fail("a failed effect ran again"));
      assert.equal(again.status, "duplicate");
      assert.equal(again.failed, true);
      assert.equal(again.error, got);
      assert.equal(again.value, undefined);
    });
  }
});

test("a plan without gated calls registers nothing", async () => {
  const r = run();
  await operator.open(r);
  const g = new GatedRun({ agent, run: r });
  assert.deepEqual(await g.plan({ effects: ["send"] }), []);
  assert.equal((await agent.status(r, "send")).effect.status, "absent");
});
