// social.test.mjs -- the social core against a real stack: follows,
// followers/following pages, feed order and paging, drafts and deleted
// posts, the 1000 cap and the 750 refill of home timelines, a Redis
// FLUSHALL, comments, likes and reposts, and HTML escaping.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';

import { startStack, Client, whileWorkerStopped, waitFor } from '../lib/stack.mjs';
import {
  member,
  postIds, liLogins, commentIds, q, nums, newUser, loginAs, seedUsers,
  addFollowers, insertPosts, key, timeline, drainQueue,
} from '../lib/social.mjs';

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack?.stop(); });

const count = (sql) => Number(stack.sqlite(sql));
const newest = (sql) => nums(stack.sqlite(sql));

// Publishes through the form; returns the post id.
async function publish(c, body, { topic = '', publish = '1' } = {}) {
  const r = await c.post('/posts', { body, topic, publish });
  assert.equal(r.status, 303, `POST /posts: ${r.status} ${r.text.slice(0, 200)}`);
  const m = r.location.match(/^\/posts\/(\d+)$/);
  assert.ok(m, `redirect to the post, got ${r.location}`);
  return Number(m[1]);
}

// Every post id of a feed (or profile), page by page.
async function allPages(c, path, per = 30) {
  const out = [];
  for (let page = 1; page < 100; page++) {
    const r = await c.get(`${path}?page=${page}`);
    assert.equal(r.status, 200);
    const ids = postIds(r.text);
    out.push(...ids);
    if (ids.length < per) return out;
  }
  throw new Error('too many pages');
}

describe('follow and unfollow', () => {
  test('idempotent follow: one row, one entry in the materialised followers set', async () => {
    const a = await newUser(stack, 'fo_author');
    const b = await newUser(stack, 'fo_reader');
    // materialise a's followers set and b's following set
    assert.equal((await b.c.get('/u/fo_author/followers')).status, 200);
    assert.equal((await b.c.get('/u/fo_reader/following')).status, 200);
    assert.equal(stack.redis('GET', `${key(a.id, 'followers')}:ok`), '1');
    for (let i = 0; i < 2; i++) {
      const r = await b.c.post('/follow/fo_author');
      assert.equal(r.status, 303);
      assert.equal(r.location, '/u/fo_author');
    }
    assert.equal(count(`select count(*) from follows where follower_id = ${b.id} and followee_id = ${a.id}`), 1);
    assert.equal(stack.redis('ZCARD', key(a.id, 'followers')), '1');
    assert.equal(stack.redis('ZSCORE', key(a.id, 'followers'), member(b.id)) !== '', true);
    assert.equal(stack.redis('ZCARD', key(b.id, 'following')), '1');
    assert.deepEqual(liLogins((await b.c.get('/u/fo_author/followers')).text), ['fo_reader']);
    assert.deepEqual(liLogins((await b.c.get('/u/fo_reader/following')).text), ['fo_author']);
    const prof = await b.c.get('/u/fo_author');
    assert.match(prof.text, /action="\/unfollow\/fo_author"/);

    for (let i = 0; i < 2; i++) {
      const r = await b.c.post('/unfollow/fo_author');
      assert.equal(r.status, 303);
      assert.equal(r.location, '/u/fo_author');
    }
    assert.equal(count(`select count(*) from follows where follower_id = ${b.id}`), 0);
    assert.equal(stack.redis('ZCARD', key(a.id, 'followers')), '0');
    assert.deepEqual(liLogins((await b.c.get('/u/fo_author/followers')).text), []);
    assert.match((await b.c.get('/u/fo_author')).text, /action="\/follow\/fo_author"/);
  });

  // A follow row whose time is 0 (put there by SQL, as an import or an
  // operator might): its unfollow's delete returned that 0, read as "no
  // row", and rolled back -- 303 "unfollowed", the row and both counts
  // left for good.
  test('an unfollow takes a follow row whose time is 0 (made by SQL)', async () => {
    const a = await newUser(stack, 'fo_zero_a');
    const b = await newUser(stack, 'fo_zero_b');
    stack.sqlite(`insert into follows(follower_id, followee_id, created_at) values(${b.id}, ${a.id}, 0)`);
    await b.c.get('/u/fo_zero_a');
    assert.equal((await b.c.post('/unfollow/fo_zero_a')).status, 303);
    assert.equal(count(`select count(*) from follows where follower_id = ${b.id} and followee_id = ${a.id}`), 0);
  });

  test('following oneself is 400, an unknown login 404, logged out 303 /login', async () => {
    const a = await newUser(stack, 'fo_self');
    let r = await a.c.post('/follow/fo_self');
    assert.equal(r.status, 400);
    r = await a.c.post('/follow/FO_SELF');
    assert.equal(r.status, 400, 'logins are case-insensitive');
    assert.equal(count(`select count(*) from follows where follower_id = ${a.id}`), 0);
    await a.c.get('/feed');
    r = await a.c.post('/follow/no_such_user');
    assert.equal(r.status, 404);
    await a.c.get('/feed');
    r = await a.c.post('/unfollow/no_such_user');
    assert.equal(r.status, 404);

    const anon = new Client(stack.base);
    await anon.get('/login');
    for (const p of ['/follow/fo_self', '/unfollow/fo_self']) {
      r = await anon.post(p);
      assert.equal(r.status, 303, p);
      assert.equal(r.location, '/login', p);
    }
    assert.equal(count(`select count(*) from follows where followee_id = ${a.id}`), 0);
  });

  test('followers and following pages: newest follow first, 50 a page', async () => {
    const star = await newUser(stack, 'fo_star');
    const fan = await newUser(stack, 'fo_fan');
    const ids = seedUsers(stack, 70);
    assert.equal(ids.length, 70);
    const t0 = Date.now() - 3600000;
    addFollowers(stack, star.id, ids, t0, 1000);		// ids[69] newest
    // fan follows the same 70, in the opposite order (ids[0] newest)
    stack.sqlite(`insert into follows(follower_id, followee_id, created_at) values
      ${ids.map((id, i) => `(${fan.id}, ${id}, ${t0 - i * 1000})`).join(', ')}`);
    const loginOf = new Map(stack.sqlite(`select id, login from users where id in (${ids})`)
      .split('\n').map((l) => l.split('|')).map(([i, l]) => [Number(i), l]));
    const want = ids.map((i) => loginOf.get(i));

    const p1 = await star.c.get('/u/fo_star/followers');
    assert.equal(p1.status, 200);
    assert.deepEqual(liLogins(p1.text), want.slice(20).reverse());
    assert.match(p1.text, /rel="next" href="\/u\/fo_star\/followers\?page=2"/);
    const p2 = await star.c.get('/u/fo_star/followers?page=2');
    assert.deepEqual(liLogins(p2.text), want.slice(0, 20).reverse());
    assert.doesNotMatch(p2.text, /rel="next"/);
    assert.equal(stack.redis('ZCARD', key(star.id, 'followers')), '70', 'materialised whole');

    // a new follow through the form goes on top
    const r = await fan.c.post('/follow/fo_star');
    assert.equal(r.status, 303);
    const p1b = await new Client(stack.base).get('/u/fo_star/followers');
    assert.equal(p1b.status, 200, 'public page');
    assert.deepEqual(liLogins(p1b.text), ['fo_fan', ...want.slice(21).reverse()]);

    const f1 = await star.c.get('/u/fo_fan/following');
    assert.deepEqual(liLogins(f1.text), ['fo_star', ...want.slice(0, 49)]);
    const f2 = await star.c.get('/u/fo_fan/following?page=2');
    assert.deepEqual(liLogins(f2.text), want.slice(49));
    assert.equal((await star.c.get('/u/nobody_here/followers')).status, 404);
  });
});

