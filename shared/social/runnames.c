/* runnames.c -- names for a drift report's examples; see runnames.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "count/counters.h"
#include "social/people.h"
#include "social/runnames.h"
#include "store/dbq.h"

static void
want(struct run_names *rn, long long id, int topic)
{
	int i;

	if (id <= 0 || rn->n >= RUN_NAMES_MAX)
		return;
	for (i = 0; i < rn->n; i++)
		if (rn->id[i] == id && rn->topic[i] == topic)
			return;
	rn->id[rn->n] = id;
	rn->topic[rn->n] = topic;
	rn->name[rn->n][0] = '\0';
	rn->n++;
}

static int
topic_slug(struct app *a, long long id, char *out, size_t sz)
{
	struct dbq *s = dbq_stmt(a->db, STMT_TOPIC_BY_ID);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, id);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		dbq_col_text(s, 0, out, sz);
	dbq_done(s);
	return rc == DBQ_ERR ? -1 : 0;
}

int
runnames_load(struct app *a, const struct rec_report *rep,
    struct run_names *rn)
{
	long long ids[RUN_NAMES_MAX], k1, k2;
	struct people ps;
	enum family fam;
	int i, j, n = 0, rc = 0;

	memset(rn, 0, sizeof(*rn));
	for (i = 0; i < REC_FAMILIES; i++) {
		const struct rec_family *f = &rep->fam[i];

		if ((fam = counters_family(f->name)) == FAM__MAX)
			continue;	/* like_count: ranges of posts */
		for (j = 0; j < f->nex; j++) {
			k2 = 0;
			if (sscanf(f->ex[j], "%lld:%lld", &k1, &k2) < 1)
				continue;
			switch (families[fam].obj) {
			case OBJ_USER:
				want(rn, k1, 0);
				break;
			case OBJ_TOPIC:
				want(rn, k1, 1);
				break;
			case OBJ_USER_TOPIC:
				want(rn, k1, 0);
				want(rn, k2, 1);
				break;
			case OBJ_POST:
				break;
			}
		}
	}
	for (i = 0; i < rn->n; i++)
		if (!rn->topic[i])
			ids[n++] = rn->id[i];
	if (n > 0 && people_by_ids(a, ids, NULL, n, &ps) == 0)
		for (i = 0; i < ps.n; i++)
			for (j = 0; j < rn->n; j++)
				if (!rn->topic[j] && rn->id[j] == ps.v[i].id)
					snprintf(rn->name[j], sizeof(rn->name[j]),
					    "%s", ps.v[i].login);
	if (n > 0)
		people_free(&ps);
	for (i = 0; i < rn->n && rc == 0; i++)
		if (rn->topic[i])
			rc = topic_slug(a, rn->id[i], rn->name[i],
			    sizeof(rn->name[i]));
	return rc;
}

const char *
runnames_get(const struct run_names *rn, long long id, int topic)
{
	int i;

	for (i = 0; i < rn->n; i++)
		if (rn->id[i] == id && rn->topic[i] == topic &&
		    rn->name[i][0] != '\0')
			return rn->name[i];
	return NULL;
}
