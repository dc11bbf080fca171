// pggroup.test.mjs -- group commit on PostgreSQL (shared/web/batch.h,
// shared/store/db.h): each of the writer pool's processes takes the likes
// queued behind the one it took and runs them in one transaction, each in
// its savepoint, in the order of their posts' ids; the pool's processes
// commit their groups at once, with no lock shared by all of them.
// Asserted against the truth:
//   - likes queued while every writer was stopped are answered from fewer
//     commits than likes (tally_sql_commits_total), each one kept, in a
//     round trip a like plus two a group (its sessions; its outbox rows
//     with its COMMIT: shared/count/outbox.h, outbox_group_end());
//   - groups of four processes over the same posts never deadlock (the
//     server's own count of deadlocks does not move), and no count is
//     lost or doubled;
//   - a group that does lose to another transaction (a deadlock forced
//     with a second session) is rolled back whole and its likes run again
//     one by one: the clients see 303s, and each like counts once;
//   - a read-all takes the rows of its notifications' posts first, in
//     the order of their ids, as a group commit does: a session doing a
//     group's work between two of the reader's groups (whose ids run
//     against their posts') does not deadlock with it; nor does a read of
//     one group with a session withdrawing two of its notifications; and
//     the read-all reads only notifications of the posts it holds (one
//     of another post that arrives while it waits stays unread); a
//     repair of notification groups (reconciliation) takes their posts
//     first too.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startStack, Client, BIN, childrenOf, procState, sqlSession, queuedWhileStopped, waitFor, sleep } from '../lib/stack.mjs';
import { compareAll, faults, pageCounters } from '../lib/counts.mjs';
import { handlerCost } from '../lib/cost.mjs';

const N = 16;
let stack;
const users = [];
const own = [];			// own[i]: the post only users[i] likes
const shared = [];		// posts every user likes and unlikes

