/* run_pg.c -- tally-run's PostgreSQL server (DB=postgres); see run_pg.h.
 *
 * The cluster lives in $RUN_DIR/pg/data, made once by initdb (trust
 * authentication, the role "tally", UTF-8 with the C locale), and the
 * server listens on no TCP port: only on its unix socket in $RUN_DIR/pg.
 * initdb and postgres refuse to run as root, so when tally-run is root
 * they run as the stack's own user (run_user.h), whose $RUN_DIR is;
 * nothing above it is opened to anyone.  The programs log in as
 * tally_app, the owner of their database and no superuser; "tally",
 * initdb's superuser, is for upkeep (making the database).  The socket directory
 * is the server's own (0700): only it and root reach the socket, which
 * is what trust authentication relies on.
 */
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "run_os.h"
#include "run_pg.h"
#include "store/pg.h"

#define PG_DBNAME	"tally"
#define PG_ROLE		"tally"		/* initdb's superuser: upkeep */
#define PG_APP_ROLE	"tally_app"	/* what the programs log in as */

static char bindir[4096];
static char pgdir[4096 + 8], datadir[4096 + 16], url[8192];
static char a_post[4096 + 16];
static const char *argv_pg[16];

int
run_pg_wanted(void)
{
	const char *v = getenv("DB");

	return v != NULL && strcmp(v, "postgres") == 0;
}

/* The directory of initdb and postgres: TALLY_PG_BIN, PATH, then the
 * newest /usr/lib/postgresql/N/bin. */
static int
find_bindir(void)
{
	const char *env = getenv("TALLY_PG_BIN");
	char *w;
	glob_t g;

	if (env != NULL && *env != '\0') {
		pathf(bindir, sizeof(bindir), "%s", env);
		return 0;
	}
	if ((w = which("initdb")) != NULL) {
		pathf(bindir, sizeof(bindir), "%s", w);
		*strrchr(bindir, '/') = '\0';
		free(w);
		return 0;
	}
	if (glob("/usr/lib/postgresql/*/bin/initdb", 0, NULL, &g) != 0 ||
	    g.gl_pathc == 0) {
		log_err("PostgreSQL not found (apt-get install postgresql, "
		    "or set TALLY_PG_BIN)");
		return -1;
	}
	pathf(bindir, sizeof(bindir), "%s", g.gl_pathv[g.gl_pathc - 1]);
	*strrchr(bindir, '/') = '\0';
	globfree(&g);
	return 0;
}

/* Runs argv as uid:gid (0: as we are), output to log; its exit status
 * (0 ok). */
static int
run_as(const char *const *argv, uid_t uid, gid_t gid, const char *log)
{
	pid_t pid;
	int st, fd;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		/* the user first, no group of root's kept; then its log,
		 * opened as it (a link in RUN_DIR is never root's to follow) */
		if (uid != 0 && (setgroups(0, NULL) == -1 ||
		    setgid(gid) == -1 || setuid(uid) == -1))
			_exit(126);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600)) != -1) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	if (waitpid(pid, &st, 0) == -1)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* url = postgresql:///tally?host=<dir>&user=<role>, the directory
 * percent-encoded where it needs it. */
static void
make_url(const char *dir, const char *role)
{
	size_t n;
	const char *p;

	n = (size_t)snprintf(url, sizeof(url), "postgresql:///%s?host=",
	    PG_DBNAME);
	for (p = dir; *p != '\0' && n + 4 < sizeof(url); p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-", *p) != NULL)
			url[n++] = *p;
		else
			n += (size_t)snprintf(url + n, sizeof(url) - n, "%%%02X",
			    (unsigned char)*p);
	}
	snprintf(url + n, sizeof(url) - n, "&user=%s", role);
}

/* Waits until the server takes connections, then makes the database. */
static int
wait_ready(const char *maint, int *owned)
{
	char sock[sizeof(pgdir) + 32];
	struct stat st;
	int i;

	pathf(sock, sizeof(sock), "%s/.s.PGSQL.5432", pgdir);
	for (i = 0; i < 300 && stat(sock, &st) == -1; i++)
		usleep(100 * 1000);
	for (i = 0; i < 50; i++) {
		if (stat(sock, &st) == 0 &&
		    pg_create_database(maint, PG_DBNAME, PG_APP_ROLE,
		    owned) == 0)
			return 0;
		usleep(200 * 1000);
	}
	log_err("PostgreSQL did not come up (see logs/postgres.log)");
	return -1;
}

/* The stack's own user (run_user.h), when tally-run is root and has one. */
static uid_t pg_uid;
static gid_t pg_gid;

void
run_pg_user(uid_t uid, gid_t gid)
{
	pg_uid = uid;
	pg_gid = gid;
}

