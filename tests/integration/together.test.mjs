// together.test.mjs -- requests queued together on a pool of readers
// (shared/web/batch.h, ROUTE_TOGETHER): a process takes the ones queued
// behind the one it took, up to four, and prepares them at once.  Badge
// polls of different users, an anonymous one among them, queued while the
// notify processes are stopped: each answer is its own user's badges
// (or 401), and they took fewer Redis round trips than polls.  (The feeds
// queued together share one sync: feedcache.test.mjs.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, childrenOf, queuedWhileStopped } from '../lib/stack.mjs';
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
