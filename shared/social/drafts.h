/* drafts.h -- a user's drafts, newest first, a page at a time: the own
 * profile shows the first page, /drafts every page (by the id of the
 * last draft shown, not by number: a draft published or written
 * meanwhile moves no other from one page to the next). */
#ifndef TALLY_DRAFTS_H
#define TALLY_DRAFTS_H

#include "social/postlist.h"

#define DRAFTS_PAGE	50

/* Up to per of uid's drafts older than the draft before (0: the newest),
 * newest first, into out (their counts not read); *more = 1 when older
 * ones follow.  0, or -1 when SQLite failed (out empty). */
int	drafts_read(struct app *, long long uid, long long before, int per,
	    struct post_cards *out, int *more);

#endif
