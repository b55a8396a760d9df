// run.mjs runs the JavaScript probes and writes one JSON result per probe run.
//
//   node run.mjs [--variant unmodified|mediated|all] [--repeat N] [--only NAME] [--out DIR] [--quiet]
//
// Each probe run prints VERDICT, the rule applied and the timestamped event
// log; the verdict comes from the rule in lib/harness.mjs, never from the probe.
import { mkdirSync, writeFileSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { applyRule, RULES, unmodifiedEnv } from "./lib/harness.mjs";
import { mediatedEnv, gateAvailable, stopGate } from "./lib/mediated.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const variantArg = opt("variant", "all");
const repeat = Number(opt("repeat", "1"));
const only = opt("only", "");
const outDir = opt("out", join(here, "..", "results", "raw"));
const quiet = args.includes("--quiet");
const probeTimeoutMs = 20000;

const modules = ["langgraph_interrupt", "langgraph_toolnode", "openai_agents", "llamaindex_workflow"];

function pkgVersion(name) {
  return JSON.parse(readFileSync(join(here, "node_modules", name, "package.json"), "utf8")).version;
}

async function withTimeout(p, ms) {
  let t;
  const to = new Promise((_, rej) => { t = setTimeout(() => rej(new Error(`probe did not finish within ${ms} ms`)), ms); });
  try { return await Promise.race([p, to]); } finally { clearTimeout(t); }
}

const variants = variantArg === "all" ? ["unmodified", "mediated"] : [variantArg];
const gateProblem = variants.includes("mediated") ? await gateAvailable() : null;

mkdirSync(outDir, { recursive: true });
const results = [];
let errors = 0;
for (const m of modules) {
  if (only && !m.includes(only)) continue;
  const mod = await import(`./frameworks/${m}.mjs`);
  const version = pkgVersion(mod.meta.package);
  for (const variant of variants) {
    for (const probe of mod.probes) {
      for (let rep = 1; rep <= repeat; rep++) {
        const id = `${m}.${probe.property}.${probe.case.replace("/", "-")}`;
        const base = { id, module: m, framework: mod.meta.framework, package: mod.meta.package, version, primitive: mod.meta.primitive, property: probe.property, case: probe.case, about: probe.about, variant, repetition: rep, rule: RULES[probe.property] };
        let rec;
        if (probe.unavailable) {
          rec = { ...base, verdict: "UNAVAILABLE", reason: probe.unavailable, events: [] };
        } else if (variant === "mediated" && gateProblem) {
          rec = { ...base, verdict: "UNAVAILABLE", reason: gateProblem, events: [] };
        } else {
          const env = variant === "mediated" ? await mediatedEnv(mod, probe, id) : unmodifiedEnv();
          try {
            await withTimeout(probe.run(env), probeTimeoutMs);
            const r = applyRule(probe.property, env.log.events);
            const committed = env.log.events.filter((e) => e.kind === "effect").map((e) => e.key);
            rec = { ...base, verdict: r.violation ? "VIOLATION" : "CLEAN", reason: r.reason, committed, events: env.log.events };
          } catch (e) {
            errors++;
            rec = { ...base, verdict: "ERROR", reason: String(e?.stack || e), events: env.log.events };
          } finally {
            await env.close?.();
          }
        }
        results.push(rec);
        writeFileSync(join(outDir, `js.${id}.${variant}.r${rep}.json`), JSON.stringify(rec, null, 2) + "\n");
        console.log(`${rec.verdict.padEnd(11)} ${variant.padEnd(10)} ${id} (run ${rep})`);
        if (!quiet) {
          console.log(`  rule ${probe.property}: ${rec.rule}`);
          console.log(`  why: ${rec.reason}`);
          for (const e of rec.events) {
            const { t_ms, seq, kind, ...rest } = e;
            console.log(`  ${String(t_ms.toFixed(3)).padStart(10)} ms  #${String(seq).padStart(2)} ${kind.padEnd(7)} ${JSON.stringify(rest)}`);
          }
        }
      }
    }
  }
}
await stopGate();
if (gateProblem) console.log(`mediated variant UNAVAILABLE: ${gateProblem}`);
writeFileSync(join(outDir, "js.summary.json"), JSON.stringify(results.map(({ events, ...r }) => r), null, 2) + "\n");
const count = (v) => results.filter((r) => r.verdict === v).length;
console.log(`js probes: ${results.length} runs, ${count("VIOLATION")} VIOLATION, ${count("CLEAN")} CLEAN, ${count("UNAVAILABLE")} UNAVAILABLE, ${count("ERROR")} ERROR`);
process.exit(errors || (gateProblem && process.env.CI === "true") ? 1 : 0);
