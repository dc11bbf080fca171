// soak.mjs -- "make soak": mixed traffic from wrk (tests/soak/mixed.lua,
// logged-in sessions with CSRF) against the real stack for SOAK_SECONDS
// (default 60, bounded), then one flush and a check that every counter
// equals its recount, and the memory (VmRSS) of every process of the
// stack at start and end.  Exit status 1 when counts drift or a
// process's memory grew by more than 20 % (and 4 MiB).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { startStack, Client, ROOT, sleep } from '../lib/stack.mjs';
import { compareAll } from '../lib/counts.mjs';

const secs = Math.min(Number(process.env.SOAK_SECONDS || 60), 3600);
const stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '0' } });
let failed = false;
try {
  const users = [], sids = [], csrfs = [], logins = [];
  for (let i = 0; i < 8; i++) {
    const c = new Client(stack.base);
    await c.signup(`soak${i}`);
    await c.get('/feed');
    users.push(c);
    sids.push(c.jar.get('sid'));
    csrfs.push(c.csrf);
    logins.push(`soak${i}`);
  }
  const posts = [];
  for (let i = 0; i < 8; i++) {
    const r = await users[i].post('/posts', { body: `soak post ${i}`, publish: '1' });
    posts.push(r.location.split('/').pop());
  }
  for (let i = 0; i < 8; i++) await users[i].post(`/follow/soak${(i + 1) % 8}`);

  const rss = () => {
    const out = {};
    const walk = (pid, depth) => {
      for (const c of [...fs.readdirSync('/proc')].filter((p) => /^\d+$/.test(p))) {
        try {
          const st = fs.readFileSync(`/proc/${c}/stat`, 'utf8');
          if (Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]) !== pid) continue;
          const name = fs.readFileSync(`/proc/${c}/cmdline`, 'utf8').split('\0')[0].split('/').pop() + `[${c}]`;
          const m = fs.readFileSync(`/proc/${c}/status`, 'utf8').match(/VmRSS:\s+(\d+)/);
          if (m) out[name] = Number(m[1]);
          if (depth < 3) walk(Number(c), depth + 1);
        } catch { /* gone */ }
      }
    };
    walk(stack.proc.pid, 0);
    return out;
  };
  // a short warm-up, so caches and pools are at their working size
  spawnSync('wrk', ['-t2', '-c8', '-d3s', '-s', path.join(ROOT, 'tests/soak/mixed.lua'), stack.base],
    { env: { ...process.env, SIDS: sids.join(','), CSRFS: csrfs.join(','), POSTS: posts.join(','), LOGINS: logins.join(',') } });
  const before = rss();
  const w = spawnSync('timeout', [String(secs + 30), 'wrk', '-t2', '-c8', `-d${secs}s`, '--latency',
    '-s', path.join(ROOT, 'tests/soak/mixed.lua'), stack.base],
  { env: { ...process.env, SIDS: sids.join(','), CSRFS: csrfs.join(','), POSTS: posts.join(','), LOGINS: logins.join(',') }, encoding: 'utf8' });
  console.log(w.stdout);
  const afterRss = rss();
  await sleep(1500);
  stack.tallyctl('flush');
  const bad = compareAll(stack);
  console.log(`counts after ${secs} s of mixed traffic: ${bad.length === 0 ? 'every counter equals its recount' : bad.join('\n')}`);
  if (bad.length) failed = true;
  console.log('memory (VmRSS, KiB): process, before, after, growth');
  for (const [k, v] of Object.entries(before)) {
    const a = afterRss[k];
    if (a === undefined) { console.log(`  ${k}: ${v} -> (restarted)`); continue; }
    const g = a - v;
    console.log(`  ${k.padEnd(28)} ${String(v).padStart(8)} ${String(a).padStart(8)} ${g >= 0 ? '+' : ''}${g}`);
    if (g > 4096 && g > v * 0.2) failed = true;
  }
  if (/Non-2xx or 3xx responses: (\d+)/.test(w.stdout)) {
    console.log('some responses were not 2xx/3xx');
    failed = true;
  }
} finally {
  await stack.stop();
}
console.log(failed ? 'soak: FAIL' : 'soak: PASS');
process.exit(failed ? 1 : 0);
