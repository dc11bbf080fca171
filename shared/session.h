/* session.h -- login sessions, stored in SQLite by the hash of their id.
 *
 * The id itself only ever lives in the browser's HttpOnly cookie "sid".
 * Each session carries its own CSRF token, which every form of that
 * session posts back.  A new session is made at every login (no fixation).
 */
#ifndef TALLY_SESSION_H
#define TALLY_SESSION_H

#include "auth.h"
#include "db.h"

struct session {
	long long	user_id;
	char		login[40];
	char		name[264];
	int		is_admin;
	char		csrf[TOKEN_LEN + 1];
};

/* Creates a session for uid valid for secs; writes its id and CSRF token.
 * Returns 0 or -1 (database error, logged). */
int	session_create(struct db *, long long uid, long secs,
	    char sid[TOKEN_LEN + 1], char csrf[TOKEN_LEN + 1]);

/* Loads the live session with id sid into s.  Returns 1 when found,
 * 0 when absent or expired, -1 on a database error. */
int	session_load(struct db *, const char *sid, struct session *s);

/* Ends the session with id sid (absent is fine); 0 or -1. */
int	session_delete(struct db *, const char *sid);

/* Deletes up to limit expired sessions; returns how many, or -1. */
int	session_expire(struct db *, int limit);

#endif
