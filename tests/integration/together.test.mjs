// together.test.mjs -- requests queued together on a pool of readers
// (shared/web/batch.h, ROUTE_TOGETHER): a process takes the ones queued
// behind the one it took, up to four, and prepares them at once.  Badge
// polls of different users, an anonymous one among them, queued while the
// notify processes are stopped: each answer is its own user's badges
// (or 401), and they took fewer Redis round trips than polls.  (The feeds
// queued together share one sync: feedcache.test.mjs.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, childrenOf, onCluster, onPostgres, queuedWhileStopped } from '../lib/stack.mjs';
import { recorded, settled } from '../lib/cost.mjs';

let stack;
const users = [];
after(async () => { await stack?.stop(); });

before(async () => {
  stack = await startStack();
  for (let i = 0; i < 6; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`tg${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  // tg{i} is followed by tg0 .. tg{i-1}: i unread notifications
  for (let i = 1; i < users.length; i++)
    for (let j = 0; j < i; j++)
      assert.equal((await users[j].post(`/follow/tg${i}`)).status, 303);
});

test('badge polls queued together: each its own user\'s badges, fewer round trips than polls', async () => {
  for (const c of users) {
    const r = await c.get('/badges.json');
    assert.equal(r.status, 200);
  }
  const notify = childrenOf(stack.pidOf('notify.sock')).map((c) => c.pid);
  assert.ok(notify.length >= 2, `the notify processes: ${notify}`);
  const c0 = await settled(stack, 'notify');
  const polls = await queuedWhileStopped(notify, () => {
    const sent = [];
    for (let round = 0; round < 2; round++)
      users.forEach((c, i) => sent.push([i, c.get('/badges.json')]));
    sent.push([-1, new Client(stack.base).get('/badges.json')]);
    return sent;
  });
  for (const [i, p] of polls) {
    const r = await p;
    if (i < 0) { assert.equal(r.status, 401, 'no cookie: logged out'); continue; }
    assert.equal(r.status, 200, `tg${i}: ${r.status}`);
    assert.equal(JSON.parse(r.text).notifications, i, `tg${i}'s own badges`);
  }
  const { trips } = await recorded(stack, 'notify', c0, polls.length);
  // one at a time: a round trip each (12 for the users' polls)
  assert.ok(trips < 12, `round trips for ${polls.length} polls queued together: ${trips}`);
  // and what they cost is recorded whole, shared among them: a round trip
  // for the users' polls of each take (four at most), where a share
  // rounded down each recorded none (/metrics undercounted every
  // request taken with others)
  assert.ok(trips >= 12 / 4, `every take's round trip recorded: ${trips}`);
});

