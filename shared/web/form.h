/* form.h -- forms that keep what the user typed.
 *
 * A refused post, comment, edit or signup comes back as its form page
 * (docs/INTERFACE.md §4): the values typed (those that are valid UTF-8 without
 * control characters; a body keeps its line breaks and tabs), the
 * refused field marked (aria-invalid, its reason beside it, linked by
 * aria-describedby) and the answer's status as before.  field_need()
 * records which field it refused in the request (r->bad_field).
 */
#ifndef TALLY_FORM_H
#define TALLY_FORM_H

#include "web/req.h"

/* The post form: a new post (action "/posts"), an edit, or either one
 * refused.  Values NULL: empty. */
struct post_form {
	const char	*action;	/* "/posts" or "/posts/ID/edit" */
	const char	*title;		/* heading; NULL: none (the feed) */
	const char	*button;
	const char	*body;
	const char	*topic;
	int		 publish;
};

/* The value of a form field as typed, when it may be shown again, else
 * NULL; multiline: a body (CR, LF and tab allowed). */
const char	*form_typed(const struct req *, const char *field,
		    int multiline);
/* ` aria-invalid="true" aria-describedby="err-FIELD"` when field is the
 * refused one. */
void		 form_mark(struct req *, const char *field);
/* The refused field's reason, as <p id="err-FIELD">, when field is it. */
void		 form_reason(struct req *, const char *field);
/* The refusal's message, naming the field, atop a form page. */
void		 form_flash(struct req *);
void		 form_post(struct req *, const struct post_form *);
/* The comment box of post id, holding body (NULL: empty). */
void		 form_comment(struct req *, long long post_id, const char *body);

#endif
