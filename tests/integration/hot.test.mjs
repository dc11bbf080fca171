// hot.test.mjs -- counters repaired while they stay busy (settle.h: a
// fence per key), against a real stack:
//  - drift planted on six posts' like counters (+3 in the SQL counters
//    table, +5 in Redis) while 12 clients like and unlike those posts
//    without pause for the whole run: the run reports exactly the six as
//    wrong and fixed, and right after the churn stops and one flush every
//    count equals its recount, with no second run;
//  - Redis emptied (FLUSHALL) in the middle of such a storm: within 10 s
//    of the storm's end every count of every page equals its recount,
//    with no operator step;
//  - a reconciliation held at a fault point for 10 s under a like load:
//    the worker goes on flushing (its jobs process holds the run), every
//    like reaches SQLite within 2 s;
//  - a counter one short before a run, moved by an action between the
//    run's read of the truth and its read of Redis (fault point
//    reconcile-loaded): the run still finds it and fixes it.
// The run is stopped (fault point reconcile-fix, SIGSTOP) between its
// recount and its correction, 250 ms each time in the first test: every
// busy key moves in that window, so a correction that gave up on a key
// that moved would leave the planted drift.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import fs from 'node:fs';
import { startStack, Client, sleep, waitFor, childrenOf, whileWorkerStopped, procState } from '../lib/stack.mjs';
import { bucketOf, compareAll, faults, ownerOf, pageCounters, redisName } from '../lib/counts.mjs';
import { likeChurn as churn, stormSetup } from '../lib/storm.mjs';

let stack;
const q = (sql) => stack.sqlite(sql);
const num = (sql) => Number(stack.sqlite(sql));
const ACTIVE = "SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued', 'running')";
const FIRES = 1000;
// From now on the fault point fires k times.
const allow = (k) => faults.disarm(stack, 'reconcile-fix', FIRES - k);

// The worker's jobs process (it executes the runs), when stopped.
function stoppedJobs() {
  const w = stack.pidOf('tally-worker');
  return (w ? childrenOf(w).map((c) => c.pid) : []).find((p) => procState(p) === 'T');
}
// Lets every stop at the fault point go on after ms, until the returned
// function is called.
function releaser(ms) {
  let on = true;
  const done = (async () => {
    while (on) {
      const p = stoppedJobs();
      if (p) { await sleep(ms); process.kill(p, 'SIGCONT'); }
      await sleep(10);
    }
  })();
  return async () => { on = false; await done; };
}

before(async () => {
  stack = await startStack({
    env: {
      TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400',
      TALLY_FAULT: `reconcile-fix:stop:${FIRES},view-delta:stop:1,settle-backlog:stop:1,reconcile-loaded:stop:1,pcache-rebuild:stop:1`,
    },
    disarmed: { 'reconcile-loaded': 1 },	// every run reaches it
  });
  faults.disarm(stack, 'reconcile-fix', FIRES);
  faults.disarm(stack, 'view-delta', 1);
  faults.disarm(stack, 'settle-backlog', 1);
  faults.disarm(stack, 'pcache-rebuild', 1);
  await waitFor(() => stack.redis('GET', '{tally}:gen') === '1' && num(ACTIVE) === 0, 40000, 100);
  stack.tallyctl('flush');
});
after(async () => { await stack?.stop(); });

// n users (stormSetup: four posts by the first four), and nposts posts.
async function people(prefix, n, nposts) {
  const { users, posts } = await stormSetup(stack, prefix, n);
  for (let i = posts.length; i < nposts; i++) {
    const r = await users[i % n].post('/posts', { body: `${prefix} busy post ${i}`, publish: '1' });
    assert.equal(r.status, 303);
    posts.push(Number(r.location.split('/').pop()));
  }
  return { users, posts: posts.slice(0, nposts) };
}

async function adminClient() {
  const admin = new Client(stack.base);
  assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
  await admin.get('/admin/reconcile');
  return admin;
}

