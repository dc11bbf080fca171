/* postlist.c -- posts with their counts, for pages; see postlist.h. */
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "social/postlist.h"
#include "store/sql.h"

const enum family post_card_fams[PC_NCOUNTS] = {
	[PC_LIKES] = FAM_POST_LIKES,
	[PC_COMMENTS] = FAM_POST_COMMENTS,
	[PC_REPOSTS] = FAM_POST_REPOSTS,
	[PC_VIEWS] = FAM_POST_VIEWS,
};

void
postlist_counts_send(struct app *a, const struct post_card *cs, int n,
    const struct delta *more, int nmore, unsigned keep, struct cards_q *q)
{
	size_t total = (size_t)n * PC_NCOUNTS + (size_t)nmore;
	int i, j;

	q->n = n;
	q->nmore = nmore;
	q->ds = xcalloc(total + 1, sizeof(*q->ds));
	for (i = 0; i < n; i++)
		for (j = 0; j < PC_NCOUNTS; j++) {
			q->ds[PC_NCOUNTS * i + j].fam = post_card_fams[j];
			q->ds[PC_NCOUNTS * i + j].k1 = cs[i].p.id;
			q->ds[PC_NCOUNTS * i + j].owner = cs[i].p.user_id;
		}
	for (i = 0; i < nmore; i++)
		q->ds[(size_t)n * PC_NCOUNTS + (size_t)i] = more[i];
	cstore_send_kept(a, q->ds, (int)total, keep, &q->q);
}

void
postlist_counts_recv(struct app *a, struct cards_q *q,
    struct post_card *cs, struct count *more_out)
{
	size_t total = (size_t)q->n * PC_NCOUNTS + (size_t)q->nmore;
	struct count *out = xcalloc(total + 1, sizeof(*out));
	int i, j;

	cstore_recv(a, &q->q, out);	/* failures: ok == 0 */
	for (i = 0; i < q->n; i++)
		for (j = 0; j < PC_NCOUNTS; j++)
			cs[i].n[j] = out[PC_NCOUNTS * i + j];
	for (i = 0; more_out != NULL && i < q->nmore; i++)
		more_out[i] = out[(size_t)q->n * PC_NCOUNTS + (size_t)i];
	free(out);
	free(q->ds);
	q->ds = NULL;
}

void
postlist_counts_with(struct app *a, struct post_card *cs, int n,
    const struct delta *more, int nmore, struct count *more_out)
{
	struct cards_q q;

	if ((size_t)n * PC_NCOUNTS + (size_t)nmore == 0)
		return;
	postlist_counts_send(a, cs, n, more, nmore, 0, &q);
	postlist_counts_recv(a, &q, cs, more_out);
}

void
postlist_counts(struct app *a, struct post_card *cs, int n)
{
	postlist_counts_with(a, cs, n, NULL, 0, NULL);
}

/* Puts the cards in the order of ids (the timeline's, or the query's
 * that chose them): the statement returns them in no order of its own,
 * which spares SQLite a sorter a page.  A card swaps into its place:
 * at most n swaps of n searches, n being a page. */
static void
in_order_of(const long long *ids, int n, struct post_cards *cs)
{
	struct post_card tmp;
	int i, j, k = 0;

	for (i = 0; i < n && k < cs->n; i++) {
		for (j = k; j < cs->n && cs->v[j].p.id != ids[i]; j++)
			;
		if (j == cs->n)
			continue;	/* not visible: left out */
		if (j != k) {
			tmp = cs->v[k];
			cs->v[k] = cs->v[j];
			cs->v[j] = tmp;
		}
		k++;
	}
}

/* The list's statement: a reader's marks come with the rows. */
static enum stmt
list_stmt_id(long long reader, enum pc_list list)
{
	return list == PC_HOME ? STMT_HOME_BY_IDS : reader ?
	    STMT_POSTS_MARKS_BY_IDS : STMT_POSTS_BY_IDS;
}

/* The list's statement, bound (NULL: it could not be prepared). */
static struct dbq *
list_stmt(struct app *a, const long long *ids, int n, long long reader,
    enum pc_list list)
{
	struct dbq *s = dbq_stmt(a->db, list_stmt_id(reader, list));

