/* find_pages.c -- tally-social's pages that find people and topics:
 * /people (search and suggestions), /topics, /followed. */
#include "base/clock.h"
#include "social/find.h"
#include "social/followed.h"
#include "social/notify.h"
#include "social_pages.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_find.h"

#define FIND_PAGE	20

int
page_people(struct req *r)
{
	long long page = field_page(r), viewer = r->user ? r->sess.user_id : 0;
	const char *q = field_opt(r, "q", VALID_NAME, "");
	struct found_list l;
	int rc;

	if (page == 0 || q == NULL)
		return -1;
	rc = *q != '\0' ? people_find(r->app, q, viewer, page, FIND_PAGE, &l) :
	    people_suggest(r->app, viewer, page, FIND_PAGE, &l);
	if (rc == -1) {
		found_free(&l);
		return resp_error(r, 500, "The people could not be read.");
	}
	page_load(r);
	view_find_people(r, q, &l, page);
	found_free(&l);
	return 0;
}

int
page_topics(struct req *r)
{
	struct topic_list l;

	if (topics_load(r->app, &l) == -1) {
		topic_list_free(&l);
		return resp_error(r, 500, "The topics could not be read.");
	}
	page_load(r);
	view_topics(r, &l);
	topic_list_free(&l);
	return 0;
}

int
page_followed(struct req *r)
{
	long long at = clock_wall_ms();
	struct people ps;
	int i;

	if (followed_load(r->app, r->sess.user_id, &ps) == -1) {
		people_free(&ps);
		return resp_error(r, 500, "The list could not be read.");
	}
	/* Seen: what was published up to the list's time is read (a post
	 * that comes after stays new), on the user's own request only. */
	if (req_own(r))
		for (i = 0; i < ps.n; i++)
			marker_put(r->app, r->sess.user_id, "author",
			    ps.v[i].id, at);
	page_load(r);
	view_followed(r, &ps);
	people_free(&ps);
	return 0;
}
