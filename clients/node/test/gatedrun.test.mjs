// Tests of GatedRun (the adapters' shared pattern) against the real gate.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { connect } from "../index.mjs";
import { GatedRun, approvalKey } from "../gatedrun.mjs";
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
  assert.equal(again.answer.result, "v");
  assert.equal(runs, 1);
});

test("a plan without gated calls registers nothing", async () => {
  const r = run();
  await operator.open(r);
  const g = new GatedRun({ agent, run: r });
  assert.deepEqual(await g.plan({ effects: ["send"] }), []);
  assert.equal((await agent.status(r, "send")).effect.status, "absent");
});
