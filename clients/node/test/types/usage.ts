// A consumer's use of @soundgate/client, checked by `tsc --noEmit --strict` against
// the installed package (test/package/pack.test.mjs): it imports the package by name,
// calls the whole public surface, and pins the types it gets back with Equal, so a
// declaration that changes or decays to `any` fails the compile. Never run.
import {
  connect, Client, AdmitAnswer, GateError, ConnectionClosedError, ProtocolError,
  PROTOCOL_VERSION, LINE_BYTES_MAX, WAIT_MS_MAX, RESULT_BYTES_MAX, ANSWERS, REASONS,
} from "@soundgate/client";
import type {
  Answer, Reason, Role, RunStatus, EffectStatus, OpenResult, StatusResult, DecideResult,
  CompleteResult, CancelResult, FenceResult, ConnectOptions, AdmitResult,
} from "@soundgate/client";
import {
  GatedRun, EffectOutcome, approvalKey, ResultNotStorableError, ResultDecodeError, CUT_MARK,
} from "@soundgate/client/gatedrun";
import type { JsonValue, Observation, EffectStatusName } from "@soundgate/client/gatedrun";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true : false;
function expect<T extends true>(): void {}

export async function usage(port: number, token: string): Promise<void> {
  const options: ConnectOptions = { port, token };
  const agent = await connect(options);
  const overUnix = await connect({ path: "/tmp/soundgate.sock", token, signal: AbortSignalLike() });
  expect<Equal<typeof agent, Client>>();
  expect<Equal<typeof agent.role, Role>>();
  expect<Equal<typeof agent.server, string>>();
  expect<Equal<typeof PROTOCOL_VERSION, 1>>();
  const limits: number[] = [LINE_BYTES_MAX, WAIT_MS_MAX, RESULT_BYTES_MAX];
  expect<Equal<typeof ANSWERS, readonly Answer[]>>();
  expect<Equal<typeof REASONS, readonly Reason[]>>();

  const opened = await overUnix.open("run-1", { timeoutMs: 60_000 });
  expect<Equal<typeof opened, OpenResult>>();
  expect<Equal<typeof opened.deadline_ms, number | undefined>>();
  const a = await agent.admit("run-1", "send-email", opened.epoch, { gated: false, waitMs: 100 });
  expect<Equal<typeof a, AdmitAnswer>>();
  expect<Equal<typeof a.answer, Answer>>();
  expect<Equal<typeof a.reason, Reason | undefined>>();
  expect<Equal<typeof a.result, string | undefined>>();
  const flags: boolean[] = [a.admitted, a.held, a.duplicate, a.denied];
  const shown: string = a.toString();
  const w = await agent.admitWait("run-1", "k", 1, { waitMs: 500, totalMs: 5_000 });
  expect<Equal<typeof w, AdmitAnswer>>();
  expect<Equal<Awaited<ReturnType<Client["complete"]>>, CompleteResult>>();
  const done = await agent.complete("run-1", "send-email", "ok", JSON.stringify({ id: 42 }));
  const repeat: boolean = done.repeat;
  expect<Equal<Awaited<ReturnType<Client["decide"]>>, DecideResult>>();
  expect<Equal<Awaited<ReturnType<Client["cancel"]>>, CancelResult>>();
  expect<Equal<Awaited<ReturnType<Client["fence"]>>, FenceResult>>();
  const st = await agent.status("run-1", "send-email");
  expect<Equal<typeof st, StatusResult>>();
  expect<Equal<typeof st.status, RunStatus>>();
  expect<Equal<NonNullable<typeof st.effect>["status"], EffectStatus>>();
  const raw: AdmitResult = { answer: "duplicate", epoch: 1, outcome: "ok", result: "null" };
  const rebuilt = new AdmitAnswer(raw);

  try {
    await agent.decide("run-1", approvalKey("delete"), "approve");
  } catch (e) {
    if (e instanceof GateError) {
      expect<Equal<typeof e.type, string>>();
      expect<Equal<typeof e.code, number>>();
      const field: string | undefined = e.field;
      if (e.type === "forbidden") void field;
    } else if (e instanceof ConnectionClosedError || e instanceof ProtocolError) {
      const m: string = e.message;
    }
  }

  const observed: Observation[] = [];
  const gate = new GatedRun({ agent, run: "run-1", epoch: 1, waitMs: 200, totalWaitMs: 10_000, observe: (o) => observed.push(o) });
  const approvals = await gate.plan({ gated: ["delete"], effects: ["delete", "send"] });
  expect<Equal<typeof approvals, string[]>>();
  const out = await gate.effect("send", async () => ({ id: 42, to: ["ops"] }));
  expect<Equal<typeof out, EffectOutcome<{ id: number; to: string[] }>>>();
  expect<Equal<typeof out.value, { id: number; to: string[] } | JsonValue | undefined>>();
  expect<Equal<typeof out.status, EffectStatusName>>();
  const committed: boolean = out.committed || out.failed;
  const recorded: string | undefined = out.error;
  const sync = await gate.effect("count", () => 7);
  expect<Equal<typeof sync, EffectOutcome<number>>>();
  try {
    await gate.effect("big", async () => "x".repeat(20_000));
  } catch (e) {
    if (e instanceof ResultNotStorableError) {
      expect<Equal<typeof e.bytes, number | undefined>>();
      const limit: number = e.limit;
      const key: string = e.key;
    } else if (e instanceof ResultDecodeError) {
      expect<Equal<typeof e.answer, AdmitAnswer>>();
    }
  }
  const mark: string = CUT_MARK;
  agent.close();
  void [limits, flags, shown, repeat, rebuilt, committed, recorded, mark];
}

// Node's AbortSignal and the DOM's both fit connect's signal; this stands for either.
declare function AbortSignalLike(): { readonly aborted: boolean; addEventListener(type: "abort", listener: () => void, options?: { once?: boolean }): void };