describe('feed', () => {
  test('newest first, 30 a page', async () => {
    const author = await newUser(stack, 'fd_author');
    const reader = await newUser(stack, 'fd_reader');
    const posts = insertPosts(stack, author.id, 65, { step: 60000 });
    await reader.c.get('/feed');		// materialised (empty): the follow copies the posts
    assert.equal((await reader.c.post('/follow/fd_author')).status, 303);
    assert.equal(timeline(stack, reader.id).length, 65);
    const desc = [...posts].reverse();

    const p1 = await reader.c.get('/feed');
    assert.equal(p1.status, 200);
    assert.deepEqual(postIds(p1.text), desc.slice(0, 30));
    assert.match(p1.text, /rel="next" href="\/feed\?page=2"/);
    const p2 = await reader.c.get('/feed?page=2');
    assert.deepEqual(postIds(p2.text), desc.slice(30, 60));
    const p3 = await reader.c.get('/feed?page=3');
    assert.deepEqual(postIds(p3.text), desc.slice(60));
    assert.equal(postIds(p3.text).length, 5);
    assert.doesNotMatch(p3.text, /rel="next"/);
    assert.match(p3.text, /rel="prev" href="\/feed\?page=2"/);
    assert.deepEqual(postIds((await reader.c.get('/feed?page=4')).text), []);

    // the profile pages the same way
    assert.deepEqual(await allPages(reader.c, '/u/fd_author'), desc);

    // a new post goes on top, in the author's home at once (in the
    // request) and in followers' homes right after the answer
    // (shared/social/fanout.h)
    const fresh = await publish(author.c, 'fresh one');
    assert.deepEqual(postIds((await author.c.get('/feed')).text).slice(0, 2), [fresh, desc[0]]);
    await drainQueue(stack);
    assert.deepEqual(postIds((await reader.c.get('/feed')).text).slice(0, 2), [fresh, desc[0]]);
    // the reader's own post mixes in by time
    const own = await publish(reader.c, 'my own');
    assert.deepEqual(postIds((await reader.c.get('/feed')).text).slice(0, 3), [own, fresh, desc[0]]);

    const anon = await new Client(stack.base).get('/feed');
    assert.equal(anon.status, 303);
    assert.equal(anon.location, '/login');
    assert.equal((await reader.c.get('/feed?page=0')).status, 400);
    assert.equal((await reader.c.get('/feed?page=x')).status, 400);
  });
});

