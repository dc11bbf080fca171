/* req.c -- reading and decoding one FastCGI request; see req.h. */
#include <assert.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/clock.h"
#include "base/log.h"
#include "social/sesscache.h"
#include "web/req.h"

const char *
req_param(const struct req *r, const char *name)
{
	return r->fr != NULL ? FCGX_GetParam(name, r->fr->envp) : NULL;
}

int
req_wants_json(const struct req *r)
{
	const char *acc = req_param(r, "HTTP_ACCEPT");

	return acc != NULL && strstr(acc, "application/json") != NULL;
}

/* 1 when the browser fetched the page before it was asked for
 * (Sec-Purpose: prefetch, or prefetch;prerender): nobody has seen it. */
static int
speculative(const struct req *r)
{
	const char *p = req_param(r, "HTTP_SEC_PURPOSE");

	return p != NULL && strncmp(p, "prefetch", 8) == 0;
}

int
req_own(const struct req *r)
{
	const char *site = req_param(r, "HTTP_SEC_FETCH_SITE");

	/* a HEAD asks what a page is like, shows nobody anything */
	return r->method != METHOD_HEAD && !speculative(r) && (site == NULL ||
	    (strcmp(site, "cross-site") != 0 &&
	    strcmp(site, "same-site") != 0));
}

int
req_navigation(const struct req *r)
{
	const char *dest = req_param(r, "HTTP_SEC_FETCH_DEST");

	return !speculative(r) && (dest == NULL ||
	    strcmp(dest, "document") == 0);
}

void
req_addr_key(const char *addr, char *out, size_t sz)
{
	unsigned char a6[16];
	struct in_addr a4;
	char txt[INET6_ADDRSTRLEN];
	static const unsigned char mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0,
	    0, 0xff, 0xff };

	if (sz > 0)
		out[0] = '\0';
	if (addr == NULL || sz < REQ_ADDR_MAX)
		return;
	if (inet_pton(AF_INET, addr, &a4) == 1) {
		inet_ntop(AF_INET, &a4, out, (socklen_t)sz);
		return;
	}
	if (inet_pton(AF_INET6, addr, a6) != 1)
		return;
	if (memcmp(a6, mapped, sizeof(mapped)) == 0) {
		memcpy(&a4, a6 + 12, 4);
		inet_ntop(AF_INET, &a4, out, (socklen_t)sz);
		return;
	}
	memset(a6 + 8, 0, 8);
	if (inet_ntop(AF_INET6, a6, txt, sizeof(txt)) != NULL)
		snprintf(out, sz, "%s/64", txt);
}

void
req_client_key(const struct req *r, char *out, size_t sz)
{
	req_addr_key(req_param(r, "REMOTE_ADDR"), out, sz);
}

const char *
req_uri(const struct req *r)
{
	const char *u = req_param(r, "REQUEST_URI");

	return u != NULL ? u : r->path;
}

const char *
req_cookie(const struct req *r, const char *name)
{
	const char *https = req_param(r, "HTTPS");
	char host[64];
	const struct kv *kv;

	/* over HTTPS only the __Host- name: a sibling subdomain can plant
	 * "sid" for this site, never "__Host-sid" (resp_cookie()) */
	if (https != NULL && strcmp(https, "on") == 0 &&
	    (size_t)snprintf(host, sizeof(host), "__Host-%s", name) <
	    sizeof(host))
		kv = kv_get(&r->cookies, host);
	else
		kv = kv_get(&r->cookies, name);
	return kv != NULL ? kv->val : NULL;
}

char *
req_keep(struct req *r, char *s)
{
	r->scratch = xrealloc(r->scratch, (r->nscratch + 1) * sizeof(char *));
	r->scratch[r->nscratch++] = s;
	return s;
}

static unsigned
method_of(const char *m)
{
	if (m == NULL)
		return METHOD_OTHER;
	if (strcmp(m, "GET") == 0)
		return METHOD_GET;
	if (strcmp(m, "POST") == 0)
		return METHOD_POST;
	if (strcmp(m, "HEAD") == 0)
		return METHOD_HEAD;
	return METHOD_OTHER;
}

/* Strict CONTENT_LENGTH: "" or absent is 0; -1 if not a number. */
static long long
content_length(const char *cl)
{
	long long v;

	if (cl == NULL || *cl == '\0')
		return 0;
	if (valid_int(cl, 0, 1LL << 40, &v) == -1)
		return -1;
	return v;
}

