/* pubsub.h -- publishing to nginx's nchan module: an HTTP POST per
 * message to its publisher location, over a unix socket nginx listens on
 * (nginx-conf/tally-http.conf: nothing else listens there), through
 * libcurl on one kept-alive connection.
 *
 * A channel keeps its last message only (nchan_message_buffer_length 1),
 * and a new subscriber gets it first: the channel is the latest state,
 * not a log.  Every call is bounded by PUBSUB_TIMEOUT_MS; a failure is
 * reported and never retried here (the page's next poll corrects it).
 * nginx answers a publish in well under a millisecond; the bound is for
 * an nginx that hangs, and is 1 s: at 200 ms, a machine busy with a
 * browser once kept nginx's answer past it, and a stream that opened
 * then was refused (503 GET /badges/live, in tour.test on a fresh
 * clone), though nginx answered.  An nginx that hangs serves no page
 * either, so a longer wait here costs nobody a page.
 */
#ifndef TALLY_PUBSUB_H
#define TALLY_PUBSUB_H

#include <stddef.h>

#define PUBSUB_TIMEOUT_MS	1000

struct pubsub {
	void	*h;		/* the CURL handle, or NULL when closed */
	char	 sock[108];	/* the unix socket's path */
};

/* Opens a publisher towards the socket at path (connected lazily).
 * 0, or -1 (logged). */
int	pubsub_open(struct pubsub *, const char *path);
void	pubsub_close(struct pubsub *);
/* data (len bytes, JSON) as channel's latest message: how many streams
 * nginx holds on the channel (its answer, asked as JSON: 0 when nobody
 * heard it; 1 when the answer does not say), or -1. */
int	pubsub_publish(struct pubsub *, const char *channel,
	    const char *data, size_t len);
/* Deletes channel: its subscribers are disconnected (their pages fall
 * back to polling, then open a stream again).  0, or -1. */
int	pubsub_drop(struct pubsub *, const char *channel);

#endif
