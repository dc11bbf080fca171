/* test-views.c -- whole pages rendered from fixed models, with no app
 * (any I/O would crash): notifications (unread marks, escaping, empty
 * state), the profile (counts, follow button, drafts), a topic's best
 * authors, the people lists, the admin leaderboard with a count that
 * failed, a run's drift report and /metrics. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "viewtest.h"
#include "web/view_admin.h"
#include "web/view_notes.h"
#include "web/view_social.h"

static void
test_notes(void **state)
{
	struct note_item it[4];
	struct notes ns = { .v = it, .n = 4, .page = 1, .newest = 9,
	    .newest_at = 1700000000123LL, .seen_upto = 9,
	    .seen_at = 1700000000123LL };
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	memset(it, 0, sizeof(it));
	/* five likes of one post, three of them unread: three named */
	it[0] = (struct note_item){ .id = 9, .kind = "like", .post = 42,
	    .post_shown = 1, .excerpt = "Morning <run> by the river", .cut = 1,
	    .size = 5, .unread = 3, .at = 1700000000000LL, .nwho = 3 };
	strcpy(it[0].who[0].login, "bob");
	strcpy(it[0].who[0].name, "Bob <b>");
	strcpy(it[0].who[1].login, "cy");
	strcpy(it[0].who[1].name, "Cy");
	strcpy(it[0].who[2].login, "di");
	strcpy(it[0].who[2].name, "Di");
	/* two follows, read */
	it[1] = (struct note_item){ .id = 7, .kind = "follow", .size = 2,
	    .at = 1700000000000LL, .nwho = 2 };
	strcpy(it[1].who[0].login, "eve");
	strcpy(it[1].who[0].name, "Eve");
	strcpy(it[1].who[1].login, "fay");
	strcpy(it[1].who[1].name, "Fay");
	/* a comment on a post since deleted */
	it[2] = (struct note_item){ .id = 4, .kind = "comment", .post = 40,
	    .size = 1, .unread = 1, .at = 1700000000000LL, .nwho = 1 };
	strcpy(it[2].who[0].login, "gus");
	strcpy(it[2].who[0].name, "Gus");
	/* one more than three: "and 1 other" */
	it[3] = (struct note_item){ .id = 3, .kind = "repost", .post = 41,
	    .post_shown = 1, .excerpt = "short", .size = 4, .unread = 0,
	    .at = 1700000000000LL, .nwho = 3 };
	strcpy(it[3].who[0].login, "a1");
	strcpy(it[3].who[0].name, "A1");
	strcpy(it[3].who[1].login, "a2");
	strcpy(it[3].who[1].name, "A2");
	strcpy(it[3].who[2].login, "a3");
	strcpy(it[3].who[2].name, "A3");
	view_notes(r, &ns);
	h = body(r);
	assert_non_null(strstr(h, "<li data-notification-id=\"9\" "
	    "data-group-size=\"5\" data-unread=\"3\" class=\"note unread\">"));
	assert_non_null(strstr(h, "<span class=\"note-new\">3 new</span> "
	    "<a href=\"/u/bob\"><b>Bob &lt;b&gt;</b></a>, <a href=\"/u/cy\">"
	    "<b>Cy</b></a>, <a href=\"/u/di\"><b>Di</b></a> and 2 others "
	    "liked your post <a class=\"note-post\" href=\"/posts/42\">"
	    "\xe2\x80\x9cMorning &lt;run&gt; by the river\xe2\x80\xa6"
	    "\xe2\x80\x9d</a>"));
	assert_non_null(strstr(h, "/notifications/9/read"));
	/* the script's hook: its forms act in place (www/tally.js) */
	assert_non_null(strstr(h, "class=\"inline note-act\" "
	    "action=\"/notifications/9/read\""));
	/* "Mark all read": up to the newest id and the latest time shown */
	assert_non_null(strstr(h, "name=\"upto\" value=\"9\"><input "
	    "type=\"hidden\" name=\"at\" value=\"1700000000123\">"));
	assert_null(strstr(h, "name=\"snap\""));	/* none: SQLite's */
	assert_non_null(strstr(h, ">Delete all</button>"));
	assert_non_null(strstr(h, "<li data-notification-id=\"7\" "
	    "data-group-size=\"2\" data-unread=\"0\" class=\"note\">"));
	assert_non_null(strstr(h, "<b>Eve</b></a> and <a href=\"/u/fay\">"
	    "<b>Fay</b></a> followed you</p>"));
	assert_null(strstr(h, "/notifications/7/read"));	/* read already */
	assert_non_null(strstr(h, "<b>Gus</b></a> commented on your post "
	    "<a class=\"note-post\" href=\"/posts/40\">(a post no longer "
	    "shown)</a>"));
	assert_non_null(strstr(h, "<b>A3</b></a> and 1 other reposted your post"));
	assert_non_null(strstr(h, "\xe2\x80\x9cshort\xe2\x80\x9d</a>"));
	assert_non_null(strstr(h, "data-counter=\"unread-notifications\">2<"));
	assert_null(strstr(h, "No notifications."));
	assert_null(strstr(h, "rel=\"next\""));	/* no more */
	assert_null(strstr(h, "rel=\"prev\""));	/* page 1 */
	/* "Older" begins after the last group shown (noteview.h), from a
	 * page by number or one after a group; "Newer" from one after a
	 * group is the newest page */
	/* and what PostgreSQL's snapshot of the page saw */
	strcpy(ns.snap, "748:760:751,759");
	strcpy(ns.seen_snap, ns.snap);
	buf_reset(&r->body);
	view_notes(r, &ns);
	assert_non_null(strstr(body(r), "value=\"1700000000123\"><input "
	    "type=\"hidden\" name=\"snap\" value=\"748:760:751,759\">"));
	ns.more = 1;
	ns.last = (struct note_mark){ 1700000000000LL, 31 };
	buf_reset(&r->body);
	view_notes(r, &ns);
	/* carrying what page 1 showed: the later page's read-all reads
	 * up to it (one that arrived since stays unread) */
	assert_non_null(strstr(body(r), "<a rel=\"next\" href=\""
	    "/notifications?before=1700000000000.31&amp;upto=9&amp;"
	    "at=1700000000123&amp;snap=748%3A760%3A751%2C759\">Older"));
	ns.page = 3;
	buf_reset(&r->body);
	view_notes(r, &ns);
	assert_non_null(strstr(body(r), "<a rel=\"prev\" href=\""
	    "/notifications?page=2\">"));
	ns.before = (struct note_mark){ 1700000000001LL, 40 };
	buf_reset(&r->body);
	view_notes(r, &ns);
	assert_non_null(strstr(body(r), "<a rel=\"prev\" href=\""
	    "/notifications\">\xe2\x86\x90 Newest</a>"));
	/* a later page with page 1's bounds: its form sends them */
	assert_non_null(strstr(body(r), "name=\"upto\" value=\"9\">"));
	ns.seen_upto = 0;	/* reached without them: every one */
	buf_reset(&r->body);
	view_notes(r, &ns);
	assert_null(strstr(body(r), "name=\"upto\""));
	ns.page = 1;
	ns.before = (struct note_mark){ 0, 0 };
	buf_reset(&r->body);
	ns.n = 0;
	view_notes(r, &ns);
	assert_non_null(strstr(body(r), "No notifications."));
	req_free(r);
}

