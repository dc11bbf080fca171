/* fcache.c -- the Redis part of the feed and profile pages, kept per
 * process (fcache.h). */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "social/sesscache.h"
#include "store/app.h"
#include "store/rtrack.h"
#include "web/fcache.h"

#define FC_SLOTS	64	/* entries, by reader and page */
#define FC_URI		192	/* a kept page's request URI, at most */
#define FC_BODY_MAX	(128 << 10)	/* a bigger page is not kept whole */

struct fc_entry {
	int		 used;
	long long	 uid;		/* the reader */
	enum fc_kind	 kind;
	long long	 page;
	char		 login[40];	/* FC_PROFILE: whose */
	char		 sid_hex[SID_HEX_LEN + 1];
	long long	 until_ms;	/* wall clock */
	struct session	 sess;
	struct badges	 badges;
	struct account	 u;
	int		 n;
	long long	 ids[FC_IDS];
	int		 ncards;
	long long	 card_ids[FC_CARDS];
	struct count	 counts[FC_CARDS][PC_NCOUNTS];
	int		 nmore;
	struct count	 more[FC_MORE];
	unsigned long long bloom;	/* a bit for each key's hash */
	struct rds_keys	 keys;		/* what was read for it */
	/* the whole page (fcache_body()): what SQLite held at dver */
	struct buf	 body;		/* len 0: none */
	unsigned int	 dver;
	char		 uri[FC_URI];
};

static struct fc_entry	 slots[FC_SLOTS];
static struct rtrack	 track;
static struct rds_keys	 recording;
static unsigned		 rec_gen;	/* the data connection's at the start */
static unsigned long long nwholes;	/* pages sent whole */
/* This request's: the entry it showed or made (fcache_body()), and a
 * data version that what it reads from SQLite is at or after */
static struct fc_entry	*cur;
static unsigned int	 cur_dver;
static int		 cur_dver_ok;
/* A sync was read after every request being served was taken
 * (fcache_sync_taken()): their pages need none of their own. */
static int		 taken_synced;

static struct fc_entry *
slot_of(long long uid, const struct fc_page *pg)
{
	unsigned long long h = (unsigned long long)uid * 0x9e3779b97f4a7c15ULL +
	    (unsigned long long)pg->page * 31 + (unsigned long long)pg->kind;

	if (pg->login != NULL)
		h ^= rds_key_hash(pg->login, strlen(pg->login));
	return &slots[(h >> 32) % FC_SLOTS];
}

/* rtrack_drop_fn: forgets every entry that read key (NULL: all). */
static void
drop(void *arg, const char *key, size_t len)
{
	unsigned long long h, bit;
	int i, k;

	(void)arg;
	if (key == NULL) {
		for (i = 0; i < FC_SLOTS; i++)
			slots[i].used = 0;
		return;
	}
	h = rds_key_hash(key, len);
	bit = 1ULL << (h & 63);
	for (i = 0; i < FC_SLOTS; i++) {
		if (!slots[i].used || !(slots[i].bloom & bit))
			continue;
		for (k = 0; k < slots[i].keys.n; k++)
			if (slots[i].keys.h[k] == h) {
				slots[i].used = 0;
				break;
			}
	}
}

/* The entry of r's reader for pg, if it may still be shown. */
static struct fc_entry *
kept(const struct req *r, const struct fc_page *pg)
{
	struct fc_entry *e = slot_of(r->sess.user_id, pg);
	long long now = r->now_ms > 0 ? r->now_ms : clock_wall_ms();

	if (e->used && e->uid == r->sess.user_id && e->kind == pg->kind &&
	    e->page == pg->page && (pg->login == NULL ||
	    strcmp(e->login, pg->login) == 0) &&
	    strcmp(e->sid_hex, r->sid_hex) == 0 && now < e->until_ms &&
	    now >= e->until_ms - FC_TTL_MS)
		return e;
	return NULL;
}

/* Records what the page reads from now on (fcache_end()). */
static int
miss(struct req *r)
{
	rec_gen = r->app->rds.one.gen;
	rds_record(&r->app->rds, &recording);
	return 0;
}

int
fcache_get(struct req *r, const struct fc_page *pg, struct fc_hit *h)
{
	struct rds *rd = &r->app->rds;
	struct fc_entry *e;

	h->e = NULL;
	h->pg = *pg;
	cur = NULL;
	cur_dver_ok = 0;
	if (!r->presumed || pg->page < 1 || (pg->login != NULL &&
	    strlen(pg->login) >= sizeof(e->login)) || (!taken_synced &&
	    rtrack_sync_send(&track, rd, drop, NULL) == -1))
		return -1;
	/* what the page reads from SQLite is at this version or later */
	cur_dver_ok = db_data_version_seen(&r->app->db, &cur_dver) == 0;
	if ((e = kept(r, pg)) == NULL) {
		if (!taken_synced &&
		    rtrack_sync_recv(&track, drop, NULL) == -1)
			return -1;
		return miss(r);
	}
	h->n = e->n;
	memcpy(h->ids, e->ids, sizeof(e->ids[0]) * (size_t)e->n);
	h->u = e->u;
	h->e = e;
	return 1;
}

int
fcache_hit(struct req *r, struct fc_hit *h, int use)
{
	const struct fc_entry *e;

	if ((!taken_synced && rtrack_sync_recv(&track, drop, NULL) == -1) ||
	    !use)
		return -1;
	if ((e = kept(r, &h->pg)) != h->e)
		return miss(r);
	if (!req_confirm(r, &e->sess, -1))
		return -1;	/* cannot be: a kept session holds */
	r->badges = e->badges;
	r->have_badges = 1;
	cur = (struct fc_entry *)e;
	return 1;
}

