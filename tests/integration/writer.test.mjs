// writer.test.mjs -- the social writer and the WAL under a steady write load.
// nginx sends the social handler's POSTs to one process of tally-social
// on social-writer.sock (nginx-conf/tally.conf.in), its GETs to the pool;
// the worker copies the WAL into the database every 25 ms, checkpoints
// it every 250 ms and starts it over past 16 MB (db_checkpoint), so a
// steady stream of likes no longer grows it without end.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { startStack, Client, childrenOf, sleep, waitFor, stoppedUnder, holdWriterLock } from '../lib/stack.mjs';
import { startFlood } from '../lib/flood.mjs';
import { faults } from '../lib/counts.mjs';

let stack;
const users = [];
const posts = [];

before(async () => {
  stack = await startStack({ env: { TALLY_FAULT: 'signup-session:stop:1' } });
  faults.disarm(stack, 'signup-session', 1);
  for (let i = 0; i < 8; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`wri${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  for (let i = 0; i < 8; i++) {
    const r = await users[0].post('/posts', { body: `writer post ${i}`, publish: '1' });
    assert.equal(r.status, 303);
    posts.push(Number(r.location.split('/').pop()));
  }
});

after(async () => { await stack?.stop(); });

test('the social pool serves pages; its POSTs go to the one-process social writer', async () => {
  const master = stack.pidOf('social-writer.sock');
  assert.ok(master, 'tally-run started the social writer');
  assert.match(fs.readFileSync(`/proc/${master}/cmdline`, 'utf8').split('\0').join(' '), / -n 1 /);
  const kids = childrenOf(master);
  assert.equal(kids.length, 1, 'one writing process');
  const pages = childrenOf(stack.pidOf('social.sock'));
  assert.ok(pages.length >= 2, 'the page pool keeps its processes');
  const c = users[1];
  await c.get(`/posts/${posts[0]}`);
  process.kill(kids[0].pid, 'SIGSTOP');
  let answered = false;
  try {
    // a like waits for the stopped writer ...
    const like = c.post(`/posts/${posts[0]}/like`).then((r) => { answered = true; return r; });
    // ... while the pages of the same handler answer
    for (const p of ['/feed', `/posts/${posts[1]}`, '/u/wri0']) {
      const t0 = Date.now();
      assert.equal((await users[2].get(p)).status, 200, p);
      assert.ok(Date.now() - t0 < 2000, `${p} answered at once`);
    }
    await sleep(300);
    assert.equal(answered, false, 'the POST went to the stopped writer');
    process.kill(kids[0].pid, 'SIGCONT');
    assert.equal((await like).status, 303);
  } finally {
    try { process.kill(kids[0].pid, 'SIGCONT'); } catch { /* gone */ }
  }
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[0]} AND user_id=(SELECT id FROM users WHERE login='wri1')`), '1');
});

test('a like the writer refuses holds no transaction: the other writers go on at once', async () => {
  // A like's write transaction opens before its session is read (ROUTE_TXN,
  // db_hold): every refusal must end it, or the next writer of any process
  // would wait out the busy timeout.
  const c = users[4];
  await c.get(`/posts/${posts[2]}`);
  const gone = new Client(stack.base);
  assert.equal((await gone.signup('wrigone')).status, 303);
  await gone.get('/feed');
  const sid = gone.jar.get('sid');
  const csrf = gone.csrf;
  assert.equal((await gone.post('/logout')).status, 303);
  const ghost = new Client(stack.base);
  ghost.jar.set('sid', sid);
  ghost.csrf = csrf;
  const refusals = [
    ['a forged csrf', () => c.post(`/posts/${posts[2]}/like`, { csrf: 'x'.repeat(43) }), 403],
    ['no session', () => new Client(stack.base).post(`/posts/${posts[2]}/like`, { csrf: 'x'.repeat(43) }), 303],
    ['a logged-out session', () => ghost.post(`/posts/${posts[2]}/like`), 303],
    ['a missing post', () => c.post('/posts/99999999/like'), 404],
  ];
  let n = 0;
  for (const [what, send, status] of refusals) {
    const r = await send();
    assert.equal(r.status, status, what);
    if (status === 303) assert.equal(r.location, '/login', what);
    let t0 = Date.now();
    stack.sqlite('BEGIN IMMEDIATE; ROLLBACK;');
    assert.ok(Date.now() - t0 < 2000, `${what}: SQLite's write lock is free`);
    t0 = Date.now();
    const other = new Client(stack.base);
    assert.equal((await other.signup(`wrifree${n++}`)).status, 303, `${what}: a write of the web pool`);
    assert.ok(Date.now() - t0 < 2000, `${what}: the writers' lock is free`);
  }
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[2]}`), '0', 'no refused like counted');
  assert.equal((await c.post(`/posts/${posts[2]}/like`)).status, 303);
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[2]}`), '1');
});

