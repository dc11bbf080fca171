/* keep.c -- pages kept whole per process (keep.h).
 *
 * The file-level state is the process's, between requests (the entries,
 * the invalidation connection, two counters); a request's own is in
 * r->keep (tests/lint/statics.sh checks that nothing else is here). */
#include <stdio.h>
#include <string.h>

#include "base/clock.h"
#include "count/ckeep.h"
#include "social/sesscache.h"
#include "store/app.h"
#include "store/rtrack.h"
#include "web/keep.h"
#include "web/req.h"

#define KEEP_SLOTS	64	/* entries, by reader and URI */
#define KEEP_URI	192	/* a kept page's request URI, at most */
#define KEEP_BODY_MAX	(128 << 10)	/* a bigger page is not kept */

struct entry {
	int		 used;
	long long	 uid;		/* the reader */
	char		 uri[KEEP_URI];
	char		 sid_hex[SID_HEX_LEN + 1];
	long long	 seen_ms;	/* the last visit, kept or not */
	long long	 until_ms;	/* wall clock; 0: only seen */
	struct session	 sess;
	unsigned long long bloom;	/* a bit for each key's hash */
	struct rds_keys	 keys;		/* what was read for it */
	struct buf	 body;
	unsigned int	 dver;		/* what SQLite held */
};

/* per process: kept between requests */
static struct entry	 slots[KEEP_SLOTS];
static struct rtrack	 track;
static unsigned long long nwholes;	/* pages sent as kept */

static struct entry *
slot_of(long long uid, const char *uri)
{
	unsigned long long h = (unsigned long long)uid * 0x9e3779b97f4a7c15ULL ^
	    rds_key_hash(uri, strlen(uri));

	return &slots[(h >> 32) % KEEP_SLOTS];
}

/* The keys a group's sync dropped (keep_sync_recv()): their hashes, up to
 * DROPPED_MAX, or all. */
#define DROPPED_MAX	64
struct dropped {
	unsigned long long	 h[DROPPED_MAX];
	int			 n;
	int			 all;
};

/* rtrack_drop_fn: forgets every entry that read key (NULL: all); arg, when
 * not NULL, a struct dropped that learns of it. */
static void
drop(void *arg, const char *key, size_t len)
{
	struct dropped *d = arg;
	unsigned long long h, bit;
	int i, k;

	ckeep_drop(key, len);	/* the counts kept, too */
	if (d != NULL && (key == NULL || d->n == DROPPED_MAX))
		d->all = 1;
	else if (d != NULL)
		d->h[d->n++] = rds_key_hash(key, len);
	if (key == NULL) {
		for (i = 0; i < KEEP_SLOTS; i++)
			slots[i].used = 0;
		return;
	}
	h = rds_key_hash(key, len);
	bit = 1ULL << (h & 63);
	for (i = 0; i < KEEP_SLOTS; i++) {
		if (!slots[i].used || !(slots[i].bloom & bit))
			continue;
		for (k = 0; k < slots[i].keys.n; k++)
			if (slots[i].keys.h[k] == h) {
				slots[i].used = 0;
				break;
			}
	}
}

static long long
now_of(const struct req *r)
{
	return r->now_ms > 0 ? r->now_ms : clock_wall_ms();
}

/* This reader's entry for this URI (used or only seen), or NULL. */
static struct entry *
entry_of(const struct req *r)
{
	const char *uri = req_uri(r);
	struct entry *e = slot_of(r->sess.user_id, uri);

	if (e->uid == r->sess.user_id && strcmp(e->uri, uri) == 0 &&
	    strcmp(e->sid_hex, r->sid_hex) == 0)
		return e;
	return NULL;
}

/* Whether e holds a page that may be sent now (its sync and data
 * version aside). */
static int
kept_now(const struct entry *e, long long now)
{
	return e != NULL && e->used && now < e->until_ms &&
	    now >= e->until_ms - FC_TTL_MS && e->body.len > 0;
}

/* A sync in two steps, so that the load's SQLite work overlaps its round
 * trip: sent before the load, read when the counts are (keep_counts())
 * or at the end (keep_store()). */
static void
sync_start(struct req *r)
{
	if (r->keep.synced || r->keep.pending)
		return;
	if (rtrack_sync_send(&track, r->app->rds, drop, NULL) == 0)
		r->keep.pending = 1;
}

static int
sync_finish(struct req *r)
{
	if (!r->keep.pending)
		return r->keep.synced ? 0 : -1;
	r->keep.pending = 0;
	if (rtrack_sync_recv(&track, drop, NULL) == -1)
		return -1;
	r->keep.synced = 1;
	return 0;
}

static int
sync(struct req *r)
{
	sync_start(r);
	return sync_finish(r);
}

/* Marks this visit; 1 when the page was visited within the TTL before
 * (worth recording), 0 when not. */
static int
seen_again(struct req *r)
{
	const char *uri = req_uri(r);
	struct entry *e = slot_of(r->sess.user_id, uri);
	long long now = now_of(r);
	int again;

	if (strlen(uri) >= sizeof(e->uri))
		return 0;
	if ((again = entry_of(r) != NULL && now - e->seen_ms < FC_TTL_MS))
		e->seen_ms = now;
	else if (!e->used || now >= e->until_ms) {
		/* a free or stale slot becomes this visit's mark */
		e->used = 0;
		e->until_ms = 0;
		e->uid = r->sess.user_id;
		memcpy(e->uri, uri, strlen(uri) + 1);
		memcpy(e->sid_hex, r->sid_hex, sizeof(e->sid_hex));
		e->seen_ms = now;
	}
	return again;
}

