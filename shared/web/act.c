/* act.c -- an action's answer: back to the page, or JSON; see act.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/kv.h"
#include "web/act.h"
#include "web/html.h"
#include "web/resp.h"

int
act_back_ok(const char *s)
{
	size_t i;

	if (s == NULL || s[0] != '/' || s[1] == '/' || s[1] == '\\')
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (i >= ACT_BACK_MAX || (unsigned char)s[i] <= 0x20 ||
		    (unsigned char)s[i] >= 0x7f || s[i] == '\\')
			return 0;
	return 1;
}

const char *
act_back(const struct req *r)
{
	const struct kv *kv = kv_get(&r->form, "back");

	if (kv == NULL || strlen(kv->val) != kv->vlen)
		return NULL;
	return act_back_ok(kv->val) ? kv->val : NULL;
}

int
act_redirect(struct req *r, const char *dflt, long long post_id)
{
	const char *back = act_back(r);
	char loc[ACT_BACK_MAX + 40];
	size_t n;

	snprintf(loc, sizeof(loc), "%s", back != NULL ? back : dflt);
	if (post_id > 0) {
		n = strcspn(loc, "#");	/* one fragment: the post's */
		snprintf(loc + n, sizeof(loc) - n, "#post-%lld", post_id);
	}
	return resp_redirect(r, loc);
}

int
act_json(struct req *r, json_t *o)
{
	char *s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	if (s == NULL)
		return resp_error(r, 500, "out of memory");
	resp_text(r, 200, "application/json", s);
	free(s);
	return 0;
}

void
act_back_field(struct req *r)
{
	act_back_to(r, req_uri(r));
}

void
act_back_to(struct req *r, const char *path)
{
	if (!act_back_ok(path))
		return;
	html_raw(&r->body, "<input type=\"hidden\" name=\"back\" value=\"");
	html_attr(&r->body, path);
	html_raw(&r->body, "\">");
}
