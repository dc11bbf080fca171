// stack.mjs -- starts the real tally stack for a test, the way "make run"
// does: bin/tally-run with PORT and RUN_DIR, which renders nginx-conf/,
// starts redis-server, the handler pools, the worker and nginx.  Each
// stack gets a free loopback port and a fresh RUN_DIR, and is stopped by
// its own PID (SIGTERM to tally-run, which stops what it started).
import { spawn, execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(ROOT, 'bin');
const SETPRIV = '/usr/bin/setpriv';
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// promise's value, or late after ms.  Not a race with sleep(ms): its
// timer would keep the test's process alive until it fired, long after
// the promise won (30 and 45 s at the end of two suites).
export function within(promise, ms, late = null) {
  let timer;
  const lapse = new Promise((resolve) => { timer = setTimeout(() => resolve(late), ms); });
  return Promise.race([promise, lapse]).finally(() => clearTimeout(timer));
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.unref();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function waitFor(fn, ms = 10000, step = 100) {
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    try { last = await fn(); if (last) return last; } catch (e) { last = e; }
    await sleep(step);
  }
  throw new Error(`timed out after ${ms} ms (last: ${last})`);
}

// Processes that belong to a stack run in dir: their command line or
// environment mentions dir (RUN_DIR=dir), or they hold a file under dir
// open (nginx workers and Redis rewrite their command line and
// environment; the worker's command line names no path; but all of them
// keep a log or socket there).  The calling process is never listed.
export function processesMentioning(dir) {
  const out = [];
  const under = (t) => t === dir || t.startsWith(dir + '/');
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      let hit = cmd.includes(dir);
      if (!hit) {
        try { hit = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').some((e) => e.includes(dir)); } catch { /* no access */ }
      }
      if (!hit) {
        try {
          hit = fs.readdirSync(`/proc/${pid}/fd`).some((fd) => {
            try { return under(fs.readlinkSync(`/proc/${pid}/fd/${fd}`)); } catch { return false; }
          });
        } catch { /* no access */ }
      }
      if (hit) out.push({ pid: Number(pid), cmd });
    } catch { /* gone */ }
  }
  return out;
}

// Direct children of pid, with their command lines.
// redis-cli against one of a run's Redis sockets (redis.sock by default),
// with the run's password when it has one ($RUN_DIR/redis-auth, written
// while Redis listens on TCP).  On a cluster run ($RUN_DIR/redis-cluster/
// nodes), redis.sock means the cluster: a command follows MOVED (-c, the
// redirection notes dropped), KEYS and FLUSHALL go to every master.
// opts go to execFileSync.
export function redisCli(runDir, sock, args, opts = {}) {
  const env = cliEnv(runDir);
  const run = (conn, a) => execFileSync('redis-cli', [...conn, ...a], { encoding: 'utf8', env, ...opts });
  const nodes = sock === 'redis.sock' ? clusterNodes(runDir) : null;
  if (!nodes) return run(['-s', path.join(runDir, sock)], args);
  const at = (n) => ['-h', n.split(':')[0], '-p', n.split(':')[1]];
  const cmd = String(args[0] ?? '').toUpperCase();
  if (cmd === 'KEYS' || cmd === 'FLUSHALL') {
    const masters = nodes.filter((n) => {
      try { return run(at(n), ['ROLE']).startsWith('master'); } catch { return false; }
    });
    const outs = masters.map((n) => run(at(n), args).trim()).filter(Boolean);
    return cmd === 'KEYS' ? outs.join('\n') : 'OK';
  }
  let last;
  for (const n of nodes) {
    try {
      return run(['-c', ...at(n)], args).split('\n').filter((l) => !l.startsWith('-> Redirected to slot')).join('\n');
    } catch (e) { last = e; }
  }
  throw last;
}

// redis-cli against one node of a cluster run ("host:port"), no redirects.
export function redisNode(runDir, node, args, opts = {}) {
  const [h, p] = node.split(':');
  return execFileSync('redis-cli', ['-h', h, '-p', p, ...args], { encoding: 'utf8', env: cliEnv(runDir), ...opts });
}

// redis-cli's environment for a run: the run's password when it has one.
function cliEnv(runDir) {
  const env = { ...process.env };
  try { env.REDISCLI_AUTH = fs.readFileSync(path.join(runDir, 'redis-auth'), 'utf8').trim(); } catch { /* none */ }
  return env;
}

