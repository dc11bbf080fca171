/* hashgate.c -- password hashes a few at a time; see hashgate.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/hashgate.h"
#include "base/log.h"

static int
slots(void)
{
	const char *v = getenv("TALLY_HASH_SLOTS");
	long n = 0;
	char *end;

	if (v != NULL && *v != '\0') {
		errno = 0;
		n = strtol(v, &end, 10);
		if (errno != 0 || *end != '\0')
			n = 0;
	}
	return n >= 1 && n <= 64 ? (int)n : 1;
}

/* The slot named name, taken: its descriptor, -1 (taken already), or -2
 * (its file cannot be opened). */
static int
take(const struct cfg *c, const char *name)
{
	char path[4200];
	int fd;

	if (cfg_path(c, name, path, sizeof(path)) == -1)
		return -2;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) == -1) {
		log_warn("hash slot %s: %s", path, strerror(errno));
		return -2;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	close(fd);
	return -1;
}

int
hashgate_enter(const struct cfg *c)
{
	char name[32];
	int i, fd, n = slots();

	for (i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "hash-slot.%d", i);
		if ((fd = take(c, name)) != -1)
			return fd;
	}
	return -1;
}

int
hashgate_enter_owner(const struct cfg *c)
{
	return take(c, "hash-slot.owner");
}

void
hashgate_leave(int fd)
{
	if (fd >= 0)
		close(fd);	/* drops the lock */
}
