/* resp.c -- the response writer; the only file that writes to FastCGI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "base/log.h"
#include "web/html.h"
#include "web/layout.h"
#include "web/resp.h"

const char *
resp_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 204: return "No Content";
	case 303: return "See Other";
	case 304: return "Not Modified";
	case 400: return "Bad Request";
	case 401: return "Unauthorized";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 409: return "Conflict";
	case 413: return "Payload Too Large";
	case 429: return "Too Many Requests";
	case 500: return "Internal Server Error";
	case 503: return "Service Unavailable";
	default: return "Unknown";
	}
}

void
resp_header(struct req *r, const char *name, const char *value)
{
	if (strpbrk(name, "\r\n:") != NULL || strpbrk(value, "\r\n") != NULL) {
		log_warn("header %s dropped: CR/LF in value", name);
		return;
	}
	buf_puts(&r->head, name);
	buf_puts(&r->head, ": ");
	buf_puts(&r->head, value);
	buf_puts(&r->head, "\r\n");
}

int
resp_tls(const struct req *r)
{
	const char *https = req_param(r, "HTTPS");

	return https != NULL && strcmp(https, "on") == 0;
}

void
resp_cookie(struct req *r, const char *name, const char *value, long max_age)
{
	char v[600];

	if (max_age < 0)
		snprintf(v, sizeof(v), "%s=%s; Path=/; HttpOnly; SameSite=Lax%s",
		    name, value, resp_tls(r) ? "; Secure" : "");
	else
		snprintf(v, sizeof(v), "%s=%s; Path=/; Max-Age=%ld; HttpOnly; "
		    "SameSite=Lax%s", name, value, max_age,
		    resp_tls(r) ? "; Secure" : "");
	resp_header(r, "Set-Cookie", v);
}

int
resp_redirect(struct req *r, const char *path)
{
	r->status = 303;
	resp_header(r, "Location", path);
	buf_reset(&r->body);
	return 0;
}

int
resp_error(struct req *r, int status, const char *msg)
{
	json_t *o;
	char *s;

	if (r->method == METHOD_POST && req_wants_json(r)) {
		/* a script's action: the same status, the reason as JSON */
		o = json_pack("{s:s}", "error", msg);
		s = o != NULL ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
		resp_text(r, status, "application/json", s != NULL ? s :
		    "{\"error\":\"?\"}");
		free(s);
		return -1;
	}
	/* The header names the user: a presumed one is confirmed first (if
	 * not a user after all, route_dispatch() runs the page again). */
	if (r->presumed && !req_confirm(r, NULL, -1))
		return -1;
	buf_reset(&r->body);
	r->status = status;
	r->ctype = NULL;
	/* no I/O: the badges only when the page had read them already */
	page_frame(r, resp_reason(status), r->have_badges ? &r->badges : NULL);
	html_raw(&r->body, "<section class=\"error\" data-status=\"");
	html_int(&r->body, status);
	html_raw(&r->body, "\"><h1>");
	html_int(&r->body, status);
	html_raw(&r->body, " ");
	html_text(&r->body, resp_reason(status));
	html_raw(&r->body, "</h1><p>");
	html_text(&r->body, msg);
	html_raw(&r->body, "</p><p><a href=\"/\">Back to tally</a></p></section>");
	page_end(r);
	return -1;
}

void
resp_text(struct req *r, int status, const char *ctype, const char *text)
{
	buf_reset(&r->body);
	r->status = status;
	r->ctype = ctype;
	buf_puts(&r->body, text);
}

int
resp_send(struct req *r)
{
	struct buf h = { 0 };
	int rc = 0;

	/* Put piece by piece: every answer of every handler goes through
	 * here, and a printf's format parse cost more than the copies. */
	buf_puts(&h, "Status: ");
	buf_put_ll(&h, r->status);
	buf_putc(&h, ' ');
	buf_puts(&h, resp_reason(r->status));
	buf_puts(&h, "\r\nContent-Type: ");
	buf_puts(&h, r->ctype != NULL ? r->ctype : "text/html; charset=utf-8");
	buf_puts(&h, "\r\nCache-Control: no-store\r\n");
	if (r->new_pcsrf) {
		buf_puts(&h, "Set-Cookie: pcsrf=");
		buf_puts(&h, r->csrf);
		buf_puts(&h, "; Path=/; HttpOnly; SameSite=Lax");
		buf_puts(&h, resp_tls(r) ? "; Secure\r\n" : "\r\n");
	}
	/* over TLS, browsers keep to it for a year */
	if (resp_tls(r))
		buf_puts(&h, "Strict-Transport-Security: max-age=31536000\r\n");
	if (r->head.len > 0)
		buf_put(&h, r->head.p, r->head.len);
	buf_puts(&h, "\r\n");
	if (r->fr == NULL)
		goto out;
	if (FCGX_PutStr(h.p, (int)h.len, r->fr->out) < 0)
		rc = -1;
	else if (r->method != METHOD_HEAD && r->body.len > 0 &&
	    FCGX_PutStr(r->body.p, (int)r->body.len, r->fr->out) < 0)
		rc = -1;
out:
	buf_free(&h);
	return rc;
}
