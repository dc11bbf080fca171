/* topview.c -- the admin leaderboard page's model; see topview.h. */
#include <stdlib.h>

#include "base/buf.h"
#include "social/topview.h"

int
topview_load(struct app *a, enum family fam, int n, struct top_view *v)
{
	long long uids[LB_MAX], vals[LB_MAX];
	struct delta *ds;
	struct count *out;
	int k, i, j;

	v->rows.v = NULL;
	v->rows.n = 0;
	v->counts = NULL;
	if ((k = lb_top(a, fam, 0, n, uids, vals)) < 0)
		return -1;
	if (people_by_ids(a, uids, vals, k, &v->rows) == -1) {
		people_free(&v->rows);
		return -2;
	}
	k = v->rows.n;
	ds = xcalloc((size_t)k * PROFILE_NCOUNTS + 1, sizeof(*ds));
	out = xcalloc((size_t)k * PROFILE_NCOUNTS + 1, sizeof(*out));
	for (i = 0; i < k; i++)
		for (j = 0; j < PROFILE_NCOUNTS; j++) {
			ds[PROFILE_NCOUNTS * i + j].fam = profile_fams[j];
			ds[PROFILE_NCOUNTS * i + j].k1 = v->rows.v[i].id;
		}
	cstore_get(a, ds, PROFILE_NCOUNTS * k, out);	/* failures: ok 0 */
	v->counts = xcalloc((size_t)k + 1, sizeof(*v->counts));
	for (i = 0; i < k; i++)
		for (j = 0; j < PROFILE_NCOUNTS; j++)
			v->counts[i][j] = out[PROFILE_NCOUNTS * i + j];
	free(out);
	free(ds);
	return 0;
}

void
topview_free(struct top_view *v)
{
	people_free(&v->rows);
	free(v->counts);
	v->counts = NULL;
}
