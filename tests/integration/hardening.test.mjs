// hardening.test.mjs -- the cheap attacks closed (issue: hardening),
// against a real stack: names that lie, reserved logins, topics a draft
// created, the per-user action limit (TALLY_WRITE_RATE), nginx's own
// redirects and its per-address keys.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

import { startStack, Client, BIN, freePort, waitFor, sleep } from '../lib/stack.mjs';
import { userId } from '../lib/social.mjs';
import { bucketOf } from '../lib/counts.mjs';

let stack;
// a low action limit: 8 a minute per user
before(async () => { stack = await startStack({ writeRate: '8', env: { TALLY_TOPIC_RATE: '3' } }); });
after(async () => { await stack?.stop(); });

const num = (sql) => Number(stack.sqlite(sql));

async function person(login, name = login) {
  const c = new Client(stack.base);
  const r = await c.signup(login, 'password-123', name);
  assert.equal(r.status, 303, `signup ${login}: ${r.status}`);
  await c.get('/t/general');
  return { c, id: userId(stack, login), login };
}

test('display names refuse bidi overrides, zero-width and other format characters', async () => {
  for (const [i, name] of ['evil\u202Egnp.exe', 'ad\u200Dmin', '\uFEFFalice', 'so\u00ADft', 'x\u2066y'].entries()) {
    const c = new Client(stack.base);
    const r = await c.signup(`liar${i}`, 'password-123', name);
    assert.equal(r.status, 400, JSON.stringify(name));
    assert.match(r.text, /name="name"[^>]*aria-invalid="true"/);
    assert.equal(num(`select count(*) from users where login = 'liar${i}'`), 0);
  }
  const ok = new Client(stack.base);
  assert.equal((await ok.signup('zoe_ok', 'password-123', 'Zoë Ça \u4E2D')).status, 303);
});

test('admin, root, support and the like are reserved for tallyctl useradd, in any case', async () => {
  for (const login of ['admin', 'Administrator', 'ROOT', 'tally', 'Support', 'moderator']) {
    const c = new Client(stack.base);
    const r = await c.signup(login, 'password-123', 'Someone');
    assert.equal(r.status, 409, login);
    assert.match(r.text, /id="err-login"/);
  }
  assert.equal(num("select count(*) from users where lower(login) in ('administrator','root','tally','support','moderator')"), 0);
  // as a word of a login too (letters parted by digits and _), which
  // the exact names left free: "admin_2" answered as staff
  for (const login of ['admin_2', 'The_Root', 'tally_support', '2admin', 'x_moderator_x']) {
    const r = await new Client(stack.base).signup(login, 'password-123', 'Someone');
    assert.equal(r.status, 409, login);
  }
  for (const login of ['rootbeer_fan', 'supportive', 'tallyho2']) {
    const r = await new Client(stack.base).signup(login, 'password-123', 'Someone');
    assert.equal(r.status, 303, login);
  }
  // the operator may still create them
  stack.tallyctl('useradd', 'support', 'Support desk', 'support-pass-1');
  assert.equal(num("select count(*) from users where login = 'support'"), 1);
});

test('a topic a draft created is not public until a post in it is', async () => {
  const u = await person('drafter');
  assert.equal((await u.c.post('/posts', { body: 'secret plan', topic: 'secret-launch', publish: '0' })).status, 303);
  const anon = new Client(stack.base);
  assert.equal((await anon.get('/t/secret-launch')).status, 404);
  assert.equal((await u.c.get('/t/secret-launch')).status, 404);
  assert.doesNotMatch((await anon.get('/topics')).text, /secret-launch/);
  const r = await u.c.post('/posts', { body: 'now public', topic: 'secret-launch', publish: '1' });
  assert.equal(r.status, 303);
  assert.equal((await anon.get('/t/secret-launch')).status, 200);
  assert.match((await anon.get('/topics')).text, /data-topic="secret-launch"/);
  assert.equal((await anon.get('/t/general')).status, 200, 'general is always there');
});

