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
 * Its copy in Redis, which spares the badge poll and the busiest pages
 * their SQLite read, is in sesscache.h.
 */
#ifndef TALLY_SESSION_H
#define TALLY_SESSION_H

#include "base/auth.h"
#include "store/db.h"
#include "store/rds.h"

#define SID_MAX		(20 + 1 + TOKEN_LEN)	/* "<uid>.<token>" */
#define SID_HEX_LEN	(2 * TOKEN_HASH_LEN)

struct session {
	long long	user_id;
	long long	expires_at;	/* ms */
	char		login[40];
	int		is_admin;
	char		csrf[TOKEN_LEN + 1];
	long long	copied_at;	/* ms: when its Redis copy was written
					 * (sesscache.h); 0: read from SQLite */
};

/* Creates a session for uid valid for secs; writes its id and CSRF token.
 * With stamp (not NULL: the password hash a login matched), only while
 * the account's password is still that one: a change that committed
 * since, or commits meanwhile (its sessions deleted), leaves none.
 * Returns 0, 1 refused (the password changed), or -1 (database error,
 * logged). */
int	session_create(struct db *, long long uid, long secs,
	    char sid[SID_MAX + 1], char csrf[TOKEN_LEN + 1],
	    const char *stamp);

/* Loads the live session with id sid into s.  Returns 1 when found,
 * 0 when absent, expired or malformed, -1 on a database error. */
int	session_load(struct db *, const char *sid, struct session *s);
/* The same for n sessions (n <= SESSION_MANY) in one statement: out[i]
 * and rc[i] as session_load() would give for sids[i] (NULL: none, rc 0).
 * The requests of a group commit are checked so (web/batch.h): on
 * PostgreSQL each session read was a round trip of its own.  0, or -1
 * (every rc of a well-formed sid -1 then). */
#define SESSION_MANY	16
int	session_load_many(struct db *, const char *const *sids, int n,
	    struct session *out, int *rc);

/* Deletes the session with id sid (absent is fine); 0 or -1.  A logout
 * calls sesscache_end(), which drops its Redis copy too. */
int	session_delete(struct db *, const char *sid);

/* Deletes up to limit expired sessions; returns how many, or -1. */
int	session_expire(struct db *, int limit);

/* The user id in front of a well-formed session id, and the hex of the
 * id's hash (the cache field); 0, or -1 when sid is malformed. */
int	session_id_parse(const char *sid, long long *uid,
	    char hex[SID_HEX_LEN + 1]);

#endif
