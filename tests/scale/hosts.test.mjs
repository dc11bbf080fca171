// hosts.test.mjs -- two handler hosts behind one nginx (make run
// DB=postgres HOSTS=2): each a supervisor with every handler pool on
// FastCGI over TCP at 127.0.0.2 / 127.0.0.3 and a worker; one worker at
// a time holds the jobs' lease.
//
// Under load (12 clients liking, unliking, following, unfollowing, each
// repeating an action until acknowledged), every process of the host
// whose worker holds the lease is killed with SIGKILL at once: the site
// keeps answering through the other host (a few requests that were in
// flight on the dead one fail), the other worker takes the lease, no
// acknowledged action is lost, and after one reconciliation every
// counter equals its recount.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import net from 'node:net';
import { startStack, sleep, waitFor, childrenOf, Client, procState } from '../lib/stack.mjs';
import { compareAll, faults } from '../lib/counts.mjs';
import { insertPosts } from '../lib/social.mjs';
import { stormSetup, storm, assertExactAfterRepair } from '../lib/storm.mjs';

let stack;
before(async () => {
  stack = await startStack({ db: 'postgres', env: { HOSTS: '2', TALLY_RECONCILE_EVERY: '0', TALLY_DRIFT_EVERY: '86400',
    TALLY_FAULT: 'unfollow-scored:stop:1' } });
  faults.disarm(stack, 'unfollow-scored', 1);
});
after(async () => { await stack?.stop(); });

const q = (sql) => stack.sqlite(sql);
const hostPid = (k) => Number(fs.readFileSync(path.join(stack.runDir, `host${k}`, 'pid'), 'utf8'));
const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
// every process under pid, pid included
const tree = (pid) => [pid, ...childrenOf(pid).flatMap((c) => tree(c.pid))];
const leaseOwnerPid = () => Number(q('SELECT owner FROM worker_lease').split(':')[1] ?? 0);
const hostOf = (pid) => [1, 2].find((k) => tree(hostPid(k)).includes(pid));

test('HOSTS=2: two host supervisors, every pool on FastCGI over TCP per host, one upstream a handler, one lease', async () => {
  for (const k of [1, 2]) {
    const pid = hostPid(k);
    assert.ok(alive(pid), `host ${k} supervisor ${pid}`);
    const cmds = childrenOf(pid).map((c) => c.cmd);
    for (const prog of ['tally-web', 'tally-social', 'tally-notify', 'tally-admin']) {
      assert.ok(cmds.some((c) => c.includes(prog) && c.includes(`-s 127.0.0.${k + 1}:`)), `host ${k}: ${prog} on TCP (${cmds.join(' | ')})`);
    }
    assert.ok(cmds.some((c) => c.includes('tally-worker')), `host ${k}: a worker`);
  }
  // the site's own tally-run runs no pool itself
  assert.ok(!stack.children().some((c) => /tally-(web|social|notify|admin|worker)\b/.test(c.cmd)));
  const http = fs.readFileSync(path.join(stack.runDir, 'nginx', 'tally-http.conf'), 'utf8');
  const web = http.match(/upstream tally_web \{([^}]*)\}/);
  assert.ok(web, 'an upstream for tally-web');
  assert.match(web[1], /server 127\.0\.0\.2:\d+/);
  assert.match(web[1], /server 127\.0\.0\.3:\d+/);
  assert.match(fs.readFileSync(path.join(stack.runDir, 'nginx', 'tally.conf'), 'utf8'), /fastcgi_pass tally_web;/);
  // exactly one worker holds the lease, and it is a live worker of a host
  await waitFor(() => leaseOwnerPid() > 0, 10000);
  const owner = leaseOwnerPid();
  assert.ok(alive(owner) && hostOf(owner), `lease owner ${owner} is a live worker of a host`);
  assert.equal(Number(q('SELECT COUNT(*) FROM worker_lease')), 1);
});

