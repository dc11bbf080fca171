// flood.mjs -- a flood of one POST from another process.
// A test that times its own requests during a flood must not send the
// flood from its own event loop: fetch() costs node about 1.3 ms of CPU a
// request, so 12 flooding loops beside the timed one measure node's queue,
// not the server's.  startFlood() runs the flood in a child node process,
// on node:http with kept-alive connections, bounded in count and time.
//
//   const f = startFlood(stack.base, '/posts/4/like', 'csrf=zz', { clients: 12 });
//   await f.started;  ...  const { sent, statuses } = await f.stop();
import { spawn } from 'node:child_process';
import http from 'node:http';
import { fileURLToPath } from 'node:url';

// The child: POSTs body to base+path from `clients` loops until SIGTERM,
// `max` requests or `ms` milliseconds, then prints {sent, statuses}.
async function child([base, path, body, clients, max, ms]) {
  const u = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number(clients) });
  const end = Date.now() + Number(ms);
  const statuses = {};
  let sent = 0;
  let stop = false;
  process.on('SIGTERM', () => { stop = true; });
  const one = () => new Promise((resolve, reject) => {
    const r = http.request({
      host: u.hostname, port: u.port, path, method: 'POST', agent,
      headers: { 'content-type': 'application/x-www-form-urlencoded',
        'content-length': Buffer.byteLength(body) },
    }, (res) => { res.resume(); res.on('end', () => resolve(res.statusCode)); });
    r.on('error', reject);
    r.end(body);
  });
  await Promise.all(Array.from({ length: Number(clients) }, async () => {
    while (!stop && sent < Number(max) && Date.now() < end) {
      const s = await one();
      statuses[s] = (statuses[s] ?? 0) + 1;
      if (sent++ === 0) process.stdout.write('flooding\n');
    }
  }));
  agent.destroy();
  process.stdout.write(`${JSON.stringify({ sent, statuses })}\n`);
}

export function startFlood(base, path, body, { clients = 12, max = 60000, ms = 20000 } = {}) {
  const p = spawn(process.execPath, [fileURLToPath(import.meta.url), base, path, body,
    String(clients), String(max), String(ms)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  let flooding;
  const started = new Promise((resolve) => { flooding = resolve; });
  p.stdout.on('data', (d) => {
    out += d;
    if (out.startsWith('flooding\n')) flooding();
  });
  const done = new Promise((resolve, reject) => {
    p.on('error', reject);
    p.on('exit', (code) => {
      flooding();
      if (code !== 0) reject(new Error(`the flood exited ${code}`));
      else resolve(JSON.parse(out.split('\n').filter(Boolean).pop()));
    });
  });
  return { started, stop() { p.kill('SIGTERM'); return done; }, done };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await child(process.argv.slice(2));
