/* test-rec-report.c -- a reconciliation report to JSON and back
 * (recreport.h): every number and example survives the round trip; a
 * stored report that names a family twice (hand-edited, or from another
 * version) replaces the first row with the second instead of appending
 * its examples past the five a family holds; rows that are not reports
 * are skipped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "count/recreport.h"

static void
test_round_trip(void **state)
{
	struct rec_report a, b;
	char *js;
	int i;

	(void)state;
	recreport_init(&a);
	for (i = 0; i < REC_FAMILIES; i++) {
		a.fam[i].checked = 1000 + i;
		a.fam[i].wrong = i;
		a.fam[i].fixed = i / 2;
		a.fam[i].max_err = 7 * i;
		a.fam[i].queued = i % 3;
		a.fam[i].nex = i % (REC_EXAMPLES + 1);
		for (int j = 0; j < a.fam[i].nex; j++)
			snprintf(a.fam[i].ex[j], sizeof(a.fam[i].ex[j]),
			    "%d:%d", i, j);
	}
	js = recreport_json(&a);
	assert_non_null(js);
	assert_int_equal(recreport_parse(js, &b), 0);
	free(js);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(recreport_wrong(&b), recreport_wrong(&a));
}

static void
test_family_twice(void **state)
{
	struct rec_report *r = malloc(sizeof(*r));	/* ASan sees its end */
	struct buf js = { 0 };
	const char *fam;
	int i, k;

	(void)state;
	assert_non_null(r);
	recreport_init(r);
	/* the last family, so examples past its array leave the struct */
	k = REC_FAMILIES - 1;
	fam = r->fam[k].name;
	buf_printf(&js, "[");
	for (i = 0; i < 3; i++)
		buf_printf(&js, "%s{\"family\":\"%s\",\"checked\":%d,\"wrong\":%d,"
		    "\"fixed\":0,\"max_error\":1,\"queued\":0,\"examples\":"
		    "[\"%d1\",\"%d2\",\"%d3\",\"%d4\",\"%d5\"]}", i ? "," : "",
		    fam, 10 + i, 5, i, i, i, i, i);
	buf_printf(&js, "]");
	assert_int_equal(recreport_parse(js.p, r), 0);
	assert_int_equal(r->fam[k].nex, REC_EXAMPLES);
	assert_int_equal(r->fam[k].checked, 12);
	assert_string_equal(r->fam[k].ex[0], "21");
	assert_string_equal(r->fam[k].ex[REC_EXAMPLES - 1], "25");
	assert_int_equal(recreport_wrong(r), 5);
	for (i = 0; i < k; i++)
		assert_int_equal(r->fam[i].nex, 0);
	buf_free(&js);
	free(r);
}

static void
test_not_reports(void **state)
{
	struct rec_report r;
	static const char *bad[] = { "", "{}", "[1,2]", "[{\"family\":1}]",
	    "not json", "[{\"family\":\"nosuch\",\"checked\":1,\"wrong\":1,"
	    "\"fixed\":1,\"max_error\":1,\"queued\":0,\"examples\":[]}]" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = recreport_parse(bad[i], &r);

		assert_true(rc == 0 || rc == -1);
		assert_int_equal(recreport_wrong(&r), 0);
	}
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_family_twice),
		cmocka_unit_test(test_not_reports),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
