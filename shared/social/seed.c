/* seed.c -- bulk demo and benchmark data; see seed.h. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/auth.h"
#include "base/buf.h"
#include "base/clock.h"
#include "base/fault.h"
#include "base/log.h"
#include "count/lb.h"
#include "count/recount.h"
#include "social/account.h"
#include "social/seed.h"
#include "social/seed_events.h"
#include "social/seed_views.h"
#include "store/dbq.h"

/* First names: the demo logins, and with surnames every seeded name. */
static const char *const demo_names[] = {
	"alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
	"ivan", "judy", "mallory", "niaj", "olivia", "peggy", "rupert",
	"sybil", "trent", "victor", "walter", "yuki", "zoe", "kenji", "mei",
	"lin", "arjun", "fatima", "lucas", "sofia", "omar", "ines", "amara",
	"bruno", "chloe", "diego", "elena", "felix", "gita", "hugo", "isla",
	"jonas", "kofi", "lena", "marco", "nadia", "oscar", "priya", "quinn",
	"rosa", "sami", "tara", "umar", "vera", "wen", "xavier", "yara",
	"zain", "anya", "bea", "caleb", "dara",
};
static const char *const surnames[] = {
	"Moreau", "Okafor", "Tanaka", "Silva", "Novak", "Haddad", "Larsen",
	"Kim", "Rossi", "Mensah", "Fischer", "Ivanova", "Costa", "Nguyen",
	"Brennan", "Sato", "Ahmed", "Lindqvist", "Duarte", "Kowalski",
	"Abara", "Chen", "Petrov", "Garcia", "Osei", "Yamamoto", "Dubois",
	"Singh", "Walsh", "Bergman",
};
#define NFIRST	(sizeof(demo_names) / sizeof(demo_names[0]))
#define NLAST	(sizeof(surnames) / sizeof(surnames[0]))
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

/* The demo's first user (alice) comes back to what a busy hour left:
 * SEED_BURST likes of her newest post and SEED_BURST new followers, all
 * in the last hour, so her first page of notifications shows groups
 * (social/notify.h).  Events appended at evs[nev]; how many. */
static long
demo_burst(struct seed_event *evs, long nev, const long long *uids, long nu,
    const long long *pids, const long long *pauthor, const long long *ptime,
    long np, long long now)
{
	long i, j, k, n = 0, post = -1, liked = 0, followed = 0;
	int dup;

	for (k = 0; k < np; k++)
		if (pauthor[k] == uids[0] && (post < 0 || ptime[k] > ptime[post]))
			post = k;
	for (i = 1; i < nu && (liked < SEED_BURST || followed < SEED_BURST);
	    i++) {
		if (post >= 0 && liked < SEED_BURST) {
			for (dup = 0, j = 0; j < nev && !dup; j++)
				dup = evs[j].kind == SEED_LIKE &&
				    evs[j].actor == uids[i] &&
				    evs[j].target == pids[post];
			if (!dup) {
				evs[nev + n] = (struct seed_event){
				    .t = now - 3600 * 1000 + liked * 60000,
				    .actor = uids[i], .target = pids[post],
				    .owner = uids[0], .kind = SEED_LIKE };
				n++;
				liked++;
			}
		}
		if (followed < SEED_BURST) {
			for (dup = 0, j = 0; j < nev && !dup; j++)
				dup = evs[j].kind == SEED_FOLLOW &&
				    evs[j].actor == uids[i] &&
				    evs[j].target == uids[0];
			if (!dup) {
				evs[nev + n] = (struct seed_event){
				    .t = now - 3000 * 1000 + followed * 60000,
				    .actor = uids[i], .target = uids[0],
				    .owner = uids[0], .kind = SEED_FOLLOW };
				n++;
				followed++;
			}
		}
	}
	return n;
}

static int
by_id(const void *x, const void *y)
{
	const long long *a = x, *b = y;

	return *a < *b ? -1 : *a > *b;
}

/* react[i]: the likes and comments that post pids[i] got (ids ascending:
 * they grow with the insert order). */
static void
reactions(const struct seed_event *evs, long nev, const long long *pids,
    long np, long *react)
{
	const long long *at;
	long i;

	for (i = 0; i < nev; i++) {
		if (!evs[i].made || (evs[i].kind != SEED_LIKE &&
		    evs[i].kind != SEED_COMMENT))
			continue;
		at = bsearch(&evs[i].target, pids, (size_t)np, sizeof(*pids),
		    by_id);
		if (at != NULL)
			react[at - pids]++;
	}
}

