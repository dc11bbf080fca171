// login.test.mjs -- a real browser (Debian's chromium driven by
// playwright-core) signs up, logs out and logs in through the forms,
// and leaves a screenshot in build/screenshots/login.png.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';

import { launch } from '../lib/browser.mjs';

import { startStack, ROOT } from '../lib/stack.mjs';

const SHOTS = path.join(ROOT, 'build', 'screenshots');
const LOGIN = 'browser_bea';
const PASSWORD = 'correct horse 1';

let stack;
let browser;

before(async () => {
  stack = await startStack();
  browser = await launch();
});

after(async () => {
  await browser?.close();
  await stack?.stop();
});

test('sign up, log out and log in through the forms', async () => {
  const context = await browser.newContext({ viewport: { width: 1000, height: 700 } });
  try {
    const page = await context.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(`pageerror: ${e}`));
    page.on('console', (m) => { if (m.type() === 'error') errors.push(`console: ${m.text()} (${m.location().url})`); });
    // (a navigation aborts what the page it leaves still loads)
    page.on('requestfailed', (r) => {
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') errors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`);
    });
    // the page's own resources (css, js, icon) must all load
    page.on('response', (r) => {
      if (r.request().resourceType() !== 'document' && r.status() >= 400) errors.push(`${r.status()} ${r.url()}`);
    });

    // Sign up.
    assert.equal((await page.goto(`${stack.base}/signup`)).status(), 200);
    await page.fill('form[action="/signup"] [name=login]', LOGIN);
    await page.fill('form[action="/signup"] [name=name]', 'Bea <Browser>');
    await page.fill('form[action="/signup"] [name=password]', PASSWORD);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/feed'),
      page.click('form[action="/signup"] button[type=submit]'),
    ]);
    await assert.doesNotReject(page.locator(`header a[data-me="${LOGIN}"]`).waitFor({ timeout: 5000 }));
    assert.equal(stack.sqlite(`select name from users where login = '${LOGIN}'`), 'Bea <Browser>');
    const cookies = await context.cookies();
    const sid = cookies.find((c) => c.name === 'sid');
    assert.ok(sid, 'a session cookie');
    assert.equal(sid.httpOnly, true);
    assert.equal(sid.sameSite, 'Lax');

    // Log out with the header's button.
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/login'),
      page.click('header form[action="/logout"] button[type=submit]'),
    ]);
    assert.equal(await page.locator('header [data-me]').count(), 0, 'logged out');
    assert.equal((await context.cookies()).some((c) => c.name === 'sid'), false);

    // A wrong password first: the 401 page shows the form again.
    await page.fill('form[action="/login"] [name=login]', LOGIN);
    await page.fill('form[action="/login"] [name=password]', 'wrong password');
    const [bad] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/login') && r.request().method() === 'POST'),
      page.click('form[action="/login"] button[type=submit]'),
    ]);
    assert.equal(bad.status(), 401);
    await page.waitForLoadState();
    await assert.doesNotReject(page.getByRole('alert').filter({ hasText: 'Wrong login or password' }).waitFor({ timeout: 5000 }));
    // the browser console reports the 401 document itself; that one is expected
    const expected = (e) => /status of 401 .*\/login\)$/.test(e);

    // Log in.
    await page.fill('form[action="/login"] [name=login]', LOGIN.toUpperCase());
    await page.fill('form[action="/login"] [name=password]', PASSWORD);
    await Promise.all([
      page.waitForURL((u) => u.pathname === '/feed'),
      page.click('form[action="/login"] button[type=submit]'),
    ]);
    const me = page.locator('header a[data-me]');
    await me.waitFor({ timeout: 5000 });
    assert.equal((await me.textContent()).trim(), `@${LOGIN}`);
    assert.equal(await me.getAttribute('href'), `/u/${LOGIN}`);

    fs.mkdirSync(SHOTS, { recursive: true });
    const shot = path.join(SHOTS, 'login.png');
    fs.rmSync(shot, { force: true });
    await page.screenshot({ path: shot, fullPage: true });
    const st = fs.statSync(shot);
    assert.ok(st.size > 1000, `screenshot ${shot} is ${st.size} bytes`);
    assert.deepEqual(fs.readFileSync(shot).subarray(1, 4).toString(), 'PNG');

    assert.deepEqual(errors.filter((e) => !expected(e)), []);
  } finally {
    await context.close();
  }
});
