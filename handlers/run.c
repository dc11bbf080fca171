/* run.c -- tally-run: the whole site in the foreground (what "make run"
 * starts, and what the integration tests start the same way).
 *
 * It renders the nginx configuration for PORT and RUN_DIR, creates the
 * database and the admin account, then starts and supervises
 * redis-server, one pre-fork pool per handler, the worker and nginx; the
 * demo data is seeded once Redis runs (run_demo.h).
 * SIGINT/SIGTERM stop them all (nginx first, Redis last) and nothing else.
 *
 * Environment: PORT (8080), RUN_DIR (./run), TALLY_ADMIN_PASSWORD,
 * DEMO (1; 0 = no demo data), TALLY_PROCS (processes per handler pool,
 * 2; the social readers have one more; the social writer has 1 on
 * SQLite, TALLY_WRITERS on PostgreSQL: TALLY_PROCS by default),
 * TALLY_LOGIN_RATE (nginx limit_req rate for POST /login, /signup and
 * /settings, "30r/m"),
 * TALLY_WRITE_RATE (actions one user may make a minute, 300; 0: no limit;
 * read by the handlers, social/throttle.h),
 * REPLICA=1 (a second redis-server replicating the first over loopback
 * TCP, both behind a password; the handlers read from it while the master
 * does not answer; run_redis.c), REDIS_CLUSTER=1 (a local Redis Cluster
 * of six nodes instead of the one Redis; run_cluster.c), DB=postgres (a
 * local PostgreSQL server as the truth instead of SQLite, started before
 * everything else; run_pg.c), HOSTS=N with DB=postgres (N handler hosts,
 * each this program again as "--host K", instead of the pools and the
 * worker; run_hosts.h).
 */
#include <sys/stat.h>

#include <errno.h>
#include <grp.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/supervise.h"
#include "base/tmpl.h"
#include "base/valid.h"
#include "run_cluster.h"
#include "run_demo.h"
#include "run_hosts.h"
#include "run_os.h"
#include "run_pg.h"
#include "run_redis.h"
#include "run_user.h"
#include "social/account.h"
#include "store/app.h"

/* One pre-fork pool per handler, plus the social writer: the single
 * process that nginx sends the social handler's POSTs to (see
 * nginx-conf/tally.conf.in).  SQLite takes one writer at a time anyway;
 * one writing process keeps its page cache across its transactions,
 * where writers in several processes make each other's caches stale at
 * every commit.  The social readers have one process more: a page waits
 * on Redis up to three times, and one more keeps the cores busy meanwhile
 * (the mix on two cores, 3 against 2: +12 to +23 % req/s; 4 no better). */
static const struct pool {
	const char	*prog;		/* tally-<prog> */
	const char	*name;		/* <name>.sock, logs/<name>.log */
	const char	*procs;		/* NULL: TALLY_PROCS; "+N": N more */
} pools[] = {
	{ "web", "web", NULL },
	{ "social", "social", "+1" },
	{ "social", "social-writer", "1" },
	{ "notify", "notify", NULL },
	{ "admin", "admin", NULL },
};
#define NHANDLERS	(sizeof(pools) / sizeof(pools[0]))
#define NSVC		(NHANDLERS + RUN_HOSTS_MAX + 4 + RUN_REDIS_MAX)

struct paths {
	char	bin[PATH_MAX];		/* our programs */
	char	share[PATH_MAX];	/* nginx-conf/ and www/ */
	char	nginx[PATH_MAX];	/* $RUN_DIR/nginx */
};

static int
find_paths(struct paths *p, const struct cfg *c)
{
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	const char *env = getenv("TALLY_SHARE");
	ssize_t n;

	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) < 0)
		return -1;
	exe[n] = '\0';
	pathf(p->bin, sizeof(p->bin), "%s", dirname(exe));
	if (env != NULL && *env != '\0')
		pathf(p->share, sizeof(p->share), "%s", env);
	else {
		pathf(probe, sizeof(probe), "%s/../share/tally/www", p->bin);
		if (access(probe, R_OK) == 0)
			pathf(p->share, sizeof(p->share), "%s/../share/tally",
			    p->bin);
		else
			pathf(p->share, sizeof(p->share), "%s/..", p->bin);
	}
	if (realpath(p->share, probe) != NULL)
		pathf(p->share, sizeof(p->share), "%s", probe);
	return cfg_path(c, "nginx", p->nginx, sizeof(p->nginx));
}

