/* web_pages.c -- the signup and login forms, and starting a session. */
#include "social/sesscache.h"
#include "web/act.h"
#include "web/form.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/resp.h"
#include "web_pages.h"

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
web_signup_form(struct req *r, int status, const char *err)
{
	struct buf *b = &r->body;

	buf_reset(b);
	r->status = status;
	page_begin(r, "Sign up");
	html_raw(b, "<section class=\"card narrow\"><h1>Create your account</h1>");
	error_note(r, err);
	html_raw(b, "<form method=\"post\" action=\"/signup\" class=\"stack\">");
	page_csrf(r);
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
	page_end(r);
}

void
web_login_form(struct req *r, int status, const char *err)
{
	struct buf *b = &r->body;

	buf_reset(b);
	r->status = status;
	page_begin(r, "Log in");
	html_raw(b, "<section class=\"card narrow\"><h1>Log in</h1>");
	error_note(r, err);
	html_raw(b, "<form method=\"post\" action=\"/login\" class=\"stack\">");
	page_csrf(r);
	html_raw(b, "<label>Login <input name=\"login\" required "
	    "autocomplete=\"username\"");
	field_value(r, "login");
	html_raw(b, "></label><label>Password <input type=\"password\" "
	    "name=\"password\" required autocomplete=\"current-password\">"
	    "</label><button type=\"submit\">Log in</button></form>"
	    "<p>New here? <a href=\"/signup\">Create an account</a></p>"
	    "</section>");
	page_end(r);
}

int
web_start_session(struct req *r, long long uid)
{
	char sid[SID_MAX + 1], csrf[TOKEN_LEN + 1];
	const char *old = req_cookie(r, "sid"), *next;

	if (old != NULL)
		sesscache_end(&r->app->db, &r->app->rds, old);
	if (session_create(&r->app->db, uid, r->app->cfg.session_secs, sid,
	    csrf) == -1)
		return resp_error(r, 500, "The session could not be started.");
	resp_cookie(r, "sid", sid, r->app->cfg.session_secs);
	/* the pre-session token ends with the login: a visitor's token that
	 * leaked before it cannot serve after it */
	if (req_cookie(r, "pcsrf") != NULL)
		resp_cookie(r, "pcsrf", "", 0);
	/* back to the page that sent the visitor to log in (route.c) */
	if ((next = req_cookie(r, "next")) != NULL) {
		resp_cookie(r, "next", "", 0);
		if (act_back_ok(next))
			return resp_redirect(r, next);
	}
	return resp_redirect(r, "/feed");
}