// An unfollow on one host and a follow of the same pair on the other:
// the unfollow read its home's new places (the followee's posts: none)
// before the follow committed, and put them after the follow's own put,
// so a home that follows the author lost the author's posts, marked
// complete (readers drop stale entries, none adds a missing one).
// Forced: the unfollow stops between its read and its put (fault point
// unfollow-scored) while the follow goes to the other host's writer.
// Each now reads the follow again after its put and does it again as
// the follow stands.
test('a follow on one host while an unfollow of the pair is between its read and its put on the other: the posts stay in the home', async () => {
  const v = new Client(stack.base);
  const a = new Client(stack.base);
  const big = new Client(stack.base);
  assert.equal((await v.signup('ho_reader')).status, 303);
  assert.equal((await a.signup('ho_author')).status, 303);
  assert.equal((await big.signup('ho_big')).status, 303);
  await a.get('/feed');
  // a home of 800 more: an unfollow that leaves 750 or more is not
  // followed by a rebuild, which would have hidden the race
  insertPosts(stack, Number(q("SELECT id FROM users WHERE login = 'ho_big'")), 800, { t0: Date.now() - 86400000 });
  await v.get('/feed');
  assert.equal((await v.post('/follow/ho_big')).status, 303);
  const posts = [];
  for (let i = 0; i < 3; i++) posts.push(Number((await a.post('/posts', { body: `ho post ${i}`, publish: '1' })).location.split('/').pop()));
  assert.equal((await v.post('/follow/ho_author')).status, 303);
  const ids = async () => [...(await v.get('/feed')).text.matchAll(/<article data-post-id="(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual((await ids()).slice(0, 3).sort(), [...posts].sort());
  faults.arm(stack, 'unfollow-scored');
  const unfollow = v.post('/unfollow/ho_author');
  const social = () => [1, 2].flatMap((k) => tree(hostPid(k))).filter((pid) => procState(pid) === 'T');
  const stopped = await waitFor(() => social()[0], 15000, 20);
  const other = 3 - hostOf(stopped);
  // the other host's social writer, as nginx's upstream names it
  const http = fs.readFileSync(path.join(stack.runDir, 'nginx', 'tally-http.conf'), 'utf8');
  const up = http.match(/upstream tally_social_writer \{([^}]*)\}/)[1];
  const addr = up.match(new RegExp(`server (127\\.0\\.0\\.${other + 1}:\\d+)`))[1];
  const body = `csrf=${encodeURIComponent(v.csrf)}`;
  const head = execFileSync('cgi-fcgi', ['-bind', '-connect', addr], {
    env: {
      PATH: process.env.PATH, REQUEST_METHOD: 'POST', SCRIPT_NAME: '/follow/ho_author', REQUEST_URI: '/follow/ho_author',
      DOCUMENT_URI: '/follow/ho_author', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1', HTTP_HOST: 'localhost',
      REMOTE_ADDR: '127.0.0.1', HTTP_COOKIE: v.cookieHeader(), CONTENT_TYPE: 'application/x-www-form-urlencoded',
      CONTENT_LENGTH: String(body.length),
    },
    input: body, encoding: 'utf8', timeout: 10000,
  }).split('\r\n\r\n')[0];
  assert.match(head, /^Status: 303/m, `the follow on host ${other}: ${head}`);
  process.kill(stopped, 'SIGCONT');
  assert.equal((await unfollow).status, 303);
  assert.equal(q(`SELECT COUNT(*) FROM follows f JOIN users a ON a.id = f.followee_id JOIN users b ON b.id = f.follower_id
    WHERE a.login = 'ho_author' AND b.login = 'ho_reader'`), '1', 'the follow committed last stands');
  assert.deepEqual((await ids()).slice(0, 3).sort(), [...posts].sort(), 'the author\'s posts are in the home');
});

test('kill -9 of every process of the host that holds the lease, under load: the site answers, nothing acknowledged is lost, exact after one reconciliation', async () => {
  const load = await stormSetup(stack, 'hk');
  const N = load.users.length;
  await waitFor(() => leaseOwnerPid() > 0, 10000);
  const owner = leaseOwnerPid();
  const victim = hostOf(owner);
  assert.ok(victim, 'the lease holder belongs to a host');
  const failures = [];
  let killedAt = 0;
  const st = storm(load, () => failures.push(Date.now() - killedAt));
  await sleep(2000);
  const before = failures.length;
  const doomed = tree(hostPid(victim));
  killedAt = Date.now();
  for (const p of doomed) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
  // the other host's worker takes the lease once it expires
  await waitFor(() => { const o = leaseOwnerPid(); return o > 0 && o !== owner && alive(o); }, 15000, 200);
  await sleep(3000);
  await st.stop();
  const after = failures.length - before;
  console.log(`# host ${victim} (${doomed.length} processes) killed; ${after} requests failed after, at ms ${failures.slice(before).join(',')}`);
  assert.equal(before, 0, 'no failure before the kill');
  assert.ok(after <= N + 4, `at most a few failed requests (${after})`);
  assert.ok(failures.slice(before).every((ms) => ms < 5000), 'failures only in the first seconds');
  assert.ok(st.likeState.size > 10 && st.followState.size > 10);
  // the killed host came back under the site's supervisor
  await waitFor(() => alive(hostPid(victim)) && !doomed.includes(hostPid(victim)), 20000, 200);

  await assertExactAfterRepair(stack, load, st);
});

// PostgreSQL without a lock shared by all writers (store/pg.h): 16
// clients like and unlike the same two posts through both hosts at once
// (one post row, one author's counters, one notification group each:
// every writer waits on the others' rows), and every process of one host
// is killed with SIGKILL in the middle.  No request is answered with a
// server error (a deadlock is run again, web/route.c: never a 500), and
// once the storm ends every count equals its recount with no
// reconciliation: the outbox and its horizon carry every delta.
test('16 clients like and unlike the same posts through two hosts, one host killed: no 500, exact with no reconciliation', async () => {
  const N = 16;
  const users = [];
  for (let i = 0; i < N; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.signup(`hw${i}`)).status, 303);
    await c.get('/feed');
    users.push(c);
  }
  const posts = [];
  for (let i = 0; i < 2; i++) {
    const r = await users[i].post('/posts', { body: `contended ${i}`, publish: '1' });
    posts.push(Number(r.location.split('/').pop()));
  }
  const errors = [];
  const liked = users.map(() => new Set());
  let stopped = false;
  const end = Date.now() + 60000;
  const load = Promise.all(users.map(async (c, i) => {
    for (let k = 0; !stopped && Date.now() < end; k++) {
      const p = posts[(i + k) % 2];
      const act = liked[i].has(p) ? 'unlike' : 'like';
      const r = await c.post(`/posts/${p}/${act}`).catch(() => null);
      if (r && r.status >= 500 && r.status !== 502 && r.status !== 504) errors.push(`${act} ${p}: ${r.status}`);
      if (r?.status === 303) { if (act === 'like') liked[i].add(p); else liked[i].delete(p); }
    }
  }));
  await sleep(3000);
  const victim = 3 - hostOf(leaseOwnerPid());	// the host without the lease
  const doomed = tree(hostPid(victim));
  for (const p of doomed) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
  await sleep(4000);
  stopped = true;
  await load;
  assert.deepEqual(errors, [], 'no server error reached a client (a 502 while the host died is nginx\'s)');
  // what each client was last told is the truth (a request cut by the
  // kill that committed is repeated, idempotent, and told then)
  for (let i = 0; i < N; i++) {
    const uid = Number(q(`SELECT id FROM users WHERE login = 'hw${i}'`));
    const truth = q(`SELECT post_id FROM likes WHERE user_id = ${uid} ORDER BY post_id`);
    assert.deepEqual(truth === '' ? [] : truth.split('\n').map(Number), [...liked[i]].sort((x, y) => x - y), `hw${i}'s likes`);
  }
  await waitFor(() => Number(q('SELECT COUNT(*) FROM counter_backlog')) === 0, 30000, 200);
  await sleep(2500);	// the drain's second
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// Stopped, the site leaves no process behind: a pool's processes end
// when their master does (SIGTERM, and PR_SET_PDEATHSIG if it died),
// those over TCP too, whose accept is tally's own (web/serve.c) -- they
// once ignored it and outlived the stack, the host killed above among
// them.
test('the stack stopped after a host was killed and restarted: no process of it is left', async () => {
  const mine = stack.children().flatMap((c) => tree(c.pid));
  assert.ok(mine.length > 10);
  const s = stack;
  stack = null;
  await s.stop();
  await waitFor(() => mine.every((p) => !alive(p)), 10000, 200).catch(() => {});
  const left = mine.filter(alive);
  for (const p of left) { try { process.kill(p, 'SIGKILL'); } catch { /* gone */ } }
  assert.deepEqual(left, [], 'processes left running');
});

// Run as root with a PORT under 1024, tally-run and nginx's master stay
// root (nginx binds the port) and the rest runs as the stack's user
// (handlers/run_user.h) -- but the hosts' supervisors stayed root, and
// as root made their directories and wrote their pid files by name in a
// RUN_DIR the user owns.  Skipped when the tests do not run as root.
const uidOf = (pid) => Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);
async function freeLowPort() {
  const free = (p) => new Promise((resolve) => {
    const s = net.createServer();
    s.on('error', () => resolve(false));
    s.listen(p, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  for (let p = 1000; p > 900; p--) if (await free(p)) return p;
  throw new Error('no free port under 1024');
}
test('HOSTS=2 on a PORT under 1024: the hosts\' supervisors run as the stack\'s user', { skip: process.getuid?.() !== 0 && 'not root' }, async () => {
  const low = await startStack({ db: 'postgres', port: await freeLowPort(), env: { HOSTS: '2' } });
  try {
    const pid = (k) => Number(fs.readFileSync(path.join(low.runDir, `host${k}`, 'pid'), 'utf8'));
    for (const k of [1, 2]) {
      assert.notEqual(uidOf(pid(k)), 0, `host ${k}'s supervisor runs as root`);
      assert.notEqual(fs.statSync(path.join(low.runDir, `host${k}`)).uid, 0, `host${k}/ belongs to root`);
    }
    const all = tree(low.proc.pid).slice(1).map((p) => ({ p, cmd: (() => { try { return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replaceAll('\0', ' '); } catch { return ''; } })() }));
    const asRoot = all.filter(({ p, cmd }) => { try { return uidOf(p) === 0 && !/nginx: master/.test(cmd); } catch { return false; } });
    assert.deepEqual(asRoot.map((x) => x.cmd), [], 'only nginx\'s master and tally-run keep root');
  } finally {
    await low.stop();
  }
});
