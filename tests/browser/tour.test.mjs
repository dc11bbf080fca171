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
import { Client } from '../lib/stack.mjs';

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
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()}`); });
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