static void
test_profile(void **state)
{
	struct profile_view v;
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	memset(&v, 0, sizeof(v));
	v.u = (struct account){ 9, "bob", "Bob \"B\"", 0 };
	v.n[PROFILE_POSTS] = (struct count){ 3, 1 };
	v.n[PROFILE_FOLLOWERS] = (struct count){ 0, 0 };	/* failed */
	v.n[PROFILE_FOLLOWING] = (struct count){ 1, 1 };
	v.n[PROFILE_LIKES] = (struct count){ 7, 1 };
	v.page = 1;
	v.following = 1;
	view_profile(r, &v);
	h = body(r);
	assert_non_null(strstr(h, "<section class=\"card profile\" "
	    "data-login=\"bob\" data-following=\"1\">"));
	assert_non_null(strstr(h, "aria-pressed=\"true\" "
	    "data-following=\"1\">Following</button>"));
	assert_non_null(strstr(h, "data-counter=\"posts\" data-login=\"bob\">3<"));
	assert_non_null(strstr(h, "data-counter=\"followers\" data-login=\"bob\" "
	    "data-failed=\"1\""));
	assert_non_null(strstr(h, "data-counter=\"likes\" data-login=\"bob\">7<"));
	assert_non_null(strstr(h, "action=\"/unfollow/bob\""));
	assert_non_null(strstr(h, "data-following=\"1\""));
	assert_non_null(strstr(h, "Bob &quot;B&quot;"));
	assert_non_null(strstr(h, "No posts yet."));
	assert_null(strstr(h, "Your drafts"));
	assert_null(strstr(h, "rel=\"next\""));
	buf_reset(&r->body);
	v.self = 1;			/* one's own: no button */
	v.more = 1;
	view_profile(r, &v);
	h = body(r);
	assert_null(strstr(h, "follow/bob"));
	assert_non_null(strstr(h, "rel=\"next\" href=\"/u/bob?page=2\""));
	req_free(r);
}

