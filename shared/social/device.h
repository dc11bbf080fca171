/* device.h -- the signed device cookie: which accounts a browser has
 * logged in to, so that a lock against guessing never locks the owner
 * out (the contract's "failed logins").
 *
 * At every login, the account's entry goes first in the cookie
 * DEVICE_COOKIE (HttpOnly, one year): "<login>.<nonce>.<mac>", the nonce
 * 16 random bytes and the mac the first 16 bytes of an HMAC-SHA-512-256
 * (libsodium's crypto_auth) of "<login>.<nonce>", a newline and the
 * account's stamp (its password's stored hash, whose salt is new at every
 * change) under the site's device key, each in hex; entries are joined by
 * ':', DEVICE_KEEP at most (newest first).  A new password forgets every
 * device of the account: a browser that held the account once (a
 * stolen password, used) guesses no more freely once its owner changed
 * it (`tallyctl passwd` too).  An account with LOGIN_FAIL_MAX failures in its window
 * (account.h) refuses every login but from a browser whose cookie holds
 * a valid entry for it.  The key is 32 random bytes in $RUN_DIR/device-key
 * (0600), made by the first process that needs it (O_EXCL: one wins,
 * every process reads the same, once); deleting it and restarting the
 * site forgets every device.
 */
#ifndef TALLY_DEVICE_H
#define TALLY_DEVICE_H

#include <stddef.h>

#include "base/cfg.h"

#define DEVICE_COOKIE	"dev"
#define DEVICE_KEEP	5
#define DEVICE_MAX_AGE	(365L * 86400)
#define DEVICE_ENTRY	(32 + 1 + 32 + 1 + 32)	/* login.nonce.mac */
#define DEVICE_VALUE_MAX	(DEVICE_KEEP * (DEVICE_ENTRY + 1))

/* The cookie's new value after a login to login, whose stamp is stamp:
 * its entry first, the other accounts' entries of old (the cookie as
 * sent, or NULL; well formed: their stamps are not known here) after it.
 * 0, or -1 (no key: logged). */
int	device_issue(const struct cfg *, const char *login, const char *stamp,
	    const char *old, char out[DEVICE_VALUE_MAX + 1]);
/* 1 when cookie (or NULL) holds a valid entry for login under its stamp
 * now, else 0. */
int	device_knows(const struct cfg *, const char *cookie, const char *login,
	    const char *stamp);

#endif
