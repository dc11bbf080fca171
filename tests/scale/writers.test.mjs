// writers.test.mjs -- PostgreSQL's writers run at once, with no lock
// shared by all of them (shared/store/pg.c), so an outbox row's id no
// longer tells its commit's place: a transaction that took id 10 may
// commit after one that took id 11.  The drain and a correction go no
// further than the horizon (count/outbox.h).  Forced here, not hoped
// for: A's like takes its outbox id and its process stops before the
// commit (fault point outbox-commit); B's like on the same author takes
// the next id and commits; the drain runs (and, the second time, the
// draining worker is killed with SIGKILL); then A commits.  Both deltas
// count exactly once.  Before the horizon the drain marked B's bucket
// finished up to B's id and A's delta was refused as already applied:
// the author's unread badge stayed one short.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startStack, sleep, waitFor, childrenOf, sqlSession, procState, stoppedUnder, BIN, Client } from '../lib/stack.mjs';
import { newUser, drainQueue, key, member, insertPosts } from '../lib/social.mjs';
import { compareAll, faults, redisName } from '../lib/counts.mjs';
import { handlerCost } from '../lib/cost.mjs';

let stack;
before(async () => {
  stack = await startStack({
    db: 'postgres',
    env: { TALLY_FAULT: 'outbox-commit:stop:1,unrepost-scored:stop:1,unfollow-scored:stop:1,outbox-floor:stop:1,lb-rows:stop:1', TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400' },
  });
  for (const f of ['outbox-commit', 'unrepost-scored', 'unfollow-scored', 'outbox-floor', 'lb-rows']) faults.disarm(stack, f, 1);
});
after(async () => { await stack?.stop(); });

const state = procState;
// deadlocks the server met in the stack's database (its statistics, sent
// at most once a second: read after a wait)
const deadlocks = () => Number(stack.sqlite('SELECT pg_stat_clear_snapshot(); SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()').split('\n').pop());
// the handler process the fault stopped, somewhere under the stack
const stopped = () => stoppedUnder(stack);

async function publish(c, body) {
  const r = await c.post('/posts', { body, topic: '', publish: '1' });
  assert.equal(r.status, 303);
  return Number(r.location.match(/^\/posts\/(\d+)$/)[1]);
}

for (const killWorker of [false, true]) {
  test(`an outbox id committed after a later one: both deltas count once${killWorker ? ', the draining worker killed in between' : ''}`, async () => {
    const tag = killWorker ? 'wk' : 'wo';
    const [x, a, b] = await Promise.all(['x', 'a', 'b'].map((l) => newUser(stack, `${tag}_${l}`)));
    const p1 = await publish(x.c, 'one');
    const p2 = await publish(x.c, 'two');
    const maxId = () => Number(stack.sqlite('SELECT coalesce(max(id), 0) FROM counter_outbox'));

    faults.arm(stack, 'outbox-commit');
    const slow = a.c.post(`/posts/${p1}/like`);	// stops before its commit
    const who = await waitFor(() => stopped(), 10000, 20);
    assert.equal(faults.fired(stack, 'outbox-commit'), 1);
    const before = maxId();
    const fast = await b.c.post(`/posts/${p2}/like`);
    assert.equal(fast.status, 303, 'B commits while A holds an earlier id');
    assert.ok(maxId() > before, 'B\'s row is committed, above the id A holds');
    assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id = ${p1}`)), 0, 'A not yet');
    // the drain runs every second on rows over a second old
    await sleep(2500);
    if (killWorker) {
      const w = stack.pidOf('tally-worker');
      process.kill(w, 'SIGKILL');
      await waitFor(() => { const n = stack.pidOf('tally-worker'); return n && n !== w; }, 15000, 100);
      await sleep(2500);
    }
    process.kill(who, 'SIGCONT');
    assert.equal((await slow).status, 303, 'A commits');
    await sleep(2500);	// A's row, now older than a second, drained too
    stack.tallyctl('flush');
    const mine = (s) => [`post_likes[${p1}]`, `post_likes[${p2}]`, `user_unread[${x.id}]`,
      `user_likes_received[${x.id}]`].some((k) => s.startsWith(k));
    assert.deepEqual(compareAll(stack).filter(mine), []);
    const badge = JSON.parse((await x.c.get('/badges.json')).text);
    assert.equal(badge.notifications, Number(stack.sqlite(
      `SELECT COUNT(*) FROM notifications WHERE user_id = ${x.id} AND is_read = 0`)));
    assert.equal(badge.notifications, 2, 'both likes on the author\'s badge');
  });
}

// The same with a group's rows (shared/count/outbox.h, outbox_group_end()):
// one writer process takes six queued likes as one group, takes the
// group's outbox ids in one statement and stops before its COMMIT; B's
// like, in another writer process, takes a later id and commits; the
// drain runs; then the group commits.  Every delta counts once.
test('a group\'s outbox ids committed after a later one: every delta counts once', async () => {
  const [x, b, ...likers] = await Promise.all(['x', 'b', 'l0', 'l1', 'l2', 'l3', 'l4', 'l5']
    .map((l) => newUser(stack, `wg_${l}`)));
  const posts = [];
  for (let i = 0; i < likers.length + 1; i++) posts.push(await publish(x.c, `group ${i}`));
  const maxId = () => Number(stack.sqlite('SELECT coalesce(max(id), 0) FROM counter_outbox'));
  const writers = childrenOf(stack.pidOf('social-writer.sock')).map((c) => c.pid);
  assert.ok(writers.length >= 2, 'two writer processes or more');
  const commits = async () => (await handlerCost(stack, 'social')).commits;
  const c0 = await commits();

  // the likes queue while every writer is stopped; one writer alone is
  // let go, and takes them all as one group
  for (const p of writers) process.kill(p, 'SIGSTOP');
  faults.arm(stack, 'outbox-commit');
  let who;
  const slow = likers.map((l, i) => l.c.post(`/posts/${posts[i]}/like`));
  try {
    await sleep(500);
    process.kill(writers[0], 'SIGCONT');
    who = await waitFor(() => (state(writers[0]) === 'T' && faults.fired(stack, 'outbox-commit') === 1 ?
      writers[0] : null), 10000, 20);
  } finally { for (const p of writers.slice(1)) process.kill(p, 'SIGCONT'); }
  assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id IN (${posts.join(',')})`)), 0,
    'the group not yet');
  const before = maxId();
  const fast = await b.c.post(`/posts/${posts[likers.length]}/like`);
  assert.equal(fast.status, 303, 'B commits while the group holds earlier ids');
  assert.ok(maxId() > before, 'B\'s row is committed, above the ids the group holds');
  await sleep(2500);	// the drain runs every second on rows over a second old
  process.kill(who, 'SIGCONT');
  for (const r of await Promise.all(slow)) assert.equal(r.status, 303, 'the group commits');
  assert.equal(await commits() - c0, 2, 'one commit for the group\'s six likes, one for B\'s');
  await sleep(2500);	// the group's rows, now older than a second, drained too
  stack.tallyctl('flush');
  const mine = (s) => [...posts.map((p) => `post_likes[${p}]`), `user_unread[${x.id}]`,
    `user_likes_received[${x.id}]`].some((k) => s.startsWith(k));
  assert.deepEqual(compareAll(stack).filter(mine), []);
  const badge = JSON.parse((await x.c.get('/badges.json')).text);
  assert.equal(badge.notifications, Number(stack.sqlite(
    `SELECT COUNT(*) FROM notifications WHERE user_id = ${x.id} AND is_read = 0`)));
  assert.equal(badge.notifications, likers.length + 1, 'every like on the author\'s badge');
});

