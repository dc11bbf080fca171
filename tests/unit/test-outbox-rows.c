/* test-outbox-rows.c -- an outbox row's text (outbox.h): every delta the
 * formula can write comes back exactly; malformed, truncated or foreign
 * texts are refused whole, numbers out of range too (the drain then
 * keeps the row aside); a text
 * that does not fit its buffer is refused, never cut. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "count/counters.h"
#include "count/outbox.h"

static void
test_round_trip(void **state)
{
	struct delta in[OUTBOX_MAX], out[OUTBOX_MAX];
	char text[OUTBOX_MAX * 112];
	int i, n;

	(void)state;
	for (i = 0; i < OUTBOX_MAX; i++) {
		in[i].fam = (enum family)(i % FAM__MAX);
		in[i].k1 = 9007199254740993LL - i;
		in[i].k2 = i % 3 ? 0 : 4242;
		in[i].d = i % 2 ? -(long long)i - 1 : 1000000000000LL;
		in[i].owner = i % 2 ? 0 : 9007199254740000LL + i;
	}
	assert_true(outbox_encode(in, OUTBOX_MAX, text, sizeof(text)) > 0);
	n = outbox_decode(text, out, OUTBOX_MAX);
	assert_int_equal(n, OUTBOX_MAX);
	for (i = 0; i < n; i++) {
		assert_int_equal(out[i].fam, in[i].fam);
		assert_true(out[i].k1 == in[i].k1);
		assert_true(out[i].k2 == in[i].k2);
		assert_true(out[i].d == in[i].d);
		assert_true(out[i].owner == in[i].owner);
	}
	assert_int_equal(outbox_encode(in, 0, text, sizeof(text)), 0);
	assert_int_equal(outbox_decode("", out, OUTBOX_MAX), 0);
}

static void
test_like_row(void **state)
{
	struct outbox ob = { .n = 0 };
	struct row r = { ROW_LIKE, 7, 3, 5, 2, 1, 0 };
	struct delta out[OUTBOX_MAX];
	char text[OUTBOX_MAX * 112];
	long long sum = 0;
	int i, n;

	(void)state;
	outbox_formula(&ob, NULL, &r);
	assert_true(ob.n > 0);
	assert_true(outbox_encode(ob.ds, ob.n, text, sizeof(text)) > 0);
	/* the post's counter names its author, whose bucket holds it */
	assert_non_null(strstr(text, "post_likes 7 0 1 5"));
	n = outbox_decode(text, out, OUTBOX_MAX);
	assert_int_equal(n, ob.n);
	for (i = 0; i < n; i++)
		assert_true(out[i].owner == (out[i].fam == FAM_POST_LIKES ?
		    5 : 0));
	/* a row written before owners: each delta's owner is 0 (the drain
	 * gives a post's its author, cname.h) */
	n = outbox_decode("post_likes 7 0 1;user_likes 5 0 1 0", out,
	    OUTBOX_MAX);
	assert_int_equal(n, 2);
	assert_true(out[0].k1 == 7 && out[0].d == 1 && out[0].owner == 0);
	assert_true(out[1].k1 == 5 && out[1].owner == 0);
	/* the unlike's row is the exact opposite */
	outbox_formula(&ob, &r, NULL);
	for (i = 0; i < ob.n; i++)
		sum += ob.ds[i].d;
	assert_true(sum == 0);
}

static void
test_bad_texts(void **state)
{
	static const char *const bad[] = {
		"post_likes", "post_likes 1", "post_likes 1 0", "post_likes 1 0 ",
		"nosuch 1 0 1", "post_likes x 0 1", "post_likes 1 0 1;",
		"post_likes 1 0 1;;post_likes 1 0 1", " post_likes 1 0 1",
		"post_likes 1 0 1x", "post_likes  1 0 1", ";",
		"post_likes 1 0 1 ", "post_likes 1 0 1 x", "post_likes 1 0 1 2 3",
		"post_likes 1 0 1 2;", "post_likes 1 0 1  2",
		/* out of range: strtoll() saturates, which is no delta */
		"post_likes 1 0 99999999999999999999",
		"post_likes 99999999999999999999 0 1",
		"post_likes 1 0 -99999999999999999999",
	};
	struct delta out[OUTBOX_MAX];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (outbox_decode(bad[i], out, OUTBOX_MAX) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
	/* more deltas than room */
	assert_int_equal(outbox_decode("post_likes 1 0 1;post_likes 2 0 1",
	    out, 1), -1);
}

static void
test_no_room(void **state)
{
	struct delta in[2] = { { FAM_POST_LIKES, 1, 0, 1, 2 },
	    { FAM_USER_LIKES, 2, 0, 1, 0 } };
	char text[24];

	(void)state;
	assert_int_equal(outbox_encode(in, 2, text, sizeof(text)), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_like_row),
		cmocka_unit_test(test_bad_texts),
		cmocka_unit_test(test_no_room),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