static int
read_body(struct req *r, char **out, size_t *outlen)
{
	const char *ct = req_param(r, "CONTENT_TYPE");
	long long len = content_length(req_param(r, "CONTENT_LENGTH"));
	char *b;
	int n, k;

	*out = NULL;
	*outlen = 0;
	if (len < 0)
		return 400;
	if (len > REQ_BODY_MAX)
		return 413;
	if (len == 0)
		return 0;
	if (ct == NULL || strncasecmp(ct, "application/x-www-form-urlencoded",
	    33) != 0)
		return 400;
	b = xmalloc((size_t)len + 1);
	for (n = 0; n < len; n += k)
		if ((k = FCGX_GetStr(b + n, (int)(len - n), r->fr->in)) <= 0)
			break;
	if (n != len) {
		free(b);
		return 400;
	}
	b[n] = '\0';
	*out = b;
	*outlen = (size_t)n;
	return 0;
}

/* A visitor: the pre-session token of the pcsrf cookie, or a new one. */
static void
visitor(struct req *r)
{
	const char *pc = req_cookie(r, "pcsrf");

	if (pc != NULL && strlen(pc) == TOKEN_LEN) {
		memcpy(r->csrf, pc, TOKEN_LEN + 1);
		return;
	}
	auth_token_new(r->csrf);
	r->new_pcsrf = 1;
}

/* Who is asking: a live session, or a visitor with a pre-session token;
 * unsure when the store failed to check the session cookie. */
void
req_identify_many(struct req **rs, int n)
{
	const char *sids[SESSION_MANY];
	struct session out[SESSION_MANY];
	int rc[SESSION_MANY], i;

	assert(n <= SESSION_MANY);
	if (n <= 0)
		return;
	for (i = 0; i < n; i++)
		sids[i] = req_cookie(rs[i], "sid");
	session_load_many(rs[0]->app->db, sids, n, out, rc);
	for (i = 0; i < n; i++) {
		rs[i]->sess = out[i];
		rs[i]->sess_read = rc[i] + 2;
	}
}

void
req_identify(struct req *r)
{
	const char *sid = req_cookie(r, "sid");
	int rc;

	if (r->sess_read) {	/* req_identify_many() read it */
		rc = r->sess_read - 2;
		r->sess_read = 0;
	} else
		rc = sid != NULL ? session_load(r->app->db, sid, &r->sess) : 0;

	r->identified = 1;
	if (rc == 1) {
		r->user = 1;
		memcpy(r->csrf, r->sess.csrf, sizeof(r->csrf));
		return;
	}
	r->unsure = rc == -1;
	visitor(r);
}

int
req_presume(struct req *r)
{
	const char *sid = req_cookie(r, "sid");
	long long uid;

	if (sid == NULL || session_id_parse(sid, &uid, r->sid_hex) == -1)
		return 0;
	memset(&r->sess, 0, sizeof(r->sess));
	r->sess.user_id = uid;
	r->identified = 1;
	r->user = 1;
	r->presumed = 1;
	return 1;
}

/* req_confirm(); later: a copy SQLite renews is left to put
 * (r->sess_put) rather than put now. */
static int
confirm(struct req *r, const struct session *cached, long long gen,
    int later)
{
	const char *sid = req_cookie(r, "sid");
	long long uid = r->sess.user_id;
	int rc;

	if (!r->presumed)
		return r->user;
	r->presumed = 0;
	if (cached != NULL) {
		r->sess = *cached;
		r->sess.user_id = uid;
		memcpy(r->csrf, r->sess.csrf, sizeof(r->csrf));
		return 1;
	}
	if (gen < 0 && !later)
		gen = sesscache_gen(r->app->rds, uid);
	rc = session_load(r->app->db, sid, &r->sess);
	if (rc == 1) {
		memcpy(r->csrf, r->sess.csrf, sizeof(r->csrf));
		if (later) {	/* none when Redis failed: no generation */
			r->sess_put = gen >= 0;
			r->sess_gen = gen;
		} else
			sesscache_put(r->app->rds, sid, &r->sess, gen);
		return 1;
	}
	r->user = 0;
	r->unsure = rc == -1;
	visitor(r);
	r->redo = 1;
	return 0;
}