/* Whom the stack runs as when tally-run is root (run_user.h): the
 * program's state, set once in main(). */
static struct run_user ru;

static int
render_nginx(const struct paths *p, const struct cfg *c, const char *port,
    int hosts, int base)
{
	static const char *const files[] = { "nginx.conf", "tally-http.conf",
	    "tally-live.conf", "tally.conf", "tally-headers.conf", "tally-fastcgi.conf" };
	char in[PATH_MAX + 64], out[PATH_MAX + 64], www[PATH_MAX + 8];
	char user[256] = "", ups[4096];
	const char *rate = getenv("TALLY_LOGIN_RATE");
	const char *names[NHANDLERS];
	struct passwd *pw;
	struct group *gr;
	size_t i;

	/* As root, nginx would drop its workers to "nobody", who can read
	 * neither our 0660 sockets nor a www/ under a private home: run the
	 * development workers as the invoking user instead.  Production
	 * (systemd) uses www-data and group-readable sockets. */
	if (ru.uid != 0)	/* nginx's workers as the stack's user */
		pathf(user, sizeof(user), "user %s %s;", ru.name, ru.group);
	else if (geteuid() == 0 && (pw = getpwuid(getuid())) != NULL &&
	    (gr = getgrgid(getgid())) != NULL)
		pathf(user, sizeof(user), "user %s %s;", pw->pw_name,
		    gr->gr_name);
	pathf(www, sizeof(www), "%s/www", p->share);
	for (i = 0; i < NHANDLERS; i++)
		names[i] = pools[i].name;
	run_hosts_upstreams(ups, sizeof(ups), names, NHANDLERS, c->run_dir,
	    hosts, base);
	{
		const struct tmpl_var vars[] = {
			{ "PORT", port },
			{ "RUN_DIR", c->run_dir },
			{ "TALLY_SOCK_DIR", c->run_dir },
			{ "TALLY_WWW", www },
			{ "TALLY_CONF_DIR", p->nginx },
			{ "TALLY_LOGIN_RATE", rate && *rate ? rate : "30r/m" },
			{ "NGINX_USER", user },
			{ "TALLY_UPSTREAMS", ups },
		};

		mkdir(p->nginx, 0700);
		for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
			pathf(in, sizeof(in), "%s/nginx-conf/%s.in", p->share,
			    files[i]);
			pathf(out, sizeof(out), "%s/%s", p->nginx, files[i]);
			if (tmpl_render(in, out, vars,
			    (int)(sizeof(vars) / sizeof(vars[0]))) == -1)
				return -1;
		}
	}
	return 0;
}

/* Database, schema and the admin account; prints the admin password. */
static int
prepare_db(const struct cfg *c)
{
	struct app a;
	char pw[129], file[PATH_MAX + 32];	/* 128 bytes at most */
	FILE *f;
	int rc;

	if (app_open(&a, "tally-run") == -1)
		return -1;
	rc = account_ensure_admin(a.db, getenv("TALLY_ADMIN_PASSWORD"), pw,
	    sizeof(pw), c->pwhash_min);
	app_close(&a);
	cfg_path(c, "admin-password", file, sizeof(file));
	if (rc == 1) {
		if ((f = fopen(file, "w")) != NULL) {
			fchmod(fileno(f), 0600);
			fprintf(f, "%s\n", pw);
			fclose(f);
		}
		printf("tally: created the admin account: login \"admin\", "
		    "password \"%s\" (also in %s)\n", pw, file);
	} else if (rc == 0)
		printf("tally: admin account exists (password in %s)\n", file);
	return rc < 0 ? -1 : 0;
}

/* The processes of PostgreSQL's writer pool: TALLY_WRITERS, else procs
 * (each 1 to 64; 2 when neither is). */
static const char *
pg_writers(const char *procs)
{
	const char *w = getenv("TALLY_WRITERS");
	long long v;

	if (w != NULL && *w != '\0' && valid_int(w, 1, 64, &v) == 0)
		return w;
	return valid_int(procs, 1, 64, &v) == 0 ? procs : "2";
}

