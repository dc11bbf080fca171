/* seed.c -- bulk demo and benchmark data; see seed.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/auth.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/log.h"
#include "count/lb.h"
#include "count/recount.h"
#include "social/account.h"
#include "social/seed.h"
#include "store/query.h"

static const char *const demo_names[] = {
	"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
	"ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert",
	"sybil", "trent", "victor", "walter", "yuki", "zoe", "kenji", "mei",
	"lin", "arjun", "fatima", "lucas", "sofia", "omar", "ines",
};
static const char *const topics[] = {
	"general", "news", "tech", "music", "food", "travel", "sports", "books",
};
static const char *const words[] = {
	"counting", "coffee", "morning", "redis", "weekend", "release", "train",
	"sunset", "garden", "deploy", "concert", "recipe", "marathon", "chapter",
	"idea", "city", "river", "snow", "bread", "guitar", "sqlite", "lunch",
	"museum", "beach", "notebook", "podcast", "bug", "fix", "friends", "rain",
};

/* xorshift64*: fast, seedable, good enough for demo data. */
static unsigned long long
rnd(unsigned long long *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 2685821657736338717ULL;
}

static double
rnd01(unsigned long long *s)
{
	return (double)(rnd(s) >> 11) / 9007199254740992.0;
}

/* Cumulative Zipf weights over n ranks, for inverse-CDF sampling. */
static double *
zipf_table(long n, double s)
{
	double *c = xcalloc((size_t)n, sizeof(double)), sum = 0;
	long i;

	for (i = 0; i < n; i++) {
		sum += 1.0 / pow((double)(i + 1), s);
		c[i] = sum;
	}
	for (i = 0; i < n; i++)
		c[i] /= sum;
	return c;
}

