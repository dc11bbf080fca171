/* tallyctl.c -- the operator's command line.
 *
 *   tallyctl useradd [--admin] LOGIN NAME [PASSWORD]
 *       the password from standard input (a prompt without echo on a
 *       terminal); on the command line it would show in ps(1): that old
 *       form still works, for scripts that use it
 *   tallyctl passwd LOGIN
 *       a new password (from standard input, as above); ends the
 *       account's sessions
 *   tallyctl seed [--users N] [--posts N] [--follows N] [--likes N]
 *                 [--comments N] [--reposts N] [--seed N] [--demo]
 *   tallyctl flush
 *       move every pending counter delta from Redis into SQLite now
 *   tallyctl reconcile [--dry-run]
 *       recount every counter from the truth rows, report the drift and
 *       (unless --dry-run) repair SQLite's counters and Redis; one run at
 *       a time, shared with the admin page; prints a progress line (the
 *       worker's, when it took the run first; a run whose owner stalled
 *       past its lease is taken over and finished here)
 *   tallyctl warm [--followers-of LOGIN] [LOGIN...]
 *       rebuild home timelines in Redis now (after a Redis loss, before
 *       traffic), for the named users and/or all followers of one
 *
 *   tallyctl help
 *       this usage, on standard output
 *
 * Finds the database and Redis through RUN_DIR (default ./run), like the
 * handlers, and only a site's: but for seed, a RUN_DIR (or TALLY_DB)
 * where no database is is refused, not made (a mistyped RUN_DIR made a
 * new empty site there, and useradd added the user to it).  Exit status
 * 0 on success; otherwise 1 (or 2 for usage) with a one-line reason on
 * stderr; a command or option it does not know is refused before
 * anything is opened.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/valid.h"
#include "count/backlog.h"
#include "count/flush.h"
#include "count/runs.h"
#include "social/account.h"
#include "social/live.h"
#include "social/pcache.h"
#include "social/seed.h"
#include "social/timeline.h"
#include "store/app.h"
#include "tallyctl_args.h"

/* The password of useradd or passwd: argument pw, or standard input. */
static const char *
password(const char *pw, char *buf, size_t sz)
{
	if (pw != NULL)		/* the old form: it shows in ps(1) */
		return pw;
	if (tallyctl_read_password(buf, sz) == -1) {
		fprintf(stderr, "tallyctl: no password on standard input\n");
		return NULL;
	}
	if (valid_check(VALID_PASSWORD, buf, strlen(buf), NULL) == -1) {
		fprintf(stderr, "tallyctl: bad password (8-128 bytes)\n");
		return NULL;
	}
	return buf;
}

static int
cmd_passwd(struct app *a, int argc, char **argv)
{
	char *login = NULL, buf[256];
	const char *pw;
	long long id;

	if (argc != 2)
		return tallyctl_usage("passwd takes one LOGIN");
	if (valid_check(VALID_LOGIN, argv[1], strlen(argv[1]), &login) == -1) {
		fprintf(stderr, "tallyctl: bad login (3-32 of a-z 0-9 _)\n");
		return 1;
	}
	if ((pw = password(NULL, buf, sizeof(buf))) == NULL) {
		free(login);
		return 1;
	}
	id = account_set_password(a, login, pw, strlen(pw), a->cfg.pwhash_min);
	explicit_bzero(buf, sizeof(buf));
	if (id <= 0) {
		fprintf(stderr, "tallyctl: %s\n", id == 0 ? "no such login" :
		    "database error");
		free(login);
		return 1;
	}
	live_close(a, id);	/* and their live badges (live.h) */
	printf("new password for %s; its sessions ended\n", login);
	free(login);
	return 0;
}

