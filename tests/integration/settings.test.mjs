// settings.test.mjs -- the account's own settings (GET/POST /settings,
// the contract's row) and the one-time messages after an action's
// redirect (web/flash.h): a name change shows on the profile and in the
// people search; a password change needs the current one (403 without),
// keeps this session and ends every other; a refused field comes back
// marked with what was typed; each message shows once, on the page the
// redirect leads to, and never from a cookie it did not set.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startStack, Client, waitFor, stoppedUnder } from '../lib/stack.mjs';
import { faults } from '../lib/counts.mjs';

let stack;
before(async () => {
  stack = await startStack({ env: { TALLY_FAULT: 'login-checked:stop:1' } });
  faults.disarm(stack, 'login-checked', 1);
});
after(async () => { await stack?.stop(); });

async function user(login, password = 'password-123') {
  const c = new Client(stack.base);
  assert.equal((await c.signup(login, password, `Old ${login}`)).status, 303);
  await c.get('/settings');	// a form token
  return c;
}

const flashes = (html) => [...html.matchAll(/<p class="flash" role="status" data-flash="([a-z-]+)">([^<]*)<\/p>/g)]
  .map((m) => m[1]);

test('/settings needs a session and shows the current name', async () => {
  const anon = await new Client(stack.base).get('/settings');
  assert.equal(anon.status, 303);
  assert.match(anon.location, /\/login$/);
  const c = await user('st_show');
  const r = await c.get('/settings');
  assert.equal(r.status, 200);
  assert.match(r.text, /<input name="name" required maxlength="64" autocomplete="name" value="Old st_show"/);
  assert.match(r.text, /name="current"/);
  assert.match(r.text, /name="password"/);
});

test('a new display name: on the profile, in the people search, said once', async () => {
  const c = await user('st_name');
  let r = await c.post('/settings', { name: 'Grace Hopper' });
  assert.equal(r.status, 303);
  assert.equal(r.location, '/settings');
  r = await c.get('/settings');
  assert.deepEqual(flashes(r.text), ['name-saved']);
  assert.match(r.text, /Your name is saved\./);
  assert.match(r.text, /value="Grace Hopper"/);
  assert.deepEqual(flashes((await c.get('/settings')).text), [], 'once');
  assert.match((await c.get('/u/st_name')).text, /Grace Hopper/);
  assert.match((await c.get('/people?q=hopper')).text, /data-login="st_name"/);
  assert.doesNotMatch((await c.get('/people?q=old')).text, /data-login="st_name"/, 'the old name is no longer found');
  // an action form's `back` (docs/INTERFACE.md, actions without leaving the page)
  r = await c.post('/settings', { name: 'Grace Hopper', back: '/u/st_name' });
  assert.equal(r.status, 303);
  assert.equal(r.location, '/u/st_name');
  await c.get('/settings');	// its message shown once
  // refused: the field marked, what was typed kept, nothing saved
  r = await c.post('/settings', { name: '   ' });
  assert.equal(r.status, 400);
  assert.match(r.text, /name="name"[^>]*aria-invalid="true"/);
  r = await c.post('/settings', { name: 'x'.repeat(65) });
  assert.equal(r.status, 400);
  assert.match(r.text, new RegExp(`value="${'x'.repeat(65)}"`));
  assert.match((await c.get('/u/st_name')).text, /Grace Hopper/);
  assert.equal((await c.post('/settings', {})).status, 400, 'nothing to change');
});

test('a new password: the current one first (403), every other session ends, this one stays', async () => {
  const c = await user('st_pw', 'first-pass-1');
  const other = new Client(stack.base);
  assert.equal((await other.login('st_pw', 'first-pass-1')).status, 303);
  assert.equal((await other.get('/feed')).status, 200);
  // wrong current password: 403, nothing changes
  let r = await c.post('/settings', { current: 'not-it-at-all', password: 'second-pass-2' });
  assert.equal(r.status, 403);
  assert.match(r.text, /name="current"[^>]*aria-invalid="true"/);
  assert.equal((await other.get('/feed')).status, 200, 'the other session lives on');
  assert.equal((await new Client(stack.base).login('st_pw', 'first-pass-1')).status, 303);
  // missing current, a new one too short: 400
  assert.equal((await c.post('/settings', { password: 'second-pass-2' })).status, 400);
  r = await c.post('/settings', { current: 'first-pass-1', password: 'short' });
  assert.equal(r.status, 400);
  assert.match(r.text, /name="password"[^>]*aria-invalid="true"/);
  // the change
  r = await c.post('/settings', { current: 'first-pass-1', password: 'second-pass-2' });
  assert.equal(r.status, 303);
  r = await c.get('/settings');
  assert.equal(r.status, 200, 'this session stays');
  assert.deepEqual(flashes(r.text), ['password-saved']);
  const gone = await other.get('/feed');
  assert.equal(gone.status, 303, 'every other session ended');
  assert.match(gone.location, /\/login/);
  assert.equal((await new Client(stack.base).login('st_pw', 'first-pass-1')).status, 401, 'the old password no longer');
  assert.equal((await new Client(stack.base).login('st_pw', 'second-pass-2')).status, 303, 'the new one');
  // sessions in SQLite: this one and the new login's only
  const uid = Number(stack.sqlite("SELECT id FROM users WHERE login='st_pw'"));
  assert.equal(Number(stack.sqlite(`SELECT COUNT(*) FROM sessions WHERE user_id=${uid}`)), 2);
});

