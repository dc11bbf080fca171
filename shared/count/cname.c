/* cname.c -- where a counter lives in Redis; see cname.h. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "count/cname.h"
#include "store/dbq.h"
#include "store/key.h"

/* Object kinds: key prefix, in the order of enum obj. */
static const char *const obj_tag[] = { "u", "p", "t", "ut" };

/* Knuth's multiplicative hash: the top 10 bits of the low 32 bits of
 * id x 2654435761, so neighbouring ids land far apart. */
static int
bucket_of(long long id)
{
	return (int)((uint32_t)((uint32_t)id * 2654435761u) >> 22);
}

int
cname_bucket(const struct delta *d)
{
	return bucket_of(families[d->fam].obj == OBJ_POST ? d->owner : d->k1);
}

void
cname_user_cache(long long uid, const char *what, char *out, size_t sz)
{
	key_user_cache(out, sz, bucket_of(uid), uid, what);
}

void
cname_live_flag(long long uid, char *out, size_t sz)
{
	key_user_cache(out, sz, bucket_of(uid), uid, "lv");
}

void
cname_bucket_key(int bucket, const char *what, char *out, size_t sz)
{
	key_bucket(out, sz, bucket, what);
}

/* The field name in the object: "likes", or "rating:7" (no printf). */
static int
obj_field(const struct delta *d, char *out, size_t sz)
{
	const struct family_info *f = &families[d->fam];
	size_t n = strlen(f->field);

	if (f->obj == OBJ_USER_TOPIC || n >= sz)
		return f->obj == OBJ_USER_TOPIC ? snprintf(out, sz, "%s:%lld",
		    f->field, d->k2) : snprintf(out, sz, "%s", f->field);
	memcpy(out, f->field, n + 1);
	return (int)n;
}

struct idvec {
	long long	*v;
	size_t		 n, cap;
	const char	*tag;
};

static int
live_key(struct rds *r, const char *key, void *arg)
{
	struct idvec *iv = arg;
	long long id;

	(void)r;
	if (key_counters_parse(key, iv->tag, &id) == -1)
		return 0;		/* another kind's, or a bucket's own */
	if (iv->n == iv->cap) {
		iv->cap = iv->cap ? iv->cap * 2 : 256;
		iv->v = xrealloc(iv->v, iv->cap * sizeof(*iv->v));
	}
	iv->v[iv->n++] = id;
	return 0;
}

int
cname_live_objects(struct app *a, enum obj obj, long long **ids, size_t *n)
{
	struct idvec iv = { NULL, 0, 0, obj_tag[obj] };
	char pattern[32];

	key_counters_pattern(pattern, sizeof(pattern), iv.tag);
	if (rds_scan(a->rds, pattern, live_key, &iv) == -1) {
		free(iv.v);
		return -1;
	}
	*ids = iv.v;
	*n = iv.n;
	return 0;
}

void
cname_of(const struct delta *d, char *hash, size_t hsz, char *field,
    size_t fsz)
{
	key_counters(hash, hsz, cname_bucket(d), obj_tag[families[d->fam].obj],
	    d->k1);
	obj_field(d, field, fsz);
}

void
cname_pfield(const struct delta *d, char *out, size_t sz)
{
	const char *tag = obj_tag[families[d->fam].obj];
	char buf[4 + 2 * LL_CHARS], *p = buf;
	size_t n;

	/* "p<id>@<owner>:" or "<tag><id>:", then the field (no printf: the
	 * writer names every counter of a group with it) */
	n = strlen(tag);
	memcpy(p, tag, n);
	p += n;
	p += buf_fmt_ll(p, d->k1);
	if (families[d->fam].obj == OBJ_POST) {
		*p++ = '@';
		p += buf_fmt_ll(p, d->owner);
	}
	*p++ = ':';
	n = (size_t)(p - buf);
	if (n >= sz) {
		if (sz > 0)
			out[0] = '\0';
		return;
	}
	memcpy(out, buf, n);
	obj_field(d, out + n, sz - n);
}

