// groups.test.mjs -- /notifications in groups (social/notify.h, the
// contract's /notifications row): likes of one post, reposts of one
// post, and follows, within 12 hours of the group's first, are one item
// <li data-group-size="N"> naming up to three people newest first and how
// many others, with data-unread="K"; comments are never grouped; read and
// delete act on the whole group by any member's id, exactly, also when
// 16 requests do it at once; a read group that gets a new member is
// unread again; a withdrawn like leaves its group; paging counts items
// and never splits a group; the badge equals the sum of data-unread after
// every step; reconciliation repairs drift planted in a group.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client } from '../lib/stack.mjs';
import { compareAll, pageCounters, quietRuns } from '../lib/counts.mjs';

let stack;
const crowd = [];
const q = (sql) => Number(stack.sqlite(sql) || 0);

async function user(login) {
  const c = new Client(stack.base);
  const r = await c.signup(login);
  assert.equal(r.status, 303, `signup ${login}: ${r.status}`);
  await c.get('/feed');	// a form token
  c.login = login;
  c.id = q(`SELECT id FROM users WHERE login='${login}'`);
  return c;
}

async function publish(c, body) {
  const r = await c.post('/posts', { body, topic: 'general', publish: '1' });
  assert.equal(r.status, 303);
  return Number(r.location.split('/').pop());
}

async function ok(p, what = '') {
  const r = await p;
  assert.equal(r.status, 303, `${what}: ${r.status}`);
  return r;
}

// The list as items, read without moving any marker (only the user's own
// page 1 marks the list seen: a cross-site GET does not).
async function items(c, page = 1) {
  const r = await c.get(`/notifications?page=${page}`, { headers: { 'sec-fetch-site': 'cross-site' } });
  assert.equal(r.status, 200);
  return [...r.text.matchAll(/<li data-notification-id="(\d+)" data-group-size="(\d+)" data-unread="(\d+)"[^>]*>(.*?)<\/li>/gs)]
    .map((m) => ({ id: Number(m[1]), size: Number(m[2]), unread: Number(m[3]), html: m[4] }));
}

async function badge(c) {
  return JSON.parse((await c.get('/badges.json')).text).notifications;
}

// The badge counts notifications; the list, groups of them: after every
// step the badge is the sum of data-unread over every page.
async function agree(c, msg) {
  let sum = 0;
  for (let p = 1; p < 20; p++) {
    const its = await items(c, p);
    sum += its.reduce((s, i) => s + i.unread, 0);
    if (its.length < 30) break;
  }
  const b = await badge(c);
  assert.equal(b, sum, `badge ${b} = sum of data-unread ${sum} (${msg})`);
  assert.equal(b, q(`SELECT COUNT(*) FROM notifications WHERE user_id=${c.id} AND is_read=0`), `the truth (${msg})`);
  return b;
}

const names = (html) => [...html.matchAll(/<a href="\/u\/([^"]+)"><b>/g)].map((m) => m[1]);

before(async () => {
  stack = await startStack();
  for (let i = 0; i < 20; i++) crowd.push(await user(`gc${i}`));
});
after(async () => { await stack?.stop(); });

test('likes of one post are one item naming three, newest first, and how many others', async () => {
  const me = await user('g_likes');
  const p = await publish(me, 'Morning run by the river, the long way round past the old mill and back');
  for (let i = 0; i < 5; i++) await ok(crowd[i].post(`/posts/${p}/like`), `like ${i}`);
  const [it] = await items(me);
  assert.equal(it.size, 5);
  assert.equal(it.unread, 5);
  assert.deepEqual(names(it.html), ['gc4', 'gc3', 'gc2']);
  assert.match(it.html, /<\/a> and 2 others liked your post <a class="note-post" href="\/posts\/\d+">\u201cMorning run by the river, the long way round past the old mi\u2026\u201d<\/a>/);
  assert.match(it.html, /<span class="note-new">5 new<\/span>/);
  await agree(me, 'five likes');
  // two likes: "a and b"
  const p2 = await publish(me, 'second');
  for (let i = 0; i < 2; i++) await ok(crowd[i].post(`/posts/${p2}/like`));
  const [two] = await items(me);
  assert.equal(two.size, 2);
  assert.match(two.html, /<b>gc1<\/b><\/a> and <a href="\/u\/gc0"><b>gc0<\/b><\/a> liked your post/);
  await agree(me, 'two groups');
});

