/* test-device.c -- the signed device cookie (shared/social/device.h): an
 * issued entry is known for its login only, under the account's stamp as
 * it was (a new password forgets it); a bent mac, a swapped login, a
 * cookie of garbage are not; a new login goes first and keeps the other
 * accounts' entries, DEVICE_KEEP at most.  The key file is made once,
 * 32 bytes, 0600. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "social/device.h"

static struct cfg c;

/* A stand-in stamp of login's password (an account's is its hash). */
static const char *
S(const char *login)
{
	static char buf[8][64];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "$argon2id$v=19$stamp-of-%s", login);
	return buf[i];
}

static int
setup(void **state)
{
	(void)state;
	if (sodium_init() < 0)
		return -1;
	snprintf(c.run_dir, sizeof(c.run_dir), "/tmp/tally-device-XXXXXX");
	return mkdtemp(c.run_dir) == NULL ? -1 : 0;
}

static int
teardown(void **state)
{
	char key[sizeof(c.run_dir) + 16];

	(void)state;
	snprintf(key, sizeof(key), "%s/device-key", c.run_dir);
	unlink(key);
	rmdir(c.run_dir);
	return 0;
}

static void
test_issue_and_know(void **state)
{
	char v[DEVICE_VALUE_MAX + 1], bent[DEVICE_VALUE_MAX + 1];
	char key[sizeof(c.run_dir) + 16];
	struct stat st;
	size_t n;

	(void)state;
	assert_int_equal(device_issue(&c, "alice", S("alice"), NULL, v), 0);
	snprintf(key, sizeof(key), "%s/device-key", c.run_dir);
	assert_int_equal(stat(key, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal((int)st.st_size, 32);
	assert_int_equal(device_knows(&c, v, "alice", S("alice")), 1);
	assert_int_equal(device_knows(&c, v, "bob", S("bob")), 0);
	assert_int_equal(device_knows(&c, NULL, "alice", S("alice")), 0);
	assert_int_equal(device_knows(&c, "", "alice", S("alice")), 0);
	assert_int_equal(device_knows(&c, "alice.00.00", "alice", S("alice")),
	    0);
	/* the mac's last digit bent */
	snprintf(bent, sizeof(bent), "%s", v);
	n = strlen(bent);
	bent[n - 1] = bent[n - 1] == '0' ? '1' : '0';
	assert_int_equal(device_knows(&c, bent, "alice", S("alice")), 0);
	/* the login swapped: the mac covers it */
	snprintf(bent, sizeof(bent), "bob%s", v + strlen("alice"));
	assert_int_equal(device_knows(&c, bent, "bob", S("bob")), 0);
}

static void
test_several_accounts(void **state)
{
	char v[DEVICE_VALUE_MAX + 1], w[DEVICE_VALUE_MAX + 1], login[16];
	int i;

	(void)state;
	assert_int_equal(device_issue(&c, "alice", S("alice"), "garbage:more", v), 0);
	assert_null(strchr(v, ':'));		/* the garbage went */
	assert_int_equal(device_issue(&c, "bob", S("bob"), v, w), 0);
	assert_int_equal(device_knows(&c, w, "alice", S("alice")), 1);
	assert_int_equal(device_knows(&c, w, "bob", S("bob")), 1);
	assert_int_equal(strncmp(w, "bob.", 4), 0);	/* newest first */
	/* alice again: one entry of hers, first */
	assert_int_equal(device_issue(&c, "alice", S("alice"), w, v), 0);
	assert_int_equal(strncmp(v, "alice.", 6), 0);
	assert_null(strstr(strchr(v, ':'), "alice."));
	/* DEVICE_KEEP at most: the oldest go */
	for (i = 0; i < DEVICE_KEEP + 2; i++) {
		snprintf(login, sizeof(login), "user%d", i);
		assert_int_equal(device_issue(&c, login, S(login), v, w), 0);
		memcpy(v, w, sizeof(v));
	}
	assert_int_equal(device_knows(&c, v, "alice", S("alice")), 0);
	assert_int_equal(device_knows(&c, v, "user6", S("user6")), 1);
	assert_int_equal(device_knows(&c, v, "user2", S("user2")), 1);
	assert_int_equal(device_knows(&c, v, "user1", S("user1")), 0);
}

/* A new password (a new stamp) forgets the account's entry; tallyctl
 * passwd's too.  Before, an entry lived a year whatever happened to the
 * password: a browser that once held a stolen one kept guessing past
 * the lock after its owner changed it. */
static void
test_new_password_forgets(void **state)
{
	char v[DEVICE_VALUE_MAX + 1];

	(void)state;
	assert_int_equal(device_issue(&c, "alice", "$argon2id$old", NULL, v),
	    0);
	assert_int_equal(device_knows(&c, v, "alice", "$argon2id$old"), 1);
	assert_int_equal(device_knows(&c, v, "alice", "$argon2id$new"), 0);
	assert_int_equal(device_knows(&c, v, "alice", ""), 0);
	assert_int_equal(device_knows(&c, v, "alice", NULL), 0);
	/* nothing is issued without a stamp */
	assert_int_equal(device_issue(&c, "alice", "", NULL, v), -1);
	assert_int_equal(device_issue(&c, "alice", NULL, NULL, v), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_issue_and_know),
		cmocka_unit_test(test_several_accounts),
		cmocka_unit_test(test_new_password_forgets),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
