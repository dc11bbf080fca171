// sessions.mjs -- signs in the users a traffic benchmark speaks for
// (tests/bench/traffic.sh): for every login of LOGINS_FILE (one a line,
// password "password", as tallyctl seed gives them), a GET /login, the
// POST, and one page for the session's csrf token, CONC users at a time.
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

async function one(i) {
  const c = new Client(base);
  const r = await c.login(logins[i], 'password');
  if (r.status !== 303) throw new Error(`login ${logins[i]}: ${r.status}`);
  await c.get('/people');
  const sid = c.jar.get('sid');
  if (!sid || !c.csrf) throw new Error(`login ${logins[i]}: no session or csrf`);
  out[i] = `${logins[i]} ${sid} ${c.csrf}`;
}

async function worker() {
  while (next < logins.length) await one(next++);
}

await Promise.all(Array.from({ length: Number(concArg || 16) }, worker));
fs.writeFileSync(outFile, `${out.join('\n')}\n`);
