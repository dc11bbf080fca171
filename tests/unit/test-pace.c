/* test-pace.c -- one event per key in a gap (base/pace.h): a key keeps
 * its slot while it waits, even once a slot before it on its way is free
 * again; a key is served once per gap; a full way gives NULL. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>

#include "base/pace.h"

static unsigned long long
home(long long key)
{
	return ((unsigned long long)key * 0x9E3779B97F4A7C15ULL) &
	    (PACE_SLOTS - 1);
}

/* A key other than key whose way starts where key's does. */
static long long
same_home(long long key)
{
	long long k;

	for (k = key + 1; k < key + 50 * PACE_SLOTS; k++)
		if (home(k) == home(key))
			return k;
	fail_msg("no key shares %lld's slot", key);
	return -1;
}

/* V served at 1000 takes the slot where both ways start; U, changed at
 * 1050, gets the next one and waits for its gap.  At 1120 V's gap is
 * over (its slot free again, V not waiting): U's own slot is still
 * U's.  (A free slot first on its way was given to U once more: a
 * second slot, the first left waiting for good.) */
static void
test_waiting_key_keeps_its_slot(void **state)
{
	struct pace *p = calloc(1, sizeof(*p));
	struct pace_slot *v, *u, *again;
	long long U = 42, V = same_home(42);

	(void)state;
	p->gap_ms = 100;
	assert_non_null(v = pace_slot(p, V, 1000));
	v->at = 1000;
	assert_non_null(u = pace_slot(p, U, 1050));
	assert_ptr_not_equal(u, v);
	u->at = 1040;		/* served just before: U waits */
	u->waiting = 1;
	assert_non_null(again = pace_slot(p, U, 1120));
	assert_ptr_equal(again, u);
	assert_int_equal(again->waiting, 1);
	free(p);
}

static void
test_one_slot_a_key(void **state)
{
	struct pace *p = calloc(1, sizeof(*p));
	struct pace_slot *a, *b;

	(void)state;
	p->gap_ms = 100;
	assert_non_null(a = pace_slot(p, 7, 500));
	assert_int_equal(a->at, 0);		/* never served */
	a->at = 500;
	assert_non_null(b = pace_slot(p, 7, 550));
	assert_ptr_equal(a, b);
	assert_int_equal(b->at, 500);
	free(p);
}

/* Every slot of a key's way held by others within their gap: NULL. */
static void
test_full_way(void **state)
{
	struct pace *p = calloc(1, sizeof(*p));
	struct pace_slot *e;
	int i;

	(void)state;
	p->gap_ms = 100;
	for (i = 0; i < PACE_PROBES; i++) {
		e = &p->s[(home(9) + (unsigned long long)i) & (PACE_SLOTS - 1)];
		e->key = 1000000 + i;
		e->at = 900;
	}
	assert_null(pace_slot(p, 9, 950));
	assert_non_null(pace_slot(p, 9, 1000));	/* their gaps over */
	free(p);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_waiting_key_keeps_its_slot),
		cmocka_unit_test(test_one_slot_a_key),
		cmocka_unit_test(test_full_way),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
