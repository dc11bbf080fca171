/* req.h -- one HTTP request as FastCGI delivers it, and its response.
 *
 * struct req owns everything of one request: the decoded query, form and
 * cookies, the path arguments, the session, the output being built, and
 * scratch strings; req_finish() frees all of it.  FCGX pointers are not
 * kept past req_finish().
 */
#ifndef TALLY_REQ_H
#define TALLY_REQ_H

#include <fcgiapp.h>

#include "base/buf.h"
#include "base/kv.h"
#include "base/valid.h"
#include "social/bcache.h"
#include "social/sesscache.h"
#include "social/session.h"
#include "store/app.h"

#define REQ_BODY_MAX	65536
#define REQ_ARGS_MAX	4

/* A ROUTE_KEEP page's part of a request (web/keep.h). */
/* A page's first round trip sent ahead with its group's (web/batch.h,
 * social.c): the keys its commands named and the data connection's
 * generation when they were sent (what a kept page records, keep.h), the
 * number of replies, the replies once read, and the page's own queue
 * (what its send left for its reads). */
struct req_ahead {
	struct rds_keys	 keys;
	unsigned	 gen;
	int		 want;
	struct rds_stash st;
	void		*q;
};

struct keep_req {
	struct rds_keys	 rec;		/* what the load read from Redis */
	int		 recording;
	unsigned	 rec_gen;	/* the data connection's at the start */
	unsigned int	 dver;		/* SQLite's version at or before the
					 * load's reads */
	int		 dver_ok;
	int		 synced;	/* a sync was read after it was taken */
	int		 pending;	/* a sync sent, its answer not read */
	int		 ok;		/* the load: nothing doubtful */
};

enum method {
	METHOD_GET = 1,
	METHOD_POST = 2,
	METHOD_HEAD = 4,
	METHOD_OTHER = 8,
};

struct req {
	struct app	*app;
	FCGX_Request	*fr;		/* NULL in unit tests */
	unsigned	 method;	/* one enum method */
	char		*path;		/* decoded, normalised by nginx */
	struct kvlist	 query;
	struct kvlist	 form;
	struct kvlist	 cookies;
	char		*args[REQ_ARGS_MAX];	/* path arguments of the route */
	int		 nargs;
	int		 user;		/* 1 when sess holds a logged-in user */
	int		 unsure;	/* a session cookie the store could not
					 * check (it failed): neither a user nor
					 * known to be logged out */
	struct session	 sess;
	char		 csrf[TOKEN_LEN + 1];	/* the token forms carry */
	int		 new_pcsrf;	/* csrf is a new pre-session token */
	int		 identified;	/* req_identify() ran: user is known */
	int		 presumed;	/* user and sess.user_id are the sid
					 * cookie's word only (req_presume()):
					 * the page confirms them before it
					 * shows or writes anything */
	int		 redo;		/* the presumed session did not hold:
					 * route_dispatch() runs the route again
					 * for who really asks */
	char		 sid_hex[SID_HEX_LEN + 1];	/* when presumed */
	int		 sess_read;	/* req_identify_many() read sess: its
					 * session_load() answer + 2 */
	int		 sess_copy;	/* confirmed by its Redis copy */
	int		 sess_put;	/* confirmed by SQLite, its copy to
					 * renew in the page's last round trip
					 * (req_session_decide()) */
	long long	 sess_gen;	/* the copy's generation read before */
	struct badges	 badges;	/* layout_load(): the header's badges */
	int		 have_badges;	/* 1 read, 0 not read or failed */
	int		 badges_read;	/* read already by this load
					 * (layout_first_recv()), whether or
					 * not they could be */
	/* a badge poll's, read with the polls taken together (web/batch.h):
	 * badges_poll()'s answer, its user id, and badges */
	int		 polled;	/* 1 when it was */
	int		 poll_rc;
	long long	 poll_uid;
	long long	 now_ms;	/* when it arrived (0: unknown, as in
					 * unit tests: times show as dates) */
	const char	*bad_field;	/* the field field_need() refused */
	char		 bad_why[96];	/* and why, for the form page */
	char		 bad_msg[128];	/* "The field ... is not valid." */
	char		 err_msg[160];	/* the error page's (resp_error()) */
	int		 flash;		/* the one-time message the page shows
					 * (web/flash.h: an enum flash) */
	struct keep_req	 keep;		/* a ROUTE_KEEP page's (keep.h) */
	struct req_ahead *ahead;	/* its first round trip, sent ahead */
	/* what answers once the group commit it shared is durable and its
	 * counts applied (web/batch.h): then(r, then_arg), or NULL */
	int		(*then)(struct req *, long long);
	long long	 then_arg;
	char		**scratch;	/* freed by req_finish */
	size_t		 nscratch;
	/* the response */
	int		 status;
	const char	*ctype;
	struct buf	 head;
	struct buf	 body;
};

/* Reads and decodes the request behind fr.  Returns 0, or the HTTP status
 * to answer (400 malformed, 413 body too large) without dispatching.
 * Who is asking is not known yet: see req_identify(). */
int		 req_parse(struct req *, struct app *, FCGX_Request *);
/* Looks the session up in SQLite (r->user, r->sess, r->csrf), or gives a
 * visitor a pre-session CSRF token.  route_dispatch() calls it for every
 * route but those that authenticate themselves (ROUTE_OWNAUTH). */
void		 req_identify(struct req *);
/* Reads the sessions of n requests (n <= SESSION_MANY) in one statement
 * (session_load_many()), for their req_identify() to take instead of a
 * read each: a group commit's (web/batch.h). */