int
req_confirm(struct req *r, const struct session *cached, long long gen)
{
	return confirm(r, cached, gen, 0);
}

int
req_session_held(struct req *r)
{
	struct session s;
	const char *sid = req_cookie(r, "sid");

	if (!r->user || !r->sess_copy)
		return r->user;
	if (sid == NULL || session_load(r->app->db, sid, &s) != 1)
		return 0;
	r->sess_copy = 0;	/* SQLite said so */
	return 1;
}

void
req_session_send(struct req *r, struct req_sessq *q)
{
	q->q.queued = 0;
	q->cached = 0;
	q->gen = -1;
	if (r->presumed)
		sesscache_send(r->app->rds, r->sess.user_id, r->sid_hex, &q->q);
}

void
req_session_read(struct req *r, struct req_sessq *q)
{
	if (r->presumed)
		q->cached = sesscache_recv(r->app->rds, &q->q, clock_wall_ms(),
		    &q->ss, &q->gen);
}

int
req_session_decide(struct req *r, struct req_sessq *q)
{
	if (!r->presumed)	/* nothing to confirm: a visitor, or done */
		return 1;
	r->sess_copy = q->cached;
	return confirm(r, q->cached ? &q->ss : NULL, q->gen, 1);
}

void
req_session_put(struct req *r)
{
	const char *sid = req_cookie(r, "sid");

	if (r->sess_put && sid != NULL)
		sesscache_put(r->app->rds, sid, &r->sess, r->sess_gen);
	r->sess_put = 0;
}

int
req_parse(struct req *r, struct app *a, FCGX_Request *fr)
{
	const char *qs, *uri, *cookie;
	char *body = NULL;
	size_t blen = 0;
	int st;

	memset(r, 0, sizeof(*r));
	r->app = a;
	r->fr = fr;
	r->status = 200;
	r->now_ms = clock_wall_ms();	/* "5 min ago" on the pages */
	r->method = method_of(req_param(r, "REQUEST_METHOD"));
	uri = req_param(r, "DOCUMENT_URI");
	if (uri == NULL || *uri != '/')
		uri = req_param(r, "SCRIPT_NAME");
	r->path = xstrdup(uri != NULL && *uri == '/' ? uri : "/");
	if ((cookie = req_param(r, "HTTP_COOKIE")) != NULL)
		kv_parse_cookies(&r->cookies, cookie);
	qs = req_param(r, "QUERY_STRING");
	if (qs != NULL && kv_parse_form(&r->query, qs, strlen(qs)) == -1)
		return 400;
	if (r->method == METHOD_POST) {
		if ((st = read_body(r, &body, &blen)) != 0)
			return st;
		st = body != NULL ? kv_parse_form(&r->form, body, blen) : 0;
		free(body);
		if (st == -1)
			return 400;
	}
	return 0;
}

void
req_finish(struct req *r)
{
	size_t i;
	int j;

	for (i = 0; i < r->nscratch; i++)
		free(r->scratch[i]);
	free(r->scratch);
	req_ahead_free(r->ahead);	/* sent ahead, never loaded: a kept page */
	for (j = 0; j < r->nargs; j++)
		free(r->args[j]);
	kv_free(&r->query);
	kv_free(&r->form);
	kv_free(&r->cookies);
	buf_free(&r->head);
	buf_free(&r->body);
	free(r->path);
	memset(r, 0, sizeof(*r));
}

void *
req_ahead_take(struct req *r, struct req_ahead **a, int use)
{
	*a = r->ahead;
	r->ahead = NULL;
	if (*a != NULL && use) {
		rds_stash_use(r->app->rds, &(*a)->st);
		return (*a)->q;
	}
	req_ahead_free(*a);
	*a = NULL;
	return NULL;
}

void
req_ahead_read(struct req *r, struct req_ahead *a)
{
	if (a != NULL)
		rds_stash_use(r->app->rds, NULL);
}

void
req_ahead_free(struct req_ahead *a)
{
	if (a == NULL)
		return;
	rds_stash_free(&a->st);
	free(a->q);
	free(a);
}

long long
req_arg_id(const struct req *r, int i)
{
	long long v;

	if (i >= r->nargs ||
	    valid_int(r->args[i], 1, 9007199254740992LL, &v) == -1)
		return 0;
	return v;
}
