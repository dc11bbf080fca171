/* pcache.h -- the profile cache: a login's profile in Redis.
 *
 * One Redis key per login, {login:<login>}, holding the profile as JSON
 * (jansson) with a TTL of one hour plus up to ten minutes of random
 * jitter, so entries made together do not expire together (no
 * avalanche).  A login that does not exist is cached as "null" for 30 s
 * (no penetration: a hammered unknown login costs SQLite one query per
 * 30 s).  A missing entry is rebuilt by the one request that wins a
 * SET NX lock; the others wait up to ~100 ms for it, then read SQLite (no
 * stampede).  Redis down: SQLite.  Signup and useradd drop the entry
 * (a negative one would otherwise hide the new user for 30 s), and so
 * does a rename.
 * Rebuilds and SQLite reads are counted in {metrics}:cache.
 */
#ifndef TALLY_PCACHE_H
#define TALLY_PCACHE_H

#include "social/account.h"
#include "store/app.h"

/* 1 found, 0 no such login, -1 error.  login is already folded. */
int	pcache_get(struct app *, const char *login, struct account *);
/* Drops login's entry and any rebuild's lock, after a change committed
 * (a rename; a signup, over a negative entry): a rebuild that read the
 * row before puts nothing.  When Redis does not take it, SQLite keeps
 * that a change was missed (setting profiles_stale) and
 * pcache_stale_refresh() (the worker, once Redis answers) drops every
 * entry: 1 it did, 0 nothing to do, -1 Redis failed. */
void	pcache_invalidate(struct app *, const char *login);
int	pcache_stale_refresh(struct app *);

/* pcache_get() in steps, so that a page can queue commands of its own
 * behind the GET: pcache_send() queues it, pcache_read() reads its reply
 * (it sends nothing), pcache_recv() decides as pcache_get() does (it may
 * send commands: the rebuild), reading the reply first if pcache_read()
 * did not; so the replies queued behind it are read before
 * pcache_recv(), or after it when nothing read its own first. */
struct pcache_q {
	char		 login[40];
	char		 key[80];
	int		 queued;
	int		 read;		/* pcache_read() ran: rep, down */
	int		 down;
	rds_reply	*rep;
	struct rds	*rd;		/* where it was sent: its reply is there */
};
void	pcache_send(struct app *, const char *login, struct pcache_q *);
void	pcache_read(struct app *, struct pcache_q *);
int	pcache_recv(struct app *, struct pcache_q *, struct account *);
/* Frees what pcache_read() read, for a queue that is not decided. */
void	pcache_drop(struct pcache_q *);
/* The id of a login this process has read (logins never change and
 * users are never deleted), or 0. */
long long pcache_known(const char *login);

#endif
