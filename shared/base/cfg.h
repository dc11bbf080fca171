/* cfg.h -- configuration from the environment, read once per process.
 *
 *   RUN_DIR               state directory (default ./run): tally.db, redis.sock,
 *                         handler sockets, logs
 *   TALLY_DB              SQLite path (default $RUN_DIR/tally.db)
 *   TALLY_REDIS           Redis unix socket (default $RUN_DIR/redis.sock)
 *   TALLY_REDIS_REPLICA   a replica's unix socket: reads go there while the
 *                         master does not answer (optional)
 *   TALLY_REDIS_CLUSTER   host:port,... of a Redis Cluster's nodes (seeds):
 *                         used instead of TALLY_REDIS when set; default
 *                         the lines of $RUN_DIR/redis-cluster/nodes when
 *                         it exists (tally-run REDIS_CLUSTER=1 writes it)
 *   TALLY_REDIS_AUTH      a file (mode 0600) holding the password the
 *                         Redis servers ask for (requirepass); default
 *                         $RUN_DIR/redis-auth when it exists (tally-run
 *                         writes it while a replica listens on TCP)
 *   TALLY_LIVE_SOCK       the unix socket nginx's live channels' publisher
 *                         listens on (default $RUN_DIR/live.sock; systemd's
 *                         units: /run/tally/live.sock, as make install
 *                         renders nginx-conf/tally-live.conf.in)
 *   TALLY_PWHASH          "interactive" (default) or "min": argon2id cost;
 *                         "min" is for tests and seeding only
 *   TALLY_SESSION_DAYS    session lifetime in days (default 30)
 */
#ifndef TALLY_CFG_H
#define TALLY_CFG_H

#include <limits.h>
#include <stddef.h>

/* A unix socket path must fit sockaddr_un.sun_path. */
#define CFG_SOCK_MAX	107
#define CFG_AUTH_MAX	128	/* a Redis password, bytes */

#define CFG_RUN_DIR	"./run"		/* RUN_DIR's default */
#define CFG_DB_FILE	"tally.db"	/* the SQLite database, in RUN_DIR */
#define CFG_DB_URL_FILE	"database-url"	/* tally-run's PostgreSQL's URL,
					   in RUN_DIR */

struct cfg {
	char	run_dir[PATH_MAX];
	char	db_path[PATH_MAX];
	char	redis_sock[CFG_SOCK_MAX + 1];
	char	replica_sock[CFG_SOCK_MAX + 1];	/* "" when none */
	char	live_sock[CFG_SOCK_MAX + 1];	/* nginx's live channels'
						   publisher: TALLY_LIVE_SOCK,
						   or $RUN_DIR/live.sock */
	char	redis_auth[CFG_AUTH_MAX + 1];	/* "" when none */
	char	redis_cluster[1024];		/* seeds; "" when none */
	char	cluster_socks[PATH_MAX];	/* $RUN_DIR/redis-cluster */
	int	pwhash_min;		/* 1: cheapest argon2id */
	long	session_secs;
};

/* Fills c from the environment.  Returns 0, or -1 after logging why
 * (RUN_DIR unusable, a socket path too long, an unreadable
 * TALLY_REDIS_AUTH file). */
int	cfg_load(struct cfg *c);

/* RUN_DIR as the environment names it, or CFG_RUN_DIR; nothing is made
 * (cfg_load() makes it). */
const char *cfg_run_dir_env(void);

/* Writes "$RUN_DIR/name" into out; -1 if it does not fit in outsz. */
int	cfg_path(const struct cfg *c, const char *name, char *out, size_t outsz);

#endif
