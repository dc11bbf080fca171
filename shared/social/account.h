/* account.h -- user accounts: creation, password check, the admin.
 * Logins arrive already validated and folded (valid.c VALID_LOGIN). */
#ifndef TALLY_ACCOUNT_H
#define TALLY_ACCOUNT_H

#include <stddef.h>

#include "base/auth.h"
#include "store/app.h"
#include "store/db.h"

struct account {
	long long	id;
	char		login[40];
	char		name[264];
	int		is_admin;
};

/* Creates a user.  Returns the new id, 0 when the login is taken, -1 on
 * error (logged).  min_cost selects the cheapest argon2id (tests, seed). */
long long	account_create(struct db *, const char *login, const char *name,
		    const char *pw, size_t pwlen, int is_admin, int min_cost);

/* 1 when login is kept for tallyctl useradd: one of its words (runs of
 * letters, parted by digits and underscores), in any case, is admin,
 * administrator, root, tally, support or moderator. */
int		account_reserved(const char *login);

/* Adds user uid's login and name to the people search (base/words.h);
 * account_create() does it in its transaction.  0 or -1. */
int		account_index(struct db *, long long uid, const char *login,
		    const char *name);

/* Checks a login/password pair: the user's id, 0 for a bad pair (the same
 * time whether or not the login exists), -1 on error.  The account's
 * stamp, the hash the password matched, into stamp when not NULL. */
long long	account_check(struct db *, const char *login, const char *pw,
		    size_t pwlen, char *stamp);
/* The account's stamp: its password's stored hash, new at every change
 * (social/device.h: what a device entry is signed under).  1, 0 no such
 * login ("" in stamp), -1 on error. */
int		account_stamp(struct db *, const char *login,
		    char stamp[AUTH_HASH_MAX]);

/* Looks a user up by login: 1 found, 0 absent, -1 error. */
int		account_by_login(struct db *, const char *login,
		    struct account *);

/* Makes sure the "admin" account exists.  When it is created, its
 * password is pw if given, else a random one; the password is copied to
 * out (at least 32 bytes) and 1 is returned.  0 when it already existed,
 * -1 on error. */
int		account_ensure_admin(struct db *, const char *pw, char *out,
		    size_t outsz, int min_cost);

/* The per-account login throttle: after LOGIN_FAIL_MAX failed logins
 * for one account within any LOGIN_FAIL_WINDOW ms (from any address),
 * further attempts are refused until the oldest of them is that old --
 * the right password too.  Kept in SQLite (login_failures: the newest
 * LOGIN_FAIL_MAX failures' times, the oldest of them and their count): a
 * restart resets nothing, and a window does not start over (with a
 * window from the first failure, 9 failures at its end and 10 after it
 * were 19 guesses in a few seconds).
 * account_throttled: ms left of a refusal (0: not throttled), -1 error.
 * account_login_result: records a failure, or a success (which clears
 * the account's failures).  0 or -1.  A caller counts an attempt as a
 * failure before it hashes (handlers/web.c): an attempt whose failure
 * could not be written is refused, never tried uncounted. */
#define LOGIN_FAIL_MAX		10
#define LOGIN_FAIL_WINDOW	(15LL * 60 * 1000)
long long	account_throttled(struct db *, const char *login,
		    long long now);
int		account_login_result(struct db *, const char *login, int ok,
		    long long now);

/* The account's own settings (/settings).  account_rename: the display
 * name (already valid), the people search's words with it (the caller
 * forgets the profile's cached copy: pcache.h); 1, 0 no such user, -1.  account_change_password: when current is the account's
 * password, sets the new one and ends every session of the account but
 * keep_sid's (the one asking); 1 changed, 0 current is wrong, -1. */
int		account_rename(struct app *, long long uid, const char *name);
int		account_change_password(struct app *, long long uid,
		    const char *login, const char *current, size_t curlen,
		    const char *pw, size_t pwlen, const char *keep_sid,
		    int min_cost);

/* Sets login's password (tallyctl passwd): every session of the account
 * ends, its failed-login count too.  The user's id, 0 no such login, -1
 * error. */
long long	account_set_password(struct app *, const char *login,
		    const char *pw, size_t pwlen, int min_cost);

#endif