test('one user\'s actions beyond TALLY_WRITE_RATE a minute answer 429 with Retry-After, and write nothing', async () => {
  const author = await person('wr_author');
  const p = Number((await author.c.post('/posts', { body: 'like me', topic: '', publish: '1' })).location.split('/')[2]);
  const spammer = await person('wr_spammer');
  const statuses = [];
  for (let i = 0; i < 12; i++) {
    statuses.push((await spammer.c.post(`/posts/${p}/${i % 2 ? 'unlike' : 'like'}`)).status);
  }
  // the minute may turn during the loop: at least 8 pass, the rest 429
  const refused = statuses.filter((s) => s === 429).length;
  assert.ok(refused >= 1 && statuses.filter((s) => s === 303).length >= 8, statuses.join());
  const r = await spammer.c.post(`/posts/${p}/like`);
  if (r.status === 429) {
    const ra = Number(r.headers.get('retry-after'));
    assert.ok(ra >= 1 && ra <= 60, `Retry-After ${ra}`);
  }
  // JSON clients get it as JSON
  const j = await spammer.c.post(`/posts/${p}/repost`, {}, { headers: { accept: 'application/json' } });
  if (j.status === 429) assert.ok(JSON.parse(j.text).error);
  // another user is not affected
  const other = await person('wr_other');
  assert.equal((await other.c.post(`/posts/${p}/like`)).status, 303);
  // a refused like or unlike wrote nothing: the spammer's row is what the
  // answers that passed left
  let liked = 0;
  statuses.forEach((st, i) => { if (st === 303) liked = i % 2 ? 0 : 1; });
  if (r.status === 303) liked = 1;
  assert.equal(num(`select count(*) from likes where post_id = ${p} and user_id = ${spammer.id}`), liked,
    `the spammer's like after ${statuses.join()}, ${r.status}`);
});

// Every kind of action counts and is refused alike: with this minute's
// and the next two's counters of the user already past the limit (the
// throttle's keys, {u<ID>}:wr:<minute>), a post, a comment, a repost, a
// follow and a like each answer 429 with Retry-After, and none is written.
test('a post, a comment, a repost, a follow and a like beyond the limit: 429 each, nothing written', async () => {
  const author = await person('wr_author2');
  const p = Number((await author.c.post('/posts', { body: 'act on me', topic: '', publish: '1' })).location.split('/')[2]);
  const u = await person('wr_full');
  const mine = Number((await u.c.post('/posts', { body: 'mine, published', topic: '', publish: '1' })).location.split('/')[2]);
  const minute = Math.floor(Date.now() / 60000);
  for (let m = minute; m < minute + 3; m++) stack.redis('SET', `{u${u.id}}:wr:${m}`, '100', 'PX', '240000');
  const before = (sql) => num(sql);
  const rows = () => [
    before(`select count(*) from posts where user_id = ${u.id} and status = 1`),
    before(`select count(*) from comments where user_id = ${u.id}`),
    before(`select count(*) from reposts where user_id = ${u.id}`),
    before(`select count(*) from follows where follower_id = ${u.id}`),
    before(`select count(*) from likes where user_id = ${u.id}`),
  ];
  const acts = [
    ['/posts', { body: 'one too many', topic: '', publish: '1' }],
    [`/posts/${p}/comments`, { body: 'one too many' }],
    [`/posts/${p}/repost`, {}],
    ['/follow/wr_author2', {}],
    [`/posts/${p}/like`, {}],
    // publishing or withdrawing a post through its edit fans out as a
    // post does: counted alike (it was not: a flood of flips was free)
    [`/posts/${mine}/edit`, { body: 'withdrawn', topic: '', publish: '0' }],
  ];
  for (const [url, fields] of acts) {
    const r = await u.c.post(url, fields);
    assert.equal(r.status, 429, `${url}: ${r.status}`);
    const ra = Number(r.headers.get('retry-after'));
    assert.ok(ra >= 1 && ra <= 60, `${url}: Retry-After ${ra}`);
  }
  assert.deepEqual(rows(), [1, 0, 0, 0, 0], 'nothing written (the one post still published)');
  for (let m = minute; m < minute + 3; m++) stack.redis('DEL', `{u${u.id}}:wr:${m}`);
  assert.equal((await u.c.post(`/posts/${p}/like`)).status, 303, 'its counters gone, it acts again');
});

