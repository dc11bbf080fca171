/* find.h -- finding people and topics: the models of /people and
 * /topics.
 *
 * /people?q= looks a prefix up in name_words (base/words.h: logins, the
 * words of names and whole names, folded): a range of that table's key,
 * read in key order and stopped once the page is full, so its cost grows
 * with the page asked for, never with the number of users.  Without q,
 * suggestions: the most followed users (the followers leaderboard, lb.h)
 * the viewer does not follow yet.
 */
#ifndef TALLY_FIND_H
#define TALLY_FIND_H

#include "count/cstore.h"
#include "social/people.h"

#define FIND_SUGGEST_MAX	100	/* suggestions come from the top 100 */
/* /topics reads the TOPICS_BUSY busiest topics by their durable post
 * counts (the counters table) and the TOPICS_NEW newest (whose first
 * post's count may not be flushed yet), then orders them by their live
 * counts: the oldest 500 it read before hid every later topic. */
#define TOPICS_BUSY		500
#define TOPICS_NEW		50
#define TOPICS_MAX		(TOPICS_BUSY + TOPICS_NEW)

struct found {
	struct person	p;
	struct count	followers;
	int		following;	/* the viewer follows them */
	int		self;		/* the viewer */
};

struct found_list {
	struct found	*v;
	int		 n;
	int		 more;		/* a next page exists */
};

/* Page `page` (from 1, per a page) of the people whose login, name or a
 * word of their name starts with q (folded), in word order, as viewer
 * (0: nobody) sees them.  0, or -1 on error. */
int	find_people(struct app *, const char *q, long long viewer,
	    long long page, int per, struct found_list *);
/* People viewer does not follow, most followed first (0, or -1); the
 * nkeep ids of keep stay in it followed (marked following): a follow
 * made from the list without script comes back to the list, and the
 * person followed is still there (view_find.h). */
#define FIND_KEEP_MAX	FIND_SUGGEST_MAX
int	find_suggest(struct app *, long long viewer, const long long *keep,
	    int nkeep, long long page, int per, struct found_list *);
void	find_free(struct found_list *);

struct topic_item {
	long long	id;
	char		slug[40];
	struct count	posts;
};

struct topic_list {
	struct topic_item	*v;
	int			 n;
};

/* The topics with at least one visible post, busiest first (a count that
 * could not be read keeps its topic, last).  0, or -1 on error. */
int	find_topics(struct app *, struct topic_list *);
void	find_topics_free(struct topic_list *);

#endif
