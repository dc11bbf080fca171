// browser.mjs -- Debian's chromium, headless, driven by playwright-core
// (ECOSYSTEM.md section 8): the launch every browser test shares.
import fs from 'node:fs';
import path from 'node:path';
import { before, after } from 'node:test';

import { chromium } from 'playwright-core';

import { ROOT, startStack } from './stack.mjs';

export function launch() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}

// The before/after of a browser test file: a stack with the demo data and
// a browser, torn down after; screenshots go to build/screenshots/<dir>.
// The returned object's stack and browser are set once before() ran.
export function demoSession(dir) {
  const s = { stack: null, browser: null, shots: path.join(ROOT, 'build', 'screenshots', dir) };
  before(async () => {
    s.stack = await startStack({ demo: '1' });
    s.browser = await launch();
    fs.mkdirSync(s.shots, { recursive: true });
  });
  after(async () => {
    await s.browser?.close();
    await s.stack?.stop();
  });
  return s;
}