test('after 10 failed logins for one account, even the right password answers 429 for the rest of 15 minutes', async () => {
  await person('victim');
  const tries = async (password) => {
    const c = new Client(stack.base);
    await c.get('/login');
    return c.post('/login', { login: 'victim', password });
  };
  for (let i = 0; i < 10; i++) assert.equal((await tries(`wrong-${i}`)).status, 401, `failure ${i}`);
  const r = await tries('password-123');
  assert.equal(r.status, 429);
  const ra = Number(r.headers.get('retry-after'));
  assert.ok(ra > 14 * 60 && ra <= 15 * 60, `Retry-After ${ra}`);
  // kept in SQLite: a restart of every process resets nothing
  assert.equal(num("select failures from login_failures where login = 'victim'"), 10);
  // other accounts log in as before; a success clears their count
  await person('bystander');
  const b = new Client(stack.base);
  await b.get('/login');
  assert.equal((await b.post('/login', { login: 'bystander', password: 'nope-nope' })).status, 401);
  assert.equal((await b.post('/login', { login: 'bystander', password: 'password-123' })).status, 303);
  assert.equal(num("select count(*) from login_failures where login = 'bystander'"), 0);
  // a login nobody has is not throttled (nginx's per-address limit is)
  const ghost = new Client(stack.base);
  await ghost.get('/login');
  for (let i = 0; i < 12; i++) assert.equal((await ghost.post('/login', { login: 'ghost', password: `x-${i}-xxxx` })).status, 401);
  assert.equal(num("select count(*) from login_failures where login = 'ghost'"), 0);
  // the window ends: the account logs in again
  stack.sqlite(`update login_failures set since = since - ${15 * 60 * 1000} where login = 'victim'`);
  assert.equal((await tries('password-123')).status, 303);
});

// A session someone else holds (a stolen cookie, a browser left signed
// in) could guess the account's password through /settings' "current"
// field as fast as the server hashed, and never meet the login lock;
// and every guess held a hash slot every login needs.  Now a wrong
// current password is a failed login of the account, and a locked
// account's /settings refuses before any hash -- but not its owner's
// browser, which holds the device cookie of its login.
test('wrong current passwords at /settings are failed logins: the 11th answers 429, /login is locked too, the owner\'s browser is not', async () => {
  const owner = await person('pw_owner');
  assert.ok(owner.c.jar.has('dev'), 'signing up left the device cookie');
  // a session of its own, without the browser's device cookie (a
  // stolen sid)
  const thief = new Client(stack.base);
  await thief.get('/login');
  assert.equal((await thief.login('pw_owner', 'password-123')).status, 303);
  thief.jar.delete('dev');
  assert.equal((await thief.get('/settings')).status, 200);
  for (let i = 0; i < 10; i++) {
    const r = await thief.post('/settings', { current: `guess-${i}-xx`, password: 'taken-over-1' });
    assert.equal(r.status, 403, `guess ${i}`);
  }
  assert.equal(num("select failures from login_failures where login = 'pw_owner'"), 10);
  let r = await thief.post('/settings', { current: 'password-123', password: 'taken-over-1' });
  assert.equal(r.status, 429, 'the right one too, while the account is locked');
  const ra = Number(r.headers.get('retry-after'));
  assert.ok(ra > 14 * 60 && ra <= 15 * 60, `Retry-After ${ra}`);
  assert.equal(num("select failures from login_failures where login = 'pw_owner'"), 10, 'a refusal is not a guess');
  // the lock is the account's: a new browser's login is refused as well
  const fresh = new Client(stack.base);
  await fresh.get('/login');
  assert.equal((await fresh.post('/login', { login: 'pw_owner', password: 'password-123' })).status, 429);
  // the owner's browser changes the password all the same; the lock
  // stays for new browsers (the guessing goes on elsewhere)
  r = await owner.c.post('/settings', { current: 'password-123', password: 'fresh-pass-22' });
  assert.equal(r.status, 303);
  assert.equal((await thief.get('/settings')).status, 303, 'the stolen session ended with the change');
  assert.equal(num("select failures from login_failures where login = 'pw_owner'"), 10);
  // a success outside a lock clears the count, as a login's does
  stack.sqlite("update login_failures set failures = 3 where login = 'pw_owner'");
  r = await owner.c.post('/settings', { current: 'fresh-pass-22', password: 'fresh-pass-33' });
  assert.equal(r.status, 303);
  assert.equal(num("select count(*) from login_failures where login = 'pw_owner'"), 0);
});

