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
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/hashgate.h"
#include "base/valid.h"
#include "social/account.h"
#include "social/device.h"
#include "social/pcache.h"
#include "social/sesscache.h"
#include "web/flash.h"
#include "web/view_account.h"
#include "web/view_admin.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"
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

/* Every hash slot is taken (a login flood): 503 at once, no hash. */
static int
hash_busy(struct req *r)
{
	resp_header(r, "Retry-After", "1");
	return resp_error(r, 503, "Too many logins at once just now. Try "
	    "again in a second.");
}

static int
act_account_create(struct req *r, const struct route *rt)
{
	static const struct { const char *field; enum valid kind; } fields[] = {
		{ "login", VALID_LOGIN },
		{ "name", VALID_NAME },
		{ "password", VALID_PASSWORD },
	};
	const char *v[3];
	const struct kv *pw;
	char msg[96];
	long long id;
	size_t i;
	int gate;

	(void)rt;
	for (i = 0; i < 3; i++) {
		const struct kv *kv = kv_get(&r->form, fields[i].field);
		char *norm;

		if (kv == NULL || valid_check(fields[i].kind, kv->val,
		    kv->vlen, &norm) == -1) {
			snprintf(msg, sizeof(msg), "The field \xe2\x80\x9c%s"
			    "\xe2\x80\x9d is %s.", fields[i].field,
			    kv == NULL ? "missing" : "not valid");
			r->bad_field = fields[i].field;
			snprintf(r->bad_why, sizeof(r->bad_why), "%s",
			    valid_hint(fields[i].kind, kv == NULL));
			return refuse(r, view_signup, 400, msg);
		}
		v[i] = req_keep(r, norm);
	}
	if (account_reserved(v[0])) {
		r->bad_field = "login";
		snprintf(r->bad_why, sizeof(r->bad_why), "This login is kept "
		    "for the site's own accounts; choose another.");
		return refuse(r, view_signup, 409, "That login is reserved.");
	}
	pw = kv_get(&r->form, "password");
	if ((gate = gate_enter(r)) == -1)
		return hash_busy(r);
	id = account_create(&r->app->db, v[0], v[1], pw->val, pw->vlen, 0,
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
	pcache_invalidate(r->app, v[0]);	/* a cached "no such user" */
	return web_start_session(r, id, v[0]);
}

static int
act_account_check(struct req *r, const struct route *rt)
{
	const struct kv *login = kv_get(&r->form, "login");
	const struct kv *pw = kv_get(&r->form, "password");
	char *norm = NULL, secs[24];
	long long id = 0, left = 0, now = clock_wall_ms();
	int gate;

	(void)rt;
	if (login == NULL || pw == NULL)
		return refuse(r, view_login, 400, login == NULL ?
		    "The field \xe2\x80\x9clogin\xe2\x80\x9d is missing." :
		    "The field \xe2\x80\x9cpassword\xe2\x80\x9d is missing.");
	if (valid_check(VALID_LOGIN, login->val, login->vlen, &norm) == 0) {
		norm = req_keep(r, norm);
		/* an account under attack: refused at once, no hash --
		 * unless this browser has logged in to it before */
		if ((left = account_throttled(&r->app->db, norm, now)) > 0 &&
		    !device_knows(&r->app->cfg, req_cookie(r, DEVICE_COOKIE),
		    norm)) {
			snprintf(secs, sizeof(secs), "%lld", (left + 999) / 1000);
			resp_header(r, "Retry-After", secs);
			return resp_error(r, 429, "Too many failed logins for "
			    "this account. Try again later.");
		}
	} else
		norm = NULL;	/* hashed all the same: the same time */
	if ((gate = gate_enter(r)) == -1)
		return hash_busy(r);
	id = account_check(&r->app->db, norm != NULL ? norm : "", pw->val,
	    pw->vlen);
	hashgate_leave(gate);
	if (norm == NULL)
		id = 0;
	if (id == -1)
		return resp_error(r, 500, "Login failed.");
	/* a success clears the account's failures -- but not a lock this
	 * browser passed with its device cookie: the guessing goes on
	 * elsewhere, and new browsers stay refused for the window */
	if (norm != NULL && !(id > 0 && left > 0))
		account_login_result(&r->app->db, norm, id > 0, now);
	if (id == 0)
		return refuse(r, view_login, 401, "Wrong login or password.");
	return web_start_session(r, id, norm);
}

static int
act_session_end(struct req *r, const struct route *rt)
{
	const char *sid = req_cookie(r, "sid");

	(void)rt;
	/* A session that could not be ended stays valid: say so, and keep
	 * the cookie (clearing it would tell the user they are out while a
	 * copy of it still works). */
	if (sid != NULL && sesscache_end(&r->app->db, &r->app->rds, sid) == -1)
		return resp_error(r, 503, "You could not be signed out just now "
		    "(the database is busy). Try again in a moment.");
	resp_cookie(r, "sid", "", 0);
	return resp_redirect(r, "/login");
}

/* GET /healthz: whether SQLite and Redis answer. */
static enum page_load
healthz_load(struct req *r, void *vm)
{
	struct health *m = vm;
	struct dbq *s = db_stmt(&r->app->db, STMT_PING);
	rds_reply *rep = rds_cmdv(&r->app->rds, "PING", NULL);

	if (s != NULL) {
		m->db_ok = dbq_step(s) == DBQ_ROW;
		db_done(s);
	}
	m->redis_ok = rep != NULL && rep->type == RDS_STATUS;
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

	if ((rc = account_by_login(&r->app->db, r->sess.login, &u)) != 1) {
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

/* The settings form again, refused with status and err, field marked. */
static int
settings_refuse(struct req *r, int status, const char *field,
    const char *why, const char *err)
{
	struct settings_form f = { status, err, "" };
	struct account u;

	r->bad_field = field;
	snprintf(r->bad_why, sizeof(r->bad_why), "%s", why);
	if (account_by_login(&r->app->db, r->sess.login, &u) == 1)
		snprintf(f.name, sizeof(f.name), "%s", u.name);
	view_settings(r, &f);
	return -1;
}

/* POST /settings: field name renames; fields current and password change
 * the password (a wrong current is 403) and end every other session. */
static int
act_account_settings(struct req *r, const struct route *rt)
{
	const struct kv *name = kv_get(&r->form, "name");
	const struct kv *cur = kv_get(&r->form, "current");
	const struct kv *pw = kv_get(&r->form, "password");
	char *norm = NULL;
	int gate, rc;

	(void)rt;
	if (name == NULL && pw == NULL)
		return settings_refuse(r, 400, "name", valid_hint(VALID_NAME, 1),
		    "Nothing to change: send a name, or a password.");
	if (name != NULL) {
		if (valid_check(VALID_NAME, name->val, name->vlen, &norm) == -1)
			return settings_refuse(r, 400, "name",
			    valid_hint(VALID_NAME, 0), "The field \xe2\x80\x9c"
			    "name\xe2\x80\x9d is not valid.");
		rc = account_rename(r->app, r->sess.user_id, req_keep(r, norm));
		if (rc != 1)
			return resp_error(r, 500, "The name could not be saved.");
		pcache_invalidate(r->app, r->sess.login);
		if (pw == NULL) {
			resp_flash(r, FLASH_NAME_SAVED);
			return resp_redirect(r, "/settings");
		}
	}
	if (cur == NULL || cur->vlen == 0)
		return settings_refuse(r, 400, "current", "Your current "
		    "password, to show it is you.", "The field \xe2\x80\x9c"
		    "current\xe2\x80\x9d is missing.");
	if (valid_check(VALID_PASSWORD, pw->val, pw->vlen, &norm) == -1)
		return settings_refuse(r, 400, "password",
		    valid_hint(VALID_PASSWORD, 0), "The field \xe2\x80\x9c"
		    "password\xe2\x80\x9d is not valid.");
	free(norm);
	if ((gate = gate_enter(r)) == -1)
		return hash_busy(r);
	rc = account_change_password(r->app, r->sess.user_id, r->sess.login,
	    cur->val, cur->vlen, pw->val, pw->vlen, req_cookie(r, "sid"),
	    r->app->cfg.pwhash_min);
	hashgate_leave(gate);
	if (rc == -1)
		return resp_error(r, 500, "The password could not be saved.");
	if (rc == 0)
		return settings_refuse(r, 403, "current", "This is not your "
		    "current password.", "The current password is wrong; "
		    "nothing was changed.");
	resp_flash(r, FLASH_PASSWORD_SAVED);
	return resp_redirect(r, "/settings");
}
