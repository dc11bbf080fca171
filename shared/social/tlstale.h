/* tlstale.h -- timelines that Redis missed a change of (it was down):
 * the fact is kept in SQLite until Redis answers again, then every
 * timeline's marker is dropped and each set is rebuilt from SQLite on its
 * next read (timeline.h). */
#ifndef TALLY_TLSTALE_H
#define TALLY_TLSTALE_H

#include "store/app.h"

/* Remembers in SQLite that a timeline change did not reach Redis. */
void		tlstale_mark(struct app *);
/* 1 when it dropped the markers, 0 nothing to do, -1 Redis failed. */
int		tlstale_refresh(struct app *);

#endif