describe('drafts and deleted posts', () => {
  test('never shown to others; 404 to others, 200 to the author', async () => {
    const author = await newUser(stack, 'dr_author');
    const reader = await newUser(stack, 'dr_reader');
    await reader.c.post('/follow/dr_author');
    await reader.c.get('/feed');		// home materialised
    const visible = await publish(author.c, 'visible one', { topic: 'dr-topic' });
    const draft = await publish(author.c, 'secret draft', { topic: 'dr-topic', publish: '0' });
    const gone = await publish(author.c, 'soon gone', { topic: 'dr-topic' });
    assert.equal((await author.c.post(`/posts/${gone}/delete`)).status, 303);
    assert.equal(count(`select is_deleted from posts where id = ${gone}`), 1);
    await drainQueue(stack);

    const anon = new Client(stack.base);
    for (const [who, c] of [['reader', reader.c], ['anonymous', anon]]) {
      const feed = who === 'reader' ? postIds((await c.get('/feed')).text) : [];
      const prof = postIds((await c.get('/u/dr_author')).text);
      const topic = await c.get('/t/dr-topic');
      assert.equal(topic.status, 200);
      for (const [page, ids] of [['feed', feed], ['profile', prof], ['topic', postIds(topic.text)]]) {
        assert.ok(!ids.includes(draft), `${who} ${page} shows no draft`);
        assert.ok(!ids.includes(gone), `${who} ${page} shows no deleted post`);
      }
      assert.deepEqual(prof, [visible], `${who} profile`);
      assert.deepEqual(postIds(topic.text), [visible], `${who} topic`);
      if (who === 'reader') assert.deepEqual(feed, [visible]);
      assert.equal((await c.get(`/posts/${draft}`)).status, 404, `${who}: draft`);
      assert.equal((await c.get(`/posts/${gone}`)).status, 404, `${who}: deleted`);
      assert.equal((await c.get(`/posts/${visible}`)).status, 200, `${who}: visible`);
    }
    assert.equal(stack.redis('ZSCORE', key(reader.id, 'home'), member(gone)), '');
    assert.equal(stack.redis('ZSCORE', key(reader.id, 'home'), member(draft)), '');

    // the author sees both, marked; the profile lists the draft separately
    const d = await author.c.get(`/posts/${draft}`);
    assert.equal(d.status, 200);
    assert.match(d.text, /secret draft/);
    const g = await author.c.get(`/posts/${gone}`);
    assert.equal(g.status, 200);
    assert.match(g.text, /soon gone/);
    assert.deepEqual(postIds((await author.c.get('/feed')).text), [visible]);
    const own = await author.c.get('/u/dr_author');
    assert.match(own.text, /Your drafts/);
    assert.ok(postIds(own.text).includes(draft));
    assert.ok(!postIds(own.text).includes(gone));

    // others cannot edit or delete it
    await reader.c.get('/feed');
    assert.equal((await reader.c.post(`/posts/${visible}/delete`)).status, 403);
    await reader.c.get('/feed');
    assert.equal((await reader.c.post(`/posts/${visible}/edit`, { body: 'hijack', topic: '', publish: '1' })).status, 403);
    await reader.c.get('/feed');
    // a draft: 403, or 404 so that its existence does not leak
    assert.ok([403, 404].includes((await reader.c.post(`/posts/${draft}/edit`, { body: 'hijack', topic: '', publish: '1' })).status));
    assert.equal(stack.sqlite(`select body || status from posts where id = ${draft}`), 'secret draft0');
    assert.equal((await reader.c.post(`/posts/${draft}/like`)).status, 404);
  });

  // The profile listed the newest 50 drafts and no more: a 51st was
  // written and never found again.  /drafts pages them by the last one
  // shown; only the author's, the visitor sent to log in.
  test('every draft can be found: the profile\'s newest 50, then /drafts?before=ID', async () => {
    const author = await newUser(stack, 'dp_author');
    const other = await newUser(stack, 'dp_other');
    const drafts = [];
    for (let i = 0; i < 53; i++) drafts.push(await publish(author.c, `draft ${i}`, { publish: '0' }));
    const published = await publish(author.c, 'out in the open');
    const newest = [...drafts].reverse();
    const own = await author.c.get('/u/dp_author');
    const ids = postIds(own.text);
    assert.deepEqual(ids.filter((id) => id !== published), newest.slice(0, 50), 'the profile: the newest 50');
    const older = own.text.match(/<a href="(\/drafts\?before=(\d+))">Older drafts/);
    assert.ok(older, 'the profile links the older drafts');
    assert.equal(Number(older[2]), newest[49]);
    const rest = await author.c.get(older[1]);
    assert.equal(rest.status, 200);
    assert.deepEqual(postIds(rest.text), newest.slice(50), 'the 3 left');
    assert.doesNotMatch(rest.text, /rel="next"/);
    assert.match(rest.text, /<a rel="prev" href="\/drafts">/);
    const first = await author.c.get('/drafts');
    assert.deepEqual(postIds(first.text), newest.slice(0, 50));
    assert.match(first.text, new RegExp(`<a rel="next" href="/drafts\\?before=${newest[49]}">`));
    // another's drafts are never theirs to list; a visitor logs in first
    const theirs = await other.c.get('/drafts');
    assert.equal(theirs.status, 200);
    assert.deepEqual(postIds(theirs.text), []);
    assert.match(theirs.text, /No drafts\./);
    assert.doesNotMatch((await other.c.get('/u/dp_author')).text, /Older drafts|draft 5/);
    const anon = await new Client(stack.base).get('/drafts');
    assert.equal(anon.status, 303);
    assert.match(anon.location, /^\/login/);
    for (const bad of ['x', '1.2', '-3', '0', ''])
      assert.equal((await author.c.get(`/drafts?before=${bad}`)).status, 400, `before=${bad}`);
  });

  // An edit that sends the body alone (a script, another client) took
  // the missing publish for "publish" and the missing topic for
  // "general": a draft went public and a post left its topic.  A field
  // left out keeps what the post has.
  test('an edit of the body alone neither publishes a draft nor moves the post', async () => {
    const author = await newUser(stack, 'eb_author');
    const draft = await publish(author.c, 'draft body', { topic: 'eb-topic', publish: '0' });
    const open = await publish(author.c, 'open body', { topic: 'eb-topic' });
    const row = (id) => stack.sqlite(`SELECT p.status || ' ' || t.slug || ' ' || p.body FROM posts p JOIN topics t ON t.id = p.topic_id WHERE p.id = ${id}`).trim();
    await author.c.get(`/posts/${draft}/edit`);
    assert.equal((await author.c.post(`/posts/${draft}/edit`, { body: 'draft fixed' })).status, 303);
    assert.equal(row(draft), '0 eb-topic draft fixed', 'still a draft, in its topic');
    assert.equal((await author.c.post(`/posts/${draft}/edit`, { body: 'draft again', publish: '' })).status, 303);
    assert.equal(row(draft), '0 eb-topic draft again', 'an empty publish says nothing');
    assert.equal((await author.c.post(`/posts/${open}/edit`, { body: 'open fixed' })).status, 303);
    assert.equal(row(open), '1 eb-topic open fixed', 'still published, in its topic');
    // the form's fields still decide when sent
    assert.equal((await author.c.post(`/posts/${draft}/edit`, { body: 'out now', topic: '', publish: '1' })).status, 303);
    assert.equal(row(draft), '1 general out now');
  });

  test('publishing a draft puts it in followers\' feeds, unpublishing takes it out', async () => {
    const author = await newUser(stack, 'ed_author');
    const reader = await newUser(stack, 'ed_reader');
    const late = await newUser(stack, 'ed_late');	// home not materialised
    await reader.c.post('/follow/ed_author');
    await late.c.post('/follow/ed_author');
    stack.redis('DEL', `${key(late.id, 'home')}:ok`, key(late.id, 'home'));
    assert.deepEqual(postIds((await reader.c.get('/feed')).text), []);
    const first = await publish(author.c, 'first');
    const draft = await publish(author.c, 'a draft', { publish: '0' });
    // followers' homes get a post just after its 303 (fanout.h): a
    // loaded machine can answer the reader first
    await drainQueue(stack);
    assert.deepEqual(postIds((await reader.c.get('/feed')).text), [first]);

    await author.c.get(`/posts/${draft}/edit`);
    let r = await author.c.post(`/posts/${draft}/edit`, { body: 'now published', topic: 'ed-topic', publish: '1' });
    assert.equal(r.status, 303);
    assert.equal(r.location, `/posts/${draft}`);
    await drainQueue(stack);
    assert.notEqual(stack.redis('ZSCORE', key(reader.id, 'home'), member(draft)), '');
    let feed = await reader.c.get('/feed');
    assert.deepEqual(postIds(feed.text), [draft, first]);
    assert.match(feed.text, /now published/);
    assert.deepEqual(postIds((await late.c.get('/feed')).text), [draft, first]);
    assert.deepEqual(postIds((await reader.c.get('/t/ed-topic')).text), [draft]);
    assert.deepEqual(postIds((await reader.c.get('/u/ed_author')).text), [draft, first]);

    await author.c.get(`/posts/${draft}/edit`);
    r = await author.c.post(`/posts/${draft}/edit`, { body: 'back to draft', topic: 'ed-topic', publish: '0' });
    assert.equal(r.status, 303);
    await drainQueue(stack);
    assert.equal(stack.redis('ZSCORE', key(reader.id, 'home'), member(draft)), '');
    assert.equal(stack.redis('ZSCORE', key(late.id, 'home'), member(draft)), '');
    assert.equal(stack.redis('ZSCORE', key(author.id, 'profile'), member(draft)), '');
    assert.deepEqual(postIds((await reader.c.get('/feed')).text), [first]);
    assert.deepEqual(postIds((await late.c.get('/feed')).text), [first]);
    assert.deepEqual(postIds((await reader.c.get('/t/ed-topic')).text), []);
    assert.deepEqual(postIds((await reader.c.get('/u/ed_author')).text), [first]);
    assert.equal((await reader.c.get(`/posts/${draft}`)).status, 404);
  });

  // An unpublish queues its followers' removal for the worker; a
  // republish adds the post to them at once, from the handler.  A removal
  // that ran after the republish took the post out of every follower's
  // feed for good (nothing rebuilds a whole timeline).
  test('unpublished, then republished before the worker ran the removal: the post stays in followers\' feeds', async () => {
    const author = await newUser(stack, 'rp_author');
    const reader = await newUser(stack, 'rp_reader');
    await reader.c.post('/follow/rp_author');
    await reader.c.get('/feed');		// the home materialised
    const p = await publish(author.c, 'back and forth');
    await drainQueue(stack);
    assert.notEqual(stack.redis('ZSCORE', key(reader.id, 'home'), member(p)), '');
    await whileWorkerStopped(stack, async () => {
      await author.c.get(`/posts/${p}/edit`);
      assert.equal((await author.c.post(`/posts/${p}/edit`, { body: 'back and forth', topic: '', publish: '0' })).status, 303);
      assert.equal((await author.c.post(`/posts/${p}/edit`, { body: 'back and forth', topic: '', publish: '1' })).status, 303);
      // the republish's own batch done (its note gone), the removal queued
      await waitFor(() => stack.redis('ZCARD', '{jobs}:inline') === '0', 10000, 50);
      assert.ok(Number(stack.redis('LLEN', '{jobs}:queue')) >= 1, 'the removal waits for the worker');
    });
    await drainQueue(stack);
    assert.notEqual(stack.redis('ZSCORE', key(reader.id, 'home'), member(p)), '', 'in the reader\'s home');
    assert.deepEqual(postIds((await reader.c.get('/feed')).text), [p]);
  });
});

