/* tmpl.h -- rendering of configuration templates: every "${NAME}" whose
 * NAME is in the given list is replaced by its value; anything else,
 * nginx's own $variables included, is copied unchanged. */
#ifndef TALLY_TMPL_H
#define TALLY_TMPL_H

struct tmpl_var {
	const char	*name;
	const char	*value;
};

/* Renders file in to file out (written to out.tmp, then renamed).
 * Returns 0 or -1 (logged). */
int	tmpl_render(const char *in, const char *out,
	    const struct tmpl_var *vars, int nvars);

#endif
