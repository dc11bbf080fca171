/* pg_ahead.c -- statements sent ahead of a reader group's pages, in
 * the connection's pipeline; see pg_ahead.h.  pg.c runs every other statement
 * after emptying what is here (pg_ahead_wait()).
 *
 * A reader's group sends the statement of each of its pages that can be
 * known before they load (a feed's posts, by the ids its first round
 * trip brought), and reads every result in one wait (one round trip for
 * the group, where each page's load waited for its own:
 * docs/BENCHMARKS.md).  libpq's pipeline mode; the statements run in one
 * implicit transaction up to the sync (read only: each still sees what
 * was committed before it ran).  A result waits in p->ahead until its
 * page takes it, or the next group drops it. */
#include <libpq-fe.h>

#include "base/log.h"
#include "store/pg_ahead.h"
#include "store/pg_int.h"

/* A ticket: the group (p->ahead_gen, kept to 16 bits) and the place in
 * it, so that a page never takes another group's result. */
#define AHEAD_TICKET(gen, i)	((int)((gen) % 65536) * PG_AHEAD_MAX + (i) + 1)

int
pg_ahead_push(struct pgq *q)
{
	struct pgdb *p = q->p;

	if (!p->ahead_open) {
		if (!PQenterPipelineMode(p->c))
			return 0;
		p->ahead_open = 1;
		p->ahead_gen++;
	}
	if (p->nahead == PG_AHEAD_MAX ||
	    !PQsendQueryPrepared(p->c, q->name, q->n, q->val + 1,
	    q->len + 1, q->fmt + 1, 0))
		return 0;
	if (p->nstmt != NULL)
		(*p->nstmt)++;
	p->ahead[p->nahead] = NULL;
	p->ahead_q[p->nahead] = q;
	return AHEAD_TICKET(p->ahead_gen, p->nahead++);
}

void
pg_ahead_wait(struct pgdb *p)
{
	PGresult *r;
	int i, synced = 0;

	if (!p->ahead_open)
		return;
	p->ahead_open = 0;
	p->trips++;
	/* No sync sent, the server keeps the results to itself: nothing
	 * to wait for (no page takes one), and the connection is made
	 * again before its next statement. */
	if (!PQpipelineSync(p->c)) {
		log_err("postgres: pipeline: %s", PQerrorMessage(p->c));
		p->broken = 1;
		return;
	}
	/* each statement's result, then a NULL; the sync's last (after a
	 * failure, the statements after it answer "aborted": each page
	 * whose result is not kept runs its statement itself) */
	for (i = 0; i < p->nahead && (r = PQgetResult(p->c)) != NULL; i++) {
		if (PQresultStatus(r) == PGRES_PIPELINE_SYNC) {
			PQclear(r);
			synced = 1;
			break;
		}
		if (PQresultStatus(r) == PGRES_TUPLES_OK)
			p->ahead[i] = r;
		else
			PQclear(r);
		while ((r = PQgetResult(p->c)) != NULL)
			PQclear(r);
	}
	while (!synced && (r = PQgetResult(p->c)) != NULL) {
		synced = PQresultStatus(r) == PGRES_PIPELINE_SYNC;
		PQclear(r);
	}
	if (!PQexitPipelineMode(p->c)) {	/* no statement could follow */
		log_err("postgres: pipeline: %s", PQerrorMessage(p->c));
		p->broken = 1;
	}
}

struct dbq *
pg_ahead_take(struct pgdb *p, int id, int ticket)
{
	struct pgq *q = p->st[id];
	int i = (ticket - 1) % PG_AHEAD_MAX;

	if (ticket <= 0 || p->ahead_open || q == NULL || q->ran ||
	    i >= p->nahead || ticket != AHEAD_TICKET(p->ahead_gen, i) ||
	    p->ahead[i] == NULL || p->ahead_q[i] != q)
		return NULL;
	q->res = p->ahead[i];
	p->ahead[i] = NULL;
	p->taken++;
	q->ran = 1;
	q->nrows = PQntuples(q->res);
	q->row = -1;
	if (q->nrows > p->held)
		p->held = q->nrows;
	return &q->q;
}

void
pg_ahead_drop(struct pgdb *p)
{
	int i;

	if (p->ahead_open)
		pg_ahead_wait(p);
	for (i = 0; i < p->nahead; i++)
		PQclear(p->ahead[i]);
	p->nahead = 0;
}

unsigned long long
pg_ahead_taken(const struct pgdb *p)
{
	return p->taken;
}
