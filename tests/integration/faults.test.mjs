// faults.test.mjs -- proof under fire: mixed load (follows, likes,
// comments, reads, marks read) while a handler, the worker and
// redis-server are killed with SIGKILL at random moments.  The supervisor
// restarts them; then one flush.  No acknowledged action may be missing
// from SQLite, and every counter must equal its recount from the truth
// rows -- before any reconciliation runs (the outbox, flush recovery and
// the backlog settle what the kills interrupted); a reconciliation run
// afterwards must find nothing wrong.
//
// Each client acts for its own user, one request at a time, and repeats
// an idempotent action (like, unlike, follow, unfollow, read) until it is
// acknowledged (a 303), so the final state of every pair is known.
// Comments are not idempotent: each carries a unique token, and every
// acknowledged one must exist (an unacknowledged one may or may not).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, sleep, waitFor, childrenOf } from '../lib/stack.mjs';
import { compareAll, quietRuns, truthRows } from '../lib/counts.mjs';
import { acked, assertAcknowledged, until303 as retry303 } from '../lib/storm.mjs';

let stack;
before(async () => { stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400' } }); });
after(async () => { await stack?.stop(); });

const NCLIENTS = 16;
const RUN_MS = 20000;

// a request repeated until acknowledged, at most 60 tries (storm.mjs)
const until303 = (fn) => retry303(fn, 60);

function killOne(needle) {
  const kids = stack.children();
  const svc = kids.find((c) => c.cmd.includes(needle));
  if (!svc) return null;
  let victim = svc.pid;
  if (needle.includes('social')) {	// a pre-forked child, or the master
    const sub = (Math.random() < 0.5) ? null : childrenOf(svc.pid);
    if (sub && sub.length) victim = sub[0].pid;
  }
  try { process.kill(victim, 'SIGKILL'); return victim; } catch { return null; }
}

test('SIGKILL of a handler, the worker and redis-server under mixed load loses no acknowledged action', async () => {
  const users = [];
  for (let i = 0; i < NCLIENTS; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`fault${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  const posts = [];
  for (let i = 0; i < 6; i++) {
    const r = await users[i].post('/posts', { body: `target ${i}`, publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  const runs = await quietRuns(stack);
  const likeState = new Map();		// "u|p" -> true/false, last acknowledged
  const followState = new Map();	// "u|v"
  const comments = [];			// acknowledged comment tokens
  const end = Date.now() + RUN_MS;
  const kills = [];

  const killer = (async () => {
    const targets = ['tally-social', 'social-writer.sock', 'tally-worker', 'redis-server', 'tally-notify', 'tally-web'];
    while (Date.now() < end - 3000) {
      await sleep(1500 + Math.random() * 1500);
      const t = targets[kills.length % targets.length];
      const pid = killOne(t);
      if (pid) kills.push(`${t}:${pid}`);
    }
  })();

  await Promise.all(users.map(async (c, i) => {
    let n = 0;
    while (Date.now() < end) {
      const p = posts[(i + n) % posts.length];
      const v = `fault${(i + 1 + (n % 3)) % NCLIENTS}`;
      const what = n % 7;
      n++;
      if (what === 0 || what === 1) {
        const like = what === 0;
        await until303(() => c.post(`/posts/${p}/${like ? 'like' : 'unlike'}`));
        likeState.set(`${i}|${p}`, like);
      } else if (what === 2 || what === 3) {
        const fol = what === 2;
        await until303(() => c.post(`/${fol ? 'follow' : 'unfollow'}/${v}`));
        followState.set(`${i}|${v}`, fol);
      } else if (what === 4) {
        const token = `c-${i}-${n}-${Math.random().toString(36).slice(2)}`;
        try {
          const r = await c.post(`/posts/${p}/comments`, { body: token });
          if (acked(r)) comments.push(token);
        } catch { /* unacknowledged */ }
      } else if (what === 5) {
        try { await c.get(n % 2 ? '/feed' : `/posts/${p}`); } catch { /* reads may fail mid-restart */ }
      } else {
        await until303(() => c.post('/notifications/read-all'));
      }
    }
  }));
  await killer;
  assert.ok(kills.length >= 5, `kills: ${kills.join(' ')}`);
  // back to health, then what the worker left is finished
  await waitFor(async () => (await fetch(`${stack.base}/healthz`)).status === 200, 20000, 200);
  await waitFor(() => stack.pidOf('tally-worker'), 10000);
  // deltas that waited in the SQLite backlog while Redis restarted are
  // settled by the worker (not a reconciliation run)
  await waitFor(() => Number(stack.sqlite('SELECT COUNT(*) FROM counter_backlog')) === 0, 30000, 200);
  stack.tallyctl('flush');

  // no acknowledged action is missing from SQLite
  assertAcknowledged(stack, { prefix: 'fault', users }, { likeState, followState });
  const bodies = truthRows(stack, `SELECT body FROM comments WHERE post_id IN (${posts.join(',')})`);
  for (const t of comments) {
    assert.equal(bodies.filter((b) => b === t).length, 1, `comment ${t}`);
  }
  assert.ok(likeState.size > 20 && followState.size > 10 && comments.length > 10);
  // and every counter equals its recount, with no reconciliation run
  assert.deepEqual(compareAll(stack), []);
  assert.equal(await quietRuns(stack), runs, 'no reconciliation ran');
  // one now finds nothing to repair
  assert.match(stack.tallyctl('reconcile'), /: 0 counters wrong/);
});
