/* find_pages.c -- tally-social's pages that find people and topics:
 * /people (search and suggestions), /topics, /followed; each a model,
 * its load and its render (web/view_find.h). */
#include "social/find.h"
#include "social/followed.h"
#include "social_pages.h"
#include "web/field.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web/view_find.h"

#define FIND_PAGE	20

static enum page_load
people_find_load(struct req *r, void *vm)
{
	struct find_model *m = vm;
	long long viewer = r->user ? r->sess.user_id : 0;

	long long keep[FIND_KEEP_MAX];
	int nkeep, rc;

	/* keep: the suggestions followed from this list (view_find.h) */
	if ((m->page = field_page(r)) == 0 ||
	    (m->q = field_opt(r, "q", VALID_NAME, "")) == NULL ||
	    (nkeep = field_ids(r, "keep", keep, FIND_KEEP_MAX)) == -1)
		return PAGE_ANSWERED;
	rc = *m->q != '\0' ? find_people(r->app, m->q, viewer, m->page,
	    FIND_PAGE, &m->found) : find_suggest(r->app, viewer, keep, nkeep,
	    m->page, FIND_PAGE, &m->found);
	if (rc == -1) {
		resp_error(r, 500, "The people could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static void
people_find_done(void *vm)
{
	find_free(&((struct find_model *)vm)->found);
}

const struct page page_people = {
	sizeof(struct find_model), people_find_load, view_find_people,
	people_find_done
};

static enum page_load
topics_page_load(struct req *r, void *vm)
{
	if (find_topics(r->app, vm) == -1) {
		resp_error(r, 500, "The topics could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static void
topics_done(void *vm)
{
	find_topics_free(vm);
}

const struct page page_topics = {
	sizeof(struct topic_list), topics_page_load, view_topics, topics_done
};

/* The list moves no marker: an author's count clears when the user opens
 * that author's profile (profileview.h: profileview_visited()), so the list
 * keeps what is still unread. */
static enum page_load
followed_page_load(struct req *r, void *vm)
{
	if (followed_load(r->app, r->sess.user_id, vm) == -1) {
		resp_error(r, 500, "The list could not be read.");
		return PAGE_ANSWERED;
	}
	layout_load(r);
	return PAGE_RENDER;
}

static void
followed_done(void *vm)
{
	people_free(vm);
}

const struct page page_followed = {
	sizeof(struct people), followed_page_load, view_followed, followed_done
};
