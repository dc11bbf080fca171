// social.mjs -- helpers for the social-core tests (feeds, follows, fan-out)
// on top of stack.mjs: reading the machine marks out of pages, creating
// users and posts behind the application's back (raw SQL, the way an
// operator or a bulk load would), and looking into the Redis timelines.

import { Client, waitFor, redisCli, clusterNodes } from './stack.mjs';

// Post ids of the <article data-post-id> items of a page, in page order.
export const postIds = (html) => [...html.matchAll(/<article data-post-id="(\d+)"/g)].map((m) => Number(m[1]));

// Logins of the <li data-login> items of a followers/following page.
export const liLogins = (html) => [...html.matchAll(/<li data-login="([^"]+)"/g)].map((m) => m[1]);

// Comment ids shown on a post page.
export const commentIds = (html) => [...html.matchAll(/data-comment-id="(\d+)"/g)].map((m) => Number(m[1]));

// SQL string literal.
export const q = (s) => `'${String(s).replace(/'/g, "''")}'`;

export const userId = (stack, login) => {
  const v = stack.sqlite(`select id from users where login = ${q(login)}`);
  if (!v) throw new Error(`no user ${login}`);
  return Number(v);
};

export const maxUserId = (stack) => Number(stack.sqlite('select coalesce(max(id), 0) from users'));

// Numbers out of a multi-line sqlite3 answer.
export const nums = (out) => (out === '' ? [] : out.split('\n').map(Number));

// A signed-up, logged-in client and its user id.  Its csrf comes from a
// topic page, which materialises no timeline: the user's home, profile
// and follow sets stay absent in Redis until a test opens them.
export async function newUser(stack, login) {
  const c = new Client(stack.base);
  const r = await c.signup(login);
  if (r.status !== 303) throw new Error(`signup ${login}: ${r.status}`);
  await c.get('/t/general');
  return { c, id: userId(stack, login), login };
}

// A client logged in as an existing user (seeded users: "password").
export async function loginAs(stack, login, password = 'password') {
  const c = new Client(stack.base);
  const r = await c.login(login, password);
  if (r.status !== 303) throw new Error(`login ${login}: ${r.status}`);
  await c.get('/t/general');
  return c;
}

// n users made by "tallyctl seed" (no posts, follows, likes, comments);
// returns their ids.  Each call needs its own rng seed: the logins are
// drawn from it, and a taken login is skipped.
let seedNo = 1000;
export function seedUsers(stack, n) {
  const before = maxUserId(stack);
  // Seeded logins are "user<i><random 0-999>": a later seed can collide
  // with an earlier one's now and then, and skips those; seed again.  A
  // seed makes two users at least (fewer is "no new users", exit 1), so
  // the one missing is seeded with one more, and the first n are taken.
  let last = null;
  for (let tries = 0; tries < 8; tries++) {
    const got = Number(stack.sqlite(`select count(*) from users where id > ${before}`));
    if (got >= n) break;
    last = stack.tallyctlRaw('seed', '--users', String(Math.max(2, n - got)), '--posts', '0', '--follows', '0',
      '--likes', '0', '--comments', '0', '--seed', String(++seedNo));
  }
  const ids = nums(stack.sqlite(`select id from users where id > ${before} order by id limit ${n}`));
  if (ids.length < n && last !== null) throw new Error(`tallyctl seed: ${last.status} ${last.stderr} (${ids.length} of ${n})`);
  return ids;
}

// Makes every user in ids follow followee, follow times increasing with
// the position in ids (ids[0] oldest), from t0 (ms) in steps of step ms.
export function addFollowers(stack, followee, ids, t0 = Date.now() - 86400000, step = 1) {
  if (ids.length === 0) return;
  // plain VALUES: the same SQL on SQLite and PostgreSQL
  const rows = ids.map((id, i) => `(${id}, ${followee}, ${t0 + i * step})`).join(', ');
  stack.sqlite(`insert into follows(follower_id, followee_id, created_at)
    values ${rows} on conflict do nothing`);
}

