// runlease.test.mjs -- a reconciliation run's owner holds it by a lease
// (shared/count/runs.h, issue 49), not by a pid that the next process
// checks with kill(pid, 0): a pid names a process on one machine only,
// and a process that is alive but stalled holds nothing.
//
// tallyctl reconcile executes the run it starts, and is stopped at the
// fault point reconcile-fix (SIGSTOP: a host cut off, a process swapped
// out) with its pid alive.  The worker takes the run over once the lease
// lapsed (seconds later), resumes it from its checkpoint and finishes
// it, the report naming exactly the drift planted.  tallyctl, woken,
// finds the run taken at its next step: it writes nothing more to the
// run, says so, and reports the worker's run.  Runs on SQLite and, with
// TALLY_TEST_DB=postgres, on PostgreSQL.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { startStack, Client, sleep, waitFor, within, BIN, childrenOf, procState, whileJobsStopped } from '../lib/stack.mjs';
import { compareAll, faults, quietRuns } from '../lib/counts.mjs';

let stack;
before(async () => {
  stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400', TALLY_FAULT: 'reconcile-fix:stop:1' } });
  faults.disarm(stack, 'reconcile-fix', 1);
});
after(async () => { await stack?.stop(); });

const q = (sql) => stack.sqlite(sql);
const num = (sql) => Number(stack.sqlite(sql));
const row = (id) => {
  const [state, owner, name, until, checkpoint] = q(`SELECT state, owner, owner_name, lease_until, checkpoint FROM reconcile_runs WHERE id = ${id}`).split('|');
  return { state, owner: Number(owner), name, until: Number(until), checkpoint: Number(checkpoint) };
};
const report = (id) => Object.fromEntries(JSON.parse(q(`SELECT report FROM reconcile_runs WHERE id = ${id}`)).map((f) => [f.family, f]));

