/* field.h -- a request's form and query fields, validated (valid.h).
 *
 * A missing or bad required field answers 400 naming the field: the
 * caller only returns.
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
/* ?page=N (1 when absent); 0 after answering 400. */
long long	 field_page(struct req *);
/* A list of ids, "ID.ID..." (each decimal 1..2^53): the first max into
 * out; how many (0 when absent or empty), or -1 after answering 400. */
int		 field_ids(struct req *, const char *field, long long *out,
		    int max);
#endif