// Nor does a notification's id tell when it committed: A's like took
// its notification's id and stops before its commit; B's like on
// another post of the same author takes a later id and commits.  The
// author's page shows B's alone, and its "Mark all read" form says the
// newest id and time shown: B's.  A then commits, under both.  The form
// must leave A's unread (no page showed it): it carries the page's
// snapshot (snap), which did not see A.  Before it, A's was read unseen.
test('"Mark all read" leaves unread a notification that took an earlier id and committed after the page', async () => {
  const [x, a, b] = await Promise.all(['x', 'a', 'b'].map((l) => newUser(stack, `ws_${l}`)));
  const p1 = await publish(x.c, 'one');
  const p2 = await publish(x.c, 'two');
  const notes = () => stack.sqlite(`SELECT id, is_read FROM notifications WHERE user_id = ${x.id} ORDER BY id`)
    .split('\n').filter(Boolean).map((l) => l.split('|').map(Number));
  faults.arm(stack, 'outbox-commit');
  const slow = a.c.post(`/posts/${p1}/like`);	// its notification's id taken, stops before its commit
  const who = await waitFor(() => stopped(), 10000, 20);
  assert.equal((await b.c.post(`/posts/${p2}/like`)).status, 303, 'B commits while A holds an earlier id');
  const page = await x.c.get('/notifications');
  assert.equal(page.status, 200);
  const field = (name) => (page.text.match(new RegExp(`name="${name}" value="([^"]+)"`)) ?? [])[1];
  const form = { upto: field('upto'), at: field('at'), snap: field('snap') };
  assert.match(form.snap ?? '', /^\d+:\d+:[\d,]*$/, 'the form carries the page\'s snapshot');
  const [[bId, bRead]] = notes();
  assert.deepEqual([String(bId), bRead], [form.upto, 1], 'the page showed B\'s, and opening it read it');
  process.kill(who, 'SIGCONT');
  assert.equal((await slow).status, 303, 'A commits');
  const [[aId, aRead]] = notes();
  assert.ok(aId < bId && aRead === 0, 'A\'s notification, under the id the page showed, is unread');
  assert.equal((await x.c.post('/notifications/read-all', form)).status, 303);
  assert.deepEqual(notes(), [[aId, 0], [bId, 1]], 'the read-all of the page left A\'s unread');
  stack.tallyctl('flush');
  const badge = JSON.parse((await x.c.get('/badges.json')).text);
  assert.equal(badge.notifications, 1, 'the author\'s badge still says A\'s');
  assert.equal((await x.c.post('/notifications/read-all', { ...form, snap: '9:5:' })).status, 400,
    'a snapshot PostgreSQL would refuse');
  assert.equal((await x.c.post('/notifications/read-all')).status, 303, 'without the form: every one');
  assert.deepEqual(notes(), [[aId, 1], [bId, 1]]);
});

// The outbox's floor (outbox.h OUTBOX_FLOOR) tells a correction which
// ids were deleted after they committed.  Two drains at once (the
// worker's, tallyctl flush's): the one of the later cutoff committed its
// floor first, then the other wrote its lower one over it, and a
// correction took the rows between, deleted, for rows its recount had
// not seen: their deltas counted twice.  Forced: the worker's drain stops
// before its floor (fault point outbox-floor) while tallyctl flush drains
// past it.
test('two drains at once: the outbox floor never goes back', async () => {
  const [x, a, b] = await Promise.all(['x', 'a', 'b'].map((l) => newUser(stack, `wf_${l}`)));
  const p = await publish(x.c, 'floored');
  const floor = () => Number(stack.sqlite("SELECT coalesce((SELECT value FROM settings WHERE name = 'outbox_floor'), 0)"));
  faults.arm(stack, 'outbox-floor');
  assert.equal((await a.c.post(`/posts/${p}/like`)).status, 303);
  const who = await waitFor(() => stopped(), 10000, 20);	// the worker's drain, before its floor
  assert.equal((await b.c.post(`/posts/${p}/like`)).status, 303);
  stack.tallyctl('flush');
  const later = floor();
  assert.ok(later >= Number(stack.sqlite('SELECT max(id) FROM counter_outbox')), 'tallyctl flush drained past the worker\'s cutoff');
  process.kill(who, 'SIGCONT');
  await waitFor(() => procState(who) !== 'T', 5000, 20);
  await sleep(1500);	// its floor committed
  assert.equal(faults.fired(stack, 'outbox-floor'), 1);
  const now = floor();
  assert.ok(now >= later, `the floor went back: ${now} < ${later}`);
});

