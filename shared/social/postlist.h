/* postlist.h -- posts as pages show them: the row and its four counts,
 * loaded before anything is rendered (web/render.h draws them). */
#ifndef TALLY_POSTLIST_H
#define TALLY_POSTLIST_H

#include "count/cstore.h"
#include "social/post.h"

enum { PC_LIKES, PC_COMMENTS, PC_REPOSTS, PC_VIEWS, PC_NCOUNTS };

/* The counter family of each count of a post card. */
extern const enum family post_card_fams[PC_NCOUNTS];

struct post_card {
	struct post	p;
	struct count	n[PC_NCOUNTS];
	int		liked;		/* by the viewer (postlist_marks) */
	int		reposted;
	/* In a home feed: the login of the newest repost by someone the
	 * reader follows, "" when none (the card says who reposted it). */
	char		reposted_by[40];
};

struct post_cards {
	struct post_card	*v;
	int			 n;
};

/* Which of the ids a list keeps: every visible post, or (the home feed)
 * only the reader's own and those of people the reader follows now. */
enum pc_list { PC_VISIBLE, PC_HOME };

/* Reads the posts among ids that the list keeps, newest first, in one
 * SQLite statement; reader != 0 also marks the ones the reader liked or
 * reposted, in the same statement (PC_HOME needs a reader).  The counts
 * are not read.  0, or -1 when SQLite failed. */
int	postlist_read(struct app *, const long long *ids, int n,
	    long long reader, enum pc_list, struct post_cards *);
/* The same statement sent ahead (store/dbq.h: dbq_ahead_send(); on
 * PostgreSQL, a reader's group sends its pages' together): a ticket, or
 * 0.  postlist_ahead_wait() reads every result sent; postlist_read_took()
 * reads the cards from ticket's result when it is kept (the caller
 * passes the very ids and reader it was sent with), else runs the
 * statement as postlist_read() does. */
int	postlist_send(struct app *, const long long *ids, int n,
	    long long reader, enum pc_list);
void	postlist_ahead_wait(struct app *);
/* 1 when statements go ahead at all (PostgreSQL; dbq_ahead_ok()). */
int	postlist_ahead_ok(struct app *);
int	postlist_read_took(struct app *, int ticket, const long long *ids,
	    int n, long long reader, enum pc_list, struct post_cards *);
/* Reads the counts of n cards whose posts are read (one round trip). */
void	postlist_counts(struct app *, struct post_card *, int n);
/* The same, and in the same round trip nmore other counters (a page's
 * own: the profile's, the topic's) into more_out. */
void	postlist_counts_with(struct app *, struct post_card *, int n,
	    const struct delta *more, int nmore, struct count *more_out);
/* postlist_counts_with() in two steps (cstore.h says why): the counts
 * are queued, then read (more_out: nmore counts); keep: what the values
 * the process keeps may do (count/ckeep.h). */
struct cards_q {
	struct cstore_q	 q;
	struct delta	*ds;
	int		 n, nmore;
};
void	postlist_counts_send(struct app *, const struct post_card *, int n,
	    const struct delta *more, int nmore, unsigned keep,
	    struct cards_q *);
void	postlist_counts_recv(struct app *, struct cards_q *,
	    struct post_card *, struct count *more_out);
/* Marks the cards viewer liked or reposted (one SQLite statement).  0,
 * or -1 (the marks stay 0). */
int	postlist_marks(struct app *, struct post_card *, int n,
	    long long viewer);
void	postlist_free(struct post_cards *);
/* Moves from's cards to the end of to (from is left empty): two lists
 * of one page whose counts are read in one round trip. */
void	postlist_append(struct post_cards *to, struct post_cards *from);

#endif