before(async () => {
  stack = await startStack({
    db: 'postgres',
    env: { TALLY_WRITERS: '4', TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400', TALLY_FAULT: 'reconcile-rows:stop:1' },
  });
  faults.disarm(stack, 'reconcile-rows', 1);
  for (let i = 0; i < N; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`pgg${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  for (let i = 0; i < N + 6; i++) {
    const r = await users[i % N].post('/posts', { body: `pg group post ${i}`, publish: '1' });
    assert.equal(r.status, 303);
    (i < N ? own : shared).push(Number(r.location.split('/').pop()));
  }
});

after(async () => { await stack?.stop(); });

const writers = () => childrenOf(stack.pidOf('social-writer.sock')).map((c) => c.pid);

const commits = async () => (await handlerCost(stack, 'social')).commits;
const trips = async () => (await handlerCost(stack, 'social')).sqlTrips;
const statements = async () => (await handlerCost(stack, 'social')).stmts;

const deadlocks = () => Number(stack.sqlite(
  'SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()'));
// backends waiting for a lock in a statement on notifications (the
// reader's: the session that holds the rows waits for nothing)
const readerWaits = () => stack.sqlite(
  "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query ~ '(notifications|note_groups)'");
const likesOf = (p) => Number(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id = ${p}`));

test('likes queued while every writer was stopped share commits', async () => {
  const pids = writers();
  assert.equal(pids.length, 4, 'four writer processes');
  // a session that has ended, its cookie still sent (the sessions of a
  // group are read in one statement: this one must not pass)
  const gone = new Client(stack.base);
  assert.equal((await gone.signup('pggone')).status, 303);
  await gone.get('/feed');
  const goneCsrf = gone.csrf;
  const ended = new Client(stack.base);
  ended.jar = new Map(gone.jar);
  assert.equal((await gone.post('/logout')).status, 303);
  const c0 = await commits();
  const sent = await queuedWhileStopped(pids, () => [...users.map((c, i) => (i === 3 ?
    c.post(`/posts/${own[i]}/like`, { csrf: 'f'.repeat(43) }) :
    i === 5 ? c.post(`/posts/${own[i]}/like`, {}, { headers: { accept: 'application/json' } }) :
    c.post(`/posts/${own[i]}/like`))),
  ended.post(`/posts/${shared[0]}/like`, { csrf: goneCsrf }),
  users[6].post(`/posts/${shared[1]}/like`)], 500);
  const rs = await Promise.all(sent);
  for (let i = 0; i < N; i++) {
    assert.equal(rs[i].status, i === 3 ? 403 : i === 5 ? 200 : 303, `pgg${i}`);
    assert.equal(likesOf(own[i]), i === 3 ? 0 : 1, `pgg${i}'s like in SQL`);
  }
  assert.equal(rs[N].status, 303, 'the ended session is sent to log in');
  assert.match(rs[N].location, /^\/login/, 'the ended session is sent to log in');
  assert.equal(likesOf(shared[0]), 0, 'the ended session liked nothing');
  assert.equal(rs[N + 1].status, 303, 'a second like of one session in the queue');
  assert.equal(likesOf(shared[1]), 1, 'its like is kept');
  await users[6].post(`/posts/${shared[1]}/unlike`);
  assert.equal(JSON.parse(rs[5].text).likes, 1, 'the JSON answer counts its like');
  const made = await commits() - c0;
  assert.ok(made >= 1 && made < N - 1, `16 likes queued together: ${made} commits`);
  for (let i = 0; i < N; i++) {
    const page = await users[i].get(`/posts/${own[i]}`);
    assert.equal(pageCounters(page.text)[`post-likes|${own[i]}`], i === 3 ? 0 : 1, `pgg${i}'s post`);
  }
  await Promise.all(users.map((c, i) => (i === 3 ? null : c.post(`/posts/${own[i]}/unlike`))));
});

test('a group is a round trip a like and two more: its sessions, its outbox rows with its COMMIT', async (t) => {
  const c0 = await commits();
  const t0 = await trips();
  const s0 = await statements();
  const rs = await Promise.all(await queuedWhileStopped(writers(),
    () => users.map((c, i) => c.post(`/posts/${own[i]}/like`)), 500));
  const groups = await commits() - c0;
  const used = await trips() - t0;
  const ran = await statements() - s0;
  t.diagnostic(`${N} likes in ${groups} groups: ${ran} statements, ${used} round trips`);
  for (let i = 0; i < N; i++) {
    assert.equal(rs[i].status, 303, `pgg${i}`);
    assert.equal(likesOf(own[i]), 1, `pgg${i}'s like in SQL`);
  }
  assert.ok(groups < N / 2, `${N} likes queued together: ${groups} commits`);
  // a like's call; a group's sessions and its outbox rows (the savepoints,
  // BEGIN and COMMIT ride with them).  Where each like's outbox row was a
  // statement and a round trip of its own, this was two a like.  The
  // round trips may hold a writer's first use of a statement (its
  // prepare: three statements, four writers)
  assert.ok(ran <= N + 2 * groups, `${N} likes in ${groups} groups: ${ran} statements`);
  assert.ok(used <= ran + 12, `${N} likes in ${groups} groups: ${used} round trips`);
  for (let i = 0; i < N; i++) {
    const page = await users[i].get(`/posts/${own[i]}`);
    assert.equal(pageCounters(page.text)[`post-likes|${own[i]}`], 1, `pgg${i}'s post`);
  }
  await Promise.all(users.map((c, i) => c.post(`/posts/${own[i]}/unlike`)));
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('groups of four processes over the same posts: no deadlock, no count lost or doubled', async (t) => {
  const ROUNDS = 30;
  const d0 = deadlocks();
  const c0 = await commits();
  let actions = 0;
  const end = Date.now() + 90000;
  await Promise.all(users.map(async (c, i) => {
    // each user goes over the shared posts in an order of its own, liking
    // on even rounds and unliking on odd ones: groups hold several posts,
    // taken by different users in different orders
    for (let n = 0; n < ROUNDS && Date.now() < end; n++) {
      const p = shared[(i * 7 + n * (i % 2 ? 1 : shared.length - 1)) % shared.length];
      const like = Math.floor(n / shared.length) % 2 === 0;
      const r = await c.post(`/posts/${p}/${like ? 'like' : 'unlike'}`);
      assert.equal(r.status, 303, `pgg${i} round ${n}`);
      actions++;
    }
  }));
  assert.equal(actions, N * ROUNDS);
  const made = await commits() - c0;
  t.diagnostic(`${actions} actions, ${made} commits (${(actions / made).toFixed(1)} a commit)`);
  assert.equal(deadlocks() - d0, 0, 'PostgreSQL counted deadlocks');
  assert.equal(stack.log('social-writer').match(/runs again alone/g)?.length ?? 0, 0,
    'a group lost to another transaction');
  // the truth: likes rows against the page and the counters
  for (const p of shared) {
    const page = await users[0].get(`/posts/${p}`);
    assert.equal(pageCounters(page.text)[`post-likes|${p}`], likesOf(p), `post ${p}'s likes`);
  }
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A psql session of the test's own (lib/stack.mjs sqlSession()).
const session = () => sqlSession(stack);

test('a group that loses to another transaction runs its likes again alone', async () => {
  // two posts nobody likes since the first test, liked by a third user
  const [a, b] = [own[0], own[1]].sort((x, y) => x - y);
  const la = likesOf(a), lb = likesOf(b);
  const c = users[2];
  const d0 = deadlocks();
  // another session holds post b's row
  const s = session();
  s.send(`BEGIN; SELECT 1 FROM posts WHERE id = ${b} FOR UPDATE; \\echo held-b`);
  await s.until('held-b');
  // one writer takes both likes as one group (the others woken after it
  // took them): a's row, then it waits for b's
  const pids = writers();
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  let sent;
  try {
    sent = [c.post(`/posts/${b}/like`), c.post(`/posts/${a}/like`)];
    await sleep(400);
    process.kill(pids[0], 'SIGCONT');
    await sleep(300);
  } finally { for (const pid of pids) process.kill(pid, 'SIGCONT'); }
  await waitFor(() => stack.sqlite(
    "SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%tally_like%'") === '1', 10000, 10);
  // now the session wants a's row: a deadlock, found by the group's
  // backend, whose wait began first.  (b was queued first: had the group
  // run in arrival order, it would wait for b holding nothing, and there
  // would be no deadlock to count.)
  s.send(`UPDATE posts SET like_count = like_count WHERE id = ${a}; \\echo got-a`);
  await s.until('got-a', 15000);
  s.send('COMMIT; \\q');
  await s.end();
  const rs = await Promise.all(sent);
  assert.deepEqual(rs.map((r) => r.status), [303, 303], 'both likes answered as done');
  assert.equal(deadlocks() - d0, 1, 'one deadlock, as forced');
  assert.match(stack.log('social-writer'), /lost to another transaction: each runs again alone/);
  assert.equal(likesOf(a), la + 1, 'a liked once');
  assert.equal(likesOf(b), lb + 1, 'b liked once');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A post whose row another transaction holds (a writer stopped or cut
// off inside its transaction, an operator's session): the group's first
// like of it waits lock_timeout (5 s) and answers busy; its other likes
// of that post, next in the group's order, answer busy at once.  Each
// waited 5 s more: three likes made the group last 15 s, and nginx gave
// up on all of its requests at 10 s (504), the other post's like too.
test('likes of a post whose row another session holds: the group waits for it once, answers them busy, and keeps the rest', async () => {
  const p = own[12], q = own[14];
  assert.ok(q > p, 'the other post comes after in the group\'s order');
  const lp = likesOf(p), lq = likesOf(q);
  const s = session();
  s.send(`BEGIN; SELECT 1 FROM posts WHERE id = ${p} FOR UPDATE; \\echo held-p`);
  await s.until('held-p');
  let rs, ms;
  try {
    const pids = writers();
    for (const pid of pids) process.kill(pid, 'SIGSTOP');
    let sent, t0;
    const timed = (r) => r.then((x) => ({ ...x, end: Date.now() }));
    try {
      sent = [users[13], users[11], users[15]].map((c) => timed(c.post(`/posts/${p}/like`)));
      sent.push(timed(users[9].post(`/posts/${q}/like`)));
      await sleep(400);
      t0 = Date.now();
      process.kill(pids[0], 'SIGCONT');	// takes all four as one group
      await sleep(300);
    } finally { for (const pid of pids) process.kill(pid, 'SIGCONT'); }
    rs = await Promise.all(sent);
    ms = Date.now() - t0;
  } finally {
    s.send('ROLLBACK; \\q');
    await s.end();
  }
  assert.deepEqual(rs.map((r) => r.status), [503, 503, 503, 303], 'busy for the held post, done for the other');
  for (const r of rs.slice(0, 3)) assert.equal(r.headers.get('retry-after'), '2');
  assert.ok(ms >= 4500 && ms < 8500, `one wait for the held row, not one a like (${ms} ms)`);
  // one group: the other post's like, which waits for nothing, was
  // answered with the busy ones, after the first one's wait
  const ends = rs.map((r) => r.end);
  assert.ok(Math.max(...ends) - Math.min(...ends) < 1000, `answered together: ${ends.map((e) => e - Math.min(...ends))}`);
  assert.match(stack.log('social-writer'), /lock timeout|canceling statement due to lock timeout/i);
  assert.equal(likesOf(p), lp, 'nothing of the busy likes was kept');
  assert.equal(likesOf(q), lq + 1, 'the other post\'s like was');
  // the row free again, the likes pass, sent again as the busy answer
  // said (Retry-After: 2; until then the host takes the row as held,
  // store/rowheld.h)
  await sleep(2000);
  for (const c of [users[13], users[11], users[15]]) assert.equal((await c.post(`/posts/${p}/like`)).status, 303);
  assert.equal(likesOf(p), lp + 3);
  await Promise.all([users[13], users[11], users[15]].map((c) => c.post(`/posts/${p}/unlike`)));
  assert.equal((await users[9].post(`/posts/${q}/unlike`)).status, 303);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('a like waits for no users row: no foreign-key check locks the liker or the author', async () => {
  // another session holds the author's and the liker's users rows as a
  // change of a login would (FOR UPDATE); with the foreign keys of likes,
  // notifications and note_groups checked, the like's KEY SHARE locks
  // waited for it until lock_timeout, and the like failed
  const author = Number(stack.sqlite("SELECT id FROM users WHERE login = 'pgg4'"));
  const liker = Number(stack.sqlite("SELECT id FROM users WHERE login = 'pgg9'"));
  const p = own[4];
  const before = likesOf(p);
  const s = session();
  s.send(`BEGIN; SELECT 1 FROM users WHERE id IN (${author}, ${liker}) FOR UPDATE; \\echo held-users`);
  await s.until('held-users');
  try {
    const t0 = Date.now();
    const r = await users[9].post(`/posts/${p}/like`);
    assert.equal(r.status, 303);
    assert.ok(Date.now() - t0 < 2500, `the like took ${Date.now() - t0} ms`);
    assert.equal(likesOf(p), before + 1);
  } finally {
    s.send('ROLLBACK; \\q');
    await s.end();
  }
  const fks = stack.sqlite("SELECT COUNT(*) FROM pg_constraint WHERE contype = 'f' AND conrelid::regclass::text IN ('likes', 'notifications', 'note_groups')");
  assert.equal(fks, '0');
  await users[9].post(`/posts/${p}/unlike`);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// Two posts of users[owner], a before b, each liked by users[liker]:
// b's group of likes made first, so the groups' ids run against the
// posts'.  { author (owner's id), a, b, ga, gb (their groups) }.
async function groupsAgainstPosts(owner, liker, what) {
  const author = Number(stack.sqlite(`SELECT id FROM users WHERE login = 'pgg${owner}'`));
  const mine = [];
  for (const body of [`${what} a`, `${what} b`]) {
    const r = await users[owner].post('/posts', { body, publish: '1' });
    assert.equal(r.status, 303);
    mine.push(Number(r.location.split('/').pop()));
  }
  const [a, b] = mine.sort((x, y) => x - y);
  assert.equal((await users[liker].post(`/posts/${b}/like`)).status, 303);
  assert.equal((await users[liker].post(`/posts/${a}/like`)).status, 303);
  const group = (p) => Number(stack.sqlite(`SELECT id FROM note_groups WHERE user_id = ${author} AND kind = 'like' AND post_id = ${p}`));
  const [ga, gb] = [group(a), group(b)];
  assert.ok(gb < ga, `b's group (${gb}) before a's (${ga})`);
  return { author, a, b, ga, gb };
}

// Another session does what a group commit of a like of a, then one of
// b does: a's row and its group, then b's.  Between the two, start()
// sets off the transaction under test, which comes to wait for a lock
// (readerWaits()); the session then takes b's and commits.
async function commitAround({ a, b, ga, gb }, start) {
  const s = session();
  s.send(`BEGIN; SELECT 1 FROM posts WHERE id = ${a} FOR NO KEY UPDATE; UPDATE note_groups SET size = size WHERE id = ${ga}; \\echo held-a`);
  try {
    await s.until('held-a');
    start();
    await waitFor(() => readerWaits() === '1', 10000, 10);
    s.send(`SELECT 1 FROM posts WHERE id = ${b} FOR NO KEY UPDATE; UPDATE note_groups SET size = size WHERE id = ${gb}; \\echo got-b`);
    await s.until('got-b', 15000);
  } finally {
    s.send('COMMIT; \\q');
    await s.end();
  }
}

// A reconciliation run (tallyctl reconcile), stopped at the fault point
// reconcile-rows: drift found in a chunk, nothing locked yet (an open
// transaction would hold the families' steps before: their outbox drain).
async function stoppedRepair() {
  faults.arm(stack, 'reconcile-rows');
  const p = spawn(path.join(BIN, 'tallyctl'), ['reconcile'], { env: stack.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { out += d; });
  const run = new Promise((r) => p.on('exit', (code) => r({ code, out })));
  await waitFor(() => procState(p.pid) === 'T', 60000, 20);
  return { p, run };
}

test('a repair that loses a deadlock to another transaction runs again: the run does not fail', async () => {
  const { a, b, gb } = await groupsAgainstPosts(14, 15, 'retry');
  stack.sqlite(`UPDATE note_groups SET size = size + 2 WHERE id = ${gb}`);
  const d0 = deadlocks();
  const { p, run } = await stoppedRepair();
  // a transaction that takes the posts the other way round: b first;
  // the repair holds a (shared) and waits for b; the session then asks
  // for a.  The repair, waiting longer, finds the deadlock and loses it.
  const s = session();
  try {
    s.send(`BEGIN; SELECT 1 FROM posts WHERE id = ${b} FOR NO KEY UPDATE; \\echo held-b`);
    await s.until('held-b');
    process.kill(p.pid, 'SIGCONT');
    await waitFor(() => readerWaits() === '1', 10000, 10);
    s.send(`SELECT 1 FROM posts WHERE id = ${a} FOR NO KEY UPDATE; \\echo got-a`);
    await s.until('got-a', 15000);
  } finally {
    if (procState(p.pid) === 'T') process.kill(p.pid, 'SIGCONT');
    s.send('COMMIT; \\q');
    await s.end();
  }
  const { code, out } = await run;
  assert.equal(deadlocks() - d0, 1, `one deadlock, the repair's: ${s.out()}`);
  assert.equal(code, 0, `tallyctl reconcile: ${out}`);
  assert.match(out, /lost to another transaction, run again/);
  assert.equal(stack.sqlite(`SELECT size FROM note_groups WHERE id = ${gb}`),
    stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE group_id = ${gb}`), 'the drifted group repaired');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('a read-all takes its posts in the order a group commit does: no deadlock with one between two of the reader\'s groups', async () => {
  const reader = users[12];
  const { author, a, b, ga, gb } = await groupsAgainstPosts(12, 13, 'read-all');
  const d0 = deadlocks();
  // the read-all waits: for a's row (or, taking its groups by their
  // ids, holding b's group and waiting for a's)
  let read;
  await commitAround({ a, b, ga, gb }, () => { read = reader.post('/notifications/read-all'); });
  assert.equal((await read).status, 303);
  assert.equal(deadlocks() - d0, 0, 'no deadlock');
  assert.doesNotMatch(stack.log('notify'), /lost to another transaction/);
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id = ${author} AND is_read = 0`), '0');
  assert.equal(stack.sqlite(`SELECT COALESCE(SUM(unread), 0) FROM note_groups WHERE user_id = ${author}`), '0');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('a read of one group takes its post\'s row first: no deadlock with a group that withdraws two of its notifications', async () => {
  // one post of the reader's, liked by two users: one group, two unread
  const reader = users[3];
  const author = Number(stack.sqlite("SELECT id FROM users WHERE login = 'pgg3'"));
  const r = await reader.post('/posts', { body: 'read one group', publish: '1' });
  assert.equal(r.status, 303);
  const p = Number(r.location.split('/').pop());
  for (const u of [users[14], users[15]]) assert.equal((await u.post(`/posts/${p}/like`)).status, 303);
  // by their place in the table, which a scan of it follows, as one by
  // id does on these fresh rows: the read takes na first
  const ids = stack.sqlite(`SELECT id FROM notifications WHERE user_id = ${author} AND post_id = ${p} ORDER BY ctid`).split('\n').map(Number);
  assert.equal(ids.length, 2);
  const [na, nb] = ids;
  const d0 = deadlocks();
  // another session does what a group of the two unlikes does, the
  // newer one's first: the post's row, then each notification
  const s = session();
  s.send(`BEGIN; SELECT 1 FROM posts WHERE id = ${p} FOR NO KEY UPDATE; DELETE FROM notifications WHERE id = ${nb}; \\echo held-b`);
  await s.until('held-b');
  let read;
  try {
    read = reader.post(`/notifications/${na}/read`);
    // the read waits: for the post's row (or, holding the older
    // notification, for the newer one)
    await waitFor(() => readerWaits() === '1', 10000, 10);
    s.send(`DELETE FROM notifications WHERE id = ${na}; \\echo got-a`);
    await s.until('got-a', 15000);
  } finally {
    s.send('ROLLBACK; \\q');	// the unlikes were only played
    await s.end();
  }
  assert.equal((await read).status, 303);
  assert.equal(deadlocks() - d0, 0, 'no deadlock');
  assert.doesNotMatch(stack.log('notify'), /lost to another transaction/);
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE id IN (${na}, ${nb}) AND is_read = 1`), '2');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('a read-all reads only notifications of the posts it holds: one of another post that arrives while it waits stays unread', async () => {
  const reader = users[5];
  const author = Number(stack.sqlite("SELECT id FROM users WHERE login = 'pgg5'"));
  const mine = [];
  for (const body of ['held post', 'later post']) {
    const r = await reader.post('/posts', { body, publish: '1' });
    assert.equal(r.status, 303);
    mine.push(Number(r.location.split('/').pop()));
  }
  const [a, c] = mine;
  assert.equal((await users[6].post(`/posts/${a}/like`)).status, 303);
  assert.equal((await reader.post('/notifications/read-all')).status, 303);
  assert.equal((await users[7].post(`/posts/${a}/like`)).status, 303);
  // another session holds a's row: the read-all waits for it
  const s = session();
  s.send(`BEGIN; SELECT 1 FROM posts WHERE id = ${a} FOR NO KEY UPDATE; \\echo held-a`);
  await s.until('held-a');
  let read;
  try {
    read = reader.post('/notifications/read-all');
    await waitFor(() => readerWaits() === '1', 10000, 10);
    // meanwhile a like of c, a post it does not hold, notifies
    assert.equal((await users[7].post(`/posts/${c}/like`)).status, 303);
  } finally {
    s.send('COMMIT; \\q');
    await s.end();
  }
  assert.equal((await read).status, 303);
  const unread = (p) => stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id = ${author} AND post_id = ${p} AND is_read = 0`);
  assert.equal(unread(a), '0', 'the like of a is read');
  assert.equal(unread(c), '1', 'the like of c, which came after, is not');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('a repair of notification groups takes their posts first: no deadlock with a group commit between two of its groups', async () => {
  // b's group drifted, so that the repair locks its chunk
  const { a, b, ga, gb } = await groupsAgainstPosts(14, 15, 'repair');
  stack.sqlite(`UPDATE note_groups SET size = size + 3 WHERE id = ${gb}`);
  const d0 = deadlocks();
  // the repair stops where it found the drift
  const { p, run } = await stoppedRepair();
  // the repair goes on and waits: for a's row (or, taking the groups by
  // their ids, holding b's group and waiting for a's)
  try {
    await commitAround({ a, b, ga, gb }, () => process.kill(p.pid, 'SIGCONT'));
  } finally {
    if (procState(p.pid) === 'T') process.kill(p.pid, 'SIGCONT');
  }
  const { code, out } = await run;
  assert.equal(code, 0, `tallyctl reconcile: ${out}`);
  assert.equal(deadlocks() - d0, 0, 'no deadlock');
  assert.equal(stack.sqlite(`SELECT size FROM note_groups WHERE id = ${gb}`),
    stack.sqlite(`SELECT COUNT(*) FROM notifications WHERE group_id = ${gb}`), 'the drifted group repaired');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});