// The nodes of a cluster run ("host:port" each), or null.
export function clusterNodes(runDir) {
  try {
    return fs.readFileSync(path.join(runDir, 'redis-cluster', 'nodes'), 'utf8').trim().split('\n');
  } catch { return null; }
}

// What send() sends while the processes pids are stopped, so that it
// queues on their socket (for ms: long enough for a busy machine's
// nginx to have passed every request on), then they go on; send()'s
// answer.
export async function queuedWhileStopped(pids, send, ms = 1000) {
  for (const pid of pids) process.kill(pid, 'SIGSTOP');
  try {
    const sent = send();
    await sleep(ms);
    return sent;
  } finally { for (const pid of pids) process.kill(pid, 'SIGCONT'); }
}

// SIGSTOPs the worker at a moment it holds neither the writers' lock
// (shared/store/db.h: a flock on tally.db-wlock, held while it applies a flush
// or checkpoints; stopped inside, every write would wait for it) nor a
// flush batch (shared/count/flush.h: its buckets would wait for its lock).
async function stopWorker(stack, pid) {
  const wlock = path.join(stack.runDir, 'tally.db-wlock');
  for (let i = 0; i < 100; i++) {
    process.kill(pid, 'SIGSTOP');
    if (spawnSync('flock', ['-n', wlock, 'true']).status === 0 &&
      stack.redis('KEYS', '{flush}:lock:*') === '') return;
    process.kill(pid, 'SIGCONT');
    await sleep(20);
  }
  throw new Error('the worker kept the writers\' lock or a flush batch for 2 s');
}

// The writers' lock (shared/store/db.h) held by another process: flock(1)
// on the lock file, for at most secs, until released (the function it
// returns kills it by its process group).  The release returns once the
// lock is free (a writer that saw it held waits 200 ms for it next).
export async function holdWriterLock(stack, secs = 30) {
  const lockFile = path.join(stack.runDir, 'tally.db-wlock');
  if (!fs.existsSync(lockFile)) throw new Error(`no ${lockFile}`);
  const free = () => spawnSync('flock', ['-n', lockFile, 'true']).status === 0;
  // its own process group, stopped whole (flock and its sleep) by PID
  const p = spawn('flock', [lockFile, 'sleep', String(secs)], { stdio: 'ignore', detached: true });
  // held once a non-blocking attempt fails
  await waitFor(() => !free(), 5000, 20);
  return async () => {
    try { process.kill(-p.pid, 'SIGKILL'); } catch { /* gone */ }
    await waitFor(free, 5000, 10);
  };
}

// Runs fn with the stack's worker stopped (stopWorker), and goes on with
// it after.
export async function whileWorkerStopped(stack, fn) {
  const worker = stack.pidOf('tally-worker');
  if (!worker) throw new Error('no tally-worker in the stack');
  await stopWorker(stack, worker);
  try {
    return await fn();
  } finally {
    process.kill(worker, 'SIGCONT');
  }
}

// Runs fn with the worker's jobs process (which executes reconciliation
// runs) stopped at a moment it holds no writers' lock (SQLite: a flock
// on tally.db-wlock), so that writes go on meanwhile; it goes on after.
// fn gets the jobs process's pid.
export async function whileJobsStopped(stack, fn) {
  const worker = stack.pidOf('tally-worker');
  const jobs = worker && childrenOf(worker).find((c) => c.cmd.includes('jobs'))?.pid;
  if (!jobs) throw new Error('no jobs process under the stack\'s worker');
  const wlock = path.join(stack.runDir, 'tally.db-wlock');
  for (let i = 0; ; i++) {
    if (i === 100) throw new Error('the jobs process kept the writers\' lock for 2 s');
    process.kill(jobs, 'SIGSTOP');
    if (onPostgres() || spawnSync('flock', ['-n', wlock, 'true']).status === 0) break;
    process.kill(jobs, 'SIGCONT');
    await sleep(20);
  }
  try {
    return await fn(jobs);
  } finally {
    process.kill(jobs, 'SIGCONT');
  }
}

// How many times the social handlers logged deltas Redis did not take
// (count/outbox.c: "kept in the SQLite backlog").
export function backlogged(stack) {
  return ['social', 'social-writer'].reduce((n, l) =>
    n + (stack.log(l).match(/kept in the SQLite backlog/g) ?? []).length, 0);
}

// A process's state letter from /proc (R, S, T: stopped, ...); '' when
// it is gone.
export const procState = (pid) => {
  try {
    const t = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return t.slice(t.lastIndexOf(')') + 2)[0];
  } catch { return ''; }
};

