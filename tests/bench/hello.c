/* hello.c -- the baseline of the HTTP benchmarks: the smallest libfcgi
 * program that answers a request, pre-forked like tally's handlers.
 *
 *   hello SOCKET [PROCS]
 *
 * Listens on the unix socket SOCKET (mode 0666; an existing socket there
 * is replaced), forks PROCS (default 2) children that each run an
 * FCGX_Accept_r loop reading the request body (if any) and answering a
 * page of 1 KB (text/html), or of exactly N bytes for a query string
 * "bytes=N" (up to 4 MB: the same-size baseline of a page), restarts
 * none, and on SIGTERM/SIGINT stops the children, removes the socket and
 * exits.  The answer says its Content-Length, as tally's do.
 * Nothing else: no routing, no database, no Redis -- what is left is the
 * cost nginx + FastCGI + a process switch put on every request.
 */
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcgiapp.h>

#define MAXPROCS	64

static int
listen_unix(const char *path)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "hello: socket path too long: %s\n", path);
		return -1;
	}
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		unlink(path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
	    chmod(path, 0666) == -1 || listen(fd, 128) == -1) {
		fprintf(stderr, "hello: %s: %s\n", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

#define MAXBYTES	(4 << 20)

/* The body for a query string: "bytes=N" or the 1 KB default. */
static long
want_bytes(const char *qs)
{
	char *end;
	long n;

	if (qs == NULL || strncmp(qs, "bytes=", 6) != 0)
		return 1024;
	errno = 0;
	n = strtol(qs + 6, &end, 10);
	if (errno != 0 || end == qs + 6 || (*end != '\0' && *end != '&') ||
	    n < 32 || n > MAXBYTES)
		return 1024;
	return n;
}

/* An HTML page of exactly n bytes (made once per size, kept). */
static const char *
page(long n)
{
	static const char head[] = "<!doctype html><title>hello</title><p>";
	static char *body;
	static long made = -1;
	long i;

	if (n == made)
		return body;
	free(body);
	if ((body = malloc((size_t)n)) == NULL)
		abort();
	memcpy(body, head, sizeof(head) - 1);
	for (i = (long)sizeof(head) - 1; i < n - 1; i++)
		body[i] = "hello world "[i % 12];
	body[n - 1] = '\n';
	made = n;
	return body;
}

static int
serve(int fd)
{
	FCGX_Request r;
	sigset_t none;
	char buf[4096], hdr[160];
	long n;
	int hl;

	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	signal(SIGPIPE, SIG_IGN);
	if (FCGX_Init() != 0 || FCGX_InitRequest(&r, fd, 0) != 0)
		return 1;
	while (FCGX_Accept_r(&r) >= 0) {
		/* A POST's body is read to its end, as a real program would. */
		while (FCGX_GetStr(buf, (int)sizeof(buf), r.in) > 0)
			;
		n = want_bytes(FCGX_GetParam("QUERY_STRING", r.envp));
		/* its length, as tally's answers say theirs (web/resp.c):
		 * without it nginx sends the page chunked */
		hl = snprintf(hdr, sizeof(hdr), "Status: 200 OK\r\n"
		    "Content-Type: text/html; charset=utf-8\r\n"
		    "Content-Length: %ld\r\n"
		    "Cache-Control: no-store\r\n\r\n", n);
		FCGX_PutStr(hdr, hl, r.out);
		FCGX_PutStr(page(n), (int)n, r.out);
		FCGX_Finish_r(&r);
	}
	return 0;
}

static volatile sig_atomic_t stopping;

static void
on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

int
main(int argc, char *argv[])
{
	pid_t pids[MAXPROCS];
	struct sigaction sa;
	sigset_t block, orig;
	char *end;
	long n = 2;
	int fd, i;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: hello SOCKET [PROCS]\n");
		return 2;
	}
	if (argc == 3) {
		errno = 0;
		n = strtol(argv[2], &end, 10);
		if (errno != 0 || *end != '\0' || n < 1 || n > MAXPROCS) {
			fprintf(stderr, "hello: PROCS: 1 to %d\n", MAXPROCS);
			return 2;
		}
	}
	if ((fd = listen_unix(argv[1])) == -1)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigprocmask(SIG_BLOCK, &block, &orig);
	for (i = 0; i < n; i++) {
		if ((pids[i] = fork()) == -1) {
			perror("hello: fork");
			pids[i] = 0;
			stopping = 1;
			break;
		}
		if (pids[i] == 0)
			_exit(serve(fd));
	}
	while (!stopping)
		sigsuspend(&orig);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			kill(pids[i], SIGTERM);
	for (i = 0; i < n; i++)
		if (pids[i] > 0)
			while (waitpid(pids[i], NULL, 0) == -1 && errno == EINTR)
				;
	unlink(argv[1]);
	close(fd);
	return 0;
}
