/* run_user.h -- the unprivileged user a stack started as root runs as.
 *
 * Run as root, tally-run makes TALLY_USER (default "tally") when missing,
 * a system user (its own group, no home, no shell), gives it $RUN_DIR
 * (0700) and becomes it before anything else: nginx (its master too),
 * the handler pools, the worker, tally-live, Redis, PostgreSQL, the
 * hosts' supervisors and tally-run itself run as that user, and no
 * process of the stack keeps root.  Root kept by tally-run or nginx's
 * master opened files in $RUN_DIR, which that user owns, by name: a
 * link planted there by a compromised handler (logs/access.log ->
 * /etc/ld.so.preload) was followed by root at the next start.  Only a
 * PORT under 1024 keeps tally-run and nginx's master root (nginx binds
 * it), as before: the rest runs as the user (the hosts' supervisors
 * too).  When that user cannot reach the programs, www/ or the directory
 * above $RUN_DIR (a checkout under a home that others may not search),
 * nothing is widened and nothing starts: tally-run says why and how
 * (move the tree, or TALLY_USER=root, which keeps everything as root).
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
 * bin and share/www (tried by a child as it; when not, -1: the stack
 * does not start as root instead).  0, or -1 (logged). */
int	run_user_get(struct run_user *ru, const char *run_dir, const char *bin,
	    const char *share);
/* tally-run itself becomes the user (no group of root's kept), and ru
 * says "as we are" from then on: everything it starts, writes or reads
 * in $RUN_DIR after this runs as the user.  0 (ru->uid 0: nothing to
 * do), or -1 (logged). */
int	run_user_become(struct run_user *ru);
/* Gives the user to every service but nginx's master (it binds the port
 * and serves nothing), a host's supervisor too, when tally-run stays
 * root (a port under 1024 for nginx). */
void	run_user_apply(const struct run_user *ru, struct svc *svcs, size_t k);
/* dir and everything under it become ru's, by descriptor (base/treeown.h:
 * no link followed, also one swapped in while it runs).  0 or -1. */
int	run_user_own(const struct run_user *ru, const char *dir);

#endif
