/* field.h -- a request's form and query fields and its path arguments,
 * validated (valid.h).
 *
 * Page code reads a field only through these: each names the field's
 * kind, whose rules are valid.c's table.  A missing or bad required
 * field answers 400 naming the field (the refusal is kept in the
 * request, r->bad_field, for a form page to mark): the caller only
 * returns.  Values are normalised copies owned by the request.
 */
#ifndef TALLY_FIELD_H
#define TALLY_FIELD_H

#include "base/valid.h"
#include "web/req.h"

/* The field's value from the form (POST) or query (GET), validated as
 * kind and normalised.  Owned by the request.  On a missing or bad field
 * answers 400 naming the field and returns NULL. */
const char	*field_need(struct req *, const char *field, enum valid kind);
/* Like field_need, but an absent or empty field gives dflt (no answer). */
const char	*field_opt(struct req *, const char *field, enum valid kind,
		    const char *dflt);
/* 1 when the request carries field, empty or not; nothing is answered:
 * for a form whose parts send different fields (/settings). */
int		 field_has(const struct req *, const char *field);
/* The field validated as kind, or NULL when it is absent or not valid,
 * answering nothing: for a field whose bad value is no 400 (a login's
 * password that is no password is a wrong pair, 401). */
const char	*field_try(struct req *, const char *field, enum valid kind);
/* Path argument i of the route (/u/LOGIN) validated as kind and
 * normalised; on a missing or bad one answers 404 with msg (a path
 * naming what cannot exist names nothing) and returns NULL. */
const char	*field_arg(struct req *, int i, enum valid kind,
		    const char *msg);
/* The path's one segment after prefix ("/u/" of /u/LOGIN) validated as
 * kind and normalised, or NULL (another path, a bad value), answering
 * nothing: for a page whose first round trip is sent before its route's
 * arguments are read (social.c: a reader's group). */
const char	*field_path_try(struct req *, const char *prefix,
		    enum valid kind);
/* A number field of kind (VALID_PAGE, VALID_ID, VALID_TOP_N): dflt when
 * absent; a value sent, empty included, must be valid, else answers 400
 * and returns -1. */
long long	 field_int(struct req *, const char *field, enum valid kind,
		    long long dflt);
/* ?page=N (1 when absent); 0 after answering 400. */
long long	 field_page(struct req *);
/* A list of ids, "ID.ID..." (each decimal 1..2^53): the first max into
 * out; how many (0 when absent or empty), or -1 after answering 400. */
int		 field_ids(struct req *, const char *field, long long *out,
		    int max);
#endif
