// counts.mjs -- the truth, recounted independently of tally's own catalog:
// every counter family as a GROUP BY over the truth rows, and tally's
// three views of it (SQLite counters table, Redis live values, pages).
import fs from 'node:fs';
import path from 'node:path';
import { redisCli, clusterNodes } from './stack.mjs';
export const RECOUNT = {
  user_posts: "SELECT user_id, COUNT(*) FROM posts WHERE status=1 AND is_deleted=0 GROUP BY 1",
  user_followers: 'SELECT followee_id, COUNT(*) FROM follows GROUP BY 1',
  user_following: 'SELECT follower_id, COUNT(*) FROM follows GROUP BY 1',
  user_likes: 'SELECT p.user_id, COUNT(*) FROM likes l JOIN posts p ON p.id=l.post_id WHERE p.status=1 AND p.is_deleted=0 GROUP BY 1',
  post_likes: 'SELECT post_id, COUNT(*) FROM likes GROUP BY 1',
  post_comments: 'SELECT post_id, COUNT(*) FROM comments WHERE is_deleted=0 GROUP BY 1',
  post_reposts: 'SELECT post_id, COUNT(*) FROM reposts GROUP BY 1',
  topic_posts: 'SELECT topic_id, COUNT(*) FROM posts WHERE status=1 AND is_deleted=0 GROUP BY 1',
  user_topic_posts: "SELECT user_id || ':' || topic_id, COUNT(*) FROM posts WHERE status=1 AND is_deleted=0 GROUP BY user_id, topic_id",
  user_topic_rating: "SELECT p.user_id || ':' || p.topic_id, COUNT(*) FROM likes l JOIN posts p ON p.id=l.post_id WHERE p.status=1 AND p.is_deleted=0 GROUP BY p.user_id, p.topic_id",
  user_unread: 'SELECT user_id, COUNT(*) FROM notifications WHERE is_read=0 GROUP BY 1',
};

// Redis names of a counter (cstore.h, cname.h): its bucket is the top 10
// bits of the low 32 bits of id x 2654435761 (cname_bucket()), where the
// id is the object's, but for a post's counters their author's (owner):
// a like moves the post's and its author's counters in one bucket.  The
// live value is `field` of `hash`, what waits for a flush is `pfield` of
// `pending` (or of `inflight`, taken by a flush batch).
export const BUCKETS = 1024;
export const bucketOf = (id) => Number(BigInt.asUintN(32, BigInt.asUintN(32, BigInt(id)) * 2654435761n) >> 22n);
// A user's cached sessions ('ss') and badge inputs ('bm') share the slot
// of the user's counters (key.h), so a badge poll is one node's.
export const userCache = (uid, what) => `{c${bucketOf(uid)}}:u${uid}:${what}`;
// The badges' global part: {g}:badge on one Redis; on a cluster, a copy
// in each sixteenth of the slot space (key.c), one on every master.
export const BADGE_GLOBALS = ['{g}:badge', ...['g42', 'g2', 'g20', 'g11', 'g43',
  'g3', 'g21', 'g10', 'g40', 'g0', 'g22', 'g13', 'g41', 'g1', 'g23', 'g12'].map((t) => `{${t}}:badge`)];
export function redisName(family, key, owner) {
  const [a, b] = String(key).split(':');
  const f = {
    user_posts: ['u', 'posts'], user_followers: ['u', 'followers'],
    user_following: ['u', 'following'], user_likes: ['u', 'likes'],
    user_unread: ['u', 'unread'],
    post_likes: ['p', 'likes'], post_comments: ['p', 'comments'],
    post_reposts: ['p', 'reposts'], post_views: ['p', 'views'],
    topic_posts: ['t', 'posts'],
    user_topic_posts: ['ut', `posts:${b}`], user_topic_rating: ['ut', `rating:${b}`],
  }[family];
  const post = f[0] === 'p';
  if (post && !(Number(owner) > 0)) throw new Error(`redisName(${family}, ${key}): the post's author is needed`);
  const tag = `{c${bucketOf(post ? owner : a)}}`;
  return {
    hash: `${tag}:${f[0]}${a}`, field: f[1],
    pending: `${tag}:pending`, inflight: `${tag}:inflight`,
    pfield: post ? `p${a}@${owner}:${f[1]}` : `${f[0]}${a}:${f[1]}`,
  };
}
// A post's author (the owner redisName needs), and every post's.
export const ownerOf = (stack, post) => Number(stack.sqlite(`SELECT user_id FROM posts WHERE id=${Number(post)}`));
export function postOwners(stack) {
  const m = new Map();
  const text = stack.sqlite('SELECT id, user_id FROM posts');
  for (const line of text ? text.split('\n') : []) {
    const [id, u] = line.split('|');
    m.set(String(id), Number(u));
  }
  return m;
}

