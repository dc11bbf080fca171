/* test-rowheld.c -- the host's table of rows found held (rowheld.h) on a
 * real mapped file: a row whose wait ran out answers busy at once; once
 * its time passed one caller claims the next try while the others stay
 * busy; a try that got the row frees it for all, one that waited in vain
 * marks it held again; a time from another boot counts as passed.  A
 * slot's time is moved on by writing the file's bytes through a second
 * mapping, as another process would see them. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/shmfile.h"
#include "store/rowheld.h"

static char dir[256], path[300];
static int64_t *raw;		/* the file, as pairs (row, until) */

static int
setup(void **state)
{
	const char *tmp = getenv("TMPDIR");

	(void)state;
	snprintf(dir, sizeof(dir), "%s/tally-rowheld-XXXXXX",
	    tmp != NULL && *tmp != '\0' && strlen(tmp) < 200 ? tmp : "/tmp");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/rows-held", dir);
	if (rowheld_open(path) == -1 ||
	    (raw = shmfile_map(path, 4096)) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	(void)state;
	unlink(path);
	return rmdir(dir);
}

/* row's slot's end, through the second mapping: set to until. */
static void
set_until(long long row, int64_t until)
{
	int i;

	for (i = 0; i < 4096 / 16; i++)
		if (raw[2 * i] == row) {
			raw[2 * i + 1] = until;
			return;
		}
	fail_msg("row %lld has no slot", row);
}

static void
test_unknown_row_goes(void **state)
{
	(void)state;
	assert_int_equal(rowheld_check(41), ROWHELD_GO);
	assert_int_equal(rowheld_check(0), ROWHELD_GO);
}

static void
test_marked_row_is_busy_others_go(void **state)
{
	(void)state;
	assert_int_equal(rowheld_mark(7), 1);		/* newly held: logged */
	assert_int_equal(rowheld_check(7), ROWHELD_BUSY);
	assert_int_equal(rowheld_check(8), ROWHELD_GO);
	assert_int_equal(rowheld_mark(7), 0);		/* already known */
	assert_int_equal(rowheld_check(7), ROWHELD_BUSY);
}

static void
test_one_claims_the_try_then_frees(void **state)
{
	(void)state;
	assert_int_equal(rowheld_mark(9), 1);
	set_until(9, clock_mono_ms() - 1);		/* its time passed */
	assert_int_equal(rowheld_check(9), ROWHELD_TRY);
	assert_int_equal(rowheld_check(9), ROWHELD_BUSY);	/* the others */
	rowheld_free(9);				/* the try got the row */
	assert_int_equal(rowheld_check(9), ROWHELD_GO);
	assert_int_equal(rowheld_mark(9), 1);		/* held anew: logged */
}

static void
test_a_try_in_vain_marks_it_again(void **state)
{
	(void)state;
	assert_int_equal(rowheld_mark(11), 1);
	set_until(11, clock_mono_ms() - 1);
	assert_int_equal(rowheld_check(11), ROWHELD_TRY);
	assert_int_equal(rowheld_mark(11), 0);		/* still held: quiet */
	assert_int_equal(rowheld_check(11), ROWHELD_BUSY);
}

static void
test_a_time_from_another_boot_has_passed(void **state)
{
	(void)state;
	assert_int_equal(rowheld_mark(13), 1);
	set_until(13, clock_mono_ms() + 3600 * 1000);
	assert_int_equal(rowheld_check(13), ROWHELD_TRY);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unknown_row_goes),
		cmocka_unit_test(test_marked_row_is_busy_others_go),
		cmocka_unit_test(test_one_claims_the_try_then_frees),
		cmocka_unit_test(test_a_try_in_vain_marks_it_again),
		cmocka_unit_test(test_a_time_from_another_boot_has_passed),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, teardown);
}
