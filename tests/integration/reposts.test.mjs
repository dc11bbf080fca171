// reposts.test.mjs -- reposts in home feeds (docs/INTERFACE.md §2, /feed): a
// followee's repost places the post at the repost's time, marked
// data-reposted-by and saying who; a post shows once, at its newest
// place; an unrepost, an unfollow or a follow puts each entry where
// SQLite places it; the fan-out reaches beyond 1,000 followers the way a
// post's does; concurrent reposts and unreposts end where SQLite says.
//
// Every feed is read twice: from the user's Redis timeline, then with
// that timeline dropped, rebuilt from SQLite (STMT_HOME_SQL): both must
// agree, so the fan-out and the SQL truth are tested against each other.
// The 2,500 followers come last: compareAll() reads every counter.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startStack } from '../lib/stack.mjs';
import {
  newUser, seedUsers, addFollowers, drainQueue, homesHolding, key, timeline, member,
} from '../lib/social.mjs';
import { compareAll } from '../lib/counts.mjs';

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack?.stop(); });

// A feed page's posts: [{ id, by }] in order, by = data-reposted-by or ''.
function feedItems(html) {
  return [...html.matchAll(/<article data-post-id="(\d+)"([^>]*)>/g)].map((m) => {
    const by = m[2].match(/data-reposted-by="([^"]*)"/);
    return { id: Number(m[1]), by: by ? by[1] : '' };
  });
}

// The feed from the Redis timeline, then from SQLite (the timeline
// dropped and rebuilt): the same list, which is returned.
async function feed(u) {
  await drainQueue(stack);
  const r1 = await u.c.get('/feed');
  assert.equal(r1.status, 200);
  assert.notEqual(timeline(stack, u.id), null, 'the feed was read from a whole Redis timeline');
  const fromRedis = feedItems(r1.text);
  stack.redis('DEL', key(u.id, 'home'), `${key(u.id, 'home')}:ok`);
  const fromSql = feedItems((await u.c.get('/feed')).text);
  assert.deepEqual(fromRedis, fromSql, 'the fan-out placed the feed as SQLite does');
  for (const it of fromRedis) {
    if (it.by === '') continue;
    assert.match(r1.text, new RegExp(`data-post-id="${it.id}"[^>]*data-reposted-by="${it.by}">` +
      `<p><span class="via">[^<]*<a href="/u/${it.by}">@${it.by}</a> reposted</span>`),
    'the card says who reposted it');
  }
  return fromRedis;
}

async function publish(c, body) {
  const r = await c.post('/posts', { body, topic: '', publish: '1' });
  assert.equal(r.status, 303);
  return Number(r.location.match(/^\/posts\/(\d+)$/)[1]);
}

async function act(u, what, target) {
  const r = await u.c.post(what.includes('follow') ? `/${what}/${target}` : `/posts/${target}/${what}`);
  assert.equal(r.status, 303, `${u.login} ${what} ${target}`);
}

const repostedAt = (post, uid) => Number(stack.sqlite(
  `select created_at from reposts where post_id = ${post} and user_id = ${uid}`));

