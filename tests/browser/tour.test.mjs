// tour.test.mjs -- the tour a new user takes, in a real browser, at 1280
// and 390 px: sign up, see suggestions, find a person by name, follow,
// like from the feed in place (the URL stays /feed, the count and the
// button change), the same with JavaScript off (back on /feed at the
// post), open /followed and /notifications and see their badges clear,
// post with a bad topic and find the text kept.  A screenshot of each
// step goes to build/screenshots/tour/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { demoSession } from '../lib/browser.mjs';
import { Client, waitFor } from '../lib/stack.mjs';
import { drainQueue } from '../lib/social.mjs';

const S = demoSession('tour');

const badge = (page, name) => page.locator(`header [data-counter="${name}"]`).textContent()
  .then((t) => Number(t.trim()));

async function shot(page, name, width) {
  await page.screenshot({ path: path.join(S.shots, `${name}-${width}.png`) });
}

async function signup(page, login, name) {
  await page.goto(`${S.stack.base}/signup`);
  await page.fill('form[action="/signup"] [name=login]', login);
  await page.fill('form[action="/signup"] [name=name]', name);
  await page.fill('form[action="/signup"] [name=password]', 'tour-password-1');
  await Promise.all([
    page.waitForURL((u) => u.pathname === '/feed'),
    page.click('form[action="/signup"] button[type=submit]'),
  ]);
}

