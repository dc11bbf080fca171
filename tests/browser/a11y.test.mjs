// a11y.test.mjs -- every page of docs/INTERFACE.md §2 in a real browser at 1280 and
// 390 px: axe-core (@axe-core/playwright) finds no serious or critical
// violation, no page scrolls sideways on a phone, no table cell splits a
// word across lines and no table sticks out of its box.  Screenshots of
// each page at both widths go to build/screenshots/pages/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';

import { AxeBuilder } from '@axe-core/playwright';

import { demoSession } from '../lib/browser.mjs';
import { Client, waitFor } from '../lib/stack.mjs';
import { drainQueue } from '../lib/social.mjs';

const S = demoSession('pages');
const WIDTHS = [1280, 390];

// A browser context logged in as login (through the form).
async function loggedIn(width, login, password) {
  const context = await S.browser.newContext({ viewport: { width, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${S.stack.base}/login`);
  await page.fill('form[action="/login"] [name=login]', login);
  await page.fill('form[action="/login"] [name=password]', password);
  await Promise.all([
    page.waitForURL((u) => u.pathname !== '/login'),
    page.click('form[action="/login"] button[type=submit]'),
  ]);
  return { context, page };
}

// Checks one page; returns its problems as text lines.
async function check(page, url, name, width) {
  const problems = [];
  const res = await page.goto(`${S.stack.base}${url}`);
  assert.ok(res.status() < 500, `${url}: ${res.status()}`);
  // axe in the page itself (legacy mode: these pages have no frames,
  // which is what the other mode is for; it opens a blank page and loads
  // axe a second time for every analysis), reporting violations only
  // (the passes are not looked at): 105 -> 60 s for the 60 analyses
  const axe = await new AxeBuilder({ page }).setLegacyMode()
    .options({ resultTypes: ['violations'] }).analyze();
  for (const v of axe.violations) {
    if (v.impact !== 'serious' && v.impact !== 'critical') continue;
    problems.push(`${url} @${width}: ${v.id} (${v.impact}): ${v.nodes.slice(0, 3)
      .map((n) => n.target.join(' ')).join(' | ')}`);
  }
  const over = await page.evaluate(() => document.documentElement.scrollWidth -
    document.documentElement.clientWidth);
  if (over > 0) problems.push(`${url} @${width}: scrolls sideways by ${over}px`);
  // A table cell never splits a word across lines ("fixe|d",
  // "user_fo|llowers"): a word may break after its '-'; only free text
  // longer than any column may break.
  const split = await page.evaluate(() => {
    const out = [];
    for (const cell of document.querySelectorAll('th, td')) {
      const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        for (const m of n.data.matchAll(/[^\s-]+-?/g)) {
          if (m[0].length > 16) continue;
          const r = document.createRange();
          r.setStart(n, m.index);
          r.setEnd(n, m.index + m[0].length);
          const lines = new Set([...r.getClientRects()].filter((x) => x.width > 0)
            .map((x) => Math.round(x.bottom)));
          if (lines.size > 1) out.push(m[0]);
        }
      }
    }
    return out;
  });
  if (split.length) problems.push(`${url} @${width}: words split in table cells: ${[...new Set(split)].join(' ')}`);
  // Nor does a table stick out of its card (unless the box around it
  // scrolls: .wide).
  const wide = await page.evaluate(() => [...document.querySelectorAll('table')].filter((t) => {
    const box = t.parentElement;
    if (getComputedStyle(box).overflowX !== 'visible') return false;
    const pad = parseFloat(getComputedStyle(box).paddingRight) || 0;
    return t.getBoundingClientRect().right > box.getBoundingClientRect().right - pad + 1;
  }).map((t) => t.className || 'table'));
  if (wide.length) problems.push(`${url} @${width}: tables wider than their box: ${wide.join(' ')}`);
  await page.screenshot({ path: path.join(S.shots, `${name}-${width}.png`) });
  return problems;
}

test('every page: no serious or critical axe violation, no sideways scroll at 390 px, no word split in a table cell', async () => {
  const post = Number(S.stack.sqlite(`select p.id from posts p join users u on u.id = p.user_id
    where u.login = 'alice' and p.status = 1 order by p.id desc limit 1`));
  const run = await (async () => {
    const admin = new Client(S.stack.base);
    assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
    await admin.get('/admin/reconcile');
    await admin.post('/admin/reconcile');
    const id = Number(S.stack.sqlite('select max(id) from reconcile_runs'));
    // a run's page reloads itself each second while the run is active
    // (tally.js), which would pull the page from under axe
    await waitFor(() => ['done', 'failed'].includes(
      S.stack.sqlite(`select state from reconcile_runs where id = ${id}`)), 60000, 200);
    return id;
  })();
  // Issue 47's pages: /settings, a feed with a followee's repost (its
  // "@LOGIN reposted" line), a post with links, a draft with its
  // Publish button -- the reader's
  const linked = await (async () => {
    const reader = new Client(S.stack.base);
    assert.equal((await reader.signup('a11y_reader', 'a11y-pass-1', 'Ally Reader')).status, 303);
    const rp = new Client(S.stack.base);
    assert.equal((await rp.signup('a11y_rp', 'a11y-pass-1', 'Ally Reposter')).status, 303);
    const alice = new Client(S.stack.base);
    assert.equal((await alice.login('alice', 'password')).status, 303);
    for (const c of [reader, rp, alice]) await c.get('/t/general');
    assert.equal((await reader.post('/follow/a11y_rp')).status, 303);
    const r = await alice.post('/posts', { body: 'Links: https://example.com/a?b=1 and ' +
      'http://example.org/a-long-path/to-wrap/on-a-phone. Not javascript:alert(1).', topic: '', publish: '1' });
    const id = Number(r.location.split('/').pop());
    assert.equal((await rp.post(`/posts/${id}/repost`)).status, 303);
    const d = await reader.post('/posts', { body: 'a draft of mine', topic: '', publish: '0' });
    await drainQueue(S.stack);
    const feed = await reader.get('/feed');
    assert.match(feed.text, new RegExp(`<article data-post-id="${id}"[^>]* data-reposted-by="a11y_rp"`), 'the feed has the repost line');
    return { id, draft: Number(d.location.split('/').pop()) };
  })();
  const reader = [
    ['/settings', 'settings'], ['/feed', 'feed-repost'], [`/posts/${linked.id}`, 'post-links'],
    [`/posts/${linked.draft}`, 'draft'],
  ];
  const anon = [
    ['/login', 'login'], ['/signup', 'signup'], ['/u/alice', 'profile-anon'],
    ['/people?q=al', 'people-anon'], ['/topics', 'topics-anon'], ['/no/such/page', 'not-found'],
  ];
  const user = [
    ['/feed', 'feed'], ['/u/alice', 'profile'], ['/u/alice/followers', 'followers'],
    ['/u/alice/following', 'following'], [`/posts/${post}`, 'post'], [`/posts/${post}/edit`, 'edit'],
    ['/t/general', 'topic'], ['/notifications', 'notifications'], ['/notices', 'notices'],
    ['/news', 'news'], ['/people', 'people'], ['/people?q=bo', 'people-search'], ['/topics', 'topics'],
    ['/followed', 'followed'], ['/drafts', 'drafts'], ['/no/such/page', 'not-found-user'],
  ];
  const admin = [
    ['/admin', 'admin'], ['/admin/top?by=followers&n=10', 'top'],
    ['/admin/top?by=rating&n=10', 'top-rating'], ['/admin/reconcile', 'runs'],
    [`/admin/reconcile/${run}`, 'run'],
  ];
  // The visitor's, the user's and the admin's pages at each width, the
  // three in their own browser contexts side by side (axe's analysis is
  // most of the time; one after another took over a minute).
  const pages = async (width, who, list) => {
    let ctx, page;
    if (who === null) {
      ctx = await S.browser.newContext({ viewport: { width, height: 900 } });
      page = await ctx.newPage();
    } else ({ context: ctx, page } = await loggedIn(width, who[0], who[1]));
    const out = [];
    for (const [url, name] of list) out.push(...await check(page, url, name, width));
    await ctx.close();
    return out;
  };
  const problems = [];
  for (const width of WIDTHS) {
    const found = await Promise.all([pages(width, null, anon),
      pages(width, ['alice', 'password'], user), pages(width, ['admin', 'admin-pass-1'], admin),
      pages(width, ['a11y_reader', 'a11y-pass-1'], reader)]);
    problems.push(...found.flat());
  }
  assert.deepEqual(problems, []);
});
