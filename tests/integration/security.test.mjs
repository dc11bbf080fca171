// security.test.mjs -- tally's security contract, black-box against a
// real stack (nginx + the four FastCGI handlers + Redis + SQLite):
//  1. the authorization matrix: every route of the four route tables
//     (handlers/web.c, social.c, notify.c, admin.c) x four callers
//     (anonymous, A = the owner, B = another user, admin), exact status
//     and Location; a refused action changes nothing in SQLite; the
//     matrix is printed as a table (t.diagnostic);
//  2. CSRF on every POST route: no token, a wrong one, an empty one, one
//     in the query string, another session's -> 403 and no change;
//  3. XSS: hostile names, bodies, comments, notices are escaped on every
//     page that shows them (and the HTML keeps its structure: no new tag,
//     no on* attribute, no javascript: URL); a hostile topic is a 400;
//  4. SQL metacharacters and NUL in every field, query and path segment:
//     the right 400/401/404, exact round trips, tables intact;
//  5. session fixation: pre-login cookies and forged sids are never the
//     session; the sid changes at login and dies at logout;
//  6. the login rate limit (a second stack, 6r/m): POST 429, GET 200;
//  7. security headers on every answer, caching headers on /static/.
import { test, before, after, describe } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { createHash } from 'node:crypto';

import { startStack, Client, waitFor, onPostgres } from '../lib/stack.mjs';
import { drainQueue } from '../lib/social.mjs';
import { userCache } from '../lib/counts.mjs';

let stack;

const LOGIN = { A: 'sec_alice', B: 'sec_bob', admin: 'admin' };
const PW = { A: 'password-sec-a', B: 'password-sec-b', admin: 'admin-pass-1' };
const ROLES = ['anon', 'A', 'B', 'admin'];
const ROLE_ORDER = ['anon', 'B', 'admin', 'A']; // refusals first, then the owner
const HEAD = { anon: 'anonymous', A: 'A (owner)', B: 'B (other user)', admin: 'admin' };
const ACTIVE_RUNS = "SELECT count(*) FROM reconcile_runs WHERE state IN ('queued', 'running')";

const C = {}; // long-lived clients by role
const F = {}; // fixture ids made in before()
const seen = []; // every answer any client got: for the header checks

const sql = (s) => stack.sqlite(s);
const num = (s) => Number(stack.sqlite(s));
const q = (s) => `'${String(s).replace(/'/g, "''")}'`;
const hex = (s) => Buffer.from(s, 'utf8').toString('hex').toUpperCase();
// The truth's SQL on either database: a text (or, on PostgreSQL, a
// bytea) column's bytes in upper-case hex, and the list of tables.
const PG = onPostgres();
const hexCol = (c) => (PG ? `upper(encode(convert_to(${c}, 'UTF8'), 'hex'))` : `hex(${c})`);
const hexBytes = (c) => (PG ? `upper(encode(${c}, 'hex'))` : `hex(${c})`);
const TABLES_SQL = PG
  ? "SELECT string_agg(table_name, ',' ORDER BY table_name) FROM information_schema.tables WHERE table_schema = current_schema()"
  : "SELECT group_concat(name, ',') FROM (SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name)";
let serial = 0;
const uniq = (p) => `${p}${++serial}`;

// A Client that records every answer (status, headers, body) in seen.
class RClient extends Client {
  async req(method, p, opts) {
    const r = await super.req(method, p, opts);
    seen.push({ what: `${method} ${p}`, status: r.status, headers: r.headers, text: r.text });
    return r;
  }
}

function clientWith(cookies) {
  const c = new RClient(stack.base);
  for (const [k, v] of Object.entries(cookies)) c.jar.set(k, v);
  return c;
}

// POSTs a hand-written body (escapes URLSearchParams would not produce,
// e.g. %00), with the client's csrf appended.
function rawPost(c, p, body) {
  return c.req('POST', p, { body: `${body}&csrf=${encodeURIComponent(c.csrf)}` });
}

// A new client for role: anonymous with a pre-session token, or freshly
// logged in, holding its session's csrf (the 404 page's logout form).
async function fresh(role) {
  const c = new RClient(stack.base);
  if (role === 'anon') {
    await c.get('/login');
    assert.ok(c.jar.get('pcsrf'));
    return c;
  }
  const r = await c.login(LOGIN[role], PW[role]);
  assert.equal(r.status, 303, `login ${role}`);
  await c.get('/nope');
  return c;
}

// ---- fixtures (all made through the application, by A and B) ----

async function newPost(publish, body = 'a post of A') {
  const r = await C.A.post('/posts', { body, topic: 'sec-topic', publish: publish ? '1' : '0' });
  assert.equal(r.status, 303, `new post: ${r.status}`);
  return Number(/^\/posts\/(\d+)$/.exec(r.location)[1]);
}

async function newComment(pid) {
  const r = await C.A.post(`/posts/${pid}/comments`, { body: 'a comment of A' });
  assert.equal(r.status, 303);
  return num(`SELECT max(id) FROM comments WHERE user_id = ${F.aId}`);
}

// A notification of A: B comments on a new post of A.
async function newNote() {
  const pid = await newPost(true, 'a post B will comment on');
  const r = await C.B.post(`/posts/${pid}/comments`, { body: 'B was here' });
  assert.equal(r.status, 303);
  return num(`SELECT max(id) FROM notifications WHERE user_id = ${F.aId}`);
}

before(async () => {
  stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '0' } });
  // the worker's own first run ("Redis is empty") is over
  await waitFor(() => stack.redis('GET', '{tally}:gen') === '1' && num(ACTIVE_RUNS) === 0, 40000, 100);
  C.anon = await fresh('anon');
  for (const [role, name] of [['A', 'Alice Sec'], ['B', 'Bob Sec']]) {
    C[role] = new RClient(stack.base);
    const r = await C[role].signup(LOGIN[role], PW[role], name);
    assert.equal(r.status, 303);
    await C[role].get('/nope');
  }
  C.admin = await fresh('admin');
  F.aId = num(`SELECT id FROM users WHERE login = '${LOGIN.A}'`);
  F.bId = num(`SELECT id FROM users WHERE login = '${LOGIN.B}'`);
  F.pub = await newPost(true, 'the published post of A');
  F.draft = await newPost(false, 'the draft of A');
  F.comment = await newComment(F.pub);
  F.note = await newNote();
  const r = await C.admin.post('/admin/reconcile', { dry_run: '1' });
  assert.equal(r.status, 303);
  F.run = num('SELECT max(id) FROM reconcile_runs');
  await waitFor(() => num(ACTIVE_RUNS) === 0, 30000, 100);
});

after(async () => { await stack?.stop(); });

// ---- 1. the authorization matrix ----

const L = [303, '/login'];
const all = (x) => ({ anon: x, A: x, B: x, admin: x });
const users = (x, anon = L) => ({ anon, A: x, B: x, admin: x });
const adminOnly = (x) => ({ anon: L, A: 403, B: 403, admin: x });
const toPost = (id) => [303, `/posts/${id}`];

