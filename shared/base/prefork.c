/* prefork.c -- the pre-fork master; see prefork.h.
 * The master handles no requests and opens no database: it only forks,
 * waits and re-forks, so nothing it holds can be corrupted by a child. */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/log.h"
#include "base/prefork.h"

#define PREFORK_MAX	64

/* FastCGI over TCP: "host:port" (an IPv6 host in brackets), numeric. */
static int
listen_tcp(const char *addr)
{
	struct addrinfo hints, *ai = NULL;
	char host[64];
	const char *colon = strrchr(addr, ':');
	size_t hl;
	int fd = -1, rc, one = 1;

	if (colon == NULL || (hl = (size_t)(colon - addr)) >= sizeof(host)) {
		log_err("listen %s: not host:port", addr);
		return -1;
	}
	memcpy(host, addr, hl);
	host[hl] = '\0';
	if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = '\0';
	}
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE;
	if ((rc = getaddrinfo(host, colon + 1, &hints, &ai)) != 0) {
		log_err("listen %s: %s", addr, gai_strerror(rc));
		return -1;
	}
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) == -1 ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) == -1 || listen(fd, 128) == -1) {
		log_err("listen %s: %s", addr, strerror(errno));
		if (fd != -1)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

int
prefork_listen(const char *path, int mode)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (strchr(path, '/') == NULL && strchr(path, ':') != NULL)
		return listen_tcp(path);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_err("socket path too long: %s", path);
		return -1;
	}
	if (lstat(path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_err("%s exists and is not a socket", path);
			return -1;
		}
		unlink(path);
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_err("socket: %s", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    chmod(path, (mode_t)mode) == -1 || listen(fd, 128) == -1) {
		log_err("listen %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

void
prefork_child_signals(void)
{
	sigset_t none;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGCHLD, SIG_DFL);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
}

static pid_t
spawn(int fd, int (*child)(int, void *), void *arg)
{
	pid_t pid = fork();

	if (pid == -1) {
		log_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		prefork_child_signals();
		if (getppid() == 1)
			_exit(1);
		_exit(child(fd, arg) == 0 ? 0 : 1);
	}
	return pid;
}

static void
stop_all(pid_t *pids, int n)
{
	long long t0;
	int i, left, status;
	pid_t p;

	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	t0 = clock_mono_ms();
	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0)
				continue;
			p = waitpid(pids[i], &status, WNOHANG);
			if (p == pids[i] || (p == -1 && errno == ECHILD))
				pids[i] = 0;
			else
				left++;
		}
		if (left == 0)
			return;
		if (clock_mono_ms() - t0 >= 5000) {
			for (i = 0; i < n; i++)
				if (pids[i] > 0)
					kill(pids[i], SIGKILL);
		}
		usleep(20 * 1000);
	}
}

/* A slot whose child failed to start (it exited with an error under
 * PREFORK_YOUNG_MS: its database restarting, a bad setting) waits a
 * second before its next fork, twice as long each time again, up to
 * PREFORK_PAUSE_MAX_MS.  One killed young (kill -9, a crash under
 * load) waits PREFORK_KILLED_MS only: the requests queued at its socket
 * wait for it (nginx gives up after 10 s). */
#define PREFORK_YOUNG_MS	1000
#define PREFORK_KILLED_MS	100

long long
prefork_pause(long long pause, long long born, long long now, int failed)
{
	if (now - born >= PREFORK_YOUNG_MS)
		return 0;
	if (!failed)
		return PREFORK_KILLED_MS;
	if (pause < PREFORK_YOUNG_MS)
		return PREFORK_YOUNG_MS;
	return pause * 2 > PREFORK_PAUSE_MAX_MS ? PREFORK_PAUSE_MAX_MS :
	    pause * 2;
}

int
prefork_run(int fd, const char *path, int nproc,
    int (*child)(int fd, void *arg), void *arg)
{
	pid_t pids[PREFORK_MAX];
	long long born[PREFORK_MAX], due[PREFORK_MAX], pause[PREFORK_MAX];
	long long now, wait;
	struct stat own, cur;
	ino_t listen_ino = 0;
	struct timespec tick;
	sigset_t set;
	siginfo_t si;
	int i, sig, status;
	pid_t p;

	if (path != NULL && lstat(path, &cur) == 0)
		listen_ino = cur.st_ino;
	if (nproc < 1)
		nproc = 1;
	if (nproc > PREFORK_MAX)
		nproc = PREFORK_MAX;
	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	for (i = 0; i < nproc; i++) {
		pids[i] = spawn(fd, child, arg);
		born[i] = clock_mono_ms();
		due[i] = pause[i] = 0;
	}
	for (;;) {
		/* until the next slot is due, a second at most */
		now = clock_mono_ms();
		wait = 1000;
		for (i = 0; i < nproc; i++)
			if (pids[i] <= 0 && due[i] - now < wait)
				wait = due[i] - now;
		if (wait < 1)
			wait = 1;
		tick.tv_sec = wait / 1000;
		tick.tv_nsec = (wait % 1000) * 1000000L;
		sig = sigtimedwait(&set, &si, &tick);
		if (sig == SIGTERM || sig == SIGINT || sig == SIGHUP)
			break;
		now = clock_mono_ms();
		while ((p = waitpid(-1, &status, WNOHANG)) > 0) {
			for (i = 0; i < nproc; i++)
				if (pids[i] == p) {
					pids[i] = 0;
					pause[i] = prefork_pause(pause[i], born[i],
					    now, WIFEXITED(status) &&
					    WEXITSTATUS(status) != 0);
					due[i] = now + pause[i];
				}
			if (WIFSIGNALED(status))
				log_warn("child %ld killed by signal %d",
				    (long)p, WTERMSIG(status));
			else
				log_warn("child %ld exited with %d", (long)p,
				    WEXITSTATUS(status));
		}
		for (i = 0; i < nproc; i++) {
			if (pids[i] > 0 || now < due[i])
				continue;
			/* a failed fork (-1) is tried again as a young death */
			if ((pids[i] = spawn(fd, child, arg)) == -1) {
				pause[i] = prefork_pause(pause[i], now, now, 1);
				due[i] = now + pause[i];
			}
			born[i] = now;
		}
	}
	log_info("stopping %d children", nproc);
	stop_all(pids, nproc);
	/* Remove the socket only if it is still ours: a newer master may
	 * have replaced it at the same path. */
	if (path != NULL && fstat(fd, &own) == 0 && lstat(path, &cur) == 0 &&
	    listen_ino != 0 && cur.st_ino == listen_ino)
		unlink(path);
	close(fd);
	return 0;
}
