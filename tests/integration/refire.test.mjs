// refire.test.mjs -- reconciliation under fire: drift planted behind
// tally's back (raw SQL on counters, raw writes to Redis live values) on
// counters that clients keep changing while a run settles them.  Every
// count is exact afterwards and the run's report names exactly the
// planted drift.  The decisive moment is forced, not hoped for: the run
// is stopped (fault point reconcile-fix) after it read a key's state and
// its recount and before it applies the correction, and the clients act
// on those very keys then -- a repair that SETs the recounted value
// instead of adding a checked delta loses their changes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { startStack, Client, sleep, waitFor, BIN, childrenOf } from '../lib/stack.mjs';
import { compareAll, faults, ownerOf, quietRuns, redisName } from '../lib/counts.mjs';

let stack;
after(async () => { await stack?.stop(); });

const state = (pid) => { try { const s = fs.readFileSync(`/proc/${pid}/stat`, 'utf8'); return s.slice(s.lastIndexOf(')') + 2)[0]; } catch { return ''; } };

test('reconciliation repairs planted drift while clients change the same counters', async () => {
  const STOPS = 2;
  stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400', TALLY_FAULT: `reconcile-fix:stop:${STOPS}` } });
  faults.disarm(stack, 'reconcile-fix', STOPS);
  const cs = [];
  for (let i = 0; i < 12; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`rf${i}`)).status, 303);
    await c.get('/feed');
    cs.push(c);
  }
  const posts = [];
  for (let i = 0; i < 2; i++) {
    const r = await cs[i].post('/posts', { body: `fire ${i}`, publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  for (let i = 2; i < 6; i++) { await cs[i].post(`/posts/${posts[0]}/like`); await cs[i].post(`/posts/${posts[1]}/like`); }
  for (let i = 2; i < 6; i++) { await cs[i].post('/follow/rf0'); await cs[i].post('/follow/rf1'); }
  await quietRuns(stack);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
  for (const p of posts) await cs[7].get(`/posts/${p}`);	// live values loaded
  await cs[7].get('/u/rf0'); await cs[7].get('/u/rf1');
  const uid = (l) => stack.sqlite(`SELECT id FROM users WHERE login='${l}'`);

  // Plant: two post_likes counters and two user_followers counters, one
  // of each wrong in SQLite's counters, one of each wrong in Redis.
  stack.sqlite(`UPDATE counters SET value = value + 7 WHERE name='post_likes' AND key='${posts[0]}'`);
  const pl = redisName('post_likes', posts[1], ownerOf(stack, posts[1]));
  stack.redis('HINCRBY', pl.hash, pl.field, '-3');
  stack.sqlite(`UPDATE counters SET value = value - 2 WHERE name='user_followers' AND key='${uid('rf0')}'`);
  const uf = redisName('user_followers', uid('rf1'));
  stack.redis('HINCRBY', uf.hash, uf.field, '5');

  // Light fire on those very objects for the whole run...
  let done = false;
  const fire = Promise.all([8, 9].map(async (i) => {
    for (let j = 0; !done; j++) {
      const c = cs[i];
      if (j % 4 === 0) await c.post(`/posts/${posts[j % 8 < 4 ? 0 : 1]}/like`);
      else if (j % 4 === 1) await c.post(`/posts/${posts[j % 8 < 4 ? 0 : 1]}/unlike`);
      else if (j % 4 === 2) await c.post(`/follow/rf${j % 8 < 4 ? 0 : 1}`);
      else await c.post(`/unfollow/rf${j % 8 < 4 ? 0 : 1}`);
      await sleep(300);
    }
  }));
  // ...and, at the moment the run has read what it will correct, changes
  // to every planted counter.
  faults.arm(stack, 'reconcile-fix');
  const ctl = spawn(path.join(BIN, 'tallyctl'), ['reconcile'], { env: stack.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  ctl.stdout.on('data', (d) => { out += d; });
  const exited = new Promise((r) => ctl.on('exit', r));
  const acts = [
    async (k) => { await cs[10 + (k % 2)].post(`/posts/${posts[0]}/like`); await cs[10 + (k % 2)].post(`/posts/${posts[1]}/like`); },
    async (k) => { await cs[10 + (k % 2)].post('/follow/rf0'); await cs[10 + (k % 2)].post('/follow/rf1'); },
  ];
  for (let k = 0; k < STOPS; k++) {
    // the run stops in tallyctl, or in the worker if it took the run
    // (the worker's runs are executed by its jobs process, a child of it)
    const who = await waitFor(() => {
      const w = stack.pidOf('tally-worker');
      return [ctl.pid, w, ...(w ? childrenOf(w).map((c) => c.pid) : [])].find((p) => p && state(p) === 'T');
    }, 60000, 50);
    for (const a of acts) await a(k);
    process.kill(who, 'SIGCONT');
  }
  const code = await exited;
  done = true;
  await fire;
  assert.equal(code, 0, out);
  assert.equal(faults.fired(stack, 'reconcile-fix'), STOPS);

  stack.tallyctl('flush');
  const id = stack.sqlite("SELECT max(id) FROM reconcile_runs WHERE reason='tallyctl'");
  const rep = Object.fromEntries(JSON.parse(stack.sqlite(`SELECT report FROM reconcile_runs WHERE id=${id}`)).map((f) => [f.family, f]));
  // a counter no round could settle is queued for the worker (settle.h):
  // say so when a planted drift is left
  const moving = Object.values(rep).filter((f) => f.queued > 0).map((f) => `${f.family}: ${f.queued} queued`);
  assert.deepEqual(compareAll(stack), [], `the run's report: ${moving.join(', ') || 'nothing queued'}`);
  assert.equal(rep.post_likes.wrong, 2);
  assert.equal(rep.post_likes.fixed, 2);
  assert.equal(rep.post_likes.max_error, 7);
  assert.equal(rep.user_followers.wrong, 2);
  assert.equal(rep.user_followers.fixed, 2);
  assert.equal(rep.user_followers.max_error, 5);
  for (const f of Object.values(rep)) {
    if (!['post_likes', 'user_followers'].includes(f.family)) assert.equal(f.wrong, 0, `${f.family} wrong`);
    assert.equal(f.queued, 0, `${f.family} queued`);
  }
  // a second run finds nothing
  assert.match(stack.tallyctl('reconcile'), / 0 counters wrong/);
});

// A correction must not be fooled by changes that cancel out while it
// waits.  The run reads a key's Redis state, then its recount, then lets
// late deltas in (the drain) before it corrects; it used to check only
// that the pending value had not moved since.  Forced here: the author's
// read-all X commits and its process stops before sending its delta
// (action-delta), so the run's recount counts X while Redis does not;
// the run's drain then applies X (-1), and at the stop before the fix
// (reconcile-fix) a new notification Y arrives (+1): the pending value
// is back where the run first read it, but Y is not in its recount.  The
// old check passed and the correction lost Y (a badge one short, as
// PostgreSQL's fault test once found, five short); the bucket's seq of
// changes makes it read again.
test('a correction is not fooled by changes that cancel out while it waits', async () => {
  const st = await startStack({ env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400', TALLY_FAULT: 'action-delta:stop:1,reconcile-fix:stop:1' } });
  const held = [];
  try {
    faults.disarm(st, 'action-delta', 1);
    faults.disarm(st, 'reconcile-fix', 1);
    const author = new Client(st.base);
    const fan = new Client(st.base);
    assert.equal((await author.signup('aba_auth')).status, 303);
    assert.equal((await fan.signup('aba_fan')).status, 303);
    await author.get('/feed');
    await fan.get('/feed');
    const r = await author.post('/posts', { body: 'one post', publish: '1' });
    const post = Number(r.location.split('/').pop());
    assert.equal((await fan.post(`/posts/${post}/like`)).status, 303);	// one unread
    await quietRuns(st);
    st.tallyctl('flush');
    assert.deepEqual(compareAll(st), []);
    const uid = st.sqlite("SELECT id FROM users WHERE login='aba_auth'");
    const unreadTruth = () => Number(st.sqlite(`SELECT COUNT(*) FROM notifications WHERE user_id=${uid} AND is_read=0`));
    const unread = async () => JSON.parse((await author.get('/badges.json')).text).notifications;
    assert.equal(await unread(), 1);
    // the worker's own drain would apply X before the run reads the key
    const worker = st.pidOf('tally-worker');
    process.kill(worker, 'SIGSTOP');
    held.push(worker);
    // X: committed, its delta not sent
    faults.arm(st, 'action-delta');
    const x = author.post('/notifications/read-all');
    const notifier = await waitFor(() => childrenOf(st.pidOf('notify.sock') ?? 0).map((c) => c.pid).find((p) => state(p) === 'T'), 20000, 20);
    held.push(notifier);
    assert.equal(unreadTruth(), 0);
    // the run: stopped after its recount (X counted) and its drain (X applied)
    faults.arm(st, 'reconcile-fix');
    const ctl = spawn(path.join(BIN, 'tallyctl'), ['reconcile'], { env: st.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    ctl.stdout.on('data', (d) => { out += d; });
    const exited = new Promise((res) => ctl.on('exit', res));
    await waitFor(() => state(ctl.pid) === 'T', 60000, 20);
    // Y: a new notification for the author (the unlike withdraws the read one)
    assert.equal((await fan.post(`/posts/${post}/unlike`)).status, 303);
    assert.equal((await fan.post(`/posts/${post}/like`)).status, 303);
    assert.equal(unreadTruth(), 1);
    process.kill(ctl.pid, 'SIGCONT');
    assert.equal(await exited, 0, out);
    for (const p of held.splice(0)) process.kill(p, 'SIGCONT');
    assert.equal((await x).status, 303);
    st.tallyctl('flush');
    assert.deepEqual(compareAll(st), []);
    assert.equal(await unread(), 1, 'the badge counts Y');
    const { hash, field } = redisName('user_unread', uid);
    assert.equal(st.redis('HGET', hash, field), '1');
    assert.equal(st.sqlite(`SELECT value FROM counters WHERE name='user_unread' AND key='${uid}'`), '1');
    assert.match(st.tallyctl('reconcile'), / 0 counters wrong/);
  } finally {
    for (const p of held) { try { process.kill(p, 'SIGCONT'); } catch { /* gone */ } }
    await st.stop();
  }
});