for (const width of [1280, 390]) {
  test(`the new user's tour at ${width} px`, async () => {
    const me = `tour_${width}`;
    const errors = [];
    const context = await S.browser.newContext({ viewport: { width, height: 900 } });
    const page = await context.newPage();
    page.on('pageerror', (e) => errors.push(`pageerror: ${e}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`); });
    page.on('response', (r) => { if (r.status() >= 500) errors.push(`${r.status()} ${r.request().method()} ${r.url()}`); });
    try {
      // sign up: an empty feed that offers people and topics
      await signup(page, me, `Tour Taker ${width}`);
      await page.getByText('Nothing here yet').waitFor();
      assert.ok(await page.locator('main ul.people li[data-login] form.follow').count() > 0,
        'the empty feed suggests people to follow');
      await shot(page, '1-empty-feed', width);
      await Promise.all([page.waitForURL((u) => u.pathname === '/people'),
        page.click('main a[href="/people"]')]);
      assert.ok(await page.locator('ul.people li[data-login]').count() > 0, 'suggestions');
      await shot(page, '2-suggestions', width);

      // find alice by her name
      const aliceName = S.stack.sqlite("select name from users where login = 'alice'");
      await page.fill('form.search [name=q]', aliceName.toLowerCase().slice(0, 9));
      await Promise.all([page.waitForURL((u) => u.searchParams.has('q')),
        page.click('form.search button[type=submit]')]);
      const alice = page.locator('ul.people li[data-login="alice"]');
      await alice.waitFor();
      await shot(page, '3-found', width);
      // follow in place: the URL stays, the button says Following
      const url = page.url();
      await alice.locator('button[data-following="0"]').click();
      await alice.locator('button[aria-pressed="true"]', { hasText: 'Following' }).waitFor();
      assert.equal(page.url(), url);
      assert.equal(await alice.getAttribute('data-following'), '1');
      assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Following', 'focus kept');
      await shot(page, '4-following', width);

      // like from the feed, in place
      await page.goto(`${S.stack.base}/feed`);
      const art = page.locator('article[data-post-id]').first();
      const id = await art.getAttribute('data-post-id');
      const likes = art.locator('[data-counter="post-likes"]');
      const before = Number(await likes.textContent());
      await art.locator('button', { hasText: /^Like$/ }).click();
      await art.locator('button', { hasText: /^Liked$/ }).waitFor();
      assert.equal(Number(await likes.textContent()), before + 1);
      assert.equal(new URL(page.url()).pathname, '/feed');
      assert.equal(await art.getAttribute('data-liked'), '1');
      assert.equal(Number(S.stack.sqlite(`select count(*) from likes l join users u on u.id = l.user_id
        where u.login = '${me}' and l.post_id = ${id}`)), 1);
      await shot(page, '5-liked', width);
      // and back: Unlike in place
      await art.locator('button', { hasText: 'Liked' }).click();
      await art.locator('button', { hasText: /^Like$/ }).waitFor();
      assert.equal(Number(await likes.textContent()), before);

      // something to clear: alice posts, alice likes my post
      const alicec = new Client(S.stack.base);
      await alicec.login('alice', 'password');
      await alicec.get('/t/general');
      await page.goto(`${S.stack.base}/feed`);
      await page.fill('#post-body', `hello from the tour at ${width}`);
      assert.equal((await page.locator('#post-body + small.count').textContent()).trim(),
        `${`hello from the tour at ${width}`.length} / 2000`, 'the length counter');
      await Promise.all([page.waitForURL((u) => u.pathname.startsWith('/posts/')),
        page.click('main form[action="/posts"] button[type=submit]')]);
      const myPost = new URL(page.url()).pathname.split('/')[2];
      assert.equal((await alicec.post(`/posts/${myPost}/like`)).status, 303);
      // and two more: the likes of one post are one item of the list
      for (const who of ['bob', 'carol']) {
        const c = new Client(S.stack.base);
        assert.equal((await c.login(who, 'password')).status, 303);
        await c.get('/t/general');
        assert.equal((await c.post(`/posts/${myPost}/like`)).status, 303);
      }
      assert.equal((await alicec.post('/posts', { body: `news for the tour ${width}`, topic: '', publish: '1' })).status, 303);
      await page.waitForTimeout(300);	// the fan-out after alice's answer
      await page.goto(`${S.stack.base}/feed`);
      assert.ok(await badge(page, 'unread-notifications') >= 1);
      assert.ok(await badge(page, 'unread-followed') >= 1);
      await shot(page, '6-badges', width);
      await Promise.all([page.waitForURL((u) => u.pathname === '/followed'),
        page.click('header a[href="/followed"]')]);
      // the list keeps what is unread: opening it clears nothing
      assert.ok(await badge(page, 'unread-followed') >= 1);
      assert.ok(await page.locator('li[data-login="alice"] [data-counter="author-unread"]').count() === 1);
      await shot(page, '7-followed', width);
      // opening alice's profile from it clears her count
      await Promise.all([page.waitForURL((u) => u.pathname === '/u/alice'),
        page.click('li[data-login="alice"] a[href="/u/alice"]')]);
      assert.equal(await badge(page, 'unread-followed'), 0);
      await Promise.all([page.waitForURL((u) => u.pathname === '/notifications'),
        page.click('header a[href="/notifications"]')]);
      assert.equal(await badge(page, 'unread-notifications'), 0);
      assert.ok(await page.locator('li.note.unread').count() >= 1, 'what was new stays highlighted');
      // the three likes, one item: three people named, the post by its text
      const group = page.locator('li[data-group-size="3"]', { hasText: 'liked your post' });
      assert.equal(await group.count(), 1, 'the likes of one post are one item');
      assert.equal(await group.getAttribute('data-unread'), '3');
      assert.match(await group.textContent(), /^3 new Carol \S+, Bob \S+ and Alice \S+ liked your post \u201chello from the tour at \d+\u201d\s*just now Mark read Delete all$/);
      // its two actions are buttons apart, on the item, not run together
      const [mark, del] = await Promise.all([group.locator('button', { hasText: 'Mark read' }).boundingBox(),
        group.locator('button', { hasText: 'Delete all' }).boundingBox()]);
      assert.ok(mark && del && (del.x >= mark.x + mark.width + 4 || del.y >= mark.y + mark.height), 'the buttons are apart');
      const box = await group.boundingBox();
      assert.ok(del.x + del.width <= box.x + box.width, 'inside the item');
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), true, 'no sideways scroll');
      await shot(page, '8-notifications', width);
      // its Read acts in place (www/tally.js takes form.note-act): no page
      // load, the item no longer unread
      await page.evaluate(() => { window.tourStayed = 1; });
      await group.locator('button', { hasText: 'Mark read' }).click();
      await page.waitForFunction(() => document.querySelector('li[data-group-size="3"][data-unread="0"]') !== null);
      assert.equal(await page.evaluate(() => window.tourStayed), 1, 'the read made no page load');

      assert.deepEqual(errors, []);
      // a bad topic: the server refuses (a 400 the console reports), the
      // text stays
      await page.goto(`${S.stack.base}/feed`);
      await page.fill('#post-body', 'words I do not want to type twice');
      await page.fill('#post-topic', 'bad topic!');
      await page.evaluate(() => { document.querySelector('main form[action="/posts"]').noValidate = true; });
      const [resp] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/posts')),
        page.click('main form[action="/posts"] button[type=submit]')]);
      assert.equal(resp.status(), 400);
      await page.locator('#post-topic[aria-invalid="true"]').waitFor();
      assert.equal(await page.inputValue('#post-body'), 'words I do not want to type twice');
      assert.equal(await page.inputValue('#post-topic'), 'bad topic!');
      await shot(page, '9-kept', width);
    } finally {
      await context.close();
    }

    // the same like without JavaScript: back on /feed at the post
    const plain = await S.browser.newContext({ viewport: { width, height: 900 }, javaScriptEnabled: false });
    try {
      const p2 = await plain.newPage();
      await p2.goto(`${S.stack.base}/login`);
      await p2.fill('form[action="/login"] [name=login]', me);
      await p2.fill('form[action="/login"] [name=password]', 'tour-password-1');
      await Promise.all([p2.waitForURL((u) => u.pathname === '/feed'),
        p2.click('form[action="/login"] button[type=submit]')]);
      const art = p2.locator('article[data-post-id]:not([data-liked])').first();
      const id = await art.getAttribute('data-post-id');
      const before = Number(await art.locator('[data-counter="post-likes"]').textContent());
      await Promise.all([p2.waitForURL((u) => u.hash === `#post-${id}`),
        art.locator('button', { hasText: /^Like$/ }).click()]);
      const u = new URL(p2.url());
      assert.equal(u.pathname, '/feed');
      const again = p2.locator(`article[data-post-id="${id}"]`);
      assert.equal(await again.getAttribute('data-liked'), '1');
      assert.equal(Number(await again.locator('[data-counter="post-likes"]').textContent()), before + 1);
      assert.equal(await again.locator('button').first().textContent(), 'Liked');
      await shot(p2, '10-no-js-liked', width);
    } finally {
      await plain.close();
    }
  });
}

