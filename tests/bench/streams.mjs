// streams.mjs -- holds open live-badge streams for tests/bench/live.sh:
//   node streams.mjs BASE FILE
// FILE: lines "SID COUNT" (a session and how many streams to open for
// it).  Each stream is a GET /badges/live with Accept: text/event-stream,
// from 127.0.0.2 on (200 a source address: nginx allows 256 connections
// an address, and the benchmark's wrk is on 127.0.0.1).  Prints "open N"
// once every stream answered 200, then holds them until SIGTERM and
// prints "events E" (data events received, all streams together).
import http from 'node:http';
import fs from 'node:fs';

const [base, file] = process.argv.slice(2);
const url = new URL(base);
const want = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean)
  .flatMap((l) => { const [sid, n] = l.split(' '); return Array(Number(n)).fill(sid); });
let open = 0;
let events = 0;
const reqs = [];

function one(sid, i) {
  return new Promise((resolve, reject) => {
    const req = http.get({
      host: url.hostname, port: url.port, path: '/badges/live', agent: false,
      localAddress: `127.0.0.${2 + Math.floor(i / 200)}`,
      headers: { cookie: `sid=${sid}`, accept: 'text/event-stream' },
    }, (res) => {
      if (res.statusCode !== 200) { reject(new Error(`stream ${i}: ${res.statusCode}`)); return; }
      open++;
      res.setEncoding('utf8');
      res.on('data', (d) => { events += (d.match(/^data:/gm) || []).length; });
      resolve();
    });
    req.on('error', reject);
    reqs.push(req);
  });
}

for (let i = 0; i < want.length; i += 50) {
  await Promise.all(want.slice(i, i + 50).map((sid, k) => one(sid, i + k)));
}
console.log(`open ${open}`);
process.on('SIGTERM', () => {
  console.log(`events ${events}`);
  for (const r of reqs) r.destroy();
  process.exit(0);
});
setInterval(() => {}, 1 << 30);