/* /drafts and the own profile's drafts: "Older drafts" names the last
 * draft shown (drafts.h), on /drafts as rel="next", on the profile with
 * no rel (its next page is of posts); a page after one links the
 * newest. */
static void
test_drafts(void **state)
{
	struct post_card cs[2];
	struct drafts_model m;
	struct profile_view v;
	struct req *r = req_new(1);
	char b70[] = "d<70", b41[] = "d41";
	const char *h;

	(void)state;
	memset(cs, 0, sizeof(cs));
	cs[0].p = (struct post){ .id = 70, .user_id = 9, .status = 0,
	    .login = "bob", .name = "Bob", .slug = "general", .body = b70 };
	cs[1].p = cs[0].p;
	cs[1].p.id = 41;
	cs[1].p.body = b41;
	memset(&m, 0, sizeof(m));
	m.cards = (struct post_cards){ cs, 2 };
	m.more = 1;
	view_drafts(r, &m);
	h = body(r);
	assert_non_null(strstr(h, "<h1>Your drafts</h1>"));
	assert_non_null(strstr(h, "data-post-id=\"70\""));
	assert_non_null(strstr(h, "d&lt;70"));
	assert_non_null(strstr(h, "<a rel=\"next\" href=\"/drafts?before=41\">"
	    "Older drafts"));
	assert_null(strstr(h, "rel=\"prev\""));
	buf_reset(&r->body);
	m.before = 41;			/* the last page */
	m.cards.n = 0;
	m.more = 0;
	view_drafts(r, &m);
	h = body(r);
	assert_non_null(strstr(h, "No older drafts."));
	assert_non_null(strstr(h, "<a rel=\"prev\" href=\"/drafts\">"));
	assert_null(strstr(h, "rel=\"next\""));
	buf_reset(&r->body);
	memset(&v, 0, sizeof(v));
	v.u = (struct account){ 9, "bob", "Bob", 0 };
	v.self = 1;
	v.page = 1;
	v.drafts = (struct post_cards){ cs, 2 };
	v.drafts_more = 1;
	view_profile(r, &v);
	h = body(r);
	assert_non_null(strstr(h, "Your drafts"));
	assert_non_null(strstr(h, "<a href=\"/drafts?before=41\">Older drafts"));
	assert_null(strstr(h, "rel=\"next\""));
	buf_reset(&r->body);
	v.drafts_more = 0;
	view_profile(r, &v);
	assert_null(strstr(body(r), "/drafts?before"));
	req_free(r);
}

static void
test_topic_and_people(void **state)
{
	struct person best[1] = { { 3, "cat<", "Cat", 12 } };
	struct topic_view v;
	struct people ps = { best, 1 };
	struct people_model pm = { 0 };
	struct account u = { 9, "bob", "Bob", 0 };
	struct req *r = req_new(0);
	const char *h;

	(void)state;
	memset(&v, 0, sizeof(v));
	strcpy(v.slug, "cats");
	v.posts = (struct count){ 12, 1 };
	v.best = ps;
	v.page = 1;
	view_topic(r, &v);
	h = body(r);
	assert_non_null(strstr(h, "data-counter=\"topic-posts\" "
	    "data-topic=\"cats\">12<"));
	assert_non_null(strstr(h, "<li data-login=\"cat&lt;\" data-value=\"12\">"));
	assert_non_null(strstr(h, "No posts in this topic yet."));
	assert_non_null(strstr(h, "href=\"/login\""));	/* a visitor */
	buf_reset(&r->body);
	pm.u = u;
	pm.kind = TL_FOLLOWERS;
	pm.ps = ps;
	pm.page = 1;
	view_people(r, &pm);
	h = body(r);
	assert_non_null(strstr(h, "Bob \xc2\xb7 followers"));
	assert_non_null(strstr(h, "<li data-login=\"cat&lt;\">"));
	buf_reset(&r->body);
	pm.ps.n = 0;
	pm.kind = TL_FOLLOWING;
	view_people(r, &pm);
	assert_non_null(strstr(body(r), "Nobody yet."));
	req_free(r);
}

