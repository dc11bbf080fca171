/* test-render.c -- the render functions with fixed models, no I/O (the
 * request has no app: any read of SQLite or Redis would crash): a post's
 * article with its counter marks and escaped text, the buttons only a
 * signed-in visitor gets, drafts and deleted posts, the pager's edges,
 * the page frame with and without badges, and the error page. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "social/bcache.h"
#include "social/postlist.h"
#include "web/layout.h"
#include "web/render.h"
#include "web/resp.h"

static struct req *
req_new(int user)
{
	struct req *r = calloc(1, sizeof(*r));

	assert_non_null(r);
	r->app = NULL;			/* render functions do no I/O */
	memset(r->csrf, 'c', TOKEN_LEN);
	r->identified = 1;
	r->user = user;
	if (user) {
		strcpy(r->sess.login, "ann<b>");
		r->sess.user_id = 7;
	}
	return r;
}

static void
req_free(struct req *r)
{
	buf_free(&r->body);
	buf_free(&r->head);
	free(r);
}

static const char *
body(struct req *r)
{
	buf_putc(&r->body, '\0');
	r->body.len--;
	return r->body.p;
}

static struct post_card
fixed_card(long long likes, long long comments, long long reposts,
    long long views)
{
	struct post_card c;
	struct post p;

	memset(&c, 0, sizeof(c));
	c.n[PC_LIKES] = (struct count){ likes, 1 };
	c.n[PC_COMMENTS] = (struct count){ comments, 1 };
	c.n[PC_REPOSTS] = (struct count){ reposts, 1 };
	c.n[PC_VIEWS] = (struct count){ views, 1 };
	memset(&p, 0, sizeof(p));
	p.id = 42;
	p.user_id = 7;
	p.status = 1;
	p.published_at = 1700000000000LL;
	strcpy(p.login, "ann");
	strcpy(p.name, "Ann \"<script>\"");
	strcpy(p.slug, "cats");
	p.body = (char *)"<img src=x onerror=alert(1)> & more";
	c.p = p;
	return c;
}

/* A list of one post: the form around it, then the article. */
static const char *
one_post(struct req *r, const struct post_card *c, unsigned flags)
{
	render_posts_in(r, c, 1, flags);
	return body(r);
}

static void
test_post_article(void **state)
{
	struct post_card c = fixed_card(3, 0, 12, 1000000);
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	r->path = (char *)"/feed";
	h = one_post(r, &c, 0);
	/* one form for the list: one token, one back, then the article */
	assert_non_null(strstr(h, "<form method=\"post\" class=\"acts\">"
	    "<input type=\"hidden\" name=\"csrf\" value=\"cccc"));
	assert_null(strstr(strstr(h, "name=\"csrf\"") + 1, "name=\"csrf\""));
	assert_non_null(strstr(h, "name=\"back\" value=\"/feed\""));
	assert_non_null(strstr(h, "<article data-post-id=\"42\" "
	    "id=\"post-42\">"));	/* not liked: no data-liked */
	assert_non_null(strstr(h, "</article></form>"));
	/* counters named once, by the article: no data-post-id of their own */
	assert_non_null(strstr(h, "<b data-counter=\"post-likes\">3</b>\xc2\xa0likes"));
	assert_non_null(strstr(h, "<a href=\"/posts/42\"><b data-counter="
	    "\"post-comments\">0</b>\xc2\xa0" "comments</a>"));
	assert_non_null(strstr(h, "<b data-counter=\"post-reposts\">12</b>"));
	assert_non_null(strstr(h, ">1000000</b>\xc2\xa0views"));
	assert_null(strstr(strstr(h, "data-post-id") + 1, "data-post-id"));
	/* text escaped, never markup */
	assert_null(strstr(h, "<img"));
	assert_null(strstr(h, "<script>"));
	assert_non_null(strstr(h, "<p>&lt;img src=x onerror=alert(1)&gt; &amp; more</p>"));
	assert_non_null(strstr(h, "<p><a href=\"/u/ann\"><b>Ann &quot;&lt;script&gt;"
	    "&quot;</b> @ann</a> in <a href=\"/t/cats\">#cats</a>"));
	/* in a list, when as plain text: no "now" known, the date itself */
	assert_non_null(strstr(h, "</a> 14 Nov 2023 22:13 UTC</p>"));
	assert_null(strstr(h, "<time"));
	/* one toggle per action: Like (not pressed), Repost */
	assert_non_null(strstr(h, "<button formaction=\"/posts/42/like\">"
	    "Like</button>"));
	assert_non_null(strstr(h, "<button formaction=\"/posts/42/repost\">"
	    "Repost</button>"));
	assert_null(strstr(h, "/unlike"));
	assert_null(strstr(h, "aria-pressed"));
	req_free(r);
}

/* Liked and reposted by the viewer: the marks, and the like button
 * pressed and undoing; one like is "1 like". */
