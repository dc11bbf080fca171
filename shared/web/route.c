/* route.c -- matching and dispatch; see route.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/auth.h"
#include "base/log.h"
#include "social/throttle.h"
#include "store/rowheld.h"
#include "web/act.h"
#include "web/flash.h"
#include "web/keep.h"
#include "web/resp.h"
#include "web/route.h"

int
route_match(const char *pat, const char *path, char **args, int max)
{
	const char *ps, *pe, *ss, *se;
	int n = 0, i;

	ps = pat;
	ss = path;
	for (;;) {
		if (*ps != '/' || *ss != '/')
			goto no;
		ps++;
		ss++;
		pe = strchr(ps, '/');
		if (pe == NULL)
			pe = ps + strlen(ps);
		se = strchr(ss, '/');
		if (se == NULL)
			se = ss + strlen(ss);
		if (*ps == ':') {
			if (se == ss || n >= max)
				goto no;
			if (strncmp(ps, ":id", (size_t)(pe - ps)) == 0 &&
			    pe - ps == 3)
				for (i = 0; ss + i < se; i++)
					if (ss[i] < '0' || ss[i] > '9' || i > 15)
						goto no;
			args[n++] = xstrndup(ss, (size_t)(se - ss));
		} else if (pe - ps != se - ss ||
		    strncmp(ps, ss, (size_t)(pe - ps)) != 0)
			goto no;
		ps = pe;
		ss = se;
		if (*ps == '\0' && *ss == '\0')
			return n;
	}
no:
	while (n > 0)
		free(args[--n]);
	return -1;
}

static void
allow_header(struct req *r, unsigned methods)
{
	const char *v = (methods & METHOD_GET) && (methods & METHOD_POST) ?
	    "GET, HEAD, POST" : (methods & METHOD_GET) ? "GET, HEAD" : "POST";

	resp_header(r, "Allow", v);
}

/* The checks of a matched route, before its page: 1 to run the page, 0
 * when they answered. */
static int
admit(struct req *r, const struct route *hit)
{
	const struct kv *tok;
	char secs[16];
	int retry;

	if ((hit->flags & (ROUTE_USER | ROUTE_ADMIN)) && !r->user) {
		int json = (hit->flags & ROUTE_JSON) ||
		    (r->method == METHOD_POST && req_wants_json(r));

		if (r->unsure) {
			/* The session could not be checked (the store
			 * failed): not logged out, so no /login; an action
			 * is not taken. */
			resp_header(r, "Retry-After", "1");
			if (json)
				resp_text(r, 503, "application/json", "{\"error\":"
				    "\"session could not be checked\"}\n");
			else
				resp_error(r, 503, "Your session could not be "
				    "checked just now. Nothing was changed; try "
				    "again in a moment.");
			return 0;
		}
		if (json) {
			resp_text(r, 401, "application/json",
			    "{\"error\":\"login required\"}\n");
			return 0;
		}
		/* after the login, back to the page asked for (a cookie,
		 * so the redirect itself stays the contract's /login) */
		if (r->method != METHOD_POST && act_back_ok(req_uri(r)) &&
		    strpbrk(req_uri(r), ";,\"") == NULL)
			resp_cookie(r, "next", req_uri(r), 600);
		resp_redirect(r, "/login");
		return 0;
	}
	if ((hit->flags & ROUTE_ADMIN) && !r->sess.is_admin) {
		resp_error(r, 403, "This page is for administrators.");
		return 0;
	}
	if (r->method == METHOD_POST && !(hit->flags & ROUTE_NOCSRF)) {
		tok = kv_get(&r->form, "csrf");
		if (tok == NULL || r->new_pcsrf ||
		    !auth_token_equal(tok->val, r->csrf)) {
			/* the session's token unknown (the store failed):
			 * no forgery found, nothing done (a logout) */
			if (r->unsure) {
				resp_header(r, "Retry-After", "1");
				resp_error(r, 503, "Your session could not be "
				    "checked just now. Nothing was changed; try "
				    "again in a moment.");
				return 0;
			}
			resp_error(r, 403, "The form was stale or forged "
			    "(CSRF check failed). Reload the page and try again.");
			return 0;
		}
	}
	/* One user's actions a minute: a flood is refused before the lock. */
	if ((hit->flags & ROUTE_WRITE) && r->method == METHOD_POST && r->user &&
	    (retry = throttle_write(r->app, r->sess.user_id)) > 0) {
		snprintf(secs, sizeof(secs), "%d", retry);
		resp_header(r, "Retry-After", secs);
		resp_error(r, 429, "Too many actions in a minute. Wait a "
		    "moment, then try again.");
		return 0;
	}
	return 1;
}