/* A pool's processes: procs; procs + N for "+N" (an argv: kept; procs
 * if no number); else its own, or PostgreSQL's writers. */
static const char *
pool_size(const struct pool *pl, const char *procs)
{
	char n[24];
	long long v;

	if (pl->procs != NULL && pl->procs[0] != '+')
		return !run_pg_wanted() ? pl->procs : pg_writers(procs);
	if (pl->procs == NULL || valid_int(procs, 1, 64, &v) == -1)
		return procs;
	v += strtol(pl->procs + 1, NULL, 10);
	snprintf(n, sizeof(n), "%lld", v > 64 ? 64 : v);
	return xstrdup(n);
}

/* The handler pools and the worker into svcs from *k: on unix sockets in
 * RUN_DIR (host 0), or as handler host `host` on FastCGI over TCP at its
 * address, ports base + pool.  0, or -1 (logged). */
static int
plan_pools(struct svc *svcs, size_t *k, const char *(*argvs)[16],
    const struct paths *p, const struct cfg *c, const char *procs, int host,
    int base)
{
	char prog[PATH_MAX + 32], sock[PATH_MAX + 32], addr[32];
	size_t i;

	for (i = 0; i < NHANDLERS; i++, (*k)++) {
		pathf(prog, sizeof(prog), "%s/tally-%s", p->bin, pools[i].prog);
		if (host > 0) {
			run_host_addr(host, addr, sizeof(addr));
			pathf(sock, sizeof(sock), "%s:%d", addr, base + (int)i);
		} else
			pathf(sock, sizeof(sock), "%s/%s.sock", c->run_dir,
			    pools[i].name);
		if (strlen(sock) > CFG_SOCK_MAX) {
			log_err("RUN_DIR too long for %s", sock);
			return -1;
		}
		argvs[*k][0] = xstrdup(prog);
		argvs[*k][1] = "-s";
		argvs[*k][2] = xstrdup(sock);
		argvs[*k][3] = "-n";
		/* The one social writer is SQLite's rule (its page cache).
		 * PostgreSQL's writers run at once, each waiting mostly on
		 * the server (its round trips, its commit's flush), and each
		 * takes the likes queued behind its own into one commit
		 * (web/batch.h): the pool has TALLY_WRITERS processes,
		 * TALLY_PROCS by default.  On two cores, 4 took 11-23 %
		 * more likes than 8, and 2 up to 13 % more than 4, p99
		 * lower: fewer backends contending, fuller groups (16 a
		 * commit with 2, 9 with 4; docs/BENCHMARKS.md). */
		argvs[*k][4] = pool_size(&pools[i], procs);
		argvs[*k][5] = NULL;
		svcs[*k].name = pools[i].name;
		svcs[*k].stop_group = 1;
	}
	pathf(prog, sizeof(prog), "%s/tally-worker", p->bin);
	argvs[*k][0] = xstrdup(prog);
	argvs[*k][1] = NULL;
	svcs[*k].name = "worker";
	svcs[*k].stop_group = 1;
	(*k)++;
	/* the live badges' publisher (handlers/live.c): one a host; those
	 * that reach nginx's publisher socket take the changes */
	pathf(prog, sizeof(prog), "%s/tally-live", p->bin);
	argvs[*k][0] = xstrdup(prog);
	argvs[*k][1] = NULL;
	svcs[*k].name = "live";
	svcs[*k].stop_group = 1;
	(*k)++;
	return 0;
}

/* Gives every service its argv (if it has none) and its log in logdir. */
static void
finish_plan(struct svc *svcs, size_t k, const char *(*argvs)[16],
    const char *logdir)
{
	size_t i;

	for (i = 0; i < k; i++) {
		if (svcs[i].argv == NULL)
			svcs[i].argv = argvs[i];
		pathf(svcs[i].log, sizeof(svcs[i].log), "%s/%s.log", logdir,
		    svcs[i].name);
	}
}

/* tally-run --host K --base B: handler host K of the site's tally-run
 * (run_hosts.h), until TERM. */
