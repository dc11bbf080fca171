/* web.c -- tally-web: the front door.  Accounts (signup, login, logout),
 * the root redirect, /healthz, and the 404 page for every path no other
 * handler owns (nginx sends "location /" here).
 *
 * Routes (mirrored by nginx-conf/tally.conf.in):
 *   GET  /          303 /feed or /login
 *   GET  /signup    the form;  POST /signup  303 /feed | 400 | 409 | 403
 *   GET  /login     the form;  POST /login   303 /feed | 400 | 401 | 403
 *   POST /logout    303 /login | 403 | 503 (the session could not be ended)
 *   GET  /healthz   200 "ok" | 503 "redis" / "sqlite"
 *   GET  /settings  the form;  POST /settings (name; current, password)
 *                   303 /settings | 400 | 403 (current password wrong)
 */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "base/hashgate.h"
#include "base/log.h"
#include "base/valid.h"
#include "social/account.h"
#include "social/device.h"
#include "social/live.h"
#include "social/pcache.h"
#include "social/sesscache.h"
#include "social/throttle.h"
#include "web/act.h"
#include "web/field.h"
#include "web/flash.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"
#include "web/view_account.h"
#include "web/view_admin.h"
#include "web_pages.h"

static int act_root(struct req *, const struct route *);
static const struct page page_signup_form, page_login_form, page_healthz,
    page_settings_form;
static int act_account_settings(struct req *, const struct route *);
static int act_account_create(struct req *, const struct route *);
static int act_account_check(struct req *, const struct route *);
static int act_session_end(struct req *, const struct route *);

static const struct route routes[] = {
	{ METHOD_GET, "/", .act = act_root },
	{ METHOD_GET, "/signup", .page = &page_signup_form },
	{ METHOD_POST, "/signup", .act = act_account_create },
	{ METHOD_GET, "/login", .page = &page_login_form },
	{ METHOD_POST, "/login", .act = act_account_check },
	{ METHOD_POST, "/logout", .act = act_session_end },
	{ METHOD_GET, "/healthz", .page = &page_healthz },
	{ METHOD_GET, "/settings", .page = &page_settings_form,
	    .flags = ROUTE_USER },
	{ METHOD_POST, "/settings", .act = act_account_settings,
	    .flags = ROUTE_USER },
};

int
main(int argc, char *argv[])
{
	return serve_run(argc, argv, "web", routes,
	    sizeof(routes) / sizeof(routes[0]));
}

/* GET /: nothing to show, only where to go. */
static int
act_root(struct req *r, const struct route *rt)
{
	(void)rt;
	return resp_redirect(r, r->user ? "/feed" : "/login");
}

/* The signup and login forms: a signed-in visitor goes to the feed. */
static enum page_load
form_load(struct req *r, void *vm)
{
	struct account_form *m = vm;

	if (r->user) {
		resp_redirect(r, "/feed");
		return PAGE_ANSWERED;
	}
	m->status = 200;
	return PAGE_RENDER;
}

static const struct page page_signup_form = {
	sizeof(struct account_form), form_load, view_signup, NULL
};

static const struct page page_login_form = {
	sizeof(struct account_form), form_load, view_login, NULL
};

/* A form again, refused with status and err. */
static int
refuse(struct req *r, void (*view)(struct req *, const void *), int status,
    const char *err)
{
	struct account_form f = { status, err };

	view(r, &f);
	return -1;
}

/* A hash slot (base/hashgate.h), or -2 (none needed) when hashing is at
 * the cheapest cost (TALLY_PWHASH=min: tests), which is no CPU weapon. */
static int
gate_enter(struct req *r)
{
	return r->app->cfg.pwhash_min ? -2 : hashgate_enter(&r->app->cfg);
}

/* The account has had too many failed logins (account_throttled(): left
 * ms of its window): 429 at once, no hash. */
static int
too_many_failures(struct req *r, long long left)
{
	char secs[24];

	snprintf(secs, sizeof(secs), "%lld", (left + 999) / 1000);
	resp_header(r, "Retry-After", secs);
	return resp_error(r, 429, "Too many failed logins for this account. "
	    "Try again later.");
}


/* An attempt at login's password, counted as a failure before it is
 * hashed (account.h): the lock then stands however the hash ends, and an
 * attempt whose failure cannot be written is refused, not tried
 * uncounted.  0, or -1. */
static int
count_attempt(struct req *r, const char *login, long long now)
{
	return account_login_result(r->app->db, login, 0, now);
}

