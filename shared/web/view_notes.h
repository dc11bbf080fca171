/* view_notes.h -- tally-notify's pages (notifications, notices, news),
 * rendered from models loaded before (social/noteview.h); no I/O. */
#ifndef TALLY_VIEW_NOTES_H
#define TALLY_VIEW_NOTES_H

#include "social/noteview.h"
#include "web/req.h"

void	view_notes(struct req *, const void *notes);
void	view_notices(struct req *, const void *notices);
/* lit: when the editors last lit the red dot (ms; 0: never). */
struct news_model {
	long long	 lit;
};
void	view_news(struct req *, const void *news_model);
/* /badges: the four badges as a fragment (struct badges). */
void	view_badges(struct req *, const void *badges);
/* /badges.json: the poll's answer (web/bjson.h), with its ETag. */
struct badges_json_model {
	const char	*json;
	const char	*etag;
};
void	view_badges_json(struct req *, const void *badges_json_model);

#endif