static int
cmd_useradd(struct app *a, int argc, char **argv)
{
	char *login = NULL, buf[256];
	const char *pw;
	int admin = 0, i = 1;
	long long id;

	if (argc > 1 && strcmp(argv[1], "--admin") == 0) {
		admin = 1;
		i++;
	}
	if (argc - i != 3 && argc - i != 2)
		return tallyctl_usage("useradd takes [--admin] LOGIN NAME [PASSWORD]");
	if (valid_check(VALID_LOGIN, argv[i], strlen(argv[i]), &login) == -1) {
		fprintf(stderr, "tallyctl: bad login (3-32 of a-z 0-9 _)\n");
		return 1;
	}
	if (valid_check(VALID_NAME, argv[i + 1], strlen(argv[i + 1]), NULL)
	    == -1) {
		fprintf(stderr, "tallyctl: bad name (1-64 characters)\n");
		free(login);
		return 1;
	}
	if ((pw = password(argc - i == 3 ? argv[i + 2] : NULL, buf,
	    sizeof(buf))) == NULL) {
		free(login);
		return 1;
	}
	if (valid_check(VALID_PASSWORD, pw, strlen(pw), NULL) == -1) {
		fprintf(stderr, "tallyctl: bad password (8-128 bytes)\n");
		free(login);
		return 1;
	}
	id = account_create(a->db, login, argv[i + 1], pw, strlen(pw), admin,
	    a->cfg.pwhash_min);
	explicit_bzero(buf, sizeof(buf));
	if (id <= 0) {
		fprintf(stderr, "tallyctl: %s\n", id == 0 ?
		    "that login is taken" : "database error");
		free(login);
		return 1;
	}
	pcache_invalidate(a, login);
	printf("created user %s (id %lld)%s\n", login, id,
	    admin ? " as admin" : "");
	free(login);
	return 0;
}

static int
cmd_seed(struct app *a, int argc, char **argv)
{
	struct seed_opts o = { .users = 1000, .posts = 5000, .follows = 10000,
	    .likes = 20000, .comments = 5000, .reposts = -1 };
	long long v;
	int i;

	for (i = 1; i < argc; i++) {
		long *dst = NULL;

		if (strcmp(argv[i], "--demo") == 0) {
			o.demo = 1;
			continue;
		}
		if (strcmp(argv[i], "--users") == 0)
			dst = &o.users;
		else if (strcmp(argv[i], "--posts") == 0)
			dst = &o.posts;
		else if (strcmp(argv[i], "--follows") == 0)
			dst = &o.follows;
		else if (strcmp(argv[i], "--likes") == 0)
			dst = &o.likes;
		else if (strcmp(argv[i], "--comments") == 0)
			dst = &o.comments;
		else if (strcmp(argv[i], "--reposts") == 0)
			dst = &o.reposts;
		else if (strcmp(argv[i], "--seed") != 0)
			return tallyctl_usage("seed: unknown option %s", argv[i]);
		if (i + 1 >= argc || valid_int(argv[i + 1], 0, 100000000, &v) == -1) {
			fprintf(stderr, "tallyctl: %s needs a number\n", argv[i]);
			return 2;
		}
		if (dst != NULL)
			*dst = (long)v;
		else
			o.rng = (unsigned)v;
		i++;
	}
	if (o.reposts < 0)
		o.reposts = o.likes / 10;
	if (seed_run(a, &o) == -1) {
		fprintf(stderr, "tallyctl: seeding failed (see the log above)\n");
		return 1;
	}
	return 0;
}

/* Deltas Redis did not take wait in SQLite's backlog (count/backlog.h),
 * which the worker's jobs settle every 2 s: settled here first, so that
 * every delta pending when flush ran is in the counters when it returns.
 * 0 none waits, 1 some still do after FLUSH_WAIT_MS (Redis refuses them,
 * or another settler held them that long), -1 on a SQLite error. */
static int
settle_backlog(struct app *a)
{
	long long until = clock_mono_ms() + FLUSH_WAIT_MS;
	int n, w;

	for (;;) {
		while ((n = backlog_settle(a)) > 0 && clock_mono_ms() < until)
			;
		if (n == -1)
			return -1;
		if ((w = backlog_waits(a)) != 1 || clock_mono_ms() >= until)
			return w;
		usleep(200 * 1000);
	}
}

