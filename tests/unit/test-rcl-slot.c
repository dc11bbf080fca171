/* test-rcl-slot.c -- the Redis Cluster slot of a key and of a command
 * (store/rcl.h), against what a real cluster node answers to
 * CLUSTER KEYSLOT for the same keys. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "store/key.h"
#include "store/rcl.h"

static int
slot(const char *key)
{
	return rcl_keyslot(key, strlen(key));
}

static void
test_keyslot_as_redis(void **state)
{
	(void)state;
	assert_int_equal(slot("foo"), 12182);
	assert_int_equal(slot("123456789"), 12739);	/* CRC16 0x31C3 */
	assert_int_equal(slot(""), 0);
	assert_int_equal(slot("x{"), 3596);
	assert_int_equal(slot("{c7}:pending"), 6349);
}

static void
test_keyslot_hash_tags(void **state)
{
	(void)state;
	/* the text between the first { and the next } ... */
	assert_int_equal(slot("{u42}:home"), 11448);
	assert_int_equal(slot("{u42}:home"), slot("u42"));
	assert_int_equal(slot("{u42}:followers"), slot("{u42}:home:ok"));
	assert_int_equal(slot("foo{{bar}}zap"), 4015);	/* tag "{bar" */
	/* ... unless it is empty: then the whole key */
	assert_int_equal(slot("{}x"), 10595);
	assert_int_equal(slot("foo{}{bar}"), 8363);
}

static void
test_command_slot(void **state)
{
	const char *get[] = { "GET", "{u42}:home" };
	const char *eval[] = { "EVALSHA", "abc", "2", "{c7}:pending", "{c7}:meta",
	    "1" };
	const char *eval0[] = { "EVAL", "return 1", "0" };
	const char *ping[] = { "PING" };
	const char *scan[] = { "SCAN", "0", "MATCH", "{u*" };
	size_t lg[] = { 3, 10 }, le[] = { 7, 3, 1, 12, 9, 1 }, l0[] = { 4, 8, 1 };
	size_t lp[] = { 4 }, ls[] = { 4, 1, 5, 3 };

	(void)state;
	assert_int_equal(rcl_cmd_slotof(2, get, lg), 11448);
	assert_int_equal(rcl_cmd_slotof(6, eval, le), 6349);	/* KEYS[1] */
	assert_int_equal(rcl_cmd_slotof(3, eval0, l0), -1);
	assert_int_equal(rcl_cmd_slotof(1, ping, lp), -1);
	assert_int_equal(rcl_cmd_slotof(4, scan, ls), -1);
}

/* The badges' global part has a copy in every sixteenth of the slot
 * space (key.h), so a master with a range of 1024 slots or more holds
 * one; and a user's cached keys share the slot of the user's bucket. */
static void
test_badge_copies_spread(void **state)
{
	char k[KEY_MAX], u[KEY_MAX];
	int i, s, seen[KEY_BADGE_COPIES] = { 0 };

	(void)state;
	for (i = 0; i < KEY_BADGE_COPIES; i++) {
		key_badge_copy(k, sizeof(k), i);
		s = slot(k);
		assert_int_equal(s / (RCL_SLOTS / KEY_BADGE_COPIES), i);
		assert_int_equal(seen[i]++, 0);
		assert_int_not_equal(strcmp(k, KEY_BADGE_GLOBAL), 0);
	}
	key_user_cache(u, sizeof(u), 517, 42, "bm");
	assert_string_equal(u, "{c517}:u42:bm");
	assert_int_equal(slot(u), slot("{c517}:u42"));
	key_user_cache(u, sizeof(u), 517, 42, "ss");
	assert_int_equal(slot(u), slot("{c517}:pending"));
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_keyslot_as_redis),
		cmocka_unit_test(test_keyslot_hash_tags),
		cmocka_unit_test(test_command_slot),
		cmocka_unit_test(test_badge_copies_spread),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
