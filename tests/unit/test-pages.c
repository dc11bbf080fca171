/* test-pages.c -- every page's render (web/page.h) from a fixed model,
 * with no app (any I/O would crash): the feed (posts, the empty state
 * with suggestions, a later page), a post with comments and its edit
 * form, /people, /topics, /followed, /notices, /news, the badge
 * fragment and /badges.json, the dashboard, the runs, /metrics,
 * /healthz, the signup and login forms.  test-views.c covers the
 * notifications, a profile, a topic, the follow lists, a leaderboard and
 * a run's report; tests/lint/layers.sh checks that every page a handler
 * declares has its render called here or there. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "web/flash.h"
#include "web/view_account.h"
#include "viewtest.h"
#include "web/view_admin.h"
#include "web/view_find.h"
#include "web/view_notes.h"
#include "web/view_social.h"

static void
card(struct post_card *c, long long id, const char *login, char *text)
{
	int i;

	memset(c, 0, sizeof(*c));
	c->p.id = id;
	c->p.user_id = 3;
	c->p.status = 1;
	c->p.published_at = c->p.created_at = 1700000000000LL;
	strcpy(c->p.login, login);
	strcpy(c->p.name, "Bob <3");
	strcpy(c->p.slug, "general");
	c->p.body = text;
	for (i = 0; i < PC_NCOUNTS; i++)
		c->n[i] = (struct count){ 10 + i, 1 };
}

static void
test_feed(void **state)
{
	char text[] = "hello <world>";
	struct post_card cs[2];
	struct found f = { { 9, "eve", "Eve", 0 }, { 4, 1 }, 0, 0 };
	struct feed_model m = { { cs, 2 }, 1, 1, { NULL, 0, 0 } };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	card(&cs[0], 42, "bob", text);
	card(&cs[1], 41, "bob", text);
	cs[0].liked = 1;
	view_feed(r, &m);
	h = body(r);
	assert_non_null(strstr(h, "<title>Feed"));
	assert_non_null(strstr(h, "<article data-post-id=\"42\""));
	assert_non_null(strstr(h, "data-liked=\"1\""));
	assert_non_null(strstr(h, "hello &lt;world&gt;"));
	assert_non_null(strstr(h, "name=\"body\""));	/* the composer, page 1 */
	assert_non_null(strstr(h, "href=\"/feed?page=2\""));
	assert_null(strstr(h, "Nothing here yet"));
	/* an empty first page offers people to follow */
	buf_reset(&r->body);
	m.cards.n = 0;
	m.more = 0;
	m.suggest = (struct found_list){ &f, 1, 0 };
	view_feed(r, &m);
	h = body(r);
	assert_non_null(strstr(h, "Nothing here yet"));
	assert_non_null(strstr(h, "People you might follow"));
	assert_non_null(strstr(h, "/u/eve"));
	/* a later page past the end */
	buf_reset(&r->body);
	m.page = 3;
	view_feed(r, &m);
	h = body(r);
	assert_non_null(strstr(h, "No older posts."));
	assert_null(strstr(h, "name=\"body\""));
	req_free(r);
}

static void
test_post_and_edit(void **state)
{
	char text[] = "a post", ctext[] = "a <comment>";
	struct comment c = { 5, 7, "ann", "Ann", ctext, 1700000000000LL };
	struct post_view v = { .comments = &c, .ncomments = 1 };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	card(&v.c, 42, "ann", text);
	v.c.p.user_id = 7;		/* the reader's own */
	view_post(r, &v);
	h = body(r);
	assert_non_null(strstr(h, "data-post-id=\"42\""));
	assert_non_null(strstr(h, "href=\"/posts/42/edit\""));
	assert_non_null(strstr(h, "action=\"/posts/42/delete\""));
	assert_non_null(strstr(h, "data-comment-id=\"5\""));
	assert_non_null(strstr(h, "a &lt;comment&gt;"));
	assert_non_null(strstr(h, "action=\"/comments/5/delete\""));
	assert_null(strstr(h, "rel=\"next\""));	/* one page of comments */
	assert_null(strstr(h, "rel=\"first\""));
	/* a later page, with more after it: both links, the next after
	 * its last comment */
	buf_reset(&r->body);
	v.comments_after = 4;
	v.comments_more = 1;
	view_post(r, &v);
	h = body(r);
	assert_non_null(strstr(h, "<a rel=\"first\" href=\"/posts/42#comments\">"));
	assert_non_null(strstr(h, "<a rel=\"next\" href=\"/posts/42?after=5#comments\">"));
	v.comments_after = 0;
	v.comments_more = 0;
	buf_reset(&r->body);
	view_post_edit(r, &v);
	h = body(r);
	assert_non_null(strstr(h, "action=\"/posts/42/edit\""));
	/* a line break after the tag, which the parser drops: a body's own
	 * first one is kept */
	assert_non_null(strstr(h, ">\na post</textarea>"));
	req_free(r);
}

