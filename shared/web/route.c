/* route.c -- matching and dispatch; see route.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/auth.h"
#include "social/throttle.h"
#include "web/act.h"
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

static void
dispatch(struct req *r, const struct route *routes, size_t n)
{
	const struct route *hit = NULL;
	unsigned want = r->method == METHOD_HEAD ? METHOD_GET : r->method;
	unsigned allowed = 0;
	const struct kv *tok;
	char *args[REQ_ARGS_MAX];
	char secs[16];
	size_t i;
	int k, na, retry;

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
	 * navigation and carries their CSRF token). */
	if (hit == NULL || !(hit->flags & ROUTE_OWNAUTH) ||
	    r->method == METHOD_POST)
		req_identify(r);
	else {
		hit->page(r);
		return;
	}
	if (hit == NULL) {
		if (allowed == 0) {
			resp_error(r, 404, "There is nothing at this address.");
			return;
		}
		allow_header(r, allowed);
		resp_error(r, 405, "This address does not take that method.");
		return;
	}
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
			return;
		}
		if (json) {
			resp_text(r, 401, "application/json",
			    "{\"error\":\"login required\"}\n");
			return;
		}
		/* after the login, back to the page asked for (a cookie,
		 * so the redirect itself stays the contract's /login) */
		if (r->method != METHOD_POST && act_back_ok(req_uri(r)) &&
		    strpbrk(req_uri(r), ";,\"") == NULL)
			resp_cookie(r, "next", req_uri(r), 600);
		resp_redirect(r, "/login");
		return;
	}
	if ((hit->flags & ROUTE_ADMIN) && !r->sess.is_admin) {
		resp_error(r, 403, "This page is for administrators.");
		return;
	}
	if (r->method == METHOD_POST && !(hit->flags & ROUTE_NOCSRF)) {
		tok = kv_get(&r->form, "csrf");
		if (tok == NULL || r->new_pcsrf ||
		    !token_equal(tok->val, r->csrf)) {
			resp_error(r, 403, "The form was stale or forged "
			    "(CSRF check failed). Reload the page and try again.");
			return;
		}
	}
	/* One user's actions a minute: a flood is refused before the lock. */
	if ((hit->flags & ROUTE_WRITE) && r->method == METHOD_POST && r->user &&
	    (retry = throttle_write(r->app, r->sess.user_id)) > 0) {
		snprintf(secs, sizeof(secs), "%d", retry);
		resp_header(r, "Retry-After", secs);
		resp_error(r, 429, "Too many actions in a minute. Wait a "
		    "moment, then try again.");
		return;
	}
	/* Only now, for a request that passed every check: a refused one
	 * (anonymous, forged) never waits for the writers' lock nor makes
	 * the writers wait for it. */
	if ((hit->flags & ROUTE_TXN) && r->method == METHOD_POST)
		db_hold(&r->app->db);	/* on failure the page begins its own */
	hit->page(r);
}

void
route_dispatch(struct req *r, const struct route *routes, size_t n)
{
	dispatch(r, routes, n);
	/* A held transaction the page did not join (a refused request). */
	db_release(&r->app->db);
}
