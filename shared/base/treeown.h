/* treeown.h -- a directory tree given to a user, by descriptor.
 *
 * tally-run, started as root, gives $RUN_DIR to the stack's user before
 * it becomes that user (handlers/run_user.h).  The tree is that user's
 * from an earlier run: anything in it may be a link the user planted,
 * or be swapped for one while the walk runs.  Walked by path (nftw(),
 * lchown()), a directory renamed away and replaced by a link to /etc
 * after its entries were listed sent the chown of each name after it
 * through the link: root gave the user files outside the tree.  Here
 * every name is looked up in a directory the walk holds open, no link is
 * followed (a link itself is given, as lchown() does), and a directory
 * is entered only by openat() with O_NOFOLLOW.
 */
#ifndef TALLY_TREEOWN_H
#define TALLY_TREEOWN_H

#include <sys/types.h>

/* dir (not a link) and everything under it become uid:gid; what goes
 * away meanwhile is skipped.  0, or -1 (logged). */
int	treeown_give(const char *dir, uid_t uid, gid_t gid);

#endif
