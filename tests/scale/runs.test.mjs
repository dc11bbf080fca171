// runs.test.mjs -- reconciliation beyond one machine (make run
// DB=postgres HOSTS=2: two handler hosts, each with a worker, over one
// PostgreSQL), issue 49.
//
// Recounts stream: every scan of a whole table that reconciliation and
// a full recount read comes through a cursor, TALLY_PG_FETCH rows a
// round trip (64 here), never as one result of the table's size; the
// run says how many rows a result held at most, and it finds exactly
// the drift planted, as it does when whole results come at once.
//
// A run's owner holds it by a lease: every process of the host whose
// worker executes a run is killed with SIGKILL in the middle of it (at
// the fault point reconcile-fix), and the worker that then runs the jobs
// resumes it from its checkpoint within seconds and finishes it, the
// report exact.  Nothing asks whether the dead owner's pid is alive: on
// another machine that pid is a number that may well name a live
// process of the machine that looks.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startStack, Client, sleep, waitFor, BIN, childrenOf, procState } from '../lib/stack.mjs';
import { faults, RECOUNT } from '../lib/counts.mjs';

const FETCH = 64;
let stack;
before(async () => {
  stack = await startStack({
    db: 'postgres',
    env: {
      HOSTS: '2', TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400',
      TALLY_FAULT: 'reconcile-fix:stop:1', TALLY_PG_FETCH: String(FETCH),
    },
  });
  faults.disarm(stack, 'reconcile-fix', 1);
});
after(async () => { await stack?.stop(); });

const q = (sql) => stack.sqlite(sql);
const num = (sql) => Number(stack.sqlite(sql));
const ACTIVE = "SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued', 'running')";
const hostPid = (k) => Number(fs.readFileSync(path.join(stack.runDir, `host${k}`, 'pid'), 'utf8'));
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
const tree = (pid) => [pid, ...childrenOf(pid).flatMap((c) => tree(c.pid))];
const hostOf = (pid) => [1, 2].find((k) => tree(hostPid(k)).includes(pid));
const workerLogs = () => [1, 2].map((k) => { try { return fs.readFileSync(path.join(stack.runDir, `host${k}`, 'logs', 'worker.log'), 'utf8'); } catch { return ''; } }).join('');
const row = (id) => {
  const [state, owner, name, until, checkpoint] = q(`SELECT state, owner, owner_name, lease_until, checkpoint FROM reconcile_runs WHERE id = ${id}`).split('|');
  return { state, owner: Number(owner), name, until: Number(until), checkpoint: Number(checkpoint) };
};
const report = (id) => Object.fromEntries(JSON.parse(q(`SELECT report FROM reconcile_runs WHERE id = ${id}`)).map((f) => [f.family, f]));
const quiet = () => waitFor(() => stack.redis('GET', '{tally}:gen') === '1' && num(ACTIVE) === 0, 60000, 100);

// Adds d to the counters of family f whose key's first number passes
// `where` (SQL on K); how many changed.
const K = "CAST(split_part(key, ':', 1) AS BIGINT)";
const plant = (f, where, d) => q(`UPDATE counters SET value = value + ${d} WHERE name = '${f}' AND ${where} RETURNING 1`)
  .split('\n').filter(Boolean).length;

// Every family's counters table against its recount (SQL only: the
// data is too big for compareAll's Redis reads a counter at a time; the
// dry runs below read Redis).
function sqlExact() {
  const bad = [];
  for (const [f, sql] of Object.entries(RECOUNT)) {
    const diff = q(`SELECT coalesce(t.k, c.key), coalesce(t.v, 0), coalesce(c.value, 0) FROM (${sql.replace(/^SELECT (.*?), COUNT\(\*\)/, 'SELECT ($1)::text AS k, COUNT(*) AS v')}) t
      FULL JOIN (SELECT key, value FROM counters WHERE name = '${f}') c ON c.key = t.k
      WHERE coalesce(t.v, 0) <> coalesce(c.value, 0) LIMIT 5`);
    if (diff) bad.push(`${f}: ${diff.replace(/\n/g, '; ')}`);
  }
  return bad;
}