static void
test_find_pages(void **state)
{
	struct found f = { { 9, "eve", "Eve <x>", 0 }, { 4, 1 }, 1, 0 };
	struct find_model fm = { "ev", { &f, 1, 1 }, 1 };
	struct topic_item t = { 2, "cats", { 12, 1 } };
	struct topic_list tl = { &t, 1 };
	struct person p = { 9, "eve", "Eve", 3 };
	struct people ps = { &p, 1 };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	view_find_people(r, &fm);
	h = body(r);
	assert_non_null(strstr(h, "value=\"ev\""));
	assert_non_null(strstr(h, "Eve &lt;x&gt;"));
	assert_non_null(strstr(h, "page=2"));
	buf_reset(&r->body);
	/* issue 47: the suggestions' follow forms come back to the list
	 * keeping whom it shows followed (eve, 9) and whom they follow */
	{
		struct found two[2] = { f, { { 11, "zed", "Zed", 0 }, { 1, 1 },
		    0, 0 } };
		struct find_model sm = { "", { two, 2, 0 }, 2 };

		view_find_people(r, &sm);
		h = body(r);
		assert_non_null(strstr(h, "action=\"/unfollow/eve\">"));
		assert_non_null(strstr(h, "name=\"back\" value=\"/people?"
		    "page=2\">"));		/* eve's unfollow: nobody kept */
		assert_non_null(strstr(h, "name=\"back\" value=\"/people?"
		    "page=2&amp;keep=9.11\">"));	/* zed's follow */
		buf_reset(&r->body);
	}
	view_topics(r, &tl);
	h = body(r);
	assert_non_null(strstr(h, "href=\"/t/cats\""));
	assert_non_null(strstr(h, ">12<"));
	buf_reset(&r->body);
	view_followed(r, &ps);
	h = body(r);
	assert_non_null(strstr(h, "/u/eve"));
	assert_non_null(strstr(h, "A count clears when you open"));
	req_free(r);
}

static void
test_notice_pages(void **state)
{
	char title[] = "Hello <all>", text[] = "maintenance";
	struct notice n = { 3, title, text, 1700000000000LL };
	struct notices ns = { &n, 1 };
	struct news_model news = { 1700000000000LL };
	struct badges bd = { 5, 1, 0, 1 };
	struct badges_json_model bj = { "{\"notifications\":5}", "\"e1\"" };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	view_notices(r, &ns);
	h = body(r);
	assert_non_null(strstr(h, "data-notice-id=\"3\""));
	assert_non_null(strstr(h, "Hello &lt;all&gt;"));
	buf_reset(&r->body);
	view_news(r, &news);
	assert_non_null(strstr(body(r), "What\xe2\x80\x99s new"));
	buf_reset(&r->body);
	view_badges(r, &bd);
	h = body(r);
	assert_non_null(strstr(h, "data-counter=\"unread-notifications\">5<"));
	assert_null(strstr(h, "<html"));	/* a fragment */
	buf_reset(&r->body);
	view_badges_json(r, &bj);
	assert_int_equal(r->status, 200);
	assert_string_equal(r->ctype, "application/json");
	assert_string_equal(body(r), "{\"notifications\":5}");
	r->head.len = 0;
	req_free(r);
}

