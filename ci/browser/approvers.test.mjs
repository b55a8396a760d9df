// The approvers' page in a real browser (docs/approvers.md): Debian's headless
// chromium, driven by playwright-core (ci/browser/install.sh installs both), on the
// page of a real gate (the soundgate binary, serve --http), with a real agent (the
// Node.js client of clients/node). An approver signs in, sees a held effect appear,
// approves it, and the agent's sibling admit that waited at the gate is admitted; a
// rejection denies the next one's; an agent's token cannot sign in; keys and
// descriptions holding markup and escape sequences show as inert, escaped text.
// Screenshots go to build/browser/. Run by `make test-browser` (ci/mk/browser.mk);
// every missing piece is a failure, never a skip.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = process.env.SOUNDGATE_BIN || path.join(root, 'build/bin/soundgate');
const CHROMIUM = process.env.SOUNDGATE_CHROMIUM || '/usr/bin/chromium';
const NPM = path.join(root, 'build/browser/npm');
const SHOTS = path.join(root, 'build/browser');
const STEP_MS = 10_000; // the longest wait for anything the page should show

for (const [what, p, fix] of [['the soundgate binary', BIN, 'go build -o build/bin/soundgate ./cmd/soundgate'],
  ['chromium', CHROMIUM, 'ci/browser/install.sh'], ['playwright-core', path.join(NPM, 'node_modules/playwright-core'), 'ci/browser/install.sh']]) {
  if (!fs.existsSync(p)) throw new Error(`ci/browser: no ${what} at ${p} (${fix})`);
}
const { chromium } = createRequire(path.join(NPM, 'package.json'))('playwright-core');
const { connect, argsDigest } = await import(path.join(root, 'clients/node/index.mjs'));

const tokens = { agent: secret(), approver: secret(), operator: secret() };
let gate; // {proc, http, sock, dir, log}
let browser;
let page;
let agent;
let op;
const dialogs = [];
const consoleErrors = [];
const pageErrors = [];

function secret() { return randomBytes(32).toString('hex'); }
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// startGate runs `soundgate serve` on a Unix socket for the clients and an HTTP port
// the gate picks, and returns once it says where that port is.
async function startGate() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sg-browser-'));
  const roles = path.join(dir, 'roles.json');
  fs.writeFileSync(roles, JSON.stringify({ tokens: [
    { name: 'agent', token: tokens.agent, role: 'agent', runs: ['*'] },
    { name: 'alice', token: tokens.approver, role: 'approver', runs: ['demo-*'] },
    { name: 'ops', token: tokens.operator, role: 'operator', runs: ['*'] },
  ] }), { mode: 0o600 });
  const sock = path.join(dir, 'gate.sock');
  const proc = spawn(BIN, ['serve', '--roles', roles, '--data', path.join(dir, 'data'), '--listen', '', '--unix', sock, '--http', '127.0.0.1:0'],
    { stdio: ['ignore', 'ignore', 'pipe'] });
  const g = { proc, sock, dir, log: '' };
  g.http = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the gate did not listen within 10 s:\n${g.log}`)), STEP_MS);
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (s) => {
      g.log += s;
      const m = g.log.match(/http=(http:\/\/127\.0\.0\.1:\d+)/);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`the gate exited (${code}):\n${g.log}`)); });
  });
  return g;
}

async function shot(name) {
  await page.screenshot({ path: path.join(SHOTS, name), fullPage: true });
}

// row is the page's row of the pending approval (run, key).
function row(run, key) {
  return page.locator('li.approval').filter({ has: page.locator(`.run .value`, { hasText: run }) })
    .filter({ has: page.locator('.key .value').getByText(key, { exact: true }) });
}

async function signIn(token) {
  await page.locator('#token').fill(token);
  await page.locator('#signin-form button[type=submit]').click();
}

// held admits a gated effect and checks the gate holds it; waiting is the run's
// sibling admit, parked at the gate until the approval is decided.
async function heldWithSibling(run, key, sibling, options) {
  await op.open(run);
  const a = await agent.admit(run, key, 1, { gated: true, ...options });
  assert.equal(a.answer, 'held');
  let settled = false;
  const waiting = agent.admit(run, sibling, 1, { waitMs: 60_000 });
  waiting.then(() => { settled = true; }, () => { settled = true; });
  return { waiting, settled: () => settled };
}

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  gate = await startGate();
  agent = await connect({ path: gate.sock, token: tokens.agent });
  op = await connect({ path: gate.sock, token: tokens.operator });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  const context = await browser.newContext({ viewport: { width: 1000, height: 760 } });
  page = await context.newPage();
  page.setDefaultTimeout(STEP_MS);
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  const resp = await page.goto(`${gate.http}/`);
  assert.equal(resp.status(), 200);
});

after(async () => {
  await browser?.close();
  agent?.close();
  op?.close();
  if (gate) {
    const exited = new Promise((r) => gate.proc.on('exit', (code, signal) => r({ code, signal })));
    gate.proc.kill('SIGTERM');
    const { code } = await exited;
    fs.rmSync(gate.dir, { recursive: true, force: true });
    assert.equal(code, 0, `the gate's exit on SIGTERM:\n${gate.log}`);
  }
});

