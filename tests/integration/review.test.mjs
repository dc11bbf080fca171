// review.test.mjs -- what the layered library promised beyond its shape:
//  - the error page does no I/O: its cost, read from /metrics' per-handler
//    counters, is zero Redis commands and zero SQLite statements beyond
//    the request's own session read (none at all for a malformed one);
//  - /metrics reads the metrics file through its process's one mapping,
//    never mapping it again per scrape.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import https from 'node:https';
import os from 'node:os';
import { startStack, Client, childrenOf, freePort, waitFor } from '../lib/stack.mjs';
import { measure as measureCost } from '../lib/cost.mjs';
import { userId } from '../lib/social.mjs';

let stack;
let me;
let post;

before(async () => {
  stack = await startStack();
  me = new Client(stack.base);
  assert.equal((await me.signup('reviewer')).status, 303);
  await me.get('/feed');
  const r = await me.post('/posts', { body: 'a post to refuse likes on', publish: '1' });
  post = Number(r.location.split('/').pop());
});

after(async () => { await stack?.stop(); });

const measure = (handler, n, send) => measureCost(stack, handler, n, send);

test('the error page costs zero Redis commands and zero SQLite statements', async () => {
  // 404 with no route, for a signed-in visitor: the request's own session
  // read (its header shows the user's navigation), nothing for the page
  let m = await measure('web', 10, (i) => me.get(`/no/such/page/${i}`));
  for (const r of m.answers) {
    assert.equal(r.status, 404);
    assert.match(r.text, /data-status="404"/);
    assert.match(r.text, /data-me="reviewer"/);
  }
  assert.equal(m.stmts, 10, '404: the session read, one statement each');
  assert.equal(m.cmds, 0, '404: no Redis command (no badges)');
  // a profile that does not exist, asked by a reader taken at its
  // cookie's word (req.h: presumed): the error page does no I/O, so the
  // route confirms who asks, then has it made again naming the user; a
  // forged cookie gets a visitor's 404
  let r = await me.get('/u/nosuchuser_rv');
  assert.equal(r.status, 404);
  assert.match(r.text, /data-me="reviewer"/, 'the confirmed reader is named');
  const forged = new Client(stack.base);
  forged.jar.set('sid', `${userId(stack, 'reviewer')}.${'A'.repeat(43)}`);
  r = await forged.get('/u/nosuchuser_rv');
  assert.equal(r.status, 404);
  assert.doesNotMatch(r.text, /data-me=/, 'a forged cookie names nobody');
  // a POST refused for its CSRF token: the session check is the only I/O
  // (one statement); the error page adds nothing, no badge read
  m = await measure('social', 10, () => me.post(`/posts/${post}/like`, { csrf: 'f'.repeat(43) }));
  for (const r of m.answers) {
    assert.equal(r.status, 403);
    assert.match(r.text, /data-status="403"/);
    assert.match(r.text, /data-me="reviewer"/, 'the header still knows the user');
  }
  assert.equal(m.stmts, 10, '403: the session read, one statement each');
  assert.equal(m.cmds, 0, '403: no Redis command (no badges)');
  // a malformed form: 400 before any routing
  m = await measure('social', 5, () => me.req('POST', `/posts/${post}/like`,
    { body: 'csrf=%zz&%%%' }));
  for (const r of m.answers) assert.equal(r.status, 400);
  assert.equal(m.stmts, 0, '400: no SQLite statement');
  assert.equal(m.cmds, 0, '400: no Redis command');
  assert.equal(stack.sqlite(`SELECT COUNT(*) FROM likes WHERE post_id=${post}`), '0');
});

test('/metrics maps the metrics file once per process, however often it is scraped', async () => {
  const admins = () => childrenOf(stack.proc.pid).filter((c) => /tally-admin/.test(c.cmd))
    .flatMap((c) => [c, ...childrenOf(c.pid)]);
  const maps = () => admins().map((c) => {
    try {
      const lines = fs.readFileSync(`/proc/${c.pid}/maps`, 'utf8').split('\n');
      return { pid: c.pid, metrics: lines.filter((l) => l.endsWith('/metrics.bin')).length, all: lines.length };
    } catch { return { pid: c.pid, metrics: 0, all: 0 }; }
  });
  for (let i = 0; i < 5; i++) assert.equal((await fetch(`${stack.base}/metrics`)).status, 200);
  const before = maps();
  assert.ok(before.some((n) => n.metrics > 0), 'the admin processes map metrics.bin');
  for (let i = 0; i < 300; i++) assert.equal((await fetch(`${stack.base}/metrics`)).status, 200);
  const now = maps();
  for (const n of now) {
    assert.ok(n.metrics <= 1, `an admin process maps metrics.bin ${n.metrics} times after 300 scrapes`);
    const b = before.find((x) => x.pid === n.pid);
    // flat: a leaked mapping per scrape would add hundreds of lines
    if (b) assert.ok(n.all <= b.all + 2, `process ${n.pid}: ${b.all} mappings before 300 scrapes, ${n.all} after`);
  }
});

