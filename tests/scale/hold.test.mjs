// hold.test.mjs -- two handler hosts (make run DB=postgres HOSTS=2): a
// reconciliation held 10 s at a fault point (reconcile-fix, SIGSTOP of
// the worker's jobs process, which executes runs) under a like load.
// The worker that holds the lease goes on renewing it and flushing: the
// lease's owner never changes (no second worker takes over) and every
// like reaches the database within 2 s (one may take 4 s: below).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startStack, Client, sleep, waitFor, childrenOf, procState } from '../lib/stack.mjs';
import { compareAll, faults } from '../lib/counts.mjs';
import { likeChurn, stormSetup } from '../lib/storm.mjs';

let stack;
before(async () => {
  stack = await startStack({
    db: 'postgres',
    env: { HOSTS: '2', TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400', TALLY_FAULT: 'reconcile-fix:stop:1' },
  });
  faults.disarm(stack, 'reconcile-fix', 1);
});
after(async () => { await stack?.stop(); });

const q = (sql) => stack.sqlite(sql);
const num = (sql) => Number(stack.sqlite(sql));
const leaseOwnerPid = () => Number(q('SELECT owner FROM worker_lease').split(':')[1] ?? 0);

test('HOSTS=2: a run held 10 s under a like load; the lease is renewed by its worker, nobody takes over, likes flushed within 2 s (one within 4 s)', async (t) => {
  const { users, posts } = await stormSetup(stack, 'hd', 8);
  await waitFor(() => leaseOwnerPid() > 0 && num("SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued','running')") === 0, 60000, 100);
  stack.tallyctl('flush');
  const owner = q('SELECT owner FROM worker_lease');
  const worker = leaseOwnerPid();
  // a candidate for the run, so that it reaches the fault point
  q(`INSERT INTO counters(name, key, value) VALUES ('post_likes', '${posts[0]}', 2)
     ON CONFLICT(name, key) DO UPDATE SET value = counters.value + 2`);
  const load = likeChurn(users.slice(0, 6), posts, 60000);
  const admin = new Client(stack.base);
  assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
  await admin.get('/admin/reconcile');
  faults.arm(stack, 'reconcile-fix');
  assert.equal((await admin.post('/admin/reconcile', {})).status, 303);
  const jobs = await waitFor(() => childrenOf(worker).map((c) => c.pid).find((p) => procState(p) === 'T'), 20000, 20);
  const held = Date.now();
  const until0 = num('SELECT until FROM worker_lease');
  const lags = [];
  while (Date.now() - held < 8500) {
    const r = await users[6].post('/posts', { body: `probe ${lags.length}`, publish: '1' });
    const p = Number(r.location.split('/').pop());
    assert.equal((await users[7].post(`/posts/${p}/like`)).status, 303);
    const at = Date.now();
    await waitFor(() => num(`SELECT coalesce(max(value), 0) FROM counters WHERE name='post_likes' AND key='${p}'`) === 1, 5000, 20);
    lags.push(Date.now() - at);
    assert.equal(q('SELECT owner FROM worker_lease'), owner, 'the lease stays with its worker');
  }
  await sleep(Math.max(0, 10000 - (Date.now() - held)));
  assert.equal(procState(jobs), 'T', 'the run was held the whole time');
  const until1 = num('SELECT until FROM worker_lease');
  process.kill(jobs, 'SIGCONT');
  await load.stop();
  t.diagnostic(`flush lags while held (ms): ${lags.join(' ')}; lease renewed by ${until1 - until0} ms`);
  assert.ok(until1 - until0 >= 8000, `the lease was renewed (${until1 - until0} ms later)`);
  assert.equal(q('SELECT owner FROM worker_lease'), owner);
  // The flush runs every second: a lag is about 1 s.  A run that stopped
  // the flush (as one once did for its whole length) shows as lags of
  // the hold's 10 s.  One flush may wait on the disk of a busy machine
  // (2.8 s measured once in CI, where every other lag stays near 1 s):
  // one lag may reach 4 s, the others stay under 2 s.
  const late = lags.filter((ms) => ms >= 2000);
  assert.ok(late.length <= 1 && Math.max(...lags) < 4000, `flush lags (ms): ${lags.join(' ')}`);
  await waitFor(() => num("SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued','running')") === 0, 30000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});