test('refused likes never take the writers\' lock: answered at once while another holds it', async () => {
  const c = users[5];
  await c.get(`/posts/${posts[3]}`);
  const gone = new Client(stack.base);
  assert.equal((await gone.signup('wrilockgone')).status, 303);
  await gone.get('/feed');
  const ghost = new Client(stack.base);
  ghost.jar.set('sid', gone.jar.get('sid'));
  ghost.csrf = gone.csrf;
  assert.equal((await gone.post('/logout')).status, 303);
  const release = await holdWriterLock(stack);
  try {
    // 30 refused requests of three kinds answer at once (the writer is
    // one process: one that waited for the lock would hold up the rest)
    const t0 = Date.now();
    const kinds = [
      [() => new Client(stack.base).post(`/posts/${posts[3]}/like`, { csrf: 'x'.repeat(43) }), 303],
      [() => c.post(`/posts/${posts[3]}/unlike`, { csrf: 'y'.repeat(43) }), 403],
      [() => ghost.post(`/posts/${posts[3]}/repost`), 303],
    ];
    const rs = await Promise.all(Array.from({ length: 30 }, (_, i) => kinds[i % 3][0]()
      .then((r) => [r.status, kinds[i % 3][1]])));
    const took = Date.now() - t0;
    for (const [got, want] of rs) assert.equal(got, want);
    // (one that waited for the lock would take its 5 s busy timeout)
    assert.ok(took < 4000, `30 refusals took ${took} ms with the lock held`);
    // while a signed-in like waits for the lock (the setup is real)
    let liked = null;
    const like = c.post(`/posts/${posts[3]}/like`).then((r) => { liked = r; });
    await sleep(500);
    assert.equal(liked, null, 'the signed-in like waits for the lock');
    await release();
    await like;
    assert.equal(liked.status, 303);
  } finally { await release(); }
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[3]}`), '1');
});

// A lock held past DB_BUSY_MS (5 s: a writer stopped holding it) is not
// the site failing: a like answers 503 with Retry-After, nothing of it
// written, after one wait: a like alone after its own (not one for its
// early hold and one more for its own begin).  The lock is then known
// held (store/db.h: DB_STUCK_MS): the likes that queued behind that
// wait, taken together as a group, and the likes after them, are
// answered busy at once, not after a wait of their own each (the queue
// behind two waits went past nginx's 10 s: a 504, which does not say
// whether anything was saved).  Once the lock is free the likes pass.
test('likes that cannot take the writers\' lock in 5 s answer 503 with Retry-After, the lock known held the next at once, and pass later', async () => {
  const cs = [users[6], users[7], users[4]];
  for (const c of cs) await c.get(`/posts/${posts[6]}`);
  const like = (c) => {
    const t0 = Date.now();
    return c.post(`/posts/${posts[6]}/like`).then((r) => ({ ...r, took: Date.now() - t0, end: Date.now() }));
  };
  const release = await holdWriterLock(stack);
  let rs;
  try {
    const first = like(cs[0]);		// the writer takes it alone
    await sleep(3000);			// eight queue behind it: one group
    rs = await Promise.all([first, ...users.map((c) => like(c))]);
    // the lock still held: a like now waits no 5 s either
    rs.push(await like(cs[0]));
  } finally { await release(); }
  for (const r of rs) {
    assert.equal(r.status, 503, 'busy, not failed');
    assert.equal(r.headers.get('retry-after'), '2');
    assert.match(r.text, /nothing was changed/);
  }
  assert.ok(rs[0].took >= 4500 && rs[0].took < 8000, `alone: one wait (${rs[0].took} ms)`);
  // 2 s queued behind the first, then answered together at once (not
  // each alone after a short wait of its own: 8 x 200 ms)
  const queued = rs.slice(1, -1);
  for (const r of queued) assert.ok(r.took < 4000, `queued behind the wait: answered with it (${r.took} ms)`);
  const spread = Math.max(...queued.map((r) => r.end)) - rs[0].end;
  assert.ok(spread < 1000, `the group answered as one (${spread} ms after the first)`);
  assert.ok(rs.at(-1).took < 1500, `the lock known held: no second wait (${rs.at(-1).took} ms)`);
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[6]}`), '0', 'nothing written');
  for (const c of cs) assert.equal((await c.post(`/posts/${posts[6]}/like`)).status, 303, 'the lock free, the like passes');
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[6]}`), '3');
});

// "Nothing was changed" only when nothing was: a request that committed
// a write, then waited in vain for the lock of its next one, failed
// halfway, and says so (500).  A signup whose account is committed
// (stopped there: fault point signup-session) while another writer
// holds the writers' lock, whose session's insert then gives up after
// 5 s: the account is there, and the answer is no 503.  (The lock is
// the writers' flock, as a stuck writer of tally holds it: an outside
// sqlite3 holding SQLite's own lock made the worker's lease renewal,
// which waits for SQLite holding the flock, add its 5 s to the
// signup's under a loaded machine: past nginx's 10 s, a 504.)
test('a signup whose account committed before its session waited in vain answers 500, not 503 "nothing was changed"', async () => {
  faults.arm(stack, 'signup-session');
  const c = new Client(stack.base);
  const pending = c.signup('wrihalf');
  const who = await waitFor(() => stoppedUnder(stack), 10000, 20);
  let r;
  const release = await holdWriterLock(stack, 20);
  try {
    process.kill(who, 'SIGCONT');
    r = await pending;
  } finally {
    process.kill(who, 'SIGCONT');
    await release();
  }
  assert.equal(faults.fired(stack, 'signup-session'), 1);
  assert.equal(r.status, 500, 'failed halfway');
  assert.doesNotMatch(r.text, /nothing was changed/);
  assert.equal(stack.sqlite("SELECT COUNT(*) FROM users WHERE login = 'wrihalf'"), '1', 'the account was made');
  assert.equal((await new Client(stack.base).login('wrihalf', 'password-123')).status, 303, 'and logs in');
});

test('nginx takes the rendered configuration without a warning', () => {
  // its maps and modules' variables fit nginx's table (nginx.conf.in's
  // variables_hash_max_size): a warning there is printed at every start
  const log = fs.readFileSync(path.join(stack.runDir, 'logs', 'nginx.log'), 'utf8');
  assert.doesNotMatch(log, /\[(warn|emerg|alert|crit)\]/, log);
});

test('a signed-in user\'s like during an anonymous POST flood is as fast as without it', async () => {
  const c = users[6];
  await c.get(`/posts/${posts[4]}`);
  const timeLikes = async (n) => {
    const ms = [];
    for (let i = 0; i < n; i++) {
      const t0 = performance.now();
      const r = await c.post(`/posts/${posts[4]}/${i % 2 ? 'unlike' : 'like'}`);
      ms.push(performance.now() - t0);
      assert.equal(r.status, 303);
    }
    ms.sort((a, b) => a - b);
    return ms[Math.floor(ms.length / 2)];
  };
  await timeLikes(6);			// warm
  const quiet = await timeLikes(30);
  // the flood from another process (tests/lib/flood.mjs): from this one,
  // its fetch() calls would queue the timed likes in node, not in tally
  const flood = startFlood(stack.base, `/posts/${posts[4]}/like`, `csrf=${'z'.repeat(43)}`,
    { clients: 12 });
  await flood.started;			// its first answer came back
  await sleep(200);
  const busy = await timeLikes(30);
  const { sent, statuses } = await flood.stop();
  assert.ok(sent > 100, `the flood sent ${sent} requests`);
  assert.deepEqual(Object.keys(statuses), ['303'], 'every flooding POST refused');
  // the writer does not see the flood (the next test); what it costs is
  // the CPU its refusals take on this machine's cores, so a generous bound
  // (likes queued behind the flood would wait seconds)
  assert.ok(busy < quiet * 3 + 100, `median like ${busy.toFixed(1)} ms during the flood, ${quiet.toFixed(1)} ms without`);
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[4]}`), '0');
});