static void
test_post_liked(void **state)
{
	struct post_card c = fixed_card(1, 1, 1, 1);
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	c.liked = c.reposted = 1;
	h = one_post(r, &c, 0);
	assert_non_null(strstr(h, "<article data-post-id=\"42\" id=\"post-42\" "
	    "data-liked=\"1\" data-reposted=\"1\">"));
	/* the label says the state; no aria-pressed beside it */
	assert_non_null(strstr(h, "<button formaction=\"/posts/42/unlike\">"
	    "Liked</button>"));
	assert_non_null(strstr(h, "<button formaction=\"/posts/42/unrepost\">"
	    "Reposted</button>"));
	assert_null(strstr(h, "aria-pressed"));
	assert_non_null(strstr(h, ">1</b>\xc2\xa0like "));
	assert_non_null(strstr(h, ">1</b>\xc2\xa0view "));
	req_free(r);
}

/* A followee's repost in a home feed: the mark, and a line naming the
 * reposter (escaped, linked) before the byline; none without one. */
static void
test_post_reposted_by(void **state)
{
	struct post_card c = fixed_card(1, 0, 1, 2);
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	strcpy(c.reposted_by, "bo&b");
	h = one_post(r, &c, 0);
	assert_non_null(strstr(h, "<article data-post-id=\"42\" id=\"post-42\" "
	    "data-reposted-by=\"bo&amp;b\"><p><span class=\"via\">\xe2\x86\xbb "
	    "<a href=\"/u/bo%26b\">@bo&amp;b</a> reposted</span><a href=\"/u/ann\">"));
	req_free(r);
	r = req_new(1);
	c.reposted_by[0] = '\0';
	h = one_post(r, &c, 0);
	assert_null(strstr(h, "reposted-by"));
	assert_null(strstr(h, "class=\"via\""));
	req_free(r);
}

/*
 * The weight of a feed item: an 80-character post by a user with a
 * 10-character login and name, in a 7-character topic, with two- and
 * three-digit counts, as a signed-in viewer sees it, is at most 600
 * bytes (the form's token is the list's, not the item's).
 */
static void
test_post_bytes(void **state)
{
	struct post_card c = fixed_card(120, 14, 33, 987);
	struct req *r = req_new(1);
	const char *h, *a, *e;
	char text[81];

	(void)state;
	memset(text, 'x', 80);
	text[80] = '\0';
	c.p.id = 1234567;
	strcpy(c.p.login, "user000123");
	strcpy(c.p.name, "Ann Person");
	strcpy(c.p.slug, "general");
	c.p.body = text;
	r->now_ms = c.p.published_at + 5 * 60000;
	h = one_post(r, &c, 0);
	a = strstr(h, "<article");
	e = strstr(h, "</article>");
	assert_non_null(a);
	assert_non_null(e);
	e += strlen("</article>");
	print_message("# feed item: %ld bytes: %.*s\n", (long)(e - a), (int)(e - a), a);
	assert_true(e - a <= 600);
	req_free(r);
}

/* Recent times read as "N min ago", the exact time on hover. */
static void
test_relative_times(void **state)
{
	static const struct { long long ago; const char *text; } cases[] = {
		{ 5000, ">just now<" }, { 5 * 60000, ">5 min ago<" },
		{ 3 * 3600000LL, ">3 h ago<" }, { 2 * 86400000LL, ">2 d ago<" },
		{ 30 * 86400000LL, ">14 Nov 2023 22:13 UTC<" },
	};
	struct req *r = req_new(0);
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		buf_reset(&r->body);
		r->now_ms = 1700000000000LL + cases[i].ago;
		render_time(r, 1700000000000LL);
		assert_non_null(strstr(body(r), cases[i].text));
		/* the exact time on hover, where the text is not it */
		if (cases[i].text[1] != '1')
			assert_non_null(strstr(body(r),
			    "title=\"14 Nov 2023 22:13 UTC\""));
	}
	req_free(r);
}

static void
test_post_anonymous_draft_deleted(void **state)
{
	struct post_card c = fixed_card(0, 0, 0, 0);
	struct req *r = req_new(0);
	const char *h;

	(void)state;
	c.p.status = 0;
	c.p.is_deleted = 1;
	h = one_post(r, &c, RENDER_FULL);
	assert_non_null(strstr(h, "draft \xc2\xb7 deleted"));
	assert_null(strstr(h, "<form"));	/* nothing to press */
	assert_null(strstr(h, "<button"));
	assert_null(strstr(h, "href=\"/posts/42\""));	/* RENDER_FULL */
	req_free(r);
}

static void
test_pager_edges(void **state)
{
	struct req *r = req_new(0);
	const char *h;

	(void)state;
	render_pager(r, "/u/a b", 1, 0);
	h = body(r);
	assert_null(strstr(h, "rel=\"prev\""));
	assert_null(strstr(h, "rel=\"next\""));
	buf_reset(&r->body);
	render_pager(r, "/u/a b", 3, 1);
	h = body(r);
	assert_non_null(strstr(h, "rel=\"prev\" href=\"/u/a%20b?page=2\""));
	assert_non_null(strstr(h, "rel=\"next\" href=\"/u/a%20b?page=4\""));
	req_free(r);
}