// A leaderboard's rebuild reads the counters table through a cursor,
// 1,000 rows a fetch; a fetch that failed (the connection lost) ended
// its rows as if they were all, and the board went in marked whole,
// short of the rest, until its next invalidation.  Forced: the rebuild
// stops after its first row (fault point lb-rows) while its backend is
// terminated.  The board is now not put in: the page reads SQL, and the
// next rebuild is whole.
// A followers' board of n counted users more (ids from 900000, user
// 900000 + i counted i), rebuilt by the admin's page with its rebuild
// stopped after its first row (fault point lb-rows); meanwhile(who) runs
// then, and the stopped process goes on.  The page's status, the rows.
async function boardStopped(n, meanwhile) {
  const admin = new Client(stack.base);
  assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
  stack.sqlite(`INSERT INTO counters(name, key, value) SELECT 'user_followers', (900000 + g)::text, g FROM generate_series(1, ${n}) g`);
  stack.redis('DEL', '{lb}:followers:ok');
  faults.arm(stack, 'lb-rows');
  const page = admin.get('/admin/top?by=followers&n=10');
  const who = await waitFor(() => stopped(), 10000, 20);
  meanwhile();
  process.kill(who, 'SIGCONT');
  const status = (await page).status;
  return { status, admin, rows: Number(stack.sqlite("SELECT COUNT(*) FROM counters WHERE name = 'user_followers' AND value > 0")) };
}
const boardDone = () => {
  stack.sqlite("DELETE FROM counters WHERE name = 'user_followers' AND key::bigint >= 900000");
  stack.redis('DEL', '{lb}:followers:ok');
};

test('a leaderboard rebuild whose rows stop coming is not put in as whole', async () => {
  try {
    const { status, admin, rows } = await boardStopped(2500, () => stack.sqlite("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'tally%' AND (query ILIKE '%FETCH%' OR query ILIKE '%DECLARE%') AND pid <> pg_backend_pid()"));
    assert.ok([200, 503].includes(status), `the page: ${status}`);
    const ok = stack.redis('GET', '{lb}:followers:ok');
    assert.ok(ok !== '1' || Number(stack.redis('ZCARD', '{lb}:followers')) === rows,
      `a board of ${stack.redis('ZCARD', '{lb}:followers')} of ${rows} rows marked whole`);
    assert.equal((await admin.get('/admin/top?by=followers&n=10')).status, 200);
    assert.equal(stack.redis('GET', '{lb}:followers:ok'), '1');
    assert.equal(Number(stack.redis('ZCARD', '{lb}:followers')), rows, 'the next rebuild is whole');
  } finally { boardDone(); }
});

// The boards are invalidated when their counters are rewritten (a
// reconciliation's end, a seed): a rebuild that read its rows before and
// swapped after marked its board whole all the same, stale until the next
// invalidation.  Forced: the rebuild stops after its first row (fault
// point lb-rows), a counter changes and the board is invalidated, then
// it goes on.
test('a leaderboard invalidated while it is rebuilt is not marked whole with the old values', async () => {
  const star = '0000000000900007';
  try {
    const { status, admin } = await boardStopped(50, () => {
      stack.sqlite("UPDATE counters SET value = 999999 WHERE name = 'user_followers' AND key = '900007'");
      stack.redis('DEL', '{lb}:followers:ok');	// what lb_invalidate() does
    });
    assert.equal(status, 200);
    const ok = stack.redis('GET', '{lb}:followers:ok');
    const score = Number(stack.redis('ZSCORE', '{lb}:followers', star));
    assert.ok(ok !== '1' || score === 999999, `the board marked whole with ${score} for 999999`);
    assert.equal((await admin.get('/admin/top?by=followers&n=10')).status, 200);
    assert.equal(stack.redis('GET', '{lb}:followers:ok'), '1');
    assert.equal(Number(stack.redis('ZSCORE', '{lb}:followers', star)), 999999, 'the next rebuild has the new value');
  } finally { boardDone(); }
});

// An unrepost's batch reads each follower's new place of the post, then
// puts it exactly (down, or out).  A repost by another followee that
// committed in between, its add made before that put, was undone by it:
// the home placed the post at the older repost, below SQL's place, for
// good.  Forced: d's unrepost's batch stops between its read and its put
// (fault point unrepost-scored) while e's repost goes through the other
// writer.  The batch now reads the places again after its put.
test('a repost committed while an unrepost\'s batch is between its read and its put: the home keeps the new repost\'s place', async () => {
  const [r, c, b, d, e] = await Promise.all(['r', 'c', 'b', 'd', 'e'].map((l) => newUser(stack, `wu_${l}`)));
  for (const f of ['b', 'd', 'e']) assert.equal((await r.c.post(`/follow/wu_${f}`)).status, 303);
  const p = await publish(c.c, 'reposted');
  const place = () => Number(stack.redis('ZSCORE', key(r.id, 'home'), member(p)));
  const at = (u) => Number(stack.sqlite(`SELECT created_at FROM reposts WHERE post_id = ${p} AND user_id = ${u.id}`));
  await r.c.get('/feed');	// the home in Redis
  assert.equal((await b.c.post(`/posts/${p}/repost`)).status, 303);
  await sleep(5);
  assert.equal((await d.c.post(`/posts/${p}/repost`)).status, 303);
  await drainQueue(stack);
  await waitFor(() => place() === at(d), 10000, 20);
  faults.arm(stack, 'unrepost-scored');
  assert.equal((await d.c.post(`/posts/${p}/unrepost`)).status, 303);
  const who = await waitFor(() => stopped(), 10000, 20);	// its batch read b's place
  assert.equal((await e.c.post(`/posts/${p}/repost`)).status, 303, 'e reposts through the other writer');
  await waitFor(() => place() === at(e), 10000, 20);	// e's add came first
  process.kill(who, 'SIGCONT');
  await drainQueue(stack);
  await waitFor(() => Number(stack.redis('ZCARD', '{jobs}:inline')) === 0, 10000, 20);
  assert.equal(faults.fired(stack, 'unrepost-scored'), 1);
  assert.equal(place(), at(e), 'the home places the post at e\'s repost, as SQL does');
  const feed = (await r.c.get('/feed')).text;
  assert.match(feed, new RegExp(`data-post-id="${p}"[^>]*data-reposted-by="wu_e"`));
});

