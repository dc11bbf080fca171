// cost.mjs -- what requests cost a handler, from /metrics' per-handler
// counters (shared/base/metrics.h): SQLite statements, Redis commands,
// Redis round trips, and pages sent whole as a handler process kept them
// (web/keep.h).
import assert from 'node:assert/strict';
import { sleep } from './stack.mjs';

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
    cmds: get('tally_redis_commands_total'),
    trips: get('tally_redis_round_trips_total'),
    reqs: get('tally_http_request_duration_seconds_count'),
    kept: get('tally_pages_kept_total'),
    ckept: get('tally_counts_kept_total'),
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
    stmts: c1.stmts - c0.stmts, cmds: c1.cmds - c0.cmds, trips: c1.trips - c0.trips,
    kept: c1.kept - c0.kept, ckept: c1.ckept - c0.ckept,
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
export async function measureUntil(stack, handler, n, send, ok, tries = 3) {
  let m;
  for (let i = 0; i < tries; i++) {
    m = await measure(stack, handler, n, send);
    if (ok(m)) break;
  }
  return m;
}