// One row per (method, path) of the route tables, plus the 404/405 rows.
//   p(f, role)      the path (f: fixture ids)
//   fields(f, role) the form of a POST
//   exp             per role: status, or [status, Location (string|RegExp)],
//                   or a function (f) of either
//   fresh()         fixtures made anew for each caller (destructive rows)
//   session         'fresh': each caller gets a new client (login/logout)
//   probe(f)        SQL whose answer a refused POST must not change
//   csrf            the CSRF test of this route: { role, prepare(f, c) }
const ROWS = [
  // tally-web (handlers/web.c)
  { t: 'web', m: 'GET', label: '/', p: () => '/', exp: users([303, '/feed']) },
  { t: 'web', m: 'GET', label: '/signup', p: () => '/signup', exp: users([303, '/feed'], 200) },
  { t: 'web', m: 'GET', label: '/login', p: () => '/login', exp: users([303, '/feed'], 200) },
  { t: 'web', m: 'GET', label: '/healthz', p: () => '/healthz', exp: all(200) },
  {
    t: 'web', m: 'POST', label: '/signup', p: () => '/signup', session: 'fresh',
    fields: () => ({ login: uniq('sec_new'), name: 'New One', password: 'password-new' }),
    exp: all([303, '/feed']), probe: () => 'SELECT count(*) FROM users', csrf: { role: 'anon' },
  },
  {
    t: 'web', m: 'POST', label: '/login', p: () => '/login', session: 'fresh',
    fields: (f, role) => (role === 'anon' ? { login: LOGIN.A, password: PW.A } : { login: LOGIN[role], password: PW[role] }),
    exp: all([303, '/feed']), probe: () => 'SELECT count(*) FROM sessions', csrf: { role: 'anon' },
  },
  {
    t: 'web', m: 'POST', label: '/logout', p: () => '/logout', session: 'fresh', fields: () => ({}),
    exp: all([303, '/login']), probe: () => 'SELECT count(*) FROM sessions', csrf: { role: 'A' },
  },
  { t: 'web', m: 'GET', label: '/logout', p: () => '/logout', exp: all(405), allow: 'POST' },
  { t: 'web', m: 'PUT', label: '/login', p: () => '/login', exp: all(405), allow: /GET.*POST/ },
  { t: 'web', m: 'GET', label: '/no/such/page', p: () => '/no/such/page', exp: all(404) },

  // tally-social (handlers/social.c)
  { t: 'social', m: 'GET', label: '/feed', p: () => '/feed', exp: users(200) },
  { t: 'social', m: 'POST', label: '/feed', p: () => '/feed', fields: () => ({}), exp: all(405), allow: /GET/ },
  { t: 'social', m: 'GET', label: '/u/A', p: () => `/u/${LOGIN.A}`, exp: all(200) },
  { t: 'social', m: 'GET', label: '/u/A/followers', p: () => `/u/${LOGIN.A}/followers`, exp: all(200) },
  { t: 'social', m: 'GET', label: '/u/A/following', p: () => `/u/${LOGIN.A}/following`, exp: all(200) },
  { t: 'social', m: 'GET', label: '/u/nosuchuser', p: () => '/u/nosuchuser', exp: all(404) },
  {
    t: 'social', m: 'POST', label: '/follow/A', p: () => `/follow/${LOGIN.A}`, fields: () => ({}),
    exp: { anon: L, A: 400, B: [303, `/u/${LOGIN.A}`], admin: [303, `/u/${LOGIN.A}`] },
    probe: (f) => `SELECT count(*) FROM follows WHERE followee_id = ${f.aId}`,
    csrf: { role: 'B', prepare: (f, c) => c.post(`/unfollow/${LOGIN.A}`) },
  },
  {
    t: 'social', m: 'POST', label: '/unfollow/A', p: () => `/unfollow/${LOGIN.A}`, fields: () => ({}),
    exp: { anon: L, A: 400, B: [303, `/u/${LOGIN.A}`], admin: [303, `/u/${LOGIN.A}`] },
    probe: (f) => `SELECT count(*) FROM follows WHERE followee_id = ${f.aId}`,
    csrf: { role: 'B', prepare: (f, c) => c.post(`/follow/${LOGIN.A}`) },
  },
  { t: 'social', m: 'POST', label: '/follow/nosuchuser', p: () => '/follow/nosuchuser', fields: () => ({}), exp: users(404) },
  { t: 'social', m: 'GET', label: '/follow/A', p: () => `/follow/${LOGIN.A}`, exp: all(405), allow: 'POST' },
  {
    t: 'social', m: 'POST', label: '/posts', p: () => '/posts',
    fields: () => ({ body: 'a new post', topic: 'sec-topic', publish: '1' }),
    exp: users([303, /^\/posts\/\d+$/]), probe: () => 'SELECT count(*) FROM posts', csrf: { role: 'A' },
  },
  { t: 'social', m: 'GET', label: '/posts/PUB', p: (f) => `/posts/${f.pub}`, exp: all(200) },
  { t: 'social', m: 'GET', label: '/posts/DRAFT', p: (f) => `/posts/${f.draft}`, exp: { anon: 404, A: 200, B: 404, admin: 404 } },
  { t: 'social', m: 'GET', label: '/posts/999999', p: () => '/posts/999999', exp: all(404) },
  { t: 'social', m: 'POST', label: '/posts/PUB', p: (f) => `/posts/${f.pub}`, fields: () => ({}), exp: all(405), allow: /GET/ },
  { t: 'social', m: 'GET', label: '/posts/PUB/edit', p: (f) => `/posts/${f.pub}/edit`, exp: { anon: L, A: 200, B: 403, admin: 403 } },
  { t: 'social', m: 'GET', label: '/posts/DRAFT/edit', p: (f) => `/posts/${f.draft}/edit`, exp: { anon: L, A: 200, B: 404, admin: 404 } },
  {
    t: 'social', m: 'POST', label: '/posts/PUB/edit', p: (f) => `/posts/${f.pub}/edit`,
    fields: (f, role) => ({ body: uniq(`the published post of A, edited as ${role} #`), topic: 'sec-topic', publish: '1' }),
    exp: { anon: L, A: (f) => toPost(f.pub), B: 403, admin: 403 },
    probe: (f) => `SELECT body || '|' || topic_id || '|' || status FROM posts WHERE id = ${f.pub}`,
    csrf: { role: 'A' },
  },
  {
    t: 'social', m: 'POST', label: '/posts/DRAFT/edit', p: (f) => `/posts/${f.draft}/edit`,
    fields: (f, role) => ({ body: uniq(`the draft of A, edited as ${role} #`), topic: 'sec-topic', publish: '0' }),
    exp: { anon: L, A: (f) => toPost(f.draft), B: 404, admin: 404 },
    probe: (f) => `SELECT body || '|' || topic_id || '|' || status FROM posts WHERE id = ${f.draft}`,
  },
  {
    t: 'social', m: 'POST', label: '/posts/PUB/delete', p: (f) => `/posts/${f.pub}/delete`, fields: () => ({}),
    fresh: async () => ({ pub: await newPost(true) }),
    exp: { anon: L, A: [303, '/feed'], B: 403, admin: [303, '/feed'] },
    probe: (f) => `SELECT is_deleted FROM posts WHERE id = ${f.pub}`, csrf: { role: 'A' },
  },
  {
    t: 'social', m: 'POST', label: '/posts/DRAFT/delete', p: (f) => `/posts/${f.draft}/delete`, fields: () => ({}),
    fresh: async () => ({ draft: await newPost(false) }),
    exp: { anon: L, A: [303, '/feed'], B: 404, admin: [303, '/feed'] },
    probe: (f) => `SELECT is_deleted FROM posts WHERE id = ${f.draft}`,
  },
  ...['like', 'unlike', 'repost'].flatMap((act) => {
    const table = act === 'repost' ? 'reposts' : 'likes';
    return [
      {
        t: 'social', m: 'POST', label: `/posts/PUB/${act}`, p: (f) => `/posts/${f.pub}/${act}`, fields: () => ({}),
        exp: users((f) => toPost(f.pub)),
        probe: (f) => `SELECT count(*) FROM ${table} WHERE post_id = ${f.pub}`,
        csrf: {
          role: 'B',
          fresh: async () => ({ pub: await newPost(true) }),
          prepare: act === 'unlike' ? (f, c) => c.post(`/posts/${f.pub}/like`) : undefined,
        },
      },
      {
        t: 'social', m: 'POST', label: `/posts/DRAFT/${act}`, p: (f) => `/posts/${f.draft}/${act}`, fields: () => ({}),
        exp: users(404), probe: (f) => `SELECT count(*) FROM ${table} WHERE post_id = ${f.draft}`,
      },
    ];
  }),
  {
    t: 'social', m: 'POST', label: '/posts/PUB/comments', p: (f) => `/posts/${f.pub}/comments`,
    fields: (f, role) => ({ body: `a comment by ${role}` }), exp: users((f) => toPost(f.pub)),
    probe: (f) => `SELECT count(*) FROM comments WHERE post_id = ${f.pub}`, csrf: { role: 'B' },
  },
  {
    t: 'social', m: 'POST', label: '/posts/DRAFT/comments', p: (f) => `/posts/${f.draft}/comments`,
    fields: () => ({ body: 'a comment on a draft' }), exp: users(404),
    probe: (f) => `SELECT count(*) FROM comments WHERE post_id = ${f.draft}`,
  },
  {
    t: 'social', m: 'POST', label: '/comments/CMT/delete', p: (f) => `/comments/${f.comment}/delete`, fields: () => ({}),
    fresh: async () => ({ comment: await newComment(F.pub) }),
    exp: { anon: L, A: (f) => toPost(f.pub), B: 403, admin: (f) => toPost(f.pub) },
    probe: (f) => `SELECT is_deleted FROM comments WHERE id = ${f.comment}`, csrf: { role: 'A' },
  },
  { t: 'social', m: 'POST', label: '/comments/999999/delete', p: () => '/comments/999999/delete', fields: () => ({}), exp: users(404) },
  { t: 'social', m: 'GET', label: '/comments/CMT/delete', p: (f) => `/comments/${f.comment}/delete`, exp: all(405), allow: 'POST' },
  { t: 'social', m: 'GET', label: '/t/sec-topic', p: () => '/t/sec-topic', exp: all(200) },
  { t: 'social', m: 'GET', label: '/t/nosuchtopic', p: () => '/t/nosuchtopic', exp: all(404) },
  // the site issue's routes: finding people and topics, back, JSON actions
  { t: 'social', m: 'GET', label: '/people', p: () => '/people', exp: all(200) },
  { t: 'social', m: 'GET', label: '/people?q=sec', p: () => '/people?q=sec', exp: all(200) },
  { t: 'social', m: 'GET', label: '/people?page=1001', p: () => '/people?page=1001', exp: all(400) },
  { t: 'social', m: 'POST', label: '/people', p: () => '/people', fields: () => ({}), exp: all(405), allow: /GET/ },
  { t: 'social', m: 'GET', label: '/topics', p: () => '/topics', exp: all(200) },
  { t: 'social', m: 'GET', label: '/followed', p: () => '/followed', exp: users(200) },
  {
    t: 'social', m: 'POST', label: '/posts/PUB/repost back=/feed', p: (f) => `/posts/${f.pub}/repost`,
    fields: () => ({ back: '/feed?page=1' }), exp: users((f) => [303, `/feed?page=1#post-${f.pub}`]),
    probe: (f) => `SELECT count(*) FROM reposts WHERE post_id = ${f.pub}`,
  },
  {
    t: 'social', m: 'POST', label: '/posts/PUB/repost back=//evil', p: (f) => `/posts/${f.pub}/repost`,
    fields: () => ({ back: '//evil.example/x' }), exp: users((f) => toPost(f.pub)),
    probe: (f) => `SELECT count(*) FROM reposts WHERE post_id = ${f.pub}`,
  },
  {
    t: 'social', m: 'POST', label: '/posts/PUB/like (JSON)', p: (f) => `/posts/${f.pub}/like`, fields: () => ({}),
    headers: { accept: 'application/json' }, exp: users(200, 401),
    probe: (f) => `SELECT count(*) FROM likes WHERE post_id = ${f.pub}`,
  },
  {
    t: 'social', m: 'POST', label: '/posts/DRAFT/like (JSON)', p: (f) => `/posts/${f.draft}/like`, fields: () => ({}),
    headers: { accept: 'application/json' }, exp: users(404, 401),
    probe: (f) => `SELECT count(*) FROM likes WHERE post_id = ${f.draft}`,
  },
  {
    t: 'social', m: 'POST', label: '/follow/A (JSON)', p: () => `/follow/${LOGIN.A}`, fields: () => ({}),
    headers: { accept: 'application/json' }, exp: { anon: 401, A: 400, B: 200, admin: 200 },
  },

  // tally-notify (handlers/notify.c)
  { t: 'notify', m: 'GET', label: '/notifications', p: () => '/notifications', exp: users(200) },
  {
    t: 'notify', m: 'POST', label: '/notifications/read-all', p: () => '/notifications/read-all', fields: () => ({}),
    exp: users([303, '/notifications']), probe: () => 'SELECT count(*) FROM notifications WHERE is_read = 0',
    csrf: { role: 'A', prepare: () => newNote() },
  },
  { t: 'notify', m: 'GET', label: '/notifications/read-all', p: () => '/notifications/read-all', exp: all(405), allow: 'POST' },
  {
    t: 'notify', m: 'POST', label: '/notifications/NOTE/read', p: (f) => `/notifications/${f.note}/read`, fields: () => ({}),
    fresh: async () => ({ note: await newNote() }),
    exp: { anon: L, A: [303, '/notifications'], B: 404, admin: 404 },
    probe: (f) => `SELECT is_read FROM notifications WHERE id = ${f.note}`, csrf: { role: 'A' },
  },
  {
    t: 'notify', m: 'POST', label: '/notifications/NOTE/delete', p: (f) => `/notifications/${f.note}/delete`, fields: () => ({}),
    fresh: async () => ({ note: await newNote() }),
    exp: { anon: L, A: [303, '/notifications'], B: 404, admin: 404 },
    probe: (f) => `SELECT count(*) FROM notifications WHERE id = ${f.note}`, csrf: { role: 'A' },
  },
  { t: 'notify', m: 'POST', label: '/notifications/999999/read', p: () => '/notifications/999999/read', fields: () => ({}), exp: users(404) },
  { t: 'notify', m: 'GET', label: '/notices', p: () => '/notices', exp: users(200) },
  { t: 'notify', m: 'GET', label: '/news', p: () => '/news', exp: users(200) },
  { t: 'notify', m: 'GET', label: '/badges', p: () => '/badges', exp: users(200) },
  { t: 'notify', m: 'GET', label: '/badges.json', p: () => '/badges.json', exp: users(200, 401) },
  { t: 'notify', m: 'POST', label: '/badges.json', p: () => '/badges.json', fields: () => ({}), exp: all(405), allow: /GET/ },

  // tally-admin (handlers/admin.c)
  { t: 'admin', m: 'GET', label: '/admin', p: () => '/admin', exp: adminOnly(200) },
  {
    t: 'admin', m: 'POST', label: '/admin/notices', p: () => '/admin/notices',
    fields: (f, role) => ({ title: `a notice (${role})`, body: 'the text of the notice' }),
    exp: adminOnly([303, '/admin']), probe: () => 'SELECT count(*) FROM notices', csrf: { role: 'admin' },
  },
  {
    t: 'admin', m: 'POST', label: '/admin/red-dot', p: () => '/admin/red-dot', fields: () => ({}),
    exp: adminOnly([303, '/admin']),
    probe: () => "SELECT coalesce((SELECT value FROM settings WHERE name = 'red_dot_at'), 0)",
    csrf: { role: 'admin', prepare: () => new Promise((r) => setTimeout(r, 5)) },
  },
  { t: 'admin', m: 'GET', label: '/admin/top?by=posts', p: () => '/admin/top?by=posts', exp: adminOnly(200) },
  { t: 'admin', m: 'GET', label: '/admin/top?by=bogus', p: () => '/admin/top?by=bogus', exp: adminOnly(400) },
  { t: 'admin', m: 'POST', label: '/admin/top?by=posts', p: () => '/admin/top?by=posts', fields: () => ({}), exp: all(405), allow: /GET/ },
  { t: 'admin', m: 'GET', label: '/admin/reconcile', p: () => '/admin/reconcile', exp: adminOnly(200) },
  {
    t: 'admin', m: 'POST', label: '/admin/reconcile', p: () => '/admin/reconcile', fields: () => ({ dry_run: '1' }),
    exp: adminOnly([303, '/admin/reconcile']), probe: () => 'SELECT count(*) FROM reconcile_runs',
    csrf: { role: 'admin', prepare: () => waitFor(() => num(ACTIVE_RUNS) === 0, 30000, 100) },
  },
  { t: 'admin', m: 'GET', label: '/admin/reconcile/RUN', p: (f) => `/admin/reconcile/${f.run}`, exp: adminOnly(200) },
  { t: 'admin', m: 'GET', label: '/admin/reconcile/999999', p: () => '/admin/reconcile/999999', exp: adminOnly(404) },
  { t: 'admin', m: 'GET', label: '/metrics', p: () => '/metrics', exp: all(200) },
];

