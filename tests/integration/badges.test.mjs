// badges.test.mjs -- notifications, system notices, the red dot, the
// followed-author unread count and the badges that show them
// (shared/social/notify.h, shared/social/badges.h, handlers/notify.c).
// One real stack; every unread count is checked against its recount from
// the truth rows, the counters table and Redis after a flush.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, sleep, waitFor, onCluster, onPostgres, holdWriterLock } from '../lib/stack.mjs';
import { handlerCost, stmtRuns, stmtsBetween } from '../lib/cost.mjs';
import { BADGE_GLOBALS, clockSpread, compareAll, pageCounters, redisName, userCache } from '../lib/counts.mjs';

let stack;
let admin;
const crowd = [];	// 20 users that act on others (crowd0 .. crowd19)

const q = (sql) => Number(stack.sqlite(sql) || 0);
const uid = (login) => q(`SELECT id FROM users WHERE login='${login}'`);
const unreadTruth = (id) => q(`SELECT COUNT(*) FROM notifications WHERE user_id=${id} AND is_read=0`);
const BADGE_NAMES = ['unread-notifications', 'unread-notices', 'unread-followed', 'red-dot'];

// A signed-up, logged-in client whose csrf belongs to its session.
async function user(login) {
  const c = new Client(stack.base);
  const r = await c.signup(login);
  assert.equal(r.status, 303, `signup ${login}: ${r.status}`);
  await c.get('/feed');
  c.name = login;
  c.id = uid(login);
  assert.ok(c.id > 0, login);
  return c;
}

async function badges(c) {
  const r = await c.get('/badges.json');
  assert.equal(r.status, 200, `badges.json: ${r.status}`);
  return JSON.parse(r.text);
}

// The four badge values of a page's header or of the /badges fragment.
function badgeMarks(html) {
  const c = pageCounters(html);
  const out = {};
  for (const n of BADGE_NAMES) out[n] = c[`${n}|`];
  return out;
}

async function publish(c, body = 'a post', pub = '1') {
  const r = await c.post('/posts', { body, topic: 'general', publish: pub });
  assert.equal(r.status, 303, `publish: ${r.status}`);
  return Number(r.location.split('/').pop());
}

async function ok303(p) {
  const r = await p;
  assert.equal(r.status, 303, `expected 303, got ${r.status}: ${r.text.slice(0, 200)}`);
  return r;
}

// After a flush: badges.json notifications == recount == counters table
// == Redis live value, and nothing pending.  Returns the value.
async function assertUnreadExact(c, expected, msg = '') {
  await badges(c);	// loads the live value into Redis if missing
  stack.tallyctl('flush');
  const truth = unreadTruth(c.id);
  const b = await badges(c);
  const table = q(`SELECT value FROM counters WHERE name='user_unread' AND key='${c.id}'`);
  const n = redisName('user_unread', c.id);
  const live = stack.redis('HGET', n.hash, n.field);
  const pend = stack.redis('HGET', n.pending, n.pfield);
  const where = `${c.name} ${msg}`;
  if (expected !== undefined) assert.equal(truth, expected, `recount ${where}`);
  assert.equal(b.notifications, truth, `badges.json vs recount ${where}`);
  assert.equal(table, truth, `counters table vs recount ${where}`);
  assert.equal(live, String(truth), `redis vs recount ${where}`);
  assert.ok(pend === '' || Number(pend) === 0, `pending ${pend} after flush ${where}`);
  return truth;
}

before(async () => {
  stack = await startStack({ env: { TALLY_FAULT_DELAY_MS: '0' } });
  admin = new Client(stack.base);
  const r = await admin.login('admin', 'admin-pass-1');
  assert.equal(r.status, 303);
  await admin.get('/admin');
  admin.name = 'admin';
  admin.id = uid('admin');
  for (let i = 0; i < 20; i++) crowd.push(await user(`crowd${i}`));
});

after(async () => { await stack?.stop(); });

