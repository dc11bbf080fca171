// reconcile.test.mjs -- a real browser (Debian's chromium driven by
// playwright-core) on a stack with the demo data plus seeded volume and
// some drift in the counters table: the admin logs in through the form,
// starts a reconciliation from /admin/reconcile, watches the progress bar
// rise to 100 (the page reloads itself each second while a run is
// active: www/tally.js), opens the run's drift report with its SVG chart,
// and leaves a screenshot in build/screenshots/reconcile.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { launch } from '../lib/browser.mjs';

import { startStack, sleep, waitFor, BIN } from '../lib/stack.mjs';
import { faults } from '../lib/counts.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SHOT = path.join(REPO, 'build', 'screenshots', 'reconcile.png');
// Drifted counters in these families (every 40th key).  A run no longer
// waits for its keys to go quiet (settle.h) and ends in well under a
// second here; to watch its bar move, each settle stops 700 ms at the
// fault point reconcile-fix (armed for this run only).
const DRIFT = ['user_posts', 'user_followers', 'user_following', 'post_comments', 'user_topic_posts'];

let stack;
let browser;

const num = (sql) => Number(stack.sqlite(sql));

before(async () => {
  stack = await startStack({ demo: '1', env: { TALLY_RECONCILE_EVERY: '0', TALLY_FAULT: 'reconcile-fix:sleep=700:8' } });
  faults.disarm(stack, 'reconcile-fix', 8);
  // The worker's own first run (Redis was empty) comes and goes first.
  await waitFor(() => stack.redis('GET', '{tally}:gen') === '1' &&
    num("SELECT COUNT(*) FROM reconcile_runs WHERE state IN ('queued', 'running')") === 0, 40000, 100);
  const seed = spawnSync(path.join(BIN, 'tallyctl'), ['seed', '--users', '2000', '--posts', '20000',
    '--follows', '40000', '--likes', '100000'], { env: stack.env, encoding: 'utf8' });
  assert.equal(seed.status, 0, seed.stderr);
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test('the admin starts a run, watches its progress reach 100, reads the drift report', async (t) => {
  stack.tallyctl('flush');
  const expected = {};
  for (const f of DRIFT) {
    expected[f] = num(`UPDATE counters SET value = value + 1 WHERE name='${f}'
      AND CAST(key AS INTEGER) % 40 = 0; SELECT changes();`);
    assert.ok(expected[f] > 0, f);
  }

  const context = await browser.newContext({ viewport: { width: 1100, height: 900 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`); });
    // net::ERR_ABORTED: a request (the favicon) cut short by the page's
    // own reload -- what a navigation does, not a failure.
    page.on('requestfailed', (r) => {
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
    });
    page.on('response', (r) => { if (r.status() >= 400) errors.push(`${r.status()} ${r.url()}`); });
    let loads = 0;
    page.on('load', () => { loads++; });

    // Log in through the form.
    assert.equal((await page.goto(`${stack.base}/login`)).status(), 200);
    await page.fill('form[action="/login"] [name=login]', 'admin');
    await page.fill('form[action="/login"] [name=password]', 'admin-pass-1');
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/feed'),
      page.click('form[action="/login"] button[type=submit]'),
    ]);

    // The runs page: start a run with the button.
    assert.equal((await page.goto(`${stack.base}/admin/reconcile`)).status(), 200);
    const id = num('SELECT coalesce(max(id), 0) FROM reconcile_runs') + 1;
    faults.arm(stack, 'reconcile-fix');
    const start = page.locator('form[action="/admin/reconcile"] button[type=submit]');
    assert.equal((await start.textContent()).trim(), 'Start a run');
    const [posted] = await Promise.all([
      page.waitForResponse((r) => r.request().method() === 'POST' && new URL(r.url()).pathname === '/admin/reconcile'),
      start.click(),
    ]);
    assert.equal(posted.status(), 303);
    const row = page.locator(`tr[data-run-id="${id}"]`);
    await row.waitFor({ timeout: 10000 });
    assert.equal(new URL(page.url()).pathname, '/admin/reconcile');

    // Watch it: the page reloads itself while the run is active.
    const loadsAtStart = loads;
    const seen = [];
    const end = Date.now() + 60000;
    for (;;) {
      assert.ok(Date.now() < end, `run ${id} did not finish: ${JSON.stringify(seen.slice(-5))}`);
      let s;
      try {
        s = await row.evaluate((tr) => ({
          state: tr.getAttribute('data-state'),
          progress: Number(tr.getAttribute('data-progress')),
          bar: Number(tr.querySelector('progress')?.getAttribute('value')),
          max: Number(tr.querySelector('progress')?.getAttribute('max')),
        }), undefined, { timeout: 5000 });
      } catch {
        continue;		// the page was reloading under us
      }
      if (!seen.length || seen.at(-1).state !== s.state || seen.at(-1).progress !== s.progress) seen.push(s);
      if (s.state === 'done' || s.state === 'failed') break;
      await sleep(100);
    }
    t.diagnostic(`run ${id} seen: ${seen.map((s) => `${s.state} ${s.progress}%`).join(', ')}`);
    const last = seen.at(-1);
    assert.deepEqual(last, { state: 'done', progress: 100, bar: 100, max: 100 });
    const progress = seen.map((s) => s.progress);
    assert.deepEqual(progress, [...progress].sort((a, b) => a - b), `progress only rises: ${progress}`);
    const running = seen.filter((s) => s.state === 'running');
    assert.ok(running.length >= 2, `the bar was seen moving: ${JSON.stringify(seen)}`);
    assert.ok(running.some((s) => s.progress > 0 && s.progress < 100));
    for (const s of seen) assert.equal(s.bar, s.progress, 'the <progress> bar shows data-progress');
    assert.ok(loads - loadsAtStart >= 2, `the page reloaded itself (${loads - loadsAtStart} loads)`);
    // done: it stops reloading.  (The row can be read before its
    // document's load event: wait for it, then mark the document -- a
    // reload would drop the mark.)
    await page.waitForLoadState('load');
    await page.evaluate(() => { window.tallySettled = 1; });
    const settled = loads;
    await sleep(2500);
    assert.equal(await page.evaluate(() => window.tallySettled), 1, 'no reload once no run is active');
    assert.equal(loads, settled, 'no reload once no run is active');

    // The run's drift report.
    await Promise.all([
      page.waitForURL((u) => u.pathname === `/admin/reconcile/${id}`),
      page.click(`a[href="/admin/reconcile/${id}"]`),
    ]);
    await page.locator(`[data-run-id="${id}"][data-state="done"][data-progress="100"]`).waitFor({ timeout: 5000 });
    const report = await page.locator('tr[data-family]').evaluateAll((trs) => trs.map((tr) => ({
      family: tr.getAttribute('data-family'),
      checked: Number(tr.getAttribute('data-checked')),
      wrong: Number(tr.getAttribute('data-wrong')),
      fixed: Number(tr.getAttribute('data-fixed')),
    })));
    assert.equal(report.length, 14, 'every family has a row (like_count, the 12 families, the notification groups)');
    assert.ok(report.find((r) => r.family === 'note_groups').checked > 0);
    assert.ok(report.find((r) => r.family === 'post_likes').checked > 10000);
    const wrong = Object.fromEntries(report.filter((r) => r.wrong > 0).map((r) => [r.family, r.wrong]));
    assert.deepEqual(wrong, expected);
    for (const r of report) assert.equal(r.fixed, r.wrong, r.family);
    const chart = page.locator('svg.chart');
    await chart.waitFor({ state: 'visible', timeout: 5000 });
    const total = Object.values(expected).reduce((a, b) => a + b);
    const bar = chart.locator('rect', { has: page.locator('title', { hasText: `run ${id}: ${total} wrong` }) });
    assert.equal(await bar.count(), 1, 'the chart has a bar for the run');
    assert.equal(Number(await bar.getAttribute('data-value')), total);
    assert.ok(Number(await bar.getAttribute('height')) > 0);

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