static int
host_main(const struct paths *p, const struct cfg *c, int host, int base,
    const char *procs)
{
	struct svc svcs[NSVC];
	const char *argvs[NSVC][16];
	char dir[PATH_MAX + 32], logdir[PATH_MAX + 48], pidf[PATH_MAX + 48];
	size_t k = 0, i;
	FILE *f;
	int rc;

	pathf(dir, sizeof(dir), "%s/host%d", c->run_dir, host);
	pathf(logdir, sizeof(logdir), "%s/logs", dir);
	pathf(pidf, sizeof(pidf), "%s/pid", dir);
	mkdir(dir, 0700);
	mkdir(logdir, 0700);
	if ((f = fopen(pidf, "w")) == NULL) {
		log_err("%s: cannot write", pidf);
		return 1;
	}
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	memset(svcs, 0, sizeof(svcs));
	if (plan_pools(svcs, &k, argvs, p, c, procs, host, base) == -1)
		return 1;
	finish_plan(svcs, k, argvs, logdir);
	run_user_apply(&ru, svcs, k);
	supervise_init();
	for (i = 0; i < k; i++)
		if (supervise_start(&svcs[i]) == -1) {
			supervise_stop(svcs, (int)k);
			return 1;
		}
	log_info("host %d: pools on 127.0.0.%d, ports %d..%d", host, host + 1,
	    base, base + (int)NHANDLERS - 1);
	rc = supervise_loop(svcs, (int)k, NULL, NULL);
	supervise_stop(svcs, (int)k);
	unlink(pidf);
	return rc == 0 ? 0 : 1;
}