/* The user behind Zipf rank r of the authors: rank r's, but in the demo
 * its first user (alice), the most followed, swaps with rank
 * SEED_FIRST_RANK: a star of a reader, not the site's busiest author, so
 * that her feed is mostly the people she follows. */
static long
author_rank(const struct seed_opts *o, long r, long nu)
{
	if (!o->demo || nu <= SEED_FIRST_RANK)
		return r;
	return r == 0 ? SEED_FIRST_RANK : r == SEED_FIRST_RANK ? 0 : r;
}

int
seed_run(struct app *a, const struct seed_opts *o)
{
	struct db *d = a->db;
	unsigned long long rs = o->rng ? o->rng : 0x9E3779B97F4A7C15ULL;
	long long *uids = NULL, *pids = NULL, tids[8], now = clock_wall_ms();
	long long *pauthor = NULL, *ptime = NULL;
	long *react = NULL;	/* per published post: likes and comments */
	long long span = 30LL * 86400 * 1000, t;
	struct seed_event *evs = NULL;
	long made[4] = { 0, 0, 0, 0 }, nev, nrep = o->reposts;
	double *uz = NULL, *pz = NULL;
	struct buf text = { 0 };
	char hash[AUTH_HASH_MAX], own[AUTH_HASH_MAX], login[40], name[64];
	long long uid;
	struct dbq *s;
	long i, nu = 0, np = 0, nviews = 0, ndemo = (long)(sizeof(demo_names) /
	    sizeof(demo_names[0]));
	int rc = -1;
	size_t k;

	if (o->users < 2)
		return -1;
	if (auth_hash("password", 8, 1, hash) == -1)
		return -1;
	uids = xcalloc((size_t)o->users, sizeof(*uids));
	pids = xcalloc((size_t)(o->posts > 0 ? o->posts : 1), sizeof(*pids));
	pauthor = xcalloc((size_t)(o->posts > 0 ? o->posts : 1), sizeof(*pids));
	ptime = xcalloc((size_t)(o->posts > 0 ? o->posts : 1), sizeof(*pids));
	react = xcalloc((size_t)(o->posts > 0 ? o->posts : 1), sizeof(*react));
	if (db_begin(d) == -1)
		goto out;
	for (k = 0; k < sizeof(topics) / sizeof(topics[0]); k++) {
		s = dbq_stmt(d, STMT_TOPIC_UPSERT);
		dbq_bind_text(s, 1, topics[k], -1);
		dbq_bind_i64(s, 2, now - span);
		tids[k] = dbq_step(s) == DBQ_ROW ?
		    dbq_i64(s, 0) : 1;
		dbq_done(s);
	}
	for (i = 0; i < o->users; i++) {
		k = o->demo && i < ndemo ? (size_t)i : rnd(&rs) % NFIRST;
		snprintf(name, sizeof(name), "%c%s %s", demo_names[k][0] - 'a' +
		    'A', demo_names[k] + 1, surnames[(i * 7 + (long)k) % (long)NLAST]);
		if (o->demo && i < ndemo)
			snprintf(login, sizeof(login), "%s", demo_names[i]);
		else
			snprintf(login, sizeof(login), "user%07lu%03u", (unsigned long)i,
			    (unsigned)(rnd(&rs) % 1000));
		/* demo accounts each get their own salt; bulk data shares
		 * one hash (a million argon2id runs would take minutes) */
		if (o->demo && i < ndemo &&
		    auth_hash("password", 8, 1, own) == -1)
			goto fail;
		s = dbq_stmt(d, STMT_USER_INSERT);
		dbq_bind_text_copy(s, 1, login, -1);
		dbq_bind_text_copy(s, 2, name, -1);
		dbq_bind_text(s, 3, o->demo && i < ndemo ? own : hash, -1);
		dbq_bind_int(s, 4, 0);
		dbq_bind_i64(s, 5, now - span);
		uid = dbq_step(s) == DBQ_ROW ? dbq_i64(s, 0) : 0;
		dbq_done(s);
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
	for (i = 0; i < o->posts; i++) {
		long long author = uids[author_rank(o, zipf_pick(uz, nu, &rs),
		    nu)];
		int pub = rnd(&rs) % 20 != 0;	/* 5% drafts */

		/* Times grow with i, so ids and publish order agree. */
		t = now - span + span * i / (o->posts + 1);
		sentence(&text, &rs);
		s = dbq_stmt(d, STMT_POST_INSERT);
		dbq_bind_i64(s, 1, author);
		dbq_bind_i64(s, 2, tids[rnd(&rs) % 8]);
		dbq_bind_text_copy(s, 3, text.p, -1);
		dbq_bind_int(s, 4, pub);
		dbq_bind_i64(s, 5, t);
		if (dbq_step(s) == DBQ_ROW && pub) {	/* drafts get nothing */
			pids[np] = dbq_i64(s, 0);
			pauthor[np] = author;
			ptime[np++] = t;
		}
		dbq_done(s);
	}
	nev = o->follows + (np > 0 ? o->likes + o->comments + nrep : 0);
	evs = xcalloc((size_t)nev + 1 + SEED_BURST * 2, sizeof(*evs));
	nev = 0;
	/* Follows in the first half of the span; o->follows draws (a pair
	 * drawn twice is one follow). */
	for (i = 0; i < o->follows; i++) {
		struct seed_event *e = &evs[nev];
		long who = (long)(rnd(&rs) % (unsigned long long)nu);

		e->kind = SEED_FOLLOW;
		e->actor = uids[who];
		e->target = e->owner = uids[zipf_pick(uz, nu, &rs)];
		e->t = now - span + (long long)(rnd01(&rs) * (double)span / 2);
		/* the demo's last SEED_BURST users follow its first in her
		 * busy hour (demo_burst()), not before */
		if (e->actor != e->target && !(o->demo && e->target == uids[0] &&
		    who >= nu - SEED_BURST))
			nev++;
	}
	if (np > 0) {
		pz = zipf_table(np, 0.9);
		for (i = 0; i < o->likes + o->comments + nrep; i++) {
			struct seed_event *e = &evs[nev++];
			long k = np - 1 - zipf_pick(pz, np, &rs);

			e->kind = i < o->likes ? SEED_LIKE : i < o->likes +
			    o->comments ? SEED_COMMENT : SEED_REPOST;
			e->target = pids[k];
			e->owner = pauthor[k];
			/* nobody likes or reposts their own post (a comment
			 * of one's own is a reply: it stays) */
			do
				e->actor = uids[rnd(&rs) %
				    (unsigned long long)nu];
			while (e->actor == e->owner && e->kind != SEED_COMMENT);
			/* after the post: nothing reacts before its cause */
			e->t = ptime[k] + 1 + (long long)(rnd01(&rs) *
			    (double)(now - ptime[k] - 1));
		}
	}
	if (o->demo)
		nev += demo_burst(evs, nev, uids, nu, pids, pauthor, ptime, np,
		    now);
	if (seed_events_write(d, evs, nev, now - SEED_READ_AGE, &rs, made) == -1)
		goto fail;
	if (db_commit(d) == -1)
		goto fail;
	fault_point("seed-rows");
	reactions(evs, nev, pids, np, react);
	/* The counters of the new rows, by the catalog's own recount. */
	if (recount_write_all(a) == -1)
		goto out;
	lb_invalidate(a);	/* boards are rebuilt from the new counters */
	/* The new rows settled as a live site's (sql.c): until then a
	 * PostgreSQL server reads a home feed at half its speed
	 * (docs/BENCHMARKS.md). */
	if ((s = dbq_stmt(d, STMT_AFTER_LOAD)) == NULL ||
	    dbq_step(s) == DBQ_ERR)
		log_warn("seed: settling the new rows: %s", dbq_errmsg(d));
	dbq_done(s);
	/* after the rows: a view counts only on a post that is there */
	if (o->views > 0 && (nviews = seed_views(a, pids, pauthor, react, np,
	    o->views, &rs)) == -1)
		log_warn("seed: too many posts for seeded views");
	if (!o->quiet)
		log_info("seeded %ld users, %ld published posts, %ld follows, "
		    "%ld likes, %ld comments, %ld reposts and %ld views, with "
		    "their notifications", nu, np, made[SEED_FOLLOW],
		    made[SEED_LIKE], made[SEED_COMMENT], made[SEED_REPOST],
		    nviews > 0 ? nviews : 0);
	rc = 0;
	goto out;
fail:
	db_rollback(d);
out:
	free(uids);
	free(pids);
	free(pauthor);
	free(ptime);
	free(react);
	free(evs);
	free(uz);
	free(pz);
	buf_free(&text);
	return rc;
}
