/* view_account.h -- the signup, login and settings forms of tally-web, each a
 * page render (web/page.h): what the visitor typed is kept (except the
 * password), the refused field marked (web/form.h).  No I/O. */
#ifndef TALLY_VIEW_ACCOUNT_H
#define TALLY_VIEW_ACCOUNT_H

#include "web/req.h"

struct account_form {
	int		 status;	/* 200, or the refusal's */
	const char	*err;		/* the refusal, or NULL */
};
void	view_signup(struct req *, const void *account_form);
void	view_login(struct req *, const void *account_form);

/* /settings: the display name (what was typed, else the current one)
 * and the password (the current one, then the new). */
struct settings_form {
	int		 status;	/* 200, or the refusal's */
	const char	*err;		/* the refusal, or NULL */
	char		 name[264];	/* the current display name */
};
void	view_settings(struct req *, const void *settings_form);

#endif