// The handler checks the client address itself: a reverse proxy on the
// same host that forwards /metrics (here a FastCGI client talking to the
// admin pool's socket directly, as such a proxy would) gets 403 for any
// address but loopback.
test('/metrics refuses a non-local REMOTE_ADDR even when nginx is bypassed', () => {
  const ask = (addr) => {
    const env = {
      PATH: process.env.PATH, REQUEST_METHOD: 'GET', SCRIPT_NAME: '/metrics', REQUEST_URI: '/metrics',
      DOCUMENT_URI: '/metrics', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1', HTTP_HOST: '127.0.0.1',
      ...(addr === null ? {} : { REMOTE_ADDR: addr }),
    };
    const out = execFileSync('cgi-fcgi', ['-bind', '-connect', path.join(stack.runDir, 'admin.sock')],
      { env, encoding: 'utf8', timeout: 5000 });
    const m = /^Status: (\d+)/m.exec(out);
    return { status: m ? Number(m[1]) : 200, out };
  };
  const local = ask('127.0.0.1');
  assert.equal(local.status, 200, local.out.slice(0, 200));
  assert.match(local.out, /^tally_/m, 'the metrics themselves');
  for (const addr of ['192.0.2.7', '10.0.0.1', '2001:db8::1', '127.0.0.1.evil', '', null]) {
    const r = ask(addr);
    assert.equal(r.status, 403, `REMOTE_ADDR ${JSON.stringify(addr)}: ${r.out.slice(0, 120)}`);
    assert.doesNotMatch(r.out, /^tally_/m);
  }
});

// Behind TLS nginx passes HTTPS=on (its stock fastcgi_params, which
// tally-fastcgi.conf includes): the real handler then marks its cookies
// Secure and sends Strict-Transport-Security; over plain HTTP neither.
// What nginx serves itself (the stylesheet, its own error pages) carried
// no Strict-Transport-Security over TLS: only the handlers' answers did.
// A second nginx from the stack's own configuration, listening with TLS
// (a certificate made for the test), beside the stack's plain one.
test('over TLS nginx\'s own answers carry HSTS once, as the handlers\' do; over HTTP none', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-tls-'));
  const ngx = fs.existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : 'nginx';
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1',
    '-subj', '/CN=localhost', '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')],
  { stdio: 'ignore' });
  const port = await freePort();
  // run as root, tally-run gives the run directory to the stack's user,
  // whose 0660 sockets root's default workers (nobody) cannot reach
  const owner = execFileSync('stat', ['-c', '%U %G', stack.runDir], { encoding: 'utf8' }).trim();
  let conf = fs.readFileSync(path.join(stack.runDir, 'nginx', 'nginx.conf'), 'utf8')
    .replace(/listen 127\.0\.0\.1:\d+;/, `listen 127.0.0.1:${port} ssl; ssl_certificate ${dir}/cert.pem; ssl_certificate_key ${dir}/key.pem;`)
    .replace(/^pid .*$/m, `pid ${dir}/nginx.pid;`)
    .replace(/([a-z_]+)_temp_path [^;]*;/g, (_, k) => `${k}_temp_path ${dir}/${k};`)
    .replace(/access_log [^;]*;/, 'access_log off;')
    .replace(/^.*include .*\/tally-live\.conf;$/m, '');
  if (process.getuid() === 0 && !owner.startsWith('root ') && !/^user /m.test(conf)) conf = `user ${owner};\n${conf}`;
  assert.match(conf, /ssl_certificate/);
  fs.writeFileSync(path.join(dir, 'nginx.conf'), conf);
  const n2 = spawn(ngx, ['-q', '-p', `${dir}/`, '-c', path.join(dir, 'nginx.conf'), '-e', path.join(dir, 'error.log'),
    '-g', 'daemon off;'], { stdio: 'ignore' });
  t.after(() => { n2.kill('SIGTERM'); fs.rmSync(dir, { recursive: true, force: true }); });
  const head = (url) => new Promise((resolve, reject) => {
    const req = https.request(url, { rejectUnauthorized: false, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, raw: res.rawHeaders }));
    });
    req.on('error', reject);
    req.end();
  });
  const hsts = (raw) => raw.flatMap((v, i) => (i % 2 === 0 && /^strict-transport-security$/i.test(v) ? [raw[i + 1]] : []));
  await waitFor(async () => { try { await head(`https://127.0.0.1:${port}/static/tally.css`); return true; } catch { return false; } }, 10000, 100);
  for (const [url, status] of [['/static/tally.css', 200], ['/static/no-such-file.css', 404], ['/login', 200]]) {
    const r = await head(`https://127.0.0.1:${port}${url}`);
    assert.equal(r.status, status, url);
    assert.deepEqual(hsts(r.raw), ['max-age=31536000'], `${url}: one HSTS header`);
  }
  for (const url of ['/static/tally.css', '/static/no-such-file.css', '/login']) {
    const r = await fetch(`${stack.base}${url}`);
    assert.equal(r.headers.get('strict-transport-security'), null, `${url} over HTTP`);
  }
});

test('cookies carry Secure and answers HSTS when the request came over HTTPS', () => {
  const get = (extra) => execFileSync('cgi-fcgi', ['-bind', '-connect', path.join(stack.runDir, 'web.sock')], {
    env: {
      PATH: process.env.PATH, REQUEST_METHOD: 'GET', SCRIPT_NAME: '/login', REQUEST_URI: '/login',
      DOCUMENT_URI: '/login', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1', HTTP_HOST: 'example.org',
      REMOTE_ADDR: '203.0.113.9', ...extra,
    },
    encoding: 'utf8', timeout: 5000,
  }).split('\r\n\r\n')[0];
  const tls = get({ HTTPS: 'on' });
  const cookies = tls.split('\r\n').filter((l) => /^Set-Cookie:/i.test(l));
  assert.ok(cookies.length > 0, tls);
  for (const c of cookies) assert.match(c, /; Secure(;|$)/, c);
  // __Host- names: only this host sets them, with Secure and Path=/
  for (const c of cookies) assert.match(c, /^Set-Cookie: __Host-[a-z]+=/i, c);
  assert.match(tls, /^Strict-Transport-Security: max-age=\d+/m);
  const plain = get({});
  assert.ok(plain.split('\r\n').some((l) => /^Set-Cookie:/i.test(l)), plain);
  assert.doesNotMatch(plain, /Secure|Strict-Transport-Security|__Host-/);
});