// The pid of a process stopped (a fault's "stop") anywhere under the
// stack's programs, or undefined.
export function stoppedUnder(stack) {
  const tree = (pid) => [pid, ...childrenOf(pid).flatMap((c) => tree(c.pid))];
  return stack.children().flatMap((c) => tree(c.pid)).find((p) => procState(p) === 'T');
}

// A psql session of its own on a PostgreSQL stack's database (as the
// handlers' role, named "psql": another client, not tally), fed
// statements one line at a time; until(mark) waits for a "\\echo mark".
// A psql session on the stack's PostgreSQL: its database as the programs
// log in, or opts.db as the server's superuser (tally), with
// opts.app as its application_name.
export function sqlSession(stack, opts = {}) {
  let url = fs.readFileSync(path.join(stack.runDir, 'database-url'), 'utf8').trim();
  if (opts.db) url = url.replace(/^postgresql:\/\/\/[^?]*/, `postgresql:///${opts.db}`).replace(/&user=[^&]*/, '&user=tally');
  if (opts.app) url += `&application_name=${encodeURIComponent(opts.app)}`;
  const p = spawn('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  p.stdout.on('data', (d) => { out += d; });
  p.stderr.on('data', (d) => { out += d; });
  return {
    send: (sql) => p.stdin.write(`${sql}\n`),
    until: (mark, ms = 10000) => waitFor(() => out.includes(mark), ms, 20),
    // (psql stops at an error: ON_ERROR_STOP, a deadlock's loser)
    end: () => { p.stdin.end(); return p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.on('exit', r)); },
    out: () => out,
  };
}

export function childrenOf(pid) {
  const out = [];
  for (const p of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) {
        out.push({ pid: Number(p), cmd: fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').replace(/\0/g, ' ') });
      }
    } catch { /* gone */ }
  }
  return out;
}

// Under tests/run-all.sh (TAP_KEEP set): the lines of the run's logs
// that speak of a failure, the last few of each, appended to
// TAP_KEEP/<test file>.logs before the run directory goes; run-all.sh
// prints them beside a failed file's assertions, so a failure seen only
// on another machine still shows what the programs said.
const LOG_ALARM = /error|fail|lost|fatal|abort|killed|refus|timed? ?out|deadlock/i;
const LOG_NOISE = /overcommit/;	// redis-server's warning at every start
function keepLogLines(runDir) {
  const keep = process.env.TAP_KEEP;
  if (!keep || !process.argv[1]) return;
  try {
    let out = '';
    const dir = path.join(runDir, 'logs');
    for (const f of fs.readdirSync(dir).sort()) {
      if (f === 'access.log') continue;
      const hits = fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter((l) => LOG_ALARM.test(l) && !LOG_NOISE.test(l));
      for (const l of hits.slice(-12)) out += `${f}: ${l.slice(0, 300)}\n`;
    }
    if (out) fs.appendFileSync(path.join(keep, `${path.basename(process.argv[1])}.logs`), `-- ${path.basename(runDir)}\n${out}`);
  } catch { /* a stack that never made its logs */ }
}

// The port freePort() found can be taken before nginx binds it (an
// outgoing connection's ephemeral port): then once more on another.
export async function startStack(opts = {}) {
  for (let i = 0; ; i++) {
    try {
      return await startOnce(opts);
    } catch (e) {
      if (i > 0 || opts.port || !/in use/i.test(e.message)) throw e;
    }
  }
}

// Six free loopback ports in a row whose bus ports (+10000) are free too:
// a Redis Cluster's.
async function freeClusterBase() {
  const free = (p) => new Promise((resolve) => {
    const s = net.createServer();
    s.unref();
    s.on('error', () => resolve(false));
    s.listen(p, '127.0.0.1', () => s.close(() => resolve(true)));
  });
  for (let i = 0; i < 200; i++) {
    const base = 20000 + Math.floor(Math.random() * 9000);
    let ok = true;
    for (let k = 0; k < 6 && ok; k++) ok = await free(base + k) && await free(base + k + 10000);
    if (ok) return base;
  }
  throw new Error('no six free ports for a Redis Cluster');
}

// TALLY_TEST_CLUSTER=1 (or opts.cluster): the stack runs on a local Redis
// Cluster of six nodes (make test's cluster run), with a short node
// timeout so a replica takes over a dead master in about two seconds.
export const onCluster = (opts = {}) => opts.cluster ?? process.env.TALLY_TEST_CLUSTER === '1';