// Counters with deltas not yet in SQLite: fields of every pending and
// in-flight hash (one Redis call).
// On a cluster the buckets live on several nodes: HLENs, piped.
export function pendingDeltas(stack) {
  if (clusterNodes(stack.runDir)) {
    const input = Array.from({ length: BUCKETS }, (_, b) => `HLEN {c${b}}:pending\nHLEN {c${b}}:inflight\n`).join('');
    return redisCli(stack.runDir, 'redis.sock', [], { input }).split('\n').filter(Boolean).reduce((a, x) => a + Number(x), 0);
  }
  return Number(stack.redis('EVAL', `local n = 0
for b = 0, ${BUCKETS - 1} do
  n = n + redis.call('HLEN', '{c' .. b .. '}:pending') + redis.call('HLEN', '{c' .. b .. '}:inflight')
end
return n`, '0'));
}

// The lines of a query's answer on the truth (none for an empty one).
export function truthRows(stack, sql) {
  return stack.sqlite(sql).split('\n').filter(Boolean);
}

// A two-column answer as a Map: key (text) -> value (number).
function rows(stack, sql) {
  return new Map(truthRows(stack, sql).map((l) => l.split('|')).map(([k, v]) => [k, Number(v)]));
}

// Compares every family: recount vs counters table vs Redis live values
// (those that are loaded).  Returns a list of mismatches (empty = exact).
export function compareAll(stack) {
  const bad = [];
  const owners = postOwners(stack);
  for (const [fam, sql] of Object.entries(RECOUNT)) {
    const truth = rows(stack, sql);
    const table = rows(stack, `SELECT key, value FROM counters WHERE name='${fam}'`);
    const keys = [...new Set([...truth.keys(), ...table.keys()])];
    if (keys.length === 0) continue;
    // Redis read through one redis-cli pipe a family, three commands a
    // counter, not three processes a counter (thousands after a storm)
    const names = keys.map((k) => redisName(fam, k, owners.get(k)));
    const input = names.map(({ hash, field, pending, inflight, pfield }) =>
      `HGET ${hash} ${field}\nHGET ${pending} ${pfield}\nHGET ${inflight} ${pfield}\n`).join('');
    const out = redisCli(stack.runDir, 'redis.sock', [], { input, maxBuffer: 1 << 28 }).split('\n');
    keys.forEach((k, i) => {
      const t = truth.get(k) ?? 0;
      const c = table.get(k) ?? 0;
      if (t !== c) bad.push(`${fam}[${k}] counters=${c} truth=${t}`);
      const [live, pend, held] = out.slice(3 * i, 3 * i + 3);
      if (live !== '' && Number(live) !== t) bad.push(`${fam}[${k}] redis=${live} truth=${t}`);
      for (const [h, v] of [[names[i].pending, pend], [names[i].inflight, held]]) {
        if (v !== '' && Number(v) !== 0) bad.push(`${fam}[${k}] ${h}=${v} after flush`);
      }
    });
  }
  // the notification groups' stored size and unread (social/notify.h)
  const groups = stack.sqlite('SELECT g.id, g.size, g.unread, (SELECT COUNT(*) FROM notifications n ' +
    'WHERE n.group_id = g.id), (SELECT COUNT(*) FROM notifications n WHERE n.group_id = g.id ' +
    'AND n.is_read = 0) FROM note_groups g');
  for (const line of groups ? groups.split('\n') : []) {
    const [id, size, unread, rs, ru] = line.split('|').map(Number);
    if (size !== rs || unread !== ru) bad.push(`note_groups[${id}] size=${size}/${rs} unread=${unread}/${ru}`);
  }
  const orphans = Number(stack.sqlite('SELECT COUNT(*) FROM notifications n WHERE NOT EXISTS ' +
    '(SELECT 1 FROM note_groups g WHERE g.id = n.group_id)'));
  if (orphans) bad.push(`${orphans} notifications in no group`);
  if (bad.length) {
    stack.keepRunDir = true;	// stop() leaves the run directory to look at
    bad.push(...mismatchClues(stack, bad));
  }
  return bad;
}

