/* web_pages.h -- what the account actions of tally-web share. */
#ifndef TALLY_WEB_PAGES_H
#define TALLY_WEB_PAGES_H

#include "web/req.h"

/* Ends any current session, starts one for uid, sets the cookie, puts
 * login first in the device cookie (social/device.h), signed under the
 * account's stamp (the hash its password matched; NULL: read now) and
 * answers 303 /feed.  With a stamp, nothing is started once the
 * password is no longer that one: 1, nothing answered.  Returns 0, 1, or
 * -1 after a 500. */
int	web_start_session(struct req *, long long uid, const char *login,
	    const char *stamp);
/* Puts login first in the browser's device cookie, signed under stamp
 * (NULL: the account's now).  Nothing when it cannot (logged). */
void	web_device_issue(struct req *, const char *login, const char *stamp);

#endif