// The counts a post's page and its author's profile show, against the
// recount.
async function pagesAgainstTruth(viewer, posts) {
  const bad = [];
  for (const p of posts) {
    const c = pageCounters((await viewer.get(`/posts/${p}`)).text);
    const t = num(`SELECT COUNT(*) FROM likes WHERE post_id=${p}`);
    if (c[`post-likes|${p}`] !== t) bad.push(`post ${p}: page ${c[`post-likes|${p}`]} truth ${t}`);
    const author = q(`SELECT u.login || '|' || u.id FROM posts p JOIN users u ON u.id=p.user_id WHERE p.id=${p}`).split('|');
    const prof = pageCounters((await viewer.get(`/u/${author[0]}`)).text);
    const tl = num(`SELECT COUNT(*) FROM likes l JOIN posts p ON p.id=l.post_id WHERE p.user_id=${author[1]} AND p.status=1 AND p.is_deleted=0`);
    if (prof[`likes|${author[0]}`] !== tl) bad.push(`${author[0]}: page likes ${prof[`likes|${author[0]}`]} truth ${tl}`);
  }
  return bad;
}

test('drift on six busy posts, liked and unliked by 12 clients for the whole run: one run fixes exactly those, counts exact after one flush', async (t) => {
  const { users, posts } = await people('hb', 12, 6);
  const viewer = users[0];
  // live values loaded, so that Redis can be planted too
  for (const p of posts) await viewer.get(`/posts/${p}`);
  const load = churn(users, posts);
  await waitFor(() => load.count() > 60, 20000, 50);
  // planted behind tally's back: +3 in SQL's counters, +5 in Redis
  for (const p of posts) {
    q(`INSERT INTO counters(name, key, value) VALUES ('post_likes', '${p}', 3)
       ON CONFLICT(name, key) DO UPDATE SET value = value + 3`);
    const n = redisName('post_likes', p, ownerOf(stack, p));
    stack.redis('HINCRBY', n.hash, n.field, '5');
  }
  const admin = await adminClient();
  const before = load.count();
  allow(12);
  const release = releaser(250);
  const r = await admin.post('/admin/reconcile', {});
  assert.equal(r.status, 303);
  const id = num('SELECT max(id) FROM reconcile_runs');
  await waitFor(() => ['done', 'failed'].includes(q(`SELECT state FROM reconcile_runs WHERE id=${id}`)), 60000, 100);
  const during = load.count() - before;
  const actions = await load.stop();
  await release();
  t.diagnostic(`the run stopped ${faults.fired(stack, 'reconcile-fix') - (FIRES - 12)} times at reconcile-fix`);
  allow(0);
  assert.equal(q(`SELECT state FROM reconcile_runs WHERE id=${id}`), 'done');
  assert.ok(during >= 20, `the clients went on during the run (${during} actions)`);
  const rep = Object.fromEntries(JSON.parse(q(`SELECT report FROM reconcile_runs WHERE id=${id}`)).map((f) => [f.family, f]));
  t.diagnostic(`${actions} actions; ${during} while the run ran`);
  assert.equal(rep.post_likes.wrong, 6, JSON.stringify(rep.post_likes));
  assert.equal(rep.post_likes.fixed, 6);
  assert.equal(rep.post_likes.queued, 0);
  for (const f of Object.values(rep)) {
    if (f.family !== 'post_likes') assert.equal(f.wrong, 0, `${f.family}: ${JSON.stringify(f)}`);
  }
  // the page agrees at once, before any flush
  assert.deepEqual(await pagesAgainstTruth(viewer, posts), []);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  assert.equal(num('SELECT COUNT(*) FROM counter_backlog'), 0);
});

test('Redis emptied during a like storm: within 10 s of its end every page shows the recount, no operator step', async (t) => {
  const { users, posts } = await people('hf', 12, 4);
  const viewer = users[0];
  const load = churn(users, posts);
  await waitFor(() => load.count() > 60, 20000, 50);
  stack.redis('FLUSHALL');
  const emptied = load.count();
  // the storm goes on while the worker finds Redis empty and repairs
  await sleep(8000);
  const actions = await load.stop();
  t.diagnostic(`${actions} actions, ${actions - emptied} after FLUSHALL`);
  const end = Date.now();
  let last;
  await waitFor(async () => {
    last = [...await pagesAgainstTruth(viewer, posts), ...compareAll(stack)];
    return last.length === 0;
  }, 10000, 250).catch(() => assert.fail(`10 s after the storm: ${last.join('; ')}`));
  t.diagnostic(`exact ${Date.now() - end} ms after the storm`);
});

