/* web_pages.h -- the account forms of tally-web. */
#ifndef TALLY_WEB_PAGES_H
#define TALLY_WEB_PAGES_H

#include "web/req.h"

/* Renders the form with status and an optional error message,
 * keeping what the visitor typed (except the password). */
void	web_signup_form(struct req *, int status, const char *err);
void	web_login_form(struct req *, int status, const char *err);

/* Ends any current session, starts one for uid, sets the cookie and
 * answers 303 /feed.  Returns 0, or -1 after a 500. */
int	web_start_session(struct req *, long long uid);

#endif
