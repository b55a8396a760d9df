// The parts every framework probe shares: the B1-B3 and B4 cases, the tools'
// bodies, the plan of a model turn and the B4 drive.
import { test } from "node:test";
import assert from "node:assert/strict";
import { approvalProbes, sendEmail, stopDrive, stopProbes, turnPlan, unmodifiedEnv } from "../lib/harness.mjs";

test("stopProbes builds the B4 cases in order, worded and run as the framework says", async () => {
  const calls = [];
  const ps = stopProbes({ cancel: "C while the tool body runs", timeout: "T while the tool body runs", signal: "s.signal", control: "run completes" },
    async (_env, how, body, opts) => calls.push([how, body, opts?.control ?? false]));
  assert.deepEqual(ps.map((p) => [p.property, p.case, p.about]), [
    ["B4", "cancel/cooperative", "C while the tool body runs; body observes s.signal"],
    ["B4", "cancel/uncooperative", "C while the tool body runs; body ignores it"],
    ["B4", "timeout/cooperative", "T while the tool body runs; body observes s.signal"],
    ["B4", "timeout/uncooperative", "T while the tool body runs; body ignores it"],
    ["B4", "control", "run completes"],
  ]);
  for (const p of ps) await p.run(null);
  assert.deepEqual(calls, [["cancel", "cooperative", false], ["cancel", "uncooperative", false], ["timeout", "cooperative", false], ["timeout", "uncooperative", false], ["cancel", "uncooperative", true]]);
});

test("approvalProbes builds the B1-B3 cases in order, worded and run as the framework says", async () => {
  const words = { parallel: "P", sequence: "S", resume: "resumed", reject: "stops", prepare: "prepares", replay: "replayed" };
  const build = async (w) => {
    const asked = [];
    const ps = approvalProbes(w, async (_env, a) => asked.push(a));
    for (const p of ps) await p.run(null);
    return { rows: ps.map((p) => [p.property, p.case, p.about]), asked };
  };
  const a = (parallel, decision, more = {}) => ({ parallel, decision, prepare: false, replay: false, ...more });
  assert.deepEqual(await build(words), {
    rows: [
      ["B1", "probe", "P; approve; resumed"],
      ["B1", "control", "S; approve; resumed"],
      ["B2", "probe", "P; reject; stops"],
      ["B2", "control", "S; reject; stops"],
      ["B3", "probe", "P; prepares; approve; resumed"],
      ["B3", "replay-after-crash", "P; approve; replayed"],
      ["B3", "control", "S; approve; resumed"],
    ],
    asked: [a(true, "approve"), a(false, "approve"), a(true, "reject"), a(false, "reject"), a(true, "approve", { prepare: true }), a(true, "approve", { replay: true }), a(false, "approve")],
  });
  // no reject, no prepare, no replay: the rejection says no more, the B3
  // probe commits nothing before its pause and there is no replay case
  assert.deepEqual(await build({ parallel: "P", sequence: "S", resume: "resumed", noReplay: "why not" }), {
    rows: [
      ["B1", "probe", "P; approve; resumed"],
      ["B1", "control", "S; approve; resumed"],
      ["B2", "probe", "P; reject"],
      ["B2", "control", "S; reject"],
      ["B3", "probe", "P; approve; resumed"],
      ["B3", "control", "S; approve; resumed"],
    ],
    asked: [a(true, "approve"), a(false, "approve"), a(true, "reject"), a(false, "reject"), a(true, "approve"), a(false, "approve")],
  });
});

test("turnPlan gates delete_file's effect, not send_email's", () => {
  assert.deepEqual(turnPlan(["delete_file", "send_email"]), { gated: ["delete"], effects: ["delete", "send_email"] });
  assert.deepEqual(turnPlan(["send_email"]), { gated: [], effects: ["send_email"] });
});

test("sendEmail is the sibling of an approval probe or the write of a B4 probe", async () => {
  for (const [kind, key, plan] of [["none", "send_email", "P1"], ["cooperative", "write_file", "S1"], ["uncooperative", "write_file", "S1"]]) {
    const env = unmodifiedEnv();
    await sendEmail(env, "P1", kind, new AbortController().signal);
    assert.deepEqual(env.log.events.map((e) => [e.kind, e.key, e.plan]), [["effect", key, plan]], kind);
  }
  const env = unmodifiedEnv();
  const ac = new AbortController();
  ac.abort(new Error("stop"));
  await assert.rejects(sendEmail(env, "P1", "cooperative", ac.signal));
  assert.equal(env.log.events.length, 0);
});

test("stopDrive records a timeout at its deadline even when the run never notices it", async () => {
  const env = unmodifiedEnv();
  await stopDrive(env, "timeout", { start: () => new Promise((r) => setTimeout(r, 100)) });
  assert.deepEqual(env.log.events.map((e) => [e.kind, e.how ?? e.text]), [["stop", "timeout"], ["note", "invoke resolved"]]);
});

test("stopDrive stops the control only after the run settled", async () => {
  const env = unmodifiedEnv();
  await stopDrive(env, "cancel", { control: true, ac: new AbortController(), name: "run", start: async () => "x", resolved: (r) => ({ output: r }) });
  assert.deepEqual(env.log.events.map((e) => [e.kind, e.how ?? e.text, e.output]), [["note", "run resolved", "x"], ["stop", "cancel", undefined]]);
});