static long
zipf_pick(const double *c, long n, unsigned long long *s)
{
	double u = rnd01(s);
	long lo = 0, hi = n - 1, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (c[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void
sentence(struct buf *b, unsigned long long *s)
{
	int i, n = 4 + (int)(rnd(s) % 14);

	buf_reset(b);
	for (i = 0; i < n; i++) {
		const char *w = words[rnd(s) % (sizeof(words) / sizeof(words[0]))];

		if (i == 0) {
			buf_putc(b, (char)(w[0] - 'a' + 'A'));
			buf_puts(b, w + 1);
		} else {
			buf_putc(b, ' ');
			buf_puts(b, w);
		}
	}
	buf_putc(b, '.');
}

static int
step_done(struct db *d, struct dbq *s)
{
	int rc;

	while ((rc = dbq_step(s)) == DBQ_ROW)
		;
	db_done(s);
	if (rc != DBQ_DONE) {
		log_err("seed: %s", db_errmsg(d));
		return -1;
	}
	return 0;
}

int
seed_run(struct app *a, const struct seed_opts *o)
{
	struct db *d = &a->db;
	unsigned long long rs = o->rng ? o->rng : 0x9E3779B97F4A7C15ULL;
	long long *uids = NULL, *pids = NULL, tids[8], now = clock_wall_ms();
	long long span = 30LL * 86400 * 1000, t;
	double *uz = NULL, *pz = NULL;
	struct buf text = { 0 };
	char hash[AUTH_HASH_MAX], login[40], name[64];
	long long uid;
	struct dbq *s;
	long i, made, nu = 0, np = 0, ndemo = (long)(sizeof(demo_names) /
	    sizeof(demo_names[0]));
	int rc = -1;
	size_t k;

	if (o->users < 2)
		return -1;
	if (auth_hash("password", 8, 1, hash) == -1)
		return -1;
	uids = xcalloc((size_t)o->users, sizeof(*uids));
	pids = xcalloc((size_t)(o->posts > 0 ? o->posts : 1), sizeof(*pids));
	if (db_begin(d) == -1)
		goto out;
	for (k = 0; k < sizeof(topics) / sizeof(topics[0]); k++) {
		s = db_stmt(d, STMT_TOPIC_UPSERT);
		dbq_bind_text(s, 1, topics[k], -1);
		dbq_bind_i64(s, 2, now - span);
		tids[k] = dbq_step(s) == DBQ_ROW ?
		    dbq_i64(s, 0) : 1;
		db_done(s);
	}
	for (i = 0; i < o->users; i++) {
		if (o->demo && i < ndemo) {
			snprintf(login, sizeof(login), "%s", demo_names[i]);
			snprintf(name, sizeof(name), "%c%s", demo_names[i][0] -
			    'a' + 'A', demo_names[i] + 1);
		} else {
			snprintf(login, sizeof(login), "user%07lu%03u", (unsigned long)i,
			    (unsigned)(rnd(&rs) % 1000));
			snprintf(name, sizeof(name), "User %ld", i);
		}
		s = db_stmt(d, STMT_USER_INSERT);
		dbq_bind_text_copy(s, 1, login, -1);
		dbq_bind_text_copy(s, 2, name, -1);
		dbq_bind_text(s, 3, hash, -1);
		dbq_bind_int(s, 4, 0);
		dbq_bind_i64(s, 5, now - span);
		uid = dbq_step(s) == DBQ_ROW ? dbq_i64(s, 0) : 0;
		db_done(s);
		if (uid > 0 && account_index(d, uid, login, name) == -1)
			goto fail;
		if (uid > 0)
			uids[nu++] = uid;
	}
	if (nu < 2) {
		log_err("seed: no new users (logins taken?)");
		goto fail;
	}
	uz = zipf_table(nu, 1.05);
	/* Draws until o->follows distinct pairs exist (or 4x the draws). */
	for (i = 0, made = 0; made < o->follows && i < 4 * o->follows; i++) {
		long long fr = uids[rnd(&rs) % (unsigned long long)nu];
		long long fe = uids[zipf_pick(uz, nu, &rs)];

		if (fr == fe)
			continue;
		s = db_stmt(d, STMT_FOLLOW_INSERT);
		dbq_bind_i64(s, 1, fr);
		dbq_bind_i64(s, 2, fe);
		dbq_bind_i64(s, 3, now - span + (long long)(rnd01(&rs) *
		    (double)span / 2));
		if (step_done(d, s) == -1)
			goto fail;
		made += db_changes(d);
	}
	for (i = 0; i < o->posts; i++) {
		long long author = uids[zipf_pick(uz, nu, &rs) % nu];

		/* Times grow with i, so ids and publish order agree. */
		t = now - span + span * i / (o->posts + 1);
		sentence(&text, &rs);
		s = db_stmt(d, STMT_POST_INSERT);
		dbq_bind_i64(s, 1, author);
		dbq_bind_i64(s, 2, tids[rnd(&rs) % 8]);
		dbq_bind_text_copy(s, 3, text.p, -1);
		dbq_bind_int(s, 4, rnd(&rs) % 20 != 0);	/* 5% drafts */
		dbq_bind_i64(s, 5, t);
		if (dbq_step(s) == DBQ_ROW)
			pids[np++] = dbq_i64(s, 0);
		db_done(s);
	}
	if (np > 0) {
		pz = zipf_table(np, 0.9);
		for (i = 0; i < o->likes; i++) {
			s = db_stmt(d, STMT_LIKE_INSERT);
			dbq_bind_i64(s, 1, pids[np - 1 - zipf_pick(pz, np, &rs)]);
			dbq_bind_i64(s, 2, uids[rnd(&rs) % (unsigned long long)nu]);
			dbq_bind_i64(s, 3, now - (long long)(rnd01(&rs) * 1e8));
			if (step_done(d, s) == -1)
				goto fail;
		}
		for (i = 0; i < o->comments; i++) {
			sentence(&text, &rs);
			s = db_stmt(d, STMT_COMMENT_INSERT);
			dbq_bind_i64(s, 1, pids[np - 1 - zipf_pick(pz, np, &rs)]);
			dbq_bind_i64(s, 2, uids[rnd(&rs) % (unsigned long long)nu]);
			dbq_bind_text_copy(s, 3, text.p, -1);
			dbq_bind_i64(s, 4, now - (long long)(rnd01(&rs) * 1e8));
			if (step_done(d, s) == -1)
				goto fail;
		}
	}
	if (db_commit(d) == -1)
		goto fail;
	/* The counters of the new rows, by the catalog's own recount. */
	if (recount_write_all(a) == -1)
		goto out;
	lb_invalidate(a);	/* boards are rebuilt from the new counters */
	if (!o->quiet)
		log_info("seeded %ld users, %ld posts, %ld follows, %ld likes "
		    "and %ld comments drawn", nu, np, made, o->likes, o->comments);
	rc = 0;
	goto out;
fail:
	db_rollback(d);
out:
	free(uids);
	free(pids);
	free(uz);
	free(pz);
	buf_free(&text);
	return rc;
}
