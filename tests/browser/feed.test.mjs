// feed.test.mjs -- a real browser (Debian's chromium driven by
// playwright-core) on a stack with the demo data: a new user signs up
// and logs in through the forms, follows alice from her profile with the
// Follow button, and finds alice's posts on the feed.  Leaves a
// screenshot in build/screenshots/feed.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launch } from '../lib/browser.mjs';

import { startStack } from '../lib/stack.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHOT = path.join(REPO, 'build', 'screenshots', 'feed.png');
const LOGIN = 'browser_fay';
const PASSWORD = 'feed-password-1';

let stack;
let browser;

before(async () => {
  stack = await startStack({ demo: '1' });
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test('sign up, log in, follow alice, see her posts on the feed', async () => {
  const alicePosts = stack.sqlite(`select p.id from posts p join users u on u.id = p.user_id
    where u.login = 'alice' and p.status = 1 and p.is_deleted = 0 order by p.published_at desc, p.id desc`)
    .split('\n').filter(Boolean).map(Number);
  assert.ok(alicePosts.length > 0, 'the demo data gives alice published posts');

  const context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`); });
    // (a navigation aborts what the page it leaves still loads)
    page.on('requestfailed', (r) => {
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => { if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`); });

    // Sign up through the form, log out, log in through the form.
    assert.equal((await page.goto(`${stack.base}/signup`)).status(), 200);
    await page.fill('form[action="/signup"] [name=login]', LOGIN);
    await page.fill('form[action="/signup"] [name=name]', 'Fay Feed');
    await page.fill('form[action="/signup"] [name=password]', PASSWORD);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/feed'),
      page.click('form[action="/signup"] button[type=submit]'),
    ]);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/login'),
      page.click('header form[action="/logout"] button[type=submit]'),
    ]);
    await page.fill('form[action="/login"] [name=login]', LOGIN);
    await page.fill('form[action="/login"] [name=password]', PASSWORD);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/feed'),
      page.click('form[action="/login"] button[type=submit]'),
    ]);
    await page.locator(`header a[data-me="${LOGIN}"]`).waitFor({ timeout: 5000 });

    // A new user's feed is empty.
    assert.equal((await page.goto(`${stack.base}/feed`)).status(), 200);
    assert.equal(await page.locator('article[data-post-id]').count(), 0);

    // alice's profile: her posts and a Follow button.
    assert.equal((await page.goto(`${stack.base}/u/alice`)).status(), 200);
    const onProfile = await page.locator('article[data-post-id]').evaluateAll(
      (els) => els.map((e) => Number(e.getAttribute('data-post-id'))));
    assert.deepEqual(onProfile, alicePosts.slice(0, 30));
    const follow = page.locator('form[action="/follow/alice"] button[type=submit]');
    assert.equal((await follow.textContent()).trim(), 'Follow');
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/u/alice'),
      follow.click(),
    ]);
    await page.locator('form[action="/unfollow/alice"] button[data-following="1"]').waitFor({ timeout: 5000 });
    assert.equal(stack.sqlite(`select count(*) from follows f join users a on a.id = f.follower_id
      join users b on b.id = f.followee_id where a.login = '${LOGIN}' and b.login = 'alice'`), '1');

    // Back to the feed: alice's posts, newest first.
    assert.equal((await page.goto(`${stack.base}/feed`)).status(), 200);
    const items = page.locator('article[data-post-id]');
    await items.first().waitFor({ timeout: 5000 });
    const onFeed = await items.evaluateAll((els) => els.map((e) => ({
      id: Number(e.getAttribute('data-post-id')),
      by: e.getAttribute('data-reposted-by'),
      author: e.querySelector('p > a[href^="/u/"]')?.getAttribute('href'),
    })));
    assert.ok(onFeed.length > 0);
    // alice's posts, and the posts she reposted (marked so), each once
    // at its newest place (docs/INTERFACE.md, /feed)
    assert.deepEqual(onFeed.filter((p) => p.by === null).map((p) => p.author),
      onFeed.filter((p) => p.by === null).map(() => '/u/alice'), 'every item not a repost is alice\'s');
    assert.deepEqual(onFeed.filter((p) => p.by !== null).map((p) => p.by),
      onFeed.filter((p) => p.by !== null).map(() => 'alice'), 'every repost is alice\'s');
    const placed = stack.sqlite(`select id from (select p.id, p.published_at as at from posts p
      join users u on u.id = p.user_id where u.login = 'alice' and p.status = 1 and p.is_deleted = 0
      union all select r.post_id, r.created_at from reposts r join users u on u.id = r.user_id
      join posts p on p.id = r.post_id where u.login = 'alice' and p.status = 1 and p.is_deleted = 0) as h
      group by id order by max(at) desc, id desc limit 30`).split('\n').filter(Boolean).map(Number);
    assert.deepEqual(onFeed.map((p) => p.id), placed);

    fs.mkdirSync(path.dirname(SHOT), { recursive: true });
    fs.rmSync(SHOT, { force: true });
    await page.screenshot({ path: SHOT, fullPage: true });
    const st = fs.statSync(SHOT);
    assert.ok(st.size > 1000, `screenshot ${SHOT} is ${st.size} bytes`);
    assert.equal(fs.readFileSync(SHOT).subarray(1, 4).toString(), 'PNG');

    assert.deepEqual(errors, []);
  } finally {
    await context.close();
  }
});
