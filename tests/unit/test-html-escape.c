/* test-html-escape.c -- html_text/html_textn/html_attr escape & < > " ' and NUL; html_url percent-encodes; html_int; html_linked links http(s) URLs only, escaped. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <string.h>

#include "web/html.h"

static void
test_text_escapes_all_five(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_text(&b, "&<>\"'");
	assert_string_equal(b.p, "&amp;&lt;&gt;&quot;&#39;");
	assert_int_equal(b.len, strlen(b.p));
	buf_reset(&b);
	html_text(&b, "Tom & Jerry's \"<b>show</b>\"");
	assert_string_equal(b.p,
	    "Tom &amp; Jerry&#39;s &quot;&lt;b&gt;show&lt;/b&gt;&quot;");
	buf_reset(&b);
	html_text(&b, "&amp;");	/* already an entity: escaped again */
	assert_string_equal(b.p, "&amp;amp;");
	buf_free(&b);
}

static void
test_text_plain_unchanged(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_text(&b, "hello, world \xc3\xa9 \xe2\x82\xac 100% / ok\n");
	assert_string_equal(b.p, "hello, world \xc3\xa9 \xe2\x82\xac 100% / ok\n");
	buf_reset(&b);
	html_text(&b, "");
	assert_int_equal(b.len, 0);
	html_text(&b, NULL);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

static void
test_textn_nul_becomes_fffd(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_textn(&b, "a\0b<\0", 5);
	assert_int_equal(b.len, strlen("a&#xFFFD;b&lt;&#xFFFD;"));
	assert_string_equal(b.p, "a&#xFFFD;b&lt;&#xFFFD;");
	assert_null(memchr(b.p, '\0', b.len));
	buf_reset(&b);
	/* only n bytes are read */
	html_textn(&b, "ab<cd", 2);
	assert_string_equal(b.p, "ab");
	buf_free(&b);
}

static void
test_attr_same_as_text(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_raw(&b, "<a title=\"");
	html_attr(&b, "x\" y='z' <&>");
	html_raw(&b, "\">");
	assert_string_equal(b.p,
	    "<a title=\"x&quot; y=&#39;z&#39; &lt;&amp;&gt;\">");
	buf_free(&b);
}

static void
test_appends(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_raw(&b, "<p>");
	html_text(&b, "a<b");
	html_raw(&b, "</p>");
	assert_string_equal(b.p, "<p>a&lt;b</p>");
	assert_int_equal(b.len, 13);
	buf_free(&b);
}

static void
test_int(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_int(&b, 0);
	html_raw(&b, " ");
	html_int(&b, -42);
	html_raw(&b, " ");
	html_int(&b, 9007199254740992LL);
	html_raw(&b, " ");
	html_int(&b, LLONG_MAX);
	html_raw(&b, " ");
	html_int(&b, LLONG_MIN);
	assert_string_equal(b.p, "0 -42 9007199254740992 "
	    "9223372036854775807 -9223372036854775808");
	buf_free(&b);
}

static void
test_url_percent_encoding(void **state)
{
	struct buf b = { NULL, 0, 0 };

	(void)state;
	html_url(&b, "/u/alice_01/posts-2.x~y");
	assert_string_equal(b.p, "/u/alice_01/posts-2.x~y");
	buf_reset(&b);
	html_url(&b, "a b?c=d&e#f+g%h");
	assert_string_equal(b.p, "a%20b%3Fc%3Dd%26e%23f%2Bg%25h");
	buf_reset(&b);
	html_url(&b, "\xc3\xa9\x01\x7f\xff");
	assert_string_equal(b.p, "%C3%A9%01%7F%FF");
	buf_reset(&b);
	html_url(&b, "\"'<>&");
	assert_string_equal(b.p, "%22%27%3C%3E%26");
	buf_reset(&b);
	html_url(&b, "");
	assert_int_equal(b.len, 0);
	html_url(&b, NULL);
	assert_int_equal(b.len, 0);
	buf_free(&b);
}

static void
test_url_output_alphabet(void **state)
{
	struct buf b = { NULL, 0, 0 };
	char in[2] = { 0, 0 };
	size_t i;
	int c;

	(void)state;
	for (c = 1; c < 256; c++) {
		buf_reset(&b);
		in[0] = (char)c;
		html_url(&b, in);
		assert_true(b.len == 1 || b.len == 3);
		for (i = 0; i < b.len; i++)
			assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "abcdefghijklmnopqrstuvwxyz0123456789-._~/%",
			    b.p[i]));
		if (b.len == 3)
			assert_int_equal(b.p[0], '%');
	}
	buf_free(&b);
}

/* One linked text and what it must become. */
static void
linked(const char *in, const char *want)
{
	struct buf b = { NULL, 0, 0 };

	html_linked(&b, in);
	assert_string_equal(b.p != NULL ? b.p : "", want);
	buf_free(&b);
}

#define A(u) "<a href=\"" u "\" rel=\"nofollow ugc noopener\">" u "</a>"

static void
test_linked_urls(void **state)
{
	(void)state;
	linked("see https://example.com/a?b=1&c=2 now",
	    "see " A("https://example.com/a?b=1&amp;c=2") " now");
	linked("http://x.org.", A("http://x.org") ".");
	linked("(see https://en.wikipedia.org/wiki/C_(language)) ok",
	    "(see " A("https://en.wikipedia.org/wiki/C_(language)") ") ok");
	linked("two: https://a.io, HTTPS://B.io!",
	    "two: " A("https://a.io") ", " A("HTTPS://B.io") "!");
	/* no other scheme, no URL inside a word, nothing without a host */
	linked("javascript:alert(1) x", "javascript:alert(1) x");
	linked("javascript://%0aalert(1)", "javascript://%0aalert(1)");
	linked("xhttps://a.io", "xhttps://a.io");
	linked("https:// and http://", "https:// and http://");
	/* quotes and brackets end it, and are escaped */
	linked("<https://a.io/\"onmouseover=x>",
	    "&lt;" A("https://a.io/") "&quot;onmouseover=x&gt;");
	linked("https://a.io/'x'", A("https://a.io/") "&#39;x&#39;");
	linked("", "");
	linked("plain & simple", "plain &amp; simple");
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_escapes_all_five),
		cmocka_unit_test(test_linked_urls),
		cmocka_unit_test(test_text_plain_unchanged),
		cmocka_unit_test(test_textn_nul_becomes_fffd),
		cmocka_unit_test(test_attr_same_as_text),
		cmocka_unit_test(test_appends),
		cmocka_unit_test(test_int),
		cmocka_unit_test(test_url_percent_encoding),
		cmocka_unit_test(test_url_output_alphabet),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
