/* view_notes.h -- tally-notify's pages (notifications, notices, news),
 * rendered from models loaded before (social/noteview.h); no I/O. */
#ifndef TALLY_VIEW_NOTES_H
#define TALLY_VIEW_NOTES_H

#include "social/noteview.h"
#include "web/req.h"

void	view_notes(struct req *, const struct notes *);
void	view_notices(struct req *, const struct notices *);
/* lit: when the editors last lit the red dot (ms; 0: never). */
void	view_news(struct req *, long long lit);

#endif