static void
test_top_and_report(void **state)
{
	struct person rows[1] = { { 3, "cat", "Cat", 99 } };
	struct count counts[1][PROFILE_NCOUNTS] = {
		{ { 1, 1 }, { 0, 0 }, { 2, 1 }, { 99, 1 } },
	};
	struct top_model tm = { "likes", 10, { { rows, 1 }, counts } };
	struct run_model *rm = calloc(1, sizeof(*rm));
	struct run *run = &rm->run;
	struct run_names *names = &rm->names;
	struct req *r = req_new(1);
	const char *h;

	(void)state;
	r->sess.is_admin = 1;
	view_top(r, &tm);
	h = body(r);
	assert_non_null(strstr(h, "<tr data-rank=\"1\" data-login=\"cat\" "
	    "data-value=\"99\">"));
	assert_non_null(strstr(h, "<td class=\"num\">?</td>"));	/* failed */
	/* the sort column once: "likes" heads one column, not two */
	assert_non_null(strstr(h, ">likes</th>"));
	assert_null(strstr(strstr(h, ">likes</th>") + 1, ">likes</th>"));
	buf_reset(&r->body);
	run->id = 4;
	strcpy(run->state, "done");
	run->progress = 100;
	run->owner = 77;
	strcpy(run->owner_name, "db<host>:77:1700000000000");
	strcpy(run->report.fam[0].name, "post_likes");
	run->report.fam[0].checked = 10;
	run->report.fam[0].wrong = 2;
	run->report.fam[0].fixed = 2;
	run->report.fam[0].nex = 1;
	strcpy(run->report.fam[0].ex[0], "42");
	strcpy(run->report.fam[1].name, "user_followers");
	run->report.fam[1].wrong = 2;
	run->report.fam[1].nex = 2;
	strcpy(run->report.fam[1].ex[0], "3");
	strcpy(run->report.fam[1].ex[1], "4");	/* not looked up: raw */
	strcpy(run->report.fam[2].name, "user_topic_rating");
	run->report.fam[2].nex = 1;
	strcpy(run->report.fam[2].ex[0], "3:5");
	names->n = 2;
	names->id[0] = 3;
	strcpy(names->name[0], "cat");
	names->id[1] = 5;
	names->topic[1] = 1;
	strcpy(names->name[1], "cats");
	rm->all[0] = *run;
	rm->nall = 1;
	view_run(r, rm);
	h = body(r);
	/* examples name the user, the post, the topic -- never a raw id
	 * where a name is known */
	assert_non_null(strstr(h, "<a href=\"/posts/42\">post #42</a>"));
	assert_non_null(strstr(h, "<a href=\"/u/cat\">@cat</a>, 4<"));
	assert_non_null(strstr(h, "<a href=\"/u/cat\">@cat</a> in "
	    "<a href=\"/t/cats\">#cats</a>"));
	/* the host and process that ran it, escaped */
	assert_non_null(strstr(h, "<p class=\"muted\" data-owner-host="
	    "\"db&lt;host&gt;\">Run by db&lt;host&gt;, process 77</p>"));
	/* the runs row counts what was fixed */
	assert_non_null(strstr(h, "<td class=\"num\" data-fixed>2</td>"));
	assert_non_null(strstr(h, "data-run-id=\"4\" data-state=\"done\" "
	    "data-progress=\"100\""));
	assert_non_null(strstr(h, "data-family=\"post_likes\" data-checked=\"10\" "
	    "data-wrong=\"2\" data-fixed=\"2\""));
	free(rm);
	req_free(r);
}

static void
test_metrics(void **state)
{
	struct ops_view *v = calloc(1, sizeof(*v));
	struct buf out = { 0 };

	(void)state;
	v->pending = 5;
	v->flush_lag = -1;
	v->ndrift = 1;
	v->drift[0] = (struct drift_row){ "post_likes", 40, 1 };
	v->cache_rebuilds = 3;
	view_metrics(&out, NULL, v);	/* no mapping: only the gauges */
	buf_putc(&out, '\0');
	assert_non_null(strstr(out.p, "tally_pending_deltas 5\n"));
	assert_non_null(strstr(out.p, "tally_flush_lag_seconds -1\n"));
	assert_non_null(strstr(out.p,
	    "tally_drift_checked_total{family=\"post_likes\"} 40\n"));
	assert_non_null(strstr(out.p,
	    "tally_drift_wrong_total{family=\"post_likes\"} 1\n"));
	assert_non_null(strstr(out.p, "tally_profile_cache_rebuilds_total 3\n"));
	assert_null(strstr(out.p, "tally_reconcile_wrong{"));	/* no run */
	buf_free(&out);
	free(v);
}

