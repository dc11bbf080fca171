/* tmpl.c -- template rendering; see tmpl.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/log.h"
#include "base/tmpl.h"

static int
slurp(const char *path, struct buf *b)
{
	char chunk[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (f == NULL) {
		log_err("%s: %s", path, strerror(errno));
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_put(b, chunk, n);
	fclose(f);
	return 0;
}

int
tmpl_render(const char *in, const char *out, const struct tmpl_var *vars,
    int nvars)
{
	struct buf src = { 0 }, dst = { 0 };
	char tmp[4096];
	const char *p, *e;
	FILE *f;
	int i, rc = -1;

	if (slurp(in, &src) == -1)
		return -1;
	for (p = src.p; p != NULL && *p != '\0'; ) {
		if (p[0] == '$' && p[1] == '{' && (e = strchr(p, '}')) != NULL) {
			for (i = 0; i < nvars; i++)
				if (strlen(vars[i].name) == (size_t)(e - p - 2) &&
				    strncmp(p + 2, vars[i].name,
				    (size_t)(e - p - 2)) == 0)
					break;
			if (i < nvars) {
				buf_puts(&dst, vars[i].value);
				p = e + 1;
				continue;
			}
		}
		buf_putc(&dst, *p++);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	if ((f = fopen(tmp, "w")) == NULL) {
		log_err("%s: %s", tmp, strerror(errno));
		goto out;
	}
	i = fwrite(dst.p, 1, dst.len, f) == dst.len;
	if (fclose(f) != 0 || !i) {
		log_err("%s: write failed", tmp);
		goto out;
	}
	if (rename(tmp, out) == -1) {
		log_err("%s: %s", out, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	buf_free(&src);
	buf_free(&dst);
	return rc;
}
