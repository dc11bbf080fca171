// install.test.mjs -- "make install PREFIX=/usr/local DESTDIR=<tmp>" gives a
// complete operator install: programs, www/, the four nginx snippets
// rendered for /run/tally, the systemd units and /etc/tally; and the
// snippets pass "nginx -t" when included in an nginx.conf the way an
// operator would (tally-http.conf in http {}, tally.conf in server {}).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const PREFIX = '/usr/local';
const SNIPPETS = ['tally-http.conf', 'tally-live.conf', 'tally.conf', 'tally-headers.conf', 'tally-fastcgi.conf'];
const UNITS = ['tally-redis.service', 'tally-web.service', 'tally-social.service', 'tally-social-writer.service', 'tally-notify.service', 'tally-admin.service', 'tally-worker.service', 'tally-live.service', 'tally.target'];
const PROGRAMS = ['tally-web', 'tally-social', 'tally-notify', 'tally-admin', 'tally-worker', 'tally-live', 'tallyctl', 'tally-run'];

let dest;	// DESTDIR: the staged tree stands in for /
let tmp;	// nginx prefix, config, logs, temp paths
const staged = (p) => path.join(dest, p);

function install() {
  execFileSync('make', ['-s', 'install', `PREFIX=${PREFIX}`, `DESTDIR=${dest}`],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
}

function which(prog) {
  const dirs = (process.env.PATH || '/usr/bin:/bin').split(':')
    .concat(['/usr/sbin', '/sbin', '/usr/local/sbin']);
  for (const d of dirs) {
    const p = path.join(d, prog);
    try { fs.accessSync(p, fs.constants.X_OK); return p; } catch { /* next */ }
  }
  return null;
}

function freePort() {
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

// Every file under dir, relative to it.
function filesUnder(dir, rel = '') {
  const out = [];
  for (const e of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
    const r = path.join(rel, e.name);
    if (e.isDirectory()) out.push(...filesUnder(dir, r));
    else out.push(r);
  }
  return out;
}

// Directive lines (comments stripped) of an nginx snippet.
const directives = (text) => text.split('\n').map((l) => l.replace(/#.*/, '').trim()).filter(Boolean);

before(() => {
  dest = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-install-'));
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'tally-nginx-'));
  install();
});

after(() => {
  for (const d of [dest, tmp])
    if (d) fs.rmSync(d, { recursive: true, force: true });
});

test('programs are installed executable in PREFIX/bin', () => {
  for (const p of PROGRAMS) {
    const st = fs.statSync(staged(`${PREFIX}/bin/${p}`));
    assert.ok(st.isFile(), p);
    assert.equal(st.mode & 0o111, 0o111, `${p} is executable`);
  }
});

test('www/ is installed in PREFIX/share/tally/www', () => {
  const src = path.join(ROOT, 'www');
  const files = filesUnder(src);
  assert.ok(files.includes(path.join('errors', '50x.html')));
  for (const f of files)
    assert.deepEqual(fs.readFileSync(staged(`${PREFIX}/share/tally/www/${f}`)),
      fs.readFileSync(path.join(src, f)), f);
  // tally-run finds its templates there too.
  assert.ok(fs.existsSync(staged(`${PREFIX}/share/tally/nginx-conf/tally.conf.in`)));
});

test('nginx snippets are rendered for /run/tally and /etc/nginx/snippets', () => {
  for (const s of SNIPPETS) {
    const text = fs.readFileSync(staged(`/etc/nginx/snippets/${s}`), 'utf8');
    assert.ok(!text.includes('${'), `${s}: unrendered \${...} left`);
    assert.ok(!text.includes('@PREFIX@'), s);
    for (const d of directives(text)) {
      let m;
      if ((m = d.match(/unix:(\S+?);?$/))) {
        assert.match(m[1], /^\/run\/tally\/[a-z]+(-[a-z]+)?\.sock$/, `${s}: ${d}`);
      }
      if ((m = d.match(/^include\s+(\S+);$/))) {
        const inc = m[1];
        if (inc.startsWith('/etc/nginx/snippets/'))
          assert.ok(fs.existsSync(staged(inc)), `${s}: ${inc} is installed`);
        else
          assert.ok(fs.existsSync(inc), `${s}: ${inc} exists on this machine`);
      }
      if ((m = d.match(/^alias\s+(\S+);$/))) {
        assert.ok(m[1].startsWith(`${PREFIX}/share/tally/www/`), `${s}: ${d}`);
        assert.ok(fs.existsSync(staged(m[1])), `${s}: ${m[1]} is installed`);
      }
    }
  }
  const tally = fs.readFileSync(staged('/etc/nginx/snippets/tally.conf'), 'utf8');
  assert.match(tally, /fastcgi_pass tally_web;/);
  assert.match(fs.readFileSync(staged('/etc/nginx/snippets/tally-http.conf'), 'utf8'),
    /^upstream tally_web \{ server unix:\/run\/tally\/web\.sock; \}$/m);
  // The headers say how to include them.
  const http = fs.readFileSync(staged('/etc/nginx/snippets/tally-http.conf'), 'utf8');
  assert.match(http, /^#.*include \/etc\/nginx\/snippets\/tally-http\.conf;/m);
  assert.match(http, /^#.*include \/etc\/nginx\/snippets\/tally\.conf;/m);
  assert.match(tally, /^#.*include \/etc\/nginx\/snippets\/tally\.conf;/m);
  assert.match(http, /limit_req_zone \$tally_login_key zone=tally_login:1m rate=30r\/m;/);
});

test('systemd units and /etc/tally are installed', () => {
  for (const u of UNITS) {
    const text = fs.readFileSync(staged(`/etc/systemd/system/${u}`), 'utf8');
    assert.ok(!text.includes('@PREFIX@'), `${u}: @PREFIX@ left`);
  }
  const unit = (u) => fs.readFileSync(staged(`/etc/systemd/system/${u}`), 'utf8');
  const web = unit('tally-web.service');
  assert.match(web, /^ExecStart=\/usr\/local\/bin\/tally-web -s \/run\/tally\/web\.sock -n 4$/m);
  for (const line of ['User=tally', 'Group=tally-www', 'RuntimeDirectory=tally',
    'RuntimeDirectoryPreserve=yes', 'RuntimeDirectoryMode=0750', 'StateDirectory=tally',
    'Environment=RUN_DIR=/var/lib/tally', 'Environment=TALLY_REDIS=/run/tally/redis.sock',
    'EnvironmentFile=-/etc/tally/tally.env', 'Restart=always', 'RestartSec=1',
    'NoNewPrivileges=yes', 'ProtectSystem=strict', 'ProtectHome=yes', 'PrivateTmp=yes',
    'ReadWritePaths=/var/lib/tally /run/tally'])
    assert.ok(web.split('\n').includes(line), `tally-web.service: ${line}`);
  // every service: the socket group of tally's own (not www-data, which
  // any PHP-FPM of the host runs as), and the sandbox
  for (const u of UNITS.filter((x) => x.endsWith('.service'))) {
    const lines = unit(u).split('\n');
    for (const line of ['User=tally', 'Group=tally-www', 'NoNewPrivileges=yes',
      'ProtectProc=invisible', 'PrivateIPC=yes', 'SystemCallFilter=@system-service',
      'CapabilityBoundingSet=', 'RestrictAddressFamilies=AF_UNIX'])
      assert.ok(lines.includes(line), `${u}: ${line}`);
    assert.ok(!lines.includes('Group=www-data'), `${u}: no Group=www-data`);
  }
  // the live badges' publisher: where the rendered tally-live.conf has
  // nginx listen, not $RUN_DIR/live.sock (/var/lib/tally there): every
  // unit that runs a program of tally names it (base/cfg.h)
  const listen = fs.readFileSync(staged('/etc/nginx/snippets/tally-live.conf'), 'utf8')
    .match(/^\s*listen unix:(\S+);/m)[1];
  for (const u of UNITS.filter((x) => x.startsWith('tally-') && x.endsWith('.service') && x !== 'tally-redis.service')) {
    const m = unit(u).match(/^Environment=TALLY_LIVE_SOCK=(\S+)$/m);
    assert.equal(m?.[1], listen, `${u}: TALLY_LIVE_SOCK is nginx's ${listen}`);
  }
  const users = fs.readFileSync(staged('/etc/sysusers.d/tally.conf'), 'utf8');
  assert.match(users, /^g\s+tally-www\s/m);
  assert.match(users, /^m\s+www-data\s+tally-www$/m);
  assert.match(users, /^m\s+tally\s+tally-www$/m);
  // the admin password never on a command line
  assert.doesNotMatch(unit('tally.target'), /useradd --admin admin Admin '/);
  assert.match(unit('tally-worker.service'), /^ExecStart=\/usr\/local\/bin\/tally-worker$/m);
  assert.match(unit('tally-live.service'), /^ExecStart=\/usr\/local\/bin\/tally-live$/m);
  // every socket the nginx snippet names is served by a unit; the social
  // writer is one process
  const tally = fs.readFileSync(staged('/etc/nginx/snippets/tally.conf'), 'utf8');
  const execs = UNITS.filter((x) => x.endsWith('.service')).map(unit).join('\n');
  for (const [, sock] of tally.matchAll(/unix:(\/run\/tally\/[a-z-]+\.sock);/g))
    assert.match(execs, new RegExp(`^ExecStart=\\S+ -s ${sock.replace(/[.]/g, '\\.')} -n \\d+$`, 'm'), sock);
  assert.match(unit('tally-social-writer.service'),
    /^ExecStart=\/usr\/local\/bin\/tally-social -s \/run\/tally\/social-writer\.sock -n 1$/m);
  assert.match(unit('tally-redis.service'), /^ExecStart=\S*redis-server \/etc\/tally\/redis\.conf$/m);
  const wants = unit('tally.target').match(/^Wants=(.*)$/m);
  assert.ok(wants, 'tally.target has Wants=');
  for (const u of UNITS.filter((x) => x.endsWith('.service')))
    assert.ok(wants[1].split(/\s+/).includes(u), `tally.target wants ${u}`);

  const redis = fs.readFileSync(staged('/etc/tally/redis.conf'), 'utf8');
  assert.match(redis, /^port 0$/m);
  assert.match(redis, /^unixsocket \/run\/tally\/redis\.sock$/m);
  assert.match(redis, /^appendonly yes$/m);
  const env = fs.readFileSync(staged('/etc/tally/tally.env'), 'utf8');
  assert.ok(env.split('\n').every((l) => l === '' || l.startsWith('#')),
    'tally.env holds commented defaults only');
  assert.ok(fs.existsSync(staged('/etc/sysusers.d/tally.conf')));
});

test('the units use only directives systemd knows (systemd-analyze verify)', (t) => {
  const analyze = which('systemd-analyze');
  if (!analyze) { t.skip('systemd-analyze not installed'); return; }
  // Point ExecStart at the staged programs so "not executable" is not noise.
  const dir = path.join(tmp, 'units');
  fs.mkdirSync(dir);
  for (const u of UNITS)
    fs.writeFileSync(path.join(dir, u), fs.readFileSync(staged(`/etc/systemd/system/${u}`), 'utf8')
      .replaceAll(`${PREFIX}/bin/`, staged(`${PREFIX}/bin/`)));
  const r = spawnSync(analyze, ['verify', '--man=no', ...UNITS.map((u) => `./${u}`)],
    { cwd: dir, encoding: 'utf8', timeout: 60_000 });
  const out = `${r.stdout}${r.stderr}`;
  assert.doesNotMatch(out, /Unknown (key|section)|Invalid|Failed to parse|bad unit file/i, out);
  assert.equal(r.status, 0, out);
});

test('every service unit rates OK in systemd-analyze security (exposure 2.0 at most)', (t) => {
  const analyze = which('systemd-analyze');
  if (!analyze) { t.skip('systemd-analyze not installed'); return; }
  const rated = [];
  for (const u of UNITS.filter((x) => x.endsWith('.service'))) {
    const r = spawnSync(analyze, ['security', '--offline=true', staged(`/etc/systemd/system/${u}`)],
      { encoding: 'utf8', timeout: 60_000 });
    const m = /Overall exposure level for \S+: ([0-9.]+)/.exec(`${r.stdout}${r.stderr}`);
    assert.ok(m, `${u}: ${r.stdout}${r.stderr}`);
    rated.push(`${u} ${m[1]}`);
    assert.ok(Number(m[1]) <= 2.0, `${u}: exposure ${m[1]}`);
  }
  t.diagnostic(rated.join(', '));
});

test('re-installing keeps an edited /etc/tally/tally.env', () => {
  const f = staged('/etc/tally/tally.env');
  fs.appendFileSync(f, 'TALLY_SESSION_DAYS=7\n');
  const before = fs.readFileSync(f, 'utf8');
  install();
  assert.equal(fs.readFileSync(f, 'utf8'), before);
});

test('nginx -t accepts the snippets included in an operator nginx.conf', async () => {
  const nginx = which('nginx');
  assert.ok(nginx, 'nginx is installed');
  // Relocate the staged tree: the snippets include each other by their
  // final absolute path, /etc/nginx/snippets/..., which is under DESTDIR here.
  for (const s of SNIPPETS) {
    const f = staged(`/etc/nginx/snippets/${s}`);
    fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(
      /^(\s*include\s+)\/etc\/nginx\/snippets\//gm, `$1${staged('/etc/nginx/snippets/')}`));
  }
  // nginx -t binds the live badges' socket: /run/tally is systemd's
  // (RuntimeDirectory=tally), not there on a build machine.
  const live = staged('/etc/nginx/snippets/tally-live.conf');
  const liveText = fs.readFileSync(live, 'utf8');
  assert.match(liveText, /listen unix:\/run\/tally\/live\.sock;/);
  fs.writeFileSync(live, liveText.replace('unix:/run/tally/live.sock', `unix:${tmp}/live.sock`));
  const port = await freePort();
  const conf = path.join(tmp, 'nginx.conf');
  // Debian's nginx.conf loads the modules installed (modules-enabled):
  // the nchan module of the live badges among them.
  fs.writeFileSync(conf, `load_module /usr/lib/nginx/modules/ngx_nchan_module.so;
worker_processes 1;
events {
    worker_connections 64;
}
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    access_log ${tmp}/access.log;
    client_body_temp_path ${tmp}/client_body;
    fastcgi_temp_path ${tmp}/fastcgi;
    proxy_temp_path ${tmp}/proxy;
    uwsgi_temp_path ${tmp}/uwsgi;
    scgi_temp_path ${tmp}/scgi;

    include ${staged('/etc/nginx/snippets/tally-http.conf')};
    include ${staged('/etc/nginx/snippets/tally-live.conf')};

    server {
        listen 127.0.0.1:${port};
        server_name localhost;
        include ${staged('/etc/nginx/snippets/tally.conf')};
    }
}
`);
  const r = spawnSync(nginx, ['-t', '-p', `${tmp}/`, '-c', conf, '-e', `${tmp}/error.log`,
    '-g', `pid ${tmp}/nginx.pid;`], { encoding: 'utf8', timeout: 30_000 });
  const out = `${r.stdout}${r.stderr}`;
  assert.equal(r.status, 0, out);
  assert.match(out, /syntax is ok/);
  assert.match(out, /test is successful/);
});
