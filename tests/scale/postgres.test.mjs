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
import { startStack, sleep, waitFor, childrenOf } from '../lib/stack.mjs';
import { stormSetup, storm, assertExactAfterRepair } from '../lib/storm.mjs';

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

test('PostgreSQL killed with SIGKILL under load (a backend, then the postmaster): no acknowledged action lost, counts exact', async () => {
  const load = await stormSetup(stack, 'pgk');
  const postmaster = () => stack.children().find((c) => /\/postgres -D /.test(c.cmd))?.pid;
  let failed = 0;
  const st = storm(load, () => { failed++; });
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
  await st.stop();
  assert.ok(failed > 0, 'the kills were felt');
  assert.ok(st.likeState.size > 10 && st.followState.size > 10);

  await waitFor(async () => (await fetch(`${stack.base}/healthz`)).status === 200, 30000, 200);
  await assertExactAfterRepair(stack, load, st);
});