test('like, comment, repost and follow notify the recipient, never oneself; undoing withdraws', async () => {
  const a = await user('nauthor');
  const b = await user('nactor');
  const p = await publish(a, 'hello');
  // one's own actions notify nobody
  await ok303(a.post(`/posts/${p}/like`));
  await ok303(a.post(`/posts/${p}/repost`));
  await ok303(a.post(`/posts/${p}/comments`, { body: 'me myself' }));
  assert.equal((await a.post('/follow/nauthor')).status, 400);
  assert.equal(q('SELECT COUNT(*) FROM notifications'), 0);
  assert.equal((await badges(a)).notifications, 0);

  // another user's: one each, to the author only, twice is still once
  for (let k = 0; k < 2; k++) {
    await ok303(b.post(`/posts/${p}/like`));
    await ok303(b.post(`/posts/${p}/repost`));
    await ok303(b.post('/follow/nauthor'));
  }
  await ok303(b.post(`/posts/${p}/comments`, { body: 'nice' }));
  const rows = stack.sqlite(`SELECT kind, actor_id, coalesce(post_id, 0), is_read FROM notifications WHERE user_id=${a.id} ORDER BY id`);
  assert.deepEqual(rows.split('\n'), [
    `like|${b.id}|${p}|0`, `repost|${b.id}|${p}|0`, `follow|${b.id}|0|0`, `comment|${b.id}|${p}|0`,
  ]);
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE user_id<>${a.id}`), 0);
  assert.equal((await badges(b)).notifications, 0);
  await assertUnreadExact(a, 4);
  const feed = await a.get('/feed');
  assert.equal(badgeMarks(feed.text)['unread-notifications'], 4);

  // unlike, unfollow and comment delete withdraw theirs (repost stays)
  const cid = q(`SELECT id FROM comments WHERE post_id=${p} AND user_id=${b.id}`);
  await ok303(b.post(`/posts/${p}/unlike`));
  await ok303(b.post('/unfollow/nauthor'));
  await ok303(b.post(`/comments/${cid}/delete`));
  assert.equal(stack.sqlite(`SELECT kind FROM notifications WHERE user_id=${a.id}`), 'repost');
  await assertUnreadExact(a, 1, 'after withdrawals');

  // withdrawing a notification that was already read: the row goes, the
  // unread count does not move
  await ok303(b.post(`/posts/${p}/like`));
  await ok303(b.post('/follow/nauthor'));
  await assertUnreadExact(a, 3);
  const likeNote = q(`SELECT id FROM notifications WHERE user_id=${a.id} AND kind='like'`);
  await a.get('/feed');	// a form token; /notifications would mark the list seen
  await ok303(a.post(`/notifications/${likeNote}/read`));
  await assertUnreadExact(a, 2);
  await ok303(b.post(`/posts/${p}/unlike`));
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE user_id=${a.id} AND kind='like'`), 0);
  await assertUnreadExact(a, 2, 'after withdrawing a read one');
  // an admin deleting b's comment withdraws it too
  await ok303(b.post(`/posts/${p}/comments`, { body: 'again' }));
  await assertUnreadExact(a, 3);
  const cid2 = q(`SELECT max(id) FROM comments WHERE post_id=${p} AND user_id=${b.id}`);
  await admin.get('/admin');
  await ok303(admin.post(`/comments/${cid2}/delete`));
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE user_id=${a.id} AND kind='comment'`), 0);
  await assertUnreadExact(a, 2, 'after an admin comment delete');
});

test("an unlike withdraws its like's own notification, by id; an id reused after its owner deleted it is left alone", async () => {
  // Schema 9: a like keeps its notification's id (likes.note_id).
  const a = await user('nidauthor');
  const b = await user('nidliker');
  const c = await user('nidfollow');
  const p = await publish(a, 'ids');
  await ok303(b.post(`/posts/${p}/like`));
  const n1 = q(`SELECT id FROM notifications WHERE user_id=${a.id} AND kind='like' AND actor_id=${b.id}`);
  assert.ok(n1 > 0);
  assert.equal(q(`SELECT note_id FROM likes WHERE post_id=${p} AND user_id=${b.id}`), n1);
  await assertUnreadExact(a, 1);
  // the owner deletes it; the newest row is gone, so SQLite hands its id
  // to the next notification: c's follow
  assert.equal(q('SELECT MAX(id) FROM notifications'), n1, 'the like is the newest notification');
  await a.get('/feed');	// a form token; /notifications would mark the list seen
  await ok303(a.post(`/notifications/${n1}/delete`));
  await ok303(c.post('/follow/nidauthor'));
  // (PostgreSQL's identity columns never hand an id out twice: there the
  // follow has a new id, and the rest must hold all the same.)
  if (!onPostgres()) {
    assert.equal(q(`SELECT id FROM notifications WHERE user_id=${a.id} AND kind='follow' AND actor_id=${c.id}`), n1,
      'the follow took the deleted like notification\'s id');
  }
  await assertUnreadExact(a, 1);
  // b's unlike finds no notification of its own: the follow stays
  await ok303(b.post(`/posts/${p}/unlike`));
  assert.equal(stack.sqlite(`SELECT kind || '|' || actor_id FROM notifications WHERE user_id=${a.id}`), `follow|${c.id}`);
  await assertUnreadExact(a, 1, 'the unlike withdrew nothing');
  // a like again makes a fresh one, and its unlike withdraws exactly that
  await ok303(b.post(`/posts/${p}/like`));
  const n2 = q(`SELECT note_id FROM likes WHERE post_id=${p} AND user_id=${b.id}`);
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE id=${n2} AND kind = 'like' AND actor_id = ${b.id}`), 1);
  await assertUnreadExact(a, 2);
  await ok303(b.post(`/posts/${p}/unlike`));
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE id=${n2}`), 0);
  await assertUnreadExact(a, 1);
});

test('16 concurrent reads of one unread notification decrement the count once', async () => {
  const r = await user('nreader');
  const p1 = await publish(r, 'one');
  const p2 = await publish(r, 'two');
  await ok303(crowd[0].post(`/posts/${p1}/like`));
  await ok303(crowd[0].post(`/posts/${p2}/like`));
  await ok303(crowd[0].post('/follow/nreader'));
  await assertUnreadExact(r, 3);
  const id = q(`SELECT min(id) FROM notifications WHERE user_id=${r.id}`);
  await r.get('/feed');	// a form token; /notifications would mark the list seen
  const res = await Promise.all(Array.from({ length: 16 }, () => r.post(`/notifications/${id}/read`)));
  for (const x of res) assert.equal(x.status, 303);
  assert.equal(q(`SELECT is_read FROM notifications WHERE id=${id}`), 1);
  await assertUnreadExact(r, 2, 'after 16 parallel reads');
  // and again, with 16 separate connections of the same session racing
  // on the next one
  const id2 = q(`SELECT min(id) FROM notifications WHERE user_id=${r.id} AND is_read=0`);
  const clones = Array.from({ length: 16 }, () => {
    const c = new Client(stack.base);
    c.jar = r.jar; c.csrf = r.csrf;
    return c;
  });
  const res2 = await Promise.all(clones.map((c) => c.post(`/notifications/${id2}/read`)));
  for (const x of res2) assert.equal(x.status, 303);
  await assertUnreadExact(r, 1, 'after 16 more parallel reads');
});

test('deleting a read vs an unread notification; repeats change nothing; others get 404', async () => {
  const r = await user('ndel');
  // three posts, a like each: three groups of one (a group is read and
  // deleted whole: groups.test.mjs)
  for (let i = 1; i <= 3; i++) await ok303(crowd[i].post(`/posts/${await publish(r, `del ${i}`)}/like`));
  const [n1, n2, n3] = stack.sqlite(`SELECT id FROM notifications WHERE user_id=${r.id} ORDER BY id`).split('\n').map(Number);
  await r.get('/feed');	// a form token; /notifications would mark the list seen
  await ok303(r.post(`/notifications/${n1}/read`));
  await assertUnreadExact(r, 2);
  // a read one: the row goes, the count stays
  await ok303(r.post(`/notifications/${n1}/delete`));
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE id=${n1}`), 0);
  await assertUnreadExact(r, 2, 'after deleting a read one');
  // an unread one: the count drops by one
  await ok303(r.post(`/notifications/${n2}/delete`));
  await assertUnreadExact(r, 1, 'after deleting an unread one');
  // repeats change nothing (a deleted one is gone: 404, like any missing id)
  assert.equal((await r.post(`/notifications/${n2}/delete`)).status, 404);
  assert.equal((await r.post(`/notifications/${n1}/delete`)).status, 404);
  await ok303(r.post(`/notifications/${n3}/read`));
  await assertUnreadExact(r, 0);
  await ok303(r.post(`/notifications/${n3}/read`));
  await ok303(r.post('/notifications/read-all'));
  await assertUnreadExact(r, 0, 'after repeats');
});

// "Mark all read" marks what the page showed: its form carries the
// newest id page 1 showed, and one that arrived after the page was built
// stays unread (it read everything, unseen ones too).  Without the field
// (an older page, a script) every one is read, as before.
test('"Mark all read" reads up to what the page showed; one that arrived after it stays unread', async () => {
  const r = await user('nupto');
  const p1 = await publish(r, 'upto one');
  const p2 = await publish(r, 'upto two');
  await ok303(crowd[5].post(`/posts/${p1}/like`));
  const page = await r.get('/notifications');
  assert.equal(page.status, 200);
  const upto = Number((page.text.match(/name="upto" value="(\d+)"/) ?? [])[1]);
  assert.equal(upto, Number(q(`SELECT max(id) FROM notifications WHERE user_id=${r.id}`)), 'the form carries the newest shown');
  await assertUnreadExact(r, 0, 'opening the list read it');
  // after the page was built: a like of the other post
  await ok303(crowd[6].post(`/posts/${p2}/like`));
  await assertUnreadExact(r, 1);
  await ok303(r.post('/notifications/read-all', { upto: String(upto) }));
  await assertUnreadExact(r, 1, 'the one the page never showed stays unread');
  assert.equal((await r.post('/notifications/read-all', { upto: 'x' })).status, 400);
  await ok303(r.post('/notifications/read-all'));
  await assertUnreadExact(r, 0, 'without upto: every one');
});

