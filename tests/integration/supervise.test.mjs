// supervise.test.mjs -- what "make run" promises about processes: a
// handler, worker or Redis process that dies is replaced within 5 s and the
// site comes back; Ctrl-C stops everything it started and nothing else.
// Every process signalled here is one found by PID under our own stack.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import {
  startStack, Client, ROOT, childrenOf, freePort, onPostgres, processesMentioning, sleep, waitFor, within,
} from '../lib/stack.mjs';

const REPLACE_MS = 5000;

async function healthz(base) {
  try {
    const r = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2000) });
    return { status: r.status, text: (await r.text()).trim() };
  } catch (e) {
    return { status: 0, text: String(e) };
  }
}

// Running (a zombie waiting for a slow-reaping init counts as gone).
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch { return false; }
}

describe('supervision', () => {
  let stack;
  before(async () => { stack = await startStack(); });
  after(async () => { await stack?.stop(); });

  // Kills pid with SIGKILL at t0, then waits for find() to return a new
  // PID and for /healthz to be 200 again, each within 5 s of the kill.
  async function killAndWait(t, pid, find, what) {
    const t0 = Date.now();
    process.kill(pid, 'SIGKILL');
    const fresh = await waitFor(() => {
      const p = find();
      return p && p !== pid ? p : null;
    }, REPLACE_MS, 50).catch((e) => { throw new Error(`${what} not replaced: ${e.message}\n${stack.output()}`); });
    const replacedMs = Date.now() - t0;
    await waitFor(async () => (await healthz(stack.base)).status === 200,
      Math.max(REPLACE_MS - (Date.now() - t0), 100), 50)
      .catch(async (e) => { throw new Error(`${what}: /healthz not back: ${JSON.stringify(await healthz(stack.base))} ${e.message}`); });
    const healthyMs = Date.now() - t0;
    assert.ok(healthyMs <= REPLACE_MS + 200, `${what}: healthy after ${healthyMs} ms`);
    t.diagnostic(`${what}: replaced after ${replacedMs} ms, healthy after ${healthyMs} ms`);
    return { fresh, replacedMs, healthyMs };
  }

  test('the stack is up with the expected services', () => {
    const cmds = stack.children().map((c) => c.cmd);
    for (const name of ['redis-server', 'tally-web', 'tally-worker', 'nginx']) {
      assert.ok(cmds.some((c) => c.includes(name)), `${name} in ${cmds.join(' | ')}`);
    }
    assert.ok(childrenOf(stack.pidOf('tally-web')).length >= 1);
    // handlers/run.c: TALLY_PROCS a pool, and one more for the social
    // readers, whose pages wait on Redis in several round trips
    const procs = Number(process.env.TALLY_PROCS || 2);
    const pool = (sock) => childrenOf(stack.pidOf(`/${sock} `)).length;
    assert.equal(pool('web.sock'), procs);
    assert.equal(pool('social.sock'), procs + 1);
    if (!onPostgres()) assert.equal(pool('social-writer.sock'), 1);
    // the handlers allocate with jemalloc (Makefile: a request's small
    // allocations from its thread cache, not glibc's bins)
    for (const sock of ['web.sock', 'social.sock']) {
      for (const c of childrenOf(stack.pidOf(`/${sock} `))) {
        const maps = fs.readFileSync(`/proc/${c.pid}/maps`, 'utf8');
        assert.match(maps, /libjemalloc\.so/, `${sock} process ${c.pid} maps jemalloc`);
      }
    }
  });

  test('kill -9 of a handler child: the master forks a new one', async (t) => {
    const master = stack.pidOf('tally-web');
    const before = childrenOf(master).map((c) => c.pid);
    assert.ok(before.length >= 1);
    const victim = before[0];
    const { fresh } = await killAndWait(t, victim, () => {
      const now = childrenOf(master).map((c) => c.pid);
      return now.length === before.length ? now.find((p) => !before.includes(p)) : null;
    }, 'handler child');
    assert.ok(!alive(victim));
    assert.equal(stack.pidOf('tally-web'), master, 'the master stayed');
    assert.ok(fresh > 0);
    // every child answers: more requests than children
    for (let i = 0; i < 6; i++) assert.equal((await fetch(`${stack.base}/login`)).status, 200);
  });

  test('kill -9 of the tally-web master: replaced with its children', async (t) => {
    const master = stack.pidOf('tally-web');
    const oldKids = childrenOf(master).map((c) => c.pid);
    const { fresh } = await killAndWait(t, master, () => stack.pidOf('tally-web'), 'tally-web master');
    await waitFor(() => childrenOf(fresh).length >= 1, 2000, 50);
    // the old children went with their master
    await waitFor(() => oldKids.every((p) => !alive(p)), 2000, 50);
    const c = new Client(stack.base);
    const r = await c.signup('after_master_kill');
    assert.equal(r.status, 303);
  });

  test('kill -9 of tally-worker: replaced', async (t) => {
    const worker = stack.pidOf('tally-worker');
    assert.ok(worker);
    const { fresh } = await killAndWait(t, worker, () => stack.pidOf('tally-worker'), 'tally-worker');
    await sleep(300);
    assert.ok(alive(fresh), 'the new worker keeps running');
  });

  test('kill -9 of redis-server: replaced; /healthz names redis while it is down', async (t) => {
    const redis = stack.pidOf('redis-server');
    assert.ok(redis);
    const t0 = Date.now();
    process.kill(redis, 'SIGKILL');
    // pages that need no Redis keep answering meanwhile
    assert.equal((await fetch(`${stack.base}/login`)).status, 200);
    // Redis may be back before we look: a 503 is checked if seen.
    const seen = [];
    let fresh;
    while (Date.now() - t0 < REPLACE_MS) {
      const h = await healthz(stack.base);
      seen.push(h);
      const p = stack.pidOf('redis-server');
      if (p && p !== redis) fresh = p;
      if (fresh && h.status === 200) break;
      await sleep(30);
    }
    const ms = Date.now() - t0;
    const down = seen.filter((x) => x.status === 503).length;
    t.diagnostic(`redis: healthy after ${ms} ms; ${down} of ${seen.length} /healthz answers were 503`);
    assert.ok(fresh, `redis replaced (saw ${JSON.stringify(seen.slice(-3))})`);
    assert.equal(seen.at(-1).status, 200, `healthy again within 5 s: ${JSON.stringify(seen.slice(-3))}`);
    assert.ok(ms <= REPLACE_MS + 200);
    for (const h of seen.filter((x) => x.status === 503)) assert.match(h.text, /redis/);
    assert.ok(seen.every((h) => [200, 503].includes(h.status)),
      `only 200 or 503 from /healthz: ${JSON.stringify(seen.filter((h) => ![200, 503].includes(h.status)))}`);
    assert.equal(stack.redis('PING'), 'PONG');
  });
});