// Issue 47, round two: what a person saw broken, walked at both widths
// with a screenshot each (build/screenshots/tour/r2-*): the post a
// like without script lands on is below the sticky header; a phone's
// header is two rows and its first screen shows posts, not just the
// composer; the reconcile form is one row and "100%" stays on its bar's
// line; no card opens with an empty band; a signed-in error page has
// its badges; a person followed from the suggestions without script
// stays listed, marked Following; the rating board says what rating is.
async function formLogin(width, login, password, js = true) {
  const context = await S.browser.newContext({ viewport: { width, height: 844 }, javaScriptEnabled: js });
  const page = await context.newPage();
  await page.goto(`${S.stack.base}/login`);
  await page.fill('form[action="/login"] [name=login]', login);
  await page.fill('form[action="/login"] [name=password]', password);
  await Promise.all([page.waitForURL((u) => u.pathname !== '/login'),
    page.click('form[action="/login"] button[type=submit]')]);
  return { context, page };
}

// Cards whose first element starts below the card's padding (an empty
// band at the top), as "selector: gap px".
const bandedCards = (page) => page.evaluate(() => [...document.querySelectorAll('main .card, main article')]
  .filter((c) => c.firstElementChild && getComputedStyle(c).display !== 'none').map((c) => {
    const pad = parseFloat(getComputedStyle(c).paddingTop) + parseFloat(getComputedStyle(c).borderTopWidth);
    const gap = c.firstElementChild.getBoundingClientRect().top - c.getBoundingClientRect().top - pad;
    return { what: `${c.tagName.toLowerCase()}.${c.className} > ${c.firstElementChild.tagName.toLowerCase()}`, gap };
  }).filter((x) => x.gap > 1).map((x) => `${x.what}: ${Math.round(x.gap)}px`));

