/* freeport.c -- prints N (default 1) free TCP ports on 127.0.0.1, one a
 * line, as the kernel hands them out for port 0 (all held open until
 * printed, so they differ). */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int
main(int argc, char *argv[])
{
	struct sockaddr_in sa;
	socklen_t len;
	int fds[16], i, n = argc > 1 ? atoi(argv[1]) : 1;

	if (n < 1 || n > 16)
		return 2;
	for (i = 0; i < n; i++) {
		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(sa);
		if ((fds[i] = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
		    bind(fds[i], (struct sockaddr *)&sa, sizeof(sa)) == -1 ||
		    getsockname(fds[i], (struct sockaddr *)&sa, &len) == -1) {
			perror("freeport");
			return 1;
		}
		printf("%u\n", (unsigned)ntohs(sa.sin_port));
	}
	for (i = 0; i < n; i++)
		close(fds[i]);
	return 0;
}
