/* viewtest.h -- what the render tests share: a request with no app (any
 * I/O would crash), its body as a string.  Included by test-views.c and
 * test-pages.c, after cmocka.h. */
#ifndef TALLY_VIEWTEST_H
#define TALLY_VIEWTEST_H

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "web/req.h"

/* A request as route.c hands it to a page: a visitor, or (user) ann,
 * id 7, with two unread notifications and one followed author's post. */
static struct req *
req_new(int user)
{
	struct req *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	memset(r->csrf, 'c', TOKEN_LEN);
	r->identified = 1;
	r->user = user;
	if (user) {
		strcpy(r->sess.login, "ann");
		r->sess.user_id = 7;
		r->have_badges = 1;
		r->badges = (struct badges){ 2, 0, 1, 0 };
	}
	return r;
}

static const char *
body(struct req *r)
{
	buf_putc(&r->body, '\0');
	r->body.len--;
	return r->body.p;
}

static void
req_free(struct req *r)
{
	buf_free(&r->body);
	buf_free(&r->head);
	free(r);
}

#endif