for (const width of [1280, 390]) {
  test(`issue 47, the site people use, round two, at ${width} px`, async () => {
    const r2 = (page, name) => shot(page, `r2-${name}`, width);
    const me = `round2_${width}`;
    // a user who follows alice, bob and carol: a feed of posts
    const c = new Client(S.stack.base);
    const up = await c.signup(me, 'round-two-pass-1', `Round Two ${width}`);
    assert.equal(up.status, 303);
    await c.get('/t/general');	// the session's csrf
    for (const who of ['alice', 'bob', 'carol']) assert.equal((await c.post(`/follow/${who}`)).status, 303);

    // (1, 2) the feed: header rows, posts on the first screen, and a
    // like without script lands below the sticky header
    {
      const { context, page } = await formLogin(width, me, 'round-two-pass-1', false);
      try {
        await page.goto(`${S.stack.base}/feed`);
        const head = await page.locator('header.top').boundingBox();
        const vh = page.viewportSize().height;
        const tops = await page.locator('main article[data-post-id]').evaluateAll((as) =>
          as.map((a) => a.getBoundingClientRect().top));
        const onScreen = tops.filter((t) => t < vh - 40).length;
        await r2(page, '1-feed-first-screen');
        assert.ok(onScreen >= 2, `the first screen shows ${onScreen} posts`);
        if (width === 390) {
          assert.ok(head.height <= 84, `the phone's header is ${head.height}px high`);
          // the badges on one row, the links on the brand's
          const rows = await page.evaluate(() => [...document.querySelectorAll(
            'header.top .brand, header.top nav > *, header.top [data-badges] > a')]
            .map((e) => e.getBoundingClientRect()).filter((b) => b.width > 0)
            .map((b) => b.top + b.height / 2).sort((x, y) => x - y)
            .reduce((rs, m) => (rs.length && m - rs.at(-1) < 10 ? rs : [...rs, m]), []).length);
          assert.ok(rows <= 2, `the header's items sit on ${rows} rows`);
          assert.equal(await page.locator('#post-topic').isVisible(), false, 'the topic waits for the focus');
          await page.focus('#post-body');
          assert.equal(await page.locator('#post-topic').isVisible(), true, 'and shows with it, without script');
          await r2(page, '2-composer-focused');
        }
        // like the fifth post: the redirect's anchor must clear the header
        const art = page.locator('article[data-post-id]:not([data-liked])').nth(4);
        const id = await art.getAttribute('data-post-id');
        await Promise.all([page.waitForURL((u) => u.hash === `#post-${id}`),
          art.locator('button', { hasText: /^Like$/ }).click()]);
        const landed = await page.locator(`article[data-post-id="${id}"]`).boundingBox();
        const bottom = await page.evaluate(() => document.querySelector('header.top').getBoundingClientRect().bottom);
        await r2(page, '3-no-js-like-landed');
        assert.ok(landed.y >= bottom, `the post (top ${landed.y}) is below the header (bottom ${bottom})`);
        assert.ok(landed.y < page.viewportSize().height / 3, `and near the top (${landed.y})`);
      } finally {
        await context.close();
      }
    }

    // (7) following from the suggestions without script: the people
    // followed stay listed, marked Following, and the flash says so
    {
      const { context, page } = await formLogin(width, me, 'round-two-pass-1', false);
      try {
        await page.goto(`${S.stack.base}/people`);
        const logins = await page.locator('ul.people li[data-login]:not([data-following])').evaluateAll((ls) =>
          ls.slice(0, 2).map((l) => l.getAttribute('data-login')));
        assert.equal(logins.length, 2);
        for (const [k, who] of logins.entries()) {
          await Promise.all([page.waitForURL((u) => u.pathname === '/people' && u.search.includes('keep=')),
            page.click(`ul.people li[data-login="${who}"] form.follow button`)]);
          assert.equal(await page.locator('[data-flash="followed"]').count(), 1, 'the flash says it worked');
          for (const w of logins.slice(0, k + 1)) {
            const li = page.locator(`ul.people li[data-login="${w}"]`);
            assert.equal(await li.count(), 1, `${w} is still listed`);
            assert.equal(await li.getAttribute('data-following'), '1');
            assert.equal((await li.locator('form.follow button').textContent()).trim(), 'Following');
          }
        }
        await r2(page, '4-no-js-followed-kept');
        // a reload shows no flash again; the list still keeps them
        await page.reload();
        assert.equal(await page.locator('[data-flash]').count(), 0);
        assert.equal(await page.locator('ul.people li[data-following="1"]').count(), 2);
      } finally {
        await context.close();
      }
    }

    // (6) an error page for a signed-in user: its header's badges
    {
      const { context, page } = await formLogin(width, me, 'round-two-pass-1');
      try {
        const res = await page.goto(`${S.stack.base}/no/such/page`);
        assert.equal(res.status(), 404);
        for (const name of ['unread-notifications', 'unread-notices', 'unread-followed', 'red-dot']) {
          const el = page.locator(`header [data-badges] [data-counter="${name}"]`);
          assert.equal(await el.count(), 1, `the 404 page has the ${name} badge`);
        }
        // filled from /badges.json, as on every page
        await page.locator('header [data-counter][data-pending]').first().waitFor({ state: 'detached', timeout: 5000 });
        const json = await (await page.request.get(`${S.stack.base}/badges.json`)).json();
        assert.equal(await badge(page, 'unread-notices'), json.notices);
        assert.equal(await badge(page, 'unread-notifications'), json.notifications);
        await r2(page, '5-not-found-badges');
      } finally {
        await context.close();
      }
    }

    // (3, 4, 5, 8) the admin's pages
    {
      const { context, page } = await formLogin(width, 'admin', 'admin-pass-1');
      try {
        const admin = new Client(S.stack.base);
        assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
        await admin.get('/admin/reconcile');
        await admin.post('/admin/reconcile');
        const run = Number(S.stack.sqlite('select max(id) from reconcile_runs'));
        await waitFor(() => S.stack.sqlite(`select state from reconcile_runs where id = ${run}`) === 'done', 60000, 200);
        await page.goto(`${S.stack.base}/admin/reconcile`);
        await r2(page, '6-reconcile');
        const box = await page.locator('form[action="/admin/reconcile"] input[name=dry_run]').boundingBox();
        const label = await page.locator('form[action="/admin/reconcile"] label.check').boundingBox();
        const btn = await page.locator('form[action="/admin/reconcile"] button[type=submit]').boundingBox();
        const mid = (b) => b.y + b.height / 2;
        assert.ok(Math.abs(mid(box) - mid(btn)) < 8, `the checkbox (${mid(box)}) and the button (${mid(btn)}) share a row`);
        assert.ok(box.x < btn.x && label.x + label.width <= btn.x, 'the checkbox and its label come before the button');
        const bar = page.locator(`tr[data-run-id="${run}"] progress`);
        const pct = page.locator(`tr[data-run-id="${run}"] .pct`);
        assert.equal((await pct.textContent()).trim(), '100%');
        const [b, p] = [await bar.boundingBox(), await pct.boundingBox()];
        assert.ok(p.y < mid(b) && mid(b) < p.y + p.height && p.x >= b.x + b.width,
          `"100%" (${JSON.stringify(p)}) is on its bar's line (${JSON.stringify(b)})`);
        const banded = [];
        for (const url of ['/admin', '/admin/reconcile', `/admin/reconcile/${run}`, '/t/general', '/feed', `/u/${me}`]) {
          await page.goto(`${S.stack.base}${url}`);
          banded.push(...(await bandedCards(page)).map((x) => `${url} ${x}`));
        }
        await page.goto(`${S.stack.base}/admin`);
        await r2(page, '7-admin-cards');
        assert.deepEqual(banded, [], 'no card opens with an empty band');
        // rating: explained, and no second likes board offered
        assert.equal(await page.locator('main a[href*="by=rating"]').count(), 0);
        assert.match(await page.locator('main').textContent(), /Rating is per topic/);
        await page.goto(`${S.stack.base}/admin/top?by=rating`);
        assert.match(await page.locator('[data-note="rating"]').textContent(), /likes count/);
        await r2(page, '8-top-rating');
        await page.goto(`${S.stack.base}/t/general`);
        assert.match(await page.locator('main').textContent(), /By rating: the likes of their posts in this topic/);
        await r2(page, '9-topic-rating');
      } finally {
        await context.close();
      }
    }
  });
}

