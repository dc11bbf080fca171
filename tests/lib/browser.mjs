// browser.mjs -- Debian's chromium, headless, driven by playwright-core
// (ECOSYSTEM.md section 8): the launch every browser test shares.
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage',
      '--disable-background-networking', '--disable-component-update', '--no-first-run'],
  });
}