describe('home timelines in Redis', () => {
  test('capped at exactly the newest 1000', async () => {
    const author = await newUser(stack, 'cap_author');
    const cold = await newUser(stack, 'cap_cold');	// home rebuilt on the visit
    const warm = await newUser(stack, 'cap_warm');	// home materialised, then follows
    const posts = insertPosts(stack, author.id, 1200, { step: 1000 });
    const want = [...posts].reverse().slice(0, 1000);
    assert.equal((await cold.c.post('/follow/cap_author')).status, 303);
    assert.equal(timeline(stack, cold.id), null, 'not materialised before the visit');
    const feed = await cold.c.get('/feed');
    assert.deepEqual(postIds(feed.text), want.slice(0, 30));
    assert.equal(stack.redis('ZCARD', key(cold.id, 'home')), '1000');
    assert.deepEqual(timeline(stack, cold.id), want);

    assert.equal(timeline(stack, warm.id), null);
    await warm.c.get('/feed');
    assert.deepEqual(timeline(stack, warm.id), []);
    assert.equal((await warm.c.post('/follow/cap_author')).status, 303);
    assert.equal(stack.redis('ZCARD', key(warm.id, 'home')), '1000');
    assert.deepEqual(timeline(stack, warm.id), want);

    // a new post pushes the oldest out
    const fresh = await publish(author.c, 'the 1201st');
    await drainQueue(stack);
    for (const u of [cold, warm]) {
      assert.equal(stack.redis('ZCARD', key(u.id, 'home')), '1000');
      assert.deepEqual(timeline(stack, u.id), [fresh, ...want.slice(0, 999)]);
    }
    // the profile timeline is capped the same way (a reader process
    // materialises it once it knows the login's id, pcache.h: from its
    // second visit on)
    for (let i = 0; i < 40 && stack.redis('GET', `${key(author.id, 'profile')}:ok`) !== '1'; i++) {
      await cold.c.get('/u/cap_author');
    }
    assert.equal(stack.redis('ZCARD', key(author.id, 'profile')), '1000');
  });

  // A cut home holds SQL's newest entries and nothing past its last
  // (timeline.c tl_put_lua): a follow of someone whose posts are older
  // than that last put them below it, where SQL has others the cap had
  // dropped, and the pages the set served showed them in those others'
  // place (an unfollow had left 800, no refill).  Nor is a followee's
  // newest TL_CAP all of them: the home is whole down to the last read,
  // and cut there.
  test('a cut home takes no entry below its last: every page, from Redis or SQLite, in SQLite\'s order', async () => {
    const [u, b, c, d] = await Promise.all(['ct_u', 'ct_b', 'ct_c', 'ct_d'].map((l) => newUser(stack, l)));
    const t0 = Date.now() - 30 * 86400000;
    insertPosts(stack, d.id, 300, { t0, step: 100 });		// the oldest
    insertPosts(stack, b.id, 1000, { t0: t0 + 100000, step: 1000 });
    insertPosts(stack, c.id, 200, { t0: t0 + 2000000, step: 1000 });	// the newest
    await u.c.get('/feed');
    for (const f of ['follow/ct_b', 'follow/ct_c', 'unfollow/ct_c', 'follow/ct_d']) {
      assert.equal((await u.c.post(`/${f}`)).status, 303, f);
    }
    assert.ok(timeline(stack, u.id).length >= 750, 'no refill: the home served from Redis');
    const want = newest(`select id from posts where user_id in (${u.id}, ${b.id}, ${d.id}) and status = 1 and is_deleted = 0 order by published_at desc, id desc`);
    assert.equal(want.length, 1300);
    const got = [];
    for (let p = 1; p <= 44; p++) got.push(...postIds((await u.c.get(`/feed?page=${p}`)).text));
    assert.deepEqual(got, want, 'the pages, in order, each post once');
    // a follow of someone with more than the cap's posts
    const [v, e] = await Promise.all(['ct_v', 'ct_e'].map((l) => newUser(stack, l)));
    insertPosts(stack, e.id, 1100, { t0, step: 1000 });
    await v.c.get('/feed');
    assert.equal((await v.c.post('/follow/ct_e')).status, 303);
    // its newest 11 deleted: the home below the cap, its end not SQL's
    for (const id of newest(`select id from posts where user_id = ${e.id} order by published_at desc, id desc limit 11`)) {
      assert.equal((await e.c.post(`/posts/${id}/delete`)).status, 303);
    }
    await drainQueue(stack);
    const wantE = newest(`select id from posts where user_id = ${e.id} and is_deleted = 0 order by published_at desc, id desc`);
    assert.equal(wantE.length, 1089);
    const gotE = [];
    for (let p = 1; p <= 37; p++) gotE.push(...postIds((await v.c.get(`/feed?page=${p}`)).text));
    assert.deepEqual(gotE, wantE, 'the followee\'s posts past its newest 1000 on the later pages');
  });

  test('an unfollow that leaves fewer than 750 refills the home from SQLite', async () => {
    const u = await newUser(stack, 'rf_user');
    const a = await newUser(stack, 'rf_a');
    const b = await newUser(stack, 'rf_b');
    const t0 = Date.now() - 20 * 86400000;
    // B's 300 are older than A's 800, so the capped home holds only
    // B's newest ~200: after the unfollow only a refill brings all 300.
    const bp = insertPosts(stack, b.id, 300, { t0, step: 1000 });
    const ap = insertPosts(stack, a.id, 800, { t0: t0 + 400000, step: 1000 });
    const own = insertPosts(stack, u.id, 2, { t0: t0 + 100500, step: 1000 });
    await u.c.get('/feed');
    await u.c.post('/follow/rf_a');
    await u.c.post('/follow/rf_b');
    const home = timeline(stack, u.id);
    assert.equal(home.length, 1000);
    assert.deepEqual(home.slice(0, 800), [...ap].reverse());
    assert.ok(home.filter((id) => bp.includes(id)).length < 300, 'some of B\'s fell off the cap');

    assert.equal((await u.c.post('/unfollow/rf_a')).status, 303);
    const after1 = timeline(stack, u.id);
    assert.ok(after1, 'still materialised (rebuilt)');
    const wantB = newest(`select id from posts where user_id in (${u.id}, ${b.id}) order by published_at desc, id desc`);
    assert.equal(wantB.length, 302);
    assert.deepEqual(after1, wantB);
    assert.ok(!after1.some((id) => ap.includes(id)), 'no post of A');
    assert.deepEqual(await allPages(u.c, '/feed'), wantB);

    // At or above 750 nothing is refilled: C (200 newest) and D (900
    // older) fill the home with C's 200 + D's newest 800; without C, 800.
    const c = await newUser(stack, 'rf_c');
    const d = await newUser(stack, 'rf_d');
    const v = await newUser(stack, 'rf_v');
    const dp = insertPosts(stack, d.id, 900, { t0: t0 - 2000000, step: 1000 });
    insertPosts(stack, c.id, 200, { t0: t0 + 2000000, step: 1000 });
    await v.c.get('/feed');
    await v.c.post('/follow/rf_c');
    await v.c.post('/follow/rf_d');
    assert.equal(timeline(stack, v.id).length, 1000);
    await v.c.post('/unfollow/rf_c');
    assert.deepEqual(timeline(stack, v.id), [...dp].reverse().slice(0, 800), 'the 800 that were left');
    // and all 900 of D's can be paged to: the set the cap cut holds 800,
    // the pages past its end come from SQL (they ended at 800 with "No
    // older posts", D's oldest 100 out of reach)
    assert.deepEqual(await allPages(v.c, '/feed'), [...dp].reverse(), 'every post of D, page by page');

    // Now drop below 750: E (1 post) is followed (801), D deletes 60 of
    // the 800 shown (the jobs take them out: 741, deletes never refill),
    // then the unfollow of E leaves 740 < 750: the home is rebuilt, with
    // all 840 of D's that are left.
    const e = await newUser(stack, 'rf_e');
    const ep = await publish(e.c, 'e says hi');
    await v.c.post('/follow/rf_e');
    assert.equal(timeline(stack, v.id).length, 801);
    const doomed = [...dp].reverse().slice(0, 60);
    for (const id of doomed) {
      const r = await d.c.post(`/posts/${id}/delete`);
      assert.equal(r.status, 303);
    }
    await drainQueue(stack);
    assert.equal(timeline(stack, v.id).length, 741);
    assert.equal((await v.c.post('/unfollow/rf_e')).status, 303);
    const rebuilt = timeline(stack, v.id);
    const wantD = newest(`select id from posts where user_id in (${v.id}, ${d.id}) and status = 1 and is_deleted = 0
      order by published_at desc, id desc limit 1000`);
    assert.equal(wantD.length, 840);
    assert.deepEqual(rebuilt, wantD);
    assert.ok(!rebuilt.includes(ep));
    assert.ok(!rebuilt.some((id) => doomed.includes(id)));
  });

  test('after a Redis FLUSHALL the feed shows the same posts in the same order', async () => {
    const reader = await newUser(stack, 'fl_reader');
    const authors = [];
    for (const l of ['fl_a', 'fl_b', 'fl_c']) authors.push(await newUser(stack, l));
    const t0 = Date.now() - 5 * 86400000;
    authors.forEach((a, i) => insertPosts(stack, a.id, 40, { t0: t0 + i * 333, step: 997 }));
    for (const a of authors) await reader.c.post(`/follow/${a.login}`);
    await publish(reader.c, 'mine');
    const d = await publish(authors[1].c, 'draft', { publish: '0' });
    const before1 = await allPages(reader.c, '/feed');
    assert.equal(before1.length, 121, 'posts on the feed before');
    assert.ok(!before1.includes(d));
    const prof = await allPages(reader.c, '/u/fl_b');
    assert.equal(stack.redis('GET', `${key(reader.id, 'home')}:ok`), '1', 'materialised before');

    assert.equal(stack.redis('FLUSHALL'), 'OK');
    // (the worker's counter flush may write again at once: no DBSIZE 0)
    assert.equal(stack.redis('EXISTS', key(reader.id, 'home'), `${key(reader.id, 'home')}:ok`), '0', 'flushed');
    const after1 = await allPages(reader.c, '/feed');
    assert.deepEqual(after1, before1);
    assert.equal(stack.redis('GET', `${key(reader.id, 'home')}:ok`), '1', 'rebuilt');
    assert.deepEqual(timeline(stack, reader.id), before1);
    assert.deepEqual(await allPages(reader.c, '/u/fl_b'), prof);
    // still in step: a new post reaches the rebuilt home
    const p = await publish(authors[0].c, 'after the flush');
    await drainQueue(stack);		// followers' homes: after the answer
    assert.deepEqual(postIds((await reader.c.get('/feed')).text)[0], p);
  });
});