/* After the hash: a success clears the account's failures (its attempt
 * with them) -- but not a lock this browser passed with its device
 * cookie (left > 0): the guessing goes on elsewhere, and new browsers
 * stay refused for the window; a failure of that browser, not counted
 * before, is counted now.  0, or -1 when a failure was not written. */
static int
attempt_result(struct req *r, const char *login, int ok, long long left,
    long long now)
{
	if (left == 0 && ok &&
	    account_login_result(r->app->db, login, 1, now) == -1)
		log_warn("login %s: its failures could not be cleared", login);
	if (left > 0 && !ok)
		return account_login_result(r->app->db, login, 0, now);
	return 0;
}

/* This browser's device cookie holds an entry for login, signed under
 * the account's password as it is now (social/device.h). */
static int
device_ok(struct req *r, const char *login)
{
	char stamp[AUTH_HASH_MAX];

	return account_stamp(r->app->db, login, stamp) == 1 &&
	    device_knows(&r->app->cfg, req_cookie(r, DEVICE_COOKIE), login,
	    stamp);
}

/* An account under attack (left ms of its lock) and a browser with its
 * device cookie: passed, THROTTLE_DEVICE_TRIES tries a window of the lock's
 * length, an account (throttle_device_tries()); past them refused as
 * any other browser.  The cookie outlives a logout (a shared computer)
 * and can be copied: passed without a count, it guessed as fast as
 * nginx let it.  1 when passed. */
static int
device_passes(struct req *r, const char *login)
{
	return device_ok(r, login) &&
	    throttle_device_tries(r->app, login, LOGIN_FAIL_WINDOW / 1000) == 0;
}

/* Every hash slot taken (a login flood): a browser that logged in to
 * login before (its device cookie) takes the owners' lane, a few times a
 * minute an account (base/hashgate.h): the flood does not lock the
 * owners out.  Its slot, or -1. */
static int
owner_lane(struct req *r, const char *login)
{
	if (login == NULL || !device_ok(r, login) ||
	    throttle_owner_lane(r->app, login) != 0)
		return -1;
	return hashgate_enter_owner(&r->app->cfg);
}

/* 503 at once, no hash: every hash slot is taken (a login flood,
 * HASH_BUSY), or the account's failures could not be read or the attempt
 * counted (the database busy, LOCK_UNKNOWN: a guess is never let through
 * unlocked or uncounted). */
#define HASH_BUSY	"Too many logins at once just now. Try again in a second."
#define LOCK_UNKNOWN	"Your login could not be checked just now (the " \
	"database is busy). Try again in a moment."
static int
busy(struct req *r, const char *why)
{
	resp_header(r, "Retry-After", "1");
	return resp_error(r, 503, why);
}

/* The form again after field_need() refused a field: the status and
 * message of the refusal, the field marked (form.h), no error page. */
static int
refused(struct req *r, void (*view)(struct req *, const void *))
{
	r->ctype = NULL;	/* a JSON refusal's: the form is HTML */
	return refuse(r, view, r->status, r->bad_msg);
}

static int
act_account_create(struct req *r, const struct route *rt)
{
	const char *login, *name, *pw;
	long long id;
	int gate;

	(void)rt;
	if ((login = field_need(r, "login", VALID_LOGIN)) == NULL ||
	    (name = field_need(r, "name", VALID_NAME)) == NULL ||
	    (pw = field_need(r, "password", VALID_PASSWORD)) == NULL)
		return refused(r, view_signup);
	if (account_reserved(login)) {
		r->bad_field = "login";
		snprintf(r->bad_why, sizeof(r->bad_why), "This login is kept "
		    "for the site's own accounts; choose another.");
		return refuse(r, view_signup, 409, "That login is reserved.");
	}
	if ((gate = gate_enter(r)) == -1)
		return busy(r, HASH_BUSY);
	/* a password holds no NUL (VALID_PASSWORD): strlen is its length */
	id = account_create(r->app->db, login, name, pw, strlen(pw), 0,
	    r->app->cfg.pwhash_min);
	hashgate_leave(gate);
	if (id == -1)
		return resp_error(r, 500, "The account could not be created.");
	if (id == 0) {
		r->bad_field = "login";
		snprintf(r->bad_why, sizeof(r->bad_why), "Someone has this login "
		    "already; try another.");
		return refuse(r, view_signup, 409, "That login is taken.");
	}
	pcache_invalidate(r->app, login);	/* a cached "no such user" */
	fault_point("signup-session");
	return web_start_session(r, id, login, NULL);
}

