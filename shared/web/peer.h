/* peer.h -- whom a handler pool answers, and how long it waits for them.
 *
 * A pool on a unix socket answers whoever can open the socket (its mode
 * and directory decide: nginx's workers).  A pool on FastCGI over TCP
 * (a handler host) answers only the peers of TALLY_FCGI_ALLOW
 * ("addr,addr": IPv4 or IPv6 addresses, an IPv4 peer matching its
 * IPv4-mapped IPv6 form too), checked here at accept, before a byte is
 * read: any other peer is closed at once.  Without the variable a TCP
 * pool refuses to start.  A TCP peer that sends nothing, or half a
 * request, is dropped, unanswered, once a read of it waits
 * PEER_READ_SECS (libfcgi would take a request whose parameters stopped
 * coming as a whole one: its stream's error says it did not), so it
 * holds a process that long at most (peers.test.mjs); writes time out
 * after PEER_WRITE_SECS.
 *
 * libfcgi accepts by itself (FCGX_Accept_r); here the connection is
 * accepted and checked first, then given to libfcgi as the request's
 * open connection (ipcFd, keepConnection: fcgiapp.h), and libfcgi's own
 * accept is pointed at no socket, so it never takes a connection
 * unchecked.  (libfcgi's FCGI_WEB_SERVER_ADDRS knows IPv4 only.)
 */
#ifndef TALLY_PEER_H
#define TALLY_PEER_H

#include <sys/socket.h>

#include <fcgiapp.h>

#define PEER_READ_SECS	2
#define PEER_WRITE_SECS	10

/* At start, for the pool listening on fd at sock: 0, or -1 when sock is
 * TCP and TALLY_FCGI_ALLOW is missing or bad (logged). */
int	peer_setup(int fd, const char *sock);
/* FCGX_InitRequest() as this pool needs it. */
void	peer_init_request(FCGX_Request *);
/* The next request, as FCGX_Accept_r(): 0, or < 0 (-EAGAIN: nothing
 * queued on the non-blocking listening socket). */
int	peer_accept(FCGX_Request *);
/* 1 when the peer at sa is on list (TALLY_FCGI_ALLOW's syntax), else 0
 * (pure: unit-tested). */
int	peer_allowed(const char *list, const struct sockaddr *sa,
	    socklen_t len);

#endif
