// Smoke test of the INSTALLED package: pack.test.mjs copies this file into a project
// where `npm install soundgate-client-0.1.0.tgz` put the package, and runs it there
// against a real gate. It imports the package by name, as a consumer does.
// Environment: SOUNDGATE_PORT, SOUNDGATE_AGENT_TOKEN, SOUNDGATE_OPERATOR_TOKEN.
import assert from "node:assert/strict";
import { connect, GateError, RESULT_BYTES_MAX } from "@soundgate/client";
import { GatedRun, ResultNotStorableError } from "@soundgate/client/gatedrun";

// The names must resolve into this project's node_modules, never to the repository.
for (const spec of ["@soundgate/client", "@soundgate/client/gatedrun"]) {
  const where = import.meta.resolve(spec);
  const home = new URL("./node_modules/@soundgate/client/", import.meta.url).href;
  assert.ok(where.startsWith(home), `${spec} resolved to ${where}, not into ${home}`);
}

const port = Number(process.env.SOUNDGATE_PORT);
const operator = await connect({ port, token: process.env.SOUNDGATE_OPERATOR_TOKEN });
const agent = await connect({ port, token: process.env.SOUNDGATE_AGENT_TOKEN });
assert.equal(agent.role, "agent");
const run = `smoke-${process.pid}`;
await operator.open(run);

// the client: admit at the commit point, complete, and a replay is a duplicate
const a = await agent.admit(run, "send-email", 1);
assert.equal(a.answer, "admit");
await agent.complete(run, "send-email", "ok", "250 OK");
const d = await agent.admit(run, "send-email", 1);
assert.equal(d.answer, "duplicate");
assert.equal(d.outcome, "ok");
assert.equal(d.result, "250 OK");

// a refusal is a GateError to switch on by type
await assert.rejects(agent.decide(run, "send-email", "approve"), (e) => e instanceof GateError && e.type === "forbidden");

// GatedRun: a JSON value round-trips; one over the limit is refused, not cut
const g = new GatedRun({ agent, run });
const value = { sent: [1, true, null, "ü😀"], to: { team: "ops" } };
assert.equal((await g.effect("notify", async () => value)).status, "committed");
const again = await g.effect("notify", async () => assert.fail("ran twice"));
assert.equal(again.status, "duplicate");
assert.deepEqual(again.value, value);
await assert.rejects(g.effect("big", async () => "x".repeat(RESULT_BYTES_MAX)), ResultNotStorableError);
assert.equal((await agent.status(run, "big")).effect.status, "admitted");

agent.close();
operator.close();
console.log("smoke ok: connect, admit, complete, duplicate, GateError, GatedRun through the installed package");