void
cname_bucket_keys(int bucket, struct cname_keys *k)
{
	cname_bucket_key(bucket, "pending", k->pending, sizeof(k->pending));
	cname_bucket_key(bucket, "inflight", k->inflight, sizeof(k->inflight));
	cname_bucket_key(bucket, "meta", k->meta, sizeof(k->meta));
	cname_bucket_key(bucket, "seq", k->seq, sizeof(k->seq));
	cname_bucket_key(bucket, "fence", k->fence, sizeof(k->fence));
	cname_bucket_key(bucket, "flog", k->flog, sizeof(k->flog));
	cname_bucket_key(bucket, "settled", k->settled, sizeof(k->settled));
}

void
cname_keys(const struct delta *d, struct cname_keys *k)
{
	cname_of(d, k->live, sizeof(k->live), k->field, sizeof(k->field));
	cname_pfield(d, k->pfield, sizeof(k->pfield));
	cname_bucket_keys(cname_bucket(d), k);
}

/* The length of a canonical decimal at s[0..len) (no sign, leading 0 or
 * overflow), or 0. */
static size_t
canonical_id(const char *s, size_t len, long long *out)
{
	size_t n = 0;
	long long v = 0;
	int dg;

	while (n < len && s[n] >= '0' && s[n] <= '9') {
		dg = s[n] - '0';
		if (v > (LLONG_MAX - dg) / 10)
			return 0;
		v = v * 10 + dg;
		n++;
	}
	if (n == 0 || (n > 1 && s[0] == '0'))
		return 0;
	*out = v;
	return n;
}

int
cname_parse(const char *p, size_t len, struct delta *d)
{
	const char *colon, *end = p + len;
	long long id, topic = 0, owner = 0;
	size_t n, flen;
	enum obj obj;
	int i;

	memset(d, 0, sizeof(*d));
	if (len >= 2 && p[0] == 'u' && p[1] == 't') {
		obj = OBJ_USER_TOPIC;
		p += 2;
	} else if (len >= 1 && (p[0] == 'u' || p[0] == 'p' || p[0] == 't')) {
		obj = p[0] == 'u' ? OBJ_USER : p[0] == 'p' ? OBJ_POST : OBJ_TOPIC;
		p++;
	} else
		return -1;
	if ((n = canonical_id(p, (size_t)(end - p), &id)) == 0 || p + n == end)
		return -1;
	p += n;
	if (obj == OBJ_POST && *p == '@') {	/* the owner (cname.h) */
		if ((n = canonical_id(p + 1, (size_t)(end - p - 1), &owner)) ==
		    0 || p + 1 + n == end)
			return -1;
		p += 1 + n;
	}
	if (*p != ':')
		return -1;
	p++;
	flen = (size_t)(end - p);
	if (obj == OBJ_USER_TOPIC) {
		if ((colon = memchr(p, ':', flen)) == NULL ||
		    (n = canonical_id(colon + 1, (size_t)(end - colon - 1),
		    &topic)) == 0 || colon + 1 + n != end)
			return -1;
		flen = (size_t)(colon - p);
	}
	for (i = 0; i < FAM__MAX; i++)
		if (families[i].obj == obj &&
		    strlen(families[i].field) == flen &&
		    memcmp(families[i].field, p, flen) == 0) {
			d->fam = (enum family)i;
			d->k1 = id;
			d->k2 = topic;
			d->owner = owner;
			return 0;
		}
	return -1;
}

int
cname_ownerless(const struct delta *d)
{
	return families[d->fam].obj == OBJ_POST && d->owner == 0;
}

int
cname_post_owner(struct db *db, long long id, long long *owner)
{
	return dbq_i64_by_id(db, STMT_POST_OWNER, id, owner);
}

int
cname_owners(struct db *db, struct delta *ds, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (cname_ownerless(&ds[i]) &&
		    cname_post_owner(db, ds[i].k1, &ds[i].owner) == -1)
			return -1;
	return 0;
}
