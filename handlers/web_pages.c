/* web_pages.c -- starting a session (the forms: web/view_account.c). */
#include "social/account.h"
#include "social/device.h"
#include "social/live.h"
#include "social/sesscache.h"
#include "web/act.h"
#include "web/resp.h"
#include "web_pages.h"

void
web_device_issue(struct req *r, const char *login, const char *stamp)
{
	char dev[DEVICE_VALUE_MAX + 1], own[AUTH_HASH_MAX];

	if (stamp == NULL && account_stamp(r->app->db, login, own) == 1)
		stamp = own;
	if (stamp != NULL && device_issue(&r->app->cfg, login, stamp,
	    req_cookie(r, DEVICE_COOKIE), dev) == 0)
		resp_cookie(r, DEVICE_COOKIE, dev, DEVICE_MAX_AGE);
}

int
web_start_session(struct req *r, long long uid, const char *login,
    const char *stamp)
{
	char sid[SID_MAX + 1], csrf[TOKEN_LEN + 1];
	const char *old = req_cookie(r, "sid"), *next;
	int rc;

	/* The browser's session before this one ends (a login over it, a
	 * signup): with its live badges, as a logout's; one that could not
	 * be ended would stay valid behind the new cookie */
	if (old != NULL && sesscache_end(r->app->db, r->app->rds, old) == -1)
		return resp_error(r, 503, "You could not be signed in just now "
		    "(the database is busy). Try again in a moment.");
	if (old != NULL && r->user)
		live_close(r->app, r->sess.user_id);
	if ((rc = session_create(r->app->db, uid, r->app->cfg.session_secs,
	    sid, csrf, stamp)) == -1)
		return resp_error(r, 500, "The session could not be started.");
	if (rc == 1)
		return 1;	/* the password changed since it was checked */
	resp_cookie(r, "sid", sid, r->app->cfg.session_secs);
	/* this browser has logged in to login: never locked out of it
	 * while its password stays (social/device.h) */
	web_device_issue(r, login, stamp);
	/* the pre-session token ends with the login: a visitor's token that
	 * leaked before it cannot serve after it */
	if (req_cookie(r, "pcsrf") != NULL)
		resp_cookie(r, "pcsrf", "", 0);
	/* back to the page that sent the visitor to log in (route.c) */
	if ((next = req_cookie(r, "next")) != NULL) {
		resp_cookie(r, "next", "", 0);
		if (act_back_ok(next))
			return resp_redirect(r, next);
	}
	return resp_redirect(r, "/feed");
}
