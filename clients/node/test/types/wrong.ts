// Calls a consumer must not be able to compile: each line below must be an error, and
// `tsc --strict` fails on an unused @ts-expect-error, so a declaration loosened until
// one of them compiles fails the check (test/package/pack.test.mjs). Never run.
import { connect, Client, GateError } from "@soundgate/client";
import { GatedRun, EffectOutcome } from "@soundgate/client/gatedrun";
// @ts-expect-error: not an export of the package
import { Connection } from "@soundgate/client";

export async function wrong(agent: Client): Promise<void> {
  // @ts-expect-error: connect needs a token
  await connect({ port: 7433 });
  // @ts-expect-error: a port is a number
  await connect({ port: "7433", token: "t" });
  // @ts-expect-error: an epoch is a number
  await agent.admit("r", "k", "1");
  // @ts-expect-error: waitMs, not wait_ms
  await agent.admit("r", "k", 1, { wait_ms: 100 });
  // @ts-expect-error: a decision is approve or reject
  await agent.decide("r", "k", "maybe");
  // @ts-expect-error: an outcome is ok or failed
  await agent.complete("r", "k", "done");
  // @ts-expect-error: a result is a string of JSON, not a value
  await agent.complete("r", "k", "ok", { id: 1 });
  // @ts-expect-error: made by connect, not by new
  new Client();
  const a = await agent.admit("r", "k", 1);
  // @ts-expect-error: "approved" is not an answer
  if (a.answer === "approved") return;
  // @ts-expect-error: a GateError's type is a string
  const code: number = new GateError("admit", { code: -32010, message: "unknown run" }).type;
  // @ts-expect-error: GatedRun needs an agent
  new GatedRun({ run: "r" });
  const g = new GatedRun({ agent, run: "r" });
  // @ts-expect-error: the effect is a function
  await g.effect("k", 42);
  const out: EffectOutcome<number> = await g.effect("k", () => 1);
  // @ts-expect-error: a replay's value is decoded JSON, maybe not a number
  const n: number = out.value;
  // @ts-expect-error: plan takes lists of keys
  await g.plan({ gated: "delete" });
  void [Connection, code, n];
}
