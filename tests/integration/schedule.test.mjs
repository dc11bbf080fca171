// schedule.test.mjs -- the worker reconciles on its own schedule
// (TALLY_RECONCILE_EVERY seconds), and a drift planted behind the
// application's back is repaired by that scheduled run without anyone
// starting it.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, waitFor } from '../lib/stack.mjs';

let stack;
before(async () => { stack = await startStack({ env: { TALLY_RECONCILE_EVERY: '3' } }); });
after(async () => { await stack?.stop(); });

test('a scheduled reconciliation runs by itself and repairs drift', async () => {
  const c = new Client(stack.base);
  assert.equal((await c.signup('sched1')).status, 303);
  await c.get('/feed');
  assert.equal((await c.post('/posts', { body: 'scheduled', publish: '1' })).status, 303);
  stack.tallyctl('flush');
  const id = stack.sqlite("SELECT id FROM users WHERE login='sched1'");
  stack.sqlite(`UPDATE counters SET value = value + 5 WHERE name='user_posts' AND key='${id}'`);
  const before = Number(stack.sqlite("SELECT coalesce(max(id), 0) FROM reconcile_runs WHERE reason='schedule'"));
  await waitFor(() => Number(stack.sqlite(
    `SELECT COUNT(*) FROM reconcile_runs WHERE reason='schedule' AND state='done' AND id > ${before}`)) > 0, 20000, 200);
  await waitFor(() => stack.sqlite(`SELECT value FROM counters WHERE name='user_posts' AND key='${id}'`) === '1', 10000, 200);
});
