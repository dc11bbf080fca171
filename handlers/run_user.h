/* run_user.h -- the unprivileged user a stack started as root runs as.
 *
 * Run as root, tally-run starts nothing that serves as root: nginx's
 * workers, the handler pools, the worker, tally-live, Redis and
 * PostgreSQL run as TALLY_USER (default "tally"), a system user made
 * with useradd when missing (its own group, no home, no shell);
 * $RUN_DIR becomes theirs, 0700.  The supervisors (tally-run itself, a
 * handler host's) and nginx's master stay root: they serve nothing.  When
 * that user cannot reach the programs, www/ or the directory above
 * $RUN_DIR (a checkout under a home that others may not search), nothing
 * is widened: the stack runs as root as before, and says so.
 * TALLY_USER=root keeps everything as root.
 */
#ifndef TALLY_RUN_USER_H
#define TALLY_RUN_USER_H

#include <stddef.h>
#include <sys/types.h>

#include "base/supervise.h"

struct run_user {
	uid_t	uid;		/* 0: as we are */
	gid_t	gid;
	char	name[64];
	char	group[64];
};

/* The user to run as (ru->uid 0 when not root, or TALLY_USER=root),
 * made when missing, and able to reach run_dir's parent, the programs in
 * bin and share/www (tried by a child as it; when not, 0 and said).
 * 0, or -1 (logged). */
int	run_user_get(struct run_user *ru, const char *run_dir, const char *bin,
	    const char *share);
/* Gives the user to every service that serves (not nginx's master, not a
 * host's supervisor: they stay root and serve nothing). */
void	run_user_apply(const struct run_user *ru, struct svc *svcs, size_t k);
/* dir and everything under it become ru's (no link followed).  0 or -1. */
int	run_user_own(const struct run_user *ru, const char *dir);

#endif