// SQLite gives a deleted newest id to the next notification: a like the
// page showed, withdrawn, and a comment after it took its id, which the
// form's upto named -- "Mark all read" read the comment no page had
// shown.  The form carries the latest time shown too (at).
test('"Mark all read" leaves unread one that took a shown id again', async () => {
  const r = await user('nretaken');
  const p = await publish(r, 'reuse one');
  await ok303(crowd[7].post(`/posts/${p}/like`));
  const page = await r.get('/notifications');
  const upto = Number((page.text.match(/name="upto" value="(\d+)"/) ?? [])[1]);
  const at = Number((page.text.match(/name="at" value="(\d+)"/) ?? [])[1]);
  assert.ok(upto > 0 && at > 0, 'the form carries the newest id and time shown');
  await assertUnreadExact(r, 0, 'opening the list read it');
  await ok303(crowd[7].post(`/posts/${p}/unlike`));	// the like's notification withdrawn
  await new Promise((res) => setTimeout(res, 5));
  await ok303(crowd[8].post(`/posts/${p}/comments`, { body: 'after the page' }));
  const id = Number(q(`SELECT max(id) FROM notifications WHERE user_id=${r.id}`));
  if (!onPostgres()) assert.equal(id, upto, 'the comment took the shown id again');
  await assertUnreadExact(r, 1);
  await ok303(r.post('/notifications/read-all', { upto: String(upto), at: String(at) }));
  await assertUnreadExact(r, 1, 'the comment no page showed stays unread');
  assert.equal((await r.post('/notifications/read-all', { upto: String(upto), at: 'x' })).status, 400);
  // a snapshot (PostgreSQL's page gives one) the server would refuse
  assert.equal((await r.post('/notifications/read-all', { upto: String(upto), at: String(at), snap: '9:5:' })).status, 400);
  assert.equal(/name="snap"/.test(page.text), onPostgres(), 'the page\'s snapshot on PostgreSQL alone');
});

// SQLite gives a deleted newest id to the next notification: the form of
// an item (its newest notification's id) whose notification was
// withdrawn since acted on the newcomer's group, never shown.  The form
// now says the notification's time, and another under that id is not it.
test('a notification form whose notification was withdrawn acts on none that took its id', async () => {
  const r = await user('nreuse');
  const p = await publish(r, 'reuse');
  await ok303(crowd[7].post(`/posts/${p}/like`));
  const page = await r.get('/notifications');
  const m = page.text.match(/action="\/notifications\/(\d+)\/delete"><input type="hidden" name="at" value="(\d+)"/);
  assert.ok(m, 'the delete form carries the notification\'s time');
  const [id, at] = [Number(m[1]), m[2]];
  await ok303(crowd[7].post(`/posts/${p}/unlike`));	// withdrawn
  await ok303(crowd[8].post('/follow/nreuse'));		// a newcomer
  const follow = Number(q(`SELECT id FROM notifications WHERE user_id=${r.id} AND kind='follow'`));
  if (!onPostgres()) assert.equal(follow, id, 'SQLite gave the id again');
  assert.equal((await r.post(`/notifications/${id}/delete`, { at })).status, 404);
  assert.equal((await r.post(`/notifications/${id}/read`, { at })).status, 404);
  assert.equal(Number(q(`SELECT COUNT(*) FROM notifications WHERE id=${follow} AND is_read=0`)), 1, 'the follow stays, unread');
  await assertUnreadExact(r, 1);
});

test('another user cannot read or delete my notification and nothing changes', async () => {
  const r = await user('nmine');
  const other = await user('nother');
  const p = await publish(r, 'mine');
  await ok303(crowd[4].post(`/posts/${p}/like`));
  const n = q(`SELECT id FROM notifications WHERE user_id=${r.id}`);
  await assertUnreadExact(r, 1);
  await other.get('/feed');	// a form token; /notifications would mark the list seen
  assert.equal((await other.post(`/notifications/${n}/read`)).status, 404, 'read of another user\'s notification');
  assert.equal(q(`SELECT is_read FROM notifications WHERE id=${n}`), 0);
  await assertUnreadExact(r, 1, 'after another user\'s read');
  await assertUnreadExact(other, 0);
  const del = await other.post(`/notifications/${n}/delete`);
  assert.ok([303, 404].includes(del.status), `delete by another user: ${del.status}`);
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE id=${n} AND is_read=0`), 1, 'the row survives another user\'s delete');
  await assertUnreadExact(r, 1, 'after another user\'s delete');
  assert.equal((await r.get('/notifications')).text.match(/data-unread="1"/g)?.length, 1);
});

// Regression: page_note_delete once skipped the owner check that
// page_note_read does, answering 303 to another user's delete.
test('delete of another user\'s notification answers 404', async () => {
  const r = await user('nmine2');
  const other = await user('nother2');
  const p = await publish(r, 'mine2');
  await ok303(crowd[4].post(`/posts/${p}/like`));
  const n = q(`SELECT id FROM notifications WHERE user_id=${r.id}`);
  await other.get('/feed');	// a form token; /notifications would mark the list seen
  assert.equal((await other.post(`/notifications/${n}/delete`)).status, 404);
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE id=${n}`), 1);
  // one's own delete works once; a repeat finds nothing: 404, no change
  await r.get('/feed');	// a form token; /notifications would mark the list seen
  await ok303(r.post(`/notifications/${n}/delete`));
  assert.equal((await r.post(`/notifications/${n}/delete`)).status, 404);
});

test('read-all while 20 clients create and withdraw notifications ends exact', async () => {
  const x = await user('rxuser');
  const posts = [];
  for (let i = 0; i < 4; i++) posts.push(await publish(x, `rx ${i}`));
  await x.get('/feed');	// a form token; /notifications would mark the list seen
  let readAlls = 0;
  const storm = Promise.all(crowd.map(async (c, i) => {
    for (let k = 0; k < 12; k++) {
      const p = posts[(i + k) % posts.length];
      const what = (i * 7 + k * 3) % 6;
      let r;
      if (what === 0) r = await c.post('/follow/rxuser');
      else if (what === 1 && k > 6) r = await c.post('/unfollow/rxuser');
      else if (what === 2 && k > 4) r = await c.post(`/posts/${p}/unlike`);
      else if (what === 3) r = await c.post(`/posts/${p}/repost`);
      else if (what === 4) r = await c.post(`/posts/${p}/comments`, { body: `c${k}` });
      else r = await c.post(`/posts/${p}/like`);
      assert.equal(r.status, 303, `storm action ${what}: ${r.status}`);
    }
  }));
  let stormDone = false;
  storm.finally(() => { stormDone = true; }).catch(() => {});
  // read-all, two at a time, for as long as the storm lasts (10 rounds at least)
  const reader = (async () => {
    for (let k = 0; k < 10 || !stormDone; k++) {
      const rs = await Promise.all([x.post('/notifications/read-all'), x.post('/notifications/read-all')]);
      for (const r of rs) assert.equal(r.status, 303);
      readAlls += 2;
      await sleep(10);
    }
  })();
  await Promise.all([storm, reader]);
  assert.ok(readAlls >= 20);
  assert.ok(q(`SELECT COUNT(*) FROM notifications WHERE user_id=${x.id}`) > 20, 'the storm created notifications');
  await assertUnreadExact(x, undefined, 'after the storm');
  assert.deepEqual(compareAll(stack), []);
  await ok303(x.post('/notifications/read-all'));
  await assertUnreadExact(x, 0, 'after a final read-all');
  assert.deepEqual(compareAll(stack), []);
});

