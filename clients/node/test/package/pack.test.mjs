// Tests of @soundgate/client as a JS developer gets it: `npm pack`, then `npm install`
// of the tarball into a fresh project (offline: the package has no dependencies), and
// everything below runs against that INSTALLED copy, imported by name:
//   - the tarball ships exactly the package's files (no tests, no dev folder);
//   - a smoke test against a real gate (smoke.mjs);
//   - every runtime export is declared in the .d.ts files, and every declared value exists;
//   - the import lines of the integration pages and of README.md work as written;
//   - tsc --noEmit --strict accepts test/types/usage.ts and every @ts-expect-error of
//     test/types/wrong.ts, and fails on a wrong call and on a loosened declaration.
// Needs the TypeScript compiler of dev/ (`cd dev && npm ci`; make test-node-client does it).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync, copyFileSync, lstatSync, realpathSync, rmSync, existsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startGate, TOKENS } from "../server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const pkgDir = resolve(here, "..", "..");
const repo = resolve(pkgDir, "..", "..");
const tsc = join(pkgDir, "dev", "node_modules", "typescript", "bin", "tsc");
const SHIPPED = ["README.md", "gatedrun.d.ts", "gatedrun.mjs", "index.d.ts", "index.mjs", "package.json"];
const PAGES = [
  ...["langgraph-js.md", "llamaindex-ts.md", "openai-agents-js.md"].map((p) => join(repo, "docs", "integrations", p)),
  join(pkgDir, "README.md"),
];

let tmp, tarball, packed, consumer, installed;

const npm = (args, cwd) => execFileSync("npm", [...args, "--no-audit", "--no-fund", "--loglevel=error"], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
/** node runs a script in the consumer project; resolves to {status, stdout, stderr}. */
const node = (args, env = {}) => spawnSync(process.execPath, args, { cwd: consumer, encoding: "utf8", env: { ...process.env, ...env } });

before(() => {
  tmp = mkdtempSync(join(tmpdir(), "soundgate-client-pack-"));
  [packed] = JSON.parse(npm(["pack", "--json", "--pack-destination", tmp], pkgDir));
  tarball = join(tmp, packed.filename);
  consumer = join(tmp, "consumer");
  mkdirSync(consumer);
  writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
  npm(["install", "--offline", "--ignore-scripts", tarball], consumer);
  installed = join(consumer, "node_modules", "@soundgate", "client");
});
after(() => { if (tmp) rmSync(tmp, { recursive: true, force: true }); });

test("the tarball ships the package's files and nothing else", (t) => {
  const files = packed.files.map((f) => f.path).sort();
  assert.deepEqual(files, SHIPPED);
  t.diagnostic(`${packed.filename}: ${statSync(tarball).size} bytes packed, ${packed.unpackedSize} unpacked, ${packed.entryCount} files`);
  const manifest = JSON.parse(readFileSync(join(installed, "package.json"), "utf8"));
  assert.equal(manifest.name, "@soundgate/client");
  assert.equal(manifest.sideEffects, false);
  assert.deepEqual(Object.keys(manifest.exports), [".", "./gatedrun"]);
  for (const [sub, cond] of Object.entries(manifest.exports)) {
    assert.deepEqual(Object.keys(cond), ["types", "default"], `${sub}: types must come first`);
    for (const f of Object.values(cond)) assert.ok(existsSync(join(installed, f)), `${sub} names ${f}, which is not installed`);
  }
});

test("the installed package is a copy in the project's node_modules, not a link to the repository", () => {
  assert.ok(!lstatSync(installed).isSymbolicLink());
  assert.ok(realpathSync(installed).startsWith(realpathSync(consumer)));
});

test("smoke: connect, admit, complete, duplicate and GatedRun through the installed package, on a real gate", async () => {
  copyFileSync(join(here, "smoke.mjs"), join(consumer, "smoke.mjs"));
  const gate = await startGate();
  try {
    const r = node(["smoke.mjs"], { SOUNDGATE_PORT: String(gate.port), SOUNDGATE_AGENT_TOKEN: TOKENS.agent, SOUNDGATE_OPERATOR_TOKEN: TOKENS.operator });
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^smoke ok/m);
  } finally {
    await gate.stop();
  }
});

