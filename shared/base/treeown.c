/* treeown.c -- a directory tree given to a user, by descriptor; see
 * treeown.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/log.h"
#include "base/treeown.h"

#define TREEOWN_DEPTH	32	/* deeper than any run directory */

/* A name gone, or become something the walk does not enter, since it
 * was listed: skipped. */
static int
moved(int e)
{
	return e == ENOENT || e == ELOOP || e == ENOTDIR;
}

/* The directory open as dfd and what is under it: its entries by name in
 * it, each subdirectory through a descriptor of its own.  0 or -1. */
static int
give_at(int dfd, const char *path, uid_t uid, gid_t gid, int depth)
{
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd, rc = 0;

	if (fchown(dfd, uid, gid) == -1) {
		log_err("%s: %s", path, strerror(errno));
		return -1;
	}
	if (depth >= TREEOWN_DEPTH) {
		log_err("%s: deeper than %d directories", path, TREEOWN_DEPTH);
		return -1;
	}
	/* its own descriptor: closedir() closes it, dfd stays the caller's */
	if ((fd = dup(dfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		log_err("%s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	while (rc == 0 && (errno = 0, e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
			if (!moved(errno))
				rc = -1;
		} else if (!S_ISDIR(st.st_mode)) {
			if (fchownat(dfd, e->d_name, uid, gid,
			    AT_SYMLINK_NOFOLLOW) == -1 && !moved(errno))
				rc = -1;
		} else if ((fd = openat(dfd, e->d_name, O_RDONLY |
		    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
			if (!moved(errno))
				rc = -1;
		} else {
			rc = give_at(fd, e->d_name, uid, gid, depth + 1);
			close(fd);
			continue;	/* said there */
		}
		if (rc == -1)
			log_err("%s/%s: %s", path, e->d_name, strerror(errno));
	}
	if (rc == 0 && errno != 0) {
		log_err("%s: %s", path, strerror(errno));
		rc = -1;
	}
	closedir(d);
	return rc;
}

int
treeown_give(const char *dir, uid_t uid, gid_t gid)
{
	int fd, rc;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		log_err("%s: %s", dir, strerror(errno));
		return -1;
	}
	rc = give_at(fd, dir, uid, gid, 0);
	close(fd);
	return rc;
}