static int
cmd_flush(struct app *a, int argc, char **argv)
{
	struct flush_stats st;
	int rc, held;

	(void)argc;
	(void)argv;
	memset(&st, 0, sizeof(st));
	/* One flush and out: what a batch frees is kept for the next (from
	 * the heap, not given back), not asked of the kernel again, a page
	 * fault a page.  A sort of 65,000 counters took 3.7 ms so, 6.2
	 * without (the fastest of 25). */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	/* No checkpoint after each commit past 1,000 pages (SQLite's
	 * automatic one): each batch touches pages all over the counters
	 * table (its buckets are hashes), so each copy wrote most of the
	 * table again.  The WAL is copied once, by the worker's checkpoint
	 * (docs/BENCHMARKS.md, "One checkpoint a flush"). */
	db_autocheckpoint_off(a->db);
	if ((held = settle_backlog(a)) == -1) {
		fprintf(stderr, "tallyctl: flush failed (SQLite down?)\n");
		return 1;
	}
	/* Longer than a flusher's lock lives: a flusher stopped mid-batch
	 * is outwaited, then its batch finished here. */
	if ((rc = flush_now(a, FLUSH_WAIT_MS, &st)) == -1) {
		fprintf(stderr, "tallyctl: flush failed (Redis or SQLite down?)\n");
		return 1;
	}
	/* Its commits on disk; their copy into the database is the
	 * worker's checkpoint's (db.h). */
	if (db_leave_wal(a->db) == -1) {
		/* the batches are committed, not known to be on disk */
		fprintf(stderr, "tallyctl: flushed, but cannot sync the WAL\n");
		return 1;
	}
	printf("flushed %lld buckets in %lld batches: %lld counter rows, "
	    "%lld in deltas; SQLite's part %lld us of CPU\n", st.buckets,
	    st.batches, st.counters, st.total, st.apply_us);
	if (rc == 1 && st.skipped > 0)
		fprintf(stderr, "tallyctl: %lld buckets still held by another "
		    "flusher after %d s\n", st.skipped, FLUSH_WAIT_MS / 1000);
	if (rc == 1 && st.outbox_waits)
		fprintf(stderr, "tallyctl: outbox rows still wait after %d s "
		    "for a write transaction that may precede them (a writer "
		    "stopped or waiting on a lock); the worker applies them "
		    "once it ends\n", FLUSH_WAIT_MS / 1000);
	if (rc == 1 && st.stale)
		fprintf(stderr, "tallyctl: Redis lost its data while this "
		    "flush ran (its epoch moved on); a repair run follows, "
		    "then flush again\n");
	if (held == 1)
		fprintf(stderr, "tallyctl: deltas still wait in the backlog "
		    "after %d s (Redis does not take them?); the worker "
		    "settles them once it does\n", FLUSH_WAIT_MS / 1000);
	return rc == 1 || held == 1;
}

static void
progress_line(int pct, const char *step)
{
	fprintf(stderr, "\rreconcile: %3d%% %-24s", pct, step);
	fflush(stderr);
}

static int
cmd_reconcile(struct app *a, int argc, char **argv)
{
	long long id, active;
	struct run r;
	int dry = 0, i, rc, last = -1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else
			return tallyctl_usage("reconcile: unknown option %s", argv[i]);
	}
	if ((id = runs_start_mine(a, dry, "tallyctl", &active)) <= 0) {
		fprintf(stderr, "tallyctl: %s\n", id == 0 ? "a reconciliation "
		    "is already running (see /admin/reconcile)" : "database error");
		return 1;
	}
	/* ours, not yet run: a stall here past the lease lets the worker
	 * take the run */
	fault_point("run-queued");
	if (runs_execute(a, id, 0, progress_line) == 0) {
		/* The worker took it (this process stalled past its lease
		 * before it ran it): follow its progress, to the
		 * 100 % its end writes (the last read, which ends the loop);
		 * should its owner stall past its lease (a worker stopped, its
		 * host gone), take the run over from its checkpoint. */
		while (runs_get(a->db, id, &r) == 1) {
			if (r.progress != last)
				progress_line(last = r.progress, "(worker)");
			if (strcmp(r.state, "queued") != 0 &&
			    strcmp(r.state, "running") != 0)
				break;
			if (r.lease_until < clock_wall_ms() &&
			    runs_execute(a, id, 0, progress_line) != 0)
				break;
			usleep(300 * 1000);
		}
	}
	fprintf(stderr, "\n");
	if ((rc = runs_get(a->db, id, &r)) != 1) {
		fprintf(stderr, "tallyctl: reconciliation %lld: its row could "
		    "not be read (%s)\n", id, rc == 0 ? "gone" : "database error");
		return 1;
	}
	if (strcmp(r.state, "done") != 0) {
		fprintf(stderr, "tallyctl: reconciliation %lld failed: %s\n", id,
		    r.error[0] != '\0' ? r.error : r.state);
		return 1;
	}
	printf("reconciliation %lld%s: %lld counters wrong\n", id,
	    dry ? " (dry run)" : "", recreport_wrong(&r.report));
	for (i = 0; i < REC_FAMILIES; i++)
		if (r.report.fam[i].checked > 0)
			printf("  %-20s checked %lld, wrong %lld, fixed %lld, "
			    "largest error %lld\n", r.report.fam[i].name,
			    r.report.fam[i].checked, r.report.fam[i].wrong,
			    r.report.fam[i].fixed, r.report.fam[i].max_err);
	return 0;
}