/* A page (page.h): its model loaded, then rendered; around them what
 * the route keeps (ROUTE_KEEP).  A presumed reader (req.h) whose load
 * answered by itself (an error page) is confirmed now, and the answer
 * made again for who really asks: the error page names the user, and
 * does no I/O of its own. */
static void
run_page(struct req *r, const struct route *hit)
{
	const struct page *pg = hit->page;
	enum page_load rc;
	void *m;

	/* a one-time message: taken before the load, shown by the page's
	 * header, and never from a kept page (web/flash.h) */
	if (!(hit->flags & (ROUTE_JSON | ROUTE_PART)) &&
	    req_cookie(r, FLASH_COOKIE) != NULL) {
		r->flash = flash_parse(req_cookie(r, FLASH_COOKIE));
		resp_cookie(r, FLASH_COOKIE, "", 0);	/* once */
	}
	if ((hit->flags & ROUTE_KEEP) && r->flash == FLASH_NONE &&
	    keep_answer(r) == 1)
		return;
	m = xcalloc(1, pg->size > 0 ? pg->size : 1);
	rc = pg->load(r, m);
	/* a session's copy SQLite renewed that no round trip of the load
	 * carried (req_session_decide()) */
	req_session_put(r);
	if (rc == PAGE_RENDER)
		pg->render(r, m);
	if (hit->flags & ROUTE_KEEP)
		keep_store(r, rc == PAGE_RENDER);
	if (pg->done != NULL)
		pg->done(m);
	free(m);
	if (rc == PAGE_AGAIN)
		r->redo = 1;
	else if (rc == PAGE_ANSWERED && r->presumed && r->status >= 400 &&
	    r->err_msg[0] != '\0') {
		if (!req_confirm(r, NULL, -1))
			r->redo = 1;
		else
			resp_error(r, r->status, r->err_msg);
	}
}

#define ROUTE_TRIES	3	/* an action lost to a deadlock, run again */

void
route_busy(struct req *r)
{
	resp_reset(r);
	resp_header(r, "Retry-After", "2");
	resp_error(r, 503, "The site is too busy to save this just now; "
	    "nothing was changed. Try again in a moment.");
}

/* Runs the admitted page or action.  Only now, for a request that
 * passed every check, is the write transaction opened: a refused one
 * (anonymous, forged) never waits for the writers' lock nor makes the
 * writers wait for it.  An action whose transaction lost to another
 * (db_retryable(): PostgreSQL's writers run at once) was rolled back
 * whole, its Redis work not begun (that follows a commit): it runs again
 * with a clean response, and the client never sees the deadlock.  One
 * that waited for a lock until DB_BUSY_MS ran out (db_busy(): a writer
 * stopped, or cut off, holding it) answers 503 with Retry-After, not
 * 500, when it committed nothing (a signup whose account committed and
 * whose session did not is a failure, not "nothing was changed"): a
 * moment later it may pass.  It does not wait a second time for its own
 * begin after the hold's (on SQLite that wait would be short: the lock
 * is known held, store/db.h: DB_STUCK_MS).  1 when it answered busy so,
 * else 0. */
static int
run_txn(struct req *r, const struct route *hit)
{
	unsigned long long commits, kept;
	int tries;

	for (tries = 1; ; tries++) {
		db_forget_failure(r->app->db);
		commits = db_ncommits(r->app->db);
		kept = db_released(r->app->db);
		if ((hit->flags & ROUTE_TXN) && r->method == METHOD_POST &&
		    db_hold(r->app->db) == -1 && db_busy(r->app->db)) {
			route_busy(r);	/* else the page begins its own */
			return 1;
		}
		if (hit->page != NULL && r->method != METHOD_POST) {
			run_page(r, hit);
			/* a page that writes (the list it shows marked read)
			 * and lost to another transaction (a deadlock with a
			 * group's delete) runs again, as an action does: it
			 * answered 500 */
			if (r->status < 500 || tries == ROUTE_TRIES ||
			    !db_retryable(r->app->db))
				return 0;
			log_info("%s: lost to another transaction, run again",
			    r->path);
			db_release(r->app->db);
			resp_reset(r);
			continue;
		}
		hit->act(r, hit);
		if (r->status >= 500 && db_busy(r->app->db) &&
		    db_ncommits(r->app->db) == commits &&
		    db_released(r->app->db) == kept) {
			route_busy(r);
			return 1;
		}
		if (tries == ROUTE_TRIES || !db_retryable(r->app->db))
			return 0;
		log_info("%s: lost to another transaction, run again",
		    r->path);
		db_release(r->app->db);
		resp_reset(r);
	}
}

/* An action on one post's row (ROUTE_GROUP: its first argument) whose
 * writers run at once (PostgreSQL) first asks whether the host's writers
 * found that row held (store/rowheld.h): then it answers busy without
 * waiting, as it would have after its wait, and the writer process is
 * free for the actions on every other post.  A wait of its own that ran
 * out marks the row held for the host. */