test('a followee\'s repost places the post at the repost\'s time, once, and says who; unrepost, unfollow and follow put it back', async () => {
  const [a, b, c, d] = await Promise.all(['rp_a', 'rp_b', 'rp_c', 'rp_d'].map((l) => newUser(stack, l)));
  await act(a, 'follow', 'rp_b');
  await act(a, 'follow', 'rp_d');
  const p1 = await publish(c.c, 'first, by c');
  const p2 = await publish(c.c, 'second, by c');
  assert.deepEqual(await feed(a), [], 'a follows neither c nor a reposter yet');

  await act(b, 'repost', p1);
  assert.deepEqual(await feed(a), [{ id: p1, by: 'rp_b' }], 'b\'s repost reaches a');
  assert.equal(Number(stack.redis('ZSCORE', key(a.id, 'home'), member(p1))), repostedAt(p1, b.id),
    'at the repost\'s time');
  await act(b, 'repost', p1);	// idempotent: nothing moves
  assert.deepEqual(await feed(a), [{ id: p1, by: 'rp_b' }]);

  await act(a, 'follow', 'rp_c');
  assert.deepEqual(await feed(a), [{ id: p1, by: 'rp_b' }, { id: p2, by: '' }],
    'following the author: p1 once, at the repost\'s place above the newer p2');

  await act(d, 'repost', p2);
  await act(d, 'repost', p1);
  assert.deepEqual(await feed(a), [{ id: p1, by: 'rp_d' }, { id: p2, by: 'rp_d' }],
    'the newest repost places the post and names its reposter');
  await act(d, 'unrepost', p1);
  assert.deepEqual(await feed(a), [{ id: p2, by: 'rp_d' }, { id: p1, by: 'rp_b' }],
    'd\'s unrepost: p1 back at b\'s repost');
  await act(b, 'unrepost', p1);
  assert.deepEqual(await feed(a), [{ id: p2, by: 'rp_d' }, { id: p1, by: '' }],
    'no repost left: p1 at its publication (a follows c)');
  assert.equal(Number(stack.redis('ZSCORE', key(a.id, 'home'), member(p1))),
    Number(stack.sqlite(`select published_at from posts where id = ${p1}`)));

  await act(a, 'unfollow', 'rp_c');
  assert.deepEqual(await feed(a), [{ id: p2, by: 'rp_d' }], 'unfollowing c: only d\'s repost stays');
  await act(a, 'unfollow', 'rp_d');
  assert.deepEqual(await feed(a), [], 'unfollowing d: nothing left');
  await act(a, 'follow', 'rp_d');
  assert.deepEqual(await feed(a), [{ id: p2, by: 'rp_d' }], 'following d again brings d\'s repost');

  // a deleted post leaves every feed it reached through a repost
  assert.equal((await c.c.post(`/posts/${p2}/delete`)).status, 303);
  assert.deepEqual(await feed(a), []);
  // the reposter's own feed and the author's are untouched by reposts
  assert.deepEqual((await feed(d)).filter((i) => i.by !== ''), [], 'own reposts are not "reposted by" oneself');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack).filter((x) => x.startsWith(`post_reposts[${p1}]`) ||
    x.startsWith(`post_reposts[${p2}]`)), []);
});

// A republished post keeps its publication time: its place in a feed
// is that, or a later repost by someone the reader follows.  The
// unpublish took it out of the author's followers' homes; the republish
// put it back at its publication alone, below where SQLite places it,
// in the home of a follower of both (the author's own too).
test('a republished post takes back its place at a followee\'s repost, in the homes of the author\'s followers and the author\'s own', async () => {
  const [a, b, c] = await Promise.all(['rr_a', 'rr_b', 'rr_c'].map((l) => newUser(stack, l)));
  await act(a, 'follow', 'rr_b');
  await act(a, 'follow', 'rr_c');
  await act(c, 'follow', 'rr_b');
  const p1 = await publish(c.c, 'first, by c');
  const p2 = await publish(c.c, 'second, by c');
  await act(b, 'repost', p1);
  const want = [{ id: p1, by: 'rr_b' }, { id: p2, by: '' }];
  assert.deepEqual(await feed(a), want, 'b\'s repost places p1 above p2');
  assert.deepEqual(await feed(c), want, 'in the author\'s own feed too');
  const edit = (publish) => c.c.post(`/posts/${p1}/edit`, { body: 'first, by c', publish });
  assert.equal((await edit('0')).status, 303);
  assert.deepEqual(await feed(a), [{ id: p2, by: '' }], 'unpublished: in no feed');
  assert.equal((await edit('1')).status, 303);
  assert.deepEqual(await feed(a), want, 'republished: back at b\'s repost');
  assert.deepEqual(await feed(c), want);
});

