/* tlstale.h -- timelines that Redis missed a change of (it was down):
 * the fact is kept in SQLite until Redis answers again, then every
 * timeline's marker is dropped and each set is rebuilt from SQLite on its
 * next read (timeline.h).  The same for other keys a change missed (the
 * profile cache: pcache.h). */
#ifndef TALLY_TLSTALE_H
#define TALLY_TLSTALE_H

#include "store/app.h"

/* Remembers in SQLite that a timeline change did not reach Redis. */
void		tlstale_mark(struct app *);
/* 1 when it dropped the markers, 0 nothing to do, -1 Redis failed. */
int		tlstale_refresh(struct app *);
/* The same for any keys of Redis that a change missed: the time of the
 * miss kept in SQLite's setting (what: for the log); once Redis
 * answers, every key matching pattern dropped (SCAN) and the setting
 * cleared unless a new miss came meanwhile (as tlstale_refresh()). */
void		tlstale_mark_as(struct app *, const char *setting,
		    const char *what);
int		tlstale_drop_as(struct app *, const char *setting,
		    const char *pattern, const char *what);

#endif