const want = (row, role, f) => {
  let e = row.exp[role];
  if (typeof e === 'function') e = e(f);
  return Array.isArray(e) ? { status: e[0], loc: e[1] } : { status: e, loc: undefined };
};
const fmtWant = (w) => `${w.status}${w.loc ? ` ${w.loc instanceof RegExp ? '/posts/N' : fmtLoc(w.loc)}` : ''}`;
// Placeholders in a Location, for the table.
const fmtLoc = (loc) => (loc || '')
  .replace(new RegExp(`^/posts/${F.pub}$`), '/posts/PUB')
  .replace(new RegExp(`^/posts/${F.draft}$`), '/posts/DRAFT')
  .replace(/^\/posts\/\d+$/, '/posts/N')
  .replace(`/u/${LOGIN.A}`, '/u/A');

const matrix = []; // { row, cells: { role: { got, ok, want } } }

describe('1. authorization matrix', () => {
  for (const row of ROWS) {
    test(`${row.m} ${row.label}`, async () => {
      const cells = {};
      const problems = [];
      for (const role of ROLE_ORDER) {
        const f = row.fresh ? { ...F, ...(await row.fresh()) } : { ...F };
        const c = row.session === 'fresh' ? await fresh(role) : C[role];
        const p = row.p(f, role);
        const pre = row.probe ? sql(row.probe(f)) : null;
        const r = row.m === 'POST' ? await c.post(p, row.fields(f, role),
          row.headers ? { headers: row.headers } : {})
          : await c.req(row.m, p);
        const w = want(row, role, f);
        let ok = r.status === w.status;
        if (w.loc instanceof RegExp) ok &&= w.loc.test(r.location ?? '');
        else if (w.loc !== undefined) ok &&= r.location === w.loc;
        if (r.status === 405 && row.allow) {
          const allow = r.headers.get('allow') ?? '';
          ok &&= row.allow instanceof RegExp ? row.allow.test(allow) : allow === row.allow;
        }
        // a JSON action answers JSON, its errors too
        if (row.headers?.accept === 'application/json') {
          ok &&= /^application\/json/.test(r.headers.get('content-type') ?? '');
        }
        if (row.m === 'GET' && p === '/badges.json') {
          ok &&= /^application\/json/.test(r.headers.get('content-type'));
        }
        // a refused action changes nothing
        const refused = r.status >= 400 || (r.status === 303 && r.location === '/login' && row.label !== '/logout');
        if (row.probe && refused) {
          const post = sql(row.probe(f));
          if (post !== pre) { ok = false; problems.push(`${HEAD[role]}: ${r.status} but ${row.probe(f)}: ${pre} -> ${post}`); }
        }
        const got = `${r.status}${r.location ? ` ${fmtLoc(r.location)}` : ''}`;
        cells[role] = { got, ok, want: fmtWant(w) };
        if (!ok) problems.push(`${HEAD[role]}: got ${got} (Allow: ${r.headers.get('allow')}), want ${fmtWant(w)}`);
      }
      matrix.push({ row, cells });
      assert.deepEqual(problems, [], `${row.m} ${row.label}`);
    });
  }

  test('the matrix (printed)', (t) => {
    const cellText = (c) => (c.ok ? c.got : `${c.got} != ${c.want}`);
    const widths = [Math.max(5, ...matrix.map((m) => `${m.row.m} ${m.row.label}`.length)),
      ...ROLES.map((r) => Math.max(HEAD[r].length, ...matrix.map((m) => cellText(m.cells[r]).length)))];
    const pad = (s, n) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
    const line = (cols) => cols.map((c, i) => pad(c, widths[i])).join(' | ');
    t.diagnostic('PUB = published post of A, DRAFT = draft of A, CMT = comment of A, NOTE = notification of A, RUN = a reconcile run');
    t.diagnostic(line(['route', ...ROLES.map((r) => HEAD[r])]));
    t.diagnostic(widths.map((n) => '-'.repeat(n)).join('-+-'));
    let handler = '';
    for (const { row, cells } of matrix) {
      if (row.t !== handler) { handler = row.t; t.diagnostic(`[tally-${handler}]`); }
      t.diagnostic(line([`${row.m} ${row.label}`, ...ROLES.map((r) => cellText(cells[r]))]));
    }
    assert.equal(matrix.length, ROWS.length);
    const bad = matrix.filter((m) => ROLES.some((r) => !m.cells[r].ok));
    assert.deepEqual(bad.map((m) => m.row.label), []);
  });
});

