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
 */
#include <string.h>

#include "base/clock.h"
#include "base/hashgate.h"
#include "social/account.h"
#include "social/pcache.h"
#include "social/sesscache.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/req.h"
#include "web/resp.h"
#include "web/route.h"
#include "web/serve.h"
#include "web_pages.h"

static int page_root(struct req *);
static int page_signup_form(struct req *);
static int page_signup(struct req *);
static int page_login_form(struct req *);
static int page_login(struct req *);
static int page_logout(struct req *);
static int page_healthz(struct req *);

static const struct route routes[] = {
	{ METHOD_GET, "/", page_root, 0 },			/* ROUTE_ROOT */
	{ METHOD_GET, "/signup", page_signup_form, 0 },		/* ROUTE_SIGNUP */
	{ METHOD_POST, "/signup", page_signup, 0 },		/* ROUTE_SIGNUP_POST */
	{ METHOD_GET, "/login", page_login_form, 0 },		/* ROUTE_LOGIN */
	{ METHOD_POST, "/login", page_login, 0 },		/* ROUTE_LOGIN_POST */
	{ METHOD_POST, "/logout", page_logout, 0 },		/* ROUTE_LOGOUT */
	{ METHOD_GET, "/healthz", page_healthz, 0 },		/* ROUTE_HEALTHZ */
};

int
main(int argc, char *argv[])
{
	return serve_run(argc, argv, "web", routes,
	    sizeof(routes) / sizeof(routes[0]));
}

static int
page_root(struct req *r)
{
	return resp_redirect(r, r->user ? "/feed" : "/login");
}

static int
page_signup_form(struct req *r)
{
	if (r->user)
		return resp_redirect(r, "/feed");
	web_signup_form(r, 200, NULL);
	return 0;
}

static int
page_login_form(struct req *r)
{
	if (r->user)
		return resp_redirect(r, "/feed");
	web_login_form(r, 200, NULL);
	return 0;
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
page_signup(struct req *r)
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
			web_signup_form(r, 400, msg);
			return -1;
		}
		v[i] = req_keep(r, norm);
	}
	if (account_reserved(v[0])) {
		r->bad_field = "login";
		snprintf(r->bad_why, sizeof(r->bad_why), "This login is kept "
		    "for the site's own accounts; choose another.");
		web_signup_form(r, 409, "That login is reserved.");
		return -1;
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
		web_signup_form(r, 409, "That login is taken.");
		return -1;
	}
	pcache_invalidate(r->app, v[0]);	/* a cached "no such user" */
	return web_start_session(r, id);
}

static int
page_login(struct req *r)
{
	const struct kv *login = kv_get(&r->form, "login");
	const struct kv *pw = kv_get(&r->form, "password");
	char *norm = NULL, secs[24];
	long long id = 0, left, now = clock_wall_ms();
	int gate;

	if (login == NULL || pw == NULL) {
		web_login_form(r, 400, login == NULL ?
		    "The field \xe2\x80\x9clogin\xe2\x80\x9d is missing." :
		    "The field \xe2\x80\x9cpassword\xe2\x80\x9d is missing.");
		return -1;
	}
	if (valid_check(VALID_LOGIN, login->val, login->vlen, &norm) == 0) {
		norm = req_keep(r, norm);
		/* an account under attack: refused at once, no hash */
		if ((left = account_throttled(&r->app->db, norm, now)) > 0) {
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
	if (norm != NULL)
		account_login_result(&r->app->db, norm, id > 0, now);
	if (id == 0) {
		web_login_form(r, 401, "Wrong login or password.");
		return -1;
	}
	return web_start_session(r, id);
}

static int
page_logout(struct req *r)
{
	const char *sid = req_cookie(r, "sid");

	/* A session that could not be ended stays valid: say so, and keep
	 * the cookie (clearing it would tell the user they are out while a
	 * copy of it still works). */
	if (sid != NULL && sesscache_end(&r->app->db, &r->app->rds, sid) == -1)
		return resp_error(r, 503, "You could not be signed out just now "
		    "(the database is busy). Try again in a moment.");
	resp_cookie(r, "sid", "", 0);
	return resp_redirect(r, "/login");
}

static int
page_healthz(struct req *r)
{
	struct dbq *s = db_stmt(&r->app->db, STMT_PING);
	rds_reply *rep = rds_cmdv(&r->app->rds, "PING", NULL);
	int db_ok = 0, redis_ok;

	if (s != NULL) {
		db_ok = dbq_step(s) == DBQ_ROW;
		db_done(s);
	}
	redis_ok = rep != NULL && rep->type == RDS_STATUS;
	if (rep != NULL)
		rds_free(rep);
	if (db_ok && redis_ok)
		resp_text(r, 200, "text/plain; charset=utf-8", "ok");
	else
		resp_text(r, 503, "text/plain; charset=utf-8",
		    !db_ok && !redis_ok ? "sqlite redis" :
		    !db_ok ? "sqlite" : "redis");
	return 0;
}
