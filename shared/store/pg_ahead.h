/* pg_ahead.h -- statements sent ahead of a reader group's pages in the
 * PostgreSQL connection's pipeline (pg.h: pg_ahead_send(), which
 * prepares each first), their results read in one wait (store/ only).
 *
 * pg_ahead_push() sends q, prepared and bound, opening the pipeline for
 * the group's first: its ticket, or 0.  pg_ahead_wait() reads every
 * result of those sent, in one wait (pg.c calls it before any other
 * statement runs); pg_ahead_take() answers statement id with the result
 * of ticket in it, stepped as if it ran (NULL: none kept, the page runs
 * it); pg_ahead_drop() frees the results not taken (the next group's
 * first send does too); pg_ahead_taken() counts the results taken
 * (/metrics). */
#ifndef TALLY_PG_AHEAD_H
#define TALLY_PG_AHEAD_H

struct dbq;
struct pgdb;
struct pgq;

int		 pg_ahead_push(struct pgq *);
void		 pg_ahead_wait(struct pgdb *);
struct dbq	*pg_ahead_take(struct pgdb *, int id, int ticket);
void		 pg_ahead_drop(struct pgdb *);
unsigned long long pg_ahead_taken(const struct pgdb *);

#endif
