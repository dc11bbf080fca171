/* act.h -- how an action answers (docs/INTERFACE.md §2, "Actions
 * without leaving the page").
 *
 * A form's POST answers 303 to its `back` field when that names a path on
 * this site ("/" then neither "/" nor "\", printable ASCII only, so no
 * other host and no header injection), plus "#post-ID" after a post
 * action, so the reader lands where they were; without a usable `back`,
 * to the action's own page.  A script's POST (Accept: application/json)
 * answers 200 with the JSON the action built, so the page changes in
 * place (www/tally.js).
 */
#ifndef TALLY_ACT_H
#define TALLY_ACT_H

#include <jansson.h>

#include "web/req.h"

#define ACT_BACK_MAX	512

/* 1 when s may be a redirect target: a path on this site. */
int	act_back_ok(const char *s);
/* The request's `back` field when it may be used, else NULL. */
const char *act_back(const struct req *);
/* 303 to `back` (or dflt), with "#post-<post_id>" when post_id > 0.
 * Returns 0. */
int	act_redirect(struct req *, const char *dflt, long long post_id);
/* 200 with o as compact JSON; takes o's reference.  Returns 0. */
int	act_json(struct req *, json_t *o);
/* The hidden `back` field of a form on this page: where the request that
 * built the page came from (nothing when that cannot be a target). */
void	act_back_field(struct req *);
/* The same field naming path instead (nothing when it cannot be a
 * target). */
void	act_back_to(struct req *, const char *path);

#endif
