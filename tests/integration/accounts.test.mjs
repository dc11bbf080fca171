// accounts.test.mjs -- signup, login, logout, sessions, CSRF and the
// error answers of tally-web, against a real stack (nginx + handlers +
// Redis + SQLite) on a free port.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startStack, Client, onPostgres, BIN, waitFor } from '../lib/stack.mjs';

let stack;
before(async () => { stack = await startStack(); });
after(async () => { await stack?.stop(); });

const users = () => Number(stack.sqlite('select count(*) from users'));
const sessions = () => Number(stack.sqlite('select count(*) from sessions'));

// A client whose jar holds only the given cookies.
function clientWith(cookies) {
  const c = new Client(stack.base);
  for (const [k, v] of Object.entries(cookies)) c.jar.set(k, v);
  return c;
}

// POSTs a body written by hand (for escapes URLSearchParams would not
// produce), with the client's csrf appended.
function rawPost(c, path, body) {
  return c.req('POST', path, { body: `${body}&csrf=${encodeURIComponent(c.csrf)}` });
}

const field = (name) => new RegExp(`field \u201c${name}\u201d`);

describe('signup', () => {
  test('success: 303 /feed with an HttpOnly SameSite=Lax sid', async () => {
    const c = new Client(stack.base);
    const before = users();
    const r = await c.signup('alice', 'password-123', 'Alice A.');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/feed');
    const sid = r.headers.getSetCookie().find((h) => h.startsWith('sid='));
    assert.ok(sid, 'a sid cookie is set');
    assert.match(sid, /;\s*HttpOnly/i);
    assert.match(sid, /;\s*SameSite=Lax/i);
    assert.equal(users(), before + 1);
    assert.equal(stack.sqlite("select name from users where login = 'alice'"), 'Alice A.');
    const root = await c.get('/');
    assert.equal(root.status, 303);
    assert.equal(root.location, '/feed');
  });

  test('409 when the login is taken, case-insensitively', async () => {
    const before = users();
    const c = new Client(stack.base);
    const r = await c.signup('Alice', 'password-456', 'Other Alice');
    assert.equal(r.status, 409);
    assert.match(r.text, /login is taken/);
    assert.match(r.text, /name="csrf"/, 'the form is shown again');
    assert.equal(users(), before);
    assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
  });

  const bad = [
    ['login too short', 'login', 'login=ab&name=Ab&password=password-123'],
    ['login with a bad character', 'login', 'login=al-ice2&name=Al&password=password-123'],
    ['login with a space', 'login', 'login=al+ice3&name=Al&password=password-123'],
    ['login missing', 'login', 'name=Al&password=password-123'],
    ['name empty', 'name', 'login=carol&name=&password=password-123'],
    ['name blank', 'name', 'login=carol&name=+++&password=password-123'],
    ['name with a control character', 'name', 'login=carol&name=Car%01ol&password=password-123'],
    ['name too long', 'name', `login=carol&name=${'x'.repeat(65)}&password=password-123`],
    ['name not UTF-8', 'name', 'login=carol&name=Car%FFol&password=password-123'],
    ['password too short', 'password', 'login=carol&name=Carol&password=short'],
    ['password not UTF-8', 'password', 'login=carol&name=Carol&password=password-%FF'],
    ['login not UTF-8', 'login', 'login=car%FFol&name=Carol&password=password-123'],
  ];
  for (const [what, name, body] of bad) {
    test(`400 naming the field: ${what}`, async () => {
      const c = new Client(stack.base);
      await c.get('/signup');
      const before = users();
      const r = await rawPost(c, '/signup', body);
      assert.equal(r.status, 400);
      assert.match(r.text, field(name));
      assert.match(r.headers.get('content-type'), /^text\/html/);
      assert.equal(users(), before, 'nothing created');
      assert.equal(stack.sqlite("select count(*) from users where login = 'carol'"), '0');
      assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
    });
  }

  test('the 400 and 401 pages stay valid UTF-8 without control characters', async () => {
    const c = new Client(stack.base);
    await c.get('/signup');
    for (const [p, body] of [
      ['/signup', 'login=carol&name=Ca%FFr%01ol%1B[31m%C2%85&password=password-123'],
      ['/signup', 'login=ca%FFrol%07&name=Carol&password=password-123'],
      ['/login', 'login=ca%FF%00rol%1B&password=password-123'],
    ]) {
      const r = await fetch(stack.base + p, {
        method: 'POST', redirect: 'manual',
        headers: { cookie: c.cookieHeader(), 'content-type': 'application/x-www-form-urlencoded' },
        body: `${body}&csrf=${c.csrf}`,
      });
      assert.ok([400, 401].includes(r.status), `${p}: ${r.status}`);
      const bytes = new Uint8Array(await r.arrayBuffer());
      const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes); // throws if not UTF-8
      // eslint-disable-next-line no-control-regex
      assert.doesNotMatch(text, /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\x80-\x9f]/, `${p}: no control characters`);
    }
    assert.equal(stack.sqlite("select count(*) from users where login = 'carol'"), '0');
  });

  test('a hostile name is escaped on the 409 and 400 pages', async () => {
    const evil = '<script>alert(1)</script>';
    const c = new Client(stack.base);
    let r = await c.signup('alice', 'password-123', evil);
    assert.equal(r.status, 409);
    assert.ok(!r.text.includes(evil), 'the raw markup is not echoed');
    assert.ok(r.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    r = await c.post('/signup', { login: 'x', name: evil, password: 'password-123' });
    assert.equal(r.status, 400);
    assert.ok(!r.text.includes(evil));
    assert.ok(r.text.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
    r = await c.post('/signup', { login: 'evil"><b>', name: 'x', password: 'password-123' });
    assert.equal(r.status, 400);
    assert.ok(!r.text.includes('"><b>'));
    assert.ok(r.text.includes('value="evil&quot;&gt;&lt;b&gt;"'));
  });
});