test('reposts, follows and likes are separate groups; comments are never grouped', async () => {
  const me = await user('g_kinds');
  const p = await publish(me, 'kinds');
  for (let i = 0; i < 3; i++) {
    await ok(crowd[i].post(`/posts/${p}/like`));
    await ok(crowd[i].post(`/posts/${p}/repost`));
    await ok(crowd[i].post(`/follow/g_kinds`));
    await ok(crowd[i].post(`/posts/${p}/comments`, { body: `comment ${i}` }));
  }
  const its = await items(me);
  const kinds = (re) => its.filter((i) => re.test(i.html));
  assert.equal(kinds(/ liked your post/).length, 1);
  assert.equal(kinds(/ liked your post/)[0].size, 3);
  assert.equal(kinds(/ reposted your post/).length, 1);
  assert.equal(kinds(/ reposted your post/)[0].size, 3);
  assert.equal(kinds(/ followed you/).length, 1);
  assert.equal(kinds(/ followed you/)[0].size, 3);
  const comments = kinds(/ commented on your post/);
  assert.equal(comments.length, 3, 'each comment its own item');
  for (const c of comments) assert.equal(c.size, 1);
  assert.equal(its.length, 6);
  await agree(me, 'twelve notifications, six items');
});

test('read and delete act on the whole group by any member\'s id; repeats change nothing', async () => {
  const me = await user('g_read');
  const p = await publish(me, 'read me');
  const other = await publish(me, 'other');
  for (let i = 0; i < 4; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  await ok(crowd[9].post(`/posts/${other}/like`));
  assert.equal(await agree(me, 'before'), 5);
  const members = stack.sqlite(`SELECT id FROM notifications WHERE user_id=${me.id} AND post_id=${p} ORDER BY id`).split('\n').map(Number);
  assert.equal(members.length, 4);
  // the oldest member's id reads the whole group
  await ok(me.post(`/notifications/${members[0]}/read`));
  let its = await items(me);
  const g = its.find((i) => i.size === 4);
  assert.equal(g.unread, 0);
  assert.doesNotMatch(g.html, /\/read"/, 'a read group offers no "Mark read"');
  assert.equal(await agree(me, 'group read'), 1);
  await ok(me.post(`/notifications/${members[2]}/read`));
  assert.equal(await agree(me, 'read again'), 1);
  // a group's delete removes every member, read or not
  await ok(me.post(`/notifications/${members[1]}/delete`));
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE user_id=${me.id} AND post_id=${p}`), 0);
  its = await items(me);
  assert.equal(its.length, 1);
  for (const m of members) assert.equal((await me.post(`/notifications/${m}/delete`)).status, 404, 'gone: 404');
  assert.equal(await agree(me, 'deleted'), 1);
  // another user's id changes nothing and answers 404
  assert.equal((await crowd[0].post(`/notifications/${its[0].id}/read`)).status, 404);
  assert.equal((await crowd[0].post(`/notifications/${its[0].id}/delete`)).status, 404);
  assert.equal(await agree(me, 'after another user'), 1);
  assert.deepEqual(compareAll(stack).filter((b) => b.startsWith('note_groups') || b.includes('group')), []);
});

test('16 concurrent reads of one group lower the badge by its unread once; 16 deletes remove it once', async () => {
  const me = await user('g_race');
  const p = await publish(me, 'race');
  const p2 = await publish(me, 'race two');
  for (let i = 0; i < 8; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  for (let i = 0; i < 3; i++) await ok(crowd[i].post(`/posts/${p2}/like`));
  assert.equal(await agree(me, 'before'), 11);
  const ids = stack.sqlite(`SELECT id FROM notifications WHERE user_id=${me.id} AND post_id=${p} ORDER BY id`).split('\n').map(Number);
  // sixteen sessions of the owner, each naming one of the members
  const sessions = [];
  for (let i = 0; i < 16; i++) {
    const c = new Client(stack.base);
    assert.equal((await c.login('g_race', 'password-123')).status, 303);
    await c.get('/feed');
    sessions.push(c);
  }
  const reads = await Promise.all(sessions.map((c, i) => c.post(`/notifications/${ids[i % ids.length]}/read`)));
  for (const r of reads) assert.equal(r.status, 303);
  assert.equal(await agree(me, 'after 16 reads'), 3);
  // a new like reopens it; then 16 deletes at once
  await ok(crowd[8].post(`/posts/${p}/like`));
  assert.equal(await agree(me, 'reopened'), 4);
  const dels = await Promise.all(sessions.map((c, i) => c.post(`/notifications/${ids[i % ids.length]}/delete`)));
  for (const r of dels) assert.ok([303, 404].includes(r.status), `delete: ${r.status}`);
  assert.ok(dels.some((r) => r.status === 303), 'one delete did it');
  assert.equal(q(`SELECT COUNT(*) FROM notifications WHERE user_id=${me.id} AND post_id=${p}`), 0);
  assert.equal(q(`SELECT COUNT(*) FROM note_groups WHERE user_id=${me.id} AND post_id=${p}`), 0);
  assert.equal(await agree(me, 'after 16 deletes'), 3);
  stack.tallyctl('flush');
  assert.deepEqual(compareAll(stack), []);
});

test('a read group that gets a new member is unread again, and comes first', async () => {
  const me = await user('g_reopen');
  const p = await publish(me, 'reopen');
  const later = await publish(me, 'later');
  for (let i = 0; i < 3; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  await ok(crowd[5].post(`/posts/${later}/like`));
  // page 1, opened by its user, marks the list seen
  await me.get('/notifications');
  assert.equal(await agree(me, 'seen'), 0);
  let its = await items(me);
  assert.equal(its[0].size, 1, 'the newest group first');
  await ok(crowd[3].post(`/posts/${p}/like`));
  its = await items(me);
  assert.equal(its[0].size, 4, 'the group with the newest member first');
  assert.equal(its[0].unread, 1);
  assert.deepEqual(names(its[0].html), ['gc3', 'gc2', 'gc1']);
  assert.match(its[0].html, /and 1 other liked/);
  assert.equal(await agree(me, 'reopened'), 1);
});

test('a withdrawn like leaves its group; a group left empty goes', async () => {
  const me = await user('g_unlike');
  const p = await publish(me, 'unlike');
  for (let i = 0; i < 3; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  await ok(me.post(`/notifications/${q(`SELECT min(id) FROM notifications WHERE user_id=${me.id}`)}/read`));
  await ok(crowd[3].post(`/posts/${p}/like`));		// unread again
  assert.equal(await agree(me, 'four, one unread'), 1);
  await ok(crowd[1].post(`/posts/${p}/unlike`));		// a read one
  let [it] = await items(me);
  assert.equal(it.size, 3);
  assert.equal(it.unread, 1);
  assert.deepEqual(names(it.html), ['gc3', 'gc2', 'gc0']);
  await ok(crowd[3].post(`/posts/${p}/unlike`));		// the unread one
  [it] = await items(me);
  assert.equal(it.size, 2);
  assert.equal(it.unread, 0);
  assert.equal(await agree(me, 'after the unread one was withdrawn'), 0);
  for (const i of [0, 2]) await ok(crowd[i].post(`/posts/${p}/unlike`));
  assert.deepEqual(await items(me), []);
  assert.equal(q(`SELECT COUNT(*) FROM note_groups WHERE user_id=${me.id}`), 0);
  // an unfollow withdraws a follow from its group the same way
  for (let i = 0; i < 3; i++) await ok(crowd[i].post('/follow/g_unlike'));
  await ok(crowd[1].post('/unfollow/g_unlike'));
  [it] = await items(me);
  assert.equal(it.size, 2);
  assert.deepEqual(names(it.html), ['gc2', 'gc0']);
  assert.equal(await agree(me, 'follows'), 2);
});

// A group goes when no member is left, not when its stored size says
// so (sql.h NOTE_GROUP_EMPTY; PostgreSQL's tally_unlike()): with a size
// drifted below its rows, a withdrawal deleted a group that still had
// members, whose notifications then belonged to no group -- no page
// showed them, the badge counted them, and reconciliation (which walks
// the groups) never found them.
test('a group whose stored size drifted low is kept while a member is left; reconciliation then repairs its size', async () => {
  const me = await user('g_low');
  const p = await publish(me, 'low');
  for (let i = 0; i < 3; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  await quietRuns(stack);
  const gid = q(`SELECT id FROM note_groups WHERE user_id=${me.id}`);
  stack.sqlite(`UPDATE note_groups SET size = 1 WHERE id=${gid}`);
  await ok(crowd[0].post(`/posts/${p}/unlike`));
  const [it] = await items(me);
  assert.ok(it, 'the group is still listed');
  assert.deepEqual(names(it.html), ['gc2', 'gc1']);
  assert.equal(await agree(me, 'two members left'), 2);
  const out = stack.tallyctl('reconcile');
  assert.match(out, /note_groups\s+checked \d+, wrong 1, fixed 1/, out);
  assert.equal((await items(me))[0].size, 2);
  // the last two go: the group with them, whatever its size says
  stack.sqlite(`UPDATE note_groups SET size = 5 WHERE id=${gid}`);
  for (const i of [1, 2]) await ok(crowd[i].post(`/posts/${p}/unlike`));
  assert.deepEqual(await items(me), []);
  assert.equal(q(`SELECT COUNT(*) FROM note_groups WHERE user_id=${me.id}`), 0);
});

// A group's place is its newest member's time, and its window its
// first's: when either is withdrawn, the group takes its times from the
// members left (notify.c group_move(), PostgreSQL's tally_unlike()).  A
// group kept the time of a withdrawn newest like above newer items, and a
// withdrawn first like closed the group to likes 12 hours after it.
test('a withdrawn newest like gives its group back its place; a withdrawn first like moves its window', async () => {
  const me = await user('g_place');
  const a = await publish(me, 'place a');
  const b = await publish(me, 'place b');
  const pause = () => new Promise((r) => setTimeout(r, 15));
  await ok(crowd[0].post(`/posts/${a}/like`));
  await pause();
  await ok(crowd[1].post(`/posts/${b}/like`));
  await pause();
  await ok(crowd[2].post(`/posts/${a}/like`));
  const order = async () => (await items(me)).map((i) => (i.html.includes('place a') ? 'a' : 'b'));
  assert.deepEqual(await order(), ['a', 'b'], 'a newer like of a: a first');
  await ok(crowd[2].post(`/posts/${a}/unlike`));
  assert.deepEqual(await order(), ['b', 'a'], 'its newest like gone: a after b again');
  const [, it] = await items(me);
  assert.deepEqual(names(it.html), ['gc0']);
  // the first like of b's group made 13 hours ago, the second now: the
  // first withdrawn, the group began with the second, and a third joins
  await ok(crowd[3].post(`/posts/${b}/like`));
  stack.sqlite(`UPDATE note_groups SET first_at = first_at - 13*3600*1000 WHERE user_id=${me.id} AND post_id=${b}`);
  stack.sqlite(`UPDATE notifications SET created_at = created_at - 13*3600*1000 WHERE user_id=${me.id} AND post_id=${b} AND actor_id=${crowd[1].id}`);
  await ok(crowd[1].post(`/posts/${b}/unlike`));
  await ok(crowd[4].post(`/posts/${b}/like`));
  const its = (await items(me)).filter((i) => i.html.includes('place b'));
  assert.deepEqual(its.map((i) => i.size), [2], 'one group of b, its first left 13 hours after the one withdrawn');
  assert.equal(await agree(me, 'places'), 3);
});

// "Older" links a page only when an older item is there: a list of
// exactly 30 items is one page.
// Opening page 1 reads what it shows, up to its newest notification by
// id and by time.  The time was the newest member's by id; a member with
// a lower id and a later time (on PostgreSQL a like reads the clock before
// it waits for the post's row, so ids follow the lock and times arrival)
// stayed unread after the page was seen, and stayed so on every reload.
// Forced: the older like's time made later by SQL, as the group's.
test('page 1 reads a member whose id is lower and whose time is later than the newest\'s', async () => {
  const o = await user('gt_owner');
  const p = await publish(o, 'liked out of order');
  await ok(crowd[3].post(`/posts/${p}/like`), 'like 1');
  await ok(crowd[4].post(`/posts/${p}/like`), 'like 2');
  const [first, second] = stack.sqlite(`SELECT id, created_at FROM notifications WHERE user_id=${o.id} ORDER BY id`)
    .split('\n').map((l) => l.split('|').map(Number));
  const later = second[1] + 5;
  stack.sqlite(`UPDATE notifications SET created_at=${later} WHERE id=${first[0]}`);
  stack.sqlite(`UPDATE note_groups SET last_at=${later} WHERE user_id=${o.id}`);
  assert.equal(await badge(o), 2);
  assert.equal((await o.get('/notifications')).status, 200);
  assert.equal(await badge(o), 0, 'every notification the page showed is read');
  await agree(o, 'after page 1');
});

test('thirty items are one page; the thirty-first makes a second', async () => {
  const me = await user('g_thirty');
  const p = await publish(me, 'thirty comments');
  for (let i = 0; i < 30; i++) await ok(crowd[i % crowd.length].post(`/posts/${p}/comments`, { body: `c${i}` }));
  const page = async (n) => (await me.get(`/notifications?page=${n}`, { headers: { 'sec-fetch-site': 'cross-site' } })).text;
  assert.equal((await items(me)).length, 30);
  assert.doesNotMatch(await page(1), /rel="next"/, 'no older page to link');
  await ok(crowd[0].post(`/posts/${p}/comments`, { body: 'c30' }));
  assert.match(await page(1), /rel="next"/);
  assert.equal((await items(me, 2)).length, 1);
  assert.doesNotMatch(await page(2), /rel="next"/);
});

// "Mark all read" on a later page reads up to what page 1 showed, as
// page 1's own does: the Older link carries page 1's newest (upto, at,
// and on PostgreSQL its snapshot), and one that arrived after page 1 was
// built stays unread.  A later page's form read every one, the newcomer
// the user never saw included.
test('"Mark all read" on an Older page leaves unread what arrived after page 1 was built', async () => {
  const me = await user('g_older_read');
  const p = await publish(me, 'thirty-one comments');
  for (let i = 0; i < 31; i++) await ok(crowd[i % crowd.length].post(`/posts/${p}/comments`, { body: `o${i}` }));
  const first = await me.get('/notifications');	// page 1, its own: read up to its newest
  assert.equal(first.status, 200);
  assert.equal(await badge(me), 0);
  const older = first.text.match(/<a rel="next" href="([^"]+)"/)[1].replaceAll('&amp;', '&');
  await ok(crowd[3].post(`/posts/${p}/comments`, { body: 'after page 1' }));	// not seen
  const second = await me.get(older);
  assert.equal(second.status, 200);
  const form = second.text.match(/<form method="post" action="\/notifications\/read-all"[^>]*>(.*?)<\/form>/s)[1];
  const fields = Object.fromEntries([...form.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)]
    .map((m) => [m[1], m[2].replaceAll('&amp;', '&')]));
  await ok(me.post('/notifications/read-all', fields));
  assert.equal(await agree(me, 'the one after page 1 is unread'), 1);
});

// "Older" goes on after the last item the page showed, not to the next
// 30 by count: a group that took a new member meanwhile went to the top,
// and by count the page after showed page 1's last item again.
test('"Older" begins after the last item shown: one that moved to the top meanwhile is not shown twice', async () => {
  const me = await user('g_older');
  const posts = [];
  for (let i = 0; i < 32; i++) posts.push(await publish(me, `older ${i}`));
  for (let i = 0; i < 32; i++) await ok(crowd[i % crowd.length].post(`/posts/${posts[i]}/like`));
  const cross = { headers: { 'sec-fetch-site': 'cross-site' } };
  const list = (html) => [...html.matchAll(/<li data-notification-id="(\d+)"/g)].map((m) => Number(m[1]));
  const first = (await me.get('/notifications', cross)).text;
  const shown = list(first);
  assert.equal(shown.length, 30);
  const older = first.match(/<a rel="next" href="([^"]+)">Older/)?.[1];
  assert.ok(older, 'page 1 links the older ones');
  // the oldest group takes a second like: it is the newest now
  await ok(crowd[1].post(`/posts/${posts[0]}/like`));
  const next = await me.get(older, cross);
  assert.equal(next.status, 200);
  assert.deepEqual(list(next.text), [q(`SELECT id FROM notifications WHERE user_id=${me.id} AND post_id=${posts[1]}`)],
    'the one after page 1, and nothing of page 1 again');
  assert.doesNotMatch(next.text, /rel="next"/);
  assert.match(next.text, /<a rel="prev" href="\/notifications">/);
  // a cursor page marks nothing read; a malformed one is refused
  assert.equal(await agree(me, 'after paging'), 33);
  for (const bad of ['1', '1.2.3', 'x.1', '0.5']) {
    assert.equal((await me.get(`/notifications?before=${bad}`, cross)).status, 400, bad);
  }
  // an empty one too: taken as absent, it was page 1, and marked the
  // list read (this GET is the user's own)
  assert.equal((await me.get('/notifications?before=')).status, 400, 'before=');
  assert.equal(await agree(me, 'after an empty before'), 33);
});

test('a like 12 hours after a group began starts a new group', async () => {
  const me = await user('g_window');
  const p = await publish(me, 'window');
  for (let i = 0; i < 2; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  // the group began 13 hours ago
  stack.sqlite(`UPDATE note_groups SET first_at = first_at - 13*3600*1000 WHERE user_id=${me.id}`);
  await ok(crowd[2].post(`/posts/${p}/like`));
  const its = await items(me);
  assert.deepEqual(its.map((i) => i.size), [1, 2]);
  assert.equal(await agree(me, 'two groups of one post'), 3);
});

// The window and the reopening hold for every grouped kind, each by its
// own path (a like's group is the like's transaction's, notify.c the
// others'): a repost or a follow 11 hours after its group began joins it,
// 13 hours after begins a new one; a read follow group that gets a new
// follower is unread again, first.
test('reposts and follows: 11 hours after a group began join it, 13 start a new one; a read follow group reopens', async () => {
  const me = await user('g_window2');
  const p = await publish(me, 'window, reposted');
  const age = (h) => stack.sqlite(`UPDATE note_groups SET first_at = first_at - ${h}*3600*1000 WHERE user_id=${me.id}`);
  await ok(crowd[0].post(`/posts/${p}/repost`));
  await ok(crowd[0].post('/follow/g_window2'));
  age(11);
  await ok(crowd[1].post(`/posts/${p}/repost`));
  await ok(crowd[1].post('/follow/g_window2'));
  let its = await items(me);
  assert.deepEqual(its.map((i) => i.size), [2, 2], 'each joined its group at 11 hours');
  age(2);	// both groups began 13 hours ago
  await ok(crowd[2].post(`/posts/${p}/repost`));
  await ok(crowd[2].post('/follow/g_window2'));
  its = await items(me);
  assert.deepEqual(its.map((i) => i.size), [1, 1, 2, 2], 'two new groups of one');
  assert.match(its[0].html, /followed you/);
  assert.match(its[1].html, /reposted/);
  assert.equal(await agree(me, 'six, unread'), 6);
  await me.get('/notifications');	// seen: all read
  assert.equal(await agree(me, 'seen'), 0);
  await ok(crowd[3].post('/follow/g_window2'));
  its = await items(me);
  assert.equal(its[0].size, 2, 'the follow group with its new member first');
  assert.equal(its[0].unread, 1);
  assert.deepEqual(names(its[0].html), ['gc3', 'gc2']);
  assert.equal(await agree(me, 'reopened'), 1);
});

test('paging counts items, never splitting a group', async () => {
  const me = await user('g_pages');
  const big = await publish(me, 'the big one');
  for (const c of crowd) await ok(c.post(`/posts/${big}/like`));	// 20 in one group
  for (let i = 0; i < 34; i++) {
    const p = await publish(me, `small ${i}`);
    await ok(crowd[i % crowd.length].post(`/posts/${p}/like`));
  }
  const p1 = await items(me, 1);
  const p2 = await items(me, 2);
  assert.equal(p1.length, 30, 'thirty items a page');
  assert.equal(p2.length, 5);
  assert.deepEqual((await items(me, 3)), []);
  const all = [...p1, ...p2];
  assert.equal(all.filter((i) => i.size === 20).length, 1, 'the group of 20 is one item, on one page');
  assert.equal(all.reduce((s, i) => s + i.size, 0), 54);
  assert.equal(new Set(all.map((i) => i.id)).size, 35, 'no item twice');
  assert.equal(await agree(me, 'two pages'), 54);
  // opening page 1 marks every notification up to the newest shown, on
  // both pages: the list was seen
  const seen = await me.get('/notifications');
  assert.equal([...seen.text.matchAll(/data-unread="(\d+)"/g)].reduce((s, m) => s + Number(m[1]), 0),
    p1.reduce((s, i) => s + i.unread, 0), 'page 1 says what was unread when it was built');
  assert.equal(pageCounters(seen.text)['unread-notifications|'], 0);
  assert.equal(await agree(me, 'seen'), 0);
});

test('reconciliation finds and repairs drift planted in a group\'s size and unread count', async () => {
  const me = await user('g_drift');
  const p = await publish(me, 'drift');
  for (let i = 0; i < 4; i++) await ok(crowd[i].post(`/posts/${p}/like`));
  const gid = q(`SELECT id FROM note_groups WHERE user_id=${me.id}`);
  // no run still going (the first, for an empty Redis) may repair the
  // drift before the dry run looks
  await quietRuns(stack);
  stack.sqlite(`UPDATE note_groups SET size = size + 3, unread = unread - 2 WHERE id=${gid}`);
  let [it] = await items(me);
  assert.equal(it.size, 7, 'the drift shows');
  await quietRuns(stack);
  let out = stack.tallyctl('reconcile', '--dry-run');
  assert.match(out, /note_groups\s+checked \d+, wrong 1, fixed 0, largest error 3/, out);
  assert.equal(q(`SELECT size FROM note_groups WHERE id=${gid}`), 7, 'a dry run repairs nothing');
  out = stack.tallyctl('reconcile');
  assert.match(out, /note_groups\s+checked \d+, wrong 1, fixed 1, largest error 3/, out);
  [it] = await items(me);
  assert.equal(it.size, 4);
  assert.equal(it.unread, 4);
  assert.equal(await agree(me, 'repaired'), 4);
  out = stack.tallyctl('reconcile');
  assert.match(out, / 0 counters wrong/, out);
  assert.deepEqual(compareAll(stack), []);
});