/* POST /login.  A login or password that could be no account's is a
 * wrong pair (401), found after the same hashing as any other. */
static int
act_account_check(struct req *r, const struct route *rt)
{
	const char *login, *pw;
	char stamp[AUTH_HASH_MAX];
	long long id = 0, left = 0, now = clock_wall_ms();
	int gate;

	(void)rt;
	if (!field_has(r, "login") || !field_has(r, "password"))
		return refuse(r, view_login, 400, !field_has(r, "login") ?
		    "The field \xe2\x80\x9clogin\xe2\x80\x9d is missing." :
		    "The field \xe2\x80\x9cpassword\xe2\x80\x9d is missing.");
	login = field_try(r, "login", VALID_LOGIN);
	pw = field_try(r, "password", VALID_SECRET);
	/* an account under attack: refused at once, no hash -- unless this
	 * browser has logged in to it before */
	if (login != NULL &&
	    (left = account_throttled(r->app->db, login, now)) == -1)
		return busy(r, LOCK_UNKNOWN);
	if (left > 0 && !device_passes(r, login))
		return too_many_failures(r, left);
	if ((gate = gate_enter(r)) == -1 && (gate = owner_lane(r, login)) == -1)
		return busy(r, HASH_BUSY);
	if (login != NULL && left == 0 && count_attempt(r, login, now) == -1) {
		hashgate_leave(gate);
		return busy(r, LOCK_UNKNOWN);
	}
	/* hashed all the same: the same time */
	id = account_check(r->app->db, login != NULL ? login : "",
	    pw != NULL ? pw : "", pw != NULL ? strlen(pw) : 0, stamp);
	hashgate_leave(gate);
	if (login == NULL || pw == NULL)
		id = 0;
	if (id == -1)
		return resp_error(r, 500, "Login failed.");
	if (login != NULL && attempt_result(r, login, id > 0, left, now) == -1)
		return busy(r, LOCK_UNKNOWN);
	if (id == 0)
		return refuse(r, view_login, 401, "Wrong login or password.");
	fault_point("login-checked");
	/* a password changed since the check starts no session */
	if (web_start_session(r, id, login, stamp) == 1)
		return refuse(r, view_login, 401, "Wrong login or password.");
	return 0;
}

static int
act_session_end(struct req *r, const struct route *rt)
{
	const char *sid = req_cookie(r, "sid");

	(void)rt;
	/* A session that could not be ended stays valid: say so, and keep
	 * the cookie (clearing it would tell the user they are out while a
	 * copy of it still works). */
	if (sid != NULL && sesscache_end(r->app->db, r->app->rds, sid) == -1)
		return resp_error(r, 503, "You could not be signed out just now "
		    "(the database is busy). Try again in a moment.");
	if (r->user)	/* its live badges with it (live.h) */
		live_close(r->app, r->sess.user_id);
	resp_cookie(r, "sid", "", 0);
	return resp_redirect(r, "/login");
}

/* GET /healthz: whether SQLite and Redis answer, and Redis takes writes
 * (rds_refusing(): one of the host's processes had one refused lately). */
static enum page_load
healthz_load(struct req *r, void *vm)
{
	struct health *m = vm;
	struct dbq *s = dbq_stmt(r->app->db, STMT_PING);
	rds_reply *rep = rds_cmdv(r->app->rds, "PING", NULL);

	m->db_name = db_engine_name(r->app->db);
	if (s != NULL) {
		m->db_ok = dbq_step(s) == DBQ_ROW;
		dbq_done(s);
	}
	m->redis_ok = rep != NULL && rds_type(rep) == RDS_STATUS &&
	    !rds_refusing(r->app->rds);
	if (rep != NULL)
		rds_free(rep);
	return PAGE_RENDER;
}

static const struct page page_healthz = {
	sizeof(struct health), healthz_load, view_healthz, NULL
};

/* /settings: the form with the current display name. */
static enum page_load
settings_load(struct req *r, void *vm)
{
	struct settings_form *m = vm;
	struct account u;
	int rc;

	if ((rc = account_by_login(r->app->db, r->sess.login, &u)) != 1) {
		resp_error(r, rc == 0 ? 404 : 500, "The account could not be "
		    "read.");
		return PAGE_ANSWERED;
	}
	m->status = 200;
	snprintf(m->name, sizeof(m->name), "%s", u.name);
	return PAGE_RENDER;
}

static const struct page page_settings_form = {
	sizeof(struct settings_form), settings_load, view_settings, NULL
};