test('a flood of 60 logins at the real argon2id cost: /healthz keeps answering, the excess gets 503 at once', async () => {
  const real = await startStack({ loginRate: '6000000r/m', env: { TALLY_PWHASH: 'full', ...(process.env.HASH_SLOTS ? { TALLY_HASH_SLOTS: process.env.HASH_SLOTS } : {}) } });
  try {
    const c = new Client(real.base);
    await c.get('/login');
    // 60 logins at once (nginx's per-address limit raised out of the way)
    const flood = Array.from({ length: 60 }, (_, i) => {
      const x = new Client(real.base);
      x.jar = new Map(c.jar);
      x.csrf = c.csrf;
      return x.post('/login', { login: `flood${i}`, password: 'not-the-password' });
    });
    // 15 health checks sent while the logins are in flight, 20 ms apart
    const times = [];
    const probe = Promise.all(Array.from({ length: 15 }, async (_, i) => {
      await new Promise((res) => setTimeout(res, 20 * i));
      const t0 = performance.now();
      const r = await fetch(`${real.base}/healthz`);
      times.push(performance.now() - t0);
      assert.equal(r.status, 200);
    }));
    const answers = await Promise.all(flood);
    await probe;
    times.sort((a, b) => a - b);
    const median = times[Math.floor(times.length / 2)];
    const statuses = answers.map((r) => r.status);
    // (behind the hashes it would wait their hundreds of ms each)
    assert.ok(median < 250, `/healthz median ${median.toFixed(1)} ms during the flood`);
    // 429: nginx's per-address login limit (its burst) takes some first
    assert.ok(statuses.every((x) => x === 401 || x === 503 || x === 429), statuses.join());
    const busy = answers.filter((r) => r.status === 503);
    assert.ok(busy.length > 0, 'some logins found every hash slot taken');
    assert.equal(busy[0].headers.get('retry-after'), '1');
  } finally {
    await real.stop();
  }
});

// The hash slots are the whole machine's (base/hashgate.h): logins of
// made-up names, which no account's lock ever stops, kept them taken, and
// every login answered 503 -- its owners' too, their device cookie or
// not: a lockout of the site for a few addresses' worth of requests.  A
// browser that logged in to the account before has a lane of its own.
test('a flood of logins that keeps every hash slot taken: an owner\'s browser still logs in', async () => {
  const real = await startStack({ loginRate: '6000000r/m', env: { TALLY_PWHASH: 'full' } });
  try {
    const owner = new Client(real.base);
    assert.equal((await owner.signup('flood_owner')).status, 303);
    await owner.get('/feed');
    assert.equal((await owner.post('/logout')).status, 303);
    assert.ok(owner.jar.has('dev'), 'the device cookie stays');
    let stop = false;
    const statuses = [];
    const flooders = Array.from({ length: 6 }, async (_, k) => {
      const x = new Client(real.base);
      await x.get('/login');
      for (let i = 0; !stop && i < 400; i++) statuses.push((await x.post('/login', { login: `flood${k}x${i}`, password: 'not-the-password' })).status);
    });
    const mine = [];
    try {
      await sleep(300);
      for (let i = 0; i < 3; i++) {
        await owner.get('/login');
        mine.push((await owner.post('/login', { login: 'flood_owner', password: 'password-123' })).status);
        await owner.get('/feed');
        await owner.post('/logout');
      }
    } finally {
      stop = true;
      await Promise.all(flooders);
    }
    assert.ok(statuses.filter((x) => x === 503).length > 0, `the flood found every slot taken (${statuses.length} logins)`);
    assert.deepEqual(mine, [303, 303, 303], 'the owner\'s logins during the flood');
  } finally {
    await real.stop();
  }
});