static long long
login_id(struct app *a, const char *login)
{
	struct account u;
	char *norm = NULL;
	int rc;

	if (valid_check(VALID_LOGIN, login, strlen(login), &norm) == -1)
		return 0;
	rc = account_by_login(a->db, norm, &u);
	free(norm);
	return rc == 1 ? u.id : 0;
}

static int
warm_one(struct app *a, long long uid)
{
	int tries;

	for (tries = 0; tries < 50; tries++) {
		switch (timeline_rebuild(a, TL_HOME, uid)) {
		case 1:
			return 0;
		case 0:		/* someone else is rebuilding it */
			usleep(100 * 1000);
			continue;
		default:
			return -1;
		}
	}
	return 0;
}

static int
cmd_warm(struct app *a, int argc, char **argv)
{
	struct dbq *s;
	long long uid, star, last_t = -1, last_id = -1, *ids;
	long n = 0, k;
	int i, j, rc;

	ids = xcalloc(5000, sizeof(*ids));
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--followers-of") == 0 && i + 1 < argc) {
			if ((star = login_id(a, argv[++i])) == 0) {
				fprintf(stderr, "tallyctl: no user %s\n", argv[i]);
				free(ids);
				return 1;
			}
			last_t = last_id = -1;	/* each user's from the start */
			do {	/* chunks of 5000: no statement open during Redis I/O */
				s = dbq_stmt(a->db, STMT_FOLLOWERS_CHUNK);
				k = 0;
				rc = s == NULL ? DBQ_ERR : DBQ_DONE;
				if (s != NULL) {
					dbq_bind_i64(s, 1, star);
					dbq_bind_i64(s, 2, last_t);
					dbq_bind_i64(s, 3, last_id);
					dbq_bind_int(s, 4, 5000);
					while ((rc = dbq_step(s)) == DBQ_ROW) {
						ids[k++] = last_id = dbq_i64(s, 0);
						last_t = dbq_i64(s, 1);
					}
					dbq_done(s);
				}
				if (rc == DBQ_ERR) {
					fprintf(stderr, "tallyctl: the followers "
					    "could not be read: %s\n",
					    dbq_errmsg(a->db));
					free(ids);
					return 1;
				}
				for (j = 0; j < k; j++)
					if (warm_one(a, ids[j]) == -1)
						goto redis;
				n += k;
			} while (k == 5000);
			continue;
		}
		if ((uid = login_id(a, argv[i])) == 0) {
			fprintf(stderr, "tallyctl: no user %s\n", argv[i]);
			free(ids);
			return 1;
		}
		if (warm_one(a, uid) == -1)
			goto redis;
		n++;
	}
	free(ids);
	printf("warmed %ld home timelines\n", n);
	return 0;
redis:
	free(ids);
	fprintf(stderr, "tallyctl: Redis is not answering\n");
	return 1;
}

/* The commands: each one's name and what runs it. */
static const struct {
	const char	*name;
	int		(*run)(struct app *, int, char **);
} cmds[] = {
	{ "passwd", cmd_passwd }, { "useradd", cmd_useradd },
	{ "seed", cmd_seed }, { "flush", cmd_flush },
	{ "reconcile", cmd_reconcile }, { "warm", cmd_warm },
};

int
main(int argc, char *argv[])
{
	struct app a;
	size_t i;
	int rc;

	if (argc < 2)
		return tallyctl_usage("no command");
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0) {
		fputs(tallyctl_usage_text, stdout);
		return 0;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(argv[1], cmds[i].name) == 0)
			break;
	if (i == sizeof(cmds) / sizeof(cmds[0]))
		return tallyctl_usage("unknown command %s", argv[1]);
	/* seed may make a site (the benchmarks seed one before it runs) */
	if (cmds[i].run != cmd_seed && tallyctl_site_found() == -1)
		return 1;
	if (app_open(&a, "tallyctl") == -1) {
		fprintf(stderr, "tallyctl: cannot open the database (RUN_DIR?)\n");
		return 1;
	}
	rc = cmds[i].run(&a, argc - 1, argv + 1);
	app_close(&a);
	return rc;
}