void		 req_identify_many(struct req **rs, int n);
/* For a GET of a ROUTE_LATESESS page (route.h), instead of
 * req_identify(): when the sid cookie is well formed, takes the user id
 * it names as the user, unchecked (r->presumed); 1, or 0 when there is
 * no such cookie.  The page loads its model with that id, reading only
 * (a timeline that must be rebuilt, a marker to move: req_confirm()
 * first), and confirms the session in a Redis round trip of its own:
 * its first (layout_first_recv(): the feed, a profile) or its last
 * (layout_load_cards()). */
int		 req_presume(struct req *);
/* Confirms a presumed session: with cached (the session's Redis copy,
 * sesscache.h) it is taken as it is; without, SQLite decides and the
 * copy is put if the generation is still gen (-1: read it now).  1 when
 * the user is who the cookie says (r->sess, r->csrf filled), 0 when not:
 * r is then a visitor as req_identify() would have made it, and r->redo
 * is set: the page returns without answering.  Not presumed: r->user. */
int		 req_confirm(struct req *, const struct session *cached,
		    long long gen);
/* 1 when the user's session is in SQLite: asked again when only its
 * Redis copy confirmed it (r->sess_copy), which reads for its minute but
 * writes nothing (sesscache.h): before a write a GET makes (a visit's
 * marker).  0 when not (the page stays as it is), or no user. */
int		 req_session_held(struct req *);
/* A presumed session confirmed in a round trip of the page's own before
 * its last (the feed's and a profile's first, layout_first_recv()):
 * req_session_send() queues the read of its copy (nothing when not
 * presumed), req_session_read() reads the reply (it sends nothing), and
 * once every reply of the round trip is read req_session_decide()
 * confirms as req_confirm() does, from the copy, or from SQLite; a copy
 * SQLite renewed is put in the page's last round trip
 * (layout_load_cards(): r->sess_put), or alone after the page when no
 * round trip carried it (req_session_put()).  req_session_decide(): 1,
 * or 0 when the presumed session did not hold (as req_confirm(): r is a
 * visitor now, r->redo set); 1 when nothing was presumed. */
struct req_sessq {
	struct sesscache_q q;
	struct session	 ss;		/* the copy read, when cached */
	long long	 gen;
	int		 cached;
};
void		 req_session_send(struct req *, struct req_sessq *);
void		 req_session_read(struct req *, struct req_sessq *);
int		 req_session_decide(struct req *, struct req_sessq *);
/* Puts the copy SQLite renewed, if still to put (r->sess_put). */
void		 req_session_put(struct req *);
void		 req_finish(struct req *);
/* Frees what was sent ahead (NULL: nothing); the page's queue holds no
 * reply of its own then (its reads never ran, or ran to their end). */
void		 req_ahead_free(struct req_ahead *);
/* A page's load takes what its first round trip left when it went ahead
 * (r->ahead, cleared: a page run again sends its own) into *a.  When
 * use, the page's queue, whose replies rds_get_reply() now hands out
 * until req_ahead_read(a); else NULL, *a freed and NULL: the page sends
 * its own. */
void		*req_ahead_take(struct req *, struct req_ahead **a, int use);
void		 req_ahead_read(struct req *, struct req_ahead *a);

/* A CGI parameter (SERVER_PROTOCOL, REMOTE_ADDR...), or NULL. */
const char	*req_param(const struct req *, const char *);
/* 1 when the client asked for JSON (Accept names application/json): an
 * action then answers JSON instead of a redirect, errors included. */
int		 req_wants_json(const struct req *);
/* 1 when a GET is the user's own request on this site, so it may move a
 * read marker (docs/INTERFACE.md §2): not when Sec-Fetch-Site says
 * cross-site or same-site (a link elsewhere), nor when Sec-Purpose says
 * prefetch (the browser's prerender of a page not yet opened); a client
 * that sends no such header is taken at its word. */
int		 req_own(const struct req *);
/* 1 when the request is a navigation (Sec-Fetch-Dest: document, or a
 * client that sends no such header): what counts as a post's view, not
 * an <img> or a fetch pointing at the page, nor a prefetch. */
int		 req_navigation(const struct req *);
/* The client as anonymous views and limits key it: an IPv4 address as
 * is, an IPv6 one by its /64 ("2001:db8:1:2::/64": one host owns a whole
 * /64), an IPv4-mapped IPv6 one as IPv4.  out: at least REQ_ADDR_MAX
 * bytes; "" when REMOTE_ADDR is missing or not an address. */
#define REQ_ADDR_MAX	48
void		 req_client_key(const struct req *, char *out, size_t sz);
/* The same from an address string (pure: unit-tested). */
void		 req_addr_key(const char *addr, char *out, size_t sz);
/* The request's path and query as the client sent them (REQUEST_URI), or
 * the decoded path when there is none (unit tests). */
const char	*req_uri(const struct req *);
/* A cookie's value, or NULL.  Over HTTPS the cookie named
 * "__Host-<name>" (resp_cookie() sets that one there): the browser takes
 * such a cookie only from this host, with Secure and Path=/, so no
 * sibling subdomain can plant a session or a csrf token. */
const char	*req_cookie(const struct req *, const char *);

/* Path argument i as an id; 0 when it is not one. */
long long	 req_arg_id(const struct req *, int i);
/* Keeps s until req_finish and returns it. */
char		*req_keep(struct req *, char *s);

#endif
