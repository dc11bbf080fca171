/* shmfile.c -- a host's shared tables' file; see shmfile.h. */
#include <sys/mman.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "base/shmfile.h"

void *
shmfile_map(const char *path, size_t bytes)
{
	struct stat st;
	void *p;
	int fd;

	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0660)) == -1) {
		log_warn("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) == -1 || (st.st_size < (off_t)bytes &&
	    ftruncate(fd, (off_t)bytes) == -1)) {
		log_warn("%s: %s", path, strerror(errno));
		close(fd);
		return NULL;
	}
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		log_warn("%s: mmap: %s", path, strerror(errno));
		return NULL;
	}
	return p;
}