test('a topic\'s best authors are rebuilt from its own authors, never a scan of every rating counter', async () => {
  const a = await person('rt_author');
  const fan = await person('rt_fan');
  const p = Number((await a.c.post('/posts', { body: 'rate me', topic: 'rt-topic', publish: '1' })).location.split('/')[2]);
  assert.equal((await fan.c.post(`/posts/${p}/like`)).status, 303);
  stack.tallyctl('flush');
  // (the rebuild's plan, one key per author: test-sql-table.c)
  // drop the board: the first anonymous view rebuilds it, right
  for (const k of stack.redis('KEYS', '{lb}:rating:*').split('\n').filter(Boolean)) stack.redis('DEL', k);
  const page = await new Client(stack.base).get('/t/rt-topic');
  assert.equal(page.status, 200);
  assert.match(page.text, /<li data-login="rt_author" data-value="1">/);
});

test('tallyctl takes passwords on standard input; passwd ends the sessions of the old one', async () => {
  const ctl = (args, input) => execFileSync(path.join(BIN, 'tallyctl'), args,
    { env: stack.env, encoding: 'utf8', input, stdio: ['pipe', 'pipe', 'pipe'] });
  ctl(['useradd', 'piped', 'Piped In'], 'first-secret-1\n');
  const c = new Client(stack.base);
  assert.equal((await c.login('piped', 'first-secret-1')).status, 303);
  assert.equal((await c.get('/feed')).status, 200);
  assert.match(ctl(['passwd', 'piped'], 'second-secret-2\n'), /new password for piped/);
  const after = await c.get('/feed');
  assert.equal(after.status, 303, 'the old session ended');
  assert.equal((await new Client(stack.base).login('piped', 'first-secret-1')).status, 401);
  assert.equal((await new Client(stack.base).login('piped', 'second-secret-2')).status, 303);
  // a short one is refused, nothing changes
  assert.throws(() => ctl(['passwd', 'piped'], 'short\n'));
  assert.throws(() => ctl(['passwd', 'nosuchuser'], 'long-enough-3\n'));
});