int
fcache_whole(struct req *r, struct fc_hit *h)
{
	struct fc_entry *e = (struct fc_entry *)h->e;
	const char *uri = req_uri(r);
	unsigned int v;

	if (e == NULL || e->body.len == 0 || strcmp(e->uri, uri) != 0 ||
	    db_data_version(&r->app->db, &v) == -1)
		return 0;
	cur_dver = v;		/* what the page reads is at v or later */
	cur_dver_ok = 1;
	if (v != e->dver)
		return 0;
	if (fcache_hit(r, h, 1) != 1)
		return -1;
	buf_reset(&r->body);
	buf_put(&r->body, e->body.p, e->body.len);
	r->status = 200;
	nwholes++;
	return 1;
}

void
fcache_body(struct req *r)
{
	const char *uri = req_uri(r);
	size_t len = strlen(uri);

	if (cur == NULL || !cur->used)
		return;
	cur->body.len = 0;
	if (!cur_dver_ok || r->status != 200 || r->ctype != NULL ||
	    r->head.len > 0 || r->new_pcsrf || r->body.len == 0 ||
	    r->body.len > FC_BODY_MAX || len >= sizeof(cur->uri))
		return;
	buf_put(&cur->body, r->body.p, r->body.len);
	cur->dver = cur_dver;
	memcpy(cur->uri, uri, len + 1);
}

int
fcache_counts(const struct fc_hit *h, struct post_card *cs, int n,
    struct count *more, int nmore)
{
	const struct fc_entry *e = h->e;
	int i, j;

	if (nmore != e->nmore)
		return -1;
	for (i = 0; i < n; i++) {
		for (j = 0; j < e->ncards; j++)
			if (e->card_ids[j] == cs[i].p.id)
				break;
		if (j == e->ncards)
			return -1;
		memcpy(cs[i].n, e->counts[j], sizeof(cs[i].n));
	}
	if (nmore > 0)
		memcpy(more, e->more, sizeof(*more) * (size_t)nmore);
	return 0;
}

static int
all_ok(const struct count *c, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!c[i].ok)
			return 0;
	return 1;
}

/* Whether what the page read may be kept (fcache.h: nothing doubtful). */
static int
keepable(const struct req *r, const struct fc_model *m)
{
	int i;

	if (!r->user || !r->sess_copy || !r->have_badges || recording.over ||
	    m->n > FC_IDS || m->ncards > FC_CARDS || m->nmore > FC_MORE ||
	    !rtrack_still(&track, &r->app->rds) ||
	    r->app->rds.one.gen != rec_gen ||
	    (m->nmore > 0 && !all_ok(m->more, m->nmore)))
		return 0;
	for (i = 0; i < m->ncards; i++)
		if (!all_ok(m->cs[i].n, PC_NCOUNTS))
			return 0;
	return 1;
}

void
fcache_end(struct req *r, const struct fc_page *pg, const struct fc_model *m)
{
	struct fc_entry *e;
	struct buf body;
	long long now = r->now_ms > 0 ? r->now_ms : clock_wall_ms();
	int i;

	cur = NULL;		/* a page rendered after this shows what
				 * this call keeps, or is not kept */
	if (r->app->rds.rec != &recording)
		return;		/* not recording: nothing to end */
	rds_record(&r->app->rds, NULL);
	if (m == NULL || !keepable(r, m))
		return;
	e = slot_of(r->sess.user_id, pg);
	body = e->body;		/* its buffer, reused */
	memset(e, 0, sizeof(*e));
	e->body = body;
	e->body.len = 0;
	e->uid = r->sess.user_id;
	e->kind = pg->kind;
	e->page = pg->page;
	if (pg->login != NULL)
		snprintf(e->login, sizeof(e->login), "%s", pg->login);
	memcpy(e->sid_hex, r->sid_hex, sizeof(e->sid_hex));
	e->until_ms = now + FC_TTL_MS;
	if (r->sess.expires_at < e->until_ms)
		e->until_ms = r->sess.expires_at;
	if (r->sess.copied_at + SESSION_PAGE_MS < e->until_ms)
		e->until_ms = r->sess.copied_at + SESSION_PAGE_MS;
	e->sess = r->sess;
	e->badges = r->badges;
	if (m->u != NULL)
		e->u = *m->u;
	e->n = m->n;
	memcpy(e->ids, m->ids, sizeof(e->ids[0]) * (size_t)m->n);
	e->ncards = m->ncards;
	for (i = 0; i < m->ncards; i++) {
		e->card_ids[i] = m->cs[i].p.id;
		memcpy(e->counts[i], m->cs[i].n, sizeof(e->counts[i]));
	}
	e->nmore = m->nmore;
	if (m->nmore > 0)
		memcpy(e->more, m->more, sizeof(*m->more) * (size_t)m->nmore);
	e->keys = recording;
	for (i = 0; i < e->keys.n; i++)
		e->bloom |= 1ULL << (e->keys.h[i] & 63);
	e->used = 1;
	cur = e;
}

int
fcache_sync_taken(struct app *a)
{
	taken_synced = 0;
	if (rtrack_sync_send(&track, &a->rds, drop, NULL) == -1 ||
	    rtrack_sync_recv(&track, drop, NULL) == -1)
		return -1;
	taken_synced = 1;
	return 0;
}

void
fcache_sync_end(void)
{
	taken_synced = 0;
}

unsigned long long
fcache_syncs(void)
{
	return track.nsyncs;
}

unsigned long long
fcache_wholes(void)
{
	return nwholes;
}