// An unfollow reads the home's new places of what the followee brought,
// then puts them exactly.  A repost by another followee that committed
// in between, its add made before that put, was undone by it: the post
// out of the home for good (the home marked whole: readers drop stale
// entries, none adds a missing one).  Forced: r's unfollow of f stops
// between its read and its put (fault point unfollow-scored) while g's
// repost goes through the other writer.  The unfollow now reads the
// places again after its put (follow.c home_put_exact()).
test('a repost committed while an unfollow is between its read and its put: the home keeps the post at the repost\'s place', async () => {
  const [r, x, f, g] = await Promise.all(['r', 'x', 'f', 'g'].map((l) => newUser(stack, `wy_${l}`)));
  // a home of 800 more: an unfollow that leaves 750 or more is not
  // followed by a rebuild, which would have hidden the race
  insertPosts(stack, g.id, 800, { t0: Date.now() - 86400000 });
  await r.c.get('/feed');	// the home in Redis
  for (const u of ['g', 'f']) assert.equal((await r.c.post(`/follow/wy_${u}`)).status, 303);
  const p = await publish(x.c, 'reposted by a followee');
  const place = () => Number(stack.redis('ZSCORE', key(r.id, 'home'), member(p)));
  const at = (u) => Number(stack.sqlite(`SELECT created_at FROM reposts WHERE post_id = ${p} AND user_id = ${u.id}`));
  assert.equal((await f.c.post(`/posts/${p}/repost`)).status, 303);
  await drainQueue(stack);
  await waitFor(() => place() === at(f), 10000, 20);
  faults.arm(stack, 'unfollow-scored');
  const unfollow = r.c.post('/unfollow/wy_f');
  const who = await waitFor(() => stopped(), 10000, 20);	// it read: no place
  try {
    assert.equal((await g.c.post(`/posts/${p}/repost`)).status, 303, 'g reposts through the other writer');
    await waitFor(() => place() === at(g), 10000, 20);	// g's add came first
  } finally { process.kill(who, 'SIGCONT'); }
  assert.equal((await unfollow).status, 303);
  await drainQueue(stack);
  assert.equal(faults.fired(stack, 'unfollow-scored'), 1);
  assert.equal(place(), at(g), 'the home places the post at g\'s repost, as SQL does');
  assert.match((await r.c.get('/feed')).text, new RegExp(`data-post-id="${p}"[^>]*data-reposted-by="wy_g"`));
});

// A schema step that waits for a table held by a long transaction: its
// exclusive lock, queued, held back every reader and writer of the table
// behind it (a like waited its 5 s, then failed with 503) for as long as
// the other held it.  It now waits a little at a time and asks again.
// Staged: the database is put back before step 13 (notifications
// without their xact; the steps after it run again, each repeatable), an
// operator's psql holds notifications in an open transaction, and a new
// process (tallyctl) migrates meanwhile.
test('a migration that waits for a table an open transaction holds: likes go on meanwhile; it ends when the table is free', async () => {
  const [x, a] = await Promise.all(['x', 'a'].map((l) => newUser(stack, `wm_${l}`)));
  const p = await publish(x.c, 'during a migration');
  const version = () => Number(stack.sqlite('SELECT max(version) FROM tally_schema'));
  const top = version();
  assert.ok(top >= 13);
  stack.sqlite('BEGIN; ALTER TABLE notifications DROP COLUMN xact; DELETE FROM tally_schema; INSERT INTO tally_schema VALUES (12); COMMIT');
  const reader = sqlSession(stack);
  reader.send('BEGIN; SELECT COUNT(*) FROM notifications; \\echo held');
  await reader.until('held');
  const migrating = new Promise((resolve) => {
    const c = spawn(path.join(BIN, 'tallyctl'), ['flush'], { env: stack.env });
    let err = '';
    c.stderr.on('data', (d) => { err += d; });
    c.on('close', (status) => resolve({ status, err }));
  });
  try {
    // the migration at its step: the table asked for, not given
    await waitFor(() => stack.sqlite("SELECT COUNT(*) FROM pg_stat_activity WHERE query LIKE '%ALTER TABLE notifications%'") !== '0', 10000, 20);
    await sleep(500);
    const t0 = Date.now();
    assert.equal((await a.c.post(`/posts/${p}/like`)).status, 303, 'a like meanwhile');
    assert.ok(Date.now() - t0 < 3000, `the like waited ${Date.now() - t0} ms`);
    assert.equal(version(), 12, 'the migration still waits');
  } finally {
    reader.send('COMMIT; \\q');
    await reader.end();
  }
  const m = await migrating;
  assert.equal(m.status, 0, m.err);
  assert.equal(version(), top, 'migrated once the table was free');
  assert.match(m.err, /a table is held by another transaction/);
  assert.equal(Number(stack.sqlite("SELECT COUNT(*) FROM information_schema.columns WHERE table_name = 'notifications' AND column_name = 'xact'")), 1);
});