test('/notifications: newest first, data-unread on unread ones, 30 items a page', async () => {
  // 35 posts, each liked by one of the crowd: 35 groups of one
  const r = await user('npage');
  const posts = [];
  for (let i = 0; i < 35; i++) posts.push(await publish(r, `p${i}`));
  for (let i = 0; i < 35; i++) await ok303(crowd[i % crowd.length].post(`/posts/${posts[i]}/like`));
  const ids = stack.sqlite(`SELECT id FROM notifications WHERE user_id=${r.id} ORDER BY id DESC`).split('\n').map(Number);
  assert.equal(ids.length, 35);
  await r.get('/feed');	// a form token; /notifications would mark the list seen
  for (const id of [ids[0], ids[7], ids[33]]) await ok303(r.post(`/notifications/${id}/read`));
  await assertUnreadExact(r, 32);
  const parse = (html) => [...html.matchAll(/<li data-notification-id="(\d+)" data-group-size="1" data-unread="([01])"/g)]
    .map((m) => [Number(m[1]), m[2]]);
  const readSet = new Set([ids[0], ids[7], ids[33]]);
  const expect = (list) => list.map((id) => [id, readSet.has(id) ? '0' : '1']);
  // page 2 first: only page 1 marks the list seen
  const page2 = await r.get('/notifications?page=2');
  assert.equal(page2.status, 200);
  assert.deepEqual(parse(page2.text), expect(ids.slice(30)));
  await assertUnreadExact(r, 32, 'page 2 marks nothing');
  // a link from another site shows the page and moves nothing
  const cross = await r.get('/notifications', { headers: { 'sec-fetch-site': 'cross-site' } });
  assert.deepEqual(parse(cross.text), expect(ids.slice(0, 30)));
  await assertUnreadExact(r, 32, 'a cross-site GET marks nothing');
  // nor does the browser's prerender of a page the user may never open
  // (Chrome's address bar: Sec-Fetch-Site none)
  const pre = await r.get('/notifications', { headers: { 'sec-fetch-site': 'none', 'sec-purpose': 'prefetch;prerender' } });
  assert.equal(pre.status, 200);
  await assertUnreadExact(r, 32, 'a prerender marks nothing');
  // nor a HEAD: it asks what the page is like and shows nobody anything
  assert.equal((await r.req('HEAD', '/notifications')).status, 200);
  await assertUnreadExact(r, 32, 'a HEAD marks nothing');
  // opening page 1 marks every notification up to the newest shown as
  // read: the items unread when it was built still say so, the badge is 0
  const page1 = await r.get('/notifications');
  assert.equal(page1.status, 200);
  assert.deepEqual(parse(page1.text), expect(ids.slice(0, 30)));
  assert.equal(badgeMarks(page1.text)['unread-notifications'], 0);
  await assertUnreadExact(r, 0, 'after opening the list');
  assert.deepEqual(parse((await r.get('/notifications?page=2')).text),
    ids.slice(30).map((id) => [id, '0']));
  const page3 = await r.get('/notifications?page=3');
  assert.deepEqual(parse(page3.text), []);
  // the notifications carry who did what, and name the post by its text
  assert.match(page1.text, /liked your post <a class="note-post" href="\/posts\/\d+">\u201cp\d+\u201d<\/a>/);
  // logged out: to /login
  const anon = await new Client(stack.base).get('/notifications');
  assert.equal(anon.status, 303);
  assert.match(anon.location, /\/login$/);
});

