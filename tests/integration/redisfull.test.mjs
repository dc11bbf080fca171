// redisfull.test.mjs -- Redis up, answering at once, and refusing every
// write: its memory past maxmemory under the noeviction policy (a full
// Redis whose operator chose not to lose keys), each write command
// answers "-OOM command not allowed when used memory > 'maxmemory'".
// Not Redis down (degraded.test.mjs: nothing answers, calls time out):
// here every reply comes, and it is an error.  What must hold is the
// same: each action commits to SQLite and answers as usual, the pages
// show what was committed, and once Redis takes writes again nothing is
// missing: counts, feeds and badges exact against SQLite.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startStack, waitFor, clusterNodes, redisNode, childrenOf, procState, whileJobsStopped } from '../lib/stack.mjs';
import { compareAll, faults, pageCounters, redisName } from '../lib/counts.mjs';
import { newUser, postIds } from '../lib/social.mjs';
import { openStream } from '../lib/stream.mjs';

let stack;
before(async () => {
  stack = await startStack({ env: { TALLY_FAULT: 'settle-backlog:stop:1,action-delta:kill:1,action-backlog:kill:1' } });
  for (const f of ['settle-backlog', 'action-delta', 'action-backlog']) faults.disarm(stack, f, 1);
});
after(async () => {
  try { config('maxmemory', '0'); } catch { /* stopped */ }
  await stack?.stop();
});

// CONFIG SET on the server, or on every node of a Redis Cluster
function config(name, value) {
  const nodes = clusterNodes(stack.runDir);
  if (!nodes) return stack.redis('CONFIG', 'SET', name, value);
  for (const n of nodes) redisNode(stack.runDir, n, ['CONFIG', 'SET', name, value]);
  return 'OK';
}

async function ok303(p, what) {
  const r = await p;
  assert.equal(r.status, 303, `${what}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

async function page(c, p) {
  const r = await c.get(p);
  assert.equal(r.status, 200, `GET ${p}: ${r.status} ${r.text.slice(0, 300)}`);
  return r;
}

async function publish(c, body) {
  const r = await ok303(c.post('/posts', { body, topic: '', publish: '1' }), 'POST /posts');
  return Number(r.location.match(/^\/posts\/(\d+)$/)[1]);
}

const badges = async (c) => JSON.parse((await page(c, '/badges.json')).text);

test('Redis refusing every write (maxmemory, noeviction): actions commit and show, and once it takes writes again every count, feed and badge is exact', async () => {
  const [a, b, c] = await Promise.all(['rfa', 'rfb', 'rfc'].map((l) => newUser(stack, l)));
  const p1 = await publish(a.c, 'before Redis filled up');
  await ok303(b.c.post('/follow/rfa'), 'follow');
  for (const u of [a, b, c]) {
    await page(u.c, '/feed');
    await page(u.c, `/posts/${p1}`);
    await page(u.c, '/u/rfa');
    await badges(u.c);
  }
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  const before = await badges(a.c);

  config('maxmemory-policy', 'noeviction');
  config('maxmemory', '1');
  let p2;
  try {
    assert.match(stack.redis('SET', '{rf}:probe', '1'), /OOM/, 'Redis refuses writes');
    // actions: each answered as usual, each committed
    await ok303(b.c.post(`/posts/${p1}/like`), 'like');
    await ok303(c.c.post(`/posts/${p1}/like`), 'like');
    await ok303(c.c.post('/follow/rfa'), 'follow');
    await ok303(c.c.post(`/posts/${p1}/comments`, { body: 'written while Redis was full' }), 'comment');
    p2 = await publish(a.c, 'while Redis was full');
    assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id = ${p1}`)), 2);
    // the pages show what was committed
    const post = pageCounters((await page(a.c, `/posts/${p1}`)).text);
    assert.equal(post[`post-likes|${p1}`], 2, 'the likes show while Redis is full');
    assert.equal(post[`post-comments|${p1}`], 1, 'the comment shows');
    const prof = pageCounters((await page(c.c, '/u/rfa')).text);
    assert.equal(prof['followers|rfa'], 2, 'the follow shows');
    // and so do the author's badges: two likes, a follow and a comment
    assert.equal((await badges(a.c)).notifications, before.notifications + 4, 'rfa\'s unread badge');
    assert.equal(pageCounters((await page(a.c, '/feed')).text)['unread-notifications|'], before.notifications + 4,
      'the badge in the page\'s header');
    // and the health check says so
    const h = await fetch(`${stack.base}/healthz`);
    assert.equal(h.status, 503);
    assert.equal(await h.text(), 'redis');
  } finally {
    config('maxmemory', '0');
  }
  // Redis takes writes again: what it refused reaches it
  await waitFor(async () => {
    stack.tallyctl('flush');
    return compareAll(stack).length === 0;
  }, 30000, 1000);
  assert.deepEqual(compareAll(stack), []);
  await waitFor(async () => (await fetch(`${stack.base}/healthz`)).status === 200, 10000, 250);
  for (const u of [b, c]) {
    await waitFor(async () => postIds((await page(u.c, '/feed')).text).includes(p2), 20000, 500);
  }
  const after = await badges(a.c);
  assert.equal(after.notifications, before.notifications + 4, 'two likes, a follow and a comment on rfa\'s badge');
  const post = pageCounters((await page(b.c, `/posts/${p1}`)).text);
  assert.equal(post[`post-likes|${p1}`], 2);
  assert.equal(post[`post-comments|${p1}`], 1);
});