test('an anonymous POST never queues for the social writer', async () => {
  // nginx sends a POST without a session cookie to the social pool
  // ($tally_post_to): with the writer's process stopped, anonymous
  // POSTs are still refused at once, and a signed-in like waits for it
  const writer = childrenOf(stack.pidOf('social-writer.sock'));
  assert.equal(writer.length, 1);
  const c = users[7];
  await c.get(`/posts/${posts[5]}`);
  process.kill(writer[0].pid, 'SIGSTOP');
  let liked = null;
  try {
    const like = c.post(`/posts/${posts[5]}/like`).then((r) => { liked = r; });
    const anon = new Client(stack.base);
    const t0 = Date.now();
    for (let i = 0; i < 20; i++) {
      const r = await anon.post(`/posts/${posts[5]}/like`, { csrf: 'z'.repeat(43) });
      assert.equal(r.status, 303);
      assert.match(r.location, /^\/login/);
    }
    assert.ok(Date.now() - t0 < 3000, `20 anonymous POSTs took ${Date.now() - t0} ms`);
    assert.equal(liked, null, 'the signed-in like waits for the stopped writer');
    process.kill(writer[0].pid, 'SIGCONT');
    await like;
  } finally { process.kill(writer[0].pid, 'SIGCONT'); }
  assert.equal(liked.status, 303);
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${posts[5]}`), '1');
});

// Page faults of a process, from /proc (minflt, the tenth field).
function minorFaults(pid) {
  const st = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[7]);
}

test('a page read after another process\'s write does not fault the database in again', async () => {
  // shared/store/dbmap.h: the process's map of the database outlives a
  // change.  SQLite's own map (the default VFS's) unmaps the whole file
  // at a reader's first transaction after any other process wrote, and
  // every page it then reads faults in again.
  const pool = childrenOf(stack.pidOf('social.sock')).map((k) => k.pid);
  const c = users[5];
  const reader = users[4];
  const faults = () => pool.reduce((n, pid) => n + minorFaults(pid), 0);
  for (let i = 0; i < 4; i++) await reader.get(`/u/wri0`);	// warm
  const rounds = 40;
  // Two passes, the fewer faults counted: a pass may also meet the
  // allocator returning memory (jemalloc's decay) once; SQLite's map
  // faults in every pass.
  let per = Infinity;
  for (let pass = 0; pass < 2 && per >= 1; pass++) {
    const f0 = faults();
    for (let i = 0; i < rounds; i++) {
      assert.equal((await c.post(`/posts/${posts[6]}/${i % 2 ? 'unlike' : 'like'}`)).status, 303);
      assert.equal((await reader.get(`/u/wri0`)).status, 200);
    }
    per = Math.min(per, (faults() - f0) / rounds);
  }
  // SQLite's map: 2-3 a page here (a small database); ours or read: 0.1-0.3
  assert.ok(per < 1, `${per.toFixed(2)} page faults a page read after a write`);
});

test('what a like commits is copied into the database within tens of ms, beside the writers', async (t) => {
  // handlers/worker.c: WAL_COPY_MS.  A reader whose transaction follows a
  // commit reads each page the WAL holds past the last copy with a
  // pread(); pages copied it reads from the database's map.  The copy
  // ran with the checkpoint every 250-300 ms; now every 25 ms.  The
  // wal-index (the -shm file, SQLite's wal.c): mxFrame, the WAL's last
  // frame, at byte 16; nBackfill, the frames copied, at byte 96.
  const shm = path.join(stack.runDir, 'tally.db-shm');
  const copied = () => {
    const b = Buffer.alloc(100);
    const fd = fs.openSync(shm, 'r');
    try { fs.readSync(fd, b, 0, 100, 0); } finally { fs.closeSync(fd); }
    return b.readUInt32LE(96) >= b.readUInt32LE(16);
  };
  const waits = [];
  for (let i = 0; i < 9; i++) {
    const r = await users[6].post(`/posts/${posts[7]}/${i % 2 ? 'unlike' : 'like'}`);
    assert.equal(r.status, 303);
    const t0 = Date.now();
    while (!copied() && Date.now() - t0 < 2000) await sleep(2);
    waits.push(Date.now() - t0);
    await sleep(37);	// out of step with the copies
  }
  waits.sort((a, b) => a - b);
  t.diagnostic(`copied after ${waits.join(', ')} ms`);
  // every 25 ms, and a busy machine's delays (a copy with the
  // checkpoint, every 250-300 ms, left a median of ~130 ms)
  assert.ok(waits[4] < 100, `the median like waited ${waits[4]} ms for its copy`);
  assert.ok(waits[8] < 2000, 'every like was copied');
});

// The writers' lock's hold times by holder, from /metrics: count, sum (s)
// and how many within 10 ms.
async function lockTimes() {
  const text = await (await fetch(`${stack.base}/metrics`)).text();
  const out = {};
  for (const who of ['social', 'worker', 'checkpoint']) {
    const get = (re) => {
      const m = text.match(re);
      assert.ok(m, `${re} in /metrics`);
      return Number(m[1]);
    };
    out[who] = {
      count: get(new RegExp(`^tally_sqlite_writer_lock_hold_seconds_count\\{holder="${who}"\\} (\\d+)$`, 'm')),
      sum: get(new RegExp(`^tally_sqlite_writer_lock_hold_seconds_sum\\{holder="${who}"\\} ([\\d.]+)$`, 'm')),
      'le0.01': get(new RegExp(`^tally_sqlite_writer_lock_hold_seconds_bucket\\{holder="${who}",le="0.01"\\} (\\d+)$`, 'm')),
    };
  }
  return out;
}

test('under a steady stream of likes the WAL starts over instead of growing', async (t) => {
  const wal = path.join(stack.runDir, 'tally.db-wal');
  const size = () => { try { return fs.statSync(wal).size; } catch { return 0; } };
  // Each like or unlike commits at least 4 pages (the like, the
  // notification and its index by recipient, the post), 4 KB each: 5,000
  // of them would leave 82 MB in a WAL that never starts over.  The
  // worker starts it over past 16 MB (WAL_RESTART_FRAMES), checking
  // every 250 ms, and a writer that finds every frame copied (the copies
  // every 25 ms) starts it over itself, as SQLite does; it peaks at
  // ~17-26 MB here, more on a slow disk.
  const WANT = 5000, BOUND = 48 << 20;
  const lock0 = await lockTimes();
  let likes = 0, maxSize = 0, stop = false;
  const sampler = (async () => {
    while (!stop) { maxSize = Math.max(maxSize, size()); await sleep(50); }
  })();
  const end = Date.now() + 40000;
  await Promise.all(users.map(async (c, i) => {
    for (let n = 0; likes < WANT && Date.now() < end; n++) {
      const p = posts[(i + n) % posts.length];
      const r = await c.post(`/posts/${p}/${(n >> 3) % 2 ? 'unlike' : 'like'}`);
      assert.equal(r.status, 303);
      likes++;
    }
  }));
  stop = true;
  await sampler;
  t.diagnostic(`${likes} likes: the WAL peaked at ${maxSize} bytes`);
  assert.ok(likes >= WANT, `only ${likes} likes in 40 s`);
  assert.ok(maxSize < BOUND, `WAL reached ${maxSize} bytes after ${likes} likes (${likes * 4 * 4096} without restarts)`);
  // /metrics: the likes took the writers' lock in the social writer (the
  // ones queued together once: group commit, group.test.mjs); a
  // checkpoint that started the WAL over took it too, each briefly (the
  // copying is done beside the writers, passes until what is left is
  // short: db_checkpoint), when the writers had not started it over
  // first
  const lock1 = await lockTimes();
  const d = (who, k) => lock1[who][k] - lock0[who][k];
  t.diagnostic(`writers' lock: social ${d('social', 'count')} holds, mean ${(1000 * d('social', 'sum') / d('social', 'count')).toFixed(3)} ms; ` +
    `checkpoint ${d('checkpoint', 'count')} holds, mean ${(1000 * d('checkpoint', 'sum') / Math.max(1, d('checkpoint', 'count'))).toFixed(3)} ms, ` +
    `${d('checkpoint', 'le0.01')} within 10 ms; worker ${d('worker', 'count')} holds`);
  assert.ok(d('social', 'count') >= 1 && d('social', 'count') <= likes,
    'the likes held the lock, at most once each');
  assert.ok(d('worker', 'count') >= 1, 'the flusher held it too');
  // and it is small again once the load is over
  await waitFor(() => {
    // busy (1|-1|-1): the worker's copy ran at the same moment
    const [busy, frames] = stack.sqlite('PRAGMA wal_checkpoint(PASSIVE)').split('|').map(Number);
    return busy === 0 && frames < 100;
  }, 5000, 100);
});