static void
test_frame_badges(void **state)
{
	struct badges bd = { 5, 2, 0, 1 };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	layout_frame(r, "Feed <1>", &bd);
	layout_end(r);
	h = body(r);
	assert_non_null(strstr(h, "<title>Feed &lt;1&gt; \xc2\xb7 tally</title>"));
	assert_non_null(strstr(h, "data-counter=\"unread-notifications\">5<"));
	assert_non_null(strstr(h, "data-counter=\"unread-notices\">2<"));
	assert_non_null(strstr(h, "data-counter=\"unread-followed\">0<"));
	assert_non_null(strstr(h, "data-counter=\"red-dot\">1<"));
	assert_non_null(strstr(h, "data-me=\"ann&lt;b&gt;\""));
	assert_null(strstr(h, "href=\"/admin\""));
	assert_non_null(strstr(h, "</main>"));
	buf_reset(&r->body);
	r->sess.is_admin = 1;
	layout_frame(r, "x", NULL);	/* none read: the four, pending */
	h = body(r);
	assert_non_null(strstr(h, "data-badges"));
	assert_non_null(strstr(h, "data-counter=\"unread-notifications\" "
	    "data-pending=\"1\""));
	assert_non_null(strstr(h, "data-counter=\"red-dot\" data-pending"));
	assert_null(strstr(h, "data-counter=\"red-dot\">"));
	assert_non_null(strstr(h, "href=\"/admin\""));
	req_free(r);
}

static void
test_frame_visitors(void **state)
{
	struct req *r = req_new(0);
	const char *h;

	(void)state;
	layout_frame(r, "x", NULL);
	h = body(r);
	assert_non_null(strstr(h, "href=\"/login\""));
	assert_null(strstr(h, "data-me"));
	buf_reset(&r->body);
	r->identified = 0;		/* an error page: nobody looked up */
	layout_frame(r, "x", NULL);
	h = body(r);
	assert_null(strstr(h, "href=\"/login\""));
	assert_null(strstr(h, "data-me"));
	req_free(r);
}

static void
test_error_page(void **state)
{
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	assert_int_equal(resp_error(r, 404, "No <such> thing."), -1);
	assert_int_equal(r->status, 404);
	h = body(r);
	assert_non_null(strstr(h, "<section class=\"error\" data-status=\"404\">"));
	assert_non_null(strstr(h, "No &lt;such&gt; thing."));
	assert_non_null(strstr(h, "data-me=\"ann&lt;b&gt;\""));
	/* issue 47: the header keeps its badges, pending (no I/O here:
	 * tally.js reads /badges.json) */
	assert_non_null(strstr(h, "data-badges"));
	assert_non_null(strstr(h, "data-counter=\"unread-followed\" "
	    "data-pending=\"1\""));
	req_free(r);
}

/* A count that could not be read is shown as a failure, never as 0. */
static void
test_failed_count(void **state)
{
	struct post_card c = fixed_card(3, 4, 5, 6);
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	c.n[PC_LIKES] = (struct count){ 0, 0 };
	h = one_post(r, &c, 0);
	assert_non_null(strstr(h, "<b data-counter=\"post-likes\" "
	    "data-failed=\"1\""));
	assert_non_null(strstr(h, "\">?</b>\xc2\xa0likes"));
	assert_null(strstr(h, "\"post-likes\">0<"));
	assert_non_null(strstr(h, "\"post-comments\">4</b>"));
	/* badges a signed-in page could not read: "?", not 0 */
	buf_reset(&r->body);
	r->have_badges = 0;
	layout_begin(r, "x");
	h = body(r);
	assert_non_null(strstr(h, "data-counter=\"unread-notifications\" "
	    "data-failed=\"1\""));
	assert_null(strstr(h, "data-zero"));
	req_free(r);
}

static void
test_compose_and_count(void **state)
{
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	render_compose(r);
	render_count(r, "user-followers", &(struct count){ 0, 1 }, "data-login",
	    "a\"b");
	h = body(r);
	assert_non_null(strstr(h, "action=\"/posts\""));
	assert_non_null(strstr(h, "name=\"csrf\""));
	assert_non_null(strstr(h, "<span data-counter=\"user-followers\" "
	    "data-login=\"a&quot;b\">0</span>"));
	req_free(r);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_post_article),
		cmocka_unit_test(test_post_liked),
		cmocka_unit_test(test_post_reposted_by),
		cmocka_unit_test(test_post_bytes),
		cmocka_unit_test(test_relative_times),
		cmocka_unit_test(test_post_anonymous_draft_deleted),
		cmocka_unit_test(test_pager_edges),
		cmocka_unit_test(test_frame_badges),
		cmocka_unit_test(test_frame_visitors),
		cmocka_unit_test(test_error_page),
		cmocka_unit_test(test_compose_and_count),
		cmocka_unit_test(test_failed_count),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