test('a reconciliation held 10 s at a fault point under a like load: the worker flushes on (every like in SQLite within 2 s)', async (t) => {
  const { users, posts } = await people('hh', 8, 4);
  stack.tallyctl('flush');
  // a candidate for the run to settle (and so to stop at the fault point)
  q(`INSERT INTO counters(name, key, value) VALUES ('post_likes', '${posts[0]}', 2)
     ON CONFLICT(name, key) DO UPDATE SET value = value + 2`);
  const load = churn(users.slice(0, 6), posts);
  const admin = await adminClient();
  allow(1);
  assert.equal((await admin.post('/admin/reconcile', {})).status, 303);	// the worker's
  const jobs = await waitFor(stoppedJobs, 20000, 20);
  const held = Date.now();
  // probes: a fresh post liked once; the time until SQLite's counters
  // table holds the like is the flush lag
  const lags = [];
  const prober = users[7];
  while (Date.now() - held < 8500) {
    const r = await users[6].post('/posts', { body: `probe ${lags.length}`, publish: '1' });
    const p = Number(r.location.split('/').pop());
    assert.equal((await prober.post(`/posts/${p}/like`)).status, 303);
    const at = Date.now();
    await waitFor(() => num(`SELECT coalesce(max(value), 0) FROM counters WHERE name='post_likes' AND key='${p}'`) === 1, 8000, 20);
    lags.push(Date.now() - at);
  }
  const stillHeld = q("SELECT state FROM reconcile_runs ORDER BY id DESC LIMIT 1");
  assert.equal(procState(jobs), 'T', 'the run is still held');
  await sleep(Math.max(0, 10000 - (Date.now() - held)));
  process.kill(jobs, 'SIGCONT');
  await load.stop();
  t.diagnostic(`flush lags while the run was held (ms): ${lags.join(' ')}`);
  assert.equal(stillHeld, 'running', 'the run was held the whole time');
  assert.ok(lags.length >= 3, `${lags.length} probes`);
  // the flush every second, and a busy machine's delays; the run, held
  // 10 s, once held the flush as long
  assert.ok(Math.max(...lags) < 5000, `flush lag ${Math.max(...lags)} ms`);
  await waitFor(() => num(ACTIVE) === 0, 30000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// The run compares a recount read at one moment with Redis read at
// another.  A counter one short whose author posts in between looks
// right at that comparison (the truth without the post, Redis with it);
// the run must still find it: a key that moved between the two reads is
// settled under its fence, not judged by the comparison.
test('a counter one short before a run, moved while the run reads it, is still found and fixed', async (t) => {
  const author = new Client(stack.base);
  assert.equal((await author.signup('hm_author', 'hm-password-1')).status, 303);
  await author.get('/feed');
  for (const i of [1, 2]) {
    assert.equal((await author.post('/posts', { body: `hm ${i}`, publish: '1' })).status, 303);
  }
  const uid = num("SELECT id FROM users WHERE login='hm_author'");
  await author.get('/u/hm_author');	// its live values loaded
  stack.tallyctl('flush');
  // one short behind tally's back, in SQLite's counters and in Redis
  q(`UPDATE counters SET value = value - 1 WHERE name='user_posts' AND key='${uid}'`);
  const n = redisName('user_posts', uid);
  stack.redis('HINCRBY', n.hash, n.field, '-1');
  const admin = await adminClient();
  faults.arm(stack, 'reconcile-loaded');	// the first family read: user_posts
  assert.equal((await admin.post('/admin/reconcile', {})).status, 303);
  const id = num('SELECT max(id) FROM reconcile_runs');
  const jobs = await waitFor(stoppedJobs, 20000, 20);
  // no flush meanwhile (it would make the key look wrong anyway)
  // the run watches the author's bucket: while it does, every change
  // is counted in the bucket's seq (moved.h)
  const tag = n.hash.slice(0, n.hash.indexOf('}') + 1);
  const watch = stack.redis('HGET', `${tag}:meta`, 'w');
  assert.ok(watch, 'the run watches the bucket');
  const pfield = n.pfield;
  await whileWorkerStopped(stack, async () => {
    const seqBefore = Number(stack.redis('HGET', `${tag}:seq`, pfield) || 0);
    assert.equal((await author.post('/posts', { body: 'hm 3', publish: '1' })).status, 303);
    assert.equal(stack.redis('HGET', n.hash, n.field), '2', 'the post is in Redis, one short');
    assert.equal(Number(stack.redis('HGET', `${tag}:seq`, pfield)), seqBefore + 1, 'the change is counted');
    process.kill(jobs, 'SIGCONT');
    await waitFor(() => ['done', 'failed'].includes(q(`SELECT state FROM reconcile_runs WHERE id=${id}`)), 60000, 100);
  });
  assert.equal(q(`SELECT state FROM reconcile_runs WHERE id=${id}`), 'done');
  const rep = Object.fromEntries(JSON.parse(q(`SELECT report FROM reconcile_runs WHERE id=${id}`)).map((f) => [f.family, f]));
  t.diagnostic(`user_posts: ${JSON.stringify(rep.user_posts)}`);
  assert.equal(rep.user_posts.fixed, 1, JSON.stringify(rep.user_posts));
  assert.equal(stack.redis('HGET', n.hash, n.field), '3');
  assert.equal(pageCounters((await author.get('/u/hm_author')).text)['posts|hm_author'], 3);
  // the run's end drops its watch: a post now writes no seq (nothing
  // would read it), one command a counter less for every replica
  assert.equal(stack.redis('HGET', `${tag}:meta`, 'w'), '', 'the watch is dropped');
  stack.tallyctl('flush');
  assert.equal(stack.redis('HEXISTS', `${tag}:seq`, pfield), '0');
  assert.equal((await author.post('/posts', { body: 'hm 4', publish: '1' })).status, 303);
  assert.equal(stack.redis('HGET', n.hash, n.field), '4');
  assert.equal(stack.redis('HEXISTS', `${tag}:seq`, pfield), '0', 'unwatched: no seq written');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// A row of the outbox whose deltas cannot be read was deleted by the
// drain like any other: what it held was gone without a trace.  It is
// kept aside now, in counter_outbox_bad, with when it was found.
test('a malformed outbox row is kept aside by the drain, not deleted unread', async () => {
  const { users, posts } = await people('hm', 4, 1);
  const bad = 'post_likes 1 0 not-a-number 0';
  const id = num(`INSERT INTO counter_outbox(at, deltas) VALUES (0, '${bad}') RETURNING id`);
  assert.equal((await users[1].post(`/posts/${posts[0]}/like`)).status, 303);	// a newer row
  await waitFor(() => num(`SELECT COUNT(*) FROM counter_outbox WHERE id=${id}`) === 0, 15000, 100);
  assert.equal(q(`SELECT deltas FROM counter_outbox_bad WHERE id=${id}`), bad);
  assert.ok(num(`SELECT found_at FROM counter_outbox_bad WHERE id=${id}`) > 0);
  assert.match(stack.log('worker'), new RegExp(`outbox row ${id}: malformed deltas, moved to counter_outbox_bad`));
});

// A backlog row no counter can take (a family this build does not know,
// a key it cannot read) waited for ever: the backlog was never empty, so
// every `tallyctl flush` exited 1, and 500 such rows hid the good rows
// behind them.  The settle keeps it aside now, in counter_backlog_bad.
test('a backlog row no counter takes is kept aside, and the flush is clean', async () => {
  const rows = [['no_such_family', '12', 3], ['post_likes', 'not-a-post', -2]];
  for (const [name, key, delta] of rows)
    stack.sqlite(`INSERT INTO counter_backlog(name, key, delta, ver) VALUES ('${name}', '${key}', ${delta}, 1)`);
  const r = stack.tallyctlRaw('flush');
  assert.equal(r.status, 0, `tallyctl flush: ${r.stdout}${r.stderr}`);
  assert.equal(num('SELECT COUNT(*) FROM counter_backlog'), 0);
  for (const [name, key, delta] of rows) {
    assert.equal(num(`SELECT delta FROM counter_backlog_bad WHERE name='${name}' AND key='${key}' AND found_at > 0`), delta);
    assert.match(r.stderr + stack.log('worker'), new RegExp(`backlog row ${name} ${key}: no counter takes it, moved to counter_backlog_bad`));
  }
  assert.deepEqual(compareAll(stack), []);
});

// A profile's cache entry is rebuilt from its row by the one request
// that takes the rebuild's lock.  One that read the row before a rename
// committed put it in Redis after the rename's invalidation: the old name
// for the entry's hour.  Forced: the rebuild stops between its read and
// its put (fault point pcache-rebuild) while the user renames.
test('a profile rebuilt from a row read before a rename does not keep the old name', async () => {
  const me = new Client(stack.base);
  assert.equal((await me.signup('hp_renamer')).status, 303);
  const visitor = new Client(stack.base);
  stack.redis('DEL', '{login:hp_renamer}');
  const { answer, handler } = await stoppedAt('pcache-rebuild', () => visitor.get('/u/hp_renamer'));
  await me.get('/settings');
  assert.equal((await me.post('/settings', { name: 'Renamed Person' })).status, 303);
  process.kill(handler, 'SIGCONT');
  assert.equal((await answer).status, 200);
  const entry = stack.redis('GET', '{login:hp_renamer}');
  assert.ok(entry === '' || JSON.parse(entry).name === 'Renamed Person', `the entry: ${entry}`);
  assert.match((await visitor.get('/u/hp_renamer')).text, /Renamed Person/);
});

// A post with four readers, and its views (flushed).  stoppedAt(): the
// social handler stopped at fault point `point` while it serves `page()`.
async function viewed(prefix) {
  const { users, posts } = await people(prefix, 4, 1);
  const p = posts[0];
  stack.tallyctl('flush');
  const views = () => num(`SELECT coalesce(max(value), 0) FROM counters WHERE name='post_views' AND key='${p}'`);
  return { users, p, views, before: views() };
}
async function stoppedAt(point, page) {
  faults.arm(stack, point);
  const answer = page();
  const all = () => stack.children().flatMap((c) => [c, ...childrenOf(c.pid)]);
  const handler = await waitFor(() => all().find((c) => /tally-social/.test(c.cmd) && procState(c.pid) === 'T')?.pid, 10000, 20);
  const redis = stack.children().find((c) => /redis-server/.test(c.cmd)).pid;
  return { answer, handler, redis };
}

// An anonymous view is one script too: the address's key, in the slot
// of the post's counters, and the count, after its address's budget is
// taken.  It was the key, then the count under a token: a process
// killed between them left the address's key without its view, and the
// key kept every view from that address (a whole office behind one
// NAT) from counting for half an hour.  Forced: the handler stops where
// nothing of the view is sent yet (fault point view-delta) and is
// killed.  Nothing counted, no key left, and the address's next view
// counts, once.
test('an anonymous view whose process was killed before it counted leaves no key: the address\'s next view counts', async () => {
  const { p, views, before } = await viewed('ha');
  const anon = () => fetch(`${stack.base}/posts/${p}`, { headers: { 'sec-fetch-dest': 'document' } });
  const { answer, handler } = await stoppedAt('view-delta', () => anon().catch(() => ({ status: 0 })));
  const owner = ownerOf(stack, p);
  const key = `{c${bucketOf(owner)}}:v${p}:a127.0.0.1`;
  process.kill(handler, 'SIGKILL');
  assert.notEqual((await answer).status, 200, 'the killed request got no page');
  assert.equal(stack.redis('EXISTS', key), '0', 'no key without its view');
  stack.tallyctl('flush');
  assert.equal(views(), before, 'the killed view counted nothing');
  assert.equal((await anon()).status, 200);
  assert.equal((await anon()).status, 200);	// the same address: counted once
  stack.tallyctl('flush');
  assert.equal(views(), before + 1, 'the address\'s next view counts, once');
  assert.equal(stack.redis('EXISTS', key), '1');
  assert.equal(num("SELECT COUNT(*) FROM counter_backlog WHERE name='post_views'"), 0);
});

// A signed-in viewer's view is one script: the viewer's key and the
// count together (count/cstore.h cstore_apply_view()).  Redis stopped
// while the script is on its way: the page answers after its timeout,
// nothing waits in the backlog, and when Redis goes on it runs the
// script: the view counted once, and the viewer's next view not at all.
test('a signed-in view whose script Redis ran late counts once', async () => {
  const { users, p, views, before } = await viewed('hs');
  const { answer, handler, redis } = await stoppedAt('view-delta', () => users[3].get(`/posts/${p}`));
  process.kill(redis, 'SIGSTOP');
  try {
    process.kill(handler, 'SIGCONT');
    assert.equal((await answer).status, 200);
    assert.equal(num("SELECT COUNT(*) FROM counter_backlog WHERE name='post_views'"), 0);
  } finally {
    process.kill(redis, 'SIGCONT');
  }
  await waitFor(() => { stack.tallyctl('flush'); return views() === before + 1; }, 10000, 100);
  assert.equal((await users[3].get(`/posts/${p}`)).status, 200);	// the same viewer: no second view
  stack.tallyctl('flush');
  assert.equal(views(), before + 1, 'the view counted once');
});

// The viewer's key was set by one command and the count sent by the
// next: a process killed between them (kill -9, a crash) left the key
// without its view, and the key then kept the viewer's next view from
// counting for half an hour: a view lost.  Now nothing lies between.
// Forced: the handler is killed where the view is about to be sent
// (fault point view-delta); the viewer's next view counts.
test('a signed-in view whose process was killed before it counted leaves no key: the next view counts', async () => {
  const { users, p, views, before } = await viewed('hk');
  const { answer, handler } = await stoppedAt('view-delta',
    () => users[3].get(`/posts/${p}`).catch(() => ({ status: 0 })));
  process.kill(handler, 'SIGKILL');
  assert.notEqual((await answer).status, 200, 'the killed request got no page');
  stack.tallyctl('flush');
  assert.equal(views(), before, 'the killed view counted nothing');
  assert.equal((await users[3].get(`/posts/${p}`)).status, 200);
  stack.tallyctl('flush');
  assert.equal(views(), before + 1, 'the viewer\'s next view counts');
});

// A live value loaded (durable + backlog + pending) between a backlog
// settle's correction and the delete of the backlog rows it settled
// counted those rows twice: the correction had put them in pending, and
// the rows were still there.  The correction now sets the live value
// itself, which a load returns.  Forced: the settle stops between the
// two (fault point settle-backlog), the live value missing when it
// corrected, and the page is read then.
test('a live value loaded while a backlog settle is between its correction and its delete counts the backlog once', async () => {
  const { users, posts } = await people('hl', 4, 1);
  const p = posts[0];
  assert.equal((await users[2].post(`/posts/${p}/like`)).status, 303);
  stack.tallyctl('flush');
  // the like as if Redis had refused it: in the truth, in the backlog,
  // not in Redis; the live value not loaded
  const n = redisName('post_likes', p, ownerOf(stack, p));
  q(`UPDATE counters SET value = value - 1 WHERE name='post_likes' AND key='${p}'`);
  faults.arm(stack, 'settle-backlog');
  stack.redis('HDEL', n.hash, n.field);
  q(`INSERT INTO counter_backlog(name, key, delta, ver) VALUES ('post_likes', '${p}', 1, 1)`);
  const jobs = await waitFor(stoppedJobs, 15000, 20);
  try {
    const c = pageCounters((await users[3].get(`/posts/${p}`)).text);
    assert.equal(c[`post-likes|${p}`], 1, 'the page: the backlog counted once');
    assert.equal(stack.redis('HGET', n.hash, n.field), '1');
  } finally {
    process.kill(jobs, 'SIGCONT');
  }
  await waitFor(() => num('SELECT COUNT(*) FROM counter_backlog') === 0, 10000, 100);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// Reconciliation walked the keys with truth rows or a counters row: a
// live value in Redis for an object with neither (a post nobody
// commented on showing 4 comments) was never looked at.  It scans the
// live hashes of users, posts and topics too.
test('a live value only Redis holds (no rows, no counters row) is found and repaired by a run', async () => {
  const { users, posts } = await people('hr', 4, 1);
  const p = posts[0];
  const u = num("SELECT id FROM users WHERE login='hr3'");
  stack.tallyctl('flush');
  assert.equal(num(`SELECT COUNT(*) FROM counters WHERE (name='post_comments' AND key='${p}') OR (name='user_followers' AND key='${u}')`), 0);
  const pc = redisName('post_comments', p, ownerOf(stack, p));
  const uf = redisName('user_followers', u);
  stack.redis('HSET', pc.hash, pc.field, '4');
  stack.redis('HSET', uf.hash, uf.field, '3');
  assert.equal(pageCounters((await users[1].get(`/posts/${p}`)).text)[`post-comments|${p}`], 4, 'the drift shows');
  const out = stack.tallyctl('reconcile');
  const id = num("SELECT max(id) FROM reconcile_runs WHERE reason='tallyctl'");
  const rep = Object.fromEntries(JSON.parse(q(`SELECT report FROM reconcile_runs WHERE id=${id}`)).map((f) => [f.family, f]));
  assert.equal(rep.post_comments.wrong, 1, out);
  assert.equal(rep.user_followers.wrong, 1, out);
  assert.equal(stack.redis('HGET', pc.hash, pc.field), '0');
  assert.equal(stack.redis('HGET', uf.hash, uf.field), '0');
  assert.equal(pageCounters((await users[1].get(`/posts/${p}`)).text)[`post-comments|${p}`], 0);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});
