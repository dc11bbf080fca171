// killpoints.test.mjs -- kill -9 aimed at the exact points where a crash
// could lose or double a count (shared/base/fault.h), many times, and the
// counts compared with the truth rows before any reconciliation runs:
//  - the flusher, between a batch's SQLite commit and its acknowledgement
//    in Redis (recovery must not apply the batch twice);
//  - the social writer, between an action's commit and its Redis delta
//    (the outbox: the worker applies what the dead process did not,
//    within seconds, with no reconciliation).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, sleep, waitFor, onPostgres } from '../lib/stack.mjs';
import { compareAll, faults, pageCounters, pendingDeltas, quietRuns } from '../lib/counts.mjs';

// No scheduled run, no drift sampling: nothing may repair behind the test.
const QUIET = { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400' };
const stacks = [];
after(async () => { for (const s of stacks) await s.stop(); });

async function setup(env, point, times, prefix) {
  const s = await startStack({ env: { ...QUIET, ...env, TALLY_FAULT: `${point}:kill:${times}` } });
  stacks.push(s);
  faults.disarm(s, point, times);
  const cs = [];
  for (let i = 0; i < 8; i++) {
    const c = new Client(s.base);
    assert.equal((await c.signup(`${prefix}${i}`)).status, 303);
    await c.get('/feed');
    cs.push(c);
  }
  const posts = [];
  for (let i = 0; i < 3; i++) {
    const r = await cs[i].post('/posts', { body: `hot post ${i}`, topic: i ? 'alpha' : 'beta', publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  const runs = await quietRuns(s);
  return { s, cs, posts, runs };
}

// Likes, unlikes, follows, unfollows and comments from every client
// until stop() says so and each has made at least `min` actions.
async function storm(cs, posts, prefix, min, stop, ok) {
  await Promise.all(cs.map(async (c, i) => {
    for (let j = 0; !stop() || j < min; j++) {
      // in round k a client likes post k and follows user k, and undoes
      // the like and the follow of round k - 1: decrements happen too
      const k = i + Math.floor(j / 6);
      const p = posts[k % posts.length];
      const prev = posts[(k + posts.length - 1) % posts.length];
      const what = j % 6;
      const r = what === 0 ? await c.post(`/posts/${p}/like`)
        : what === 1 ? await c.post(`/posts/${prev}/unlike`)
          : what === 2 ? await c.post(`/follow/${prefix}${k % 8}`)
            : what === 3 ? await c.post(`/unfollow/${prefix}${(k + 7) % 8}`)
              : what === 4 ? await c.post(`/posts/${p}/comments`, { body: 'storm' })
                : await c.get(`/posts/${p}`);
      assert.ok(ok.includes(r.status), `status ${r.status}`);
    }
  }));
}

// The counts every page reads (Redis live values) equal the truth.
function liveExact(s) {
  return compareAll(s).filter((m) => / redis=/.test(m));
}

test('the flusher killed between its commit and its ack, many times: exact, no reconciliation', async () => {
  const KILLS = 5;
  const { s, cs, posts, runs } = await setup({ TALLY_FLUSH_FIELDS: '5' }, 'flush-ack', KILLS, 'fk');
  faults.arm(s, 'flush-ack');
  let done = false;
  const load = storm(cs, posts, 'fk', 20, () => done, [200, 303, 400]);
  await waitFor(() => faults.fired(s, 'flush-ack') >= KILLS, 90000, 200);
  done = true;
  await load;
  // Kills are counted per firing, not per batch: a restarted worker's
  // recovery acks the dead one's batch through the same point, and may
  // be killed there too, so KILLS firings can leave fewer new rows.
  const flushedByThen = Number(s.sqlite('SELECT COUNT(*) FROM flushes'));
  // The restarted worker finishes what the dead ones left (their
  // batches are in SQLite: recovery only acks them), then flushes on.
  await waitFor(() => s.pidOf('tally-worker'), 10000);
  // one change surely after the last kill: the restarted flusher's own
  // batch (the storm's last requests may all have gone into the batch
  // the last kill stopped, which recovery only acks)
  assert.equal((await cs[0].post(`/posts/${posts[0]}/comments`, { body: 'after the kills' })).status, 303);
  await waitFor(() => s.redis('KEYS', '{c*}:inflight') === '' && pendingDeltas(s) === 0, 40000, 200);
  assert.deepEqual(compareAll(s), []);
  // the flusher went on after the last kill: a new batch, a new row
  assert.ok(Number(s.sqlite('SELECT COUNT(*) FROM flushes')) > flushedByThen);
  assert.equal(await quietRuns(s), runs, 'no reconciliation ran');
  assert.match(s.log('worker'), /fault point flush-ack: kill/);
});

// tallyctl flush promises that every delta pending when it ran is in
// SQLite when it returns 0.  A batch of the worker's that took every
// bucket it found left nothing pending, and the flush returned at once
// with the batch still in flight: the counters table short by it.  Now
// it waits for buckets held in flight as for any held bucket (the
// stopped worker's lock expires, and the flush's recovery finishes it).
test('tallyctl flush waits for a batch that holds every delta in flight; a week-old batch\'s row goes', async () => {
  // the worker killed once it took its buckets (its batch's lock lives
  // on for a few seconds: recovery waits for it to expire)
  const { s, cs, posts } = await setup({}, 'flush-taken', 1, 'ft');
  s.tallyctl('flush');
  const durable = () => Number(s.sqlite(`SELECT coalesce((SELECT value FROM counters WHERE name = 'post_views' AND key = '${posts[0]}'), 0)`));
  const before = durable();
  faults.arm(s, 'flush-taken');
  // views: one counter, one bucket, all taken by the worker's batch
  await Promise.all(cs.slice(1).map((c) => c.get(`/posts/${posts[0]}`)));
  await waitFor(() => faults.fired(s, 'flush-taken') >= 1, 20000, 20);
  const held = (k) => Number(s.redis('EVAL', `local n = 0 for b = 0, 1023 do n = n + redis.call('HLEN', '{c' .. b .. '}:${k}') end return n`, '0'));
  assert.equal(held('pending'), 0, 'nothing left pending');
  assert.ok(held('inflight') > 0, 'the views in flight');
  assert.match(s.tallyctl('flush'), /flushed/);
  assert.equal(durable(), before + cs.length - 1, 'every view in SQLite once the flush returned');
  await waitFor(() => s.redis('KEYS', '{c*}:inflight') === '' && pendingDeltas(s) === 0, 20000, 100);
  assert.deepEqual(compareAll(s), []);
  // the rows of applied batches a week old go (fbatch.h), but the newest:
  // one a second made the table grow for good
  const rows = () => Number(s.sqlite('SELECT COUNT(*) FROM flushes'));
  const top = s.sqlite('SELECT max(id) FROM flushes');
  const week = 8 * 24 * 3600 * 1000;
  s.sqlite(`UPDATE flushes SET applied_at = applied_at - ${week}`);
  for (let i = 1; i <= 5; i++) s.sqlite(`INSERT INTO flushes(id, applied_at, counters, total) VALUES(${-i}, 1, 0, 0)`);
  assert.ok(rows() >= 6);
  await waitFor(() => rows() === 1, 30000, 200);
  assert.equal(s.sqlite('SELECT max(id) FROM flushes'), top);
});

// A post's fan-out is noted before its commit (social/fanout.h): the
// writer killed right after the commit left the post in SQLite and in
// no timeline in Redis -- not its author's profile, not one follower's
// feed -- for good (whole timelines are never rebuilt).
test('the social writer killed between a post\'s commit and its fan-out: the worker puts it in every timeline', async () => {
  const { s, cs } = await setup({}, 'action-delta', 1, 'pk');
  for (const c of cs.slice(1, 4)) assert.equal((await c.post('/follow/pk0')).status, 303);
  for (const c of cs) await c.get('/feed');		// homes materialised
  faults.arm(s, 'action-delta');
  const r = await cs[0].post('/posts', { body: 'killed after its commit', topic: '', publish: '1' });
  assert.equal(r.status, 502, 'the writer died after the commit');
  assert.equal(faults.fired(s, 'action-delta'), 1);
  const p = Number(s.sqlite("SELECT id FROM posts WHERE body = 'killed after its commit'"));
  assert.ok(p > 0, 'committed');
  const holds = (u, kind) => s.redis('ZSCORE', `{u${u}}:${kind}`, String(p).padStart(16, '0')) !== '';
  const ids = ['pk0', 'pk1', 'pk2', 'pk3'].map((l) => Number(s.sqlite(`SELECT id FROM users WHERE login = '${l}'`)));
  // the worker reclaims a note older than FANOUT_INLINE_GRACE_MS (5 s)
  await waitFor(() => ids.every((u) => holds(u, 'home')), 20000, 200);
  for (const c of cs.slice(1, 4)) {
    const ids2 = [...(await c.get('/feed')).text.matchAll(/data-post-id="(\d+)"/g)].map((m) => Number(m[1]));
    assert.ok(ids2.includes(p), 'in the follower\'s feed');
  }
  assert.ok((await cs[0].get('/u/pk0')).text.includes(`data-post-id="${p}"`), 'on the author\'s profile');
});

// A withdrawal's removal is noted before its commit too (fanout.h): the
// writer killed right after a delete's commit left the post's id in its
// author's profile and in every follower's home in Redis for good (the
// pages filter it: a page one card short, a profile's count of cards
// not its count of posts).
test('the social writer killed between a delete\'s commit and its removal: the worker takes it out of every timeline', async () => {
  const { s, cs } = await setup({}, 'action-delta', 1, 'dk');
  for (const c of cs.slice(1, 4)) assert.equal((await c.post('/follow/dk0')).status, 303);
  const r0 = await cs[0].post('/posts', { body: 'deleted, then killed', topic: '', publish: '1' });
  const p = Number(r0.location.split('/').pop());
  for (const c of cs) await c.get('/feed');		// homes materialised
  // a profile's timeline is made by a process's second visit (profileview.c)
  for (let i = 0; i < 6; i++) await cs[0].get('/u/dk0');
  const ids = ['dk0', 'dk1', 'dk2', 'dk3'].map((l) => Number(s.sqlite(`SELECT id FROM users WHERE login = '${l}'`)));
  const holds = (u, kind) => s.redis('ZSCORE', `{u${u}}:${kind}`, String(p).padStart(16, '0')) !== '';
  await waitFor(() => ids.every((u) => holds(u, 'home')) && holds(ids[0], 'profile'), 10000, 100);
  faults.arm(s, 'action-delta');
  assert.equal((await cs[0].post(`/posts/${p}/delete`)).status, 502, 'the writer died after the commit');
  assert.equal(faults.fired(s, 'action-delta'), 1);
  assert.equal(s.sqlite(`SELECT is_deleted FROM posts WHERE id = ${p}`), '1', 'committed');
  // the worker reclaims a note older than FANOUT_INLINE_GRACE_MS (5 s)
  await waitFor(() => ids.every((u) => !holds(u, 'home')) && !holds(ids[0], 'profile'), 20000, 200);
});

// A follow's timelines (its lists, the follower's home) and a repost's
// fan-out are noted before the commit too (social/follow.h, fanout.h):
// the writer killed right after the commit left the followee out of the
// follower's list and feed, and the repost out of every feed that had it
// only from the reposter, for good.
test('the social writer killed between a follow\'s or a repost\'s commit and its timelines: the worker puts them there', async () => {
  const { s, cs, posts } = await setup({}, 'action-delta', 2, 'fk');
  const id = (l) => Number(s.sqlite(`SELECT id FROM users WHERE login = '${l}'`));
  const holds = (u, kind, m) => s.redis('ZSCORE', `{u${u}}:${kind}`, String(m).padStart(16, '0')) !== '';
  for (const c of cs) {			// every list and home materialised
    await c.get('/feed');
    await c.get(`/u/fk${cs.indexOf(c)}/following`);
  }
  await cs[0].get('/u/fk0/followers');
  assert.equal((await cs[5].post('/follow/fk4')).status, 303);
  faults.arm(s, 'action-delta');
  // fk3 follows fk0 (who wrote posts[0]): killed after the commit
  assert.equal((await cs[3].post('/follow/fk0')).status, 502, 'the writer died after the follow\'s commit');
  assert.equal(Number(s.sqlite(`SELECT COUNT(*) FROM follows WHERE follower_id = ${id('fk3')} AND followee_id = ${id('fk0')}`)), 1);
  // fk4 reposts posts[1] (fk1's), which fk5 sees only by fk4
  assert.equal((await cs[4].post(`/posts/${posts[1]}/repost`)).status, 502, 'the writer died after the repost\'s commit');
  assert.equal(faults.fired(s, 'action-delta'), 2);
  // the worker takes a repost's note older than 5 s over, a follow's
  // older than 15 s (social/follow.h)
  await waitFor(() => holds(id('fk5'), 'home', posts[1]), 20000, 200);
  await waitFor(() => holds(id('fk3'), 'following', id('fk0')) && holds(id('fk0'), 'followers', id('fk3')) &&
    holds(id('fk3'), 'home', posts[0]), 30000, 200);
  assert.match((await cs[3].get('/u/fk3/following')).text, /data-login="fk0"/);
  assert.ok((await cs[3].get('/feed')).text.includes(`data-post-id="${posts[0]}"`), 'the followee\'s post in the follower\'s feed');
  assert.ok((await cs[5].get('/feed')).text.includes(`data-post-id="${posts[1]}"`), 'the repost in the reposter\'s follower\'s feed');
});

test('the social writer killed between an action\'s commit and its Redis delta: the counts converge by themselves', async () => {
  const KILLS = 6;
  const { s, cs, posts, runs } = await setup({}, 'action-delta', KILLS, 'sk');
  faults.arm(s, 'action-delta');
  let done = false;
  // a killed handler's request gets 502 from nginx: committed, not answered
  const load = storm(cs, posts, 'sk', 12, () => done, [200, 303, 400, 502]);
  await waitFor(() => faults.fired(s, 'action-delta') >= KILLS, 60000, 100);
  done = true;
  await load;
  assert.equal(Number(s.sqlite('SELECT COUNT(*) FROM counter_backlog')), 0);
  // Within seconds, without tallyctl and without a reconciliation, every
  // live value and every counters row equals its recount.  On PostgreSQL
  // the flushes after the storm take longer (16 s on a 2-core machine).
  const within = onPostgres() ? 30000 : 15000;
  const t0 = Date.now();
  await waitFor(() => liveExact(s).length === 0 && pendingDeltas(s) === 0 &&
    compareAll(s).length === 0, within, 200).catch(() => {});
  assert.deepEqual(compareAll(s), []);
  const took = Date.now() - t0;
  assert.ok(took < within, `converged in ${took} ms`);
  assert.equal(await quietRuns(s), runs, 'no reconciliation ran');
  // and the pages say so
  const truth = Number(s.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[0]}`));
  assert.equal(pageCounters((await cs[7].get(`/posts/${posts[0]}`)).text)[`post-likes|${posts[0]}`], truth);
  assert.equal(faults.fired(s, 'action-delta'), KILLS);
  // the outbox keeps at most its newest row once drained
  await waitFor(() => Number(s.sqlite("SELECT COUNT(*) FROM counter_outbox WHERE deltas <> ''")) === 0, 5000);
});
