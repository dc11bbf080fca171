/* view_account.h -- the signup and login forms of tally-web, each a
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

#endif
