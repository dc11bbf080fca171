/* test-session-id.c -- session_id_parse (shared/social/session.h): only
 * "<user id>.<43 base64url characters>" is a session id; the user id comes
 * out, and the hex of the hash of the WHOLE id (so the same token under
 * another user id is another, unknown, id). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "social/session.h"

static char tok[TOKEN_LEN + 1];

static int
setup(void **state)
{
	(void)state;
	if (auth_init() != 0)
		return -1;
	auth_token_new(tok);
	return 0;
}

static void
test_good(void **state)
{
	char sid[SID_MAX + 1], hex[SID_HEX_LEN + 1], hex2[SID_HEX_LEN + 1];
	long long uid = 0;

	(void)state;
	snprintf(sid, sizeof(sid), "42.%s", tok);
	assert_int_equal(session_id_parse(sid, &uid, hex), 0);
	assert_int_equal(uid, 42);
	assert_int_equal(strlen(hex), SID_HEX_LEN);
	assert_int_equal(strspn(hex, "0123456789abcdef"), SID_HEX_LEN);
	/* same token, another user: another hash */
	snprintf(sid, sizeof(sid), "43.%s", tok);
	assert_int_equal(session_id_parse(sid, &uid, hex2), 0);
	assert_int_equal(uid, 43);
	assert_string_not_equal(hex, hex2);
	/* the largest id that fits */
	snprintf(sid, sizeof(sid), "999999999999999999.%s", tok);
	assert_int_equal(session_id_parse(sid, &uid, NULL), 0);
	assert_int_equal(uid, 999999999999999999LL);
}

static void
test_bad(void **state)
{
	char bad[16][SID_MAX + 64];
	long long uid = 7;
	size_t i, n = 0;

	(void)state;
	snprintf(bad[n++], sizeof(bad[0]), "%s", tok);		/* old form */
	snprintf(bad[n++], sizeof(bad[0]), ".%s", tok);		/* no id */
	snprintf(bad[n++], sizeof(bad[0]), "0.%s", tok);		/* id 0 */
	snprintf(bad[n++], sizeof(bad[0]), "042.%s", tok);		/* leading 0 */
	snprintf(bad[n++], sizeof(bad[0]), "-4.%s", tok);
	snprintf(bad[n++], sizeof(bad[0]), "4x.%s", tok);
	snprintf(bad[n++], sizeof(bad[0]), "1000000000000000000.%s", tok);
	snprintf(bad[n++], sizeof(bad[0]), "4..%s", tok);
	snprintf(bad[n++], sizeof(bad[0]), "4.%.*s", TOKEN_LEN - 1, tok);
	snprintf(bad[n++], sizeof(bad[0]), "4.%sA", tok);
	snprintf(bad[n++], sizeof(bad[0]), "4.%.*s=", TOKEN_LEN - 1, tok);
	snprintf(bad[n++], sizeof(bad[0]), "4.%.*s+", TOKEN_LEN - 1, tok);
	snprintf(bad[n++], sizeof(bad[0]), "4.%.*s ", TOKEN_LEN - 1, tok);
	snprintf(bad[n++], sizeof(bad[0]), "4");
	snprintf(bad[n++], sizeof(bad[0]), "%s", "");
	for (i = 0; i < n; i++) {
		if (session_id_parse(bad[i], &uid, NULL) != -1)
			fail_msg("accepted \"%s\"", bad[i]);
		assert_int_equal(uid, 7);	/* untouched */
	}
	assert_int_equal(session_id_parse(NULL, &uid, NULL), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_good),
		cmocka_unit_test(test_bad),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, setup, NULL);
}
