/* field.c -- validated request fields; see field.h. */
#include <stdio.h>

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

const char *
field_need(struct req *r, const char *field, enum valid kind)
{
	const struct kv *kv = req_field(r, field);
	char *norm, msg[128];

	if (kv == NULL || valid_check(kind, kv->val, kv->vlen, &norm) == -1) {
		snprintf(msg, sizeof(msg), "The field \xe2\x80\x9c%s\xe2\x80\x9d "
		    "is %s.", field, kv == NULL ? "missing" : "not valid");
		r->bad_field = field;
		snprintf(r->bad_msg, sizeof(r->bad_msg), "%s", msg);
		snprintf(r->bad_why, sizeof(r->bad_why), "%s", valid_hint(kind,
		    kv == NULL));
		resp_error(r, 400, msg);
		return NULL;
	}
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
field_page(struct req *r)
{
	const char *p = field_opt(r, "page", VALID_PAGE, "1");
	long long v = 0;

	if (p == NULL)
		return 0;
	valid_int(p, 1, 1000, &v);
	return v;
}
