/* view_account.c -- the signup and login forms; see view_account.h. */
#include "web/form.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/view_account.h"

static void
field_value(struct req *r, const char *field)
{
	const char *v = form_typed(r, field, 0);

	if (v != NULL) {
		html_raw(&r->body, " value=\"");
		html_attr(&r->body, v);
		html_raw(&r->body, "\"");
	}
}

static void
error_note(struct req *r, const char *err)
{
	if (err == NULL)
		return;
	html_raw(&r->body, "<p class=\"flash error\" role=\"alert\">");
	html_text(&r->body, err);
	html_raw(&r->body, "</p>");
}

void
view_signup(struct req *r, const void *vm)
{
	const struct account_form *m = vm;
	const char *err = m->err;
	struct buf *b = &r->body;

	buf_reset(b);
	r->status = m->status;
	layout_begin(r, "Sign up");
	html_raw(b, "<section class=\"card narrow\"><h1>Create your account</h1>");
	error_note(r, err);
	html_raw(b, "<form method=\"post\" action=\"/signup\" class=\"stack\">");
	layout_csrf(r);
	html_raw(b, "<label>Login <small>3\xe2\x80\x93" "32 letters, digits or _</small>"
	    "<input name=\"login\" required minlength=\"3\" maxlength=\"32\" "
	    "pattern=\"[A-Za-z0-9_]{3,32}\" autocomplete=\"username\"");
	field_value(r, "login");
	form_mark(r, "login");
	html_raw(b, "></label>");
	form_reason(r, "login");
	html_raw(b, "<label>Name <input name=\"name\" required "
	    "maxlength=\"64\" autocomplete=\"name\"");
	field_value(r, "name");
	form_mark(r, "name");
	html_raw(b, "></label>");
	form_reason(r, "name");
	html_raw(b, "<label>Password <small>at least 8 characters</small>"
	    "<input type=\"password\" name=\"password\" required minlength=\"8\" "
	    "maxlength=\"128\" autocomplete=\"new-password\"");
	form_mark(r, "password");
	html_raw(b, "></label>");
	form_reason(r, "password");
	html_raw(b, "<button type=\"submit\">Sign up</button></form>"
	    "<p>Already have an account? <a href=\"/login\">Log in</a></p>"
	    "</section>");
	layout_end(r);
}

void
view_login(struct req *r, const void *vm)
{
	const struct account_form *m = vm;
	const char *err = m->err;
	struct buf *b = &r->body;

	buf_reset(b);
	r->status = m->status;
	layout_begin(r, "Log in");
	html_raw(b, "<section class=\"card narrow\"><h1>Log in</h1>");
	error_note(r, err);
	html_raw(b, "<form method=\"post\" action=\"/login\" class=\"stack\">");
	layout_csrf(r);
	html_raw(b, "<label>Login <input name=\"login\" required "
	    "autocomplete=\"username\"");
	field_value(r, "login");
	html_raw(b, "></label><label>Password <input type=\"password\" "
	    "name=\"password\" required autocomplete=\"current-password\">"
	    "</label><button type=\"submit\">Log in</button></form>"
	    "<p>New here? <a href=\"/signup\">Create an account</a></p>"
	    "</section>");
	layout_end(r);
}

void
view_settings(struct req *r, const void *vm)
{
	const struct settings_form *m = vm;
	const char *typed = form_typed(r, "name", 0);
	struct buf *b = &r->body;

	buf_reset(b);
	r->status = m->status;
	layout_begin(r, "Settings");
	html_raw(b, "<section class=\"card narrow\"><h1>Settings</h1>");
	error_note(r, m->err);
	html_raw(b, "<form method=\"post\" action=\"/settings\" class=\"stack\">");
	layout_csrf(r);
	html_raw(b, "<h2>Your name</h2><label>Display name "
	    "<input name=\"name\" required maxlength=\"64\" "
	    "autocomplete=\"name\" value=\"");
	html_attr(b, typed != NULL ? typed : m->name);
	html_raw(b, "\"");
	form_mark(r, "name");
	html_raw(b, "></label>");
	form_reason(r, "name");
	html_raw(b, "<button type=\"submit\">Save name</button></form>"
	    "<form method=\"post\" action=\"/settings\" class=\"stack\">");
	layout_csrf(r);
	html_raw(b, "<h2>Password</h2><p class=\"muted\">Changing it ends "
	    "every other session of your account.</p>"
	    "<label>Current password <input type=\"password\" "
	    "name=\"current\" required autocomplete=\"current-password\"");
	form_mark(r, "current");
	html_raw(b, "></label>");
	form_reason(r, "current");
	html_raw(b, "<label>New password <small>at least 8 characters</small>"
	    "<input type=\"password\" name=\"password\" required "
	    "minlength=\"8\" maxlength=\"128\" autocomplete=\"new-password\"");
	form_mark(r, "password");
	html_raw(b, "></label>");
	form_reason(r, "password");
	html_raw(b, "<button type=\"submit\">Change password</button></form>"
	    "</section>");
	layout_end(r);
}