// Issue 47's items, walked at both widths with a screenshot each
// (build/screenshots/tour/r2-repost-*, r2-unrepost-*, r2-links-*,
// r2-settings-*, r2-draft-*, r2-flash-*): a followee's repost in the
// feed, marked and said ("@LOGIN reposted"), the post once; the
// "Reposted" button undoing it, with script and without, and the
// follower's feed losing the line; /settings (name, password, a wrong
// current password refused with its field marked); the one-time
// messages, each shown once; a draft's Publish button; links in a post.

// What sticks out of the window sideways: the page, or the element.
const sideways = (page) => page.evaluate(() => document.documentElement.scrollWidth -
  document.documentElement.clientWidth);
async function inWidth(page, loc, what) {
  const b = await loc.boundingBox();
  const vw = page.viewportSize().width;
  assert.ok(b, `${what} is laid out`);
  assert.ok(b.x >= 0 && b.x + b.width <= vw + 0.5, `${what} (${Math.round(b.x)}..${Math.round(b.x + b.width)}) within ${vw} px`);
  return b;
}

// The one-time message after a redirect: exactly one, the named one,
// on the first screen and within its width; a reload shows none.
async function flashOnce(page, code, text, what) {
  const f = page.locator(`[data-flash="${code}"]`);
  await f.waitFor();
  assert.equal(await page.locator('[data-flash]').count(), 1, `${what}: one message`);
  assert.equal(await f.getAttribute('role'), 'status');
  assert.match(await f.textContent(), text);
  assert.ok(await f.isVisible(), `${what}: the message is visible`);
  const b = await inWidth(page, f, `${what}: the message`);
  assert.ok(b.y >= 0 && b.y + b.height <= page.viewportSize().height, `${what}: the message is on the first screen (top ${b.y})`);
  assert.equal(await sideways(page), 0, `${what}: no sideways scroll`);
}
async function noFlashOnReload(page, what) {
  await page.reload();
  assert.equal(await page.locator('[data-flash]').count(), 0, `${what}: a reload shows no message again`);
}

