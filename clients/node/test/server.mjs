// Test helper: builds the real gate (`go build ./cmd/soundgate`) once, or uses
// $SOUNDGATE_BIN, and starts `soundgate serve` in memory mode on a free port.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import net from "node:net";

const repo = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..", "..");
// The project's one roles fixture, shared with the Go tests (impl/server/servertest).
const FIXTURE = readFileSync(join(repo, "impl", "server", "servertest", "roles.json"), "utf8");
const tokenOf = (name) => JSON.parse(FIXTURE).tokens.find((t) => t.name === name).token;
export const TOKENS = { agent: tokenOf("agent"), approver: tokenOf("alice"), operator: tokenOf("ops") };

let built = null;
/** gateBinary returns the path of a soundgate binary, building it if needed. */
export function gateBinary() {
  if (process.env.SOUNDGATE_BIN) return process.env.SOUNDGATE_BIN;
  if (built) return built;
  const dir = mkdtempSync(join(tmpdir(), "soundgate-bin-"));
  built = join(dir, "soundgate");
  execFileSync("go", ["build", "-o", built, "./cmd/soundgate"], { cwd: repo, stdio: "inherit" });
  return built;
}

function freePort() {
  return new Promise((res, rej) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => { const { port } = s.address(); s.close(() => res(port)); });
    s.on("error", rej);
  });
}

/** startGate starts a gate with the roles fixture; resolves to {port, stop()}. */
let traces = 0;

export async function startGate() {
  const bin = gateBinary();
  if (!existsSync(bin)) throw new Error(`soundgate binary missing: ${bin}`);
  const dir = mkdtempSync(join(tmpdir(), "soundgate-test-"));
  const roles = join(dir, "roles.json");
  writeFileSync(roles, FIXTURE, { mode: 0o600 });
  const port = await freePort();
  const args = ["serve", "--roles", roles, "--listen", `127.0.0.1:${port}`, "--durability", "memory"];
  // As servertest.Process does: with $SOUNDGATE_TRACE_DIR, each gate writes its trace
  // there, for trace validation (cmd/tracecheck).
  if (process.env.SOUNDGATE_TRACE_DIR) {
    args.push("--trace", join(process.env.SOUNDGATE_TRACE_DIR, `trace-js-${process.pid}-${++traces}.ndjson`));
  }
  const p = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
  let log = "";
  await new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`gate did not start: ${log}`)), 10000);
    const on = (d) => { log += d; if (log.includes("listening")) { clearTimeout(t); res(); } };
    p.stdout.on("data", on);
    p.stderr.on("data", on);
    p.on("exit", (code) => { clearTimeout(t); rej(new Error(`gate exited ${code}: ${log}`)); });
  });
  return {
    port,
    stop: () => new Promise((res) => { if (p.exitCode !== null) return res(); p.once("exit", res); p.kill("SIGTERM"); }),
  };
}
