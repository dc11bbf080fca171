/* fault.c -- test fault points; see fault.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fault.h"
#include "base/log.h"

/* The process's TALLY_FAULT and where firings are counted; set once at
 * start, read-only after (one process, one configuration). */
static const char *fault_spec;
static char fault_dir[PATH_MAX];
static char fault_run_dir[PATH_MAX];

void
fault_init(const struct cfg *c)
{
	fault_spec = getenv("TALLY_FAULT");
	if (fault_spec != NULL && fault_spec[0] == '\0')
		fault_spec = NULL;
	if (fault_spec != NULL &&
	    cfg_path(c, "faults", fault_dir, sizeof(fault_dir)) == -1)
		fault_spec = NULL;
	snprintf(fault_run_dir, sizeof(fault_run_dir), "%s", c->run_dir);
}

/* Run as root (tallyctl in a test) beside a stack that runs as its own
 * user (handlers/run_user.h), what this makes becomes RUN_DIR's owner's:
 * the stack's processes append to the same files. */
static void
own(const char *path)
{
	struct stat st;

	if (geteuid() == 0 && stat(fault_run_dir, &st) == 0 && st.st_uid != 0 &&
	    chown(path, st.st_uid, st.st_gid) == -1)
		log_warn("fault %s: chown: %s", path, strerror(errno));
}

/* The entry of spec for name: its action into act (NUL-terminated) and
 * its TIMES; 0, or -1 when name is not aimed at. */
static int
find(const char *name, char *act, size_t asz, long *times)
{
	const char *p = fault_spec, *end, *c1, *c2;
	size_t nl = strlen(name), al;

	for (; p != NULL && *p != '\0'; p = *end ? end + 1 : end) {
		if ((end = strchr(p, ',')) == NULL)
			end = p + strlen(p);
		if ((c1 = memchr(p, ':', (size_t)(end - p))) == NULL ||
		    (size_t)(c1 - p) != nl || memcmp(p, name, nl) != 0)
			continue;
		c2 = memchr(c1 + 1, ':', (size_t)(end - c1 - 1));
		al = (size_t)((c2 ? c2 : end) - c1 - 1);
		if (al >= asz)
			return -1;
		memcpy(act, c1 + 1, al);
		act[al] = '\0';
		*times = c2 ? strtol(c2 + 1, NULL, 10) : 1;
		return 0;
	}
	return -1;
}

/* Notes one more firing of name; 1 when it may fire (fewer than times
 * before), 0 when its times are used up, -1 on error. */
static int
count_one(const char *name, long times)
{
	char path[PATH_MAX + 64];
	struct stat st;
	int fd, ok;

	if (mkdir(fault_dir, 0700) == 0)
		own(fault_dir);
	else if (errno != EEXIST)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", fault_dir, name);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0600)) == -1)
		return -1;
	own(path);
	/* O_APPEND: concurrent processes each add their own byte; the size
	 * after our write says how many fired before us. */
	ok = fstat(fd, &st) == 0 && st.st_size < times &&
	    write(fd, "x", 1) == 1 && fstat(fd, &st) == 0 &&
	    st.st_size <= times;
	close(fd);
	return ok;
}

int
fault_aimed(const char *name)
{
	char act[32];
	long times;

	return fault_spec != NULL && find(name, act, sizeof(act), &times) == 0;
}

void
fault_point(const char *name)
{
	char act[32];
	long times, ms;

	if (fault_spec == NULL || find(name, act, sizeof(act), &times) == -1 ||
	    count_one(name, times) != 1)
		return;
	log_warn("fault point %s: %s", name, act);
	if (strcmp(act, "kill") == 0)
		raise(SIGKILL);
	else if (strcmp(act, "stop") == 0)
		raise(SIGSTOP);
	else if (strncmp(act, "sleep=", 6) == 0 &&
	    (ms = strtol(act + 6, NULL, 10)) > 0 && ms <= 600000)
		usleep((useconds_t)(ms * 1000));
}