// The horizon waits for tally's own write transactions of this
// database only (their connections' application_name and database,
// store/sql_pg.c).  Another client's, which writes no outbox row, is no
// reason to wait: an operator's psql left "idle in transaction" stalled
// every drain and failed every reconciliation ("a write transaction has
// been open for over 2000 ms").  Nor is a tally's of another database
// on the same server (another site's, a staging copy's: a seed's one
// long transaction there held back every drain here).
const outsiders = {
  'another client\'s open transaction': { tag: 'io', session: () => sqlSession(stack) },
  'a tally write transaction open in another database of the server': {
    tag: 'od',
    async session() {
      const admin = sqlSession(stack, { db: 'postgres' });
      admin.send('DROP DATABASE IF EXISTS tally_other; CREATE DATABASE tally_other; \\echo made');
      await admin.until('made');
      admin.send('\\q');
      await admin.end();
      return sqlSession(stack, { db: 'tally_other', app: 'tally-other-site' });
    },
  },
};
for (const [what, { tag, session }] of Object.entries(outsiders)) {
  test(`${what} holds back neither the drain nor a reconciliation`, async () => {
    const [x, a] = await Promise.all(['x', 'a'].map((l) => newUser(stack, `${tag}_${l}`)));
    const p = await publish(x.c, 'idle');
    const logAt = stack.log('worker').length;
    const s = await session();
    try {
      s.send('BEGIN; SELECT pg_current_xact_id(); \\echo open');
      await s.until('open');
      assert.equal((await a.c.post(`/posts/${p}/like`)).status, 303);
      const t0 = Date.now();
      stack.tallyctl('reconcile');	// throws on a failed run
      assert.ok(Date.now() - t0 < 2000 + 5000, 'the run did not wait out the open transaction');
      // the worker's drain went past the like's row (it runs every second
      // on rows over a second old; the newest row stays, cleared)
      await waitFor(() => Number(stack.sqlite(
        "SELECT COUNT(*) FROM counter_outbox WHERE deltas <> ''")) === 0, 10000, 200);
      assert.doesNotMatch(stack.log('worker').slice(logAt), /has been open for over/);
    } finally {
      s.send('ROLLBACK; \\q');
      await s.end();
    }
    stack.tallyctl('flush');
    assert.deepEqual(compareAll(stack), []);
  });
}

// A follow group has no post, whose row serialised a group's delete with
// a like joining it; a follow that joined the group while it was deleted
// (the group's row updated, the notification not yet committed) was left
// behind: unread, in no group, on the badge and on no page.  The delete
// now takes the group's row first.
test('a follow group deleted while a follow joins it: no notification left behind, the badge agrees', async () => {
  const [u, e, f] = await Promise.all(['u', 'e', 'f'].map((l) => newUser(stack, `fg_${l}`)));
  assert.equal((await e.c.post(`/follow/${u.login}`)).status, 303);
  const first = Number(stack.sqlite(`SELECT id FROM notifications WHERE user_id = ${u.id}`));
  assert.ok(first > 0);
  await u.c.get('/notifications');
  faults.arm(stack, 'outbox-commit');
  const joining = f.c.post(`/follow/${u.login}`);	// stops before its commit
  const who = await waitFor(() => stopped(), 10000, 20);
  let del;
  try {
    del = u.c.post(`/notifications/${first}/delete`);
    await sleep(500);
  } finally { process.kill(who, 'SIGCONT'); }
  assert.equal((await joining).status, 303);
  assert.equal((await del).status, 303);
  const orphans = Number(stack.sqlite(`SELECT COUNT(*) FROM notifications n WHERE user_id = ${u.id}
    AND NOT EXISTS (SELECT 1 FROM note_groups g WHERE g.id = n.group_id)`));
  assert.equal(orphans, 0, 'no notification outside a group');
  const unread = Number(stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id = ${u.id} AND is_read = 0`));
  const badge = JSON.parse((await u.c.get('/badges.json')).text).notifications;
  assert.equal(badge, unread, 'the badge is the unread notifications');
  const shown = [...(await u.c.get('/notifications', { headers: { 'sec-fetch-site': 'cross-site' } })).text
    .matchAll(/data-unread="(\d+)"/g)].reduce((n, m) => n + Number(m[1]), 0);
  assert.equal(shown, unread, 'and what the list shows');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A group's delete, as a session of its own does it (the group held
// first, then its members written -- changing nothing, so that the counts
// stay the truth's), around the request act() makes: held before it,
// the members written while it runs, committed after PostgreSQL's
// deadlock_timeout.  The request's answer, and what the session printed.
function againstGroupDelete(gid, act) {
  return crossing(`SELECT id FROM note_groups WHERE id = ${gid} FOR NO KEY UPDATE;`, act,
    `UPDATE notifications SET is_read = is_read WHERE group_id = ${gid};`);
}

// A follow that notifies u: its group's id.
async function followGroup(u, f) {
  assert.equal((await f.c.post(`/follow/${u.login}`)).status, 303);
  const gid = Number(stack.sqlite(`SELECT group_id FROM notifications WHERE user_id = ${u.id} AND actor_id = ${f.id}`));
  assert.ok(gid > 0);
  return gid;
}

// Opening the notifications marks them read: the members first, then
// their groups.  A group's delete takes the group first, then its
// members.  Met, PostgreSQL breaks the deadlock by failing one of them:
// the page answered 500 ("could not be saved") where an action would
// have run again.  Forced: a session deletes the group around the page.
// Since a follow's group is taken before its members by every writer
// (sql_pg.c POSTLESS_GROUPS_LOCKED), the page waits for the delete and
// meets no deadlock; so does a read of the one group.
test('opening the notifications while their group is deleted: no 500, the page runs again', async () => {
  const [u, e, f] = await Promise.all(['u', 'e', 'f'].map((l) => newUser(stack, `dl_${l}`)));
  const gid = await followGroup(u, e);
  const before = deadlocks();
  const page = await againstGroupDelete(gid, () => u.c.get('/notifications'));
  assert.equal(page.r.status, 200, `the page (${page.out.replace(/\s+/g, ' ').slice(0, 200)})`);
  // a read of the one group, the same way
  const g2 = await followGroup(u, f);
  const note = Number(stack.sqlite(`SELECT max(id) FROM notifications WHERE group_id = ${g2}`));
  const read = await againstGroupDelete(g2, () => u.c.post(`/notifications/${note}/read`));
  assert.ok(read.r.status === 303 || read.r.status === 200, `the read answered ${read.r.status}`);
  assert.doesNotMatch(read.out, /deadlock/);
  await sleep(1000);	// the server's statistics, sent at most once a second
  assert.equal(deadlocks(), before, 'no deadlock met');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// An unfollow withdraws its notification, then takes it from its group;
// a group's delete takes the group, then its members.  Met, the two
// deadlocked, and PostgreSQL failed one after its deadlock_timeout (a
// second; the unfollow then ran again).  Now the withdrawal takes the
// group first (sql_pg.c STMT_NOTE_REMOVE): it waits for the delete, and
// no deadlock is counted.
test('an unfollow while its notification\'s group is deleted: no deadlock, the unfollow waits and passes', async () => {
  const [u, e] = await Promise.all(['u', 'e'].map((l) => newUser(stack, `du_${l}`)));
  const gid = await followGroup(u, e);
  const before = deadlocks();
  const un = await againstGroupDelete(gid, () => e.c.post(`/unfollow/${u.login}`));
  assert.equal(un.r.status, 303, `the unfollow (${un.out.replace(/\s+/g, ' ').slice(0, 200)})`);
  assert.doesNotMatch(un.out, /deadlock/);
  assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id = ${u.id}`)), 0, 'withdrawn');
  await sleep(1000);	// the server's statistics, sent at most once a second
  assert.equal(deadlocks(), before, 'no deadlock met');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A session's locks around the request act() makes: `hold` taken before