// TALLY_TEST_DB=postgres (or opts.db = 'postgres'): the stack keeps its
// truth in a local PostgreSQL server (make run DB=postgres); stack.sqlite()
// then asks it through psql, in sqlite3's output format (no header,
// columns split by |).
export const onPostgres = (opts = {}) => (opts.db ?? process.env.TALLY_TEST_DB) === 'postgres';

function truthSql(runDir, sql) {
  let url = null;
  try { url = fs.readFileSync(path.join(runDir, 'database-url'), 'utf8').trim(); } catch { /* SQLite */ }
  // The SQL goes in on stdin: a bulk INSERT can be longer than one
  // command-line argument may be (128 KB).
  const input = `${sql.replace(/;\s*$/, '')};\n`;
  if (url === null) {
    return execFileSync('sqlite3', ['-cmd', '.timeout 5000', path.join(runDir, 'tally.db')], { encoding: 'utf8', input }).trim();
  }
  return execFileSync('psql', ['-X', '-q', '-A', '-t', '-F', '|', '-v', 'ON_ERROR_STOP=1', '-d', url],
    { encoding: 'utf8', input }).trim();
}

async function startOnce(opts) {
  const port = opts.port ?? await freePort();
  // opts.runDir: a stack's again (a start after one that was killed)
  const runDir = opts.runDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tally-'));
  // opts.disarmed: { NAME: TIMES } fault points (counts.mjs: faults)
  // written used up before anything starts, so that none fires before
  // the test arms it (a run at the stack's start would reach them).
  for (const [name, times] of Object.entries(opts.disarmed ?? {})) {
    fs.mkdirSync(path.join(runDir, 'faults'), { recursive: true });
    fs.chmodSync(path.join(runDir, 'faults'), 0o777);	// the stack's user's files too
    fs.writeFileSync(path.join(runDir, 'faults', name), 'x'.repeat(times));
  }
  const cluster = onCluster(opts) ? {
    REDIS_CLUSTER: '1', REDIS_CLUSTER_PORT: String(await freeClusterBase()), TALLY_CLUSTER_NODE_TIMEOUT: '1000',
  } : {};
  const env = {
    ...process.env,
    PORT: String(port),
    RUN_DIR: runDir,
    DEMO: opts.demo ?? '0',
    TALLY_ADMIN_PASSWORD: opts.adminPassword ?? 'admin-pass-1',
    TALLY_PWHASH: 'min',
    TALLY_LOGIN_RATE: opts.loginRate ?? '60000r/m',
    // tests raise the per-user action limit like the login rate (0: none)
    TALLY_WRITE_RATE: opts.writeRate ?? '0',
    ...cluster,
    ...(onPostgres(opts) ? { DB: 'postgres' } : {}),
    ...(opts.env ?? {}),
  };
  // setpriv --pdeathsig: should this test process die without stop()
  // (a crash, a timeout, a closed pipe), tally-run gets SIGTERM and stops
  // its stack instead of leaking it.  setpriv execs, so proc.pid is
  // tally-run's PID.
  const run = path.join(BIN, 'tally-run');
  const proc = fs.existsSync(SETPRIV)
    ? spawn(SETPRIV, ['--pdeathsig', 'TERM', run], { env, stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(run, [], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d) => { output += d; });
  proc.stderr.on('data', (d) => { output += d; });
  const exited = new Promise((resolve) => proc.on('exit', (code, sig) => resolve({ code, sig })));
  const base = `http://127.0.0.1:${port}`;
  const stack = {
    port, base, runDir, proc, env, exited,
    output: () => output,
    log: (name) => { try { return fs.readFileSync(path.join(runDir, 'logs', `${name}.log`), 'utf8'); } catch { return ''; } },
    // PID of the supervised service whose command line contains needle.
    pidOf: (needle) => childrenOf(proc.pid).find((c) => c.cmd.includes(needle))?.pid,
    children: () => childrenOf(proc.pid),
    tallyctl: (...args) => execFileSync(path.join(BIN, 'tallyctl'), args, { env, encoding: 'utf8' }),
    // the same with input on its standard input (tallyctl passwd)
    tallyctlIn: (input, ...args) => execFileSync(path.join(BIN, 'tallyctl'), args, { env, encoding: 'utf8', input }),
    // the same, whatever its exit: { status, stdout, stderr }
    tallyctlRaw: (...args) => spawnSync(path.join(BIN, 'tallyctl'), args, { env, encoding: 'utf8' }),
    sqlite: (sql) => truthSql(runDir, sql),
    redis: (...args) => redisCli(runDir, 'redis.sock', args).trim(),
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        proc.kill('SIGTERM');
        const t = setTimeout(() => proc.kill('SIGKILL'), 15000);
        await exited;
        clearTimeout(t);
      }
      keepLogLines(runDir);
      // TALLY_TEST_KEEP=1 keeps every run directory (logs, database) and
      // names it on stderr, to look at after a failure.
      // A count found wrong (counts.mjs: compareAll()) keeps it too.
      if (opts.keep || this.keepRunDir || process.env.TALLY_TEST_KEEP === '1') process.stderr.write(`kept ${runDir}\n`);
      else fs.rmSync(runDir, { recursive: true, force: true });
    },
  };
  try {
    // a tally-run that exits fails the start at once (its error is no
    // "not yet" to wait out)
    let gone = false;
    await waitFor(async () => {
      if (gone || proc.exitCode !== null || proc.signalCode !== null) {
        gone = true;
        return 'exited';
      }
      const r = await fetch(`${base}/healthz`);
      return r.status === 200;
    }, 40000);
    if (gone) throw new Error(`tally-run exited: ${output}`);
  } catch (e) {
    await stack.stop();
    throw new Error(`stack did not come up: ${e.message}\n${output}`);
  }
  return stack;
}

