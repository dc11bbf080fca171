// storm.mjs -- the load of the kill tests in tests/scale/: N clients,
// each its own user, liking, unliking, following and unfollowing, each
// repeating an action until it is acknowledged (303), so the final state
// of every (user, post) and (user, user) pair is known; then the check
// that the truth holds every acknowledged state.
import assert from 'node:assert/strict';
import { Client, sleep, waitFor } from './stack.mjs';
import { compareAll, truthRows } from './counts.mjs';

// An action is acknowledged by its 303 back to a page; a 303 to /login
// says the session was not taken (and the action was not done).
export const acked = (r) => r?.status === 303 && !/^\/login\b/.test(r.location ?? '');

export async function until303(fn, tries = 100) {
  for (let i = 0; i < tries; i++) {
    try {
      const r = await fn();
      if (acked(r)) return r;
    } catch { /* a reset while something restarts */ }
    await sleep(100);
  }
  throw new Error('never acknowledged');
}

// n users `${prefix}0..` signed up, and 4 posts of theirs.
export async function stormSetup(stack, prefix, n = 12) {
  const users = [];
  for (let i = 0; i < n; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`${prefix}${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  const posts = [];
  for (let i = 0; i < 4; i++) {
    const r = await users[i].post('/posts', { body: `${prefix} target ${i}`, publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  return { prefix, users, posts };
}

// Starts the load; onFail() is called for every request not acknowledged
// at first.  stop() ends it and resolves once every client has finished.
export function storm({ prefix, users, posts }, onFail = () => {}) {
  const likeState = new Map();
  const followState = new Map();
  let stopped = false;
  const done = Promise.all(users.map(async (c, i) => {
    let n = 0;
    while (!stopped) {
      const p = posts[(i + n) % posts.length];
      const v = `${prefix}${(i + 1 + (n % 3)) % users.length}`;
      const what = n % 4;
      n++;
      const fn = what < 2
        ? () => c.post(`/posts/${p}/${what === 0 ? 'like' : 'unlike'}`)
        : () => c.post(`/${what === 2 ? 'follow' : 'unfollow'}/${v}`);
      const r = await fn().catch(() => null);
      if (!acked(r)) { onFail(); await until303(fn); }
      if (what < 2) likeState.set(`${i}|${p}`, what === 0);
      else followState.set(`${i}|${v}`, what === 2);
    }
  }));
  return { likeState, followState, stop: () => { stopped = true; return done; } };
}

// Every acknowledged like and follow state is the truth's.  The truth's
// rows are read once, not with a query a pair: a sqlite3 or psql
// process each took most of a minute after a storm.
export function assertAcknowledged(stack, { prefix, users }, { likeState, followState }) {
  const ids = new Map(truthRows(stack, `SELECT login, id FROM users WHERE login LIKE '${prefix}%'`)
    .map((l) => l.split('|')));
  const id = (i) => ids.get(`${prefix}${i}`);
  const likes = new Set(truthRows(stack, `SELECT l.user_id || '|' || l.post_id FROM likes l
    JOIN users u ON u.id = l.user_id WHERE u.login LIKE '${prefix}%'`));
  for (const [k, liked] of likeState) {
    const [i, p] = k.split('|');
    assert.equal(likes.has(`${id(i)}|${p}`), liked, `like ${k}`);
  }
  const follows = new Set(truthRows(stack, `SELECT f.follower_id || '|' || u.login FROM follows f
    JOIN users u ON u.id = f.followee_id WHERE u.login LIKE '${prefix}%'`));
  for (const [k, fol] of followState) {
    const [i, v] = k.split('|');
    assert.equal(follows.has(`${id(i)}|${v}`), fol, `follow ${k}`);
  }
}

// After a storm: every acknowledged state in the truth, the backlog
// settled, then one reconciliation and one flush leave every counter
// equal to its recount, and a second reconciliation finds nothing wrong.
export async function assertExactAfterRepair(stack, load, st) {
  assertAcknowledged(stack, load, st);
  await waitFor(() => Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog')) === 0, 30000, 200);
  stack.tallyctl('reconcile');
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  assert.match(stack.tallyctl('reconcile'), /: 0 counters wrong/);
}

// Every user likes and unlikes the posts without pause until stop() (or
// for maxMs at most: a failed test never leaves a load running), each
// liking a post it has not liked and unliking one it has.  stop()
// resolves to the number of acknowledged actions; count() says it so far.
export function likeChurn(users, posts, maxMs = 90000) {
  let stopped = false;
  let actions = 0;
  const end = Date.now() + maxMs;
  const done = Promise.all(users.map(async (c, i) => {
    const liked = new Set();
    for (let k = 0; !stopped && Date.now() < end; k++) {
      const p = posts[(i + k) % posts.length];
      const r = await c.post(`/posts/${p}/${liked.has(p) ? 'unlike' : 'like'}`).catch(() => null);
      if (r?.status === 303) {
        if (liked.has(p)) liked.delete(p); else liked.add(p);
        actions++;
      }
    }
  }));
  return { stop: async () => { stopped = true; await done; return actions; }, count: () => actions };
}