test('tallyctl stalled past its run\'s lease: the worker takes the run over within seconds and finishes it; tallyctl, woken, leaves it', async (t) => {
  const cs = [];
  for (let i = 0; i < 6; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`rl${i}`)).status, 303);
    await c.get('/feed');
    cs.push(c);
  }
  const r = await cs[0].post('/posts', { body: 'leased', publish: '1' });
  const post = Number(r.location.split('/').pop());
  for (let i = 1; i < 6; i++) {
    assert.equal((await cs[i].post('/follow/rl0')).status, 303);
    assert.equal((await cs[i].post(`/posts/${post}/like`)).status, 303);
  }
  await quietRuns(stack);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  // Drift in two families: the run stops in the first (user_followers),
  // the second (post_likes) comes after the checkpoint.
  const rl0 = num("SELECT id FROM users WHERE login = 'rl0'");
  q(`UPDATE counters SET value = value + 3 WHERE name = 'user_followers' AND key = '${rl0}'`);
  q(`UPDATE counters SET value = value - 2 WHERE name = 'post_likes' AND key = '${post}'`);

  const worker = stack.pidOf('tally-worker');
  const jobs = childrenOf(worker).find((c) => c.cmd.includes('jobs'))?.pid;
  assert.ok(worker && jobs, 'the worker and its jobs process');
  faults.arm(stack, 'reconcile-fix');
  const before = num('SELECT coalesce(max(id), 0) FROM reconcile_runs');
  let ctl;
  let out = '';
  let err = '';
  let spawnedAt;
  // the jobs process stopped meanwhile: tallyctl claims its run first
  await whileJobsStopped(stack, async () => {
    spawnedAt = Date.now();
    ctl = spawn(path.join(BIN, 'tallyctl'), ['reconcile'], { env: stack.env });
    ctl.stdout.on('data', (d) => { out += d; });
    ctl.stderr.on('data', (d) => { err += d; });
    await waitFor(() => num('SELECT coalesce(max(id), 0) FROM reconcile_runs') > before &&
      row(before + 1).owner === ctl.pid, 10000, 20);
  });
  const exited = new Promise((resolve) => ctl.on('close', (status) => resolve(status)));
  const id = before + 1;
  const claimed = row(id);
  assert.equal(claimed.state, 'running');
  // its owner by name (host, pid, start) and a lease of a few seconds
  const [host, pid] = claimed.name.split(':');
  assert.equal(Number(pid), ctl.pid, claimed.name);
  assert.ok(host.length > 0, claimed.name);
  // (claimed between spawnedAt and now, for 5 s)
  assert.ok(claimed.until >= spawnedAt + 5000 && claimed.until <= Date.now() + 5000,
    `lease ends ${claimed.until - spawnedAt} ms after tallyctl started`);

  // tallyctl stops at the fault point, alive
  await waitFor(() => procState(ctl.pid) === 'T', 20000, 20);
  const stalled = Date.now();
  const at = row(id);
  assert.equal(at.owner, ctl.pid);
  assert.equal(at.state, 'running');

  // the worker's jobs process takes it once the lease lapsed
  await waitFor(() => row(id).owner === worker, 15000, 50);
  const took = Date.now() - stalled;
  const taken = row(id);
  assert.ok(taken.name !== claimed.name && taken.name.split(':')[1] === String(worker), taken.name);
  await waitFor(() => row(id).state !== 'running', 30000, 100);
  const done = Date.now() - stalled;
  t.diagnostic(`tallyctl stalled at step ${at.checkpoint}; the worker took the run after ${took} ms, finished it after ${done} ms`);
  assert.ok(took < 10000, `taken over in ${took} ms`);
  const end = row(id);
  assert.equal(end.state, 'done');
  assert.equal(procState(ctl.pid), 'T', 'tallyctl is still stopped, its pid alive');
  assert.match(stack.log('worker'), new RegExp(`reconciliation ${id}: the lease of ${claimed.name} lapsed \\d+ ms ago; taken over`));
  assert.match(stack.log('worker'), new RegExp(`reconciliation ${id} resumes at step ${at.checkpoint}\\b`));
  // the report: exactly what was planted; the key tallyctl had fenced
  // may have waited for the worker's backlog settle (its fence lives
  // 10 s), queued, not fixed in the run
  const rep = report(id);
  for (const [f, v] of Object.entries(rep)) {
    const want = { user_followers: 1, post_likes: 1 }[f] ?? 0;
    assert.equal(v.wrong, want, `${f}: ${JSON.stringify(v)}`);
    assert.equal(v.fixed + v.queued, want, `${f}: ${JSON.stringify(v)}`);
  }
  assert.equal(rep.post_likes.fixed, 1);

  // tallyctl wakes: the run is not its own any more
  process.kill(ctl.pid, 'SIGCONT');
  const status = await within(exited, 30000, 'hung');
  assert.equal(status, 0, err);
  assert.match(err, new RegExp(`reconciliation ${id}: taken by another process while this one stalled past its lease; left to it`));
  assert.match(out, new RegExp(`^reconciliation ${id}: 2 counters wrong$`, 'm'));
  assert.deepEqual(row(id), end, 'tallyctl wrote nothing more to the run');
  assert.deepEqual(report(id), rep);

  // and every count is exact
  await waitFor(() => num('SELECT COUNT(*) FROM counter_backlog') === 0, 30000, 200);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A repair run meets Redis failing in a step (a master failing over, a
// Redis restarting empty: the moments the automatic runs follow).  It
// once ended "failed" there, and the counters it was started for stayed
// wrong until an operator started another run; the worker now executes
// it again every few seconds from the step that failed, and it ends done
// once Redis is back (handlers/worker.c, RUN_RETRY_S).
test('a run whose step meets Redis stopped is not failed: the worker resumes it at that step once Redis is back, and it ends done', async (t) => {
  const cs = [];
  for (let i = 0; i < 4; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`ra${i}`)).status, 303);
    await c.get('/feed');
    cs.push(c);
  }
  for (let i = 1; i < 4; i++) assert.equal((await cs[i].post('/follow/ra0')).status, 303);
  await quietRuns(stack);
  await waitFor(() => num('SELECT COUNT(*) FROM counter_backlog') === 0, 30000, 200);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  const ra0 = num("SELECT id FROM users WHERE login = 'ra0'");
  q(`UPDATE counters SET value = value + 5 WHERE name = 'user_followers' AND key = '${ra0}'`);

  const worker = stack.pidOf('tally-worker');
  const jobs = childrenOf(worker).find((c) => c.cmd.includes('jobs'))?.pid;
  assert.ok(worker && jobs, 'the worker and its jobs process');
  const redis = Number(/process_id:(\d+)/.exec(stack.redis('INFO', 'server'))[1]);
  assert.ok(stack.children().some((c) => c.pid === redis), 'the stack\'s redis-server');
  faults.arm(stack, 'reconcile-fix');
  const admin = new Client(stack.base);
  assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
  await admin.get('/admin/reconcile');
  const before = num('SELECT coalesce(max(id), 0) FROM reconcile_runs');
  assert.equal((await admin.post('/admin/reconcile', {})).status, 303);
  const id = before + 1;
  assert.equal(num('SELECT coalesce(max(id), 0) FROM reconcile_runs'), id);
  let redisStopped = false;
  try {
    // the jobs process stops itself with the key fenced, its correction
    // not yet written; Redis is stopped before it goes on
    await waitFor(() => faults.fired(stack, 'reconcile-fix') === 1 && procState(jobs) === 'T', 20000, 20);
    const step = row(id).checkpoint;
    process.kill(redis, 'SIGSTOP');
    redisStopped = true;
    process.kill(jobs, 'SIGCONT');
    // the step fails on Redis; the run stays active, and fails again
    // while Redis stays stopped, still not ended
    const stops = () => stack.log('worker').split(`reconciliation ${id} stopped on a failure`).length - 1;
    await waitFor(() => stops() >= 2, 20000, 100);
    assert.match(stack.log('worker'), /reconcile: user_followers failed \(Redis or SQLite\)/);
    assert.equal(row(id).state, 'running');
    assert.equal(row(id).checkpoint, step, 'still at the step that failed');
    // its page says so (the run's note, cleared once a step is done)
    const waiting = await admin.get(`/admin/reconcile/${id}`);
    assert.match(waiting.text, new RegExp(`data-run-id="${id}"[^>]*data-state="running"`));
    assert.match(waiting.text, /<p class="flash error">Redis or SQLite failed in step user_followers: it runs again from there in a few seconds<\/p>/);
    process.kill(redis, 'SIGCONT');
    redisStopped = false;
    const t0 = Date.now();
    await waitFor(() => row(id).state !== 'running', 30000, 100);
    t.diagnostic(`the run ended ${Date.now() - t0} ms after Redis went on, after ${stops()} stops`);
    assert.equal(row(id).state, 'done');
    assert.match(stack.log('worker'), new RegExp(`reconciliation ${id} resumes at step ${step}\\b`));
    assert.doesNotMatch((await admin.get(`/admin/reconcile/${id}`)).text, /flash error/);
  } finally {
    if (redisStopped) process.kill(redis, 'SIGCONT');
    try { process.kill(jobs, 'SIGCONT'); } catch { /* gone */ }
  }
  await waitFor(() => num('SELECT COUNT(*) FROM counter_backlog') === 0, 30000, 200);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  assert.equal(num(`SELECT value FROM counters WHERE name = 'user_followers' AND key = '${ra0}'`), 3);
});
