/* shmfile.h -- a small file of the run directory that every process of
 * a host maps (MAP_SHARED): the tables they keep together (rhealth.h's
 * Redis backoffs, rowheld.h's held rows).
 */
#ifndef TALLY_SHMFILE_H
#define TALLY_SHMFILE_H

#include <stddef.h>

/* path mapped read-write, made if missing and grown to bytes (never
 * shrunk: another process may have it mapped longer); new bytes are
 * zero.  The mapping, or NULL (logged). */
void	*shmfile_map(const char *path, size_t bytes);

#endif
