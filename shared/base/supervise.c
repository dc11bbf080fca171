/* supervise.c -- the process supervisor; see supervise.h. */
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/prefork.h"
#include "base/supervise.h"

void
supervise_init(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int
supervise_start(struct svc *s)
{
	pid_t pid, parent = getpid();
	int fd;

	if ((pid = fork()) == -1) {
		log_err("%s: fork: %s", s->name, strerror(errno));
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		/* Another user: before the parent-death signal, which a
		 * change of user clears, and before the log, opened as that
		 * user (a link planted in its directory is not followed with
		 * the supervisor's rights). */
		if (s->uid != 0 && (setgroups(0, NULL) == -1 ||
		    setgid(s->gid) == -1 || setuid(s->uid) == -1)) {
			log_err("%s: run as uid %u: %s", s->name,
			    (unsigned)s->uid, strerror(errno));
			_exit(127);
		}
		/* nor by root (nginx's master on a low port): no link */
		if ((fd = open(s->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC |
		    O_NOFOLLOW, 0600)) != -1) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		fd = open("/dev/null", O_RDONLY);
		if (fd != -1)
			dup2(fd, STDIN_FILENO);
		prefork_child_signals();
		/* the supervisor died before the signal was asked for: none
		 * will come, and the service would outlive it */
		if (getppid() != parent)
			_exit(127);
		execv(s->argv[0], (char *const *)s->argv);
		log_err("%s: exec %s: %s", s->name, s->argv[0], strerror(errno));
		_exit(127);
	}
	s->pid = pid;
	s->started_ms = clock_mono_ms();
	return 0;
}

int
supervise_loop(struct svc *svcs, int n, void (*tick)(void *), void *arg)
{
	struct timespec one = { 1, 0 };
	sigset_t set;
	siginfo_t si;
	int i, sig, status;
	pid_t p;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	for (;;) {
		sig = sigtimedwait(&set, &si, &one);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP) {
			log_info("signal %d: stopping", sig);
			return 0;
		}
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < n; i++) {
				if (svcs[i].pid != p)
					continue;
				svcs[i].pid = 0;
				/* Orphans of its group (nginx workers after
				 * a kill -9 of their master) go too. */
				kill(-p, SIGKILL);
				if (WIFSIGNALED(status))
					log_warn("%s (pid %ld) killed by signal "
					    "%d; restarting", svcs[i].name,
					    (long)p, WTERMSIG(status));
				else
					log_warn("%s (pid %ld) exited with %d; "
					    "restarting", svcs[i].name, (long)p,
					    WEXITSTATUS(status));
				if (clock_mono_ms() - svcs[i].started_ms < 2000)
					svcs[i].quick_deaths++;
				else
					svcs[i].quick_deaths = 0;
			}
		}
		for (i = 0; i < n; i++) {
			if (svcs[i].pid != 0)
				continue;
			/* One that keeps dying young waits a little longer
			 * each time, never more than 4 s: the site never gives
			 * up on a part of itself. */
			if (svcs[i].quick_deaths > 0 &&
			    clock_mono_ms() - svcs[i].started_ms <
			    1000LL * (svcs[i].quick_deaths < 4 ?
			    svcs[i].quick_deaths : 4)) {
				if (svcs[i].quick_deaths == 5)
					log_err("%s keeps dying; see %s",
					    svcs[i].name, svcs[i].log);
				continue;	/* retried on a later tick */
			}
			if (supervise_start(&svcs[i]) == -1)
				svcs[i].quick_deaths++;
		}
		if (tick != NULL)
			tick(arg);
	}
}

void
supervise_stop(struct svc *svcs, int n)
{
	long long t0;
	int g, i, left, status, maxg = 0;
	pid_t p;

	for (i = 0; i < n; i++)
		if (svcs[i].stop_group > maxg)
			maxg = svcs[i].stop_group;
	for (g = 0; g <= maxg; g++) {
		for (i = 0; i < n; i++)
			if (svcs[i].stop_group == g && svcs[i].pid > 0)
				kill(svcs[i].pid, svcs[i].stop_signal ?
				    svcs[i].stop_signal : SIGTERM);
		t0 = clock_mono_ms();
		for (;;) {
			left = 0;
			for (i = 0; i < n; i++) {
				if (svcs[i].stop_group != g || svcs[i].pid <= 0)
					continue;
				p = waitpid(svcs[i].pid, &status, WNOHANG);
				if (p == svcs[i].pid ||
				    (p == -1 && errno == ECHILD))
					svcs[i].pid = 0;
				else
					left++;
			}
			if (left == 0)
				break;
			if (clock_mono_ms() - t0 > 5000)
				for (i = 0; i < n; i++)
					if (svcs[i].stop_group == g &&
					    svcs[i].pid > 0)
						kill(svcs[i].pid, SIGKILL);
			usleep(20 * 1000);
		}
	}
}