// A dry run that finds nothing wrong: SQL and Redis agree with the truth.
function cleanDryRun() {
  const r = tallyctl('reconcile', '--dry-run');
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /^reconciliation \d+ \(dry run\): 0 counters wrong$/m, r.stdout);
}

function tallyctl(...args) {
  return spawnSync(path.join(BIN, 'tallyctl'), args, { env: stack.env, encoding: 'utf8', timeout: 300000 });
}

// The most rows a result of run id held, as its executor logged it.
function heldOf(id, stderr) {
  const re = new RegExp(`reconciliation ${id} done: \\d+ counters were wrong \\(a result held (\\d+) rows at most\\)`);
  const m = stderr.match(re) ?? workerLogs().match(re);
  assert.ok(m, `run ${id}: no "a result held" line`);
  return Number(m[1]);
}

test('recounts stream: a result never holds more than a fetch, and the drift found is exactly the drift planted', async (t) => {
  await quiet();
  const seed = tallyctl('seed', '--users', '500', '--posts', '2000', '--follows', '6000', '--likes', '6000');
  assert.equal(seed.status, 0, seed.stderr);
  await quiet();
  stack.tallyctl('flush');
  assert.deepEqual(sqlExact(), []);
  // each family's recount is many fetches: a whole result would hold
  // several times a fetch
  const groups = num('SELECT COUNT(DISTINCT followee_id) FROM follows');
  assert.ok(groups > 4 * FETCH, `${groups} users followed`);
  const planted = {
    user_followers: plant('user_followers', `${K} % 23 = 0`, 1),
    post_likes: plant('post_likes', `${K} % 41 = 0`, -1),
    user_topic_rating: plant('user_topic_rating', `${K} % 37 = 0`, 2),
  };
  for (const [f, n] of Object.entries(planted)) assert.ok(n > 3, `${f}: ${n} planted`);
  const total = Object.values(planted).reduce((a, b) => a + b, 0);

  const dry = tallyctl('reconcile', '--dry-run');
  assert.equal(dry.status, 0, dry.stderr);
  const d = dry.stdout.match(/^reconciliation (\d+) \(dry run\): (\d+) counters wrong$/m);
  assert.ok(d, dry.stdout);
  assert.equal(Number(d[2]), total, dry.stdout);
  const dryHeld = heldOf(Number(d[1]), dry.stderr);
  for (const [f, v] of Object.entries(report(Number(d[1])))) {
    assert.equal(v.wrong, planted[f] ?? 0, `${f}: ${JSON.stringify(v)}`);
    assert.equal(v.fixed, 0);
  }

  const run = tallyctl('reconcile');
  assert.equal(run.status, 0, run.stderr);
  const m = run.stdout.match(/^reconciliation (\d+): (\d+) counters wrong$/m);
  assert.ok(m, run.stdout);
  assert.equal(Number(m[2]), total, run.stdout);
  const held = heldOf(Number(m[1]), run.stderr);
  for (const [f, v] of Object.entries(report(Number(m[1])))) {
    assert.equal(v.wrong, planted[f] ?? 0, `${f}: ${JSON.stringify(v)}`);
    assert.equal(v.fixed, v.wrong, `${f}: ${JSON.stringify(v)}`);
  }
  t.diagnostic(`${groups} followed users, ${total} counters planted; a result held at most ${dryHeld} rows (dry run), ${held} (run); fetch ${FETCH}`);
  assert.ok(dryHeld <= FETCH && held <= FETCH, `held ${dryHeld}, ${held} rows`);
  stack.tallyctl('flush');
  assert.deepEqual(sqlExact(), []);
  cleanDryRun();
});

