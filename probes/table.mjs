// table.mjs reads every probe result under probes/results/raw (JavaScript, Go
// and Python, both variants, every repetition) and writes probes/results/results.md
// and results.json: one row per framework primitive, B1-B4, unmodified vs
// mediated. It exits non-zero when a result makes the run invalid: a probe
// that errored, a control that is not CLEAN, a mediated VIOLATION, or a
// verdict that changed between repetitions.
import { readdirSync, readFileSync, writeFileSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const rawDir = join(here, "results", "raw");
const outDir = join(here, "results");
const results = readdirSync(rawDir)
  .filter((f) => f.endsWith(".json") && !f.endsWith("summary.json"))
  .map((f) => JSON.parse(readFileSync(join(rawDir, f), "utf8")));
if (results.length === 0) {
  console.error("probes table: no results under probes/results/raw");
  process.exit(1);
}
const install = existsSync(join(outDir, "install.json")) ? JSON.parse(readFileSync(join(outDir, "install.json"), "utf8")) : null;

const props = ["B1", "B2", "B3", "B4"];
const variants = ["unmodified", "mediated"];
const problems = [];

// verdicts of one probe (id, variant) across repetitions
const byProbe = new Map();
for (const r of results) {
  const k = `${r.id}|${r.variant}`;
  if (!byProbe.has(k)) byProbe.set(k, []);
  byProbe.get(k).push(r);
}
const probeRows = [];
for (const [k, rs] of [...byProbe].sort()) {
  rs.sort((a, b) => a.repetition - b.repetition);
  const verdicts = rs.map((r) => r.verdict);
  const stable = verdicts.every((v) => v === verdicts[0]);
  const r0 = rs[0];
  probeRows.push({ id: r0.id, variant: r0.variant, framework: r0.framework, primitive: r0.primitive, property: r0.property, case: r0.case, verdicts, stable, reason: r0.reason });
  if (verdicts.includes("UNAVAILABLE") && !String(r0.reason || "").trim()) problems.push(`${k}: n/a without a reason`);
  if (!stable) problems.push(`${k}: verdict changed between repetitions: ${verdicts.join(",")}`);
  if (verdicts.includes("ERROR")) problems.push(`${k}: ERROR: ${rs.find((r) => r.verdict === "ERROR").reason.split("\n")[0]}`);
  if (r0.case === "control" && verdicts.some((v) => v !== "CLEAN" && v !== "UNAVAILABLE")) problems.push(`${k}: control not CLEAN: ${verdicts.join(",")}`);
  if (r0.variant === "mediated" && verdicts.includes("VIOLATION")) problems.push(`${k}: mediated VIOLATION`);
  // non-vacuity: a run on the approve path must still perform its effects, and
  // the B4 control must perform its write; a gate that denied everything
  // would make every verdict CLEAN and is caught here.
  for (const r of rs) {
    if (r.verdict !== "CLEAN" && r.verdict !== "VIOLATION") continue;
    const need = r.property === "B1" || r.property === "B3" ? ["delete", "send_email"] : r.property === "B4" && r.case === "control" ? ["write_file"] : [];
    const missing = need.filter((e) => !(r.committed || []).includes(e));
    if (missing.length) problems.push(`${k} run ${r.repetition}: effect ${missing.join(",")} never committed (a vacuous verdict)`);
  }
}

// one cell: the verdict of a property's probe cases (controls excluded)
function cell(rows) {
  const probes = rows.filter((r) => r.case !== "control");
  if (probes.length === 0) return { verdict: "UNAVAILABLE", detail: "no probe" };
  const v = (r) => (r.stable ? r.verdicts[0] : "UNSTABLE");
  const bad = probes.filter((r) => v(r) === "VIOLATION");
  const un = probes.filter((r) => v(r) === "UNAVAILABLE");
  const other = probes.filter((r) => !["VIOLATION", "CLEAN", "UNAVAILABLE"].includes(v(r)));
  let verdict = bad.length ? "VIOLATION" : other.length ? v(other[0]) : un.length === probes.length ? "UNAVAILABLE" : "CLEAN";
  const sub = probes.length > 1 ? probes.map((r) => `${r.case}: ${v(r)}`).join("; ") : "";
  // an n/a says why (the first reason of each kind)
  const why = [...new Set(un.map((r) => r.reason))].map((w) => `n/a: ${w}`).join("; ");
  return { verdict, detail: [sub, why].filter(Boolean).join("; "), unavailable: un.map((r) => r.case) };
}

const prims = new Map();
for (const r of results) {
  const k = `${r.framework}|${r.primitive}`;
  const language = r.language || (r.id.startsWith("eino") || r.id.startsWith("adk") || r.id.startsWith("genkit") ? "Go" : "JavaScript");
  if (!prims.has(k)) prims.set(k, { framework: r.framework, package: r.package, version: r.version, primitive: r.primitive, language, note: r.note || "" });
}
// the paper's six frameworks come first, in its order; the paper's contrast and this project's others follow
const PAPER = ["LangGraph", "LlamaIndex Workflows", "Microsoft Agent Framework", "OpenAI Agents SDK", "CrewAI", "LangGraph.js"];
const paperRank = (f) => (PAPER.includes(f) ? PAPER.indexOf(f) : f.includes("contrast") ? PAPER.length : PAPER.length + 1);
// the install step of each language (probes/install.sh writes them in this order)
const installOf = (language) => {
  const s = install?.steps?.find((x) => (language === "JavaScript" ? /^npm/ : language === "Go" ? /^go module/ : /pip install/).test(x.step));
  return s ? `${s.seconds} s, ${s.size}` : "-";
};
const table = [];
for (const [k, p] of prims) {
  const row = { ...p, cells: {} };
  for (const v of variants) {
    row.cells[v] = {};
    for (const b of props) row.cells[v][b] = cell(probeRows.filter((r) => `${r.framework}|${r.primitive}` === k && r.variant === v && r.property === b));
  }
  const ctrls = probeRows.filter((r) => `${r.framework}|${r.primitive}` === k && r.case === "control");
  // a control that is n/a (the framework has no surface for its cases) is not run, so it cannot be unclean
  row.controlsClean = ctrls.every((r) => r.verdicts.every((x) => x === "CLEAN" || x === "UNAVAILABLE"));
  row.controlsRun = ctrls.some((r) => r.verdicts.some((x) => x === "CLEAN" || x === "VIOLATION"));
  row.paper = PAPER.includes(p.framework) ? "yes" : p.framework.includes("contrast") ? "contrast" : "-";
  row.install = installOf(p.language);
  table.push(row);
}
table.sort((a, b) => paperRank(a.framework) - paperRank(b.framework) || (a.language + a.framework + a.primitive).localeCompare(b.language + b.framework + b.primitive));

const reps = Math.max(...results.map((r) => r.repetition));
const short = (c) => (c.verdict === "UNAVAILABLE" ? "n/a" : c.verdict) + (c.unavailable?.length && c.verdict !== "UNAVAILABLE" ? "*" : "");
let md = `# Probe results\n\nGenerated by \`make probes\` (probes/table.mjs) from ${results.length} probe runs (${reps} repetition(s) of each probe).\nDo not edit: rerun \`make probes\`.\n\n`;
md += `Each cell is the verdict of the property's probe cases by the rule fixed in the harness (docs/probes.md); controls are not in the cells. `;
md += `VIOLATION: at least one probe case violated the property. n/a: the primitive offers no such surface (said why in the detail). \\*: some sub-cases n/a.\n\n`;
md += `The paper's six frameworks come first (paper: yes), then its contrast, then this project's others. Install: the step of the framework's language in probes/install.sh (one npm tree, one Go module, one Python venv each, shared by that language's frameworks).\n\n`;
md += `| framework | paper | language | version | primitive | B1 | B2 | B3 | B4 | B1 mediated | B2 mediated | B3 mediated | B4 mediated | controls clean | install (time, size) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n`;
for (const r of table) {
  md += `| ${r.framework} | ${r.paper} | ${r.language} | ${r.package}@${r.version} | ${r.primitive} | ${props.map((b) => short(r.cells.unmodified[b])).join(" | ")} | ${props.map((b) => short(r.cells.mediated[b])).join(" | ")} | ${r.controlsClean ? (r.controlsRun ? "yes" : "n/a") : "NO"} | ${r.install} |\n`;
}
md += `\n## Sub-cases (unmodified)\n\nB3: \`probe\` resumes once after the approval; \`replay-after-crash\` resumes the state saved at the pause a second time, as a worker does after a crash before its new state was saved (or, for ADK, a client that retries the confirmation). B4: cancel or timeout, with a tool body that observes the framework's signal or context (cooperative) or ignores it (uncooperative).\n\n| framework | primitive | B1/B2 detail | B3 detail | B4 detail | note |\n|---|---|---|---|---|---|\n`;
const b12 = (r) => ["B1", "B2"].map((b) => `${b}: ${r.cells.unmodified[b].verdict}${r.cells.unmodified[b].detail ? " (" + r.cells.unmodified[b].detail + ")" : ""}`).join("; ");
for (const r of table) md += `| ${r.framework} | ${r.primitive} | ${b12(r)} | ${r.cells.unmodified.B3.detail || "probe: " + r.cells.unmodified.B3.verdict} | ${r.cells.unmodified.B4.detail} | ${r.note || "-"} |\n`;
md += `\n## Every probe, every repetition\n\n| probe | variant | verdicts | stable | why (run 1) |\n|---|---|---|---|---|\n`;
for (const p of probeRows) md += `| ${p.id} | ${p.variant} | ${p.verdicts.join(" ")} | ${p.stable ? "yes" : "NO"} | ${p.reason.replace(/\|/g, "/").split("\n")[0]} |\n`;
if (install) {
  md += `\n## Install\n\n| step | seconds | size |\n|---|---|---|\n`;
  for (const s of install.steps) md += `| ${s.step} | ${s.seconds} | ${s.size} |\n`;
}
if (problems.length) md += `\n## Problems\n\n${problems.map((p) => `- ${p}`).join("\n")}\n`;

writeFileSync(join(outDir, "results.md"), md);
writeFileSync(join(outDir, "results.json"), JSON.stringify({ repetitions: reps, runs: results.length, install, table, probes: probeRows, problems }, null, 2) + "\n");

const count = (v, variant) => probeRows.filter((p) => p.variant === variant && p.case !== "control" && p.verdicts[0] === v).length;
for (const p of problems) console.error(`probes table: ${p}`);
console.log(md.split("\n## Every probe")[0]);
console.log(`probes: ${table.length} primitives, ${results.length} runs (${reps}x), unmodified ${count("VIOLATION", "unmodified")} VIOLATION / ${count("CLEAN", "unmodified")} CLEAN, mediated ${count("VIOLATION", "mediated")} VIOLATION / ${count("CLEAN", "mediated")} CLEAN, ${count("UNAVAILABLE", "unmodified") + count("UNAVAILABLE", "mediated")} n/a, ${problems.length} problem(s), ${problems.length ? "FAILED" : "ok"}`);
process.exit(problems.length ? 1 : 0);