describe('1b. drafts and deleted posts never show up in lists', () => {
  const listed = (html, id) => html.includes(`data-post-id="${id}"`);

  test('a draft, an unpublished and a deleted post are only on their author\'s own pages', async () => {
    assert.equal((await C.B.post(`/follow/${LOGIN.A}`)).status, 303);
    const draft = await newPost(false, 'secret draft text 1');
    const unpub = await newPost(true, 'soon unpublished text 2');
    const gone = await newPost(true, 'soon deleted text 3');
    const shown = await newPost(true, 'public text 4');
    await drainQueue(stack);	// followers' homes get it after the answer
    for (const id of [unpub, gone, shown]) assert.ok(listed((await C.B.get('/feed')).text, id), `B's feed shows ${id} at first`);
    assert.equal((await C.A.post(`/posts/${unpub}/edit`, { body: 'soon unpublished text 2', topic: 'sec-topic', publish: '0' })).status, 303);
    assert.equal((await C.A.post(`/posts/${gone}/delete`)).status, 303);
    const lists = (c) => [['/feed', c !== C.anon], [`/u/${LOGIN.A}`, true], ['/t/sec-topic', true]].filter(([, ok]) => ok).map(([p]) => p);
    for (const role of ['anon', 'B', 'admin']) {
      for (const p of lists(C[role])) {
        const r = await C[role].get(p);
        assert.equal(r.status, 200, `${role} ${p}`);
        for (const [id, text] of [[draft, 'secret draft text 1'], [unpub, 'soon unpublished text 2'], [gone, 'soon deleted text 3']]) {
          assert.ok(!listed(r.text, id), `${role} ${p} lists hidden post ${id}`);
          assert.ok(!r.text.includes(text), `${role} ${p} shows the text of hidden post ${id}`);
        }
        if (p !== '/feed' || role === 'B') assert.ok(listed(r.text, shown), `${role} ${p} lists the public post`);
      }
      for (const id of [draft, unpub, gone]) assert.equal((await C[role].get(`/posts/${id}`)).status, 404, `${role} /posts/${id}`);
    }
    const own = await C.A.get(`/u/${LOGIN.A}`);
    assert.ok(listed(own.text, draft) && listed(own.text, unpub), 'the author sees their drafts on their profile');
    assert.equal((await C.A.get(`/posts/${gone}`)).status, 200, 'the author still opens the deleted post');
    assert.equal((await C.B.post(`/unfollow/${LOGIN.A}`)).status, 303);
  });
});

// Regressions for existence leaks this suite found (another user's
// object: 403, or 404 where its existence must not leak).
describe('1c. existence must not leak', () => {
  // handlers/notify.c page_note_delete once answered 404 for someone
  // else's notification but 303 for a missing id.
  test('deleting someone else\'s notification answers like deleting a missing one', async () => {
    const note = await newNote();
    const theirs = await C.B.post(`/notifications/${note}/delete`);
    const missing = await C.B.post('/notifications/999999/delete');
    assert.equal(num(`SELECT count(*) FROM notifications WHERE id = ${note}`), 1, 'nothing deleted');
    assert.equal(theirs.status, missing.status, `someone else's: ${theirs.status}, missing: ${missing.status}`);
  });

  // shared/social/post.c posting_comment_delete once answered 403 to others for a
  // comment under a post hidden again (the post itself is a 404) but 404
  // for a missing comment, so the hidden post's comments showed.
  test('deleting a comment under a hidden post answers like deleting a missing one', async () => {
    const pid = await newPost(true, 'to be hidden');
    const cid = await newComment(pid);
    assert.equal((await C.A.post(`/posts/${pid}/edit`, { body: 'to be hidden', topic: 'sec-topic', publish: '0' })).status, 303);
    const theirs = await C.B.post(`/comments/${cid}/delete`);
    const missing = await C.B.post('/comments/999999/delete');
    assert.equal(num(`SELECT is_deleted FROM comments WHERE id = ${cid}`), 0, 'nothing deleted');
    assert.equal(theirs.status, missing.status, `under a hidden post: ${theirs.status}, missing: ${missing.status}`);
  });
});

// ---- 2. CSRF on every POST route ----

describe('2. CSRF on every POST route', () => {
  for (const row of ROWS.filter((r) => r.csrf)) {
    test(`POST ${row.label} as ${HEAD[row.csrf.role]}: forged csrf -> 403, nothing changes`, async () => {
      const { role } = row.csrf;
      const mk = row.csrf.fresh ?? row.fresh;
      const f = mk ? { ...F, ...(await mk()) } : { ...F };
      const c = role === 'anon' || row.session === 'fresh' ? await fresh(role) : C[role];
      if (row.csrf.prepare) await row.csrf.prepare(f, c);
      const p = row.p(f, role);
      const other = role === 'anon' ? await fresh('anon') : role === 'B' ? C.A : C.B;
      assert.ok(c.csrf && other.csrf && c.csrf !== other.csrf);
      const forgeries = [
        ['no csrf', null, ''],
        ['a wrong csrf', 'x'.repeat(43), ''],
        ['an empty csrf', '', ''],
        ['the right csrf in the query string only', null, `?csrf=${encodeURIComponent(c.csrf)}`],
        [role === 'anon' ? "another visitor's pre-session csrf" : "another user's session csrf", other.csrf, ''],
        role === 'anon' ? ["a logged-in session's csrf", C.B.csrf, ''] : ['a pre-session csrf', C.anon.csrf, ''],
      ];
      for (const [what, csrf, qs] of forgeries) {
        const pre = sql(row.probe(f));
        const r = await c.post(p + qs, { ...row.fields(f, role), csrf });
        assert.equal(r.status, 403, `${what}: ${r.status}`);
        assert.match(r.text, /CSRF/, what);
        assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false, `${what}: no session cookie`);
        assert.equal(sql(row.probe(f)), pre, `${what}: ${row.probe(f)} unchanged`);
      }
      // the same request with the right token does change it (the probe means something)
      const pre = sql(row.probe(f));
      const r = await c.post(p, row.fields(f, role));
      const w = want(row, role, f);
      assert.equal(r.status, w.status, `with the right csrf: ${r.status}`);
      assert.notEqual(sql(row.probe(f)), pre, `with the right csrf, ${row.probe(f)} changes`);
    });
  }
});

describe('2b. CSRF: other encodings and duplicates', () => {
  test('a text/plain or multipart POST (what a cross-site form can send) changes nothing', async () => {
    const posts = num('SELECT count(*) FROM posts');
    for (const [ct, body] of [
      ['text/plain', `body=x&publish=1&csrf=${C.A.csrf}`],
      ['multipart/form-data; boundary=xx', `--xx\r\nContent-Disposition: form-data; name="body"\r\n\r\nx\r\n--xx\r\nContent-Disposition: form-data; name="csrf"\r\n\r\n${C.A.csrf}\r\n--xx--\r\n`],
      ['application/json', JSON.stringify({ body: 'x', csrf: C.A.csrf })],
    ]) {
      const r = await C.A.req('POST', '/posts', { body, headers: { 'content-type': ct } });
      assert.ok([400, 403].includes(r.status), `${ct}: ${r.status}`);
    }
    assert.equal(num('SELECT count(*) FROM posts'), posts);
  });

  test('a wrong csrf first in the form is refused even with the right one after it', async () => {
    const posts = num('SELECT count(*) FROM posts');
    const r = await C.A.req('POST', '/posts', { body: `csrf=wrong&body=x&csrf=${encodeURIComponent(C.A.csrf)}` });
    assert.equal(r.status, 403);
    assert.equal(num('SELECT count(*) FROM posts'), posts);
  });
});

// ---- 3. XSS ----

