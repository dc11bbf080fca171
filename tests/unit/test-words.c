/* test-words.c -- the words of a name as the people search indexes them
 * (base/words.h), and the range a prefix reads. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/words.h"

static void
test_words_split_and_fold(void **state)
{
	const char *s = "  Ada  LOVELACE King ";
	char w[WORD_MAX];

	(void)state;
	assert_int_equal(words_next(&s, w), 3);
	assert_string_equal(w, "ada");
	assert_int_equal(words_next(&s, w), 8);
	assert_string_equal(w, "lovelace");
	assert_int_equal(words_next(&s, w), 4);
	assert_string_equal(w, "king");
	assert_int_equal(words_next(&s, w), 0);
	assert_string_equal(w, "");
}

/* Every letter folds, not ASCII's alone: the contract's search is
 * case-insensitive, and "Émile" was not found by "émile". */
static void
test_words_every_letter_folds(void **state)
{
	const char *s = "Zo\xc3\x8b \xc3\x89MILE \xce\xa9\xce\x9c "
	    "\xef\xbc\xb4\xef\xbd\x81 \xe4\xb8\xad\xe6\x96\x87 "
	    "\xc8\xba";
	char w[WORD_MAX];

	(void)state;
	words_next(&s, w);
	assert_string_equal(w, "zo\xc3\xab");	/* zoë */
	words_next(&s, w);
	assert_string_equal(w, "\xc3\xa9mile");	/* émile */
	words_next(&s, w);
	assert_string_equal(w, "\xcf\x89\xce\xbc");	/* ωμ */
	words_next(&s, w);
	assert_string_equal(w, "\xef\xbd\x94\xef\xbd\x81");	/* ｔａ */
	words_next(&s, w);
	assert_string_equal(w, "\xe4\xb8\xad\xe6\x96\x87");	/* no case */
	/* U+023A's lower case is three bytes, U+2C65 */
	assert_int_equal(words_next(&s, w), 3);
	assert_string_equal(w, "\xe2\xb1\xa5");
}

/* Bytes that are not UTF-8 (a query is not checked) are kept as they
 * are, and what follows them folds. */
static void
test_words_bad_bytes_kept(void **state)
{
	const char *s = "A\xff\xc3" "B\xed\xa0\x80\xc3\x89";
	char w[WORD_MAX];

	(void)state;
	words_next(&s, w);
	assert_string_equal(w, "a\xff\xc3" "b\xed\xa0\x80\xc3\xa9");
}

/* A long name is cut between characters, never inside one. */
static void
test_words_cut_between_characters(void **state)
{
	char in[600], w[WORD_MAX];
	const char *s = in;
	size_t i, n;

	(void)state;
	for (i = 0; i + 2 < sizeof(in); i += 2)
		memcpy(in + i, "\xc3\x89", 2);	/* É, two bytes */
	in[i] = '\0';
	n = words_next(&s, w);
	assert_int_equal(n, WORD_MAX - 2);	/* 270: 135 whole characters */
	assert_memory_equal(w + n - 2, "\xc3\xa9", 2);
	memcpy(in, "x ", 2);
	n = words_fold(in, w);
	assert_true(n <= WORD_MAX - 1);
	assert_int_equal(((unsigned char)w[n - 1] & 0xc0), 0x80);
	assert_int_equal((unsigned char)w[n - 2], 0xc3);
}

static void
test_words_fold_whole(void **state)
{
	char w[WORD_MAX];

	(void)state;
	assert_int_equal(words_fold("  Ada   Lo ", w), 6);
	assert_string_equal(w, "ada lo");
	assert_int_equal(words_fold("   ", w), 0);
	assert_string_equal(w, "");
}

static void
test_words_long_is_bounded(void **state)
{
	char in[1000], w[WORD_MAX];
	const char *s = in;

	(void)state;
	memset(in, 'A', sizeof(in) - 1);
	in[sizeof(in) - 1] = '\0';
	assert_int_equal(words_next(&s, w), WORD_MAX - 1);
	assert_int_equal(strlen(w), WORD_MAX - 1);
	assert_int_equal(words_fold(in, w), WORD_MAX - 1);
}

/* The range of a prefix holds every word that starts with it and no
 * other: [p, p U+10FFFF), the bound itself valid UTF-8 (PostgreSQL
 * refuses anything else). */
static void
test_words_upper_bounds_the_prefix(void **state)
{
	char hi[WORD_MAX], big[WORD_MAX];

	(void)state;
	words_upper("al", hi);
	assert_string_equal(hi, "al\xf4\x8f\xbf\xbf");
	assert_true(strcmp("al", hi) < 0);
	assert_true(strcmp("alice", hi) < 0);
	assert_true(strcmp("al\xf4\x8f\xbf\xbe", hi) < 0);	/* U+10FFFE */
	assert_true(strcmp("al\xe4\xb8\xad", hi) < 0);	/* U+4E2D */
	assert_true(strcmp("am", hi) > 0);
	/* a prefix as long as a word: the bound still fits, NUL and all */
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	words_upper(big, hi);
	assert_int_equal(strlen(hi), WORD_MAX - 1);
	assert_memory_equal(hi + WORD_MAX - 5, "\xf4\x8f\xbf\xbf", 4);
	assert_true(strcmp("ak", "al") < 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_words_split_and_fold),
		cmocka_unit_test(test_words_every_letter_folds),
		cmocka_unit_test(test_words_bad_bytes_kept),
		cmocka_unit_test(test_words_cut_between_characters),
		cmocka_unit_test(test_words_fold_whole),
		cmocka_unit_test(test_words_long_is_bounded),
		cmocka_unit_test(test_words_upper_bounds_the_prefix),
	};

	cmocka_set_message_output(CM_OUTPUT_TAP);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
