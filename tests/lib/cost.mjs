// cost.mjs -- what requests cost a handler, from /metrics' per-handler
// counters (shared/base/metrics.h): SQLite statements, Redis commands,
// Redis round trips, and pages sent whole as a handler process kept them
// (web/keep.h).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, sleep } from './stack.mjs';

// The statements of the table by number (shared/store/sql.h's enum).
let stmtNames;
function stmtName(i) {
  if (!stmtNames) {
    const h = fs.readFileSync(path.join(ROOT, 'shared', 'store', 'sql.h'), 'utf8');
    const body = h.slice(h.indexOf('enum stmt {'), h.indexOf('STMT__MAX'));
    stmtNames = [...body.matchAll(/^\t(STMT_\w+),/gm)].map((m) => m[1]);
  }
  return stmtNames[i] ?? `STMT#${i}`;
}

// One handler's runs of each statement so far, by name
// (tally_sqlite_statement_runs_total).
export async function stmtRuns(stack, handler) {
  const text = await (await fetch(`${stack.base}/metrics`)).text();
  const out = {};
  const re = new RegExp(`^tally_sqlite_statement_runs_total\\{handler="${handler}",stmt="(\\d+)"\\} (\\d+)$`, 'gm');
  for (const m of text.matchAll(re)) out[stmtName(Number(m[1]))] = Number(m[2]);
  return out;
}

// What ran between two stmtRuns() readings: { NAME: runs }, those that did.
export function stmtsBetween(r0, r1) {
  const out = {};
  for (const [k, v] of Object.entries(r1)) if (v - (r0[k] ?? 0) > 0) out[k] = v - (r0[k] ?? 0);
  return out;
}

// One handler's counters now.
export async function handlerCost(stack, handler) {
  const text = await (await fetch(`${stack.base}/metrics`)).text();
  const get = (name) => {
    const m = text.match(new RegExp(`^${name}\\{handler="${handler}"\\} (\\d+)$`, 'm'));
    assert.ok(m, `${name}{handler="${handler}"} in /metrics`);
    return Number(m[1]);
  };
  return {
    stmts: get('tally_sqlite_statements_total'),
    sqlTrips: get('tally_sql_round_trips_total'),
    commits: get('tally_sql_commits_total'),
    cmds: get('tally_redis_commands_total'),
    trips: get('tally_redis_round_trips_total'),
    reqs: get('tally_http_request_duration_seconds_count'),
    kept: get('tally_pages_kept_total'),
    ckept: get('tally_counts_kept_total'),
    ahead: get('tally_pages_ahead_total'),
    sqlAhead: get('tally_sql_ahead_total'),
  };
}

// One handler's counters once they stopped moving (a handler records a
// request just after answering it).
export async function settled(stack, handler) {
  let c0 = await handlerCost(stack, handler);
  for (let i = 0; i < 50; i++) {
    await sleep(20);
    const c = await handlerCost(stack, handler);
    if (c.reqs === c0.reqs) break;
    c0 = c;
  }
  return c0;
}

// The counters once n more requests than in c0 are recorded, the
// difference from c0.
export async function recorded(stack, handler, c0, n) {
  let c1 = await handlerCost(stack, handler);
  for (let i = 0; i < 100 && c1.reqs - c0.reqs < n; i++) {
    await sleep(20);
    c1 = await handlerCost(stack, handler);
  }
  assert.equal(c1.reqs - c0.reqs, n, `${n} requests recorded on ${handler}`);
  return {
    stmts: c1.stmts - c0.stmts, sqlTrips: c1.sqlTrips - c0.sqlTrips,
    cmds: c1.cmds - c0.cmds, trips: c1.trips - c0.trips,
    kept: c1.kept - c0.kept, ckept: c1.ckept - c0.ckept,
    ahead: c1.ahead - c0.ahead, sqlAhead: c1.sqlAhead - c0.sqlAhead,
  };
}

// The cost of n requests made one after another by send(i) on handler,
// once all are recorded.
export async function measure(stack, handler, n, send) {
  const c0 = await settled(stack, handler);
  const answers = [];
  for (let i = 0; i < n; i++) answers.push(await send(i));
  return { answers, ...await recorded(stack, handler, c0, n) };
}

// measure() again, up to `tries` times, until ok(m) holds: for what a
// commit elsewhere (the worker's) may undo for a moment, such as pages
// kept whole (web/keep.h).  The last measurement when it never does.
// m.runs: the statements that ran during it, by name (stmtsBetween()).
export async function measureUntil(stack, handler, n, send, ok, tries = 3) {
  let m;
  for (let i = 0; i < tries; i++) {
    const r0 = await stmtRuns(stack, handler);
    m = await measure(stack, handler, n, send);
    m.runs = stmtsBetween(r0, await stmtRuns(stack, handler));
    if (ok(m)) break;
  }
  return m;
}

// A profile's first visit on a handler process that has not yet seen
// its login reads its page of posts from SQLite (STMT_PROFILE_SQL,
// social/profileview.c): one statement more than a known login's, and
// never a page kept whole (the process kept nothing of it).  Which of
// the handler's processes a request reaches is the kernel's choice, so
// a test of a profile's cost takes those visits out: at most one per
// page not kept whole.
export function profileFirsts(m) {
  const f = m.runs?.STMT_PROFILE_SQL ?? 0;
  assert.ok(f <= m.answers.length - (m.kept ?? 0),
    `first visits of a process (${f}) only among pages not kept whole`);
  return f;
}

// Runs attempt(i) up to `tries` times until it returns without an
// assertion failing; the last failure otherwise.  For a test of one
// request's exact cost, which work elsewhere may add to for a moment:
// the worker's flush committing while a count loads (a look at whether
// its batch was applied), a cached part of the badges aging past its
// time on a slow machine (one more round trip).  The cost the test
// names must still be met once: more work on every request fails all.
export async function untilExact(tries, attempt) {
  for (let i = 0; ; i++) {
    try {
      return await attempt(i);
    } catch (e) {
      if (!(e instanceof assert.AssertionError) || i + 1 >= tries) throw e;
    }
  }
}
