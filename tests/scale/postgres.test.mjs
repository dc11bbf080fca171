// postgres.test.mjs -- tally on PostgreSQL (make run DB=postgres): the
// server tally-run starts, the tables of the contract, and the server
// killed under load.
//
// The storm: 12 clients like, unlike, follow and unfollow, each repeating
// an action until it is acknowledged (303), while PostgreSQL is killed
// with SIGKILL twice: once one backend (the server then ends every
// session and recovers), once the postmaster itself (tally-run starts it
// again).  Requests meanwhile fail (5xx) and are retried; no acknowledged
// action may be missing from the truth, and after one reconciliation
// every counter equals its recount.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startStack, Client, sleep, waitFor, childrenOf } from '../lib/stack.mjs';
import { compareAll } from '../lib/counts.mjs';

let stack;
before(async () => {
  stack = await startStack({ db: 'postgres', env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400' } });
});
after(async () => { await stack?.stop(); });

const q = (sql) => stack.sqlite(sql);

test('DB=postgres: a real server under RUN_DIR/pg, its URL in RUN_DIR/database-url, the tables of the contract', () => {
  const url = fs.readFileSync(path.join(stack.runDir, 'database-url'), 'utf8').trim();
  assert.match(url, /^postgresql:\/\/\/tally\?host=.*\/pg&user=tally$/);
  assert.ok(fs.existsSync(path.join(stack.runDir, 'pg', 'data', 'PG_VERSION')));
  assert.ok(!fs.existsSync(path.join(stack.runDir, 'tally.db')), 'no SQLite file');
  const pg = stack.children().find((c) => /\/postgres -D /.test(c.cmd));
  assert.ok(pg, 'tally-run supervises postgres');
  assert.match(q('SELECT version()'), /^PostgreSQL 1\d/);
  // no TCP: the server listens on its socket only
  assert.equal(q('SHOW listen_addresses'), '');
  const cols = (t) => q(`SELECT column_name FROM information_schema.columns WHERE table_name = '${t}' ORDER BY column_name`).split('\n');
  for (const [t, want] of Object.entries({
    users: ['id', 'login'], posts: ['id', 'user_id', 'topic_id', 'status', 'is_deleted'],
    follows: ['follower_id', 'followee_id'], likes: ['user_id', 'post_id'],
    notifications: ['id', 'user_id', 'is_read'], counters: ['name', 'key', 'value'],
  })) {
    for (const c of want) assert.ok(cols(t).includes(c), `${t}.${c}`);
  }
  assert.equal(q("SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.key_column_usage WHERE table_name = 'counters' AND constraint_name LIKE '%pkey'"), 'key,name');
  // tallyctl finds the database through RUN_DIR alone (no TALLY_DB)
  assert.equal(stack.env.TALLY_DB, undefined);
  assert.match(stack.tallyctl('flush'), /flush/i);
});

async function until303(fn, tries = 100) {
  for (let i = 0; i < tries; i++) {
    try {
      const r = await fn();
      if (r.status === 303) return r;
    } catch { /* a reset while the server restarts */ }
    await sleep(100);
  }
  throw new Error('never acknowledged');
}

test('PostgreSQL killed with SIGKILL under load (a backend, then the postmaster): no acknowledged action lost, counts exact', async () => {
  const N = 12;
  const users = [];
  for (let i = 0; i < N; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`pgk${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  const posts = [];
  for (let i = 0; i < 4; i++) {
    const r = await users[i].post('/posts', { body: `pg target ${i}`, publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  const postmaster = () => stack.children().find((c) => /\/postgres -D /.test(c.cmd))?.pid;
  const likeState = new Map();
  const followState = new Map();
  let failed = 0;
  let stop = false;
  const storm = Promise.all(users.map(async (c, i) => {
    let n = 0;
    while (!stop) {
      const p = posts[(i + n) % posts.length];
      const v = `pgk${(i + 1 + (n % 3)) % N}`;
      const what = n % 4;
      n++;
      const fn = what < 2
        ? () => c.post(`/posts/${p}/${what === 0 ? 'like' : 'unlike'}`)
        : () => c.post(`/${what === 2 ? 'follow' : 'unfollow'}/${v}`);
      const r = await fn().catch(() => null);
      if (r?.status !== 303) { failed++; await until303(fn); }
      if (what < 2) likeState.set(`${i}|${p}`, what === 0);
      else followState.set(`${i}|${v}`, what === 2);
    }
  }));
  await sleep(2000);
  // one backend: the server ends every session and recovers
  const pm = postmaster();
  const backend = childrenOf(pm).find((c) => /postgres: tally tally/.test(c.cmd));
  assert.ok(backend, `a client backend of ${pm}`);
  process.kill(backend.pid, 'SIGKILL');
  await sleep(3000);
  // the postmaster: tally-run starts it again
  process.kill(pm, 'SIGKILL');
  await waitFor(() => postmaster() && postmaster() !== pm, 20000, 100);
  await sleep(4000);
  stop = true;
  await storm;
  assert.ok(failed > 0, 'the kills were felt');
  assert.ok(likeState.size > 10 && followState.size > 10);

  await waitFor(async () => (await fetch(`${stack.base}/healthz`)).status === 200, 30000, 200);
  const ids = users.map((_, i) => Number(q(`SELECT id FROM users WHERE login='pgk${i}'`)));
  for (const [k, liked] of likeState) {
    const [i, p] = k.split('|').map(Number);
    assert.equal(Number(q(`SELECT COUNT(*) FROM likes WHERE user_id=${ids[i]} AND post_id=${p}`)), liked ? 1 : 0, `like ${k}`);
  }
  for (const [k, fol] of followState) {
    const [i, v] = k.split('|');
    assert.equal(Number(q(`SELECT COUNT(*) FROM follows f JOIN users u ON u.id=f.followee_id
      WHERE f.follower_id=${ids[Number(i)]} AND u.login='${v}'`)), fol ? 1 : 0, `follow ${k}`);
  }
  await waitFor(() => Number(q('SELECT COUNT(*) FROM counter_backlog')) === 0, 30000, 200);
  stack.tallyctl('reconcile');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  assert.match(stack.tallyctl('reconcile'), /: 0 counters wrong/);
});