// A deleted or unpublished post leaves the homes its reposts put it in
// too: the withdrawal's batches walk the author's followers, and in the
// home of a reposter's follower who does not follow the author the post
// stayed for good (skipped by readers: a page one post short).  Each
// reposter's followers get the post's place again, as after an unrepost
// (fanout.c reposters_rems()).
test('a deleted or unpublished post leaves the homes of its reposters\' followers who do not follow its author', async () => {
  const [x, g, h, r] = await Promise.all(['rw_x', 'rw_g', 'rw_h', 'rw_r'].map((l) => newUser(stack, l)));
  await act(r, 'follow', 'rw_g');
  await act(r, 'follow', 'rw_h');
  const gone = await publish(x.c, 'deleted after its reposts');
  const hidden = await publish(x.c, 'unpublished after its repost');
  const kept = await publish(x.c, 'kept');
  await act(g, 'repost', gone);
  await act(h, 'repost', gone);
  await act(g, 'repost', hidden);
  await act(h, 'repost', kept);
  assert.deepEqual((await feed(r)).map((it) => it.id), [kept, hidden, gone]);
  await act(x, 'delete', gone);
  assert.equal((await x.c.post(`/posts/${hidden}/edit`, { body: 'unpublished after its repost', topic: '', publish: '0' })).status, 303);
  await drainQueue(stack);
  assert.deepEqual(timeline(stack, r.id), [kept], 'only the visible post is left in the home');
  assert.deepEqual((await feed(r)).map((it) => it.id), [kept]);
});

test('reposts and unreposts by eight followees at once: the feed ends where SQLite places it, the count exact', async () => {
  const reader = await newUser(stack, 'rp_reader');
  const author = await newUser(stack, 'rp_writer');
  const fans = await Promise.all([...Array(8).keys()].map((i) => newUser(stack, `rp_fan${i}`)));
  for (const f of fans) await act(reader, 'follow', f.login);
  const p = await publish(author.c, 'toggled by many');
  await feed(reader);
  await Promise.all(fans.map(async (f, i) => {
    for (let k = 0; k < 7; k++) {
      const r = await f.c.post(`/posts/${p}/${(k + i) % 2 === 0 ? 'repost' : 'unrepost'}`);
      assert.equal(r.status, 303);
    }
  }));
  await drainQueue(stack);
  const reposters = stack.sqlite(`select count(*) from reposts where post_id = ${p}`);
  assert.equal(Number(reposters), 4, 'an odd number of toggles from repost: half end reposted');
  const newest = Number(stack.sqlite(`select max(created_at) from reposts where post_id = ${p}`));
  assert.equal(Number(stack.redis('ZSCORE', key(reader.id, 'home'), member(p))), newest,
    'the reader\'s timeline holds the post at the newest repost');
  const items = await feed(reader);
  assert.equal(items.length, 1);
  assert.equal(items[0].id, p);
  const newestBy = stack.sqlite(`select u.login from reposts r join users u on u.id = r.user_id
    where r.post_id = ${p} order by r.created_at desc, r.user_id desc limit 1`);
  assert.equal(items[0].by, newestBy);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack).filter((x) => x.startsWith(`post_reposts[${p}]`) ||
    x.startsWith(`user_unread[${author.id}]`) || x.startsWith('note_groups')), []);
});

test('a repost reaches 2,500 followers\' feeds beyond the first 1,000, and an unrepost takes it out of each', async () => {
  const r = await newUser(stack, 'rp_big');
  const author = await newUser(stack, 'rp_auth');
  const ids = seedUsers(stack, 2500);
  assert.equal(ids.length, 2500);
  addFollowers(stack, r.id, ids);
  // ten of them follow the author too: they keep the post, at its publication
  const both = ids.slice(0, 10);
  addFollowers(stack, author.id, both);
  assert.match(stack.tallyctl('warm', '--followers-of', 'rp_big'), /warmed 2500 home timelines/);
  const p = await publish(author.c, 'reposted to many');
  await drainQueue(stack);
  assert.equal(homesHolding(stack, ids, p).has, 10, 'before the repost: only the author\'s followers');

  await act(r, 'repost', p);
  await drainQueue(stack);
  let h = homesHolding(stack, ids, p, repostedAt(p, r.id));
  assert.deepEqual(h.missing, [], 'no follower\'s home lacks the repost');
  assert.equal(h.scored, ids.length, 'every home holds it at the repost\'s time');
  assert.equal(h.total, ids.length, 'once, and nothing else');
  assert.equal(h.ok, ids.length, 'every home still whole');

  await act(r, 'unrepost', p);
  await drainQueue(stack);
  h = homesHolding(stack, ids, p);
  assert.equal(h.has, 10, 'the unrepost takes it out of every home but the author\'s followers\'');
  assert.equal(homesHolding(stack, both, p, stack.sqlite(`select published_at from posts where id = ${p}`)).scored,
    10, 'which hold it at its publication again');
  assert.equal(h.ok, ids.length);
});