// A name sent with a password change is saved only when the change is:
// a refused request (a wrong current password, a missing one, a new one
// too short, a bad name) changes nothing, the name neither.
test('a name and a password together: refused, nothing changes; accepted, both', async () => {
  const c = await user('st_both', 'first-pass-1');
  const name = () => stack.sqlite("SELECT name FROM users WHERE login='st_both'").trim();
  let r = await c.post('/settings', { name: 'Wrong Current', current: 'not-it-at-all', password: 'second-pass-2' });
  assert.equal(r.status, 403);
  assert.equal(name(), 'Old st_both', 'a 403 renamed no one');
  r = await c.post('/settings', { name: 'No Current', password: 'second-pass-2' });
  assert.equal(r.status, 400);
  r = await c.post('/settings', { name: 'Short New', current: 'first-pass-1', password: 'short' });
  assert.equal(r.status, 400);
  assert.equal(name(), 'Old st_both', 'a 400 renamed no one');
  r = await c.post('/settings', { name: '', current: 'first-pass-1', password: 'second-pass-2' });
  assert.equal(r.status, 400);
  assert.equal((await new Client(stack.base).login('st_both', 'first-pass-1')).status, 303, 'nor changed the password');
  assert.match((await c.get('/u/st_both')).text, /Old st_both/);
  r = await c.post('/settings', { name: 'Both Saved', current: 'first-pass-1', password: 'second-pass-2' });
  assert.equal(r.status, 303);
  assert.equal(name(), 'Both Saved');
  assert.equal((await new Client(stack.base).login('st_both', 'second-pass-2')).status, 303);
  assert.match((await c.get('/u/st_both')).text, /Both Saved/);
});

test('one-time messages after a draft, a publish, a follow from a list, a notice, the red dot', async () => {
  const c = await user('st_msgs');
  const other = await user('st_other');
  let r = await c.post('/posts', { body: 'a draft', topic: '', publish: '0' });
  assert.equal(r.status, 303);
  r = await c.get(r.location);
  assert.deepEqual(flashes(r.text), ['draft-saved']);
  assert.deepEqual(flashes((await c.get(r.location ?? '/feed')).text), []);
  r = await c.post('/posts', { body: 'published', topic: '', publish: '1' });
  assert.deepEqual(flashes((await c.get(r.location)).text), ['published']);
  // a follow from the people list, without script: back to the list
  await c.get('/people?q=st_other');
  r = await c.post('/follow/st_other', { back: '/people?q=st_other' });
  assert.equal(r.location, '/people?q=st_other');
  r = await c.get(r.location);
  assert.deepEqual(flashes(r.text), ['followed']);
  assert.match(r.text, /Followed\./);
  // asked for JSON (the page's script): no message left for later
  r = await c.post('/unfollow/st_other', {}, { headers: { accept: 'application/json' } });
  assert.equal(r.status, 200);
  assert.deepEqual(flashes((await c.get('/feed')).text), []);
  // the badge poll leaves a message for the page
  r = await c.post('/follow/st_other');
  assert.equal((await c.get('/badges.json')).status, 200);
  assert.deepEqual(flashes((await c.get(r.location)).text), ['followed']);
  void other;
  // the admin's notice and red dot
  const admin = new Client(stack.base);
  assert.equal((await admin.login('admin', 'admin-pass-1')).status, 303);
  await admin.get('/admin');
  r = await admin.post('/admin/notices', { title: 'Hello', body: 'Everyone' });
  assert.equal(r.status, 303);
  assert.deepEqual(flashes((await admin.get('/admin')).text), ['notice-sent']);
  r = await admin.post('/admin/red-dot');
  assert.equal(r.status, 303);
  assert.deepEqual(flashes((await admin.get('/admin')).text), ['red-dot']);
  assert.deepEqual(flashes((await admin.get('/admin')).text), []);
});

test('a message cookie the site did not set shows nothing, and is cleared', async () => {
  const c = await user('st_forged');
  for (const v of ['bogus', '%3Cscript%3E', 'name-saved%22%3E']) {
    c.jar.set('flash', v);
    const r = await c.get('/feed');
    assert.equal(r.status, 200);
    assert.deepEqual(flashes(r.text), []);
    assert.doesNotMatch(r.text, /<script>|class="flash" role="status"/);
    assert.equal(c.jar.has('flash'), false, `cleared (${v})`);
  }
});

// A login whose password matched just before the account's password
// changed (the change ends every other session) starts none: its
// session, inserted after the change, outlived it, and whoever held the
// old password kept a session past the reset meant to end it.  Forced:
// the login stops after its check (fault point login-checked) while the
// owner changes the password.
test('a login checked just before a password change starts no session', async () => {
  const owner = await user('st_race', 'password-old');
  const late = new Client(stack.base);
  await late.get('/login');
  faults.arm(stack, 'login-checked');
  const pending = late.post('/login', { login: 'st_race', password: 'password-old' });
  const who = await waitFor(() => stoppedUnder(stack), 10000, 20);
  try {
    const r = await owner.post('/settings', { current: 'password-old', password: 'password-new' });
    assert.equal(r.status, 303, `the change: ${r.status}`);
  } finally { process.kill(who, 'SIGCONT'); }
  const r = await pending;
  assert.equal(r.status, 401, `the late login: ${r.status} ${r.location ?? ''}`);
  assert.equal((await late.get('/settings')).status, 303, 'no session for it');
  assert.equal(stack.sqlite("SELECT COUNT(*) FROM sessions WHERE user_id = (SELECT id FROM users WHERE login = 'st_race')"), '1', 'the owner\'s alone');
  assert.equal((await owner.get('/settings')).status, 200);
});