describe('comments, likes and reposts', () => {
  // Deleting another's comment reads its post (under a post the caller
  // cannot see, the comment is not there for them): a read that failed
  // answered 404, "no such comment", as if it were not there.
  test('a failed read while deleting another\'s comment is no "not there": 5xx, nothing changed', async () => {
    const author = await newUser(stack, 'cmf_author');
    const other = await newUser(stack, 'cmf_other');
    const p = await publish(author.c, 'comment, then a failed read');
    await other.c.get(`/posts/${p}`);
    assert.equal((await other.c.post(`/posts/${p}/comments`, { body: 'stays' })).status, 303);
    const cid = nums(stack.sqlite(`select id from comments where post_id = ${p}`))[0];
    await author.c.get(`/posts/${p}`);
    stack.sqlite('ALTER TABLE posts RENAME TO posts_x');
    let r;
    try {
      r = await author.c.post(`/comments/${cid}/delete`);
    } finally {
      stack.sqlite('ALTER TABLE posts_x RENAME TO posts');
    }
    assert.ok(r.status >= 500, `a failed read: ${r.status}`);
    assert.equal(stack.sqlite(`select is_deleted from comments where id = ${cid}`), '0');
    assert.equal((await author.c.post(`/comments/${cid}/delete`)).status, 403, 'read again: not theirs');
  });

  test('comments: create, delete by the author and by an admin, 403 for others', async () => {
    const author = await newUser(stack, 'cm_author');
    const other = await newUser(stack, 'cm_other');
    const admin = await loginAs(stack, 'admin', 'admin-pass-1');
    const p = await publish(author.c, 'comment on me');

    await other.c.get(`/posts/${p}`);
    let r = await other.c.post(`/posts/${p}/comments`, { body: 'first comment' });
    assert.equal(r.status, 303);
    assert.equal(r.location, `/posts/${p}`);
    r = await other.c.post(`/posts/${p}/comments`, { body: 'second comment' });
    assert.equal(r.status, 303);
    const cids = nums(stack.sqlite(`select id from comments where post_id = ${p} order by id`));
    assert.equal(cids.length, 2);
    let page = await author.c.get(`/posts/${p}`);
    assert.deepEqual(commentIds(page.text), cids);
    assert.match(page.text, /first comment/);
    assert.match(page.text, /second comment/);

    // the post's author is not the comment's author: 403
    r = await author.c.post(`/comments/${cids[0]}/delete`);
    assert.equal(r.status, 403);
    await other.c.get(`/posts/${p}`);
    r = await other.c.post(`/comments/${cids[0]}/delete`);
    assert.equal(r.status, 303);
    assert.equal(r.location, `/posts/${p}`);
    await other.c.get(`/posts/${p}`);
    r = await other.c.post(`/comments/${cids[0]}/delete`);
    assert.equal(r.status, 303, 'again: nothing changes');
    await admin.get(`/posts/${p}`);
    r = await admin.post(`/comments/${cids[1]}/delete`);
    assert.equal(r.status, 303);
    assert.equal(stack.sqlite(`select is_deleted from comments where post_id = ${p} order by id`).split('\n').join(','), '1,1');
    page = await author.c.get(`/posts/${p}`);
    assert.deepEqual(commentIds(page.text), []);
    assert.doesNotMatch(page.text, /first comment|second comment/);

    await other.c.get('/feed');
    assert.equal((await other.c.post('/comments/999999/delete')).status, 404);
    await other.c.get('/feed');
    r = await other.c.post(`/posts/${p}/comments`, { body: '' });
    assert.equal(r.status, 400);
    const anon = new Client(stack.base);
    await anon.get('/login');
    r = await anon.post(`/posts/${p}/comments`, { body: 'anon' });
    assert.equal(r.status, 303);
    assert.equal(r.location, '/login');
    assert.equal(count(`select count(*) from comments where post_id = ${p}`), 2);
  });

  test('like, unlike and repost are idempotent per user', async () => {
    const author = await newUser(stack, 'lk_author');
    const fan = await newUser(stack, 'lk_fan');
    const p = await publish(author.c, 'like me');
    const likes = () => count(`select count(*) from likes where post_id = ${p}`);
    const reposts = () => count(`select count(*) from reposts where post_id = ${p}`);
    await fan.c.get(`/posts/${p}`);
    for (let i = 0; i < 2; i++) {
      const r = await fan.c.post(`/posts/${p}/like`);
      assert.equal(r.status, 303);
      assert.equal(r.location, `/posts/${p}`);
      assert.equal(likes(), 1);
    }
    for (let i = 0; i < 2; i++) {
      const r = await fan.c.post(`/posts/${p}/repost`);
      assert.equal(r.status, 303);
      assert.equal(reposts(), 1);
    }
    assert.equal((await author.c.post(`/posts/${p}/like`)).status, 303);
    assert.equal(likes(), 2);
    for (let i = 0; i < 2; i++) {
      const r = await fan.c.post(`/posts/${p}/unlike`);
      assert.equal(r.status, 303);
      assert.equal(likes(), 1);
    }
    assert.equal(count(`select count(*) from likes where post_id = ${p} and user_id = ${fan.id}`), 0);
    assert.equal(count(`select count(*) from reposts where post_id = ${p} and user_id = ${fan.id}`), 1);
    assert.equal((await fan.c.post('/posts/999999/like')).status, 404);
    assert.equal(likes(), 1);
  });
});

