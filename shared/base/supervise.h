/* supervise.h -- keeping a set of processes alive (the heart of tally-run).
 *
 * Each service is started with fork+exec, its stdout and stderr appended
 * to its log file, in its own process group (a terminal's Ctrl-C reaches
 * only the supervisor, which then stops everything in order) and with
 * SIGTERM as its parent-death signal (a kill -9 of the supervisor leaves
 * nothing running).  A service that exits is started again at once, or
 * after a pause if it died young (1 s more per early death in a row, at
 * most 4 s), so everything is back within 5 s and nothing is given up.
 */
#ifndef TALLY_SUPERVISE_H
#define TALLY_SUPERVISE_H

#include <sys/types.h>

struct svc {
	const char	*name;
	const char	**argv;		/* argv[0]: the program path */
	char		 log[4096];	/* stdout/stderr go here (appended) */
	int		 stop_group;	/* lower groups are stopped first */
	int		 stop_signal;	/* 0: SIGTERM */
	uid_t		 uid;		/* 0: as the supervisor; else runs */
	gid_t		 gid;		/* as uid:gid (its log opened before) */
	pid_t		 pid;
	long long	 started_ms;
	int		 quick_deaths;
};

/* Starts one service; 0 or -1 (logged). */
int	supervise_start(struct svc *);

/* Blocks TERM/INT/HUP/CHLD; call before the first supervise_start(). */
void	supervise_init(void);

/* Restarts services that exit, until TERM, INT or HUP arrives (returns
 * 0).  tick(arg), if not NULL, runs about once a second. */
int	supervise_loop(struct svc *, int n, void (*tick)(void *), void *arg);

/* Stops every service, group by group: its stop signal, up to 5 s, then
 * SIGKILL.  Returns when all have exited. */
void	supervise_stop(struct svc *, int n);

#endif