describe('login and logout', () => {
  before(async () => {
    const r = await new Client(stack.base).signup('dave', 'password-dave', 'Dave');
    assert.equal(r.status, 303);
  });

  test('success: 303 /feed and a session', async () => {
    const c = new Client(stack.base);
    const r = await c.login('dave', 'password-dave');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/feed');
    const sid = r.headers.getSetCookie().find((h) => h.startsWith('sid='));
    assert.match(sid, /HttpOnly/i);
    assert.match(sid, /SameSite=Lax/i);
    assert.equal((await c.get('/')).location, '/feed');
  });

  test('the login is case-insensitive', async () => {
    const c = new Client(stack.base);
    assert.equal((await c.login('DaVe', 'password-dave')).status, 303);
  });

  test('401 for a wrong password and for an unknown login', async () => {
    for (const [login, pw] of [['dave', 'password-wrong'], ['nobody', 'password-dave'], ['x', 'password-dave']]) {
      const c = new Client(stack.base);
      const r = await c.login(login, pw);
      assert.equal(r.status, 401, `${login}/${pw}`);
      assert.match(r.text, /Wrong login or password/);
      assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
      assert.equal((await c.get('/')).location, '/login');
    }
  });

  // A logout whose session delete fails (the database held by another
  // writer past its 5 s busy timeout) must not clear the cookie and say
  // "signed out" while the session still works: it answers 503, the
  // session stays, and the next logout ends it.
  test('logout while the database refuses the delete: 503, the cookie kept, a later logout ends the session', { skip: onPostgres() }, async () => {
    const c = new Client(stack.base);
    await c.login('dave', 'password-dave');
    const sid = c.jar.get('sid');
    await c.get('/nope-for-csrf');
    const holder = spawn('sqlite3', [path.join(stack.runDir, 'tally.db')], { stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    holder.stdout.on('data', (d) => { out += d; });
    // held once it says so (a busy machine may start it late)
    holder.stdin.write(".timeout 10000\nBEGIN IMMEDIATE;\nDELETE FROM sessions WHERE 0;\nSELECT 'held';\n");
    let r;
    try {
      await waitFor(() => out.includes('held'), 10000, 20);
      r = await c.post('/logout');
    } finally {
      holder.stdin.end('ROLLBACK;\n');
      await new Promise((res) => holder.on('exit', res));
    }
    assert.equal(r.status, 503, 'the session could not be ended');
    assert.ok(!r.headers.getSetCookie().some((h) => /^sid=;/.test(h)), 'the cookie is kept');
    assert.equal(c.jar.get('sid'), sid);
    assert.equal((await c.get('/feed')).status, 200, 'and the session, which still works, says so');
    const again = await c.post('/logout');
    assert.equal(again.status, 303);
    assert.equal((await clientWith({ sid }).get('/')).location, '/login', 'now it is over');
  });

  test('logout: 303 /login, and the old sid no longer works', async () => {
    const c = new Client(stack.base);
    await c.login('dave', 'password-dave');
    const sid = c.jar.get('sid');
    assert.ok(sid);
    // any page with the header carries the session's csrf (logout form)
    const page = await c.get('/nope-for-csrf');
    assert.equal(page.status, 404);
    assert.match(page.text, /name="csrf"/, 'the header carries the logout form');
    const n = sessions();
    const r = await c.post('/logout');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/login');
    assert.ok(r.headers.getSetCookie().some((h) => /^sid=;/.test(h) && /Max-Age=0/i.test(h)),
      'the sid cookie is cleared');
    assert.equal(sessions(), n - 1);
    assert.equal(c.jar.has('sid'), false);
    assert.equal((await c.get('/')).location, '/login');
    const replay = clientWith({ sid });
    const root = await replay.get('/');
    assert.equal(root.status, 303);
    assert.equal(root.location, '/login');
  });

  test('the session id changes at each login (no fixation)', async () => {
    const c = new Client(stack.base);
    c.jar.set('sid', 'A'.repeat(43)); // a planted, unknown sid
    await c.login('dave', 'password-dave');
    const s1 = c.jar.get('sid');
    assert.notEqual(s1, 'A'.repeat(43));
    // logging in again while logged in (the form posted with the
    // session's csrf, as from a page showing it) replaces the session
    await c.get('/nope');
    const again = await c.post('/login', { login: 'dave', password: 'password-dave' });
    assert.equal(again.status, 303);
    const s2 = c.jar.get('sid');
    assert.ok(s1 && s2);
    assert.notEqual(s1, s2);
    // the replaced session is gone, the new one works
    assert.equal((await clientWith({ sid: s1 }).get('/')).location, '/login');
    assert.equal((await clientWith({ sid: s2 }).get('/')).location, '/feed');
    // the login after logout gets yet another id
    await c.get('/nope');
    await c.post('/logout');
    await c.login('dave', 'password-dave');
    const s3 = c.jar.get('sid');
    assert.ok(s3);
    assert.notEqual(s3, s1);
    assert.notEqual(s3, s2);
  });
});

describe('CSRF', () => {
  // csrf values to try, given the victim's client and another's.
  const forgeries = (other) => [
    ['no csrf', null],
    ['a wrong csrf', 'x'.repeat(43)],
    ['an empty csrf', ''],
    ["another visitor's csrf", other.csrf],
  ];

  test('POST /signup without a matching csrf: 403, nothing created', async () => {
    const other = new Client(stack.base);
    await other.get('/signup');
    const logged = new Client(stack.base);
    await logged.signup('signup_csrf_owner');
    await logged.get('/nope'); // a session csrf
    const c = new Client(stack.base);
    await c.get('/signup');
    assert.notEqual(c.csrf, other.csrf);
    for (const [what, csrf] of [...forgeries(other), ["a logged-in session's csrf", logged.csrf]]) {
      const before = users();
      const r = await c.post('/signup', { login: 'mallory', name: 'M', password: 'password-123', csrf });
      assert.equal(r.status, 403, what);
      assert.match(r.text, /CSRF/);
      assert.equal(users(), before, what);
      assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
    }
    // and without any cookie at all
    const bare = new Client(stack.base);
    const r = await bare.post('/signup', { login: 'mallory', name: 'M', password: 'password-123', csrf: c.csrf });
    assert.equal(r.status, 403);
    assert.equal(stack.sqlite("select count(*) from users where login = 'mallory'"), '0');
  });

  test('POST /login without a matching csrf: 403, no session', async () => {
    const erin = new Client(stack.base);
    await erin.signup('erin', 'password-erin');
    await erin.get('/nope'); // erin's session csrf
    const other = new Client(stack.base);
    await other.get('/login');
    const c = new Client(stack.base);
    await c.get('/login');
    for (const [what, csrf] of [...forgeries(other), ["a logged-in session's csrf", erin.csrf]]) {
      const n = sessions();
      const r = await c.post('/login', { login: 'erin', password: 'password-erin', csrf });
      assert.equal(r.status, 403, what);
      assert.equal(sessions(), n, what);
      assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
      assert.equal((await c.get('/')).location, '/login');
    }
  });

  test("POST /logout without a matching csrf (or with another session's): 403, still logged in", async () => {
    const other = new Client(stack.base);
    await other.login('erin', 'password-erin');
    await other.get('/nope');
    const c = new Client(stack.base);
    await c.login('erin', 'password-erin');
    await c.get('/nope');
    assert.notEqual(c.csrf, other.csrf);
    const pre = new Client(stack.base);
    await pre.get('/login'); // a pre-session token is no session's csrf
    for (const [what, csrf] of [...forgeries(other), ['a pre-session csrf', pre.csrf]]) {
      const n = sessions();
      const r = await c.post('/logout', { csrf });
      assert.equal(r.status, 403, what);
      assert.equal(sessions(), n, what);
      assert.equal((await c.get('/')).location, '/feed', what);
      assert.equal((await other.get('/')).location, '/feed', what);
    }
  });
});

describe('routing and errors', () => {
  test('GET / is 303 /login when logged out, /feed when logged in', async () => {
    const c = new Client(stack.base);
    let r = await c.get('/');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/login');
    await c.signup('frank');
    r = await c.get('/');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/feed');
  });

  test('GET /signup and /login render forms with csrf', async () => {
    for (const p of ['/signup', '/login']) {
      const r = await new Client(stack.base).get(p);
      assert.equal(r.status, 200);
      assert.match(r.headers.get('content-type'), /^text\/html; charset=utf-8/);
      assert.match(r.text, /<form method="post" action="\/(signup|login)"/);
      assert.match(r.text, /<input type="hidden" name="csrf" value="[^"]{20,}">/);
    }
  });

  test('404 HTML page for an unknown path', async () => {
    const c = new Client(stack.base);
    for (const p of ['/no/such/page', '/loginx', '/signup/extra']) {
      const r = await c.get(p);
      assert.equal(r.status, 404, p);
      assert.match(r.headers.get('content-type'), /^text\/html/);
      assert.match(r.text, /<!doctype html>/i);
      assert.match(r.text, /data-status="404"/);
    }
  });

  test('405 with an Allow header for a wrong method', async () => {
    const c = new Client(stack.base);
    let r = await c.req('PUT', '/login');
    assert.equal(r.status, 405);
    assert.match(r.headers.get('allow'), /\bGET\b/);
    assert.match(r.headers.get('allow'), /\bPOST\b/);
    r = await c.req('DELETE', '/signup');
    assert.equal(r.status, 405);
    assert.ok(r.headers.get('allow'));
    r = await c.get('/logout');
    assert.equal(r.status, 405);
    assert.equal(r.headers.get('allow'), 'POST');
    r = await c.post('/healthz', {});
    assert.equal(r.status, 405);
    assert.match(r.headers.get('allow'), /\bGET\b/);
  });

  test('413 for a body over 64 KiB (nginx answers)', async () => {
    const c = new Client(stack.base);
    await c.get('/signup');
    const before = users();
    const body = `login=bigbody&name=${'n'.repeat(70 * 1024)}&password=password-123&csrf=${c.csrf}`;
    const r = await c.req('POST', '/signup', { body });
    assert.equal(r.status, 413);
    assert.equal(users(), before);
    // just under the limit reaches the handler (and is a bad name)
    const ok = `login=bigbody&name=${'n'.repeat(60 * 1024)}&password=password-123&csrf=${c.csrf}`;
    assert.equal((await c.req('POST', '/signup', { body: ok })).status, 400);
  });

  test('400 for a malformed form body', async () => {
    const c = new Client(stack.base);
    await c.get('/signup');
    const before = users();
    for (const body of ['a=%zz', `login=gina&name=G&password=password-123&csrf=${c.csrf}&x=%4`]) {
      const r = await c.req('POST', '/signup', { body });
      assert.equal(r.status, 400, body);
      assert.match(r.headers.get('content-type'), /^text\/html/);
    }
    assert.equal(users(), before);
    const r = await c.req('POST', '/login', { body: 'a=%zz' });
    assert.equal(r.status, 400);
  });

  test('/healthz answers 200 ok', async () => {
    const r = await fetch(`${stack.base}/healthz`);
    assert.equal(r.status, 200);
    assert.equal((await r.text()).trim(), 'ok');
  });

  test('security headers on pages, redirects, errors and static files', async () => {
    const c = new Client(stack.base);
    const answers = [
      await c.get('/login'), await c.get('/'), await c.get('/nope'),
      await c.req('PUT', '/login'), await c.get('/static/tally.css'),
      await c.req('POST', '/login', { body: 'x'.repeat(70 * 1024) }),
    ];
    for (const r of answers) {
      const csp = r.headers.get('content-security-policy');
      assert.ok(csp, `CSP on a ${r.status}`);
      assert.ok(!csp.includes('unsafe-inline'), csp);
      assert.ok(!csp.includes('unsafe-eval'), csp);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.match(csp, /default-src 'self'/);
      assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    }
    const page = answers[0];
    assert.ok(!/<script>/.test(page.text), 'no inline script');
    assert.ok(!/<style/.test(page.text), 'no inline style');
    assert.equal(page.headers.get('cache-control'), 'no-store');
  });
});

describe('tallyctl', () => {
  test('useradd: exit 0 and the user can log in', async () => {
    const out = stack.tallyctl('useradd', 'henry', 'Henry H', 'password-henry');
    assert.match(out, /henry/);
    assert.equal(stack.sqlite("select name from users where login = 'henry'"), 'Henry H');
    const c = new Client(stack.base);
    const r = await c.login('henry', 'password-henry');
    assert.equal(r.status, 303);
    assert.equal(r.location, '/feed');
  });

  // Refusals before anything is opened: a command or option it does not
  // know (2), a RUN_DIR or TALLY_DB where no site's database is (1), each
  // one line on stderr; the mistyped RUN_DIR is not made (it was, with an
  // empty database in it, which useradd then filled).  help: the usage on
  // standard output, 0.
  test('tallyctl refuses in one line: unknown words, a RUN_DIR without a site (not made)', () => {
    const ctl = (args, env = {}) => spawnSync(path.join(BIN, 'tallyctl'), args,
      { env: { ...stack.env, ...env }, encoding: 'utf8', input: '' });
    const missing = path.join(os.tmpdir(), `tally-no-site-${process.pid}`);
    const cases = [
      [[], {}, 2, /no command/],
      [['bogus'], {}, 2, /unknown command bogus/],
      [['seed', '--bogus', '1'], {}, 2, /seed: unknown option --bogus/],
      [['reconcile', '--now'], {}, 2, /reconcile: unknown option --now/],
      [['passwd'], {}, 2, /passwd takes one LOGIN/],
      [['useradd', 'henry_x', 'Henry X', 'password-henry'], { RUN_DIR: missing }, 1, /no site's database in/],
      [['flush'], { TALLY_DB: path.join(missing, 'tally.db') }, 1, /no database at .* \(TALLY_DB\)/],
    ];
    for (const [args, env, status, why] of cases) {
      const r = ctl(args, env);
      const lines = r.stderr.split('\n').filter((l) => l !== '');
      assert.equal(r.status, status, `tallyctl ${args.join(' ')}: ${r.stderr}`);
      assert.equal(lines.length, 1, `tallyctl ${args.join(' ')}: ${JSON.stringify(r.stderr)}`);
      assert.match(lines[0], why);
    }
    assert.ok(!fs.existsSync(missing), 'the mistyped RUN_DIR was not made');
    assert.equal(stack.sqlite("select count(*) from users where login = 'henry_x'"), '0');
    const help = ctl(['help']);
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: tallyctl useradd/);
    assert.equal(help.stderr, '');
  });

  test('useradd of a taken login: non-zero exit, one line on stderr', () => {
    const before = users();
    for (const login of ['henry', 'HENRY']) {
      let err;
      try {
        stack.tallyctl('useradd', login, 'Other', 'password-other');
      } catch (e) { err = e; }
      assert.ok(err, 'tallyctl failed');
      assert.notEqual(err.status, 0);
      const lines = String(err.stderr).split('\n').filter((l) => l !== '');
      assert.equal(lines.length, 1, JSON.stringify(err.stderr));
      assert.match(lines[0], /taken/);
    }
    assert.equal(users(), before);
  });
});

describe('login rate limit', () => {
  let slow;
  before(async () => { slow = await startStack({ loginRate: '6r/m' }); });
  after(async () => { await slow?.stop(); });

  test('POST /login gets 429 after the burst; GET is not limited', async () => {
    const c = new Client(slow.base);
    await c.get('/login');
    const statuses = [];
    for (let i = 0; i < 16; i++) {
      statuses.push((await c.post('/login', { login: 'nobody', password: 'password-123' })).status);
    }
    assert.ok(statuses.slice(0, 11).every((s) => s === 401), statuses.join(' '));
    assert.ok(statuses.slice(11).includes(429), statuses.join(' '));
    assert.equal(statuses.at(-1), 429, statuses.join(' '));
    const r = await c.get('/login');
    assert.equal(r.status, 200);
  });
});

// The worker expired every expired session in one go: a backlog of
// millions (a site whose worker was down a day) held its loop, no flush,
// no fan-out, no lease renewal, for as long as it took.  A round takes
// 10,000 at most, the rest in the next rounds, the flush between them.
describe('session expiry', () => {
  test('the worker expires a backlog 10,000 a round, and all of it', async () => {
    const c = new Client(stack.base);
    assert.equal((await c.signup('expiry_x', 'password-123', 'X')).status, 303);
    const uid = Number(stack.sqlite("select id from users where login = 'expiry_x'"));
    const expired = () => Number(stack.sqlite('select count(*) from sessions where expires_at < 1000'));
    stack.sqlite(`WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 25000)
      INSERT INTO sessions(hash, user_id, csrf, created_at, expires_at)
      SELECT ${onPostgres() ? "decode(lpad(to_hex(x), 8, '0'), 'hex')" : 'randomblob(32)'}, ${uid}, 'c', 1, 1 FROM n`);
    assert.equal(expired(), 25000);
    await waitFor(() => expired() === 0, 60000, 200);
    const rounds = [...stack.log('worker').matchAll(/expired (\d+) sessions/g)].map((m) => Number(m[1]));
    assert.ok(rounds.length >= 3 && Math.max(...rounds) <= 10000, `rounds: ${rounds.join(' ')}`);
    assert.equal((await c.get('/feed')).status, 200, 'the live session stays');
  });
});
