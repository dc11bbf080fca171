// rootless.test.mjs -- run as root, no process of a stack keeps root
// (handlers/run_user.h): tally-run becomes the stack's own system user
// before it starts anything, so nginx (its master too), every handler
// pool, the worker, tally-live, redis-server (and PostgreSQL with
// TALLY_TEST_DB=postgres) run as it.  The supervisor and nginx's master
// stayed root, and opened by name files in $RUN_DIR that the user owns:
// a link a compromised handler planted there was followed by root.
// $RUN_DIR is that user's, 0700: no other user reads it.  Skipped when
// the tests do not run as root.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { startStack, childrenOf, onPostgres, BIN, freePort } from '../lib/stack.mjs';

const root = process.getuid?.() === 0;
let stack;

before(async () => {
  if (root) stack = await startStack();
});

after(async () => {
  await stack?.stop();
});

const uidOf = (pid) => Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]);

// Every process under pid, with its command line.
function tree(pid) {
  const out = [];
  for (const c of childrenOf(pid)) {
    out.push(c);
    out.push(...tree(c.pid));
  }
  return out;
}

test('every serving process of the stack has a non-zero uid; RUN_DIR is closed to others', { skip: !root && 'not root' }, () => {
  const all = tree(stack.proc.pid);
  const serving = all.filter((c) => !/nginx: master/.test(c.cmd) && !/tally-run/.test(c.cmd));
  const names = ['nginx: worker', 'tally-web', 'tally-social', 'tally-notify', 'tally-admin', 'tally-worker',
    'tally-live', 'redis-server', ...(onPostgres() ? ['postgres'] : [])];
  for (const n of names) assert.ok(serving.some((c) => c.cmd.includes(n)), `a ${n} process (${all.map((c) => c.cmd).join(' | ')})`);
  const asRoot = serving.filter((c) => { try { return uidOf(c.pid) === 0; } catch { return false; } });
  assert.deepEqual(asRoot.map((c) => c.cmd), [], 'nothing that serves runs as root');
  // nor the supervisor and nginx's master
  const everyone = [{ pid: stack.proc.pid, cmd: 'tally-run' }, ...all];
  const kept = everyone.filter((c) => { try { return uidOf(c.pid) === 0; } catch { return false; } });
  assert.deepEqual(kept.map((c) => c.cmd), [], 'no process of the stack keeps root');
  const gids = fs.readFileSync(`/proc/${stack.proc.pid}/status`, 'utf8').match(/^Groups:\s*(.*)$/m)[1].trim();
  assert.doesNotMatch(` ${gids} `, / 0 /, 'no group of root\'s kept');
  const st = fs.statSync(stack.runDir);
  assert.notEqual(st.uid, 0, 'RUN_DIR belongs to the stack\'s user');
  assert.equal(st.mode & 0o077, 0, `RUN_DIR mode ${(st.mode & 0o777).toString(8)}: nobody else reads it`);
  const user = uidOf(serving.find((c) => c.cmd.includes('tally-web')).pid);
  assert.equal(st.uid, user, 'the handlers\' user owns RUN_DIR');
});

// A checkout or RUN_DIR the stack's user cannot reach (under a directory
// closed to others, as /root is): the stack ran everything as root, with
// a warning.  It refuses to start now and says what to do; TALLY_USER=root
// is the way to choose root.
test('a RUN_DIR the stack\'s user cannot reach: nothing starts as root, the reason is said', { skip: !root && 'not root' }, async () => {
  const closed = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-closed-'));
  try {
    fs.chmodSync(closed, 0o700);
    const r = spawnSync(path.join(BIN, 'tally-run'), [], {
      encoding: 'utf8', timeout: 20000, killSignal: 'SIGINT',
      env: { ...process.env, RUN_DIR: path.join(closed, 'run'), PORT: String(await freePort()), DEMO: '0' },
    });
    assert.notEqual(r.status, 0, `tally-run started (${r.signal ?? ''}): ${r.stderr}`);
    assert.equal(r.signal, null, 'it ended by itself, at once');
    assert.match(r.stderr, /cannot reach .*TALLY_USER=root/s);
    assert.ok(!fs.existsSync(path.join(closed, 'run', 'redis.sock')), 'nothing was started');
  } finally {
    fs.rmSync(closed, { recursive: true, force: true });
  }
});
