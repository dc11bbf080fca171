// runlag.mjs -- the worker during the longest reconciliation (part of
// make bench): a stack seeded with RUNLAG_LIKES likes (1,000,000), 8
// clients liking and unliking without pause, a run started from the
// admin page; while it runs, a probe publishes a post, likes it, and
// times how long until SQLite's counters table holds the like (the flush
// lag).  Prints the run's length, the probes' lags (max and p50), and
// the worker's lock holds: the flush must keep its bound (2 s) while the
// run works, which the worker's jobs process makes so.
import { startStack, Client, sleep, waitFor, BIN } from '../lib/stack.mjs';
import { likeChurn } from '../lib/storm.mjs';
import { spawn } from 'node:child_process';
import path from 'node:path';

const LIKES = Number(process.env.RUNLAG_LIKES ?? 1000000);
const stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400' } });
const num = (sql) => Number(stack.sqlite(sql));
try {
  await waitFor(() => stack.redis('GET', '{tally}:gen') === '1' &&
    num("SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued','running')") === 0, 60000, 200);
  const t0 = Date.now();
  await new Promise((resolve, reject) => {
    const p = spawn(path.join(BIN, 'tallyctl'), ['seed', '--users', '20000', '--posts', '100000',
      '--follows', '100000', '--likes', String(LIKES)], { env: stack.env, stdio: 'ignore' });
    p.on('exit', (c) => (c === 0 ? resolve() : reject(new Error(`seed: ${c}`))));
  });
  process.stderr.write(`runlag: seeded ${num('SELECT COUNT(*) FROM likes')} likes in ${Date.now() - t0} ms\n`);
  const users = [];
  for (let i = 0; i < 10; i++) {
    const c = new Client(stack.base);
    await c.signup(`lag${i}`);
    await c.get('/feed');
    users.push(c);
  }
  const posts = [];
  for (let i = 0; i < 4; i++) {
    const r = await users[i].post('/posts', { body: `lag ${i}`, publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  const end = Date.now() + 600000;
  const load = likeChurn(users.slice(0, 8), posts, 600000);
  const admin = new Client(stack.base);
  await admin.login('admin', 'admin-pass-1');
  await admin.get('/admin/reconcile');
  await admin.post('/admin/reconcile', {});
  const id = num('SELECT max(id) FROM reconcile_runs');
  const lags = [];
  const started = Date.now();
  while (['queued', 'running'].includes(stack.sqlite(`SELECT state FROM reconcile_runs WHERE id=${id}`)) && Date.now() < end) {
    const r = await users[8].post('/posts', { body: `probe ${lags.length}`, publish: '1' });
    const p = Number(r.location.split('/').pop());
    await users[9].post(`/posts/${p}/like`);
    const at = Date.now();
    await waitFor(() => num(`SELECT coalesce(max(value), 0) FROM counters WHERE name='post_likes' AND key='${p}'`) === 1, 30000, 20);
    lags.push(Date.now() - at);
    await sleep(300);
  }
  await load.stop();
  const [state, ms] = stack.sqlite(`SELECT state, finished_at - started_at FROM reconcile_runs WHERE id=${id}`).split('|');
  lags.sort((a, b) => a - b);
  const p50 = lags[Math.floor(lags.length / 2)] ?? 0;
  console.log(`runlag: run over ${LIKES} likes ${state} in ${ms} ms (${Date.now() - started} ms seen); ` +
    `${lags.length} probes while it ran: flush lag p50 ${p50} ms, max ${lags.at(-1) ?? 0} ms (bound 2000)`);
  if (state !== 'done' || (lags.at(-1) ?? 0) >= 2000) process.exitCode = 1;
} finally {
  await stack.stop();
}
