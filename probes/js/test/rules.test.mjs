// The violation rules B1-B4 on hand-written logs: each rule must be able to
// say VIOLATION and CLEAN, so that a CLEAN verdict of a probe means something.
import { test } from "node:test";
import assert from "node:assert/strict";
import { applyRule } from "../lib/harness.mjs";

const log = (...evs) => evs.map((e, seq) => ({ t_ms: seq, seq, run: "r1", ...e }));
const eff = (key, plan = "P1") => ({ kind: "effect", key, plan });
const pause = (plan = "P1") => ({ kind: "pause", plan });
const decide = (decision, plan = "P1") => ({ kind: "decide", plan, decision });
const stop = (how) => ({ kind: "stop", how });

const cases = [
  { rule: "B1", name: "sibling before the decision", events: log(eff("send"), pause(), decide("approve"), eff("delete")), violation: true },
  { rule: "B1", name: "effect while paused and never decided", events: log(pause(), eff("send")), violation: true },
  { rule: "B1", name: "effects after the decision", events: log(pause(), decide("approve"), eff("delete"), eff("send")), violation: false },
  { rule: "B1", name: "effect of another plan during the pause", events: log(pause("P1"), eff("x", "P2"), decide("approve")), violation: false },
  { rule: "B2", name: "rejected plan's sibling committed earlier", events: log(eff("send"), pause(), decide("reject")), violation: true },
  { rule: "B2", name: "rejected plan's effect after the rejection", events: log(pause(), decide("reject"), eff("delete")), violation: true },
  { rule: "B2", name: "rejected plan with no effect", events: log(pause(), decide("reject")), violation: false },
  { rule: "B2", name: "approved plan's effects", events: log(pause(), decide("approve"), eff("delete")), violation: false },
  { rule: "B3", name: "effect twice", events: log(eff("prepare"), pause(), decide("approve"), eff("prepare")), violation: true },
  { rule: "B3", name: "distinct effects once each", events: log(eff("a"), eff("b")), violation: false },
  { rule: "B4", name: "effect after cancel", events: log(stop("cancel"), eff("w", "S1")), violation: true },
  { rule: "B4", name: "effect after timeout", events: log(stop("timeout"), eff("w", "S1")), violation: true },
  { rule: "B4", name: "effect before cancel", events: log(eff("w", "S1"), stop("cancel")), violation: false },
  { rule: "B4", name: "effect of another run after cancel", events: log(stop("cancel"), { ...eff("w", "S1"), run: "r2" }), violation: false },
];

for (const c of cases) {
  test(`${c.rule}: ${c.name}`, () => {
    assert.equal(applyRule(c.rule, c.events).violation, c.violation);
  });
}

test("an unknown rule is an error", () => {
  assert.throws(() => applyRule("B9", []), /unknown rule/);
});