/* The settings form again, refused with status and err, field marked
 * (why: beside it; field_need()'s own refusal may be passed as is). */
static int
settings_refuse(struct req *r, int status, const char *field,
    const char *why, const char *err)
{
	struct settings_form f = { status, err, "" };
	struct account u;

	r->bad_field = field;
	if (why != r->bad_why)
		snprintf(r->bad_why, sizeof(r->bad_why), "%s", why);
	r->ctype = NULL;	/* a JSON refusal's: the form is HTML */
	if (account_by_login(r->app->db, r->sess.login, &u) == 1)
		snprintf(f.name, sizeof(f.name), "%s", u.name);
	view_settings(r, &f);
	return -1;
}

/* The password half of POST /settings: 0 changed, or -1 answered (a
 * refusal, or a failure). */
static int
settings_password(struct req *r)
{
	const char *cur, *pw;
	long long left, now = clock_wall_ms();
	int gate, rc = 0;

	/* current: any secret (VALID_SECRET) goes to the hash, which says
	 * whether it is the password; one that is not a secret is wrong */
	cur = field_try(r, "current", VALID_SECRET);
	if (!field_has(r, "current") || (cur != NULL && cur[0] == '\0'))
		return settings_refuse(r, 400, "current", "Your current "
		    "password, to show it is you.", "The field \xe2\x80\x9c"
		    "current\xe2\x80\x9d is missing.");
	if ((pw = field_need(r, "password", VALID_PASSWORD)) == NULL)
		return settings_refuse(r, 400, "password", r->bad_why,
		    r->bad_msg);
	/* A wrong current password is a failed login of the account: a
	 * held or stolen session guesses no faster here than at /login,
	 * and an account under attack is refused before any hash, as
	 * there (its owner's browser, with the device cookie, is not) */
	if ((left = account_throttled(r->app->db, r->sess.login, now)) == -1)
		return busy(r, LOCK_UNKNOWN);
	if (left > 0 && !device_passes(r, r->sess.login))
		return too_many_failures(r, left);
	if (cur != NULL && (gate = gate_enter(r)) == -1 &&
	    (gate = owner_lane(r, r->sess.login)) == -1)
		return busy(r, HASH_BUSY);
	if (left == 0 && count_attempt(r, r->sess.login, now) == -1) {
		if (cur != NULL)
			hashgate_leave(gate);
		return busy(r, LOCK_UNKNOWN);
	}
	if (cur != NULL) {
		rc = account_change_password(r->app, r->sess.user_id,
		    r->sess.login, cur, strlen(cur), pw, strlen(pw),
		    req_cookie(r, "sid"), r->app->cfg.pwhash_min);
		hashgate_leave(gate);
	}
	if (rc == -1)
		return resp_error(r, 500, "The password could not be saved.");
	if (attempt_result(r, r->sess.login, rc == 1, left, now) == -1)
		return busy(r, LOCK_UNKNOWN);
	if (rc == 0)
		return settings_refuse(r, 403, "current", "This is not your "
		    "current password.", "The current password is wrong; "
		    "nothing was changed.");
	live_close(r->app, r->sess.user_id);	/* the ended sessions' too */
	/* the new password forgot every device of the account but this
	 * browser, which has just shown it knows the current one */
	web_device_issue(r, r->sess.login, NULL);
	return 0;
}

/* POST /settings: field name renames; fields current and password change
 * the password (a wrong current is 403) and end every other session.
 * A field sent empty is there: an empty name is refused, not skipped.
 * Every field is checked, and the password changed, before the name is
 * saved: a refused request changes nothing. */
static int
act_account_settings(struct req *r, const struct route *rt)
{
	const char *name = NULL;

	(void)rt;
	if (!field_has(r, "name") && !field_has(r, "password"))
		return settings_refuse(r, 400, "name", valid_hint(VALID_NAME, 1),
		    "Nothing to change: send a name, or a password.");
	if (field_has(r, "name") &&
	    (name = field_need(r, "name", VALID_NAME)) == NULL)
		return settings_refuse(r, 400, "name", r->bad_why, r->bad_msg);
	if (field_has(r, "password") && settings_password(r) == -1)
		return -1;
	if (name != NULL) {
		if (account_rename(r->app, r->sess.user_id, name) != 1)
			return resp_error(r, 500, "The name could not be saved.");
		pcache_invalidate(r->app, r->sess.login);
	}
	resp_flash(r, field_has(r, "password") ? FLASH_PASSWORD_SAVED :
	    FLASH_NAME_SAVED);
	return act_redirect(r, "/settings", 0);
}