int
keep_answer(struct req *r)
{
	struct keep_req *k = &r->keep;
	struct entry *e;
	unsigned int v = 0;
	long long now = now_of(r);
	int fresh = 0;

	k->recording = 0;
	k->ok = 0;
	if (r->method != METHOD_GET)
		return 0;
	/* the counts' values kept (keep_counts()) are used after a sync */
	sync_start(r);
	/* PostgreSQL has no data version: no page is kept */
	if (!r->presumed || db_data_version_seen(r->app->db, &v) == -1)
		return 0;
	e = entry_of(r);
	if (kept_now(e, now) &&
	    (fresh = db_data_version(r->app->db, &v) == 0) && v == e->dver &&
	    sync(r) == 0 && e->used && req_confirm(r, &e->sess, -1)) {
		buf_reset(&r->body);
		buf_put(&r->body, e->body.p, e->body.len);
		r->status = 200;
		e->seen_ms = now;
		nwholes++;
		return 1;
	}
	/* recorded when it costs no sync of its own (taken with others),
	 * or on a second visit */
	if ((!seen_again(r) && !k->synced) || sync(r) == -1)
		return 0;
	/* what the load reads from SQLite is at this version or later (the
	 * PRAGMA's read learns of the commits made since this connection
	 * last read: the version the pager had cached may be older) */
	k->dver_ok = fresh || db_data_version(r->app->db, &v) == 0;
	k->dver = v;
	k->rec_gen = rds_gen(r->app->rds);
	memset(&k->rec, 0, sizeof(k->rec));
	rds_record(r->app->rds, &k->rec);
	if (r->ahead != NULL) {
		/* its first round trip went ahead: what that read was read
		 * then, on that connection (the group's sync came back after
		 * it: keep_sync_recv() marked it over when that sync forgot a
		 * key it read, and none came since) */
		k->rec = r->ahead->keys;
		k->rec_gen = r->ahead->gen;
	}
	k->recording = 1;
	return 0;
}

int
keep_likely(struct req *r)
{
	return kept_now(entry_of(r), now_of(r));
}

/* Whether what the load read may be kept (keep.h: nothing doubtful). */
static int
keepable(const struct req *r)
{
	const struct keep_req *k = &r->keep;

	return k->ok && k->dver_ok && r->user && r->sess_copy &&
	    r->have_badges && !k->rec.over &&
	    rtrack_still(&track, r->app->rds) &&
	    rds_gen(r->app->rds) == k->rec_gen && r->status == 200 &&
	    r->ctype == NULL && r->head.len == 0 && !r->new_pcsrf &&
	    r->body.len > 0 && r->body.len <= KEEP_BODY_MAX;
}

void
keep_store(struct req *r, int rendered)
{
	struct keep_req *k = &r->keep;
	struct entry *e;
	long long now = now_of(r);
	const char *uri = req_uri(r);
	int i;

	if (k->pending)
		(void)sync_finish(r);	/* the load read no count */
	if (!k->recording)
		return;
	rds_record(r->app->rds, NULL);
	k->recording = 0;
	if (!rendered || !keepable(r) || strlen(uri) >= sizeof(e->uri))
		return;
	e = slot_of(r->sess.user_id, uri);
	e->uid = r->sess.user_id;
	memcpy(e->uri, uri, strlen(uri) + 1);
	memcpy(e->sid_hex, r->sid_hex, sizeof(e->sid_hex));
	e->seen_ms = now;
	e->until_ms = now + FC_TTL_MS;
	if (r->sess.expires_at < e->until_ms)
		e->until_ms = r->sess.expires_at;
	if (sesscache_page_until(r->sess.copied_at) < e->until_ms)
		e->until_ms = sesscache_page_until(r->sess.copied_at);
	e->sess = r->sess;
	e->keys = k->rec;
	e->bloom = 0;
	for (i = 0; i < e->keys.n; i++)
		e->bloom |= 1ULL << (e->keys.h[i] & 63);
	buf_reset(&e->body);
	buf_put(&e->body, r->body.p, r->body.len);
	e->dver = k->dver;
	e->used = 1;
}

int
keep_sync_send(struct app *a)
{
	return rtrack_sync_send(&track, a->rds, drop, NULL);
}

/* Whether d names a key of ks. */
static int
dropped_any(const struct dropped *d, const struct rds_keys *ks)
{
	int i, j;

	if (d->all)
		return 1;
	for (i = 0; i < d->n; i++)
		for (j = 0; j < ks->n; j++)
			if (d->h[i] == ks->h[j])
				return 1;
	return 0;
}

int
keep_sync_recv(struct req *const *rs, int n, int sent)
{
	struct dropped d = { .n = 0 };
	int i, rc = sent == 0 ? rtrack_sync_recv(&track, drop, &d) : -1;

	/* A first round trip sent ahead went before this sync came back:
	 * a change it names may have come after that read, and is forgotten
	 * now; such a page is served, never kept (keepable(): over).  With
	 * no sync, a page's own would come after that read as well. */
	for (i = 0; i < n; i++)
		if (rs[i]->ahead != NULL && (rc == -1 ||
		    dropped_any(&d, &rs[i]->ahead->keys)))
			rs[i]->ahead->keys.over = 1;
	if (rc == -1)
		return -1;
	for (i = 0; i < n; i++)
		rs[i]->keep.synced = 1;
	return 0;
}

unsigned
keep_counts(struct req *r)
{
	int synced = sync_finish(r) == 0;

	if (!rtrack_still(&track, r->app->rds))
		return 0;
	return CKEEP_STORE | (synced ? CKEEP_READ : 0);
}

unsigned long long
keep_syncs(void)
{
	return track.nsyncs;
}

unsigned long long
keep_wholes(void)
{
	return nwholes;
}