/* The writers' lock's times: each taking in its bucket, by holder; the
 * histogram cumulative, its sum in seconds. */
static void
test_lock_metrics(void **state)
{
	struct ops_view *v = calloc(1, sizeof(*v));
	struct metrics *m = calloc(1, sizeof(*m));
	struct buf out = { 0 };
	struct metrics_cost cost = { .stmts = 1, .cmds = 2, .trips = 1, .kept = 1,
	    .ckept = 30, .ahead = 1 };
	static const char *const want[] = {
#define H "tally_sqlite_writer_lock_hold_seconds_"
#define W "tally_sqlite_writer_lock_wait_seconds_"
		H "bucket{holder=\"social\",le=\"0.0001\"} 1\n",
		H "bucket{holder=\"social\",le=\"0.00025\"} 2\n",
		H "sum{holder=\"social\"} 0.000340\n",
		W "bucket{holder=\"social\",le=\"0.001\"} 1\n",
		W "bucket{holder=\"social\",le=\"0.005\"} 2\n",
		H "bucket{holder=\"checkpoint\",le=\"0.01\"} 0\n",
		H "bucket{holder=\"checkpoint\",le=\"0.025\"} 1\n",
		H "bucket{holder=\"worker\",le=\"0.1\"} 0\n",
		H "count{holder=\"worker\"} 1\n",
#undef H
#undef W
		/* the requests' histogram, printed by the same code */
		"tally_http_request_duration_seconds_bucket{handler=\"social\","
		    "le=\"0.001\"} 1\n",
		"tally_http_request_duration_seconds_bucket{handler=\"social\","
		    "le=\"+Inf\"} 1\n",
		"tally_http_request_duration_seconds_sum{handler=\"social\"} "
		    "0.000800\n",
		/* the counts a process kept (count/ckeep.h) */
		"tally_counts_kept_total{handler=\"social\"} 30\n",
		"tally_http_request_duration_seconds_count{handler=\"social\"} 1\n",
		/* a page sent as its handler process kept it (web/keep.h) */
		"tally_pages_kept_total{handler=\"social\"} 1\n",
		/* a page whose first round trip went with its group's
		 * (web/batch.h) */
		"tally_pages_ahead_total{handler=\"social\"} 1\n",
		/* a statement's runs, by its number (store/sql.h) */
		"tally_sqlite_statement_runs_total{handler=\"social\","
		    "stmt=\"36\"} 3\n",
	};
	int social = metrics_handler("social");
	size_t i;

	(void)state;
	v->flush_lag = -1;
	metrics_lock(m, social, 0, 90);		/* a like: <= 0.1 ms */
	metrics_lock(m, social, 3000, 250);	/* waited 3 ms, <= 0.25 */
	metrics_lock(m, METRICS_LOCK_CKPT, 0, 12000);	/* <= 25 ms */
	metrics_lock(m, METRICS_LOCK_WORKER, 0, 500000);	/* +Inf */
	metrics_lock(m, METRICS_LOCKERS, 0, 1);	/* no such holder */
	metrics_observe(m, social, 200, 800, &cost);	/* a request, <= 1 ms */
	m->stmt_runs[social][36] = 3;
	view_metrics(&out, m, v);
	buf_putc(&out, '\0');
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (strstr(out.p, want[i]) == NULL)
			fail_msg("no \"%s\" in:\n%s", want[i], out.p);
	assert_null(strstr(out.p, "holder=\"\""));	/* unused slots */
	/* statements never run are not listed */
	assert_null(strstr(out.p, "stmt=\"35\""));
	buf_free(&out);
	free(m);
	free(v);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_notes),
		cmocka_unit_test(test_profile),
		cmocka_unit_test(test_drafts),
		cmocka_unit_test(test_topic_and_people),
		cmocka_unit_test(test_top_and_report),
		cmocka_unit_test(test_metrics),
		cmocka_unit_test(test_lock_metrics),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