test('system notices: all unread for old and new users without per-user rows; /notices reads them', async () => {
  const N = 3;
  assert.equal(q('SELECT COUNT(*) FROM notices'), 0);
  const old = await user('ntold');
  assert.equal((await badges(old)).notices, 0);
  const markers0 = q('SELECT COUNT(*) FROM markers');
  const users = q('SELECT COUNT(*) FROM users');
  assert.ok(users > 20);
  await admin.get('/admin');
  for (let i = 0; i < N; i++) {
    const r = await ok303(admin.post('/admin/notices', { title: `Notice ${i}`, body: `Body ${i}` }));
    assert.match(r.location, /\/admin$/);
  }
  assert.equal(q('SELECT COUNT(*) FROM notices'), N);
  assert.equal(q('SELECT COUNT(*) FROM markers'), markers0, 'a broadcast writes no per-user rows');
  const late = await user('ntlate');
  assert.equal((await badges(old)).notices, N);
  assert.equal((await badges(late)).notices, N);
  assert.equal((await badges(crowd[5])).notices, N);
  assert.equal(badgeMarks((await late.get('/feed')).text)['unread-notices'], N);
  // a non-admin cannot broadcast
  const denied = await old.post('/admin/notices', { title: 'x', body: 'y' });
  assert.equal(denied.status, 403);
  assert.equal(q('SELECT COUNT(*) FROM notices'), N);
  // opening /notices reads them all; its own header already shows 0
  const page = await old.get('/notices');
  assert.equal(page.status, 200);
  const shown = [...page.text.matchAll(/data-notice-id="(\d+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(shown, stack.sqlite('SELECT id FROM notices ORDER BY id DESC').split('\n').map(Number));
  assert.equal(badgeMarks(page.text)['unread-notices'], 0);
  assert.equal((await badges(old)).notices, 0);
  assert.equal((await badges(late)).notices, N, 'another user is unaffected');
  // a later broadcast: one unread for the reader, N + 1 for the others
  await admin.get('/admin');
  await ok303(admin.post('/admin/notices', { title: 'Later', body: 'one more' }));
  assert.equal(q('SELECT COUNT(*) FROM markers'), markers0 + 1, 'only the /notices visit wrote a marker');
  assert.equal((await badges(old)).notices, 1);
  assert.equal((await badges(late)).notices, N + 1);
  await late.get('/notices');
  assert.equal((await badges(late)).notices, 0);
  assert.equal((await badges(old)).notices, 1);
});

// The notices badge is the newest notice's number less the reader's last
// seen: numbers with gaps counted the gaps.  PostgreSQL's sequence gives
// one to an insert that rolled back (and skips ahead after a crash), so a
// failed notice made the next one count as two for everyone; and two
// notices committing out of the order of their ids hid the earlier from a
// reader who opened /notices between.  A notice now takes the next number
// after the last committed, one at a time.
test('a notice after inserts that rolled back counts one for every reader', async () => {
  const reader = await user('ntgap');
  await reader.get('/notices');
  assert.equal((await badges(reader)).notices, 0);
  // three notices whose insert rolled back: each took a number of the
  // sequence (SQLite's numbers have no sequence to take from)
  if (onPostgres()) for (let i = 0; i < 3; i++) stack.sqlite("SELECT nextval(pg_get_serial_sequence('notices', 'id'))");
  await admin.get('/admin');
  await ok303(admin.post('/admin/notices', { title: 'After the gap', body: 'one' }));
  assert.equal((await badges(reader)).notices, 1);
  assert.equal(badgeMarks((await reader.get('/feed')).text)['unread-notices'], 1);
});

test('red dot: off before any light, lit for old and new users, /news clears it, a new light relights', async () => {
  assert.equal(q("SELECT COUNT(*) FROM markers WHERE kind='news'"), 0);
  const e = await user('rdold');
  assert.equal((await badges(e)).red_dot, false);
  assert.equal(badgeMarks((await e.get('/feed')).text)['red-dot'], 0);
  // non-admins cannot light it
  assert.equal((await e.post('/admin/red-dot')).status, 403);
  assert.equal((await badges(e)).red_dot, false);
  await admin.get('/admin');
  const markers0 = q('SELECT COUNT(*) FROM markers');
  await ok303(admin.post('/admin/red-dot'));
  assert.equal(q('SELECT COUNT(*) FROM markers'), markers0, 'lighting writes no per-user rows');
  assert.equal((await badges(e)).red_dot, true);
  assert.equal(badgeMarks((await e.get('/feed')).text)['red-dot'], 1);
  const late = await user('rdlate');
  assert.equal((await badges(late)).red_dot, true, 'a user created after the light, never on /news');
  const news = await e.get('/news');
  assert.equal(news.status, 200);
  assert.equal(badgeMarks(news.text)['red-dot'], 0, '/news header shows the dot cleared');
  assert.equal((await badges(e)).red_dot, false);
  assert.equal((await badges(late)).red_dot, true);
  await sleep(5);
  await ok303(admin.post('/admin/red-dot'));
  assert.equal((await badges(e)).red_dot, true, 'lit again after the visit');
  assert.equal((await badges(late)).red_dot, true);
  await late.get('/news');
  assert.equal((await badges(late)).red_dot, false);
});

test('markers only move forward', async () => {
  const m = await user('mkuser');
  const a = await user('mkauthor');
  const val = (kind, key = 0) => stack.sqlite(`SELECT value FROM markers WHERE user_id=${m.id} AND kind='${kind}' AND key=${key}`);
  // only a followed author's visit is marked, once they posted since:
  // opening anyone else's profile writes nothing (the followed badge
  // starts after the follow anyway)
  await publish(a, 'before the follow');
  await m.get('/u/mkauthor');
  assert.equal(val('author', a.id), '', 'a visit to an author not followed is not marked');
  await ok303(m.post('/follow/mkauthor'));
  await m.get('/u/mkauthor');
  assert.equal(val('author', a.id), '', 'nothing posted since the follow: nothing to mark');
  await publish(a, 'news from the author');
  // concurrent visits: sampled values never decrease
  const seen = [];
  const visits = Promise.all(Array.from({ length: 12 }, (_, i) => m.get(i % 2 ? '/news' : '/u/mkauthor')));
  for (let i = 0; i < 12; i++) {
    seen.push([Number(val('news') || 0), Number(val('author', a.id) || 0)]);
    await sleep(3);
  }
  await visits;
  seen.push([Number(val('news')), Number(val('author', a.id))]);
  for (let i = 1; i < seen.length; i++) {
    assert.ok(seen[i][0] >= seen[i - 1][0], `news marker went back: ${seen[i - 1][0]} -> ${seen[i][0]}`);
    assert.ok(seen[i][1] >= seen[i - 1][1], `author marker went back: ${seen[i - 1][1]} -> ${seen[i][1]}`);
  }
  // a visit reads the posts up to the newest the page found, not up to
  // the moment after it: a post published while the page was built
  // (after its read, before the marker) stays unread
  assert.equal(Number(val('author', a.id)), Number(stack.sqlite(`SELECT max(published_at) FROM posts WHERE user_id=${a.id}`)),
    'the author marker is the newest post the visit read');
  // a stored value later than the visit is kept (max merge), for each kind
  const future = Date.now() + 86400000;
  stack.sqlite(`UPDATE markers SET value=${future} WHERE user_id=${m.id} AND kind IN ('news','author')`);
  stack.sqlite(`INSERT INTO markers(user_id, kind, key, value) VALUES(${m.id}, 'notices', 0, 1000000)`);
  await m.get('/news');
  await m.get('/u/mkauthor');
  await m.get('/notices');
  assert.equal(val('news'), String(future));
  assert.equal(val('author', a.id), String(future));
  assert.equal(val('notices'), '1000000');
  // an older stored value is moved up to what the visit saw: the light
  // (a /news visit marks the light it read, not its clock), the newest
  // post (the author must have published something after it, or there
  // is nothing to mark read), the newest notice
  await publish(a, 'something to read');
  stack.sqlite(`UPDATE markers SET value=1 WHERE user_id=${m.id}`);
  const t0 = Date.now();
  await m.get('/news');
  await m.get('/u/mkauthor');
  await m.get('/notices');
  const lit = Number(stack.sqlite("SELECT coalesce((SELECT value FROM settings WHERE name = 'red_dot_at'), 0)"));
  assert.equal(Number(val('news')), Math.max(1, lit));
  assert.ok(Number(val('author', a.id)) >= t0 - 1000);
  assert.equal(Number(val('notices')), q('SELECT max(id) FROM notices'));
  assert.equal((await badges(m)).notices, 0);
});

// A /news visit stored the later of its clock and the light it read; a
// light stamped before it waited for the writers' lock and committed
// after the visit read (the page without it) was older than that mark,
// and the reader's dot never lit.  The visit marks the light it saw.
// The markers' read (STMT_BADGE_SCALARS) that fails is no badge: read
// as "no marker", it answered 0 and filled the cache with every notice
// unread and the red dot lit, shown for the cache's age (social/badges.c).
test('a failed read of the badges\' markers answers no badge and caches nothing: the next read is right', async () => {
  const me = await user('bdfail');
  await admin.get('/admin');
  await ok303(admin.post('/admin/notices', { title: 'Seen', body: 'before the failure' }));
  await ok303(admin.post('/admin/red-dot', {}));
  assert.equal((await me.get('/notices')).status, 200);
  assert.equal((await me.get('/news')).status, 200);
  assert.deepEqual(await badges(me), { notifications: 0, notices: 0, followed: 0, red_dot: false });
  await ok303(me.post(`/follow/${crowd[0].name}`));	// moves its generation: recomputed next
  stack.sqlite('ALTER TABLE notices RENAME TO notices_x');
  let r;
  try {
    r = await me.get('/badges.json');
  } finally {
    stack.sqlite('ALTER TABLE notices_x RENAME TO notices');
  }
  assert.notEqual(r.status, 200, `a failed read is no badge: ${r.status} ${r.text.slice(0, 80)}`);
  const after = await badges(me);
  assert.equal(after.notices, 0, 'every notice was seen');
  assert.equal(after.red_dot, false, 'the light was seen');
});

// /news reads the red dot's light, then marks it seen: a read that
// failed was "nothing new" (the light read as 0) and marked nothing
// while the page said all was seen; its marker's failure was only logged.
test('/news whose read fails answers 503 and marks nothing; read again, it clears the dot', async () => {
  const me = await user('newsfail');
  await admin.get('/admin');
  await ok303(admin.post('/admin/red-dot', {}));
  assert.equal((await badges(me)).red_dot, true);
  stack.sqlite('ALTER TABLE settings RENAME TO settings_x');
  let r;
  try {
    r = await me.get('/news');
  } finally {
    stack.sqlite('ALTER TABLE settings_x RENAME TO settings');
  }
  assert.equal(r.status, 503, `a failed read: ${r.status}`);
  assert.equal((await badges(me)).red_dot, true, 'still lit: nothing was marked');
  assert.equal((await me.get('/news')).status, 200);
  assert.equal((await badges(me)).red_dot, false);
});

test('a light that waited for the writers\' lock while its reader visited /news: the dot is lit', { skip: onPostgres() && 'the writers\' lock is SQLite\'s' }, async () => {
  const r = await user('rdwait');
  await admin.get('/admin');
  await ok303(admin.post('/admin/red-dot'));
  await r.get('/news');
  assert.equal((await badges(r)).red_dot, false);
  const release = await holdWriterLock(stack, 20);
  let light, visit;
  try {
    light = admin.post('/admin/red-dot');
    await sleep(300);
    visit = r.get('/news');		// its marker waits too
    await sleep(300);
  } finally {
    await release();
  }
  assert.equal((await light).status, 303);
  assert.equal((await visit).status, 200);
  assert.equal((await badges(r)).red_dot, true, 'a light the visit did not see');
  await r.get('/news');
  assert.equal((await badges(r)).red_dot, false);
});

// A post is stamped once its transaction has the writers' lock, not
// before it waits for it: stamped before a reader's visit to the
// author's profile moved the reader's marker, and committed after the
// visit's page (which did not show it), it counted as seen and was never
// on the reader's followed badge.
test('a post that waited for the writers\' lock while its reader visited the author: on the followed badge', { skip: onPostgres() && 'the writers\' lock is SQLite\'s' }, async () => {
  const r = await user('wlreader');
  const a = await user('wlauthor');
  await ok303(r.post('/follow/wlauthor'));
  await sleep(5);
  await publish(a, 'unread, so the visit moves the marker');
  assert.equal((await badges(r)).followed, 1);
  const release = await holdWriterLock(stack, 20);
  let post, visit;
  try {
    post = publish(a, 'waited for the lock');
    await sleep(300);
    visit = r.get('/u/wlauthor');		// its marker waits too
    await sleep(300);
  } finally {
    await release();
  }
  await post;
  const prof = await visit;
  assert.equal(prof.status, 200);
  assert.equal((await badges(r)).followed, 1, 'the post the visit did not show is unread');
});

test('followed-author unread counts exactly the visible posts after the follow or the last visit', async () => {
  const r = await user('freader');
  const a = await user('fauthor');
  const b = await user('fbauthor');
  const followed = async () => (await badges(r)).followed;
  await a.get('/feed');
  const old = await publish(a, 'before the follow');
  await sleep(5);
  await ok303(r.post('/follow/fauthor'));
  assert.equal(await followed(), 0, 'posts before the follow do not count');
  await sleep(5);
  const p = [];
  for (let i = 0; i < 3; i++) p.push(await publish(a, `a${i}`));
  assert.equal(await followed(), 3);
  assert.equal(badgeMarks((await r.get('/feed')).text)['unread-followed'], 3);
  const prof = await r.get('/u/fauthor');
  assert.equal(prof.status, 200);
  assert.equal(badgeMarks(prof.text)['unread-followed'], 0, 'the profile header shows them read');
  assert.equal(await followed(), 0);
  await sleep(5);
  const q1 = await publish(a, 'a3');
  const q2 = await publish(a, 'a4');
  assert.equal(await followed(), 2);
  await a.get(`/posts/${q2}`);
  await ok303(a.post(`/posts/${q2}/delete`));
  assert.equal(await followed(), 1, 'a deleted post stops counting at once');
  // deleting a post R already read and publishing a new one: exact, not
  // "published - read"
  await ok303(a.post(`/posts/${p[0]}/delete`));
  await ok303(a.post(`/posts/${old}/delete`));
  assert.equal(await followed(), 1);
  const q3 = await publish(a, 'a5');
  assert.equal(await followed(), 2);
  // unpublishing stops counting; republishing counts again
  await ok303(a.post(`/posts/${q3}/edit`, { body: 'a5 draft', topic: 'general', publish: '0' }));
  assert.equal(await followed(), 1, 'unpublished');
  await ok303(a.post(`/posts/${q3}/edit`, { body: 'a5 again', topic: 'general', publish: '1' }));
  assert.equal(await followed(), 2, 'republished');
  await ok303(a.post(`/posts/${q3}/edit`, { body: 'a5 draft', topic: 'general', publish: '0' }));
  assert.equal(await followed(), 1);
  // a draft counts once published
  const d = await publish(a, 'draft', '0');
  assert.equal(await followed(), 1, 'a draft does not count');
  await ok303(a.post(`/posts/${d}/edit`, { body: 'draft now out', topic: 'general', publish: '1' }));
  assert.equal(await followed(), 2, 'the draft, published');
  // a second followee adds its own count; unfollowing removes it
  await ok303(r.post('/follow/fbauthor'));
  await sleep(5);
  await publish(b, 'b0');
  await publish(b, 'b1');
  await publish(b, 'b2');
  assert.equal(await followed(), 5);
  await ok303(r.post('/unfollow/fbauthor'));
  assert.equal(await followed(), 2, 'unfollowing B drops B\'s');
  // the same from SQLite when Redis lost A's profile timeline, and again
  // once A's own visit to the profile rebuilt it
  // (and R's cached badge inputs, or the poll answers from them)
  stack.redis('DEL', `{u${a.id}}:profile`, `{u${a.id}}:profile:ok`);
  stack.redis('DEL', userCache(r.id, 'bm'));
  assert.equal(await followed(), 2, 'without the profile timeline in Redis');
  assert.equal((await a.get('/u/fauthor')).status, 200);
  assert.equal(await followed(), 2, 'after the timeline was rebuilt');
  assert.ok(q1 > 0);
  await r.get('/u/fauthor');
  assert.equal(await followed(), 0);
});

test('/badges fragment, page headers and /badges.json agree; JSON shape, 401, ETag', async () => {
  const r = await user('bdg');
  const a = await user('bdga');
  await ok303(r.post('/follow/bdga'));
  await sleep(5);
  await publish(a, 'for bdg');
  await ok303(a.post('/follow/bdg'));
  const frag = await r.get('/badges');
  assert.equal(frag.status, 200);
  assert.doesNotMatch(frag.text, /<html/i, 'a fragment, not a page');
  const marks = badgeMarks(frag.text);
  for (const n of BADGE_NAMES) assert.ok(Number.isInteger(marks[n]), `fragment mark ${n}`);
  const notices = q('SELECT COUNT(*) FROM notices');
  assert.deepEqual(marks, {
    'unread-notifications': 1, 'unread-notices': notices, 'unread-followed': 1, 'red-dot': 1,
  });
  for (const p of ['/feed', '/u/bdg', '/t/general']) {
    const page = await r.get(p);
    assert.equal(page.status, 200, p);
    assert.deepEqual(badgeMarks(page.text), marks, `header of ${p}`);
  }
  const j = await r.get('/badges.json');
  assert.equal(j.status, 200);
  assert.match(j.headers.get('content-type'), /application\/json/);
  const o = JSON.parse(j.text);
  assert.deepEqual(Object.keys(o).sort(), ['followed', 'notices', 'notifications', 'red_dot']);
  assert.equal(typeof o.red_dot, 'boolean');
  assert.deepEqual(o, { notifications: 1, notices, followed: 1, red_dot: true });
  // logged out
  const anon = new Client(stack.base);
  const aj = await anon.get('/badges.json');
  assert.equal(aj.status, 401);
  const ah = await anon.get('/badges');
  assert.equal(ah.status, 303);
  assert.match(ah.location, /\/login$/);
  // ETag / If-None-Match: send back exactly what was received
  const tag = j.headers.get('etag');
  assert.ok(tag, 'an ETag');
  const same = await r.get('/badges.json', { headers: { 'if-none-match': tag } });
  assert.equal(same.status, 304);
  assert.equal(same.text, '');
  const same2 = await r.get('/badges.json', { headers: { 'if-none-match': tag, 'accept-encoding': 'identity' } });
  assert.equal(same2.status, 304, 'the tag also matches an uncompressed request');
  const other = await r.get('/badges.json', { headers: { 'if-none-match': '"b-9-9-9-9"' } });
  assert.equal(other.status, 200);
  // a change gives a new tag and a 200 for the old one
  await r.get('/news');
  const changed = await r.get('/badges.json', { headers: { 'if-none-match': tag } });
  assert.equal(changed.status, 200);
  assert.equal(JSON.parse(changed.text).red_dot, false);
  assert.notEqual(changed.headers.get('etag'), tag);
  const again = await r.get('/badges.json', { headers: { 'if-none-match': changed.headers.get('etag') } });
  assert.equal(again.status, 304);
  // everything still exact
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

// Regression: flush batch ids come from {flush}:seq in Redis, and SQLite's
// flushes table is what makes a batch apply once.  When Redis lost its
// data the sequence restarted at 1 and new batches collided with applied
// ids; the sequence is now raised past SQLite's highest id first.
test('counters (user_unread among them) stay exact after Redis loses its data', async () => {
  const r = await user('wipeuser');
  const p = await publish(r, 'before the wipe');
  stack.tallyctl('flush');
  const used = new Set(stack.sqlite('SELECT id FROM flushes').split('\n').map(Number));
  const runs = () => q("SELECT COUNT(*) FROM reconcile_runs WHERE reason='redis-empty' AND state IN ('done','failed')");
  const runs0 = runs();
  stack.redis('FLUSHALL');
  // the worker notices the empty Redis and reconciles; let that finish so
  // that it cannot mask what follows
  await waitFor(() => runs() > runs0, 20000);
  // each round: one notification created or withdrawn, one flush; the
  // durable counters must follow every time
  for (let k = 0; k < 12; k++) {
    const next = Number(stack.redis('GET', '{flush}:seq') || 0) + 1;
    await ok303(crowd[6].post(`/posts/${p}/${k % 2 ? 'unlike' : 'like'}`));
    stack.tallyctl('flush');
    const truth = unreadTruth(r.id);
    const table = q(`SELECT value FROM counters WHERE name='user_unread' AND key='${r.id}'`);
    assert.equal(table, truth, `round ${k}: counters table ${table} vs recount ${truth} (batch id ${next} ${used.has(next) ? 'already in flushes' : 'new'})`);
  }
  assert.deepEqual(compareAll(stack), []);
});

// The notify handler's cost counters from /metrics (tests/lib/cost.mjs).
const notifyCost = () => handlerCost(stack, 'notify');

test('the badge poll costs one Redis round trip and no SQLite, and stays exact as things change', async () => {
  const r = await user('pollr');
  const a = await user('polla');
  const liker = crowd[7];
  await ok303(r.post(`/follow/${a.name}`));
  const mine = await publish(r, 'a post of the reader');
  await a.get(`/u/${a.name}`);
  let want = await badges(r);	// the first poll fills the cache
  // the global part (notices, the dot) fresh for the whole test: its age
  // alone (5 s) sends a poll to the slow path, and a busy machine can
  // take that long over the steps below
  BADGE_GLOBALS.filter((g) => stack.redis('EXISTS', g) === '1')
    .forEach((g) => stack.redis('HSET', g, 'at', String(Date.now() + 60000)));
  // A process's first use of a script loads it (SCRIPT LOAD, one round
  // trip of its own): polls from both notify processes first; should one
  // of them still load it during a measurement, that is one extra trip
  // (and command) at most per process -- "loads" below.
  for (let i = 0; i < 4; i++) await Promise.all([1, 2, 3, 4].map(() => badges(r)));
  // the request before may still be recorded (just after its answer):
  // start from figures that stopped moving
  const settled = async () => {
    let c = await notifyCost();
    for (let i = 0; i < 50; i++) {
      await sleep(20);
      const d = await notifyCost();
      if (d.reqs === c.reqs) return d;
      c = d;
    }
    return c;
  };
  const polls = async (n, headers) => {
    const c0 = await settled();
    let last;
    for (let i = 0; i < n; i++) last = await r.get('/badges.json', headers ? { headers } : undefined);
    // a handler records a request just after answering it
    let c1 = await notifyCost();
    for (let i = 0; i < 100 && c1.reqs - c0.reqs < n; i++) {
      await sleep(20);
      c1 = await notifyCost();
    }
    const trips = c1.trips - c0.trips;
    const loads = Math.min(2, Math.max(0, trips - n));
    return { last, stmts: c1.stmts - c0.stmts, cmds: c1.cmds - c0.cmds - loads, trips: trips - loads, reqs: c1.reqs - c0.reqs };
  };
  let m = await polls(20);
  assert.equal(m.last.status, 200);
  assert.deepEqual(JSON.parse(m.last.text), want);
  assert.equal(m.reqs, 20);
  assert.equal(m.stmts, 0, 'steady state: no SQLite statement');
  assert.equal(m.trips, 20, 'steady state: one Redis round trip a poll');
  assert.equal(m.cmds, 80, 'four commands in that round trip');
  // a 304 is the same single round trip
  const etag = m.last.headers.get('etag');
  m = await polls(10, { 'If-None-Match': etag });
  assert.equal(m.last.status, 304);
  assert.equal(m.stmts, 0, '304: no SQLite');
  assert.equal(m.trips, 10);

  // every change shows on the very next poll, and the poll after it is cheap again
  const step = async (what, act, expect) => {
    await act();
    const b = await badges(r);
    assert.deepEqual(b, { ...want, ...expect }, what);
    want = b;
    m = await polls(3);
    assert.deepEqual(JSON.parse(m.last.text), want, `${what}: cached`);
    assert.equal(m.stmts, 0, `${what}: cached again, no SQLite`);
    assert.equal(m.trips, 3, `${what}: one round trip a poll`);
  };
  let p1;
  await step('the author publishes', async () => { p1 = await publish(a, 'first'); }, { followed: want.followed + 1 });
  await step('and publishes again', () => publish(a, 'second'), { followed: want.followed + 1 });
  await step('deletes one', () => ok303(a.post(`/posts/${p1}/delete`)), { followed: want.followed - 1 });
  await step('a like of my post', () => ok303(liker.post(`/posts/${mine}/like`)), { notifications: want.notifications + 1 });
  await step('an unlike withdraws it', () => ok303(liker.post(`/posts/${mine}/unlike`)), { notifications: want.notifications - 1 });
  await step('a notice to everyone', () => ok303(admin.post('/admin/notices', { title: 'poll', body: 'poll' })), { notices: want.notices + 1 });
  await step('opening /notices', () => r.get('/notices'), { notices: 0 });
  await step('the red dot lit', () => ok303(admin.post('/admin/red-dot')), { red_dot: true });
  await step('opening /news', () => r.get('/news'), { red_dot: false });
  // the visited profile's own header already shows the visit: its badges
  // are read again after the visit is marked (layout.h: layout_first_recv)
  await step('visiting the author', async () => {
    const v = await r.get(`/u/${a.name}`);
    assert.equal(v.status, 200);
    assert.equal(pageCounters(v.text)['unread-followed|'], 0, 'the profile\'s header after the visit');
  }, { followed: 0 });
  await step('another post', () => publish(a, 'third'), { followed: 1 });
  await step('unfollowing', () => ok303(r.post(`/unfollow/${a.name}`)), { followed: 0 });
  await step('following again (posts before the follow do not count)', () => ok303(r.post(`/follow/${a.name}`)), { followed: 0 });

  // the cache lost: the next poll recomputes the same numbers
  stack.redis('DEL', userCache(r.id, 'bm'), userCache(r.id, 'ss'));
  // the global part: one key on one Redis; on a cluster, the copies the
  // polls read (never the single key)
  const globals = BADGE_GLOBALS.filter((g) => stack.redis('EXISTS', g) === '1');
  if (onCluster()) assert.ok(globals.length > 0 && !globals.includes(BADGE_GLOBALS[0]), globals.join(' '));
  else assert.deepEqual(globals, [BADGE_GLOBALS[0]]);
  for (const g of globals) stack.redis('DEL', g);
  assert.deepEqual(await badges(r), want, 'after the cache keys were deleted');
  m = await polls(3);
  assert.equal(m.stmts, 0, 'refilled');
  // a logout ends the cached session at once
  const sid = r.jar.get('sid');
  await ok303(r.post('/logout'));
  const gone = new Client(stack.base);
  gone.jar.set('sid', sid);
  assert.equal((await gone.get('/badges.json')).status, 401, 'a logged-out sid, though it was cached');
  BADGE_GLOBALS.forEach((g) => { if (stack.redis('EXISTS', g) === '1') stack.redis('HSET', g, 'at', String(Date.now())); });
});

// What the cache's slow path costs (bcache.h): a reader whose part aged
// out (BCACHE_USER_MS) is recomputed on the next poll: two statements
// (the markers; the followed authors with their unread counts) and the
// refill's round trip, beside the poll's own.  The unread counter is the
// value the poll read in its round trip, not read again, and the
// followed counts are SQLite's, not a script on the authors' timelines
// (issue 45: two round trips more on every recompute, which 10,000
// users make once each two minutes).
test('a recompute reads the markers and the followed counts, and takes the unread count from its poll', async () => {
  if (onCluster()) return;	// there the followed counts are a script per node
  const r = await user('agedr');
  const a = await user('ageda');
  await ok303(r.post(`/follow/${a.name}`));
  await publish(a, 'a post after the follow');
  await a.get(`/u/${a.name}`);	// the author's timeline in Redis, or not
  const liker = crowd[8];
  const mine = await publish(r, 'a post of the aged reader');
  await ok303(liker.post(`/posts/${mine}/like`));
  const bm = userCache(r.id, 'bm');
  const age = () => stack.redis('HSET', bm, 'at', '1');
  const want = await badges(r);
  assert.equal(want.followed, 1);
  assert.equal(want.notifications, 1);
  // both notify processes load the scripts of the slow path first
  for (let i = 0; i < 4; i++) {
    age();
    await Promise.all([1, 2, 3, 4].map(() => badges(r)));
  }
  const loads = () => Number(stack.redis('INFO', 'commandstats').match(/cmdstat_script\|load:calls=(\d+)/)?.[1] ?? 0);
  // SCRIPT LOADs are the server's count, any process's: a measure during
  // which another process (the worker) loaded one is taken again
  for (let i = 0; i < 3; i++) {
    let trips, loaded;
    for (let t = 0; t < 4; t++) {
      age();
      const c0 = await notifyCost();
      const s0 = await stmtRuns(stack, 'notify');
      const l0 = loads();
      assert.deepEqual(await badges(r), want, 'recomputed');
      let c1 = await notifyCost();
      for (let k = 0; k < 100 && c1.reqs === c0.reqs; k++) {
        await sleep(20);
        c1 = await notifyCost();
      }
      const ran = stmtsBetween(s0, await stmtRuns(stack, 'notify'));
      assert.deepEqual(ran, { STMT_BADGE_SCALARS: 1, STMT_FOLLOWED_MARKS: 1 },
        'the markers and the followed authors with their counts, no counter read');
      trips = c1.trips - c0.trips;
      loaded = loads() - l0;
      if (loaded === 0) break;
    }
    assert.ok(trips >= 2 && trips - loaded <= 2 && (loaded > 0 || trips === 2),
      `the poll and the refill: two round trips (${trips}, SCRIPT LOADs meanwhile ${loaded})`);
    assert.notEqual(stack.redis('HGET', bm, 'at'), '1', 'refilled');
  }
});

// A reader's part ages out at an age its fill time picks, between one and
// two minutes (BCACHE_USER_MS; base/clock.h clock_spread()): users whose
// badges were filled together (all signed in within a minute) recompute
// apart, not in one wave (issue 45: at 10,000 users a wave made a
// quarter of a round's feeds recompute).
test('a reader\'s badges age out at the age their fill time picks: kept under a minute, recomputed past it', async () => {
  if (onCluster()) return;	// there the followed counts are a script per node
  const r = await user('spreadr');
  const bm = userCache(r.id, 'bm');
  const want = await badges(r);
  const recomputes = async () => {
    const s0 = await stmtRuns(stack, 'notify');
    assert.deepEqual(await badges(r), want);
    return stmtsBetween(s0, await stmtRuns(stack, 'notify')).STMT_BADGE_SCALARS ?? 0;
  };
  for (let i = 0; i < 3; i++) {
    // filled 55 s ago: under half an age, kept (the global part fresh)
    await badges(r);
    stack.redis('HSET', bm, 'at', String(Date.now() - 55000));
    assert.equal(await recomputes(), 0, 'kept under half an age');
    // filled 75 s ago at a time whose age is 70 s at most: recomputed
    let at = Date.now() - 75000 - i;
    while (clockSpread(120000, at) > 70000) at--;
    stack.redis('HSET', bm, 'at', String(at));
    assert.equal(await recomputes(), 1, `recomputed past its age (${clockSpread(120000, at)} ms)`);
    assert.notEqual(stack.redis('HGET', bm, 'at'), String(at), 'refilled');
  }
});

// A post turns over the followed badges of its author's followers only
// (bcache.h): the fan-out bumps each follower's gen, the first batch
// before the answer.  One global epoch, bumped at every post, made every
// reader's next poll recount its followed authors: in the benchmark's mix
// with one request in 500 a post, a third of all requests recounted, and
// the site served 15 % fewer (docs/BENCHMARKS.md).
test('a post recounts its author\'s followers\' followed badges and no one else\'s', async () => {
  const a = await user('onlya');
  const f = await user('onlyf');
  const o = await user('onlyo');
  await ok303(f.post(`/follow/${a.name}`));
  await ok303(o.post(`/follow/${crowd[9].name}`));
  const wf = await badges(f);
  const wo = await badges(o);
  // the global part (notices, the dot) fresh for the whole test: its age
  // alone sends a poll to the slow path
  const fresh = () => BADGE_GLOBALS.filter((g) => stack.redis('EXISTS', g) === '1')
    .forEach((g) => stack.redis('HSET', g, 'at', String(Date.now() + 60000)));
  const recounts = async (c, want, what) => {
    const s0 = await stmtRuns(stack, 'notify');
    assert.deepEqual(await badges(c), want, what);
    return stmtsBetween(s0, await stmtRuns(stack, 'notify')).STMT_BADGE_SCALARS ?? 0;
  };
  try {
    fresh();
    assert.equal(await recounts(f, wf, 'f'), 0, 'a follower: cached');
    assert.equal(await recounts(o, wo, 'o'), 0, 'another reader: cached');
    const p = await publish(a, 'for my followers');
    assert.equal(await recounts(f, { ...wf, followed: wf.followed + 1 }, 'f after the post'), 1,
      'a follower: recounted at the next poll');
    assert.equal(await recounts(o, wo, 'o after the post'), 0, 'another reader: still cached');
    await ok303(a.post(`/posts/${p}/delete`));
    assert.equal(await recounts(f, wf, 'f after the delete'), 1, 'a follower: the withdrawal recounted');
    assert.equal(await recounts(o, wo, 'o after the delete'), 0, 'another reader: still cached');
  } finally {
    BADGE_GLOBALS.forEach((g) => { if (stack.redis('EXISTS', g) === '1') stack.redis('HSET', g, 'at', String(Date.now())); });
  }
});