// it, `then` while it waits, committed after PostgreSQL's
// deadlock_timeout.  The request's answer and what the session printed.
async function crossing(hold, act, then) {
  const s = sqlSession(stack);
  try {
    s.send(`BEGIN; ${hold} \\echo held`);
    await s.until('held');
    const pending = act();
    await sleep(300);
    s.send(`${then} \\echo written`);
    await s.until('written', 5000).catch((e) => { throw new Error(`${e.message}: ${s.out()}`); });
    await sleep(1500);				// PostgreSQL's deadlock_timeout
    s.send('COMMIT; \\echo committed');
    await s.until('committed');
    return { r: await pending, out: s.out() };
  } finally { await s.end(); }
}

// The owner's delete of a post's group, as notify.c owner_change() takes
// its rows: the post shared, the group, then its members.
const groupDelete = (post, gid) => [
  `SELECT id FROM posts WHERE id = ${post} FOR SHARE; SELECT id FROM note_groups WHERE id = ${gid} FOR NO KEY UPDATE;`,
  `UPDATE notifications SET is_read = is_read WHERE group_id = ${gid};`,
];
const groupOf = (where) => Number(stack.sqlite(`SELECT group_id FROM notifications WHERE ${where}`));

// A crossing's request answered one of ok, and the session met no deadlock.
function passed(x, what, ok = [303]) {
  assert.ok(ok.includes(x.r.status), `${what} answered ${x.r.status} (${x.out.replace(/\s+/g, ' ').slice(0, 200)})`);
  assert.doesNotMatch(x.out, /deadlock/);
}

// The server counted no deadlock since `before`, and every count is exact.
async function exactWithoutDeadlock(before) {
  await sleep(1000);	// the server's statistics, sent at most once a second
  assert.equal(deadlocks(), before, 'no deadlock met');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
}

// A comment's delete held the comment, not its post, and withdrew its
// notification before the group; the owner's delete of that group takes
// the post shared, the group, then the member.  Met, they deadlocked and
// PostgreSQL failed one after a second.  The delete now takes its post's
// row before the notification (posting.c): it waits for the owner's.
test('a comment deleted while the owner deletes its notification: no deadlock, the delete waits and passes', async () => {
  const [u, e] = await Promise.all(['u', 'e'].map((l) => newUser(stack, `cd_${l}`)));
  const p = await publish(u.c, 'commented');
  assert.equal((await e.c.post(`/posts/${p}/comments`, { body: 'hi' })).status, 303);
  const cid = Number(stack.sqlite(`SELECT id FROM comments WHERE post_id = ${p}`));
  const gid = groupOf(`user_id = ${u.id} AND kind = 'comment'`);
  assert.ok(gid > 0);
  const before = deadlocks();
  const [hold, then] = groupDelete(p, gid);
  passed(await crossing(hold, () => e.c.post(`/comments/${cid}/delete`), then), 'the delete');
  assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id = ${u.id}`)), 0, 'withdrawn');
  await exactWithoutDeadlock(before);
});

// A read-all took its notifications, then their groups; a delete of a
// post's group, and a read of one, take the group first (both hold the
// post shared only, so the post orders nothing between them).  Met, they
// deadlocked.  A reconciliation's repair takes groups by id, and a
// read-all took the follows' groups before the posts': met, the same.  A
// read-all now takes every group it reads, in id order, before any
// notification (sql_pg.c STMT_NOTE_READ_ALL), and a read of one group its
// group first (notify.c owner_change()).
test('read-all while a post\'s group is deleted, or while a repair holds groups by id: no deadlock', async () => {
  const [u, e, f] = await Promise.all(['u', 'e', 'f'].map((l) => newUser(stack, `ra_${l}`)));
  const p = await publish(u.c, 'liked');
  assert.equal((await e.c.post(`/posts/${p}/like`)).status, 303);
  const gp = groupOf(`user_id = ${u.id} AND kind = 'like'`);
  await u.c.get('/feed');	// a form token; /notifications would read them
  const before = deadlocks();
  passed(await crossing(groupDelete(p, gp)[0], () => u.c.post('/notifications/read-all'), groupDelete(p, gp)[1]),
    'read-all against a group delete');
  // a like's group, then a follow's (a higher id); the repair holds the
  // lower, the read-all wants both, the repair then the higher
  assert.equal((await e.c.post(`/posts/${p}/unlike`)).status, 303);
  assert.equal((await e.c.post(`/posts/${p}/like`)).status, 303);
  const gl = groupOf(`user_id = ${u.id} AND kind = 'like' AND is_read = 0`);
  assert.equal((await f.c.post(`/follow/${u.login}`)).status, 303);
  const gf = groupOf(`user_id = ${u.id} AND kind = 'follow'`);
  assert.ok(gl > 0 && gf > gl, `groups ${gl} < ${gf}`);
  passed(await crossing(`SELECT id FROM posts WHERE id = ${p} FOR SHARE; SELECT id FROM note_groups WHERE id = ${gl} FOR NO KEY UPDATE;`,
    () => u.c.post('/notifications/read-all'), `SELECT id FROM note_groups WHERE id = ${gf} FOR NO KEY UPDATE;`),
  'read-all against a repair');
  // a read of one post's group against a read-all holding it
  assert.equal((await e.c.post(`/posts/${p}/unlike`)).status, 303);
  assert.equal((await e.c.post(`/posts/${p}/like`)).status, 303);
  const g3 = groupOf(`user_id = ${u.id} AND kind = 'like' AND is_read = 0`);
  const n3 = Number(stack.sqlite(`SELECT max(id) FROM notifications WHERE group_id = ${g3}`));
  passed(await crossing(groupDelete(p, g3)[0], () => u.c.post(`/notifications/${n3}/read`), groupDelete(p, g3)[1]),
    'the read', [303, 200]);
  assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id = ${u.id} AND is_read = 0`)), 0, 'all read');
  await exactWithoutDeadlock(before);
});