// A stream open while Redis refuses writes would stay open and silent:
// no change can be queued for it, and tally-live's take is a read Redis
// still answers.  It is closed as when Redis is down (its page then
// polls every 5 s, not every 60), new ones are refused, and once Redis
// takes writes again a stream opens and hears changes.
test('Redis refusing writes closes the live streams and refuses new ones; taking writes again, a stream opens and hears', async () => {
  const [a, b] = await Promise.all(['rfla', 'rflb'].map((l) => newUser(stack, l)));
  const p = await publish(a.c, 'live while full');
  const s = await openStream(stack, a.c);
  assert.equal(s.status, 200);
  assert.ok(await s.next(() => true, 0, 2000), 'a first event');
  config('maxmemory-policy', 'noeviction');
  config('maxmemory', '1');
  try {
    assert.match(stack.redis('SET', '{rf}:probe', '1'), /OOM/, 'Redis refuses writes');
    await ok303(b.c.post(`/posts/${p}/like`), 'like');
    await waitFor(() => s.ended, 5000, 50).catch(() => {});
    assert.ok(s.ended, 'the stream was closed: its page polls');
    assert.equal((await openStream(stack, a.c)).status, 503, 'a new stream is refused');
  } finally {
    config('maxmemory', '0');
    s.close();
  }
  let again;
  await waitFor(async () => {
    again?.close();
    again = await openStream(stack, a.c);
    return again.status === 200;
  }, 20000, 500);
  const first = await again.next(() => true, 0, 2000);
  assert.ok(first, 'the stream opened again has its first event');
  const from = again.events.length;
  await ok303(b.c.post(`/posts/${p}/unlike`), 'unlike');
  assert.ok(await again.next((d) => d.notifications === first.data.notifications - 1, from, 3000), 'and hears a change');
  again.close();
});

// The worker's jobs process (it settles the backlog), when stopped.
function stoppedJobs() {
  const w = stack.pidOf('tally-worker');
  return (w ? childrenOf(w).map((c) => c.pid) : []).find((p) => procState(p) === 'T');
}