test("the client's own test suites pass against the installed package", () => {
  // The suites of test/, with their imports of ../index.mjs and ../gatedrun.mjs turned
  // into the package's names; the gate helper stays the repository's.
  const dir = join(consumer, "suites");
  mkdirSync(dir, { recursive: true });
  const helper = pathToFileURL(join(pkgDir, "test", "server.mjs")).href;
  const suites = ["client.test.mjs", "gatedrun.test.mjs"];
  for (const f of suites) {
    const src = readFileSync(join(pkgDir, "test", f), "utf8");
    const out = src
      .replaceAll('from "../index.mjs"', 'from "@soundgate/client"')
      .replaceAll('from "../gatedrun.mjs"', 'from "@soundgate/client/gatedrun"')
      .replaceAll('from "./server.mjs"', `from ${JSON.stringify(helper)}`);
    assert.ok(!/from "\.\.?\//.test(out), `${f} still imports a relative path`);
    writeFileSync(join(dir, f), out);
  }
  // A node --test inside a test reports to its parent's runner unless told it is its own.
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(process.execPath, ["--test", "--test-reporter=tap", ...suites.map((f) => join("suites", f))], { cwd: consumer, encoding: "utf8", env });
  assert.equal(r.status, 0, r.stdout.slice(-3000) + r.stderr);
  const pass = Number(/^# pass (\d+)$/m.exec(r.stdout)?.[1]);
  const fail = Number(/^# fail (\d+)$/m.exec(r.stdout)?.[1]);
  assert.ok(pass > 40 && fail === 0, `pass ${pass}, fail ${fail}`);
});

/** runtimeExports lists each entry point's exports, as the installed package has them. */
function runtimeExports() {
  const r = node(["--input-type=module", "-e", `
    const out = {};
    for (const s of ["@soundgate/client", "@soundgate/client/gatedrun"]) out[s] = Object.keys(await import(s)).sort();
    console.log(JSON.stringify(out));`]);
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

/** declaredValues lists the values (not types) a declaration file exports. */
function declaredValues(file) {
  const text = readFileSync(join(installed, file), "utf8");
  return [...text.matchAll(/^export declare (?:const|class|function) (\w+)/gm)].map((m) => m[1]).sort();
}

test("every runtime export is declared, and every declared value exists", () => {
  const got = runtimeExports();
  assert.deepEqual(declaredValues("index.d.ts"), got["@soundgate/client"]);
  assert.deepEqual(declaredValues("gatedrun.d.ts"), got["@soundgate/client/gatedrun"]);
});

/** importsOf reads a page's import statements of @soundgate/client*: [{line, spec, names}]. */
function importsOf(page) {
  const text = readFileSync(page, "utf8");
  const found = [...text.matchAll(/^import\s*\{([^}]*)\}\s*from\s*"(@soundgate\/client[^"]*)";?$/gm)].map((m) => ({
    line: m[0],
    spec: m[2],
    names: m[1].split(",").map((n) => n.trim().split(/\s+as\s+/)[0]).filter(Boolean),
  }));
  // a line that names the package in another form would escape the check: refuse it
  const mentions = text.split("\n").filter((l) => /from\s*["']@soundgate\/client/.test(l)).length;
  assert.equal(found.length, mentions, `${page}: an import of @soundgate/client this test cannot read`);
  return found;
}

test("the import lines of the integration pages and the README name what the installed package exports", async (t) => {
  const got = runtimeExports();
  for (const page of PAGES) {
    await t.test(page.slice(repo.length + 1), () => {
      const imports = importsOf(page);
      assert.ok(imports.length > 0, "the page shows how to import the client");
      for (const { spec, names } of imports) {
        assert.ok(got[spec], `${spec} is not an entry point of the package`);
        for (const n of names) assert.ok(got[spec].includes(n), `${spec} exports no ${n}`);
      }
      // and the lines themselves, as written, load in the consumer's project
      const file = join(consumer, `page-${page.split("/").slice(-2).join("-")}.mjs`);
      writeFileSync(file, imports.map((i) => i.line).join("\n") + "\n");
      const r = node([file]);
      assert.equal(r.status, 0, r.stderr);
    });
  }
});

/**
 * typecheck compiles test/types files, and `extra` sources ({name: text}), in the
 * consumer project with tsc --strict; resolves to tsc's status and output.
 */
function typecheck(files, { resolution = "nodenext", extra = {} } = {}) {
  assert.ok(existsSync(tsc), `no TypeScript compiler at ${tsc}: run \`npm ci\` in clients/node/dev (make test-node-client does)`);
  const dir = mkdtempSync(join(consumer, "types-"));
  for (const f of files) copyFileSync(join(pkgDir, "test", "types", f), join(dir, f));
  for (const [f, text] of Object.entries(extra)) writeFileSync(join(dir, f), text);
  const module = resolution === "bundler" ? "esnext" : "nodenext";
  const compilerOptions = { strict: true, noEmit: true, target: "es2022", lib: ["es2022"], module, moduleResolution: resolution, types: [], skipLibCheck: false };
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions, files: [...files, ...Object.keys(extra)] }));
  const r = spawnSync(process.execPath, [tsc, "-p", dir, "--pretty", "false"], { cwd: consumer, encoding: "utf8" });
  return { status: r.status, out: r.stdout + r.stderr };
}

test("tsc --noEmit --strict accepts usage.ts and every @ts-expect-error of wrong.ts", async (t) => {
  for (const resolution of ["nodenext", "bundler"]) {
    await t.test(resolution, () => {
      const r = typecheck(["usage.ts", "wrong.ts"], { resolution });
      assert.equal(r.status, 0, r.out);
    });
  }
});

test("tsc fails on a wrong call without @ts-expect-error (the check is live)", () => {
  const bad = `import { connect } from "@soundgate/client";\nexport const c = connect({ port: 7433, token: 42 });\n`;
  const r = typecheck([], { extra: { "bad.ts": bad } });
  assert.notEqual(r.status, 0);
  assert.match(r.out, /bad\.ts\(2,\d+\): error TS2322/);
});

test("a declaration loosened until a wrong call compiles fails wrong.ts", () => {
  // as if index.d.ts had been written with an untyped epoch
  const dts = join(installed, "index.d.ts");
  const good = readFileSync(dts, "utf8");
  const loose = good.replace("admit(run: string, key: string, epoch: number,", "admit(run: string, key: string, epoch: any,");
  assert.notEqual(loose, good, "the declaration to loosen is in index.d.ts");
  writeFileSync(dts, loose);
  try {
    const r = typecheck(["usage.ts", "wrong.ts"]);
    assert.notEqual(r.status, 0);
    assert.match(r.out, /wrong\.ts\(\d+,\d+\): error TS2578: Unused '@ts-expect-error' directive/);
  } finally {
    writeFileSync(dts, good);
  }
});
