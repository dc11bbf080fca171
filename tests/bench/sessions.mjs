// sessions.mjs -- signs in the users a traffic benchmark speaks for
// (tests/bench/traffic.sh): for every login of LOGINS_FILE (one a line,
// password "password", as tallyctl seed gives them), a GET /login, the
// POST (again after a 429 of nginx's login limit), and one page for the
// session's csrf token, CONC users at a time; then each user's feed and
// profile once, as on a site that has been up.
// Writes "LOGIN SID CSRF" lines to OUT_FILE in the order of LOGINS_FILE.
//
//   node tests/bench/sessions.mjs BASE LOGINS_FILE OUT_FILE [CONC]
import fs from 'node:fs';

import { Client } from '../lib/stack.mjs';

const [base, inFile, outFile, concArg] = process.argv.slice(2);
if (!base || !inFile || !outFile) {
  console.error('usage: sessions.mjs BASE LOGINS_FILE OUT_FILE [CONC]');
  process.exit(2);
}
const logins = fs.readFileSync(inFile, 'utf8').split('\n').filter(Boolean);
const out = new Array(logins.length);
let next = 0;

const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

async function one(i) {
  const c = new Client(base);
  let r;
  // nginx's login limit (TALLY_LOGIN_RATE, burst 10) may refuse a burst:
  // wait and try again, a few times
  for (let t = 0; t < 20; t++) {
    r = await c.login(logins[i], 'password');
    if (r.status !== 429) break;
    await sleep(50 * (t + 1));
  }
  if (r.status !== 303) throw new Error(`login ${logins[i]}: ${r.status} ${r.text.slice(0, 120)}`);
  await c.get('/notices');	// a cheap page with the session's csrf token
  // as on a site that has been up: the user's feed and profile once (the
  // counters of their posts, the profile cache, the badges in Redis)
  for (const p of ['/feed', `/u/${logins[i]}`]) {
    const w = await c.get(p);
    if (w.status !== 200) throw new Error(`${p} of ${logins[i]}: ${w.status}`);
  }
  const sid = c.jar.get('sid');
  if (!sid || !c.csrf) throw new Error(`login ${logins[i]}: no session or csrf`);
  out[i] = `${logins[i]} ${sid} ${c.csrf}`;
}

async function worker() {
  while (next < logins.length) await one(next++);
}

await Promise.all(Array.from({ length: Number(concArg || 16) }, worker));
fs.writeFileSync(outFile, `${out.join('\n')}\n`);