// While Redis refuses writes, a counter is computed: the counters table,
// the backlog and Redis's unflushed part.  Once Redis takes writes again,
// the worker's settle puts the backlog's deltas in Redis (its
// correction), then deletes their rows; the host still takes Redis as
// refusing for a few seconds, and a page read between the two counted
// those deltas twice (a like showed 2).  The correction now keeps the
// version of the row it holds beside the bucket (settle.c), and the
// computed value leaves that row out.  Forced: the settle stops between
// the two (fault point settle-backlog), and the pages are read then.
test('a page read while a backlog Redis refused is being settled counts each refused like once', async () => {
  const [a, b, c] = await Promise.all(['rsa', 'rsb', 'rsc'].map((l) => newUser(stack, l)));
  const p = await publish(a.c, 'liked while Redis was full');
  await page(b.c, '/u/rsa');
  await page(c.c, `/posts/${p}`);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  config('maxmemory-policy', 'noeviction');
  config('maxmemory', '1');
  try {
    assert.match(stack.redis('SET', '{rf}:probe', '1'), /OOM/, 'Redis refuses writes');
    await ok303(b.c.post(`/posts/${p}/like`), 'like');
    await ok303(c.c.post(`/posts/${p}/like`), 'like');
    assert.equal(pageCounters((await page(c.c, `/posts/${p}`)).text)[`post-likes|${p}`], 2);
    faults.arm(stack, 'settle-backlog');
  } finally {
    config('maxmemory', '0');
  }
  // the settle of the first family (the likes an author's posts had)
  // stops between its correction and its delete
  const jobs = await waitFor(stoppedJobs, 15000, 20);
  try {
    assert.equal(Number(stack.sqlite("SELECT COUNT(*) FROM counter_backlog WHERE name = 'user_likes'")), 1,
      'the likes the author had still in the backlog');
    const h = await fetch(`${stack.base}/healthz`);
    assert.equal(h.status, 503, 'the host still takes Redis as refusing: the pages compute their counts');
    const prof = pageCounters((await page(b.c, '/u/rsa')).text);
    assert.equal(prof['likes|rsa'], 2, 'the likes rsa\'s posts had, each counted once');
    assert.equal(pageCounters((await page(a.c, `/posts/${p}`)).text)[`post-likes|${p}`], 2, 'the post\'s likes');
  } finally {
    process.kill(jobs, 'SIGCONT');
  }
  await waitFor(() => Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog')) === 0, 20000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  // the marks go with the rows
  if (!clusterNodes(stack.runDir)) assert.equal(stack.redis('KEYS', '*:settled'), '', 'no settle mark left');
});

// tallyctl flush settles the backlog itself (count/backlog.h): what
// Redis refused is in the counters table when it returns, not once the
// worker's jobs (every 2 s) get to it.  The jobs are stopped here: only
// the flush can have settled it.
test('tallyctl flush settles what waits in the backlog before it returns', async () => {
  const [a, b] = await Promise.all(['rka', 'rkb'].map((l) => newUser(stack, l)));
  const p = await publish(a.c, 'liked while Redis was full, flushed by hand');
  stack.tallyctl('flush');
  const backlog = () => Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog'));
  await waitFor(() => backlog() === 0, 20000, 100);
  await whileJobsStopped(stack, async () => {
    config('maxmemory-policy', 'noeviction');
    config('maxmemory', '1');
    try {
      await ok303(b.c.post(`/posts/${p}/like`), 'like');
      await ok303(b.c.post('/follow/rka'), 'follow');
    } finally {
      config('maxmemory', '0');
    }
    assert.ok(backlog() > 0, 'Redis refused the deltas: they wait in the backlog');
    stack.tallyctl('flush');
    assert.equal(backlog(), 0, 'the flush settled them');
    assert.deepEqual(compareAll(stack), []);
  });
});

// On a Redis Cluster one node may fill up while the others take writes.
// A follow's deltas go to two buckets, the follower's and the followee's,
// often on two nodes: when one took its part and the other refused, the
// whole outbox row went to the backlog, and the part Redis held was
// counted twice (a follow showed 2 following) until the row was settled.
// Now only the deltas Redis did not take go to the backlog.
// A follower x and a followee y whose following and followers counters
// are on two masters of the cluster (xn, yn).
async function twoNodes(nodes, tag) {
  // the master that holds a key (a node that does not answers MOVED)
  const owner = (key) => {
    const m = redisNode(stack.runDir, nodes[0], ['EXISTS', key]).match(/MOVED \d+ (\S+)/);
    return m ? m[1] : nodes[0];
  };
  const x = await newUser(stack, `${tag}x`);
  const xn = owner(redisName('user_following', x.id).hash);
  let y;
  for (let i = 0; i < 30; i++) {
    y = await newUser(stack, `${tag}y${i}`);
    if (owner(redisName('user_followers', y.id).hash) !== xn) break;
  }
  const yn = owner(redisName('user_followers', y.id).hash);
  assert.notEqual(yn, xn, 'the follower\'s and the followee\'s counters on two nodes');
  return { x, y, xn, yn };
}

test('a follow whose followee\'s node refuses writes and follower\'s takes them: each count once (Redis Cluster)', async (t) => {
  const nodes = clusterNodes(stack.runDir);
  if (!nodes) { t.skip('a Redis Cluster\'s only'); return; }
  const { x, y, xn, yn } = await twoNodes(nodes, 'rp');
  await page(x.c, '/u/rpx');
  await page(x.c, `/u/${y.login}`);
  stack.tallyctl('flush');
  redisNode(stack.runDir, yn, ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
  redisNode(stack.runDir, yn, ['CONFIG', 'SET', 'maxmemory', '1']);
  try {
    await ok303(x.c.post(`/follow/${y.login}`), 'follow');
    assert.equal(Number(stack.sqlite("SELECT COUNT(*) FROM counter_backlog WHERE name = 'user_following'")), 0,
      'what Redis took is not in the backlog');
    assert.equal(Number(stack.sqlite("SELECT COUNT(*) FROM counter_backlog WHERE name = 'user_followers'")), 1,
      'what it refused is');
    assert.equal(pageCounters((await page(y.c, '/u/rpx')).text)['following|rpx'], 1, 'the follower\'s following, once');
    assert.equal(pageCounters((await page(x.c, `/u/${y.login}`)).text)[`followers|${y.login}`], 1,
      'the followee\'s followers');
  } finally {
    redisNode(stack.runDir, yn, ['CONFIG', 'SET', 'maxmemory', '0']);
  }
  await waitFor(() => Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog')) === 0, 20000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// The worker's drain sends the outbox rows no action finished, oldest
// first; once Redis refuses one it sends no more in that pass, and moves
// the later rows to the backlog.  A later row that its action had sent in
// part (one node took the follower's part, the other refused the
// followee's) and that died before it moved the rest: what the node took
// must stay out of the backlog, or the follower's following shows 2.
// Forced: the worker stopped, w's follow of y killed before it sends
// anything (action-delta), x's follow of y killed after its send
// (action-backlog), then the worker's one pass meets both.  Between
// them, rows that change nothing (each delta of w's row, then its
// opposite) put x's row in the pass's second batch of 2,000 (outbox.c:
// DRAIN_ROWS): the drain read what the buckets hold only while no row
// of the pass had failed, and moved a later batch's rows whole.
const FILL = 1999;
test('a drain that meets a refused row first leaves out of the backlog what Redis holds of a later one, in its batch or a later one (Redis Cluster)', async (t) => {
  const nodes = clusterNodes(stack.runDir);
  if (!nodes) { t.skip('a Redis Cluster\'s only'); return; }
  const { x, y, yn } = await twoNodes(nodes, 'dr');
  const w = await newUser(stack, 'drw');
  for (const u of [x, w]) await page(u.c, `/u/${y.login}`);
  await page(y.c, `/u/${x.login}`);
  stack.tallyctl('flush');
  const pending = () => Number(stack.sqlite("SELECT COUNT(*) FROM counter_outbox WHERE deltas <> ''"));
  assert.equal(pending(), 0);
  // FILL rows after w's, each its deltas and their opposites: no count moves
  const fill = () => {
    const [at, deltas] = stack.sqlite("SELECT at || '|' || deltas FROM counter_outbox WHERE deltas <> '' ORDER BY id DESC LIMIT 1").split('|');
    const none = deltas.split(';').flatMap((d) => {
      const f = d.split(' ');
      return [d, [f[0], f[1], f[2], String(-Number(f[3])), ...f.slice(4)].join(' ')];
    }).join(';');
    stack.sqlite(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${FILL}) ` +
      `INSERT INTO counter_outbox(at, deltas) SELECT ${at}, '${none}' FROM n`);
  };
  const worker = stack.pidOf('tally-worker');
  redisNode(stack.runDir, yn, ['CONFIG', 'SET', 'maxmemory-policy', 'noeviction']);
  redisNode(stack.runDir, yn, ['CONFIG', 'SET', 'maxmemory', '1']);
  process.kill(worker, 'SIGSTOP');
  let stopped = true;
  try {
    for (const [u, f] of [[w, 'action-delta'], [x, 'action-backlog']]) {
      if (u === x) fill();
      faults.arm(stack, f);
      // the writer kills itself: nginx answers 502, the follow committed
      // (a 502 before it fired: the writer killed before not yet back)
      for (let i = 0; i < 100 && faults.fired(stack, f) === 0; i++) {
        const r = await u.c.post(`/follow/${y.login}`);
        assert.ok([502, 303].includes(r.status), `follow: ${r.status}`);
        if (faults.fired(stack, f) === 0) await new Promise((res) => setTimeout(res, 100));
      }
      assert.equal(faults.fired(stack, f), 1);
    }
    assert.equal(pending(), 2 + FILL, 'both rows (and the filler) left to the drain');
    assert.equal(Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog')), 0);
    process.kill(worker, 'SIGCONT');
    stopped = false;
    await waitFor(() => pending() === 0, 20000, 100);
    assert.equal(Number(stack.sqlite(
      `SELECT COUNT(*) FROM counter_backlog WHERE name = 'user_following' AND key = '${x.id}'`)), 0,
      'x\'s following, which its node took, is not in the backlog');
    assert.equal(pageCounters((await page(y.c, `/u/${x.login}`)).text)[`following|${x.login}`], 1,
      'x\'s following, once');
    assert.equal(pageCounters((await page(x.c, `/u/${y.login}`)).text)[`followers|${y.login}`], 2,
      'y\'s followers: both follows');
  } finally {
    if (stopped) process.kill(worker, 'SIGCONT');
    redisNode(stack.runDir, yn, ['CONFIG', 'SET', 'maxmemory', '0']);
  }
  await waitFor(() => Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog')) === 0, 20000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});
