/* test-account-admin.c -- the admin account made at the first start
 * (social/account.h account_ensure_admin()): a TALLY_ADMIN_PASSWORD that
 * /login would refuse (under 8 bytes, a control character, not UTF-8) is
 * refused at the start, and no account is made with it (it was, and
 * could never log in); one of 128 bytes, the most a password may be, is
 * taken (it was refused as too long); none given, one is made.  And the
 * logins reserved for the operator: a staff name alone or as a word of
 * the login, not inside a longer word. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/auth.h"
#include "social/account.h"
#include "tmpdb.h"

static struct tmpdb tdb;

static int
setup(void **state)
{
	if (auth_init() != 0 || tmpdb_make_t(&tdb, "admin") == -1 ||
	    (*state = db_new(tdb.path)) == NULL)
		return -1;
	return 0;
}

static int
teardown(void **state)
{
	db_free(*state);
	return tmpdb_remove(&tdb);
}

static int
admin_exists(struct db *d)
{
	struct account a;

	return account_by_login(d, "admin", &a) == 1;
}

static void
test_refused_then_longest(void **state)
{
	struct db *d = *state;
	char out[129], pw[129];

	assert_int_equal(account_ensure_admin(d, "short", out, sizeof(out),
	    1), -1);
	assert_int_equal(account_ensure_admin(d, "bell\arings", out,
	    sizeof(out), 1), -1);
	assert_int_equal(account_ensure_admin(d, "not-utf8-\xff\xfe", out,
	    sizeof(out), 1), -1);
	assert_false(admin_exists(d));
	memset(pw, 'a', 128);
	pw[128] = '\0';
	assert_int_equal(account_ensure_admin(d, pw, out, sizeof(out), 1), 1);
	assert_string_equal(out, pw);
	assert_true(admin_exists(d));
	assert_true(account_check(d, "admin", pw, 128, NULL) > 0);
	/* there: nothing made again */
	assert_int_equal(account_ensure_admin(d, NULL, out, sizeof(out), 1),
	    0);
}

static void
test_made_when_none_given(void **state)
{
	struct db *d = *state;
	char out[129];

	assert_int_equal(account_ensure_admin(d, NULL, out, sizeof(out), 1),
	    1);
	assert_int_equal(strlen(out), 20);
	assert_true(account_check(d, "admin", out, strlen(out), NULL) > 0);
}

static void
test_reserved_by_word(void **state)
{
	static const char *const kept[] = { "admin", "ADMIN", "admin_2",
	    "2admin", "The_Root", "tally_support", "x_moderator_x",
	    "administrator9", "root_" };
	static const char *const free_[] = { "rootbeer_fan", "supportive",
	    "tallyho2", "sysadmins", "adm_in", "alice", "a_b_c" };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		if (!account_reserved(kept[i]))
			fail_msg("%s: not reserved", kept[i]);
	for (i = 0; i < sizeof(free_) / sizeof(free_[0]); i++)
		if (account_reserved(free_[i]))
			fail_msg("%s: reserved", free_[i]);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_refused_then_longest,
		    setup, teardown),
		cmocka_unit_test_setup_teardown(test_made_when_none_given,
		    setup, teardown),
		cmocka_unit_test(test_reserved_by_word),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
