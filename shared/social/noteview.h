/* noteview.h -- what the notification and notice pages show, loaded
 * before they render (web/view_notes.h). */
#ifndef TALLY_NOTEVIEW_H
#define TALLY_NOTEVIEW_H

#include "store/app.h"

struct note_item {
	long long	id;
	char		kind[16];	/* like comment repost follow */
	long long	post;		/* 0: none (a follow) */
	int		read;
	long long	at;
	char		login[40];	/* who did it */
	char		name[264];
};

struct notes {
	struct note_item	*v;
	int			 n;
	long long		 page;
	int			 more;
};

/* Page `page` of uid's notifications, newest first, per a page.  0, or
 * -1 on a SQLite error. */
int	notes_load(struct app *, long long uid, long long page, int per,
	    struct notes *);
void	notes_free(struct notes *);
/* The recipient of notification id into *owner (0: none).  0 or -1. */
int	note_owner(struct app *, long long id, long long *owner);

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
int	notices_load(struct app *, int max, struct notices *);
void	notices_free(struct notices *);

#endif
