// demo.test.mjs -- the demo data of a fresh `make run` (DEMO on): every
// badge shows something on alice's first login, the data is in time order
// with the rows the actions write, posts were viewed through the view path
// in proportion to their likes and comments, nobody liked or reposted
// their own post, alice's feed is mostly the people she follows, and a
// reconciliation finds nothing wrong.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { startStack, Client } from '../lib/stack.mjs';
import { quietRuns, pageCounters, bucketOf } from '../lib/counts.mjs';
import { postIds } from '../lib/social.mjs';

let stack;
before(async () => { stack = await startStack({ demo: '1' }); });
after(async () => { await stack?.stop(); });

const num = (sql) => Number(stack.sqlite(sql));

test('alice\'s first login: notifications, notices, followed posts and the red dot', async () => {
  const c = new Client(stack.base);
  assert.equal((await c.login('alice', 'password')).status, 303);
  const b = JSON.parse((await c.get('/badges.json')).text);
  assert.ok(b.notifications > 0, JSON.stringify(b));
  assert.ok(b.notices > 0, JSON.stringify(b));
  assert.ok(b.followed > 0, JSON.stringify(b));
  assert.equal(b.red_dot, true);
  // the lists behind them agree
  const notes = await c.get('/notifications', { headers: { 'sec-fetch-site': 'cross-site' } });
  // the badge counts notifications, the list groups them: the sum of
  // its items' data-unread is the badge (one page holds the demo's)
  const unread = [...notes.text.matchAll(/data-unread="(\d+)"/g)].reduce((s, m) => s + Number(m[1]), 0);
  assert.equal(unread, b.notifications);
  // a busy last hour, in groups: several likes of one post, several
  // new followers (social/notify.h)
  const items = [...notes.text.matchAll(/data-group-size="(\d+)" data-unread="(\d+)"[^>]*>(.*?)<\/li>/gs)];
  const big = (re) => items.filter((m) => Number(m[1]) >= 3 && Number(m[2]) >= 3 && re.test(m[3]));
  assert.ok(big(/ liked your post/).length >= 1, 'a group of several unread likes');
  assert.ok(big(/ followed you/).length >= 1, 'a group of several new followers');
  const fol = await c.get('/followed', { headers: { 'sec-fetch-site': 'cross-site' } });
  const sum = [...fol.text.matchAll(/data-counter="author-unread" data-login="[^"]+">(\d+)</g)]
    .reduce((s, m) => s + Number(m[1]), 0);
  assert.equal(sum, b.followed);
});

test('demo rows: nothing before its cause, nothing on drafts, real names, notifications of every kind', () => {
  for (const t of ['likes', 'comments', 'reposts']) {
    assert.equal(num(`select count(*) from ${t} x join posts p on p.id = x.post_id
      where x.created_at <= p.published_at or p.status <> 1`), 0, `${t} before their post or on a draft`);
  }
  assert.equal(num(`select count(*) from users where name like 'User %'`), 0);
  // every demo account has its own salt: no two password hashes alike
  assert.equal(num('select count(distinct pwhash) from users'), num('select count(*) from users'));
  assert.equal(num(`select count(*) from users where login = 'alice' and name like 'Alice %'`), 1);
  for (const k of ['like', 'comment', 'repost', 'follow']) {
    assert.ok(num(`select count(*) from notifications where kind = '${k}'`) > 0, k);
  }
  // one notification per like of another's post, linked by note_id
  assert.equal(num(`select count(*) from likes l join posts p on p.id = l.post_id
    where l.user_id <> p.user_id and (l.note_id is null or not exists
      (select 1 from notifications n where n.id = l.note_id and n.kind = 'like'
        and n.actor_id = l.user_id and n.post_id = l.post_id))`), 0);
  assert.equal(num(`select count(*) from notifications where actor_id = user_id`), 0);
  // ids follow time: a newer notification has a larger id
  assert.equal(num(`select count(*) from notifications a join notifications b
    on b.id = a.id + 1 where b.created_at < a.created_at`), 0);
});

// Views have no rows: the counter is their record (social/posting.h).
// The seed counts them as page views do, so every post somebody liked
// shows views, at least as many as its likes and comments.
test('demo views: every liked post was viewed, more often than liked and commented', async () => {
  // what the pages show: the busiest authors' first pages, read
  // anonymously (a list counts no view)
  const anon = new Client(stack.base);
  const authors = stack.sqlite(`select u.login from users u join posts p on p.user_id = u.id
    where p.status = 1 group by u.id order by count(*) desc limit 4`).split('\n');
  let shown = 0;
  for (const login of authors) {
    const page = await anon.get(`/u/${login}`);
    assert.equal(page.status, 200, login);
    const n = pageCounters(page.text);
    for (const id of postIds(page.text)) {
      const likes = n[`post-likes|${id}`], comments = n[`post-comments|${id}`], views = n[`post-views|${id}`];
      assert.ok(likes !== undefined && views !== undefined, `post ${id}: counts on ${login}'s page`);
      if (likes > 0) {
        shown++;
        assert.ok(views >= likes + comments && views > 0, `post ${id}: ${views} views, ${likes} likes, ${comments} comments`);
      }
    }
  }
  assert.ok(shown >= 10, `${shown} liked posts on the pages`);
  // and in SQL, once flushed: every published post with likes
  stack.tallyctl('flush');
  const short = stack.sqlite(`select p.id || ': ' || coalesce(v.value, 0) || ' views, ' || p.n || ' likes and comments'
    from (select p.id, (select count(*) from likes l where l.post_id = p.id)
            + (select count(*) from comments c where c.post_id = p.id and c.is_deleted = 0) n,
            (select count(*) from likes l where l.post_id = p.id) likes
          from posts p where p.status = 1) p
    left join counters v on v.name = 'post_views' and v.key = cast(p.id as text)
    where p.likes > 0 and coalesce(v.value, 0) < p.n`);
  assert.equal(short, '', 'posts with likes and too few views');
  assert.ok(num(`select sum(value) from counters where name = 'post_views'`)
    >= 2 * num('select (select count(*) from likes) + (select count(*) from comments)'));
  // through the view path: anonymous viewers' keys, each address within
  // its budget (VIEW_ADDR_MAX, social/posting.h)
  const used = Number(stack.redis('GET', '{va198.18.0.0}'));
  assert.ok(used > 0 && used <= 100, `198.18.0.0 viewed ${used} posts`);
  const first = num(`select min(p.id) from posts p where p.status = 1`);
  const owner = num(`select user_id from posts where id = ${first}`);
  assert.equal(stack.redis('EXISTS', `{c${bucketOf(owner)}}:v${first}:a198.18.0.0`), '1');
});

test('demo rows: nobody likes or reposts their own post', () => {
  for (const t of ['likes', 'reposts']) {
    assert.equal(num(`select count(*) from ${t} x join posts p on p.id = x.post_id
      where x.user_id = p.user_id`), 0, `${t} of one's own post`);
    assert.ok(num(`select count(*) from ${t}`) > 0, t);
  }
});

test('alice\'s feed is mostly the people she follows', async () => {
  const c = new Client(stack.base);
  assert.equal((await c.login('alice', 'password')).status, 303);
  const feed = await c.get('/feed', { headers: { 'sec-fetch-site': 'cross-site' } });
  assert.equal(feed.status, 200);
  const ids = postIds(feed.text);
  assert.ok(ids.length >= 10, `${ids.length} posts on alice's first page`);
  const own = num(`select count(*) from posts p join users u on u.id = p.user_id
    where u.login = 'alice' and p.id in (${ids.join(',')})`);
  assert.ok((ids.length - own) / ids.length >= 0.75, `${own} of ${ids.length} are alice's own`);
  assert.ok(num(`select count(*) from follows f join users u on u.id = f.follower_id
    where u.login = 'alice'`) >= 10, 'alice follows at least ten people');
});

test('a reconciliation of the demo data finds 0 wrong', async () => {
  await quietRuns(stack);
  const out = stack.tallyctl('reconcile');
  assert.match(out, /: 0 counters wrong/);
});

// The demo's first start killed right after its rows committed (fault
// point seed-rows, as a kill -9 of make run there): its counters were
// never written and its logins were taken, so every later start's seed
// failed ("no new users"), every count read 0 until a reconciliation, and
// the demo's notices and red dot never came.  The next start finishes it.
test('a first start killed after the demo\'s rows committed: the next start finishes the demo', async () => {
  const runDir = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-'));
  let again;
  try {
    await assert.rejects(startStack({ demo: '1', runDir, keep: true, env: { TALLY_FAULT: 'seed-rows:kill:1' } }), /tally-run exited|did not come up/);
    assert.equal(fs.statSync(path.join(runDir, 'faults', 'seed-rows')).size, 1, 'killed at the point');
    again = await startStack({ demo: '1', runDir });
    const n = (sql) => Number(again.sqlite(sql));
    assert.equal(n("SELECT value FROM settings WHERE name = 'demo_seeded'"), 1);
    const alice = n("SELECT id FROM users WHERE login = 'alice'");
    const posts = n(`SELECT COUNT(*) FROM posts WHERE user_id = ${alice} AND status = 1 AND is_deleted = 0`);
    const followers = n(`SELECT COUNT(*) FROM follows WHERE followee_id = ${alice}`);
    assert.ok(posts > 0 && followers > 0);
    const c = new Client(again.base);
    assert.equal((await c.login('alice', 'password')).status, 303);
    const counts = pageCounters((await c.get('/u/alice')).text);
    assert.equal(counts['posts|alice'], posts, 'alice\'s posts on her profile');
    assert.equal(counts['followers|alice'], followers, 'her followers');
    const b = JSON.parse((await c.get('/badges.json')).text);
    assert.equal(b.notices, 2, 'the demo\'s notices, once');
    assert.equal(b.red_dot, true);
  } finally {
    await again?.stop();
    fs.rmSync(runDir, { recursive: true, force: true });
  }
});
