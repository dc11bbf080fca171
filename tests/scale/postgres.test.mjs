// postgres.test.mjs -- tally on PostgreSQL (make run DB=postgres): the
// server tally-run starts, the tables of the contract, and the server
// killed under load.
//
// The storm: 12 clients like, unlike, follow and unfollow, each repeating
// an action until it is acknowledged (303), while PostgreSQL is killed
// with SIGKILL twice: once one backend (the server then ends every
// session and recovers), once the postmaster itself (tally-run starts it
// again).  Requests meanwhile fail (5xx, never a 303 to /login) and are
// retried; no acknowledged
// action may be missing from the truth, and after one reconciliation
// every counter equals its recount.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawnSync } from 'node:child_process';
import { startStack, sleep, waitFor, childrenOf, Client, ROOT } from '../lib/stack.mjs';
import { acked, stormSetup, storm, until303, assertExactAfterRepair } from '../lib/storm.mjs';
import { newUser } from '../lib/social.mjs';
import { measureUntil } from '../lib/cost.mjs';

let stack;
before(async () => {
  stack = await startStack({ db: 'postgres', env: { TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400' } });
});
after(async () => { await stack?.stop(); });

const q = (sql) => stack.sqlite(sql);

test('DB=postgres: a real server under RUN_DIR/pg, its URL in RUN_DIR/database-url, the tables of the contract', () => {
  const url = fs.readFileSync(path.join(stack.runDir, 'database-url'), 'utf8').trim();
  assert.match(url, /^postgresql:\/\/\/tally\?host=.*\/pg&user=tally_app$/);
  assert.ok(fs.existsSync(path.join(stack.runDir, 'pg', 'data', 'PG_VERSION')));
  assert.ok(!fs.existsSync(path.join(stack.runDir, 'tally.db')), 'no SQLite file');
  // the programs' role is no superuser: it owns its database, no more
  assert.equal(stack.sqlite('SELECT rolsuper, rolcreatedb, rolcreaterole FROM pg_roles WHERE rolname = current_user'), 'f|f|f');
  assert.equal(stack.sqlite('SELECT current_user'), 'tally_app');
  const pg = stack.children().find((c) => /\/postgres -D /.test(c.cmd));
  assert.ok(pg, 'tally-run supervises postgres');
  assert.match(q('SELECT version()'), /^PostgreSQL 1\d/);
  // no TCP: the server listens on its socket only
  assert.equal(q('SHOW listen_addresses'), '');
  const cols = (t) => q(`SELECT column_name FROM information_schema.columns WHERE table_name = '${t}' ORDER BY column_name`).split('\n');
  for (const [t, want] of Object.entries({
    users: ['id', 'login'], posts: ['id', 'user_id', 'topic_id', 'status', 'is_deleted'],
    follows: ['follower_id', 'followee_id'], likes: ['user_id', 'post_id'],
    notifications: ['id', 'user_id', 'is_read'], counters: ['name', 'key', 'value'],
  })) {
    for (const c of want) assert.ok(cols(t).includes(c), `${t}.${c}`);
  }
  assert.equal(q("SELECT string_agg(column_name, ',' ORDER BY column_name) FROM information_schema.key_column_usage WHERE table_name = 'counters' AND constraint_name LIKE '%pkey'"), 'key,name');
  // tallyctl finds the database through RUN_DIR alone (no TALLY_DB)
  assert.equal(stack.env.TALLY_DB, undefined);
  assert.match(stack.tallyctl('flush'), /flush/i);
});

// A connection the server ends inside a transaction (a restart, a
// failover): the engine connects again, and refuses every statement of
// the lost transaction until its caller ends it, so that nothing of it
// commits on the new connection on its own (store/pg.c refused();
// tests/scale/pglost.c runs the cases).
test('a connection lost inside a transaction, a group commit or a statement of none: nothing of it commits on the new connection, and the next transaction begins as its own', () => {
  const url = fs.readFileSync(path.join(stack.runDir, 'database-url'), 'utf8').trim();
  execFileSync('make', ['-s', 'build/scale/pglost'], { cwd: ROOT, stdio: 'ignore' });	// the tree's own
  const r = spawnSync(path.join(ROOT, 'build/scale/pglost'), [url],
    { encoding: 'utf8', env: { ...process.env, CMOCKA_MESSAGE_OUTPUT: 'TAP' }, timeout: 60000 });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /^ok 3 /m);
});

// A write transaction's BEGIN, and the transaction id it takes at once
// (count/outbox.h), are sent with its first statement in one round trip
// (libpq's pipeline mode, store/pg.c pipelined()), and its COMMIT with
// its last, the outbox row (outbox_commit()): a like is a round trip a
// statement, where it was one more for the BEGIN and one for the COMMIT.
// The session check before it is a statement of its own.  A statement a
// writer process runs for the first time is prepared first (one more
// each): the writers have liked and unliked before, so only a few are
// left.
test('a like on PostgreSQL: one call of the server\'s function, a round trip a statement, its BEGIN riding with the first and its COMMIT with the last', async () => {
  const author = await newUser(stack, 'pgtrips_author');
  const fan = await newUser(stack, 'pgtrips_fan');
  const r = await author.c.post('/posts', { body: 'counted round trips', topic: '', publish: '1' });
  assert.equal(r.status, 303);
  const post = Number(r.location.match(/^\/posts\/(\d+)$/)[1]);
  const act = (i) => fan.c.post(`/posts/${post}/${i % 2 ? 'unlike' : 'like'}`);
  for (let i = 0; i < 80; i++) assert.equal((await act(i)).status, 303);
  const n = 30;
  const m = await measureUntil(stack, 'social', n, act, () => true, 1);	// the writer pool's too
  for (const a of m.answers) assert.equal(a.status, 303);
  assert.equal(Number(q(`SELECT count(*) FROM likes WHERE post_id = ${post}`)), 0);
  // the prepares of statements a writer process had not run before (of
  // 8 processes, a few after 80 actions); a BEGIN alone would be n more,
  // a COMMIT alone n more
  const extra = m.sqlTrips - m.stmts;
  assert.ok(extra >= 0 && extra < n / 2,
    `${m.sqlTrips} round trips for ${m.stmts} statements in ${n} likes and unlikes (${extra} more than a statement each): ${JSON.stringify(m.runs)}`);
  // a like's or an unlike's steps are one call of the server's function
  // (schema_pg.c's tally_like, tally_unlike), then the outbox row with
  // the COMMIT: two round trips where the steps one by one took ten
  // (and the session's check, one statement, beside them)
  assert.equal((m.runs.STMT_LIKE_ON_SERVER ?? 0) + (m.runs.STMT_UNLIKE_ON_SERVER ?? 0), n,
    `one call an action: ${JSON.stringify(m.runs)}`);
  assert.ok(!('STMT_LIKE_INSERT' in m.runs) && !('STMT_NOTE_INSERT' in m.runs), `no step of its own: ${JSON.stringify(m.runs)}`);
  const session = m.runs.STMT_SESSION_GET ?? 0;
  assert.ok(session <= n && m.sqlTrips - session <= 2 * n + n / 2,
    `${m.sqlTrips} round trips in ${n} likes and unlikes, ${session} of them sessions': ${JSON.stringify(m.runs)}`);
});

// A connection the server ended while a handler sat idle is noticed
// before the next statement, which goes out on a new one: a request
// after every backend was terminated is answered as if nothing happened.
// A request whose session the server cannot check (the server is down)
// is not a logged-out one: 503 with Retry-After, nothing done, never a
// 303 to /login (which a client takes for an answer).
// The search reads a range of the name index whose upper end follows the
// prefix with one more character; PostgreSQL refuses a text parameter
// that is not UTF-8, so that character must be one (it was a 0xff byte:
// every search was a 500 here).
test('/people?q= finds by a prefix on PostgreSQL too, any case, a Unicode prefix included', async () => {
  await newUser(stack, 'pgfind_alpha');
  await newUser(stack, 'pgfind_beta');
  const visitor = new Client(stack.base);	// a header naming nobody
  for (const [query, want, not] of [['pgfind', ['pgfind_alpha', 'pgfind_beta'], []],
    ['PGFIND_A', ['pgfind_alpha'], ['pgfind_beta']], ['pgfind_b', ['pgfind_beta'], ['pgfind_alpha']],
    ['pgfind_\u00e9', [], ['pgfind_alpha', 'pgfind_beta']]]) {
    const r = await visitor.get(`/people?q=${encodeURIComponent(query)}`);
    assert.equal(r.status, 200, `q=${query}`);
    for (const l of want) assert.match(r.text, new RegExp(`href="/u/${l}"`), `q=${query} finds ${l}`);
    for (const l of not) assert.doesNotMatch(r.text, new RegExp(`href="/u/${l}"`), `q=${query} not ${l}`);
  }
});

// Every letter folds on PostgreSQL too (base/words.h: the process's C
// folds both the index's words and the query), and the words written
// under the old fold (ASCII letters alone) are folded again by the
// schema's step 14 (store/refold.h), which a connection opened on an
// older schema runs: here tallyctl's, after the version was set back.
test('/people?q= folds every letter on PostgreSQL, and the schema step folds again the words written before', async () => {
  const c = new Client(stack.base);
  assert.equal((await c.signup('pgfold_new', 'password-123', '\u00c9mile \uff34\uff41\uff52\uff4f')).status, 303);
  const older = await newUser(stack, 'pgfold_old');
  const twice = await newUser(stack, 'pgfold_twice');
  stack.sqlite(`INSERT INTO name_words(word, user_id) VALUES ('\u00c9lodie', ${older.id}),
    ('\u00c9lodie', ${twice.id}), ('\u00e9lodie', ${twice.id}), ('\u5c71\u7530', ${older.id})`);
  const found = async (q) => [...(await c.get(`/people?q=${encodeURIComponent(q)}`)).text.matchAll(/<li data-login="([^"]+)"/g)].map((m) => m[1]).sort();
  for (const q of ['\u00e9mile', '\u00c9MI', '\uff54\uff41', '\uff34\uff21\uff32']) assert.deepEqual(await found(q), ['pgfold_new'], `q=${q}`);
  assert.deepEqual(await found('\u00e9lodie'), ['pgfold_twice'], 'the old fold\'s word is not found before the step');
  const version = stack.sqlite('SELECT max(version) FROM tally_schema');
  // back before step 14, the fold's (the steps after it repeat alike)
  stack.sqlite('DELETE FROM tally_schema; INSERT INTO tally_schema VALUES (13)');
  stack.tallyctl('flush');	// a connection opened: the step runs
  assert.equal(stack.sqlite('SELECT max(version) FROM tally_schema'), version);
  assert.deepEqual(await found('\u00e9lodie'), ['pgfold_old', 'pgfold_twice']);
  assert.deepEqual(await found('\u00c9LO'), ['pgfold_old', 'pgfold_twice']);
  assert.equal(stack.sqlite(`SELECT string_agg(word, ',' ORDER BY word) FROM name_words WHERE user_id IN (${older.id}, ${twice.id}) AND word NOT LIKE 'pgfold%'`),
    '\u00e9lodie,\u00e9lodie,\u5c71\u7530', 'one row a user, the unfolded ones gone, a word without case kept');
});

// A bulk load leaves PostgreSQL's planner without statistics, and its
// rows not yet marked visible to all (index-only scans then read the
// table too), until the autovacuum comes by a minute or more later;
// meanwhile a home feed cost twice its CPU (docs/BENCHMARKS.md).
// tallyctl seed settles them when it is done: VACUUM (ANALYZE)
// (vacuum_count and analyze_count count those alone, not the
// autovacuum's).
test('tallyctl seed leaves the rows it wrote vacuumed and analyzed', async () => {
  const count = (t) => q(`SELECT vacuum_count || ' ' || analyze_count FROM pg_stat_user_tables WHERE relname = '${t}'`)
    .split(' ').map(Number);
  const tables = ['posts', 'follows', 'likes', 'users'];
  const before = Object.fromEntries(tables.map((t) => [t, count(t)]));
  stack.tallyctl('seed', '--users', '12', '--posts', '20', '--follows', '30', '--likes', '10', '--comments', '0', '--seed', '5');
  // a session's statistics reach the server's view as it ends
  const done = (t) => { const [v, a] = count(t); return v > before[t][0] && a > before[t][1]; };
  await waitFor(() => tables.every(done), 5000, 100)
    .catch(() => assert.fail(`vacuumed and analyzed after the seed: ${tables.map((t) => `${t} ${before[t]} -> ${count(t)}`)}`));
});

// PostgreSQL's default cost of a random page (4, a spinning disk) made
// its planner read a small table whole once per row of a loop rather than
// probe its index: in a home feed, every post's "reposted by someone you
// follow" scanned all of reposts, and the statement cost the server twice
// its CPU (docs/BENCHMARKS.md).  tally's connections set 1.1 unless the
// operator set it (pg.c).  Counted by the server's own statistics: one
// cold feed of 30 posts probes reposts' index, and reads it whole at most
// a few times, not once a post.
test('a home feed probes indexes on PostgreSQL: no table read whole once per post', async () => {
  stack.tallyctl('seed', '--users', '300', '--posts', '900', '--follows', '6000', '--likes', '1500', '--comments', '0', '--seed', '49');
  const reader = await newUser(stack, 'pgplan');
  const authors = q(`SELECT u.login FROM users u JOIN posts p ON p.user_id = u.id
    WHERE p.status = 1 AND p.is_deleted = 0 AND u.login LIKE 'user%'
    GROUP BY u.id, u.login ORDER BY count(*) DESC, u.id LIMIT 20`).split('\n').filter(Boolean);
  assert.equal(authors.length, 20);
  for (const a of authors) assert.equal((await reader.c.post(`/follow/${a}`)).status, 303);
  assert.ok(Number(q('SELECT count(*) FROM reposts')) > 20, 'the seed reposted');
  const scans = () => q(`SELECT coalesce(seq_scan, 0) || ' ' || coalesce(idx_scan, 0) FROM pg_stat_user_tables WHERE relname = 'reposts'`)
    .split(' ').map(Number);
  await sleep(1500);	// the follows' statistics reach the server's view
  const [seq0, idx0] = scans();
  const f = await reader.c.get('/feed');
  assert.equal(f.status, 200);
  const shown = (f.text.match(/<article/g) ?? []).length;
  assert.ok(shown >= 20, `the feed shows the authors' posts (${shown})`);
  // a backend's statistics reach the server's view within a second or so
  // of its going idle; the index probes (one a post) show they came
  let seq = seq0, idx = idx0;
  await waitFor(() => { [seq, idx] = scans(); return idx - idx0 >= shown; }, 15000, 200)
    .catch(() => assert.fail(`reposts' index probed once a post: ${idx - idx0} probes, ${seq - seq0} whole reads for ${shown} posts`));
  assert.ok(seq - seq0 < 5, `reposts read whole ${seq - seq0} times for ${shown} posts (index probes: ${idx - idx0})`);
});

test('connections cut while idle are made again unseen; a session PostgreSQL cannot check is a 503, not a logout; with its copy in Redis the feed still shows', async () => {
  const author = await newUser(stack, 'pgsa');
  const fan = await newUser(stack, 'pgsf');
  const r0 = await author.c.post('/posts', { body: 'a post to like', publish: '1' });
  const post = Number(r0.location.split('/').pop());
  const likes = () => Number(q(`SELECT COUNT(*) FROM likes WHERE post_id=${post}`));
  const reconnects = () => ['social', 'social-writer', 'web'].map((n) => stack.log(n).split('postgres: connected again').length - 1).reduce((a, b) => a + b);
  // every connection of the handlers cut at once, while they are idle
  const before = reconnects();
  const cut = Number(q("SELECT COUNT(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE usename = 'tally_app' AND pid <> pg_backend_pid() AND backend_type = 'client backend'"));
  assert.ok(cut > 0, 'connections were cut');
  await sleep(200);
  for (let i = 0; i < 8; i++) {
    const r = await fan.c.post(`/posts/${post}/${i % 2 ? 'unlike' : 'like'}`);
    assert.ok(acked(r), `try ${i}: ${r.status} ${r.location ?? ''}`);
    const f = await fan.c.get('/feed');
    assert.equal(f.status, 200);
  }
  assert.equal(likes(), 0);
  assert.ok(reconnects() > before, 'the handlers connected again');

  // the server down (its supervisor held): no session can be checked
  const pm = stack.children().find((c) => /\/postgres -D /.test(c.cmd))?.pid;
  process.kill(stack.proc.pid, 'SIGSTOP');
  try {
    process.kill(pm, 'SIGKILL');
    // gone, or a zombie its stopped parent cannot reap yet
    const gone = () => { try { return /^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pm}/stat`, 'utf8')); } catch { return true; } };
    await waitFor(gone, 5000, 20);
    await sleep(300);	// the backends follow their postmaster
    for (let i = 0; i < 3; i++) {
      const r = await fan.c.post(`/posts/${post}/like`);
      assert.equal(r.status, 503, `answered ${r.status} ${r.location ?? ''}`);
      assert.equal(r.headers.get('retry-after'), '1');
      assert.match(r.text, /could not be checked/);
      // a page that asks the database for the session: 503 as well
      const n = await fan.c.get('/notifications');
      assert.equal(n.status, 503, `/notifications answered ${n.status} ${n.location ?? ''}`);
      // the feed takes its session from the Redis copy (sesscache.h): it
      // is still this user, never a logout (this feed needs no other
      // database read: it is empty, its suggestions left out)
      const f = await fan.c.get('/feed');
      assert.equal(f.status, 200, `the feed answered ${f.status} ${f.location ?? ''}`);
      assert.match(f.text, /data-me="pgsf"/);
      // a logout: not a forged form (403), and the session stays
      const lo = await fan.c.post('/logout');
      assert.equal(lo.status, 503, `the logout answered ${lo.status} ${lo.location ?? ''}`);
    }
    // the badge poll without its session's copy in Redis asks the
    // database: 503, not the 401 that makes the page stop polling and
    // close its live badges (www/tally.js) as after a logout
    for (const k of stack.redis('KEYS', `*:u${fan.id}:ss`).split('\n').filter(Boolean)) stack.redis('DEL', k);
    const b = await fan.c.get('/badges.json');
    assert.equal(b.status, 503, `the badge poll answered ${b.status}`);
    assert.equal(b.headers.get('retry-after'), '1');
  } finally {
    process.kill(stack.proc.pid, 'SIGCONT');
  }
  const ok = await until303(() => fan.c.post(`/posts/${post}/like`));
  assert.ok(acked(ok), ok.location);
  assert.equal(likes(), 1, 'done once, when it was acknowledged');
  await waitFor(async () => (await fetch(`${stack.base}/healthz`)).status === 200, 30000, 200);
});

test('PostgreSQL killed with SIGKILL under load (a backend, then the postmaster): no acknowledged action lost, counts exact', async () => {
  const load = await stormSetup(stack, 'pgk');
  const postmaster = () => stack.children().find((c) => /\/postgres -D /.test(c.cmd))?.pid;
  let failed = 0;
  const st = storm(load, () => { failed++; });
  await sleep(2000);
  // one backend: the server ends every session and recovers
  const pm = postmaster();
  const backend = childrenOf(pm).find((c) => /postgres: tally_app tally/.test(c.cmd));
  assert.ok(backend, `a client backend of ${pm}`);
  process.kill(backend.pid, 'SIGKILL');
  await sleep(3000);
  // the postmaster: tally-run starts it again
  process.kill(pm, 'SIGKILL');
  await waitFor(() => postmaster() && postmaster() !== pm, 20000, 100);
  await sleep(4000);
  await st.stop();
  assert.ok(failed > 0, 'the kills were felt');
  assert.ok(st.likeState.size > 10 && st.followState.size > 10);

  await waitFor(async () => (await fetch(`${stack.base}/healthz`)).status === 200, 30000, 200);
  await assertExactAfterRepair(stack, load, st);
});
