/* field.c -- validated request fields; see field.h. */
#include <stdio.h>
#include <string.h>

#include "base/kv.h"
#include "base/valid.h"
#include "web/field.h"
#include "web/req.h"
#include "web/resp.h"

static const struct kv *
req_field(const struct req *r, const char *field)
{
	return kv_get(r->method == METHOD_POST ? &r->form : &r->query, field);
}

/* Answers 400 naming field: missing, or not valid (why: the hint;
 * must: what it must be, or NULL). */
static void
refuse(struct req *r, const char *field, int missing, const char *why,
    const char *must)
{
	char msg[128];

	if (!missing && must != NULL)
		snprintf(msg, sizeof(msg), "The field \xe2\x80\x9c%s"
		    "\xe2\x80\x9d must be %s.", field, must);
	else
		snprintf(msg, sizeof(msg), "The field \xe2\x80\x9c%s"
		    "\xe2\x80\x9d is %s.", field, missing ? "missing" :
		    "not valid");
	r->bad_field = field;
	snprintf(r->bad_msg, sizeof(r->bad_msg), "%s", msg);
	snprintf(r->bad_why, sizeof(r->bad_why), "%s", why);
	resp_error(r, 400, msg);
}

const char *
field_need(struct req *r, const char *field, enum valid kind)
{
	const struct kv *kv = req_field(r, field);
	char *norm;

	if (kv == NULL || valid_check(kind, kv->val, kv->vlen, &norm) == -1) {
		refuse(r, field, kv == NULL, valid_hint(kind, kv == NULL),
		    valid_must(kind));
		return NULL;
	}
	return req_keep(r, norm);
}

int
field_has(const struct req *r, const char *field)
{
	return req_field(r, field) != NULL;
}

const char *
field_try(struct req *r, const char *field, enum valid kind)
{
	const struct kv *kv = req_field(r, field);
	char *norm;

	if (kv == NULL || valid_check(kind, kv->val, kv->vlen, &norm) == -1)
		return NULL;
	return req_keep(r, norm);
}

const char *
field_arg(struct req *r, int i, enum valid kind, const char *msg)
{
	char *norm;

	if (i < 0 || i >= r->nargs || r->args[i] == NULL ||
	    valid_check(kind, r->args[i], strlen(r->args[i]), &norm) == -1) {
		resp_error(r, 404, msg);
		return NULL;
	}
	return req_keep(r, norm);
}

const char *
field_path_try(struct req *r, const char *prefix, enum valid kind)
{
	const char *p = r->path;
	size_t n = strlen(prefix);
	char *norm;

	if (p == NULL || strncmp(p, prefix, n) != 0 || p[n] == '\0' ||
	    strchr(p + n, '/') != NULL ||
	    valid_check(kind, p + n, strlen(p + n), &norm) == -1)
		return NULL;
	return req_keep(r, norm);
}

const char *
field_opt(struct req *r, const char *field, enum valid kind, const char *dflt)
{
	const struct kv *kv = req_field(r, field);

	if (kv == NULL || kv->vlen == 0)
		return dflt;
	return field_need(r, field, kind);
}

long long
field_int(struct req *r, const char *field, enum valid kind, long long dflt)
{
	const char *s;
	long long v = 0;

	if (!field_has(r, field))
		return dflt;
	if ((s = field_need(r, field, kind)) == NULL)
		return -1;
	valid_int(s, 0, 9007199254740992LL, &v);	/* kind bounds it */
	return v;
}

long long
field_page(struct req *r)
{
	const char *p = field_opt(r, "page", VALID_PAGE, "1");
	long long v = 0;

	if (p == NULL)
		return 0;
	valid_int(p, 1, 1000, &v);
	return v;
}

int
field_ids(struct req *r, const char *field, long long *out, int max)
{
	const struct kv *kv = req_field(r, field);
	char one[24];
	size_t len, at = 0;
	long long v;
	int n = 0;

	if (kv == NULL || kv->vlen == 0)
		return 0;
	while (at <= kv->vlen) {
		len = strcspn(kv->val + at, ".");
		if (len == 0 || len >= sizeof(one))
			goto bad;
		memcpy(one, kv->val + at, len);
		one[len] = '\0';
		if (valid_int(one, 1, 1LL << 53, &v) == -1)
			goto bad;
		if (n < max)
			out[n++] = v;
		at += len + 1;	/* past the '.' (or the end) */
	}
	return n;
bad:
	refuse(r, field, 0, "ids separated by dots", NULL);
	return -1;
}