test("an agent's token cannot sign in", async () => {
  await page.locator('#signin').waitFor();
  await signIn(tokens.agent);
  await assert.doesNotReject(page.locator('#signin-error', { hasText: 'agent' }).waitFor());
  assert.match(await page.locator('#signin-error').textContent(), /^Refused: an agent's token cannot sign in/);
  assert.equal(await page.locator('#inbox').isVisible(), false);
  await shot('01-agent-refused.png');
});

test('approving a held effect admits the sibling that waited', async () => {
  const digest = argsDigest('{"amount":120,"to":"ACME"}');
  const sib = await heldWithSibling('demo-1', 'pay', 'send-receipt', { description: 'Wire 120 EUR to ACME', argsDigest: digest });
  await signIn(tokens.approver);
  await page.locator('#who-name', { hasText: 'alice (approver)' }).waitFor();
  const r = row('demo-1', 'pay');
  await r.waitFor();
  assert.equal(await r.locator('.description').textContent(), 'Wire 120 EUR to ACME');
  assert.equal(await r.locator('.digest .value').textContent(), digest);
  assert.match(await r.locator('.age').textContent(), /^pending \d+s$/);
  await sleep(300);
  assert.equal(sib.settled(), false, 'the sibling waits while the approval is pending');
  await shot('02-pending.png');

  await r.locator('input.reason').fill('invoice checked');
  await r.locator('button.approve').click();
  const answer = await sib.waiting;
  assert.equal(answer.answer, 'admit', `the sibling's answer: ${answer}`);
  await r.waitFor({ state: 'detached' });
  await page.locator('#recent li[data-kind=approved]', { hasText: 'invoice checked' }).waitFor();
  const st = await op.status('demo-1', 'pay');
  assert.equal(st.effect.reason, 'invoice checked');
  assert.equal((await agent.admit('demo-1', 'pay', 1, { gated: true })).answer, 'admit', 'the approved effect itself');
  await shot('03-approved.png');
});

test('rejecting a held effect denies the sibling that waited', async () => {
  const sib = await heldWithSibling('demo-2', 'delete-repo', 'push', { description: 'Delete the repository' });
  const r = row('demo-2', 'delete-repo');
  await r.waitFor(); // live: the page was signed in before this approval opened
  assert.equal(sib.settled(), false);
  await r.locator('input.reason').fill('not today');
  await r.locator('button.reject').click();
  const answer = await sib.waiting;
  assert.equal(answer.answer, 'denied', `the sibling's answer: ${answer}`);
  assert.equal(answer.reason, 'rejected');
  await r.waitFor({ state: 'detached' });
  await page.locator('#recent li[data-kind=rejected]', { hasText: 'not today' }).waitFor();
  await shot('04-rejected.png');
});

test('markup and escape sequences from the agent are shown as inert text', async () => {
  const markup = '<img src=x onerror=alert(1)>';
  const escape = '\x1b[31mred\x1b[0m\x07';
  const description = '<script>alert(2)</script><b>bold</b> \u202egnp.exe';
  await op.open('demo-3');
  assert.equal((await agent.admit('demo-3', markup, 1, { gated: true, description })).answer, 'held');
  await op.open('demo-4');
  assert.equal((await agent.admit('demo-4', escape, 1, { gated: true })).answer, 'held');

  // As the commands show them: Go-quoted, each such character escaped.
  const m = row('demo-3', `"${markup}"`);
  await m.waitFor();
  assert.equal(await m.locator('.description').textContent(), '"<script>alert(2)</script><b>bold</b> \\u202egnp.exe"');
  const e = row('demo-4', '"\\x1b[31mred\\x1b[0m\\a"');
  await e.waitFor();
  assert.doesNotMatch(await page.locator('#approvals').textContent(), /[\x00-\x1f\u202e]/, 'no raw control or bidi character in the page');
  await sleep(500); // an onerror or a script would have run by now
  assert.equal(await page.locator('img').count(), 0, 'no img element');
  assert.equal(await page.locator('b').count(), 0, 'no b element');
  assert.equal(await page.locator('script').count(), 1, 'the page\'s own script only');
  assert.deepEqual(dialogs, [], 'no dialog opened');
  await shot('05-inert.png');

  // The page kept its session across a reload (its CSRF token in sessionStorage), and
  // decides such a key by its raw value.
  await page.reload();
  await m.waitFor();
  await m.locator('button.reject').click();
  await m.waitFor({ state: 'detached' });
  assert.equal((await op.status('demo-3', markup)).effect.status, 'rejected');
});

test('signing out ends the session', async () => {
  await page.locator('#signout').click();
  await page.locator('#signin').waitFor();
  assert.equal(await page.evaluate(() => sessionStorage.length), 0);
  await page.reload();
  await page.locator('#signin').waitFor();
  assert.equal(await page.locator('#inbox').isVisible(), false);
  // Nothing the page did broke its content security policy or threw.
  assert.deepEqual(consoleErrors.filter((s) => !/^Failed to load resource: the server responded with a status of (401|403|404)/.test(s)), []);
  assert.deepEqual(pageErrors, []);
});
