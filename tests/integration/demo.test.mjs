// demo.test.mjs -- the demo data of a fresh `make run` (DEMO on): every
// badge shows something on alice's first login, the data is in time order
// with the rows the actions write, and a reconciliation finds nothing
// wrong.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';

import { startStack, Client } from '../lib/stack.mjs';
import { quietRuns } from '../lib/counts.mjs';

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

test('a reconciliation of the demo data finds 0 wrong', async () => {
  await quietRuns(stack);
  const out = stack.tallyctl('reconcile');
  assert.match(out, /: 0 counters wrong/);
});