int
main(int argc, char **argv)
{
	struct svc svcs[NSVC];
	struct paths p;
	struct cfg c;
	char *redis, *nginx, rdir[PATH_MAX + 32];
	char conf[PATH_MAX + 32], elog[PATH_MAX + 32], nprefix[PATH_MAX + 32];
	char prog[PATH_MAX + 32], num[2][16];
	const char *argvs[NSVC][16];
	const char *port = getenv("PORT"), *procs = getenv("TALLY_PROCS");
	long long portn;
	size_t i, k, nredis;
	int rc, host, hosts, base = 0;

	log_init("tally-run");
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (port == NULL || *port == '\0')
		port = "8080";
	if (procs == NULL || *procs == '\0')
		procs = "2";
	if ((host = run_host_args(argc, argv, &base)) == -1 ||
	    (hosts = run_hosts_n()) == -1)
		return 1;
	if (valid_int(port, 1, 65535, &portn) == -1) {
		log_err("PORT must be 1..65535");
		return 1;
	}
	if (cfg_load(&c) == -1 || find_paths(&p, &c) == -1)
		return 1;
	if (run_user_get(&ru, c.run_dir, p.bin, p.share) == -1)
		return 1;
	if (host > 0)
		return host_main(&p, &c, host, base, procs);
	if (hosts > 1 && !run_pg_wanted()) {
		log_err("HOSTS=%d needs DB=postgres: hosts share one database "
		    "server, not a SQLite file", hosts);
		return 1;
	}
	if (hosts > 1 && (base = run_hosts_base(hosts, (int)NHANDLERS)) == -1)
		return 1;
	/* the hosts' pools answer this machine's nginx only (web/peer.h):
	 * it reaches 127.0.0.(K+1) from 127.0.0.1 */
	if (hosts > 1)
		setenv("TALLY_FCGI_ALLOW", "127.0.0.1", 0);
	chmod(c.run_dir, 0700);
	/* the user's from now on (everything in it, once planned, below) */
	if (ru.uid != 0 && chown(c.run_dir, ru.uid, ru.gid) == -1) {
		log_err("%s: %s", c.run_dir, strerror(errno));
		return 1;
	}
	/* and tally-run too, unless nginx binds under 1024 (run_user.h) */
	if (ru.uid != 0 && portn >= 1024 && (run_user_own(&ru, c.run_dir) ==
	    -1 || run_user_become(&ru) == -1))
		return 1;
	run_pg_user(ru.uid, ru.gid);
	if (!port_free((int)portn)) {
		log_err("port %s on 127.0.0.1 is in use; set PORT", port);
		return 1;
	}
	if ((redis = which("redis-server")) == NULL ||
	    (nginx = which("nginx")) == NULL) {
		log_err("redis-server or nginx not found; run make deps");
		return 1;
	}
	pathf(rdir, sizeof(rdir), "%s/logs", c.run_dir);
	mkdir(rdir, 0700);
	memset(svcs, 0, sizeof(svcs));
	k = 0;
	supervise_init();
	if (run_pg_wanted()) {		/* the database first: all use it */
		if (run_pg_start(&svcs[k++], &c) == -1) {
			supervise_stop(svcs, (int)k);
			return 1;
		}
	} else {
		run_pg_none(&c);
		if (getenv("TALLY_DB") == NULL)
			pathf(c.db_path, sizeof(c.db_path), "%s/" CFG_DB_FILE,
			    c.run_dir);
	}
	if (render_nginx(&p, &c, port, hosts, base) == -1 ||
	    prepare_db(&c) == -1) {
		supervise_stop(svcs, (int)k);
		return 1;
	}
	if (run_redis_plan(svcs, &k, &c, redis) == -1)
		return 1;
	nredis = k;
	if (hosts <= 1) {
		if (plan_pools(svcs, &k, argvs, &p, &c, procs, 0, 0) == -1)
			return 1;
	} else {
		pathf(prog, sizeof(prog), "%s/tally-run", p.bin);
		snprintf(num[1], sizeof(num[1]), "%d", base);
		for (host = 1; host <= hosts; host++, k++) {
			snprintf(num[0], sizeof(num[0]), "%d", host);
			argvs[k][0] = xstrdup(prog);
			argvs[k][1] = "--host";
			argvs[k][2] = xstrdup(num[0]);
			argvs[k][3] = "--base";
			argvs[k][4] = num[1];
			argvs[k][5] = NULL;
			pathf(rdir, sizeof(rdir), "host%d", host);
			svcs[k].name = xstrdup(rdir);
			svcs[k].stop_group = 1;
		}
	}
	pathf(nprefix, sizeof(nprefix), "%s/", p.nginx);
	pathf(conf, sizeof(conf), "%s/nginx.conf", p.nginx);
	pathf(elog, sizeof(elog), "%s/error.log", p.nginx);
	argvs[k][0] = nginx;
	argvs[k][1] = "-p";
	argvs[k][2] = nprefix;
	argvs[k][3] = "-c";
	argvs[k][4] = conf;
	argvs[k][5] = "-e";
	argvs[k][6] = elog;
	argvs[k][7] = "-g";
	argvs[k][8] = "daemon off;";
	argvs[k][9] = NULL;
	svcs[k].name = "nginx";	/* its own group: no stop_group */
	k++;
	pathf(rdir, sizeof(rdir), "%s/logs", c.run_dir);
	finish_plan(svcs, k, argvs, rdir);
	run_user_apply(&ru, svcs, k);
	if (run_user_own(&ru, c.run_dir) == -1) {
		supervise_stop(svcs, (int)k);
		return 1;
	}
	for (i = 0; i < k; i++) {
		if (svcs[i].pid == 0 && supervise_start(&svcs[i]) == -1) {
			supervise_stop(svcs, (int)k);
			return 1;
		}
		/* A cluster is created (once) before any program uses it. */
		if (i + 1 == nredis && run_redis_is_cluster() &&
		    cluster_ready(run_redis_password()) == -1) {
			supervise_stop(svcs, (int)i + 1);
			return 1;
		}
		/* The demo, its views in Redis, before anything serves; what
		 * it wrote as root becomes the user's. */
		if (i + 1 == nredis) {
			run_demo();
			run_user_own(&ru, c.run_dir);
		}
	}
	for (i = 0; i < 100 && !port_answers((int)portn); i++)
		usleep(100 * 1000);
	printf("tally: running on http://127.0.0.1:%s/ (RUN_DIR=%s; "
	    "Ctrl-C stops everything)\n", port, c.run_dir);
	printf("tally: operator CLI: RUN_DIR=%s %s/tallyctl\n", c.run_dir,
	    p.bin);
	rc = supervise_loop(svcs, (int)k, run_redis_is_cluster() ?
	    cluster_tick : NULL, NULL);
	supervise_stop(svcs, (int)k);
	printf("tally: stopped\n");
	return rc == 0 ? 0 : 1;
}
