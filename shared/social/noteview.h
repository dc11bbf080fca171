/* noteview.h -- what the notification and notice pages show, loaded
 * before they render (web/view_notes.h). */
#ifndef TALLY_NOTEVIEW_H
#define TALLY_NOTEVIEW_H

#include "base/valid.h"
#include "store/app.h"

/* The longest snapshot a page keeps (PostgreSQL's "XMIN:XMAX:XIP,...":
 * its transactions in flight listed): what its form may send back */
#define NOTE_SNAP_MAX	VALID_SNAPSHOT_MAX
#define NOTE_NAMED	3	/* people an item names, newest first */
#define NOTE_EXCERPT	60	/* characters of the post's text it shows */

struct note_who {
	char		login[40];
	char		name[264];
};

/* One item of the list: a group of notifications (social/notify.h). */
struct note_item {
	long long	id;		/* its newest notification (the forms
					   act on the whole group) */
	char		kind[16];	/* like comment repost follow */
	long long	post;		/* 0: none (a follow) */
	int		post_shown;	/* published and not deleted */
	char		excerpt[4 * NOTE_EXCERPT + 4];	/* the post's start */
	int		cut;		/* the text goes on */
	long long	size;		/* notifications in the group */
	long long	unread;		/* of them unread */
	long long	at;		/* the newest one's time */
	int		nwho;
	struct note_who	who[NOTE_NAMED];
};

/* A group's place in the list: its newest member's time, then its id. */
struct note_mark {
	long long	at;
	long long	id;
};

struct notes {
	struct note_item	*v;
	int			 n;
	long long		 page;		/* 0: after `before` */
	int			 more;
	long long		 newest;	/* the newest notification shown */
	long long		 newest_at;	/* the latest time shown */
	/* the database's snapshot of the page ("": none, SQLite's, or one
	 * longer than NOTE_SNAP_MAX), for notify_read_all() */
	char			 snap[NOTE_SNAP_MAX + 1];
	struct note_mark	 before;	/* the page's groups come after
						   it (at 0: page `page`) */
	struct note_mark	 last;		/* its last group: the next
						   page's `before` */
	/* what "Mark all read" reads up to: page 1's newest (id, time,
	 * snapshot), carried by the Older links (upto, at, snap), so that
	 * on a later page too one that arrived after page 1 was built
	 * stays unread; seen_upto 0: every one (a later page reached
	 * without them) */
	long long		 seen_upto;
	long long		 seen_at;
	char			 seen_snap[NOTE_SNAP_MAX + 1];
};

/* A page of uid's notification groups, the one with the newest member
 * first, per a page: those after `before` when given (NULL: page
 * `page`), each with its stored size and unread count (no row counted)
 * and its newest NOTE_NAMED people.  A page that follows the last one
 * shown begins where that one ended, however the list moved since (a
 * group that took a new member went to the top: by its place it showed
 * twice).  0, or -1 on a SQLite error. */
int	noteview_load(struct app *, long long uid, long long page,
	    const struct note_mark *before, int per, struct notes *);
void	noteview_free(struct notes *);
/* The recipient of notification id into *owner (0: none), and its time
 * into *at.  0 or -1. */
int	noteview_owner(struct app *, long long id, long long *owner,
	    long long *at);

struct notice {
	long long	 id;
	char		*title;		/* owned */
	char		*body;		/* owned */
	long long	 at;
};

struct notices {
	struct notice	*v;
	int		 n;
};

/* The newest max system notices.  0, or -1 on a SQLite error. */
int	noteview_notices_load(struct app *, int max, struct notices *);
void	noteview_notices_free(struct notices *);

#endif