// What a wrong count needs looked at first, listed after the mismatches
// (a rare one is seen once, on another run): a post's likes rows, and
// the requests that named the post, from nginx's access log.
function mismatchClues(stack, bad) {
  const out = [];
  const posts = new Set(bad.map((b) => b.match(/^post_\w+\[(\d+)\]/)?.[1]).filter(Boolean));
  let log = [];
  try { log = fs.readFileSync(path.join(stack.runDir, 'logs', 'access.log'), 'utf8').split('\n'); } catch { /* none */ }
  for (const p of [...posts].slice(0, 3)) {
    out.push(`clue: post ${p} likes (user|created_at|note_id): ${stack.sqlite(`SELECT user_id, created_at, note_id FROM likes WHERE post_id=${p}`).replace(/\n/g, ', ')}`);
    for (const l of log.filter((x) => x.includes(`/posts/${p}/`)).slice(-12)) out.push(`clue: ${l}`);
  }
  out.push(`clue: outbox rows ${stack.sqlite('SELECT COUNT(*) FROM counter_outbox')}, backlog ${stack.sqlite('SELECT COUNT(*) FROM counter_backlog')}, run dir ${stack.runDir}`);
  return out;
}

// The data-counter values of a page, as { "name|attr": value }.
export function pageCounters(html) {
  const out = {};
  // A post's counters are named by their <article data-post-id>; any
  // other counter by its own data-login / data-topic (or nothing).
  const re = /<article data-post-id="(\d+)"|<\/article>|data-counter="([^"]+)"(?: data-[a-z-]+="([^"]*)")?>(-?\d+)</g;
  let post = null;
  for (const m of html.matchAll(re)) {
    if (m[1] !== undefined) post = m[1];
    else if (m[2] === undefined) post = null;
    else out[`${m[2]}|${m[3] ?? post ?? ''}`] = Number(m[4]);
  }
  return out;
}

// Reconciliation, so a test can compare before any repair: waits until
// the run a fresh stack's worker starts (it finds Redis without its
// generation key) exists and no run is queued or running, and returns
// how many runs exist.
export async function quietRuns(stack, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    // one statement, one snapshot: read apart, the first run could be
    // queued between the two reads and pass as finished
    const [busy, first] = stack.sqlite("SELECT (SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued','running')), "
      + "(SELECT COUNT(*) FROM reconcile_runs WHERE reason='redis-empty')").split('|').map(Number);
    if (busy === 0 && first > 0) return Number(stack.sqlite('SELECT COUNT(*) FROM reconcile_runs'));
    if (Date.now() > end) throw new Error('a reconciliation is still running');
    await new Promise((r) => setTimeout(r, 100));
  }
}

// Fault points (shared/base/fault.h): a stack started with
// TALLY_FAULT="NAME:ACTION:TIMES" fires NAME while $RUN_DIR/faults/NAME
// holds fewer than TIMES bytes.  disarm() fills the file (nothing fires),
// arm() empties it (TIMES firings from now), fired() says how many.
const faultFile = (stack, name) => path.join(stack.runDir, 'faults', name);
// The stack's processes append to these files: run as root, they are
// the stack's own user's (handlers/run_user.h), as RUN_DIR is.
const own = (stack, p) => {
  const st = fs.statSync(stack.runDir);
  if (process.getuid?.() === 0 && st.uid !== 0) fs.chownSync(p, st.uid, st.gid);
};
export const faults = {
  disarm(stack, name, times) {
    fs.mkdirSync(path.join(stack.runDir, 'faults'), { recursive: true });
    own(stack, path.join(stack.runDir, 'faults'));
    fs.writeFileSync(faultFile(stack, name), 'x'.repeat(times));
    own(stack, faultFile(stack, name));
  },
  arm(stack, name) {
    fs.writeFileSync(faultFile(stack, name), '');
    own(stack, faultFile(stack, name));
  },
  fired(stack, name) { try { return fs.statSync(faultFile(stack, name)).size; } catch { return 0; } },
};

// base/clock.h clock_spread(): the age, within [max / 2, max], past which
// a copy written at `at` (ms) is no longer trusted (the same mix of `at`)
export function clockSpread(max, at) {
  const M = (x) => BigInt.asUintN(64, x);
  if (max <= 1) return max;
  let h = M(BigInt(at) + 0x9e3779b97f4a7c15n);
  h = M((h ^ (h >> 30n)) * 0xbf58476d1ce4e5b9n);
  h = M((h ^ (h >> 27n)) * 0x94d049bb133111ebn);
  h ^= h >> 31n;
  return max - Number(h % BigInt(Math.floor(max / 2) + 1));
}