static void
test_operator_pages(void **state)
{
	struct ops_view *v = calloc(1, sizeof(*v));
	struct runs_model *rs = calloc(1, sizeof(*rs));
	struct metrics_model *mm = calloc(1, sizeof(*mm));
	struct health hl = { 1, 0, NULL };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	r->sess.is_admin = 1;
	v->pending = 17;
	view_admin(r, v);
	h = body(r);
	assert_non_null(strstr(h, "<h1>Admin</h1>"));
	assert_non_null(strstr(h, "No run yet."));
	assert_non_null(strstr(h, "action=\"/admin/notices\""));
	buf_reset(&r->body);
	rs->n = 1;
	rs->runs[0].id = 8;
	strcpy(rs->runs[0].state, "running");
	rs->runs[0].progress = 40;
	view_runs(r, rs);
	h = body(r);
	assert_non_null(strstr(h, "data-run-id=\"8\" data-state=\"running\""));
	/* issue 47: the checkbox with its label beside the button; the bar
	 * and its figure in one unbreakable span */
	assert_non_null(strstr(h, "class=\"row\"><input type=\"hidden\""));
	assert_non_null(strstr(h, "<label class=\"check\"><input "
	    "type=\"checkbox\" name=\"dry_run\""));
	assert_non_null(strstr(h, "<span class=\"bar\"><progress max=\"100\" "
	    "value=\"40\">40%</progress> <span class=\"pct\">40%</span></span>"));
	buf_reset(&r->body);
	mm->v.pending = 17;
	view_metrics_page(r, mm);	/* no mapping: the gauges */
	assert_non_null(strstr(body(r), "tally_pending_deltas 17"));
	assert_string_equal(r->ctype, "text/plain; version=0.0.4; charset=utf-8");
	view_healthz(r, &hl);
	assert_int_equal(r->status, 503);
	assert_string_equal(body(r), "redis");
	hl.redis_ok = 1;
	view_healthz(r, &hl);
	assert_int_equal(r->status, 200);
	assert_string_equal(body(r), "ok");
	/* the database down: named by its engine */
	hl.db_ok = 0;
	buf_reset(&r->body);
	view_healthz(r, &hl);
	assert_int_equal(r->status, 503);
	assert_string_equal(body(r), "sqlite");
	hl.db_name = "postgresql";
	hl.redis_ok = 0;
	buf_reset(&r->body);
	view_healthz(r, &hl);
	assert_string_equal(body(r), "postgresql redis");
	free(v);
	free(rs);
	free(mm);
	req_free(r);
}

static void
test_account_forms(void **state)
{
	struct account_form ok = { 200, NULL }, bad = { 401, "Wrong <pw>" };
	struct req *r = req_new(0);
	const char *h;

	(void)state;
	view_signup(r, &ok);
	h = body(r);
	assert_int_equal(r->status, 200);
	assert_non_null(strstr(h, "action=\"/signup\""));
	assert_null(strstr(h, "role=\"alert\""));
	view_login(r, &bad);
	h = body(r);
	assert_int_equal(r->status, 401);
	assert_non_null(strstr(h, "action=\"/login\""));
	assert_non_null(strstr(h, "Wrong &lt;pw&gt;"));
	assert_non_null(strstr(h, "name=\"csrf\" value=\"cccc"));
	req_free(r);
}

static void
test_settings(void **state)
{
	struct settings_form ok = { 200, NULL, "Ada \"L\"" };
	struct settings_form bad = { 403, "The current password is wrong.",
	    "Ada" };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	view_settings(r, &ok);
	h = body(r);
	assert_int_equal(r->status, 200);
	assert_non_null(strstr(h, "autocomplete=\"name\" value=\"Ada &quot;L&quot;\""));
	assert_non_null(strstr(h, "name=\"current\" required "
	    "autocomplete=\"current-password\""));
	assert_non_null(strstr(h, "autocomplete=\"new-password\""));
	assert_null(strstr(h, "role=\"alert\""));
	/* a message after a redirect shows atop the page, once taken */
	r->flash = FLASH_PASSWORD_SAVED;
	view_settings(r, &bad);
	h = body(r);
	assert_int_equal(r->status, 403);
	assert_non_null(strstr(h, "The current password is wrong."));
	assert_non_null(strstr(h, "<p class=\"flash\" role=\"status\" "
	    "data-flash=\"password-saved\">Your password is changed;"));
	req_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_feed),
		cmocka_unit_test(test_settings),
		cmocka_unit_test(test_post_and_edit),
		cmocka_unit_test(test_find_pages),
		cmocka_unit_test(test_notice_pages),
		cmocka_unit_test(test_operator_pages),
		cmocka_unit_test(test_account_forms),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
