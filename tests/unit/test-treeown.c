/* test-treeown.c -- a tree given to a user (base/treeown.h): everything
 * in it becomes the user's, nothing a link leads to outside does, also
 * when a directory is swapped for a link to the outside while the walk
 * runs.  Walked by path, the chown of each name after the swap went
 * through the link.  Needs root (a chown to another user); skipped
 * otherwise. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <sys/inotify.h>
#include <sys/stat.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/treeown.h"

#define NOBODY	65534
#define FILES	3000	/* the walk's names after the swap: many */

static char top[64], tree[96], out[96];	/* under /tmp: short */

static void
mkfile(const char *dir, const char *name)
{
	char p[512];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	assert_true((fd = open(p, O_CREAT | O_WRONLY, 0600)) != -1);
	close(fd);
}

static void
mkdirs(const char *p)
{
	assert_int_equal(mkdir(p, 0700), 0);
}

/* How many entries of dir (not itself) uid owns. */
static int
owned(const char *dir, uid_t uid)
{
	char p[512];
	struct stat st;
	int i, n = 0;

	for (i = 0; i < FILES; i++) {
		snprintf(p, sizeof(p), "%s/f%d", dir, i);
		if (lstat(p, &st) == 0 && st.st_uid == uid)
			n++;
	}
	return n;
}

static int
setup(void **state)
{
	(void)state;
	if (geteuid() != 0)
		return 0;
	snprintf(top, sizeof(top), "/tmp/tally-treeown.XXXXXX");
	assert_non_null(mkdtemp(top));
	snprintf(tree, sizeof(tree), "%s/run", top);
	snprintf(out, sizeof(out), "%s/outside", top);
	mkdirs(tree);
	mkdirs(out);
	return 0;
}

static int
teardown(void **state)
{
	char cmd[128];

	(void)state;
	if (geteuid() == 0) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
		assert_int_equal(system(cmd), 0);
	}
	return 0;
}

static void
test_links_not_followed(void **state)
{
	char p[256], q[256];
	struct stat st;

	(void)state;
	if (geteuid() != 0)
		skip();
	mkfile(tree, "log");
	snprintf(p, sizeof(p), "%s/sub", tree);
	mkdirs(p);
	mkfile(p, "deep");
	mkfile(out, "secret");
	/* links planted by the tree's user: to a file, to a directory */
	snprintf(p, sizeof(p), "%s/secret", out);
	snprintf(q, sizeof(q), "%s/access.log", tree);
	assert_int_equal(symlink(p, q), 0);
	snprintf(q, sizeof(q), "%s/etc", tree);
	assert_int_equal(symlink(out, q), 0);
	assert_int_equal(treeown_give(tree, NOBODY, NOBODY), 0);
	assert_int_equal(lstat(tree, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	snprintf(p, sizeof(p), "%s/sub/deep", tree);
	assert_int_equal(lstat(p, &st), 0);
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(lstat(q, &st), 0);		/* the link itself */
	assert_int_equal(st.st_uid, NOBODY);
	assert_int_equal(stat(out, &st), 0);		/* not where it leads */
	assert_int_equal(st.st_uid, 0);
	snprintf(p, sizeof(p), "%s/secret", out);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_uid, 0);
	/* a tree that is itself a link is refused */
	assert_int_equal(treeown_give(q, NOBODY, NOBODY), -1);
}

/* Waits for the walk's first chown in the tree's directory d, then
 * renames d away and puts a link to the outside in its place. */
static void *
swapper(void *arg)
{
	int fd = *(int *)arg;
	char buf[4096], d[256], away[256], to[256];

	(void)!read(fd, buf, sizeof(buf));	/* IN_ATTRIB: one is given */
	snprintf(d, sizeof(d), "%s/d", tree);
	snprintf(away, sizeof(away), "%s/d.away", tree);
	snprintf(to, sizeof(to), "%s/d", out);
	if (rename(d, away) == 0)
		(void)!symlink(to, d);
	return NULL;
}

static void
test_swap_while_walking(void **state)
{
	char d[256], o[256], name[32];
	pthread_t t;
	int fd, i;

	(void)state;
	if (geteuid() != 0)
		skip();
	snprintf(d, sizeof(d), "%s/d", tree);
	snprintf(o, sizeof(o), "%s/d", out);
	mkdirs(d);
	mkdirs(o);
	for (i = 0; i < FILES; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		mkfile(d, name);
		mkfile(o, name);	/* the same names outside */
	}
	assert_true((fd = inotify_init()) != -1);
	assert_true(inotify_add_watch(fd, d, IN_ATTRIB | IN_ONESHOT) != -1);
	assert_int_equal(pthread_create(&t, NULL, swapper, &fd), 0);
	assert_int_equal(treeown_give(tree, NOBODY, NOBODY), 0);
	pthread_join(t, NULL);
	close(fd);
	/* the walk went on in the directory it had open: all of it given,
	 * none of the outside */
	snprintf(d, sizeof(d), "%s/d.away", tree);
	assert_int_equal(owned(d, NOBODY), FILES);
	assert_int_equal(owned(o, NOBODY), 0);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_links_not_followed, setup,
		    teardown),
		cmocka_unit_test_setup_teardown(test_swap_while_walking, setup,
		    teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
