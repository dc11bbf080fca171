// group.test.mjs -- group commit in the social writer (shared/web/batch.h):
// the likes, unlikes and reposts queued together on the writer's socket
// share one write transaction and one commit, each in its savepoint, and
// their counter deltas go to Redis in one round trip before any of them
// is answered.  Asserted against the truth: no count is lost or doubled
// (flush, then every counter equal to its recount, with no
// reconciliation first), each redirect's next page shows its own action,
// and the writer really took fewer locks than it served likes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, childrenOf, queuedWhileStopped } from '../lib/stack.mjs';
import { compareAll, pageCounters } from '../lib/counts.mjs';

const N = 16;			// clients at once: the writer's queue
let stack;
const users = [];
const own = [];			// own[i]: the post only users[i] touches
const shared = [];		// posts every user likes and reposts

before(async () => {
  stack = await startStack();
  for (let i = 0; i < N; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`grp${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  for (let i = 0; i < N + 4; i++) {
    const r = await users[i % N].post('/posts', { body: `group post ${i}`, publish: '1' });
    assert.equal(r.status, 303);
    (i < N ? own : shared).push(Number(r.location.split('/').pop()));
  }
});

after(async () => { await stack?.stop(); });

// The social writer's takings of the writers' lock, from /metrics.
async function socialHolds() {
  const text = await (await fetch(`${stack.base}/metrics`)).text();
  const m = text.match(/^tally_sqlite_writer_lock_hold_seconds_count\{holder="social"\} (\d+)$/m);
  assert.ok(m, 'the social holder in /metrics');
  return Number(m[1]);
}

test('the likes queued while the writer was busy are one commit', async () => {
  // The writer stopped, 16 actions queue on its socket: a like of each
  // user's own post (one a script's JSON), a forged one among them; once
  // it goes on, it takes them all into one group.
  const writer = childrenOf(stack.pidOf('social-writer.sock'))[0].pid;
  const holds0 = await socialHolds();
  const sent = await queuedWhileStopped([writer], () => users.map((c, i) => (i === 3 ?
    c.post(`/posts/${own[i]}/like`, { csrf: 'f'.repeat(43) }) :
    i === 5 ? c.post(`/posts/${own[i]}/like`, {}, { headers: { accept: 'application/json' } }) :
    c.post(`/posts/${own[i]}/like`))), 1000);
  const rs = await Promise.all(sent);
  for (let i = 0; i < N; i++) {
    const want = i === 3 ? 403 : i === 5 ? 200 : 303;
    assert.equal(rs[i].status, want, `grp${i}`);
    assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${own[i]}`), i === 3 ? '0' : '1');
  }
  assert.equal(JSON.parse(rs[5].text).likes, 1, 'the JSON answer counts its like');
  const holds = await socialHolds() - holds0;
  assert.ok(holds >= 1 && holds <= 2, `15 likes queued together took the writers' lock ${holds} times`);
  for (let i = 0; i < N; i++) {
    const page = await users[i].get(`/posts/${own[i]}`);
    assert.equal(pageCounters(page.text)[`post-likes|${own[i]}`], i === 3 ? 0 : 1, `grp${i}'s post`);
  }
  // back to no likes, for the tests below
  await Promise.all(users.map((c, i) => (i === 3 ? null : c.post(`/posts/${own[i]}/unlike`))));
});

// nginx picks a POST's queue by its session cookie (the map of
// tally-http.conf.in), and the handler reads a cookie with spaces or tabs
// around its "=" (base/kv.c): the two read it alike, or a write sent with
// "sid = ..." went to the reader pool, past the writer's group commit.
test('a session cookie with spaces around "=" still queues at the writer', async () => {
  const writer = childrenOf(stack.pidOf('social-writer.sock'))[0].pid;
  const c = users[0];
  const cookie = c.cookieHeader().replace(/(^|; )sid=/, '$1sid = ');
  assert.notEqual(cookie, c.cookieHeader());
  process.kill(writer, 'SIGSTOP');
  let sent;
  try {
    sent = c.post(`/posts/${own[0]}/like`, {}, { headers: { cookie } });
    const early = await Promise.race([sent, new Promise((res) => setTimeout(() => res(null), 1000))]);
    assert.equal(early, null, 'answered while the writer was stopped: it went to the readers');
  } finally { process.kill(writer, 'SIGCONT'); }
  assert.equal((await sent).status, 303);
  assert.equal((await c.post(`/posts/${own[0]}/unlike`)).status, 303);
});

test('likes sent at once share commits, and no count is lost or doubled', async (t) => {
  const ROUNDS = 40;
  const holds0 = await socialHolds();
  let actions = 0;
  const end = Date.now() + 60000;
  await Promise.all(users.map(async (c, i) => {
    for (let n = 0; n < ROUNDS && Date.now() < end; n++) {
      // own post: like, unlike, ...; then the shared ones once each
      const path = n < ROUNDS - shared.length ?
        `/posts/${own[i]}/${n % 2 ? 'unlike' : 'like'}` :
        `/posts/${shared[ROUNDS - 1 - n]}/${i % 2 ? 'repost' : 'like'}`;
      const r = await c.post(path);
      assert.equal(r.status, 303, path);
      actions++;
    }
  }));
  const holds = await socialHolds() - holds0;
  t.diagnostic(`${actions} actions, ${holds} commits of the social writer ` +
    `(${(actions / holds).toFixed(1)} a commit)`);
  assert.equal(actions, N * ROUNDS);
  assert.ok(holds < actions,
    `${holds} takings of the writers' lock for ${actions} actions: no group commit`);
  // the truth: each own post liked 0 times (an even number of toggles),
  // each shared post liked by the even users and reposted by the odd
  for (let i = 0; i < N; i++)
    assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${own[i]}`), '0');
  for (const p of shared) {
    assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${p}`), String(N / 2));
    assert.equal(stack.sqlite(`SELECT COUNT(*) FROM reposts WHERE post_id=${p}`), String(N / 2));
  }
  // every delta in Redis once: flushed, each counter is its recount
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('each action\'s answer shows it: the redirect\'s next page, a script\'s JSON', async () => {
  // even users post forms and read the page the 303 names; odd users are
  // the page's script (Accept: application/json), whose answer carries
  // the counts, made after the group's commit and deltas
  const end = Date.now() + 60000;
  await Promise.all(users.map(async (c, i) => {
    for (let n = 0; n < 12 && Date.now() < end; n++) {
      const like = n % 2 === 0;
      const what = `grp${i}'s ${like ? 'like' : 'unlike'} ${n}`;
      const path = `/posts/${own[i]}/${like ? 'like' : 'unlike'}`;
      if (i % 2) {
        const r = await c.post(path, {}, { headers: { accept: 'application/json' } });
        assert.equal(r.status, 200, what);
        const j = JSON.parse(r.text);
        assert.equal(j.post_id, own[i], what);
        assert.equal(j.liked, like, what);
        assert.equal(j.likes, like ? 1 : 0, `${what}: its JSON`);
        continue;
      }
      const r = await c.post(path);
      assert.equal(r.status, 303, what);
      const page = await c.get(r.location);
      assert.equal(page.status, 200);
      assert.equal(pageCounters(page.text)[`post-likes|${own[i]}`], like ? 1 : 0,
        `${what} on the next page`);
    }
  }));
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});