const PAYLOADS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "'onmouseover='alert(1)", 'javascript:alert(1)'];
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const TAG = /<([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/g;
const ATTR = /\s+([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g;
const TAGS = new Set(['html', 'head', 'meta', 'title', 'link', 'script', 'body', 'header', 'nav', 'a', 'span', 'form',
  'input', 'button', 'main', 'footer', 'section', 'h1', 'h2', 'h3', 'p', 'b', 'small', 'article', 'div', 'time', 'label',
  'textarea', 'progress', 'ul', 'ol', 'li', 'table', 'tr', 'th', 'td', 'svg', 'g', 'rect', 'text', 'line', 'desc', 'em', 'code', 'br', 'strong', 'i']);

// The page's markup is ours alone: known tags, no event handler
// attribute, no javascript: URL, scripts only from /static/, no inline
// style or script body; and no raw payload anywhere.
function assertSafe(what, html) {
  for (const p of PAYLOADS.slice(0, 3)) assert.ok(!html.includes(p), `${what}: raw ${p}`);
  assert.doesNotMatch(html, /<img/i, `${what}: an <img> tag`);
  for (const m of html.matchAll(TAG)) {
    const tag = m[1].toLowerCase();
    assert.ok(TAGS.has(tag), `${what}: unexpected <${tag}> tag: ${m[0].slice(0, 120)}`);
    for (const a of m[2].matchAll(ATTR)) {
      const name = a[1].toLowerCase();
      const val = a[2] ?? a[3] ?? a[4] ?? '';
      assert.ok(!name.startsWith('on'), `${what}: event handler attribute ${name} in ${m[0].slice(0, 120)}`);
      assert.ok(name !== 'style', `${what}: inline style in ${m[0].slice(0, 120)}`);
      if (['href', 'src', 'action', 'formaction'].includes(name)) {
        assert.doesNotMatch(val.trim(), /^(javascript|data|vbscript):/i, `${what}: ${name}="${val}"`);
      }
      if (tag === 'script') assert.ok(name !== 'src' || val.startsWith('/static/'), `${what}: script from ${val}`);
    }
    if (tag === 'script') assert.match(m[0], /\bsrc="\/static\//, `${what}: inline script`);
  }
}

function assertShows(what, html, payloads) {
  for (const p of payloads) assert.ok(html.includes(esc(p)), `${what}: the escaped form of ${p} is shown`);
}

describe('3. XSS: every displayed field is escaped', () => {
  const X = []; // attackers: { c, login, payload, post }
  let V; let vPost;

  before(async () => {
    V = new RClient(stack.base);
    assert.equal((await V.signup('xss_victim', 'password-victim', 'Victim')).status, 303);
    await V.get('/nope');
    let r = await V.post('/posts', { body: 'the victim writes', topic: 'xss-topic', publish: '1' });
    vPost = Number(/(\d+)$/.exec(r.location)[1]);
    for (const [i, payload] of PAYLOADS.entries()) {
      const c = new RClient(stack.base);
      const login = `xss_${i}`;
      r = await c.signup(login, 'password-xss', payload);
      assert.equal(r.status, 303, `signup with the name ${payload}`);
      assert.equal(sql(`SELECT ${hexCol('name')} FROM users WHERE login = '${login}'`), hex(payload), 'the name is stored as typed');
      await c.get('/nope');
      r = await c.post('/posts', { body: payload, topic: 'xss-topic', publish: '1' });
      assert.equal(r.status, 303);
      const post = Number(/(\d+)$/.exec(r.location)[1]);
      assert.equal(sql(`SELECT ${hexCol('body')} FROM posts WHERE id = ${post}`), hex(payload));
      assert.equal((await c.post(`/posts/${vPost}/comments`, { body: payload })).status, 303);
      assert.equal((await c.post(`/posts/${vPost}/like`)).status, 303);
      assert.equal((await c.post('/follow/xss_victim')).status, 303);
      assert.equal((await V.post(`/follow/${login}`)).status, 303);
      r = await C.admin.post('/admin/notices', { title: payload, body: payload });
      assert.equal(r.status, 303);
      X.push({ c, login, payload, post });
    }
  });

  test('a hostile topic is a 400 and creates nothing', async () => {
    const topics = num('SELECT count(*) FROM topics');
    const posts = num('SELECT count(*) FROM posts');
    for (const payload of PAYLOADS) {
      const r = await V.post('/posts', { body: 'hello', topic: payload, publish: '1' });
      assert.equal(r.status, 400, payload);
      assert.match(r.text, /field \u201ctopic\u201d/);
      assertSafe(`400 page for topic ${payload}`, r.text);
      const e = await V.post(`/posts/${vPost}/edit`, { body: 'the victim writes', topic: payload, publish: '1' });
      assert.equal(e.status, 400, `edit: ${payload}`);
    }
    assert.equal(num('SELECT count(*) FROM topics'), topics);
    assert.equal(num('SELECT count(*) FROM posts'), posts);
    assert.equal(sql(`SELECT slug FROM topics t JOIN posts p ON p.topic_id = t.id WHERE p.id = ${vPost}`), 'xss-topic');
  });

  test('the pages that show names, bodies, comments and notices', async (t) => {
    const pages = [
      ['feed of a follower', V, '/feed', PAYLOADS],
      ['the post page with the comments', V, `/posts/${vPost}`, PAYLOADS],
      ['the topic page', V, '/t/xss-topic', PAYLOADS],
      ['followers list', V, '/u/xss_victim/followers', PAYLOADS],
      ['following list', V, '/u/xss_victim/following', PAYLOADS],
      ['notifications', V, '/notifications', PAYLOADS],
      ['notices', V, '/notices', PAYLOADS],
      ['news', V, '/news', []],
      ['badges', V, '/badges', []],
      ['the topic page, anonymous', C.anon, '/t/xss-topic', PAYLOADS],
      ['admin dashboard', C.admin, '/admin', []],
      ['admin leaderboard by posts', C.admin, '/admin/top?by=posts&n=100', []],
      ['admin leaderboard by followers', C.admin, '/admin/top?by=followers&n=100', []],
      ['admin runs', C.admin, '/admin/reconcile', []],
      ['admin run report', C.admin, `/admin/reconcile/${F.run}`, []],
    ];
    for (const x of X) {
      pages.push([`profile of ${x.login} (as V)`, V, `/u/${x.login}`, [x.payload]]);
      pages.push([`profile of ${x.login} (anonymous)`, C.anon, `/u/${x.login}`, [x.payload]]);
      pages.push([`profile of ${x.login} (as self)`, x.c, `/u/${x.login}`, [x.payload]]);
      pages.push([`post of ${x.login}`, V, `/posts/${x.post}`, [x.payload]]);
      pages.push([`edit form of ${x.login}'s post`, x.c, `/posts/${x.post}/edit`, [x.payload]]);
      pages.push([`followers of ${x.login}`, V, `/u/${x.login}/followers`, []]);
    }
    for (const [what, c, p, shows] of pages) {
      const r = await c.get(p);
      assert.equal(r.status, 200, `${what}: ${p}`);
      assertSafe(what, r.text);
      assertShows(what, r.text, shows);
    }
    t.diagnostic(`${pages.length} pages checked; payloads: ${PAYLOADS.join('  ')}`);
  });

  test('hostile values echoed in the signup and login forms stay inside their attribute', async () => {
    for (const payload of PAYLOADS) {
      const c = new RClient(stack.base);
      await c.get('/signup');
      let r = await c.post('/signup', { login: payload, name: payload, password: 'password-123' });
      assert.equal(r.status, 400);
      assertSafe(`signup 400 for ${payload}`, r.text);
      assert.ok(r.text.includes(`value="${esc(payload)}"`), `login echoed escaped: ${payload}`);
      r = await c.post('/signup', { login: 'xss_0', name: payload, password: 'password-123' });
      assert.equal(r.status, 409);
      assertSafe(`signup 409 for ${payload}`, r.text);
      assert.ok(r.text.includes(`value="${esc(payload)}"`));
      await c.get('/login');
      r = await c.post('/login', { login: payload, password: 'password-123' });
      assert.equal(r.status, 401);
      assertSafe(`login 401 for ${payload}`, r.text);
      assert.ok(r.text.includes(`value="${esc(payload)}"`));
    }
  });

  test('hostile text in every other field: comment bodies, notice title/body, edits', async () => {
    const x = X[1];
    for (const payload of PAYLOADS) {
      const r = await x.c.post(`/posts/${x.post}/edit`, { body: `${payload} ${payload}`, topic: 'xss-topic', publish: '1' });
      assert.equal(r.status, 303);
      const page = await V.get(`/posts/${x.post}`);
      assertSafe(`edited post ${payload}`, page.text);
      assertShows(`edited post ${payload}`, page.text, [`${payload} ${payload}`]);
    }
  });
});

// ---- 4. SQL metacharacters ----

describe('4. SQL metacharacters and NUL', () => {
  const SQLI = ["' OR 1=1 --", '"; DROP TABLE users; --', "%' AND '1'='1", 'back\\slash \\\' \\" \\\\ \\0 \\n'];
  let c; let tables; let usersBefore; let legit = 0;
  const field = (name) => new RegExp(`field \u201c${name}\u201d`);

  before(async () => {
    tables = sql(TABLES_SQL);
    usersBefore = num('SELECT count(*) FROM users');
    c = new RClient(stack.base);
    assert.equal((await c.signup('sqli_user', 'password-sqli', 'SQLi User')).status, 303);
    legit++;
    await c.get('/nope');
  });

  test('login with metacharacters in login and password: 401, no session', async () => {
    const sessions = num('SELECT count(*) FROM sessions');
    const pairs = [
      ...SQLI.map((s) => [s, s.padEnd(8, 'x')]),
      ["admin' --", 'whatever-1'], ["admin'/*", 'whatever-1'], ['admin', "' OR '1'='1"], ['admin', "x' OR 'x'='x"],
      ["' OR 1=1 --", PW.admin], [`${LOGIN.A}' --`, PW.A], ['admin"', PW.admin], ['admin\\', PW.admin],
    ];
    for (const [login, password] of pairs) {
      const a = new RClient(stack.base);
      const r = await a.login(login, password);
      assert.equal(r.status, 401, `${login} / ${password}`);
      assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
    }
    assert.equal(num('SELECT count(*) FROM sessions'), sessions);
  });

  test('signup: a login with metacharacters is a 400; names and passwords with them round-trip exactly', async () => {
    for (const s of SQLI) {
      const a = new RClient(stack.base);
      const r = await a.signup(s, 'password-123', 'x');
      assert.equal(r.status, 400, s);
      assert.match(r.text, field('login'));
    }
    assert.equal(num('SELECT count(*) FROM users'), usersBefore + legit);
    const names = [...SQLI, `O'Brien "Bob" \\ ; -- /* */ %_`];
    for (const [i, name] of names.entries()) {
      const login = `sqli_name_${i}`;
      const password = `${name}`.padEnd(8, '!');
      const a = new RClient(stack.base);
      const r = await a.signup(login, password, name);
      assert.equal(r.status, 303, name);
      legit++;
      assert.equal(sql(`SELECT ${hexCol('name')} FROM users WHERE login = '${login}'`), hex(name), `name stored exactly: ${name}`);
      // and shown exactly: the profile's h1 text, unescaped
      const page = await C.anon.get(`/u/${login}`);
      const h1 = /<h1>(.*?) <small/.exec(page.text)[1]
        .replace(/&#39;/g, "'").replace(/&quot;/g, '"').replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
      assert.equal(h1, name, 'the display name round-trips');
      // the password works, and only exactly
      const b = new RClient(stack.base);
      assert.equal((await b.login(login, password)).status, 303, `login with password ${password}`);
      assert.equal((await new RClient(stack.base).login(login, `${password} `)).status, 401);
    }
    assert.equal(num('SELECT count(*) FROM users'), usersBefore + legit);
  });

  test('NUL (%00) in text fields is a 400 naming the field; in a login password a 401', async () => {
    const users = num('SELECT count(*) FROM users');
    const a = new RClient(stack.base);
    await a.get('/signup');
    for (const [body, name] of [
      ['login=sqli_nul&name=Bob%00x&password=password-123', 'name'],
      ['login=sqli_nul&name=Bob&password=password%00-123', 'password'],
      ['login=sqli%00nul&name=Bob&password=password-123', 'login'],
    ]) {
      const r = await rawPost(a, '/signup', body);
      assert.equal(r.status, 400, body);
      assert.match(r.text, field(name));
    }
    assert.equal(num('SELECT count(*) FROM users'), users);
    await a.get('/login');
    assert.equal((await rawPost(a, '/login', `login=${LOGIN.A}&password=${PW.A}%00`)).status, 401);
    assert.equal((await rawPost(a, '/login', `login=${LOGIN.A}%00&password=${PW.A}`)).status, 401);
    const posts = num('SELECT count(*) FROM posts');
    const comments = num('SELECT count(*) FROM comments');
    const notices = num('SELECT count(*) FROM notices');
    for (const [cl, p, body, name] of [
      [c, '/posts', 'body=a%00b&topic=general&publish=1', 'body'],
      [c, '/posts', 'body=ab&topic=gen%00eral&publish=1', 'topic'],
      [c, '/posts', 'body=ab&topic=general&publish=1%00', 'publish'],
      [c, `/posts/${F.pub}/comments`, 'body=a%00b', 'body'],
      [C.A, `/posts/${F.pub}/edit`, 'body=a%00b&topic=sec-topic&publish=1', 'body'],
      [C.admin, '/admin/notices', 'title=a%00b&body=text', 'title'],
      [C.admin, '/admin/notices', 'title=title&body=a%00b', 'body'],
      [C.admin, '/admin/reconcile', 'dry_run=1%00', 'dry_run'],
    ]) {
      const r = await rawPost(cl, p, body);
      assert.equal(r.status, 400, `${p} ${body}`);
      assert.match(r.text, field(name), `${p} ${body}`);
    }
    assert.equal(num('SELECT count(*) FROM posts'), posts);
    assert.equal(num('SELECT count(*) FROM comments'), comments);
    assert.equal(num('SELECT count(*) FROM notices'), notices);
  });

  test('post bodies, comments, notices with metacharacters round-trip exactly; topics with them are 400', async () => {
    const topics = num('SELECT count(*) FROM topics');
    for (const s of SQLI) {
      let r = await c.post('/posts', { body: s, topic: s, publish: '1' });
      assert.equal(r.status, 400, `topic ${s}`);
      assert.match(r.text, field('topic'));
      r = await c.post('/posts', { body: s, topic: 'sqli-topic', publish: '1' });
      assert.equal(r.status, 303, s);
      const id = Number(/(\d+)$/.exec(r.location)[1]);
      assert.equal(sql(`SELECT ${hexCol('body')} FROM posts WHERE id = ${id}`), hex(s));
      r = await c.post(`/posts/${id}/comments`, { body: s });
      assert.equal(r.status, 303);
      assert.equal(sql(`SELECT ${hexCol('body')} FROM comments WHERE post_id = ${id}`), hex(s));
      const page = await C.anon.get(`/posts/${id}`);
      assert.equal(page.status, 200);
      assert.equal(page.text.split(`<p>${esc(s)}</p>`).length - 1, 1, 'post shown exactly');
      assert.equal(page.text.split(`<div class="body">${esc(s)}</div>`).length - 1, 1, 'comment shown exactly');
      r = await C.admin.post('/admin/notices', { title: s, body: s });
      assert.equal(r.status, 303);
      assert.equal(sql(`SELECT ${hexCol('title')} || ${hexCol('body')} FROM notices ORDER BY id DESC LIMIT 1`), hex(s) + hex(s));
    }
    assert.equal(num('SELECT count(*) FROM topics'), topics + 1); // sqli-topic only
  });

  test('query parameters with metacharacters: 400', async () => {
    for (const [cl, p] of [
      [c, '/feed?page=1%20OR%201=1'], [c, "/feed?page=1'"], [c, '/feed?page=1;DROP%20TABLE%20users'],
      [c, '/feed?page=%00'], [c, '/feed?page=1%00'], [c, '/feed?page=-1'], [c, '/feed?page=0x10'],
      [C.anon, `/u/${LOGIN.A}?page=1%20OR%201=1`], [C.anon, `/u/${LOGIN.A}/followers?page=1'--`],
      [C.anon, `/u/${LOGIN.A}/following?page=%27`], [C.anon, '/t/general?page=1%20OR%201=1'],
      [c, '/notifications?page=1%20OR%201=1'],
      [C.admin, "/admin/top?by=posts'--"], [C.admin, '/admin/top?by=posts%20OR%201=1'],
      [C.admin, '/admin/top?by=posts&n=1%20OR%201=1'], [C.admin, "/admin/top?by=posts&n=10'"],
      [C.admin, '/admin/top?by=posts&n=%00'], [C.admin, '/admin/top?by=%00'],
    ]) {
      const r = await cl.get(p);
      assert.equal(r.status, 400, p);
      assertSafe(p, r.text);
    }
  });

  test('path segments with metacharacters: 404', async () => {
    for (const [cl, m, p] of [
      [C.anon, 'GET', "/u/x'--"], [C.anon, 'GET', `/u/${LOGIN.A}'--`], [C.anon, 'GET', `/u/${LOGIN.A}%27%20OR%201=1`],
      [C.anon, 'GET', `/u/${LOGIN.A}'--/followers`], [C.anon, 'GET', "/t/a'b"], [C.anon, 'GET', "/t/general'--"],
      [C.anon, 'GET', '/t/general%22'], [C.anon, 'GET', "/posts/1'--"], [C.anon, 'GET', '/posts/1%20OR%201=1'],
      [C.anon, 'GET', '/posts/1;--'], [C.anon, 'GET', `/posts/${F.pub}'`], [C.anon, 'GET', '/posts/-1'],
      [C.A, 'GET', `/posts/${F.pub}'--/edit`], [C.admin, 'GET', "/admin/reconcile/1'--"],
      [C.B, 'POST', "/follow/x'--"], [C.B, 'POST', `/follow/${LOGIN.A}'--`], [C.B, 'POST', `/unfollow/${LOGIN.A}%22`],
      [C.B, 'POST', `/posts/${F.pub}'--/like`], [C.B, 'POST', "/comments/1'--/delete"],
      [C.A, 'POST', "/notifications/1'--/read"], [C.A, 'POST', '/notifications/1%20OR%201=1/delete'],
    ]) {
      const r = m === 'POST' ? await cl.post(p, {}) : await cl.get(p);
      assert.equal(r.status, 404, `${m} ${p}`);
      assertSafe(p, r.text);
    }
  });

  test('the tables are intact; only legitimate signups added users', () => {
    assert.equal(sql(TABLES_SQL), tables);
    assert.equal(num('SELECT count(*) FROM users'), usersBefore + legit);
    if (!PG) assert.equal(sql('PRAGMA integrity_check'), 'ok');	// SQLite's own check of the file
    assert.equal(num("SELECT count(*) FROM users WHERE login = 'admin' AND is_admin = 1"), 1);
    assert.equal(num('SELECT count(*) FROM users WHERE is_admin = 1'), 1, 'nobody became admin');
  });
});

// ---- 5. session fixation ----

describe('5. session fixation', () => {
  const sidOf = (r) => r.headers.getSetCookie().find((h) => h.startsWith('sid='));

  test('pre-login cookies and a forged sid are never the session after login', async () => {
    const c = new RClient(stack.base);
    await c.get('/login');
    const pcsrf = c.jar.get('pcsrf');
    assert.ok(pcsrf && pcsrf.length === 43);
    const forged = 'F'.repeat(43);
    c.jar.set('sid', forged);
    // the forged sid gives no session
    assert.equal((await c.get('/')).location, '/login');
    assert.equal((await c.get('/feed')).location, '/login');
    assert.equal((await c.get('/badges.json')).status, 401);
    const r = await c.post('/login', { login: LOGIN.A, password: PW.A });
    assert.equal(r.status, 303);
    const cookie = sidOf(r);
    assert.ok(cookie, 'login sets a sid');
    assert.match(cookie, /;\s*HttpOnly/i);
    assert.match(cookie, /;\s*SameSite=Lax/i);
    assert.match(cookie, /;\s*Path=\//i);
    const sid = c.jar.get('sid');
    // "<user id>.<43 random base64url characters>" (session.h)
    assert.match(sid, /^[1-9][0-9]*\.[A-Za-z0-9_-]{43}$/);
    assert.notEqual(sid, forged, 'the planted sid is replaced');
    assert.notEqual(sid, pcsrf, 'the pre-session token is not the session');
    assert.equal(num(`SELECT count(*) FROM sessions WHERE csrf = ${q(pcsrf)}`), 0, 'the pre-session token is not the csrf either');
    // only the new sid is a session
    for (const [what, jar] of [['forged sid', { sid: forged }], ['pcsrf as sid', { sid: pcsrf }], ['pcsrf alone', { pcsrf }]]) {
      const x = clientWith(jar);
      assert.equal((await x.get('/')).location, '/login', what);
      assert.equal((await x.get('/badges.json')).status, 401, what);
    }
    assert.equal((await clientWith({ sid }).get('/')).location, '/feed');
    // the session csrf is new too
    await c.get('/nope');
    assert.notEqual(c.csrf, pcsrf);
    // logout: the sid dies
    assert.equal((await c.post('/logout')).status, 303);
    assert.equal((await clientWith({ sid }).get('/')).location, '/login');
    assert.equal((await clientWith({ sid }).get('/badges.json')).status, 401);
  });

  test('pre-login cookies of another visitor (a planted pcsrf) do not carry over', async () => {
    const attacker = await fresh('anon');
    const planted = attacker.jar.get('pcsrf');
    const victim = clientWith({ pcsrf: planted });
    await victim.get('/login');
    const r = await victim.post('/login', { login: LOGIN.B, password: PW.B });
    assert.equal(r.status, 303);
    const sid = victim.jar.get('sid');
    // the attacker, holding the planted token, is not logged in and cannot act for the victim
    assert.equal((await attacker.get('/')).location, '/login');
    const before = num('SELECT count(*) FROM posts');
    const x = await attacker.post('/posts', { body: 'forged', csrf: planted });
    assert.equal(x.status, 303);
    assert.equal(x.location, '/login');
    const withSid = clientWith({ sid });
    const y = await withSid.post('/posts', { body: 'forged', csrf: planted });
    assert.equal(y.status, 403, 'the planted pre-session token is no csrf of the session');
    assert.equal(num('SELECT count(*) FROM posts'), before);
  });

  test('forged sids of every shape, and a stolen session hash, give no session', async () => {
    const hashes = sql(`SELECT ${hexBytes('hash')} FROM sessions LIMIT 3`).split('\n');
    const b64 = hashes.map((h) => Buffer.from(h, 'hex').toString('base64url'));
    // a live session of A, polled once so that Redis caches it
    const a = await fresh('A');
    const real = a.jar.get('sid');
    assert.equal((await a.get('/badges.json')).status, 200);
    const [uidA, tok] = real.split('.');
    const uidB = num(`SELECT id FROM users WHERE login = ${q(LOGIN.B)}`);
    const uidAdmin = num("SELECT id FROM users WHERE is_admin = 1 ORDER BY id LIMIT 1");
    for (const sid of ['', 'x', 'A'.repeat(42), 'A'.repeat(44), 'A'.repeat(43), '-'.repeat(43), "' OR 1=1 --", ...b64,
      createHash('sha256').update('x').digest('base64url'),
      // A's token under other user ids, A's id with other tokens, bent shapes
      `${uidB}.${tok}`, `${uidAdmin}.${tok}`, `0${uidA}.${tok}`, `${uidA}.${'A'.repeat(43)}`,
      `${uidA}.${tok.slice(1)}`, `${uidA}.${tok}A`, `${uidA}..${tok}`, `-${uidA}.${tok}`, `${uidA}${tok}`,
      `${uidA}.${tok.slice(0, 42)}=`, `99999999999999999999.${tok}`, `${uidA}.${b64[0]}`]) {
      const x = clientWith({ sid });
      assert.equal((await x.get('/')).location, '/login', `sid=${sid}`);
      assert.equal((await x.get('/admin')).location, '/login', `sid=${sid}`);
      assert.equal((await x.get('/badges.json')).status, 401, `badges.json with sid=${sid}`);
      // the pages that take the session from Redis (sesscache.h)
      assert.equal((await x.get('/feed')).location, '/login', `feed with sid=${sid}`);
      const prof = await x.get(`/u/${LOGIN.B}`);
      assert.equal(prof.status, 200, `profile with sid=${sid}`);
      assert.doesNotMatch(prof.text, /data-me=/, `profile with sid=${sid}`);
    }
    assert.equal((await clientWith({ sid: real }).get('/badges.json')).status, 200, 'the real one still works');
  });

  // The feed, profile and topic pages take the session from its copy in
  // Redis (sesscache.h): these are the ways that copy must not outlive
  // the session, or be taken for one it is not.
  test('the busiest pages read the session from Redis: a logout, a password change and a stale copy end it; a forged sid reads and writes nothing', async () => {
    const pages = ['/feed', `/u/${LOGIN.B}`, '/t/sec-topic'];
    const me = new RegExp(`data-me="${LOGIN.A}"`);
    const copies = (uid) => {	// field -> value, without the generation
      const kv = stack.redis('HGETALL', userCache(uid, 'ss')).split('\n').filter((x) => x !== '');
      const o = {};
      for (let i = 0; i + 1 < kv.length; i += 2) if (kv[i] !== 'g') o[kv[i]] = kv[i + 1];
      return o;
    };
    const gen = (uid) => Number(stack.redis('HGET', userCache(uid, 'ss'), 'g') || 0);
    const visitor = (r, what) => {
      assert.equal(r.status, 200, what);
      assert.doesNotMatch(r.text, /data-me=/, `${what}: nobody is logged in`);
      assert.match(r.text, /href="\/login">Log in</, what);
    };

    // a page fills the copy: "<until> <written> <admin> <csrf> <login>"
    const a = await fresh('A');
    for (const p of pages) assert.match((await a.get(p)).text, me, p);
    const [field, value] = Object.entries(copies(F.aId)).find(([, v]) => v.includes(` ${a.csrf} `));
    const [until, written, admin, csrf, login] = value.split(' ');
    assert.ok(Number(until) > Date.now() && Math.abs(Number(written) - Date.now()) < 60000, value);
    assert.deepEqual([admin, csrf, login], ['0', a.csrf, LOGIN.A]);

    // A follows B, who posts: A's next visit to B's profile is due
    assert.equal((await a.post(`/follow/${LOGIN.B}`)).status, 303);
    const b0 = await fresh('B');
    assert.equal((await b0.post('/posts', { body: 'a visit due', topic: 'sec-topic', publish: '1' })).status, 303);
    const mark = () => sql(`SELECT coalesce((SELECT value FROM markers WHERE user_id = ${F.aId} AND kind = 'author' AND key = ${F.bId}), 0)`);
    const mark0 = mark();

    // Redis missed the logout (the row is gone from SQLite only): a page
    // may still show for the copy's minute, a write never
    sql(`DELETE FROM sessions WHERE csrf = ${q(a.csrf)}`);
    assert.match((await a.get('/feed')).text, me, 'a copy younger than a minute');
    assert.match((await a.get(`/u/${LOGIN.B}`)).text, me, 'a profile, from the copy');
    assert.equal(mark(), mark0, 'the visit it shows moves no marker: a GET of a copy writes nothing either');
    const liked = num(`SELECT count(*) FROM likes WHERE post_id = ${F.pub}`);
    assert.equal((await a.post(`/posts/${F.pub}/like`)).location, '/login', 'a POST asks SQLite');
    assert.equal(num(`SELECT count(*) FROM likes WHERE post_id = ${F.pub}`), liked);
    // past its minute the copy sends the page to SQLite: no session
    const old = [until, Date.now() - 61000, admin, csrf, login].join(' ');
    stack.redis('HSET', userCache(F.aId, 'ss'), field, old);
    assert.equal((await a.get('/feed')).location, '/login', 'a copy over a minute old');
    visitor(await a.get(pages[1]), 'profile, a copy over a minute old');
    visitor(await a.get(pages[2]), 'topic, a copy over a minute old');
    assert.equal(copies(F.aId)[field], old, 'SQLite said no: nothing was put back');

    // a logout bumps the generation and drops the copy at once
    const b = await fresh('A');
    const sid = b.jar.get('sid');
    assert.match((await b.get('/feed')).text, me);
    const g = gen(F.aId);
    const n = Object.keys(copies(F.aId)).length;
    assert.equal((await b.post('/logout')).status, 303);
    assert.equal(gen(F.aId), g + 1, 'the generation moved');
    assert.equal(Object.keys(copies(F.aId)).length, n - 1, 'its copy went');
    const gone = clientWith({ sid });
    assert.equal((await gone.get('/feed')).location, '/login');
    visitor(await gone.get(pages[1]), 'profile after logout');
    visitor(await gone.get(pages[2]), 'topic after logout');

    // a password change ends every session and every copy
    const c = new RClient(stack.base);
    assert.equal((await c.signup('sec_carol', 'password-carol-1')).status, 303);
    const cid = Number(c.jar.get('sid').split('.')[0]);
    const c2 = new RClient(stack.base);
    assert.equal((await c2.login('sec_carol', 'password-carol-1')).status, 303);
    for (const x of [c, c2]) assert.match((await x.get('/feed')).text, /data-me="sec_carol"/);
    assert.equal(Object.keys(copies(cid)).length, 2);
    const gc = gen(cid);
    stack.tallyctlIn('password-carol-2\n', 'passwd', 'sec_carol');
    assert.deepEqual(copies(cid), {}, 'no copy left');
    assert.equal(gen(cid), gc + 1);
    for (const x of [c, c2]) assert.equal((await x.get('/feed')).location, '/login');

    // a forged sid naming B: no page as B, and B's visit marker stays
    const bob = await fresh('B');
    assert.equal((await bob.post(`/follow/${LOGIN.A}`)).status, 303);
    await newPost(true, 'a post for the followed badge');
    const unread = JSON.parse((await bob.get('/badges.json')).text).followed;
    assert.ok(unread >= 1);
    const marker = sql(`SELECT value FROM markers WHERE user_id = ${F.bId} AND kind = 'author' AND key = ${F.aId}`);
    const forged = clientWith({ sid: `${F.bId}.${'Q'.repeat(43)}` });
    assert.equal((await forged.get('/feed')).location, '/login', 'forged: feed');
    visitor(await forged.get(`/u/${LOGIN.A}`), 'forged: the followed author');
    visitor(await forged.get('/t/sec-topic'), 'forged: topic');
    assert.equal(sql(`SELECT value FROM markers WHERE user_id = ${F.bId} AND kind = 'author' AND key = ${F.aId}`), marker);
    assert.equal(JSON.parse((await bob.get('/badges.json')).text).followed, unread);
    assert.equal((await bob.post(`/unfollow/${LOGIN.A}`)).status, 303);
  });

  test('logging in over a live session replaces it', async () => {
    const c = await fresh('A');
    const s1 = c.jar.get('sid');
    const r = await c.post('/login', { login: LOGIN.B, password: PW.B });
    assert.equal(r.status, 303);
    const s2 = c.jar.get('sid');
    assert.notEqual(s1, s2);
    assert.equal((await clientWith({ sid: s1 }).get('/')).location, '/login');
    const me = await clientWith({ sid: s2 }).get('/nope');
    assert.match(me.text, new RegExp(`data-me="${LOGIN.B}"`));
  });
});

// ---- 6. login rate limit ----

describe('6. login rate limit', () => {
  let slow;
  before(async () => { slow = await startStack({ loginRate: '6r/m' }); });
  after(async () => { await slow?.stop(); });

  test('POST /login answers 429 after the burst, GET /login still 200', async () => {
    const c = new Client(slow.base);
    await c.get('/login');
    const statuses = [];
    for (let i = 0; i < 16; i++) {
      statuses.push((await c.post('/login', { login: 'nobody', password: 'password-123' })).status);
    }
    assert.ok(statuses.slice(0, 11).every((s) => s === 401), statuses.join(' '));
    assert.equal(statuses.at(-1), 429, statuses.join(' '));
    const r = await c.post('/login', { login: 'admin', password: 'admin-pass-1' });
    assert.equal(r.status, 429, 'even the right password is refused while limited');
    assert.equal(r.headers.getSetCookie().some((h) => h.startsWith('sid=')), false);
    assert.match(r.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
    assert.equal(r.headers.get('x-content-type-options'), 'nosniff');
    assert.equal((await c.post('/signup', { login: 'limited', name: 'L', password: 'password-123' })).status, 429, 'signup shares the limit');
    for (let i = 0; i < 3; i++) {
      assert.equal((await c.get('/login')).status, 200);
      assert.equal((await c.get('/signup')).status, 200);
    }
    assert.equal((await fetch(`${slow.base}/healthz`)).status, 200);
  });
});

// POST /settings hashes the current password as a login does: it spends
// the same per-address budget (one session's guesses cannot keep the
// machine's hash slots taken); its GET is not limited.
describe('6b. the login rate limit covers POST /settings', () => {
  let slow;
  before(async () => { slow = await startStack({ loginRate: '6r/m' }); });
  after(async () => { await slow?.stop(); });

  test('POST /settings answers 429 after the burst (the signup counted), GET /settings still 200', async () => {
    const c = new Client(slow.base);
    assert.equal((await c.signup('rated', 'password-123', 'Rated')).status, 303);
    assert.equal((await c.get('/settings')).status, 200);
    const statuses = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await c.post('/settings', { current: `not-it-${i}`, password: 'password-456' })).status);
    }
    // burst 10 past the first: the signup and 10 guesses, then refused
    assert.ok(statuses.slice(0, 10).every((s) => s === 403), statuses.join(' '));
    assert.equal(statuses.at(-1), 429, statuses.join(' '));
    assert.equal((await c.get('/settings')).status, 200);
    assert.equal((await c.get('/feed')).status, 200, 'the session still works');
  });
});

// ---- 7. headers ----

describe('7. security headers', () => {
  function checkSecurity(what, h) {
    const csp = h.get('content-security-policy');
    assert.ok(csp, `${what}: CSP`);
    assert.ok(!csp.includes('unsafe-inline'), `${what}: ${csp}`);
    assert.ok(!csp.includes('unsafe-eval'), `${what}: ${csp}`);
    assert.match(csp, /default-src 'self'/, what);
    assert.match(csp, /frame-ancestors 'none'/, what);
    assert.match(csp, /script-src 'self'(;|$)/, what);
    assert.equal(h.get('x-content-type-options'), 'nosniff', what);
    assert.equal(h.get('x-frame-options'), 'DENY', what);
    assert.equal(h.get('referrer-policy'), 'same-origin', what);
  }

  test('every answer the tests saw carries the security headers; HTML is no-store', (t) => {
    assert.ok(seen.length > 300, `${seen.length} answers`);
    let html = 0;
    let lengths = 0;
    for (const { what, status, headers, text } of seen) {
      checkSecurity(`${what} (${status})`, headers);
      const ct = headers.get('content-type') ?? '';
      if (/^text\/html/.test(ct)) {
        html++;
        assert.match(ct, /charset=utf-8/i, what);
        assert.equal(headers.get('cache-control'), 'no-store', `${what} (${status}): Cache-Control`);
        if (status !== 413 && status !== 429 && text.length > 0) assertSafe(`${what} (${status})`, text);
      }
      if (/^application\/json/.test(ct)) assert.equal(headers.get('cache-control'), 'no-store', what);
      // a handler's answer says its length (web/resp.c): nginx sends it
      // as it is, not chunked (nginx's own 413 and 429 pages aside)
      if (/^(text\/html|application\/json)/.test(ct) && status !== 413 && status !== 429) {
        assert.equal(headers.get('content-length'), String(Buffer.byteLength(text)), `${what} (${status}): Content-Length`);
        assert.equal(headers.get('transfer-encoding'), null, `${what} (${status}): Transfer-Encoding`);
        lengths++;
      }
    }
    assert.ok(lengths > 300, `${lengths} answers with a length`);
    t.diagnostic(`${seen.length} answers checked, ${html} of them HTML, ${lengths} with their Content-Length`);
  });

  test('personalised pages are no-store, for each caller', async () => {
    for (const role of ['A', 'admin']) {
      for (const p of ['/feed', `/u/${LOGIN.A}`, `/posts/${F.draft}`, '/notifications', '/notices', '/news', '/badges', '/badges.json', '/admin']) {
        const r = await C[role].get(p);
        assert.equal(r.headers.get('cache-control'), 'no-store', `${role} ${p}`);
        checkSecurity(`${role} ${p}`, r.headers);
      }
    }
  });

  test('/static/ files are cached, typed, and carry the security headers', async () => {
    for (const [p, type] of [['/static/tally.css', /^text\/css/], ['/static/tally.js', /javascript/], ['/static/favicon.svg', /^image\/svg\+xml/]]) {
      const r = await fetch(stack.base + p);
      assert.equal(r.status, 200, p);
      assert.match(r.headers.get('content-type'), type, p);
      const cc = r.headers.get('cache-control') ?? '';
      assert.match(cc, /max-age=\d+/, `${p}: Cache-Control ${cc}`);
      assert.ok(Number(/max-age=(\d+)/.exec(cc)[1]) >= 600, cc);
      assert.ok(r.headers.get('expires'), `${p}: Expires`);
      assert.ok(r.headers.get('last-modified') || r.headers.get('etag'), `${p}: a validator`);
      checkSecurity(p, r.headers);
      await r.arrayBuffer();
    }
    const r = await fetch(`${stack.base}/static/nope.css`);
    assert.equal(r.status, 404);
    checkSecurity('/static/nope.css', r.headers);
    await r.arrayBuffer();
  });

  // A page carries the session's csrf token beside text other users
  // wrote: compressed, its length over TLS would leak the token (BREACH).
  test('what the handlers answer is never compressed, even when asked; /static/ is', async () => {
    const get = (p) => new Promise((resolve, reject) => {
      const rq = http.get({ host: '127.0.0.1', port: stack.port, path: p, headers: {
        'Accept-Encoding': 'gzip, deflate, br', Cookie: `sid=${C.A.jar.get('sid')}`,
      } }, (res) => {
        res.resume();
        res.on('end', () => resolve(res));
      });
      rq.on('error', reject);
    });
    for (const p of ['/feed', `/u/${LOGIN.A}`, `/posts/${F.pub}`, '/t/sec-topic', '/notifications', '/people', '/badges.json', '/nope']) {
      const r = await get(p);
      assert.ok(r.statusCode === 200 || r.statusCode === 404, `${p}: ${r.statusCode}`);
      assert.equal(r.headers['content-encoding'], undefined, `${p} came compressed`);
    }
    const css = await get('/static/tally.css');
    assert.equal(css.headers['content-encoding'], 'gzip', '/static/tally.css');
  });

  test('/metrics answers only 127.0.0.1 (here from 127.0.0.2: 403)', async () => {
    const status = await new Promise((resolve, reject) => {
      const rq = http.get({ host: '127.0.0.1', port: stack.port, path: '/metrics', localAddress: '127.0.0.2' }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      rq.on('error', reject);
    });
    assert.equal(status, 403);
  });
});