// A browser at another loopback address: GET /login (its tokens), then
// POST the pair.  The status.
function loginFrom(address, login, password) {
  const req = (method, p, headers, body) => new Promise((resolve, reject) => {
    const u = new URL(stack.base);
    const r = http.request({ host: u.hostname, port: u.port, path: p, method, localAddress: address,
      agent: false, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    r.on('error', reject);
    if (body) r.write(body);
    r.end();
  });
  return (async () => {
    const page = await req('GET', '/login', {});
    const cookie = (page.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
    const csrf = (page.text.match(/name="csrf" value="([^"]+)"/) ?? [])[1];
    const body = new URLSearchParams({ login, password, csrf }).toString();
    return (await req('POST', '/login', { cookie, 'content-type': 'application/x-www-form-urlencoded',
      'content-length': Buffer.byteLength(body) }, body)).status;
  })();
}

// The device cookie outlives a logout (a shared computer) and can be
// copied: passed without a count, the browser holding it guessed at a
// locked account as fast as nginx let it, and the lock never ended (each
// failure a newer one).  It now has THROTTLE_DEVICE_TRIES (10) tries a
// window of the lock's length, an account; then it is any browser.
test('a browser with the device cookie guesses at a locked account only so often', async () => {
  await person('owner_dt');
  const shared = new Client(stack.base);
  await shared.get('/login');
  assert.equal((await shared.post('/login', { login: 'owner_dt', password: 'password-123' })).status, 303);
  await shared.get('/feed');
  assert.equal((await shared.post('/logout')).status, 303);
  for (let i = 0; i < 12; i++) {
    const st = await loginFrom(`127.0.0.${60 + i}`, 'owner_dt', `wrong-guess-${i}`);
    assert.ok(st === 401 || st === 429, `guess ${i}: ${st}`);
  }
  const tries = [];
  for (let i = 0; i < 24; i++) {
    await shared.get('/login');
    tries.push((await shared.post('/login', { login: 'owner_dt', password: `cookie-guess-${i}` })).status);
  }
  assert.ok(tries.every((st) => st === 401 || st === 429), tries.join());
  // ten a window (two, should a window end during the test)
  assert.ok(tries.filter((st) => st === 401).length <= 20, tries.join());
  assert.equal(tries.at(-1), 429, tries.join());
  await shared.get('/login');
  assert.equal((await shared.post('/login', { login: 'owner_dt', password: 'password-123' })).status, 429, 'that browser is refused as any other now');
});

test('guessing from many addresses locks new browsers out, never the owner\'s (the device cookie)', async () => {
  await person('owner_dev');
  const owner = new Client(stack.base);
  await owner.get('/login');
  const first = await owner.post('/login', { login: 'owner_dev', password: 'password-123' });
  assert.equal(first.status, 303);
  const dev = first.headers.getSetCookie().find((c) => c.startsWith('dev='));
  assert.ok(dev, 'a login sets the device cookie');
  assert.match(dev, /HttpOnly/i);
  assert.match(dev, /Max-Age=31536000/);
  await owner.get('/feed');
  assert.equal((await owner.post('/logout')).status, 303);
  for (let i = 0; i < 12; i++) {
    const st = await loginFrom(`127.0.0.${20 + i}`, 'owner_dev', `wrong-guess-${i}`);
    assert.ok(st === 401 || st === 429, `guess ${i}: ${st}`);
  }
  assert.ok(num("select failures from login_failures where login = 'owner_dev'") >= 10);
  // the owner's browser (its device cookie) logs in as usual
  await owner.get('/login');
  assert.equal((await owner.post('/login', { login: 'owner_dev', password: 'password-123' })).status, 303);
  // a new browser, right password: refused for the rest of the window
  const stranger = new Client(stack.base);
  await stranger.get('/login');
  assert.equal((await stranger.post('/login', { login: 'owner_dev', password: 'password-123' })).status, 429);
  // a forged or borrowed entry does not open it: another account's, or bent
  const other = new Client(stack.base);
  await other.get('/login');
  const otherDev = owner.jar.get('dev').replace('owner_dev.', 'bystander.');
  other.jar.set('dev', otherDev);
  assert.equal((await other.post('/login', { login: 'owner_dev', password: 'password-123' })).status, 429);
  const bent = owner.jar.get('dev').replace(/.$/, (ch) => (ch === '0' ? '1' : '0'));
  other.jar.set('dev', bent);
  assert.equal((await other.post('/login', { login: 'owner_dev', password: 'password-123' })).status, 429);
  // A new password forgets every device of the account but the browser
  // that set it: a copy of the old cookie (a browser that once held a
  // stolen password) opens the lock no more.  Before, an entry lived a
  // year whatever became of the password.
  const copied = owner.jar.get('dev');
  await owner.get('/settings');
  const changed = await owner.post('/settings', { current: 'password-123', password: 'password-456' });
  assert.equal(changed.status, 303, `the change: ${changed.status}`);
  assert.notEqual(owner.jar.get('dev'), copied, 'the changing browser\'s entry renewed');
  const thief = new Client(stack.base);
  await thief.get('/login');
  thief.jar.set('dev', copied);
  assert.equal((await thief.post('/login', { login: 'owner_dev', password: 'password-456' })).status, 429);
  // the owner's browser, its entry renewed, still logs in
  assert.equal((await owner.post('/logout')).status, 303);
  await owner.get('/login');
  assert.equal((await owner.post('/login', { login: 'owner_dev', password: 'password-456' })).status, 303);
});

test('one user makes only so many new topics an hour (TALLY_TOPIC_RATE)', async () => {
  const u = await person('topic_maker');
  for (let i = 0; i < 3; i++) {
    assert.equal((await u.c.post('/posts', { body: `t${i}`, topic: `tm-topic-${i}`, publish: '1' })).status, 303);
  }
  const r = await u.c.post('/posts', { body: 'one too many', topic: 'tm-topic-3', publish: '1' });
  assert.equal(r.status, 429);
  assert.ok(Number(r.headers.get('retry-after')) > 0);
  assert.equal(num("select count(*) from topics where slug = 'tm-topic-3'"), 0);
  // an existing topic still takes posts
  assert.equal((await u.c.post('/posts', { body: 'fine', topic: 'tm-topic-0', publish: '1' })).status, 303);
  // another's post is refused before its topic is looked at: the answer
  // said whether a topic only someone's draft made exists (429 for none,
  // 403 for one), and a refused edit spent the sender's allowance
  const drafter = await person('topic_drafter');
  assert.equal((await drafter.c.post('/posts', { body: 'a secret', topic: 'tm-secret', publish: '0' })).status, 303);
  const prober = await person('topic_prober');
  for (let i = 0; i < 3; i++) {
    assert.equal((await prober.c.post('/posts', { body: `p${i}`, topic: `tp-topic-${i}`, publish: '0' })).status, 303);
  }
  const theirs = Number((await drafter.c.post('/posts', { body: 'public', topic: '', publish: '1' })).location.split('/')[2]);
  const probe = async (topic) => (await prober.c.post(`/posts/${theirs}/edit`, { body: 'x', topic })).status;
  assert.equal(await probe('tm-secret'), 403);
  assert.equal(await probe('tm-no-such-topic'), 403, 'the same answer for a topic that is not there');
  const fresh = await person('topic_fresh');
  const own = Number((await fresh.c.post('/posts', { body: 'own', topic: '', publish: '1' })).location.split('/')[2]);
  for (let i = 0; i < 5; i++) assert.equal((await fresh.c.post(`/posts/${theirs}/edit`, { body: 'x', topic: `tf-${i}` })).status, 403);
  assert.equal((await fresh.c.post(`/posts/${own}/edit`, { body: 'own', topic: 'tf-mine' })).status, 303,
    'refused edits of another\'s post spent none of its new topics');
});

test('nginx builds no absolute redirect from the Host header', async () => {
  const r = await fetch(`${stack.base}/static/errors`, { redirect: 'manual', headers: { host: 'evil.example' } });
  assert.equal(r.status, 301);
  assert.ok(!/evil\.example/.test(r.headers.get('location') ?? ''), r.headers.get('location'));
  assert.match(r.headers.get('location'), /^\/static\/errors\/$/);
});

// nginx keys its per-address limits on an IPv6 client's /64.  The stack
// listens on IPv4 loopback only, so a second nginx, built from the same
// rendered snippets (a login rate of 1 a minute, burst 10), takes the
// client address from X-Real-IP (the realip module, trusted from
// loopback only) and passes on to the stack's handler sockets.
test('the login limit and anonymous views key IPv6 clients on their /64, IPv4 clients on their address', async () => {
  const dir = fs.mkdtempSync(path.join(stack.runDir, 'front-'));
  const conf = path.join(stack.runDir, 'nginx');
  const port = await freePort();
  fs.writeFileSync(path.join(dir, 'tally-http.conf'),
    fs.readFileSync(path.join(conf, 'tally-http.conf'), 'utf8').replace(/rate=[0-9]+r\/[ms]/, 'rate=1r/m'));
  const main = fs.readFileSync(path.join(conf, 'nginx.conf'), 'utf8')
    .replace(/^pid .*$/m, `pid ${dir}/nginx.pid;`)
    .replace(/^(\s*)include \S+\/tally-http\.conf;/m, `$1include ${dir}/tally-http.conf;`)
    // the stack's nginx holds the live badges' socket: not a second one
    .replace(/^\s*include \S+\/tally-live\.conf;\n/m, '')
    .replace(/listen 127\.0\.0\.1:\d+;/, `listen 127.0.0.1:${port};\n        set_real_ip_from 127.0.0.1;\n        real_ip_header X-Real-IP;`)
    .replace(/access_log \S+;/, 'access_log off;');
  assert.match(main, new RegExp(`include ${dir}/tally-http.conf;`));
  // run as root (the stack runs as its own user, whose handler sockets
  // are 0660), this nginx's workers are that user, as the stack's are
  const owner = fs.statSync(stack.runDir).uid;
  const user = process.getuid?.() === 0 && owner !== 0
    ? `user ${execFileSync('id', ['-nu', String(owner)], { encoding: 'utf8' }).trim()} ${execFileSync('id', ['-ng', String(owner)], { encoding: 'utf8' }).trim()};\n` : '';
  fs.writeFileSync(path.join(dir, 'nginx.conf'), user + main);
  const nginx = spawn('nginx', ['-p', `${dir}/`, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log'), '-g', 'daemon off;'],
    { stdio: 'ignore' });
  try {
    await waitFor(async () => { try { return (await fetch(`http://127.0.0.1:${port}/healthz`)).ok; } catch { return false; } }, 10000, 50);
    const login = async (addr) => (await fetch(`http://127.0.0.1:${port}/login`, {
      method: 'POST', redirect: 'manual', body: 'login=nobody&password=nothing-here',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-real-ip': addr },
    })).status;
    // the burst (10) and one more, each from another address of one /64
    const first = [];
    for (let i = 1; i <= 11; i++) first.push(await login(`2001:db8:aa:1::${i.toString(16)}`));
    assert.ok(first.every((s) => s !== 429), first.join());
    assert.equal(await login('2001:db8:aa:1:ffff:ffff:ffff:ffff'), 429, 'the same /64 is one client');
    assert.notEqual(await login('2001:db8:aa:2::1'), 429, 'the next /64 has its own budget');
    // IPv4: each address its own budget
    for (let i = 0; i < 11; i++) assert.notEqual(await login('198.51.100.1'), 429, `v4 try ${i}`);
    assert.equal(await login('198.51.100.1'), 429);
    assert.notEqual(await login('198.51.100.2'), 429, 'another IPv4 address');
    // The per-account throttle does not care where attempts come from:
    // 10 failures for one account, each from another address, then the
    // right password from an 11th answers 429.
    await person('roamer');
    const front = `http://127.0.0.1:${port}`;
    const attempt = async (addr, password) => {
      const g = await fetch(`${front}/login`, { headers: { 'x-real-ip': addr } });
      const cookie = (g.headers.getSetCookie?.() ?? []).map((c) => c.split(';')[0]).join('; ');
      const csrf = /name="csrf" value="([^"]+)"/.exec(await g.text())[1];
      return (await fetch(`${front}/login`, {
        method: 'POST', redirect: 'manual',
        body: new URLSearchParams({ login: 'roamer', password, csrf }).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-real-ip': addr, cookie },
      })).status;
    };
    for (let i = 1; i <= 10; i++) assert.equal(await attempt(`203.0.113.${i}`, `wrong-${i}-xx`), 401, `failure ${i}`);
    assert.equal(await attempt('203.0.113.77', 'password-123'), 429, 'the right password, from an 11th address');

    // Anonymous views: one an IPv6 /64 (or IPv4 address) a half hour,
    // navigations only, VIEW_ADDR_MAX posts an address a half hour.
    const author = await person('viewed');
    const made = await author.c.post('/posts', { body: 'look at me', topic: 'general', publish: '1' });
    const post = Number(made.location.split('/').pop());
    const view = async (addr, headers = {}) => (await fetch(`${front}/posts/${post}`, {
      headers: { 'x-real-ip': addr, ...headers } })).status;
    const views = async () => {
      stack.tallyctl('flush');
      const page = await author.c.get(`/posts/${post}`);	// the author's own: not a view
      return Number(/data-counter="post-views"[^>]*>(\d+)/.exec(page.text)[1]);
    };
    const v0 = await views();
    assert.equal(await view('2001:db8:bb:1::1', { 'sec-fetch-dest': 'document' }), 200);
    assert.equal(await view('2001:db8:bb:1:ffff::2'), 200);		// the same /64
    assert.equal(await views(), v0 + 1, 'two addresses of one /64 are one viewer');
    assert.equal(await view('2001:db8:bb:2::1'), 200);
    assert.equal(await views(), v0 + 2, 'the next /64 is another');
    // an <img> on another site pointing at the post: not a view
    assert.equal(await view('198.51.100.9', { 'sec-fetch-dest': 'image', 'sec-fetch-site': 'cross-site' }), 200);
    assert.equal(await views(), v0 + 2, 'a cross-site image request counts no view');
    // an address past its budget of posts: no view, and no key kept
    stack.redis('SET', '{va198.51.100.10}', '100', 'PX', '60000');
    assert.equal(await view('198.51.100.10'), 200);
    assert.equal(await views(), v0 + 2, 'past its budget, an address counts no view');
    assert.equal(stack.redis('EXISTS', `{c${bucketOf(author.id)}}:v${post}:a198.51.100.10`), '0');
    assert.equal(await view('198.51.100.11'), 200);
    assert.equal(await views(), v0 + 3, 'an IPv4 address within its budget counts');
  } finally {
    nginx.kill('SIGTERM');
    await new Promise((res) => (nginx.exitCode !== null ? res() : nginx.on('exit', res)));
  }
});