// Feeds and profiles queued together on the social readers: the process
// that takes them sends the first round trip of each at once and reads
// the replies in one wait, each page's kept for its load (web/batch.h,
// social_pages.h: page_ahead()).  Each answer is its own reader's page:
// its header names the reader, its badge counts the reader's unread
// notifications, its feed the posts of whom the reader follows; a
// session logged out before its page was asked for gets no page.  Most
// pages' first round trip went ahead (/metrics: tally_pages_ahead_total);
// none of the same pages asked with "?page=1" did (page 1 as its link
// names it, with no query, goes ahead).  (What it saves: one round trip
// a group where each page took its own, docs/BENCHMARKS.md.)
test('feeds and profiles queued together: each its own reader\'s page, their first round trips at once', async () => {
  for (let i = 0; i < users.length; i++) {
    await users[i].get('/feed');	// its csrf token
    const r = await users[i].post('/posts', { body: `the post of tg${i}`, topic: '', publish: '1' });
    assert.equal(r.status, 303);
  }
  const gone = new Client(stack.base);
  assert.equal((await gone.signup('tgout')).status, 303);
  await gone.get('/feed');
  const goneSid = gone.jar.get('sid');
  assert.equal((await gone.post('/logout', {})).status, 303);
  gone.jar.set('sid', goneSid);	// the cookie of a session that ended
  const ask = (q) => () => {
    const sent = [];
    users.forEach((c, i) => sent.push([i, 'feed', c.get(`/feed${q}`)]));
    users.forEach((c, i) => sent.push([i, 'profile', c.get(`/u/tg${(i + 3) % users.length}${q}`)]));
    sent.push([-1, 'feed', gone.get(`/feed${q}`)]);
    return sent;
  };
  const check = async (pages) => {
    for (const [i, what, p] of pages) {
      const r = await p;
      if (i < 0) {
        assert.equal(r.status, 303, 'a session logged out: no page');
        assert.match(r.location, /^\/login/);
        continue;
      }
      assert.equal(r.status, 200, `tg${i} ${what}: ${r.status}`);
      assert.match(r.text, new RegExp(`data-me="tg${i}"`), `tg${i} ${what}: the reader's own header`);
      const badge = r.text.match(/data-counter="unread-notifications">(\d+)</);
      assert.equal(Number(badge?.[1] ?? 0), i, `tg${i} ${what}: the reader's own badge`);
      if (what === 'feed') {
        // tg{i} follows tg{k} for every k > i, and reads its own posts
        for (let k = 0; k < users.length; k++)
          assert.equal(r.text.includes(`the post of tg${k}<`), k >= i,
            `tg${i}'s feed and the post of tg${k}`);
      } else {
        const m = (i + 3) % users.length;
        assert.match(r.text, new RegExp(`the post of tg${m}<`), `tg${i} on tg${m}'s profile`);
      }
    }
  };
  const social = childrenOf(stack.pidOf('/social.sock ')).map((c) => c.pid);
  assert.ok(social.length >= 2, `the social readers: ${social}`);
  const queued = async (q) => {
    const c0 = await settled(stack, 'social');
    const pages = await queuedWhileStopped(social, ask(q));
    await check(pages);
    return recorded(stack, 'social', c0, pages.length);
  };
  // every reader knows each profile's login (social/pcache.h), whose
  // timeline is then whole in Redis: a profile's first round trip asks
  // for its page of posts only then, and its statements go ahead only
  // then (a process that knew none of them: 2/3 to the twelfth)
  for (let k = 0; k < 12; k++)
    for (let i = 0; i < users.length; i++)
      assert.equal((await users[i].get(`/u/tg${(i + 3) % users.length}?page=1`)).status, 200);
  await queued('?page=1');	// every process has read the pages' counts
  const ahead = await queued('');
  const own = await queued('?page=1');
  assert.equal(own.ahead, 0, 'no page 1 asked as "?page=1" went ahead');
  // 12 readers' pages, four a process at most: at least 8 went ahead
  // (none of a group of one; the logged-out session's may).  On a Redis
  // Cluster none does: a group's replies would come from several nodes.
  if (onCluster()) assert.equal(ahead.ahead, 0, 'on a Redis Cluster');
  else assert.ok(ahead.ahead >= 8, `pages sent ahead: ${ahead.ahead} of 13`);
  // On PostgreSQL the statements of a group's pages went ahead too, in
  // one pipeline read in one wait (social_pages.h: feed_sql_ahead(),
  // profile_sql_ahead()): each feed's posts, each profile's visitor state
  // and posts (18 in all; the feeds alone are 7 at most), each page still
  // its own reader's (check() above), in a quarter of the round trips to
  // the server the same pages took one at a time.  SQLite runs them in
  // the process: nothing to send ahead.
  assert.equal(own.sqlAhead, 0, 'no statement of "?page=1" went ahead');
  if (onPostgres()) {
    assert.ok(ahead.sqlAhead >= 12, `statements ahead: ${ahead.sqlAhead}`);
    assert.ok(ahead.sqlTrips * 2 < own.sqlTrips,
      `round trips to PostgreSQL: ${ahead.sqlTrips} together, ${own.sqlTrips} one at a time`);
  } else assert.equal(ahead.sqlAhead, 0, 'SQLite: nothing ahead');
});