for (const width of [1280, 390]) {
  test(`issue 47's items (reposts, unrepost, settings, messages, drafts, links) at ${width} px`, async () => {
    const shot2 = (page, name, full = false) => page.screenshot({
      path: path.join(S.shots, `r2-${name}-${width}.png`), fullPage: full });
    const reader = `i47_reader_${width}`;
    const rp = `i47_rp_${width}`;
    const pw = 'issue-47-pass-1';
    // the reader follows alice and the reposter; alice posts links
    const rc = new Client(S.stack.base);
    assert.equal((await rc.signup(reader, pw, `Reader ${width}`)).status, 303);
    const pc = new Client(S.stack.base);
    assert.equal((await pc.signup(rp, pw, `Reposter ${width}`)).status, 303);
    await rc.get('/t/general');
    for (const who of ['alice', rp]) assert.equal((await rc.post(`/follow/${who}`)).status, 303);
    const alicec = new Client(S.stack.base);
    assert.equal((await alicec.login('alice', 'password')).status, 303);
    await alicec.get('/t/general');
    const longUrl = `http://example.org/guides/a-rather-long-path-to-read-on-a-phone/${'section-'.repeat(4)}${width}`;
    const body = `Worth reading: https://example.com/tally?from=tour-${width}. And ${longUrl} too. ` +
      'But not javascript:alert(1) \u2014 that stays text.';
    let r = await alicec.post('/posts', { body, topic: '', publish: '1' });
    assert.equal(r.status, 303);
    const post = Number(r.location.split('/').pop());
    await drainQueue(S.stack);

    const rd = await formLogin(width, reader, pw);
    const rep = await formLogin(width, rp, pw);
    const errors = [];
    for (const p of [rd.page, rep.page]) {
      p.on('pageerror', (e) => errors.push(`pageerror: ${e}`));
      p.on('console', (m) => { if (m.type() === 'error' && !/status of 403/.test(m.text())) errors.push(`console: ${m.text()} (${m.location().url})`); });
      // which request a server error answered (the console does not say)
      p.on('response', (r) => { if (r.status() >= 500) errors.push(`${r.status()} ${r.request().method()} ${r.url()}`); });
    }
    try {
      // (6) links in a post: two links, nofollow ugc noopener; the
      // javascript: one stays text; the long one wraps on a phone
      {
        const page = rep.page;
        await page.goto(`${S.stack.base}/posts/${post}`);
        const art = page.locator(`article[data-post-id="${post}"]`);
        const links = art.locator('p:nth-child(2) a');
        assert.deepEqual(await links.evaluateAll((as) => as.map((a) => [a.getAttribute('href'), a.rel, a.textContent])), [
          [`https://example.com/tally?from=tour-${width}`, 'nofollow ugc noopener', `https://example.com/tally?from=tour-${width}`],
          [longUrl, 'nofollow ugc noopener', longUrl],
        ]);
        assert.equal(await page.locator('a[href^="javascript:" i]').count(), 0, 'no javascript: link');
        assert.match(await art.locator('p:nth-child(2)').textContent(), /not javascript:alert\(1\) \u2014 that stays text\./);
        for (let i = 0; i < 2; i++) await inWidth(page, links.nth(i), `link ${i + 1}`);
        assert.equal(await sideways(page), 0, 'no sideways scroll');
        // a link looks like one: underlined, not colour alone
        assert.match(await links.first().evaluate((a) => getComputedStyle(a).textDecorationLine), /underline/);
        await shot2(page, 'links-post');
      }

      // (2) the reposter reposts in place: the button says Reposted
      let before;
      {
        const page = rep.page;
        const art = page.locator(`article[data-post-id="${post}"]`);
        const n = art.locator('[data-counter="post-reposts"]');
        before = Number(await n.textContent());
        await art.locator('button', { hasText: /^Repost$/ }).click();
        await art.locator('button', { hasText: /^Reposted$/ }).waitFor();
        assert.equal(await art.getAttribute('data-reposted'), '1');
        assert.equal(Number(await n.textContent()), before + 1);
        assert.equal(new URL(page.url()).pathname, `/posts/${post}`, 'in place');
        await inWidth(page, art.locator('button', { hasText: /^Reposted$/ }), 'the Reposted button');
        await shot2(page, 'repost-1-pressed');
      }
      await drainQueue(S.stack);

      // (1) the reader's feed: the repost first, marked and said, the
      // post once although the reader follows its author too
      {
        const page = rd.page;
        await page.goto(`${S.stack.base}/feed`);
        const first = page.locator('main article[data-post-id]').first();
        assert.equal(await first.getAttribute('data-post-id'), String(post), 'the repost is the newest entry');
        assert.equal(await first.getAttribute('data-reposted-by'), rp);
        assert.equal(await page.locator(`article[data-post-id="${post}"]`).count(), 1, 'the post shows once');
        const via = first.locator('> p:first-child > span.via');
        assert.equal(await via.count(), 1, 'the "reposted" line is in the byline');
        assert.equal((await via.textContent()).trim(), `\u21bb @${rp} reposted`);
        assert.ok(await via.isVisible());
        assert.equal(await via.locator(`a[href="/u/${rp}"]`).count(), 1, 'naming the reposter, a link');
        // the line is a line of its own, above the author's
        const [vb, ab] = [await inWidth(page, via, 'the reposted line'),
          await first.locator(`> p:first-child > a[href="/u/alice"]`).boundingBox()];
        assert.ok(ab.y >= vb.y + vb.height - 1, 'the author below the reposted line');
        await inWidth(page, first, 'the reposted post');
        assert.equal(await sideways(page), 0, 'no sideways scroll');
        await shot2(page, 'repost-2-feed');
      }

      // (2) undone in place: Repost again, the count back
      {
        const page = rep.page;
        const art = page.locator(`article[data-post-id="${post}"]`);
        await art.locator('button', { hasText: /^Reposted$/ }).click();
        await art.locator('button', { hasText: /^Repost$/ }).waitFor();
        assert.equal(await art.getAttribute('data-reposted'), null);
        assert.equal(Number(await art.locator('[data-counter="post-reposts"]').textContent()), before);
        assert.equal(new URL(page.url()).pathname, `/posts/${post}`);
        await shot2(page, 'unrepost-1-js');
        await page.reload();
        assert.equal(Number(await art.locator('[data-counter="post-reposts"]').textContent()), before, 'as the next page says');
        assert.equal(await art.locator('button', { hasText: /^Repost$/ }).count(), 1);
      }
      await drainQueue(S.stack);
      {
        const page = rd.page;
        await page.goto(`${S.stack.base}/feed`);
        // (alice's own reposts from the demo data stay)
        assert.equal(await page.locator(`main article[data-reposted-by="${rp}"]`).count(), 0, 'the reposted entry is gone');
        assert.equal(await page.locator(`main article[data-post-id="${post}"] span.via`).count(), 0);
        assert.equal(await page.locator(`article[data-post-id="${post}"]`).count(), 1, 'the post stays, as alice\'s own');
        await shot2(page, 'unrepost-2-feed');
      }

      // (2) the same without script: a form POST to /posts/ID/unrepost
      // and back to the page, at the post
      {
        const { context, page } = await formLogin(width, rp, pw, false);
        try {
          await page.goto(`${S.stack.base}/u/alice`);
          const art = page.locator(`article[data-post-id="${post}"]`);
          await Promise.all([page.waitForURL((u) => u.hash === `#post-${post}`),
            art.locator('button', { hasText: /^Repost$/ }).click()]);
          assert.equal(new URL(page.url()).pathname, '/u/alice');
          assert.equal(await art.getAttribute('data-reposted'), '1');
          assert.equal(Number(await art.locator('[data-counter="post-reposts"]').textContent()), before + 1);
          await shot2(page, 'unrepost-3-no-js-reposted');
          await drainQueue(S.stack);
          await rd.page.goto(`${S.stack.base}/feed`);
          assert.equal(await rd.page.locator(`article[data-reposted-by="${rp}"]`).count(), 1, 'back in the reader\'s feed');
          const [req] = await Promise.all([
            page.waitForRequest((q) => q.method() === 'POST' && new URL(q.url()).pathname === `/posts/${post}/unrepost`),
            art.locator('button', { hasText: /^Reposted$/ }).click()]);
          assert.ok(req);
          // the page it is sent back to (the same address, #post-ID)
          await page.locator(`article[data-post-id="${post}"]:not([data-reposted])`).waitFor();
          assert.equal(new URL(page.url()).pathname, '/u/alice');
          assert.equal(await art.getAttribute('data-reposted'), null);
          assert.equal(Number(await art.locator('[data-counter="post-reposts"]').textContent()), before);
          assert.equal((await art.locator('button[formaction$="repost"]').textContent()), 'Repost');
          const landed = await art.boundingBox();
          assert.ok(landed.y >= 0 && landed.y < page.viewportSize().height, `the post is on screen (top ${landed.y})`);
          await shot2(page, 'unrepost-4-no-js-undone');
        } finally {
          await context.close();
        }
        await drainQueue(S.stack);
        await rd.page.goto(`${S.stack.base}/feed`);
        assert.equal(await rd.page.locator(`article[data-reposted-by="${rp}"]`).count(), 0, 'and gone again');
      }

      // (3, 4) /settings, reached from the profile: the name saved and
      // said once; a wrong current password refused; the change said once
      {
        const page = rd.page;
        await page.goto(`${S.stack.base}/u/${reader}`);
        await Promise.all([page.waitForURL((u) => u.pathname === '/settings'),
          page.click('main a[href="/settings"]')]);
        assert.equal(await page.inputValue('input[name=name]'), `Reader ${width}`);
        for (const sel of ['input[name=name]', 'input[name=current]', 'input[name=password]',
          'button:has-text("Save name")', 'button:has-text("Change password")']) {
          assert.ok(await page.locator(`main ${sel}`).isVisible(), `${sel} is visible`);
          await inWidth(page, page.locator(`main ${sel}`), sel);
        }
        assert.equal(await sideways(page), 0);
        // each form's heading sits with its own fields, nearer them than
        // the form above
        const [saveName, pwHead, pwNote] = await Promise.all([page.locator('button:has-text("Save name")').boundingBox(),
          page.locator('main h2', { hasText: 'Password' }).boundingBox(), page.locator('main form p.muted').boundingBox()]);
        const above = pwHead.y - (saveName.y + saveName.height);
        const below = pwNote.y - (pwHead.y + pwHead.height);
        assert.ok(below < above, `"Password" is ${Math.round(above)} px below the name form and ${Math.round(below)} px above its own text`);
        await shot2(page, 'settings-1-page', true);
        await page.fill('input[name=name]', `Ada Reader ${width}`);
        await Promise.all([page.waitForURL((u) => u.pathname === '/settings'),
          page.click('button:has-text("Save name")')]);
        await flashOnce(page, 'name-saved', /Your name is saved\./, 'name saved');
        // as wide as the form it answers
        const [fb, cb] = [await page.locator('[data-flash]').boundingBox(), await page.locator('main section.card').boundingBox()];
        assert.ok(Math.abs(fb.x - cb.x) < 1 && Math.abs(fb.width - cb.width) < 1, 'the message lines up with the settings card');
        assert.equal(await page.inputValue('input[name=name]'), `Ada Reader ${width}`);
        await shot2(page, 'settings-2-name-saved');
        await noFlashOnReload(page, 'name saved');
        assert.match(await page.locator('header').textContent(), new RegExp(`@${reader}`));

        // a wrong current password: 403, the field marked and said, the
        // name kept, nothing changed
        await page.fill('input[name=current]', 'not-my-password');
        await page.fill('input[name=password]', 'a-new-password-2');
        const [res] = await Promise.all([
          page.waitForResponse((x) => x.request().method() === 'POST' && new URL(x.url()).pathname === '/settings'),
          page.click('button:has-text("Change password")')]);
        assert.equal(res.status(), 403);
        await page.locator('input[name=current][aria-invalid="true"]').waitFor();
        const err = page.locator('main p.flash.error');
        assert.match(await err.textContent(), /current password is wrong/);
        assert.ok(await err.isVisible());
        await inWidth(page, err, 'the error');
        const why = page.locator(`main #${await page.getAttribute('input[name=current]', 'aria-describedby')}`);
        assert.match(await why.textContent(), /not your current password/, 'the field says why');
        assert.ok(await why.isVisible());
        assert.equal(await page.inputValue('input[name=name]'), `Ada Reader ${width}`, 'the name kept');
        assert.equal(await page.locator('[data-flash]').count(), 0);
        assert.equal(await sideways(page), 0);
        await shot2(page, 'settings-3-wrong-current', true);
        assert.equal((await new Client(S.stack.base).login(reader, pw)).status, 303, 'the password unchanged');

        await page.fill('input[name=current]', pw);
        await page.fill('input[name=password]', 'a-new-password-2');
        await Promise.all([page.waitForURL((u) => u.pathname === '/settings'),
          page.click('button:has-text("Change password")')]);
        await flashOnce(page, 'password-saved', /Your password is changed/, 'password saved');
        await shot2(page, 'settings-4-password-saved');
        await noFlashOnReload(page, 'password saved');
        assert.equal((await new Client(S.stack.base).login(reader, 'a-new-password-2')).status, 303, 'the new password');
      }

      // (4, 5) a draft: said once, its page's Publish button; published:
      // said once, and the author sees the post in the feed
      {
        const page = rd.page;
        await page.goto(`${S.stack.base}/feed`);
        const text = `a draft from the tour at ${width}`;
        await page.fill('#post-body', text);
        await page.uncheck('main form[action="/posts"] input[type=checkbox][name=publish]');
        await Promise.all([page.waitForURL((u) => /^\/posts\/\d+$/.test(u.pathname)),
          page.click('main form[action="/posts"] button[type=submit]')]);
        const id = new URL(page.url()).pathname.split('/')[2];
        await flashOnce(page, 'draft-saved', /Saved as a draft/, 'draft saved');
        const art = page.locator(`article[data-post-id="${id}"]`);
        assert.match(await art.locator('> p:first-child').textContent(), /draft/);
        const publish = page.locator('main .actions button', { hasText: /^Publish$/ });
        assert.ok(await publish.isVisible(), 'the Publish button');
        await inWidth(page, publish, 'the Publish button');
        assert.match(await page.locator('main section.comments').textContent(), /Comments open once it is published\./,
          'no "Comments" heading over nothing');
        await shot2(page, 'draft-1-saved');
        await noFlashOnReload(page, 'draft saved');
        assert.equal(await page.locator('main .actions button', { hasText: /^Publish$/ }).count(), 1);
        await Promise.all([page.waitForURL((u) => u.pathname === `/posts/${id}`),
          publish.click()]);
        await flashOnce(page, 'published', /^Published\.$/, 'published');
        assert.equal(await page.locator('main .actions button', { hasText: /^Publish$/ }).count(), 0, 'no Publish button once published');
        assert.doesNotMatch(await art.locator('> p:first-child').textContent(), /draft/);
        assert.match(await art.locator('> p:nth-child(2)').textContent(), new RegExp(`^${text}$`));
        await shot2(page, 'draft-2-published');
        await noFlashOnReload(page, 'published');
        await page.goto(`${S.stack.base}/feed`);
        const mine = page.locator(`main article[data-post-id="${id}"]`);
        assert.equal(await mine.count(), 1, 'the author sees the post in the feed');
        assert.ok(await mine.isVisible());
        await shot2(page, 'draft-3-in-feed');
      }
    } finally {
      await rd.context.close();
      await rep.context.close();
    }
    assert.deepEqual(errors, []);

    // (4) follow and unfollow from a profile without script: said once
    {
      const { context, page } = await formLogin(width, reader, 'a-new-password-2', false);
      try {
        await page.goto(`${S.stack.base}/u/carol`);
        await Promise.all([page.waitForURL((u) => u.pathname === '/u/carol'),
          page.click('main form.follow button')]);
        await flashOnce(page, 'followed', /^Followed\.$/, 'followed');
        assert.equal(await page.locator('main section[data-login="carol"]').getAttribute('data-following'), '1');
        await shot2(page, 'flash-1-followed');
        await noFlashOnReload(page, 'followed');
        await Promise.all([page.waitForURL((u) => u.pathname === '/u/carol'),
          page.click('main form.follow button', { hasText: 'Following' })]);
        await flashOnce(page, 'unfollowed', /^Unfollowed\.$/, 'unfollowed');
        assert.equal(await page.locator('main section[data-login="carol"]').getAttribute('data-following'), null);
        await shot2(page, 'flash-2-unfollowed');
        await noFlashOnReload(page, 'unfollowed');
      } finally {
        await context.close();
      }
    }

    // (4) the admin's notice sent and red dot lit: said once
    {
      const { context, page } = await formLogin(width, 'admin', 'admin-pass-1');
      try {
        await page.goto(`${S.stack.base}/admin`);
        await page.fill('form[action="/admin/notices"] [name=title]', `Tour notice ${width}`);
        await page.fill('form[action="/admin/notices"] [name=body]', 'Nothing to worry about.');
        await Promise.all([page.waitForURL((u) => u.pathname === '/admin'),
          page.click('form[action="/admin/notices"] button[type=submit]')]);
        await flashOnce(page, 'notice-sent', /Notice sent to everyone\./, 'notice sent');
        await shot2(page, 'flash-3-notice-sent');
        await noFlashOnReload(page, 'notice sent');
        await Promise.all([page.waitForURL((u) => u.pathname === '/admin'),
          page.click('form[action="/admin/red-dot"] button[type=submit]')]);
        await flashOnce(page, 'red-dot', /The red dot is lit for everyone\./, 'red dot');
        await shot2(page, 'flash-4-red-dot');
        await noFlashOnReload(page, 'red dot');
      } finally {
        await context.close();
      }
    }
  });
}