test('HOSTS=2: the host executing a run killed with SIGKILL mid-run; a worker resumes it within seconds and finishes it, its report exact', async (t) => {
  await quiet();
  stack.tallyctl('flush');
  const planted = {
    user_following: plant('user_following', `${K} % 19 = 0`, 1),
    post_likes: plant('post_likes', `${K} % 43 = 0`, 3),
  };
  const admin = new Client(stack.base);
  assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
  await admin.get('/admin/reconcile');
  const before = num('SELECT coalesce(max(id), 0) FROM reconcile_runs');
  faults.arm(stack, 'reconcile-fix');
  assert.equal((await admin.post('/admin/reconcile', {})).status, 303);
  const id = before + 1;
  // the worker that runs the jobs executes it, and stops at the fault
  // point (in user_following, step 3)
  const jobs = await waitFor(() => {
    const w = row(id).owner;
    return w > 0 && childrenOf(w).map((c) => c.pid).find((p) => procState(p) === 'T');
  }, 30000, 20);
  const mid = row(id);
  const worker = mid.owner;
  assert.equal(mid.state, 'running');
  // its owner by name: this machine's host name, the worker's pid, its
  // start; and a lease of a few seconds
  const [host, pid] = mid.name.split(':');
  assert.equal(host, os.hostname());
  assert.equal(Number(pid), worker);
  assert.ok(mid.until > Date.now() - 6000 && mid.until <= Date.now() + 5500, `lease until ${mid.until - Date.now()} ms from now`);
  assert.ok(mid.checkpoint >= 1 && mid.checkpoint < 5, `checkpoint ${mid.checkpoint}`);
  const victim = hostOf(worker);
  assert.ok(victim, `the worker ${worker} belongs to a host`);
  assert.ok(tree(worker).includes(jobs));

  // A machine that died does not come back within seconds: the site's
  // supervisor, which would start the host again on this one, is held
  // until the run was taken over.
  const doomed = tree(hostPid(victim));
  process.kill(stack.proc.pid, 'SIGSTOP');
  let killedAt;
  let took;
  try {
    killedAt = Date.now();
    for (const p of doomed) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
    // On another machine the dead owner's pid is a number that may name
    // a live process of the machine that looks; here it is made one
    // (this test's own process).  Its liveness must decide nothing.
    q(`UPDATE reconcile_runs SET owner = ${process.pid} WHERE id = ${id}`);
    await waitFor(() => row(id).name !== mid.name, 30000, 100);
    took = Date.now() - killedAt;
  } finally {
    process.kill(stack.proc.pid, 'SIGCONT');
  }
  await waitFor(() => row(id).state !== 'running', 60000, 100);
  const done = Date.now() - killedAt;
  const end = row(id);
  t.diagnostic(`host ${victim} (${doomed.length} processes) killed at step ${mid.checkpoint}; run taken over after ${took} ms by ${end.name} (host ${hostOf(end.owner) ?? '?'}), done after ${done} ms`);
  assert.equal(end.state, 'done');
  assert.ok(alive(end.owner) && !doomed.includes(end.owner), `resumed by a live worker (${end.name})`);
  assert.equal(hostOf(end.owner), 3 - victim, 'the other host\'s worker resumed it');
  assert.equal(end.name.split(':')[1], String(end.owner));
  assert.ok(took < 15000, `taken over ${took} ms after the kill`);
  assert.match(workerLogs(), new RegExp(`reconciliation ${id}: the lease of ${mid.name} lapsed \\d+ ms ago; taken over`));
  assert.match(workerLogs(), new RegExp(`reconciliation ${id} resumes at step ${mid.checkpoint}\\b`));
  // exactly the drift planted; the keys the dead settler had fenced may
  // have waited for the backlog's settle (a dead fence lives 10 s)
  for (const [f, v] of Object.entries(report(id))) {
    assert.equal(v.wrong, planted[f] ?? 0, `${f}: ${JSON.stringify(v)}`);
    assert.equal(v.fixed + v.queued, v.wrong, `${f}: ${JSON.stringify(v)}`);
  }
  assert.equal(report(id).post_likes.fixed, planted.post_likes);
  await waitFor(() => num('SELECT COUNT(*) FROM counter_backlog') === 0, 30000, 200);
  await sleep(1500);
  stack.tallyctl('flush');
  assert.deepEqual(sqlExact(), []);
  cleanDryRun();
  // the killed host came back under the site's supervisor
  await waitFor(() => alive(hostPid(victim)) && !doomed.includes(hostPid(victim)), 30000, 200);
});