test('a post body with markup is shown escaped everywhere', async () => {
  const author = await newUser(stack, 'xs_author');
  const reader = await newUser(stack, 'xs_reader');
  await reader.c.post('/follow/xs_author');
  const body = '<img src=x onerror=alert(1)>';
  const p = await publish(author.c, body, { topic: 'xss' });
  assert.equal(stack.sqlite(`select body from posts where id = ${p}`), body);
  await reader.c.get(`/posts/${p}`);
  await reader.c.post(`/posts/${p}/comments`, { body: '<script>alert(2)</script>' });
  for (const path of ['/feed', '/u/xs_author', '/t/xss', `/posts/${p}`]) {
    const r = await reader.c.get(path);
    assert.equal(r.status, 200, path);
    assert.ok(postIds(r.text).includes(p), `${path} shows the post`);
    assert.ok(r.text.includes('&lt;img src=x onerror=alert(1)&gt;'), `${path} escapes the body`);
    assert.ok(!r.text.includes('<img src=x'), `${path} has no raw <img`);
    assert.ok(!r.text.includes('<script>alert'), `${path} has no raw <script`);
  }
  assert.match((await reader.c.get(`/posts/${p}`)).text, /&lt;script&gt;alert\(2\)&lt;\/script&gt;/);
  // and in the edit form's textarea
  const edit = await author.c.get(`/posts/${p}/edit`);
  assert.equal(edit.status, 200);
  assert.ok(edit.text.includes('&lt;img src=x onerror=alert(1)&gt;</textarea>'));
});