// Inserts n published posts (or drafts) by uid straight into SQLite,
// published_at = t0 + i*step for i = 0..n-1; returns the ids, oldest first.
export function insertPosts(stack, uid, n, { t0 = Date.now() - 10 * 86400000, step = 1000, status = 1, topic = 1, body = 'bulk post' } = {}) {
  const before = Number(stack.sqlite('select coalesce(max(id), 0) from posts'));
  stack.sqlite(`with recursive k(i) as (select 0 union all select i + 1 from k where i + 1 < ${n})
    insert into posts(user_id, topic_id, body, status, is_deleted, created_at, published_at, updated_at)
    select ${uid}, ${topic}, ${q(body)} || ' ' || i, ${status}, 0, ${t0} + i * ${step},
      case when ${status} = 1 then ${t0} + i * ${step} end, ${t0} + i * ${step} from k order by i`);
  return nums(stack.sqlite(`select id from posts where id > ${before} order by id`));
}

// Redis key of one of a user's sets.
export const key = (uid, what) => `{u${uid}}:${what}`;
// Timeline members are ids zero-padded to 16 digits (shared/store/key.h).
export const member = (id) => String(id).padStart(16, '0');

// A user's home (or profile...) timeline, newest first, or null when it
// is not materialised (marker absent).
export function timeline(stack, uid, what = 'home') {
  if (stack.redis('GET', `${key(uid, what)}:ok`) !== '1') return null;
  return nums(stack.redis('ZREVRANGE', key(uid, what), '0', '-1'));
}

// Unpublished fan-out work: queue + processing.
// Queued, in processing, and the batches handlers do after answering
// (shared/social/fanout.h), read in one script (a job moves between them).
export const pendingJobs = (stack) => Number(stack.redis('EVAL',
  "return redis.call('LLEN', KEYS[1]) + redis.call('LLEN', KEYS[2]) + redis.call('ZCARD', KEYS[3])",
  '3', '{jobs}:queue', '{jobs}:processing', '{jobs}:inline'));

export async function drainQueue(stack, ms = 30000) {
  await waitFor(() => pendingJobs(stack) === 0, ms, 50);
}

// Over the homes of uids, in one EVAL: how many are materialised (marker
// "1"), hold post, hold it with the given score, and their entries in
// all (a sorted set holds a member once, so "exactly once" means: has =
// the number of users, and no other entry appeared); and the ids whose
// home lacks the post.
const HOME_SCAN = `
local post, score = ARGV[1], ARGV[2]
local ok, has, scored, total, missing = 0, 0, 0, 0, {}
for i = 3, #ARGV do
  local u = ARGV[i]
  if redis.call('GET', '{u' .. u .. '}:home:ok') == '1' then ok = ok + 1 end
  total = total + redis.call('ZCARD', '{u' .. u .. '}:home')
  local s = redis.call('ZSCORE', '{u' .. u .. '}:home', post)
  if s then
    has = has + 1
    if s == score then scored = scored + 1 end
  else
    missing[#missing + 1] = u
  end
end
return {ok, has, scored, total, missing}`;

export function homesHolding(stack, uids, post, score = '') {
  if (clusterNodes(stack.runDir)) {
    // a user's keys share a slot, users do not: one piped command each
    const input = uids.map((u) => `GET {u${u}}:home:ok\nZCARD {u${u}}:home\nZSCORE {u${u}}:home ${member(post)}\n`).join('');
    const out = redisCli(stack.runDir, 'redis.sock', [], { input, maxBuffer: 64 << 20 }).split('\n');
    const r = { ok: 0, has: 0, scored: 0, total: 0, missing: [] };
    uids.forEach((u, i) => {
      const [ok, card, sc] = out.slice(3 * i, 3 * i + 3);
      if (ok === '1') r.ok++;
      r.total += Number(card);
      if (sc !== '') { r.has++; if (sc === String(score)) r.scored++; } else r.missing.push(Number(u));
    });
    return r;
  }
  const out = redisCli(stack.runDir, 'redis.sock', ['EVAL', HOME_SCAN, '0', member(post), String(score), ...uids.map(String)],
    { maxBuffer: 64 << 20 }).trim().split('\n');
  const [ok, has, scored, total] = out.slice(0, 4).map(Number);
  return { ok, has, scored, total, missing: out.slice(4).filter((s) => s !== '').map(Number) };
}