// tallyctl flush drains the outbox first; on PostgreSQL a row may wait
// for a writer that took an earlier id and has not committed.  The flush
// said "flushed" and exited 0 without those rows (the counters table one
// short); now it tries again while it waits for busy buckets, and says
// so with exit 1 if they still wait.
test('tallyctl flush while a writer holds an earlier outbox id: exit 1, said, and exact once the writer commits', async () => {
  const [x, a, b] = await Promise.all(['x', 'a', 'b'].map((l) => newUser(stack, `fw_${l}`)));
  const p1 = await publish(x.c, 'held one');
  const p2 = await publish(x.c, 'held two');
  faults.arm(stack, 'outbox-commit');
  const slow = a.c.post(`/posts/${p1}/like`);	// stops before its commit
  const who = await waitFor(() => stopped(), 10000, 20);
  let r;
  try {
    assert.equal((await b.c.post(`/posts/${p2}/like`)).status, 303, 'B commits above A\'s id');
    r = stack.tallyctlRaw('flush');
  } finally { process.kill(who, 'SIGCONT'); }
  assert.equal(r.status, 1, `exit ${r.status}: ${r.stderr}`);
  assert.match(r.stderr, /outbox rows still wait after \d+ s/);
  // (nginx may have given up on A's answer meanwhile: 504)
  await slow;
  await waitFor(() => Number(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id = ${p1}`)) === 1, 10000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A writer of tally's that holds its transaction open (stopped here; a
// like waiting on a row lock does the same for up to lock_timeout) is
// one the horizon must wait for, and it waits OUTBOX_WAIT_MS at most.
// A reconciliation then failed whole ("Redis or SQLite failed"); now the
// keys it could not settle go to the worker, which settles them once the
// writer has committed, and the run ends done.  The wait is paid once
// while that writer runs, not again by each family with drift.
test('a reconciliation while a writer of tally\'s holds its transaction open ends done; the worker settles what it left', async () => {
  const [x, a] = await Promise.all(['x', 'a'].map((l) => newUser(stack, `ow_${l}`)));
  const p = await publish(x.c, 'open');
  assert.equal((await x.c.post(`/follow/${a.login}`)).status, 303);
  stack.tallyctl('flush');
  // three families drift: three corrections, each after a horizon
  const planted = [['user_posts', x.id], ['user_following', x.id], ['user_followers', a.id]];
  for (const [f, k] of planted) {
    assert.equal(stack.sqlite(`UPDATE counters SET value = value + 3
      WHERE name = '${f}' AND key = '${k}' RETURNING 1`).split('\n').filter(Boolean).length, 1, `${f}[${k}] planted wrong`);
  }
  faults.arm(stack, 'outbox-commit');
  const slow = a.c.post(`/posts/${p}/like`);	// stops before its commit
  const who = await waitFor(() => stopped(), 10000, 20);
  try {
    const t0 = Date.now();
    const out = stack.tallyctl('reconcile');	// throws on a failed run
    for (const [f] of planted) {
      assert.match(out, new RegExp(`^\\s+${f}\\s+checked \\d+, wrong 1, fixed 0,`, 'm'), `${f}: left to the worker, not fixed by the run`);
    }
    assert.ok(Date.now() - t0 < 2000 + 2500, `one wait for the open writer, not one a family (${Date.now() - t0} ms)`);
    // no fence left behind: the worker's correction need not outwait one
    for (const [f, k] of planted) {
      const { hash, pfield } = redisName(f, k);
      assert.equal(stack.redis('HEXISTS', hash.replace(/:[a-z]+\d+$/, ':fence'), pfield), '0', `${f}[${k}] unfenced`);
    }
  } finally { process.kill(who, 'SIGCONT'); }
  assert.equal((await slow).status, 303, 'the like commits');
  // the worker's backlog pass (every two seconds) settles the keys
  await waitFor(() => { stack.tallyctl('flush'); return compareAll(stack).length === 0; }, 30000, 1000);
  assert.equal(Number(stack.sqlite(`SELECT value FROM counters WHERE name = 'user_posts' AND key = '${x.id}'`)), 1);
});

// A writer of tally's stalled inside its transaction on
// PostgreSQL (its process stopped, or its host cut off) does not hold
// its row locks and the outbox's horizon for as long as its connection
// seems alive: the server ends the transaction once it has been idle for
// idle_in_transaction_session_timeout, which tally sets to 30 s unless
// the operator set it (shared/store/sql_pg.c).  Without it, the stopped
// like kept its post's row and the outbox's horizon until it went on:
// every other like of that post failed at lock_timeout, and no outbox row
// after its id drained.
const likes = (p) => Number(stack.sqlite(`SELECT count(*) FROM likes WHERE post_id = ${p}`));
// rows not drained yet (the newest is kept, its deltas cleared: outbox.h)
const outboxRows = () => Number(stack.sqlite("SELECT count(*) FROM counter_outbox WHERE deltas <> ''"));

test('a writer stopped inside its transaction loses it after 30 s idle: the post\'s actions answer busy at once meanwhile and other posts\' go through; its likes go through again, the outbox drains, its own like fails whole, every count exact', async (t) => {
  const [x, a, b, c, z] = await Promise.all(['x', 'a', 'b', 'c', 'z'].map((l) => newUser(stack, `it_${l}`)));
  const more = await Promise.all(['d', 'e', 'f', 'g', 'h', 'i'].map((l) => newUser(stack, `it_${l}`)));
  const p = await publish(x.c, 'held');
  const q = await publish(x.c, 'not held');

  faults.arm(stack, 'outbox-commit');
  const slow = a.c.post(`/posts/${p}/like`);	// stops before its commit, the post's row locked
  const who = await waitFor(() => stopped(), 10000, 20);
  const t0 = Date.now();
  try {
    // while a's transaction lives, a like of the same post waits for
    // the row, then gives up at lock_timeout (5 s): 503, nothing changed
    const tb = Date.now();
    const rb = await b.c.post(`/posts/${p}/like`);
    assert.ok(Date.now() - tb >= 4500, `b waited for the row held (${Date.now() - tb} ms)`);
    assert.equal(rb.status, 503, 'busy, not failed: nothing was changed');
    assert.equal(rb.headers.get('retry-after'), '2');
    // the host now knows the row held (store/rowheld.h): the post's next
    // actions answer busy at once, not after 5 s each (six in a row took
    // 30 s, and a few at once took every writer process of the host) ...
    const t2 = Date.now();
    for (const u of more) {
      const r = await u.c.post(`/posts/${p}/like`);
      assert.equal(r.status, 503, 'busy: nothing was changed');
      assert.equal(r.headers.get('retry-after'), '2');
    }
    const seqMs = Date.now() - t2;
    // ... and while they come at once, another post's like goes through
    const t3 = Date.now();
    const [rq, ...rp] = await Promise.all([
      z.c.post(`/posts/${q}/like`).then((r) => ({ r, ms: Date.now() - t3 })),
      ...more.map((u) => u.c.post(`/posts/${p}/like`)),
    ]);
    t.diagnostic(`six likes of the held post answered busy in ${seqMs} ms; another post's like beside six more took ${rq.ms} ms`);
    assert.ok(seqMs < 2000, `six actions on the held post answered at once (${seqMs} ms)`);
    assert.equal(rq.r.status, 303, 'the other post\'s like');
    assert.ok(rq.ms < 2000, `the other post's like did not wait (${rq.ms} ms)`);
    for (const r of rp) assert.equal(r.status, 503);
    assert.match(stack.log('social-writer'), new RegExp(`/posts/${p}/like: the row waited for is held by another transaction`));
    // the server ends a's transaction once it has been idle 30 s
    const idleTx = () => Number(stack.sqlite("SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'tally%' AND state = 'idle in transaction'"));
    assert.ok(idleTx() >= 1, 'a\'s transaction is open, idle');
    await waitFor(() => idleTx() === 0, 45000, 250);
    const ms = Date.now() - t0;
    assert.ok(ms > 25000, `the transaction was given its 30 s (${ms} ms)`);
    assert.equal(state(who), 'T', 'the writer is still stopped');
    // the post's row is free: c's like goes through at once, and the
    // outbox drains past a's id (the horizon no longer waits for it)
    const t1 = Date.now();
    assert.equal((await c.c.post(`/posts/${p}/like`)).status, 303, 'the post\'s row is free');
    assert.ok(Date.now() - t1 < 2000, `c's like did not wait (${Date.now() - t1} ms)`);
    assert.equal(likes(p), 1, 'c\'s like committed; a\'s was not');
    await waitFor(() => outboxRows() === 0, 15000, 250);
    assert.equal(state(who), 'T', 'the writer is still stopped');
  } finally { process.kill(who, 'SIGCONT'); }
  // nginx gave up on it long ago (504); going on, the writer finds its
  // connection ended, and its COMMIT with it: a's like is not there.
  // (libpq says so as the server's FATAL or as the connection closed;
  // the connection is made again by the process's next statement.)
  assert.notEqual((await slow).status, 303);
  await waitFor(() => /idle-in-transaction|closed the connection unexpectedly: COMMIT/.test(stack.log('social-writer')), 15000, 200);
  assert.equal(Number(stack.sqlite(`SELECT count(*) FROM likes WHERE post_id = ${p} AND user_id = ${a.id}`)), 0,
    'the stopped like was not committed');
  // the writer's connection is made again: the next like commits
  await waitFor(async () => (await a.c.post(`/posts/${p}/like`)).status === 303, 10000, 200);
  assert.equal(likes(p), 2);
  await waitFor(() => { stack.tallyctl('flush'); return compareAll(stack).length === 0; }, 20000, 500);
  assert.equal(Number(stack.sqlite(`SELECT like_count FROM posts WHERE id = ${p}`)), 2);
});