// "make run" exactly as an operator types it, in its own process group
// (as a terminal's foreground job), on a free port and a fresh RUN_DIR.
async function makeRun(extraEnv = {}) {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-make-'));
  const port = await freePort();
  const env = { ...process.env, PORT: String(port), RUN_DIR: runDir, DEMO: '0', TALLY_PWHASH: 'min', ...extraEnv };
  delete env.TALLY_ADMIN_PASSWORD;
  for (const k of ['MAKEFLAGS', 'MFLAGS', 'MAKELEVEL']) delete env[k];
  // (setpriv --pdeathsig, which execs make: if this test process dies
  // half-way, make gets SIGTERM and stops the stack instead of leaking it)
  const argv = fs.existsSync('/usr/bin/setpriv')
    ? ['/usr/bin/setpriv', '--pdeathsig', 'TERM', 'make', '-s', 'run'] : ['make', '-s', 'run'];
  const proc = spawn(argv[0], argv.slice(1), { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const run = { proc, runDir, port, base: `http://127.0.0.1:${port}`, out: '' };
  proc.stdout.on('data', (d) => { run.out += d; });
  proc.stderr.on('data', (d) => { run.out += d; });
  run.exited = new Promise((resolve) => proc.on('exit', (code, sig) => resolve({ code, sig })));
  // make may first have to build: allow for it, but fail at once if make
  // gives up.
  await Promise.race([
    waitFor(async () => {
      if (!/password "|admin account exists/.test(run.out) || !/running on http/.test(run.out)) return false;
      return (await fetch(`${run.base}/login`)).status === 200;
    }, 45000, 100).catch((e) => { throw new Error(`make run did not come up: ${e.message}\n${run.out}`); }),
    run.exited.then((r) => { throw new Error(`make run exited early (${JSON.stringify(r)}):\n${run.out}`); }),
  ]);
  return run;
}

// Only when a test failed half-way: stop what is left, by PID.
async function cleanUp(run) {
  if (!run) return;
  if (run.proc.exitCode === null && run.proc.signalCode === null) {
    try { process.kill(-run.proc.pid, 'SIGTERM'); } catch { /* gone */ }
    await within(run.exited, 10000);
  }
  for (const p of processesMentioning(run.runDir)) {
    try { process.kill(p.pid, 'SIGKILL'); } catch { /* gone */ }
  }
  fs.rmSync(run.runDir, { recursive: true, force: true });
}

// Stops run with kill, then checks that every process of it is gone
// within 10 s while the sibling stack is untouched.
async function stopAndCheck(run, kill, sibling) {
  const mine = processesMentioning(run.runDir).map((p) => p.pid);
  assert.ok(mine.length >= 6, `the stack's processes: ${mine.length}`);
  const siblings = processesMentioning(sibling.runDir).map((p) => p.pid).sort();
  kill();
  const res = await within(run.exited, 20000);
  assert.ok(res, `make run exits\n${run.out}`);
  await waitFor(() => processesMentioning(run.runDir).length === 0, 10000, 100)
    .catch(() => { throw new Error(`left running: ${JSON.stringify(processesMentioning(run.runDir))}`); });
  assert.ok(mine.every((p) => !alive(p)), 'every process it started is gone');
  await assert.rejects(fetch(`${run.base}/login`), 'the port is closed');
  assert.match(run.out, /stopped/);
  // and nothing else: another stack keeps running, same processes
  assert.deepEqual(processesMentioning(sibling.runDir).map((p) => p.pid).sort(), siblings);
  assert.equal((await healthz(sibling.base)).status, 200);
}

describe('make run', () => {
  let sibling;
  const runs = [];
  before(async () => { sibling = await startStack(); });
  after(async () => {
    for (const r of runs) await cleanUp(r);
    await sibling?.stop();
  });

  test('prints the admin password, serves, and Ctrl-C stops everything it started', async () => {
    const run = await makeRun();
    runs.push(run);
    const m = run.out.match(/password "([^"]+)"/);
    assert.ok(m, run.out);
    const printed = m[1];
    assert.ok(printed.length >= 12, 'a long random password');
    assert.equal(fs.readFileSync(path.join(run.runDir, 'admin-password'), 'utf8').trim(), printed);
    assert.equal((fs.statSync(path.join(run.runDir, 'admin-password')).mode & 0o077), 0, 'admin-password is private');
    assert.equal(run.out.match(/password "/g).length, 1, 'printed once');
    assert.match(run.out, new RegExp(`http://127\\.0\\.0\\.1:${run.port}/`));

    const c = new Client(run.base);
    const r = await c.login('admin', printed);
    assert.equal(r.status, 303);
    assert.equal(r.location, '/feed');
    assert.equal((await new Client(run.base).login('admin', 'not-the-password')).status, 401);

    // Ctrl-C in a terminal: SIGINT to the whole foreground process group.
    await stopAndCheck(run, () => process.kill(-run.proc.pid, 'SIGINT'), sibling);
  });

  test('SIGTERM to make alone also stops everything it started', async () => {
    const run = await makeRun();
    runs.push(run);
    await stopAndCheck(run, () => process.kill(run.proc.pid, 'SIGTERM'), sibling);
  });
});
