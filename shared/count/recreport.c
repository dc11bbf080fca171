/* recreport.c -- a reconciliation report and its JSON; see recreport.h. */
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "count/counters.h"
#include "count/recreport.h"

void
recreport_init(struct rec_report *r)
{
	int i;

	memset(r, 0, sizeof(*r));
	snprintf(r->fam[0].name, sizeof(r->fam[0].name), "post_like_count");
	for (i = 0; i < FAM__MAX; i++)
		snprintf(r->fam[i + 1].name, sizeof(r->fam[0].name), "%s",
		    families[i].name);
	snprintf(r->fam[REC_NOTE_GROUPS].name, sizeof(r->fam[0].name),
	    "note_groups");
}

/* A sum over every family: of the wrong counters, or of the fixed ones. */
static long long
total(const struct rec_report *r, int fixed)
{
	long long n = 0;
	int i;

	for (i = 0; i < REC_FAMILIES; i++)
		n += fixed ? r->fam[i].fixed : r->fam[i].wrong;
	return n;
}

long long
recreport_wrong(const struct rec_report *r)
{
	return total(r, 0);
}

long long
recreport_fixed(const struct rec_report *r)
{
	return total(r, 1);
}

char *
recreport_json(const struct rec_report *r)
{
	json_t *arr = json_array(), *o, *ex;
	char *s;
	int i, j;

	for (i = 0; i < REC_FAMILIES; i++) {
		ex = json_array();
		for (j = 0; j < r->fam[i].nex; j++)
			json_array_append_new(ex, json_string(r->fam[i].ex[j]));
		o = json_pack("{s:s,s:I,s:I,s:I,s:I,s:I,s:o}", "family",
		    r->fam[i].name, "checked", (json_int_t)r->fam[i].checked,
		    "wrong", (json_int_t)r->fam[i].wrong, "fixed",
		    (json_int_t)r->fam[i].fixed, "max_error",
		    (json_int_t)r->fam[i].max_err, "queued",
		    (json_int_t)r->fam[i].queued, "examples", ex);
		json_array_append_new(arr, o);
	}
	s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return s;
}

int
recreport_parse(const char *js, struct rec_report *r)
{
	json_error_t err;
	json_t *arr = json_loads(js, 0, &err), *o, *ex;
	json_int_t ch, wr, fx, mx, un;
	const char *name;
	size_t i, j;
	int k;

	recreport_init(r);
	if (arr == NULL || !json_is_array(arr)) {
		json_decref(arr);
		return -1;
	}
	json_array_foreach(arr, i, o) {
		un = 0;		/* reports before it had "unsettled" */
		if (json_unpack(o, "{s:s,s:I,s:I,s:I,s:I,s?I,s:o}", "family",
		    &name, "checked", &ch, "wrong", &wr, "fixed", &fx,
		    "max_error", &mx, "queued", &un, "examples", &ex) != 0)
			continue;
		for (k = 0; k < REC_FAMILIES; k++) {
			if (strcmp(r->fam[k].name, name) != 0)
				continue;
			r->fam[k].checked = ch;
			r->fam[k].wrong = wr;
			r->fam[k].fixed = fx;
			r->fam[k].max_err = mx;
			r->fam[k].queued = un;
			/* a family named twice: the later row replaces */
			r->fam[k].nex = 0;
			for (j = 0; j < json_array_size(ex) && j < REC_EXAMPLES; j++)
				snprintf(r->fam[k].ex[r->fam[k].nex++], 48, "%s",
				    json_string_value(json_array_get(ex, j)) ?
				    json_string_value(json_array_get(ex, j)) : "");
		}
	}
	json_decref(arr);
	return 0;
}