int
run_pg_start(struct svc *s, struct cfg *c)
{
	const char *initdb[12];
	char prog[sizeof(bindir) + 16], log[4096 + 32], maint[8192 + 64];
	char file[4096 + 32], vers[sizeof(datadir) + 16];
	struct passwd *pw = NULL;
	struct stat st;
	FILE *f;
	int i = 0, owned = 0;

	if (find_bindir() == -1)
		return -1;
	pathf(pgdir, sizeof(pgdir), "%s/pg", c->run_dir);
	pathf(datadir, sizeof(datadir), "%s/data", pgdir);
	if (mkdir(pgdir, 0700) == -1 && errno != EEXIST) {
		log_err("%s: %s", pgdir, strerror(errno));
		return -1;
	}
	if (geteuid() == 0 && pg_uid != 0) {
		/* as the stack's user, who owns RUN_DIR: nothing widened */
		static struct passwd mine;

		mine.pw_uid = pg_uid;
		mine.pw_gid = pg_gid;
		pw = &mine;
		if (chown(pgdir, pw->pw_uid, pw->pw_gid) == -1) {
			log_err("%s: %s", pgdir, strerror(errno));
			return -1;
		}
	} else if (geteuid() == 0) {
		/* initdb and postgres refuse root, and no directory above
		 * RUN_DIR is opened to another user for them */
		log_err("DB=postgres as root needs the stack's own user "
		    "(TALLY_USER, not root) to reach RUN_DIR (run_user.h)");
		return -1;
	}
	pathf(log, sizeof(log), "%s/logs/postgres.log", c->run_dir);
	pathf(vers, sizeof(vers), "%s/PG_VERSION", datadir);
	if (stat(vers, &st) == -1) {
		pathf(prog, sizeof(prog), "%s/initdb", bindir);
		initdb[i++] = prog;
		initdb[i++] = "-D";
		initdb[i++] = datadir;
		initdb[i++] = "-A";
		initdb[i++] = "trust";
		initdb[i++] = "-U";
		initdb[i++] = PG_ROLE;
		initdb[i++] = "-E";
		initdb[i++] = "UTF8";
		initdb[i++] = "--locale=C";
		initdb[i] = NULL;
		if (run_as(initdb, pw ? pw->pw_uid : 0, pw ? pw->pw_gid : 0,
		    log) != 0) {
			log_err("initdb failed (see %s)", log);
			return -1;
		}
	}
	pathf(a_post, sizeof(a_post), "%s/postgres", bindir);
	i = 0;
	argv_pg[i++] = a_post;
	argv_pg[i++] = "-D";
	argv_pg[i++] = datadir;
	argv_pg[i++] = "-k";
	argv_pg[i++] = pgdir;
	argv_pg[i++] = "-c";
	argv_pg[i++] = "listen_addresses=";
	argv_pg[i++] = "-c";
	argv_pg[i++] = "max_connections=200";
	argv_pg[i] = NULL;
	s->name = "postgres";
	s->argv = argv_pg;
	s->stop_group = 2;		/* after every program that uses it */
	s->stop_signal = SIGINT;	/* fast shutdown: sessions end */
	s->uid = pw ? pw->pw_uid : 0;
	s->gid = pw ? pw->pw_gid : 0;
	pathf(s->log, sizeof(s->log), "%s", log);
	if (supervise_start(s) == -1)
		return -1;
	pathf(maint, sizeof(maint), "host='%s' user=%s dbname=postgres", pgdir,
	    PG_ROLE);
	if (wait_ready(maint, &owned) == -1)
		return -1;
	/* the programs log in as a role that is no superuser; a database
	 * made before that role existed stays its maker's (said once) */
	if (!owned)
		log_warn("DB=postgres: the database of %s predates the role %s: "
		    "the programs log in as %s, a superuser", pgdir, PG_APP_ROLE,
		    PG_ROLE);
	make_url(pgdir, owned ? PG_APP_ROLE : PG_ROLE);
	pathf(file, sizeof(file), "%s/" CFG_DB_URL_FILE, c->run_dir);
	if ((f = fopen(file, "w")) == NULL) {
		log_err("%s: %s", file, strerror(errno));
		return -1;
	}
	fprintf(f, "%s\n", url);
	fclose(f);
	/* every program started from here on, and this one */
	setenv("TALLY_DB", url, 1);
	pathf(c->db_path, sizeof(c->db_path), "%s", url);
	return 0;
}

void
run_pg_none(const struct cfg *c)
{
	char file[4096 + 32];

	pathf(file, sizeof(file), "%s/" CFG_DB_URL_FILE, c->run_dir);
	unlink(file);
}