static void
run(struct req *r, const struct route *hit)
{
	enum rowheld held = ROWHELD_GO;
	long long row = 0;

	if ((hit->flags & ROUTE_GROUP) && r->nargs > 0 &&
	    db_groups_at_once(r->app->db))
		row = req_arg_id(r, 0);
	if (row > 0 && (held = rowheld_check(row)) == ROWHELD_BUSY) {
		route_busy(r);
		return;
	}
	if (run_txn(r, hit) == 1 && row > 0) {
		if (rowheld_mark(row))
			log_warn("%s: the row waited for is held by another "
			    "transaction: its actions answer busy at once for "
			    "%d s, then one tries again", r->path,
			    ROWHELD_MS / 1000);
	} else if (held == ROWHELD_TRY)
		rowheld_free(row);
}

/* The route r asks for, with who asks (r->user); NULL when it answered
 * already (404, 405, or a page that finds its session itself). */
static const struct route *
find(struct req *r, const struct route *routes, size_t n)
{
	const struct route *hit = NULL;
	unsigned want = r->method == METHOD_HEAD ? METHOD_GET : r->method;
	unsigned allowed = 0;
	char *args[REQ_ARGS_MAX];
	size_t i;
	int k, na;

	for (i = 0; i < n && hit == NULL; i++) {
		if ((na = route_match(routes[i].pattern, r->path, args,
		    REQ_ARGS_MAX)) < 0)
			continue;
		if (routes[i].methods & want) {
			hit = &routes[i];
			memcpy(r->args, args, sizeof(args[0]) * (size_t)na);
			r->nargs = na;
		} else {
			allowed |= routes[i].methods;
			for (k = 0; k < na; k++)
				free(args[k]);
		}
	}
	/* Who asks, for every route but those that find their session
	 * themselves; a 404 or 405 too (its header shows the visitor's
	 * navigation and carries their CSRF token).  The busiest pages
	 * take the cookie's word until a round trip of their own confirms
	 * it (route.h, ROUTE_LATESESS). */
	if (hit != NULL && (hit->flags & ROUTE_LATESESS) &&
	    !(hit->flags & ROUTE_ADMIN) && r->method != METHOD_POST &&
	    req_presume(r))
		;
	else if (hit == NULL || !(hit->flags & ROUTE_OWNAUTH) ||
	    r->method == METHOD_POST)
		req_identify(r);
	else {
		run_page(r, hit);
		return NULL;
	}
	if (hit == NULL) {
		if (allowed == 0) {
			resp_error(r, 404, "There is nothing at this address.");
			return NULL;
		}
		allow_header(r, allowed);
		resp_error(r, 405, "This address does not take that method.");
	}
	return hit;
}

static void
dispatch(struct req *r, const struct route *routes, size_t n)
{
	const struct route *hit = find(r, routes, n);

	if (hit == NULL)
		return;
	/* A presumed session that did not hold: the page answered nothing,
	 * and runs again for who really asks (a visitor, or a redirect to
	 * /login). */
	while (admit(r, hit)) {
		run(r, hit);
		if (r->presumed) {	/* a page that never confirmed it */
			log_err("%s: the session was never confirmed", r->path);
			if (req_confirm(r, NULL, -1))
				r->redo = 1;
		}
		if (!r->redo)
			break;
		r->redo = 0;
		r->have_badges = 0;
		r->status = 200;
		r->ctype = NULL;
		buf_reset(&r->body);
	}
}

void
route_dispatch(struct req *r, const struct route *routes, size_t n)
{
	dispatch(r, routes, n);
	/* A held transaction the page did not join (a refused request). */
	db_release(r->app->db);
}

unsigned
route_flags(const struct req *r, const struct route *routes, size_t n)
{
	unsigned want = r->method == METHOD_HEAD ? METHOD_GET : r->method;
	char *args[REQ_ARGS_MAX];
	size_t i;
	int na;

	for (i = 0; i < n; i++) {
		if ((na = route_match(routes[i].pattern, r->path, args,
		    REQ_ARGS_MAX)) < 0)
			continue;
		while (na > 0)
			free(args[--na]);
		if (routes[i].methods & want)
			return routes[i].flags;
	}
	return 0;
}

int
route_flagged(const struct req *r, const struct route *routes, size_t n,
    unsigned flag)
{
	return (route_flags(r, routes, n) & flag) != 0;
}

const struct route *
route_admit(struct req *r, const struct route *routes, size_t n)
{
	const struct route *hit = find(r, routes, n);

	return hit != NULL && admit(r, hit) ? hit : NULL;
}

void
route_run(struct req *r, const struct route *hit)
{
	run(r, hit);
	db_release(r->app->db);
}
