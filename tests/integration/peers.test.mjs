// peers.test.mjs -- a handler pool on FastCGI over TCP (a handler host,
// shared/web/peer.h) answers only the peers of TALLY_FCGI_ALLOW, checked
// before a byte is read; a peer that sends nothing or half a request is
// dropped within 5 s while others are served; without the variable the
// pool refuses to start.  The pool is the real tally-web, on the real
// stack's database and Redis.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import net from 'node:net';
import path from 'node:path';
import { startStack, BIN, freePort, waitFor } from '../lib/stack.mjs';

let stack;
let pool;
let port;

function start(env) {
  return spawn(path.join(BIN, 'tally-web'), ['-s', `127.0.0.1:${port}`, '-n', '2'],
    { env: { ...stack.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
}

// A FastCGI GET /healthz through cgi-fcgi (from 127.0.0.1): its output.
function healthz() {
  return execFileSync('cgi-fcgi', ['-bind', '-connect', `127.0.0.1:${port}`], {
    env: { PATH: process.env.PATH, REQUEST_METHOD: 'GET', SCRIPT_NAME: '/healthz', REQUEST_URI: '/healthz',
      DOCUMENT_URI: '/healthz', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1', REMOTE_ADDR: '127.0.0.1' },
    encoding: 'utf8', timeout: 5000 });
}

// The same without blocking the event loop (the peers' sockets go on).
async function healthzAsync() {
  const { stdout } = await promisify(execFile)('cgi-fcgi', ['-bind', '-connect', `127.0.0.1:${port}`], {
    env: { PATH: process.env.PATH, REQUEST_METHOD: 'GET', SCRIPT_NAME: '/healthz', REQUEST_URI: '/healthz',
      DOCUMENT_URI: '/healthz', QUERY_STRING: '', SERVER_PROTOCOL: 'HTTP/1.1', REMOTE_ADDR: '127.0.0.1' },
    encoding: 'utf8', timeout: 10000 });
  return stdout;
}

// Connects from localAddress, writes bytes (or nothing), and resolves
// with what came back and how long until the pool closed.
function peer(localAddress, bytes) {
  return new Promise((resolve) => {
    const t0 = Date.now();
    let got = Buffer.alloc(0);
    const s = net.connect({ host: '127.0.0.1', port, localAddress }, () => { if (bytes) s.write(bytes); });
    s.on('data', (d) => { got = Buffer.concat([got, d]); });
    s.on('close', () => resolve({ got, ms: Date.now() - t0 }));
    s.on('error', () => {});
    setTimeout(() => s.destroy(), 15000);
  });
}

// FCGI_BEGIN_REQUEST (responder) for request 1: a request's first record.
const BEGIN = Buffer.from([1, 1, 0, 1, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);

before(async () => {
  stack = await startStack();
  port = await freePort();
  pool = start({ TALLY_FCGI_ALLOW: '127.0.0.1' });
  await waitFor(() => { try { return /ok/.test(healthz()); } catch { return false; } }, 10000, 100);
});

after(async () => {
  if (pool && pool.exitCode === null) {
    pool.kill('SIGTERM');
    await new Promise((r) => pool.on('exit', r));
  }
  await stack?.stop();
});

test('a peer not on TALLY_FCGI_ALLOW gets no byte back', async () => {
  const r = await peer('127.0.0.9', BEGIN);
  assert.equal(r.got.length, 0, 'not a byte');
  assert.ok(r.ms < 2000, `closed at once (${r.ms} ms)`);
  assert.match(healthz(), /ok/, 'the allowed peer is answered');
});

test('a silent peer and half a request are dropped within 5 s, others served meanwhile', async () => {
  const silent = peer('127.0.0.1', null);
  const half = peer('127.0.0.1', BEGIN);
  // both processes of the pool may be waiting on them: still answered
  // once they time out, and well within 5 s
  const t0 = Date.now();
  assert.match(await healthzAsync(), /ok/);
  const served = Date.now() - t0;
  const [a, b] = await Promise.all([silent, half]);
  process.stderr.write(`silent ${a.ms} ms, half ${b.ms} ms, served ${served} ms\n`);
  assert.ok(a.ms <= 5000, `the silent peer dropped after ${a.ms} ms`);
  assert.ok(b.ms <= 5000, `half a request dropped after ${b.ms} ms`);
  assert.equal(a.got.length + b.got.length, 0);
  assert.ok(served <= 5000, `a request served meanwhile, in ${served} ms`);
});

test('a pool over TCP without TALLY_FCGI_ALLOW refuses to start', async () => {
  const save = port;
  port = await freePort();
  const p = start({ TALLY_FCGI_ALLOW: '' });
  let err = '';
  p.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((r) => p.on('exit', (c) => r(c)));
  port = save;
  assert.notEqual(code, 0);
  assert.match(err, /TALLY_FCGI_ALLOW/);
});

test('make run HOSTS=2 with its port range taken stops with a message', async () => {
  const base = await freePort();
  // another program holds the first pool's port of host 2 (127.0.0.3)
  const squatter = net.createServer().listen(base, '127.0.0.3');
  await new Promise((r) => squatter.on('listening', r));
  try {
    const dir = path.join(stack.runDir, 'hosts-taken');
    const r = spawn(path.join(BIN, 'tally-run'), [], {
      env: { ...stack.env, RUN_DIR: dir, PORT: String(await freePort()), DB: 'postgres', HOSTS: '2',
        HOSTS_PORT: String(base - 2) },
      stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    r.stdout.on('data', (d) => { out += d; });
    r.stderr.on('data', (d) => { out += d; });
    const code = await new Promise((res) => r.on('exit', (c) => res(c)));
    assert.notEqual(code, 0, out);
    assert.match(out, new RegExp(`HOSTS_PORT=${base - 2}: port ${base} on 127\\.0\\.0\\.3 is in use`));
  } finally {
    squatter.close();
  }
});
