/* test-html-bad-input.c -- hostile strings (script tags, attribute breakouts, javascript: URLs) come out inert. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "web/html.h"

static const char *const payloads[] = {
	"<script>alert(1)</script>",
	"<img src=x onerror=alert(1)>",
	"\"onerror=\"alert(1)",
	"\" onmouseover=\"alert(1)\" x=\"",
	"' onfocus='alert(1)' autofocus='",
	"\"><script>alert(document.cookie)</script>",
	"</textarea><svg/onload=alert(1)>",
	"<!--",
	"]]><![CDATA[",
	"&lt;script&gt;",
	"javascript:alert(1)",
	"<a href=\"javascript:alert(1)\">x</a>",
	"\x00<script>",
};

/* Escaped text has no markup characters, and every & starts an entity. */
static void
assert_inert_text(const char *out, size_t len)
{
	const char *p;

	assert_int_equal(strlen(out), len);
	assert_null(strpbrk(out, "<>\"'"));
	for (p = strchr(out, '&'); p != NULL; p = strchr(p + 1, '&'))
		assert_true(strncmp(p, "&amp;", 5) == 0 ||
		    strncmp(p, "&lt;", 4) == 0 ||
		    strncmp(p, "&gt;", 4) == 0 ||
		    strncmp(p, "&quot;", 6) == 0 ||
		    strncmp(p, "&#39;", 5) == 0 ||
		    strncmp(p, "&#xFFFD;", 8) == 0);
}

static void
test_payloads_in_text(void **state)
{
	struct buf b = { NULL, 0, 0 };
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		buf_reset(&b);
		html_text(&b, payloads[i]);
		assert_inert_text(b.len ? b.p : "", b.len);
	}
	buf_free(&b);
}

static void
test_exact_renderings(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_text(&b, "<script>alert(1)</script>");
	assert_string_equal(b.p, "&lt;script&gt;alert(1)&lt;/script&gt;");
	buf_reset(&b);
	html_raw(&b, "<img alt=\"");
	html_attr(&b, "\"onerror=alert(1)");
	html_raw(&b, "\">");
	assert_string_equal(b.p, "<img alt=\"&quot;onerror=alert(1)\">");
	buf_reset(&b);
	html_raw(&b, "<b title='");
	html_attr(&b, "' onclick='x");
	html_raw(&b, "'>");
	assert_string_equal(b.p, "<b title='&#39; onclick=&#39;x'>");
	buf_reset(&b);
	html_textn(&b, "\0<script>", 9);
	assert_string_equal(b.p, "&#xFFFD;&lt;script&gt;");
	buf_free(&b);
}

static void
test_every_byte_in_text(void **state)
{
	struct buf b = { NULL, 0, 0 };
	char s[256];
	int c;

	(void)state;
	for (c = 0; c < 256; c++)
		s[c] = (char)c;
	html_textn(&b, s, sizeof(s));
	assert_inert_text(b.p, b.len);
	buf_free(&b);
}

static void
test_javascript_url_inert(void **state)
{
	struct buf b = { NULL, 0, 0 };
	size_t i;

	(void)state;
	html_url(&b, "javascript:alert(1)");
	assert_string_equal(b.p, "javascript%3Aalert%281%29");
	buf_reset(&b);
	html_url(&b, " JavaScript:alert(document.cookie)");
	assert_string_equal(b.p, "%20JavaScript%3Aalert%28document.cookie%29");
	buf_reset(&b);
	html_url(&b, "data:text/html,<script>alert(1)</script>");
	assert_null(strchr(b.p, ':'));
	buf_reset(&b);
	html_url(&b, "\"><script>alert(1)</script>");
	assert_string_equal(b.p,
	    "%22%3E%3Cscript%3Ealert%281%29%3C/script%3E");
	/* no scheme survives and no markup either */
	for (i = 0; i < sizeof(payloads) / sizeof(payloads[0]); i++) {
		buf_reset(&b);
		html_url(&b, payloads[i]);
		if (b.len == 0)
			continue;
		assert_null(strpbrk(b.p, ":<>\"'& ()="));
	}
	buf_free(&b);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_payloads_in_text),
		cmocka_unit_test(test_exact_renderings),
		cmocka_unit_test(test_every_byte_in_text),
		cmocka_unit_test(test_javascript_url_inert),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
