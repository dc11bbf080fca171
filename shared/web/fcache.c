/* fcache.c -- the home feed's Redis part, kept per process (fcache.h). */
#include <string.h>

#include "base/clock.h"
#include "social/sesscache.h"
#include "store/app.h"
#include "store/rtrack.h"
#include "web/fcache.h"

#define FC_SLOTS	64	/* entries, by reader and page */

struct fc_entry {
	int		 used;
	long long	 uid, page;
	char		 sid_hex[SID_HEX_LEN + 1];
	long long	 until_ms;	/* wall clock */
	struct session	 sess;
	struct badges	 badges;
	int		 n;
	long long	 ids[FC_IDS];
	int		 ncards;
	long long	 card_ids[FC_IDS];
	struct count	 counts[FC_IDS][PC_NCOUNTS];
	unsigned long long bloom;	/* a bit for each key's hash */
	struct rds_keys	 keys;		/* what was read for it */
};

static struct fc_entry	 slots[FC_SLOTS];
static struct rtrack	 track;
static struct rds_keys	 recording;
static unsigned		 rec_gen;	/* the data connection's at the start */

static struct fc_entry *
slot_of(long long uid, long long page)
{
	unsigned long long h = (unsigned long long)uid * 0x9e3779b97f4a7c15ULL +
	    (unsigned long long)page;

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

/* The entry of r's reader for page, if it may still be shown. */
static struct fc_entry *
kept(const struct req *r, long long page)
{
	struct fc_entry *e = slot_of(r->sess.user_id, page);
	long long now = r->now_ms > 0 ? r->now_ms : clock_wall_ms();

	if (e->used && e->uid == r->sess.user_id && e->page == page &&
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
fcache_get(struct req *r, long long page, struct fc_hit *h)
{
	struct rds *rd = &r->app->rds;
	struct fc_entry *e;

	h->e = NULL;
	h->page = page;
	if (!r->presumed || page < 1 ||
	    rtrack_sync_send(&track, rd, drop, NULL) == -1)
		return -1;
	if ((e = kept(r, page)) == NULL) {
		if (rtrack_sync_recv(&track, drop, NULL) == -1)
			return -1;
		return miss(r);
	}
	h->n = e->n;
	memcpy(h->ids, e->ids, sizeof(e->ids[0]) * (size_t)e->n);
	h->e = e;
	return 1;
}

int
fcache_hit(struct req *r, struct fc_hit *h)
{
	const struct fc_entry *e;

	if (rtrack_sync_recv(&track, drop, NULL) == -1)
		return -1;
	if ((e = kept(r, h->page)) != h->e)
		return miss(r);
	if (!req_confirm(r, &e->sess, -1))
		return -1;	/* cannot be: a kept session holds */
	r->badges = e->badges;
	r->have_badges = 1;
	return 1;
}

int
fcache_counts(const struct fc_hit *h, struct post_card *cs, int n)
{
	const struct fc_entry *e = h->e;
	int i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < e->ncards; j++)
			if (e->card_ids[j] == cs[i].p.id)
				break;
		if (j == e->ncards)
			return -1;
		memcpy(cs[i].n, e->counts[j], sizeof(cs[i].n));
	}
	return 0;
}

/* Whether what the page read may be kept (fcache.h: nothing doubtful). */
static int
keepable(const struct req *r, const struct post_card *cs, int ncards)
{
	int i, k;

	if (!r->user || !r->sess_copy || !r->have_badges || recording.over ||
	    ncards > FC_IDS || !rtrack_still(&track, &r->app->rds) ||
	    r->app->rds.one.gen != rec_gen)
		return 0;
	for (i = 0; i < ncards; i++)
		for (k = 0; k < PC_NCOUNTS; k++)
			if (!cs[i].n[k].ok)
				return 0;
	return 1;
}

void
fcache_end(struct req *r, long long page, int keep, const long long *ids,
    int n, const struct post_card *cs, int ncards)
{
	struct fc_entry *e;
	long long now = r->now_ms > 0 ? r->now_ms : clock_wall_ms();
	int i;

	rds_record(&r->app->rds, NULL);
	if (!keep || n > FC_IDS || !keepable(r, cs, ncards))
		return;
	e = slot_of(r->sess.user_id, page);
	memset(e, 0, sizeof(*e));
	e->uid = r->sess.user_id;
	e->page = page;
	memcpy(e->sid_hex, r->sid_hex, sizeof(e->sid_hex));
	e->until_ms = now + FC_TTL_MS;
	if (r->sess.expires_at < e->until_ms)
		e->until_ms = r->sess.expires_at;
	if (r->sess.copied_at + SESSION_PAGE_MS < e->until_ms)
		e->until_ms = r->sess.copied_at + SESSION_PAGE_MS;
	e->sess = r->sess;
	e->badges = r->badges;
	e->n = n;
	memcpy(e->ids, ids, sizeof(ids[0]) * (size_t)n);
	e->ncards = ncards;
	for (i = 0; i < ncards; i++) {
		e->card_ids[i] = cs[i].p.id;
		memcpy(e->counts[i], cs[i].n, sizeof(e->counts[i]));
	}
	e->keys = recording;
	for (i = 0; i < e->keys.n; i++)
		e->bloom |= 1ULL << (e->keys.h[i] & 63);
	e->used = 1;
}

unsigned long long
fcache_syncs(void)
{
	return track.nsyncs;
}
