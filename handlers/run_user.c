/* run_user.c -- the unprivileged user of a stack started as root; see
 * run_user.h. */
#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/treeown.h"
#include "run_user.h"

/* Runs argv, waits: its exit status, or -1. */
static int
run(const char *const *argv)
{
	pid_t pid;
	int st;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int user(struct run_user *);
static int reaches(const struct run_user *, const char *, const char *,
    const char *);

int
run_user_get(struct run_user *ru, const char *run_dir, const char *bin,
    const char *share)
{
	char prog[PATH_MAX + 32], www[PATH_MAX + 8];

	if (user(ru) == -1)
		return -1;
	snprintf(prog, sizeof(prog), "%s/tally-web", bin);
	snprintf(www, sizeof(www), "%s/www", share);
	/* Not run as root instead: none of the stack serves as root
	 * unless TALLY_USER=root says so (the contract's promise). */
	if (!reaches(ru, run_dir, prog, www)) {
		log_err("user %s cannot reach %s, the programs or www/ (a "
		    "directory above them is closed to others, as /root is): "
		    "move the checkout or RUN_DIR under a directory others may "
		    "search (/srv, /opt, /tmp), or set TALLY_USER=root to run "
		    "everything as root", ru->name, run_dir);
		return -1;
	}
	return 0;
}

int
run_user_become(struct run_user *ru)
{
	if (ru->uid == 0)
		return 0;
	if (setgroups(0, NULL) == -1 || setgid(ru->gid) == -1 ||
	    setuid(ru->uid) == -1) {
		log_err("run as %s: %s", ru->name, strerror(errno));
		return -1;
	}
	if (setuid(0) == 0) {	/* never: but then nothing goes on */
		log_err("run as %s: root could be taken back", ru->name);
		return -1;
	}
	log_info("running as %s (uid %u)", ru->name, (unsigned)ru->uid);
	/* what follows runs as we now are */
	memset(ru, 0, sizeof(*ru));
	return 0;
}

void
run_user_apply(const struct run_user *ru, struct svc *svcs, size_t k)
{
	size_t i;

	for (i = 0; i < k && ru->uid != 0; i++) {
		/* nginx's master binds the PORT and drops its workers; a
		 * host's supervisor runs as the user, as the site's would */
		if (strcmp(svcs[i].name, "nginx") == 0 || svcs[i].uid != 0)
			continue;
		svcs[i].uid = ru->uid;
		svcs[i].gid = ru->gid;
	}
}

/* The user (ru->uid 0: none), made when missing.  0 or -1. */
static int
user(struct run_user *ru)
{
	const char *name = getenv("TALLY_USER");
	struct passwd *pw;
	struct group *gr;

	memset(ru, 0, sizeof(*ru));
	if (geteuid() != 0)
		return 0;
	if (name == NULL || *name == '\0')
		name = "tally";
	if (strcmp(name, "root") == 0)
		return 0;
	if ((pw = getpwnam(name)) == NULL) {
		const char *add[] = { "/usr/sbin/useradd", "--system",
		    "--user-group", "--no-create-home", "--home-dir",
		    "/nonexistent", "--shell", "/usr/sbin/nologin", name, NULL };

		if (run(add) != 0 || (pw = getpwnam(name)) == NULL) {
			log_err("could not make the system user %s (useradd)",
			    name);
			return -1;
		}
		log_info("made the system user %s: the stack runs as it", name);
	}
	ru->uid = pw->pw_uid;
	ru->gid = pw->pw_gid;
	snprintf(ru->name, sizeof(ru->name), "%s", pw->pw_name);
	gr = getgrgid(pw->pw_gid);
	snprintf(ru->group, sizeof(ru->group), "%s", gr != NULL ?
	    gr->gr_name : pw->pw_name);
	return 0;
}

/* Whether ru reaches dir's parent (search), runs prog and reads www:
 * tried by a child as ru.  1 or 0. */
static int
reaches(const struct run_user *ru, const char *dir, const char *prog,
    const char *www)
{
	char parent[PATH_MAX];
	pid_t pid;
	int st;

	if (ru->uid == 0)
		return 1;
	snprintf(parent, sizeof(parent), "%s", dir);
	if ((pid = fork()) == -1)
		return 0;
	if (pid == 0) {
		if (setgroups(0, NULL) == -1 || setgid(ru->gid) == -1 ||
		    setuid(ru->uid) == -1)
			_exit(2);
		_exit(access(dirname(parent), X_OK) == 0 &&
		    access(prog, X_OK) == 0 && access(www, R_OK | X_OK) == 0 ?
		    0 : 1);
	}
	if (waitpid(pid, &st, 0) == -1)
		return 0;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

int
run_user_own(const struct run_user *ru, const char *dir)
{
	return ru->uid == 0 ? 0 : treeown_give(dir, ru->uid, ru->gid);
}