	if (s == NULL)
		return NULL;
	dbq_bind_ids(s, 1, ids, n);
	if (reader)
		dbq_bind_i64(s, 2, reader);
	return s;
}

int
postlist_send(struct app *a, const long long *ids, int n, long long reader,
    enum pc_list list)
{
	if (n <= 0 || (list == PC_HOME && reader == 0) ||
	    !dbq_ahead_ok(a->db))
		return 0;
	return dbq_ahead_send(a->db, list_stmt(a, ids, n, reader, list));
}

int
postlist_ahead_ok(struct app *a)
{
	return dbq_ahead_ok(a->db);
}

void
postlist_ahead_wait(struct app *a)
{
	dbq_ahead_wait(a->db);
}

int
postlist_read_took(struct app *a, int ticket, const long long *ids, int n,
    long long reader, enum pc_list list, struct post_cards *out)
{
	struct dbq *s = NULL;
	int rc = DBQ_DONE;

	out->v = NULL;
	out->n = 0;
	if (n <= 0)
		return 0;
	if (list == PC_HOME && reader == 0)
		return -1;
	if (ticket > 0)
		s = dbq_ahead_take(a->db, list_stmt_id(reader, list), ticket);
	if (s == NULL && (s = list_stmt(a, ids, n, reader, list)) == NULL)
		return -1;
	out->v = xcalloc((size_t)n, sizeof(*out->v));
	while (out->n < n && (rc = dbq_step(s)) == DBQ_ROW) {
		post_from_row(s, &out->v[out->n].p);
		if (reader) {		/* the marks came with the rows */
			out->v[out->n].liked = dbq_int(s, POST_NCOLS);
			out->v[out->n].reposted = dbq_int(s, POST_NCOLS + 1);
		}
		if (list == PC_HOME)	/* "" when NULL */
			dbq_col_text(s, POST_NCOLS + 2, out->v[out->n].reposted_by,
			    sizeof(out->v[out->n].reposted_by));
		out->n++;
	}
	dbq_done(s);
	if (rc == DBQ_ERR) {
		postlist_free(out);
		return -1;
	}
	in_order_of(ids, n, out);
	return 0;
}

int
postlist_read(struct app *a, const long long *ids, int n,
    long long reader, enum pc_list list, struct post_cards *out)
{
	return postlist_read_took(a, 0, ids, n, reader, list, out);
}

int
postlist_marks(struct app *a, struct post_card *cs, int n, long long viewer)
{
	long long *ids, id;
	struct dbq *s;
	int i, rc = DBQ_DONE;

	if (viewer == 0 || n <= 0)
		return 0;
	if ((s = dbq_stmt(a->db, STMT_VIEWER_MARKS)) == NULL)
		return -1;
	ids = xcalloc((size_t)n, sizeof(*ids));
	for (i = 0; i < n; i++)
		ids[i] = cs[i].p.id;
	dbq_bind_i64(s, 1, viewer);
	dbq_bind_ids(s, 2, ids, n);
	while ((rc = dbq_step(s)) == DBQ_ROW) {
		id = dbq_i64(s, 0);
		for (i = 0; i < n; i++)
			if (cs[i].p.id == id) {
				if (dbq_int(s, 1) == 1)
					cs[i].liked = 1;
				else
					cs[i].reposted = 1;
			}
	}
	dbq_done(s);
	free(ids);
	return rc == DBQ_ERR ? -1 : 0;
}

void
postlist_free(struct post_cards *cs)
{
	int i;

	for (i = 0; i < cs->n; i++)
		post_free(&cs->v[i].p);
	free(cs->v);
	cs->v = NULL;
	cs->n = 0;
}

void
postlist_append(struct post_cards *to, struct post_cards *from)
{
	if (from->n == 0) {
		postlist_free(from);
		return;
	}
	to->v = xrealloc(to->v, (size_t)(to->n + from->n) * sizeof(*to->v));
	memcpy(to->v + to->n, from->v, (size_t)from->n * sizeof(*from->v));
	to->n += from->n;
	free(from->v);		/* the posts now belong to to */
	from->v = NULL;
	from->n = 0;
}