let lastReq = 0;		// when a Client last had an answer (any Client: one pool)

// A browser-less client with a cookie jar, that fills in the csrf field
// from the last page it saw (like a browser submitting a rendered form).
export class Client {
  constructor(base) { this.base = base; this.jar = new Map(); this.csrf = null; }

  cookieHeader() { return [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '); }

  absorb(res) {
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const i = pair.indexOf('=');
      const k = pair.slice(0, i).trim(); const v = pair.slice(i + 1).trim();
      if (attrs.some((a) => /^\s*max-age=0\s*$/i.test(a)) || v === '') this.jar.delete(k);
      else this.jar.set(k, v);
    }
  }

  async req(method, p, { body, headers = {} } = {}) {
    const send = () => fetch(this.base + p, {
      method, redirect: 'manual', body,
      headers: { cookie: this.cookieHeader(), ...(body !== undefined ? { 'content-type': 'application/x-www-form-urlencoded' } : {}), ...headers },
    });
    // A kept-alive connection nginx closed while it was idle (a long
    // blocking step of the test between two requests) fails the request
    // that reuses it, and the pool may hold several: a GET is sent again
    // while its connection turns out dead, a few times at most.
    // Closing is seen only when the event loop runs: after a gap, one
    // turn of it (the sockets' end events) lets the pool drop what nginx
    // closed, so a POST, which is never sent twice, gets a live one.
    if (Date.now() - lastReq > 5000) await new Promise((r) => setTimeout(r, 20));
    const why = (x) => `${x.message}${x.cause ? ` (${x.cause.code ?? ''} ${x.cause.message})` : ''}`;
    const dead = (x) => ['EPIPE', 'ECONNRESET', 'UND_ERR_SOCKET'].includes(x.cause?.code);
    let res;
    for (let tries = 1; ; tries++) {
      try {
        res = await send();
        break;
      } catch (e) {
        if (method !== 'GET' || tries >= 8 || (tries > 1 && !dead(e))) {
          throw new Error(`${method} ${p}: ${why(e)} (try ${tries})`, { cause: e });
        }
      }
    }
    this.absorb(res);
    const text = await res.text();
    lastReq = Date.now();
    const m = text.match(/name="csrf" value="([^"]+)"/);
    if (m) this.csrf = m[1];
    return { status: res.status, headers: res.headers, text, location: res.headers.get('location') };
  }

  get(p, opts) { return this.req('GET', p, opts); }

  // POSTs fields as a form; csrf is added from the last page unless given.
  post(p, fields = {}, opts = {}) {
    const f = { ...fields };
    if (!('csrf' in f) && this.csrf) f.csrf = this.csrf;
    if (f.csrf === null) delete f.csrf;
    return this.req('POST', p, { body: new URLSearchParams(f).toString(), ...opts });
  }

  async signup(login, password = 'password-123', name = login) {
    await this.get('/signup');
    return this.post('/signup', { login, name, password });
  }

  async login(login, password) {
    await this.get('/login');
    return this.post('/login', { login, password });
  }
}
