/* session.h -- login sessions, stored in SQLite by the hash of their id.
 *
 * A session id is "<user id>.<token>" (the token: 43 random base64url
 * characters).  The id itself only ever lives in the browser's HttpOnly
 * cookie "sid"; SQLite stores a BLAKE2b hash of the whole id.  The user id
 * in front is not a secret and proves nothing by itself: it only names
 * the Redis hash slot ({u<ID>}) where the badge poll finds the session's
 * cached entry, so that /badges.json needs one Redis round trip and no
 * SQLite (bcache.h).  Each session carries its own CSRF token, which
 * every form of that session posts back.  A new session is made at every
 * login (no fixation).
 *
 * The Redis cache of a session, {c<B>}:u<ID>:ss (B: the bucket of the
 * user's counters, cname.h), field = hex of the id's hash,
 * value = the time (ms) the entry stops being trusted: the session's
 * expiry, but at most SESSION_CACHE_MS after the entry was written.  A
 * logout deletes the field; should Redis miss that delete (down at that
 * moment), or should a poll that read the session from SQLite just before
 * the logout put the entry back just after, the ended session can still
 * read its own badge numbers for at most SESSION_CACHE_MS, and nothing
 * else: every other route checks SQLite.
 */
#ifndef TALLY_SESSION_H
#define TALLY_SESSION_H

#include "base/auth.h"
#include "store/db.h"
#include "store/rds.h"

#define SID_MAX		(20 + 1 + TOKEN_LEN)	/* "<uid>.<token>" */
#define SID_HEX_LEN	(2 * TOKEN_HASH_LEN)
#define SESSION_CACHE_MS	(10 * 60 * 1000LL)

struct session {
	long long	user_id;
	long long	expires_at;	/* ms */
	char		login[40];
	char		name[264];
	int		is_admin;
	char		csrf[TOKEN_LEN + 1];
};

/* Creates a session for uid valid for secs; writes its id and CSRF token.
 * Returns 0 or -1 (database error, logged). */
int	session_create(struct db *, long long uid, long secs,
	    char sid[SID_MAX + 1], char csrf[TOKEN_LEN + 1]);

/* Loads the live session with id sid into s.  Returns 1 when found,
 * 0 when absent, expired or malformed, -1 on a database error. */
int	session_load(struct db *, const char *sid, struct session *s);

/* Ends the session with id sid (absent is fine); 0 or -1.  Drops its
 * Redis cache entry too when rds is not NULL. */
int	session_delete(struct db *, struct rds *, const char *sid);

/* Deletes up to limit expired sessions; returns how many, or -1. */
int	session_expire(struct db *, int limit);

/* The user id in front of a well-formed session id, and the hex of the
 * id's hash (the cache field); 0, or -1 when sid is malformed. */
int	session_id_parse(const char *sid, long long *uid,
	    char hex[SID_HEX_LEN + 1]);

/* Caches a session loaded from SQLite (s) under sid; 0 or -1. */
int	session_cache_put(struct rds *, const char *sid,
	    const struct session *s);

#endif
