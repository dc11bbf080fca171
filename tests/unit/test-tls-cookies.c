/* test-tls-cookies.c -- behind TLS (nginx passes HTTPS=on) cookies carry
 * Secure and the __Host- prefix, are read only under that name (a
 * sibling subdomain's plain "sid" is not), and answers carry
 * Strict-Transport-Security; over plain HTTP none of it. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/kv.h"
#include "web/req.h"
#include "web/resp.h"

/* FCGX keeps its environment as char ** (writable strings) */
static char https_on[] = "HTTPS=on", get[] = "REQUEST_METHOD=GET";
static char *tls_env[] = { https_on, get, NULL };
static char *plain_env[] = { get, NULL };

static const char *
head(struct req *r)
{
	buf_putc(&r->head, '\0');
	r->head.len--;
	return r->head.p;
}

static void
test_secure_over_tls(void **state)
{
	FCGX_Request fr;
	struct req r;

	(void)state;
	memset(&fr, 0, sizeof(fr));
	memset(&r, 0, sizeof(r));
	fr.envp = tls_env;
	r.fr = &fr;
	assert_true(resp_tls(&r));
	resp_cookie(&r, "sid", "7.abc", 3600);
	assert_non_null(strstr(head(&r), "Set-Cookie: __Host-sid=7.abc; Path=/; "
	    "Max-Age=3600; HttpOnly; SameSite=Lax; Secure\r\n"));
	resp_cookie(&r, "pcsrf", "", 0);
	assert_non_null(strstr(head(&r), "__Host-pcsrf=; Path=/; Max-Age=0; "
	    "HttpOnly; SameSite=Lax; Secure\r\n"));
	/* read back under the prefixed name only */
	kv_parse_cookies(&r.cookies, "sid=planted; __Host-sid=7.abc");
	assert_string_equal(req_cookie(&r, "sid"), "7.abc");
	kv_free(&r.cookies);
	kv_parse_cookies(&r.cookies, "sid=planted");
	assert_null(req_cookie(&r, "sid"));
	kv_free(&r.cookies);
	buf_free(&r.head);
}

static void
test_plain_http(void **state)
{
	FCGX_Request fr;
	struct req r;

	(void)state;
	memset(&fr, 0, sizeof(fr));
	memset(&r, 0, sizeof(r));
	fr.envp = plain_env;
	r.fr = &fr;
	assert_false(resp_tls(&r));
	resp_cookie(&r, "sid", "7.abc", -1);
	assert_non_null(strstr(head(&r), "sid=7.abc; Path=/; HttpOnly; "
	    "SameSite=Lax\r\n"));
	assert_null(strstr(head(&r), "Secure"));
	assert_null(strstr(head(&r), "__Host-"));
	kv_parse_cookies(&r.cookies, "sid=7.abc; __Host-sid=other");
	assert_string_equal(req_cookie(&r, "sid"), "7.abc");
	kv_free(&r.cookies);
	buf_free(&r.head);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_secure_over_tls),
		cmocka_unit_test(test_plain_http),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
