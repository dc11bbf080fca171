/* resp.c -- the response writer; the only file that writes to FastCGI.
 *
 * An answer leaves in one writev(): its FCGI_STDOUT records, the empty
 * one that ends the stream and FCGI_END_REQUEST.  Through libfcgi's
 * stream it left in 8 KB records, one write() each, the last with the
 * closing records: a 17.5 KB profile was three writes (and five reads
 * by nginx, into its 4 KB buffers by default: tally-fastcgi.conf sizes
 * them for a page).  Those records are what FCGX_Finish_r() would have
 * written; the request's output stream is then marked closed, so that
 * FCGX_Finish_r() writes nothing more (its stderr stream, never written,
 * ends with no record).  This reads and sets fields that fcgiapp.h
 * shows but calls libfcgi's own (the request's ipcFd and requestId, the
 * stream's isClosed and wasFCloseCalled); test-resp-fcgi reads the
 * records back through a real libfcgi request, so a libfcgi that used
 * them otherwise fails it.
 *
 * Every answer says its Content-Length: without it nginx sent pages to
 * the client chunked, the last chunk in a write of its own.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <fastcgi.h>
#include <jansson.h>

#include "base/log.h"
#include "web/flash.h"
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
	case 406: return "Not Acceptable";
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
	char v[800];
	int tls = resp_tls(r);
	const char *pre = tls ? "__Host-" : "";

	/* over HTTPS "__Host-<name>" (Secure, Path=/, no Domain): req.h */
	if (max_age < 0)
		snprintf(v, sizeof(v), "%s%s=%s; Path=/; HttpOnly; SameSite=Lax%s",
		    pre, name, value, tls ? "; Secure" : "");
	else
		snprintf(v, sizeof(v), "%s%s=%s; Path=/; Max-Age=%ld; HttpOnly; "
		    "SameSite=Lax%s", pre, name, value, max_age,
		    tls ? "; Secure" : "");
	resp_header(r, "Set-Cookie", v);
}

void
resp_flash(struct req *r, int f)
{
	if (*flash_code((enum flash)f) != '\0')
		resp_cookie(r, FLASH_COOKIE, flash_code((enum flash)f),
		    FLASH_MAX_AGE);
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
	/* No I/O.  A presumed reader (req.h) is not named in the header:
	 * route.c confirms who it is and has the page made again. */
	if (msg != r->err_msg)
		snprintf(r->err_msg, sizeof(r->err_msg), "%s", msg);
	buf_reset(&r->body);
	r->status = status;
	r->ctype = NULL;
	/* no I/O: the badges only when the page had read them already */
	layout_frame(r, resp_reason(status), r->have_badges ? &r->badges : NULL);
	html_raw(&r->body, "<section class=\"error\" data-status=\"");
	html_int(&r->body, status);
	html_raw(&r->body, "\"><h1>");
	html_int(&r->body, status);
	html_raw(&r->body, " ");
	html_text(&r->body, resp_reason(status));
	html_raw(&r->body, "</h1><p>");
	html_text(&r->body, msg);
	html_raw(&r->body, "</p><p><a href=\"/\">Back to tally</a></p></section>");
	layout_end(r);
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

#define REC_MAX		65528	/* FCGI_MAX_LENGTH, a multiple of 8 */
#define REC_BATCH	16	/* records a writev() carries at most */

static void
rec_head(FCGI_Header *hd, int type, int id, size_t len)
{
	hd->version = FCGI_VERSION_1;
	hd->type = (unsigned char)type;
	hd->requestIdB1 = (unsigned char)((id >> 8) & 0xff);
	hd->requestIdB0 = (unsigned char)(id & 0xff);
	hd->contentLengthB1 = (unsigned char)((len >> 8) & 0xff);
	hd->contentLengthB0 = (unsigned char)(len & 0xff);
	hd->paddingLength = 0;
	hd->reserved = 0;
}

/* All of iov[0..n), resumed after a short write or a signal (the
 * request's socket blocks, as libfcgi's own writes assume). */
static int
writev_all(int fd, struct iovec *iov, int n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = writev(fd, iov, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		for (; n > 0 && (size_t)w >= iov->iov_len; iov++, n--)
			w -= (ssize_t)iov->iov_len;
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/* Writes part[0] then part[1] as the request's stdout, and ends the
 * request (see the top of this file).  0 or -1. */
static int
send_records(FCGX_Request *fr, const struct iovec part[2])
{
	FCGI_Header hd[REC_BATCH + 1];
	FCGI_EndRequestRecord end;
	struct iovec iov[3 * REC_BATCH + 2];
	size_t left = part[0].iov_len + part[1].iov_len, room = 0, len, m;
	const char *p;
	int n = 0, nh = 0, k;

	/* nothing of libfcgi's own is written after this */
	fr->out->wasFCloseCalled = 1;
	fr->out->isClosed = 1;
	for (k = 0; k < 2; k++) {
		p = part[k].iov_base;
		for (len = part[k].iov_len; len > 0; len -= m, p += m) {
			if (room == 0) {	/* a new record */
				if (nh == REC_BATCH) {
					if (writev_all(fr->ipcFd, iov, n) == -1)
						goto fail;
					n = nh = 0;
				}
				room = left < REC_MAX ? left : REC_MAX;
				left -= room;
				rec_head(&hd[nh], FCGI_STDOUT, fr->requestId,
				    room);
				iov[n++] = (struct iovec){ &hd[nh++],
				    sizeof(hd[0]) };
			}
			m = len < room ? len : room;
			iov[n++] = (struct iovec){ (char *)p, m };
			room -= m;
		}
	}
	rec_head(&hd[nh], FCGI_STDOUT, fr->requestId, 0);
	iov[n++] = (struct iovec){ &hd[nh], sizeof(hd[0]) };
	memset(&end, 0, sizeof(end));
	rec_head(&end.header, FCGI_END_REQUEST, fr->requestId,
	    sizeof(end.body));
	end.body.protocolStatus = FCGI_REQUEST_COMPLETE;
	iov[n++] = (struct iovec){ &end, sizeof(end) };
	if (writev_all(fr->ipcFd, iov, n) == 0)
		return 0;
fail:
	fr->out->FCGI_errno = errno;	/* FCGX_Finish_r() then closes */
	return -1;
}

int
resp_send(struct req *r)
{
	struct buf h = { 0 };
	struct iovec part[2];
	int rc = 0, bodied = r->status != 204 && r->status != 304;

	/* Put piece by piece: every answer of every handler goes through
	 * here, and a printf's format parse cost more than the copies. */
	buf_puts(&h, "Status: ");
	buf_put_ll(&h, r->status);
	buf_putc(&h, ' ');
	buf_puts(&h, resp_reason(r->status));
	buf_puts(&h, "\r\nContent-Type: ");
	buf_puts(&h, r->ctype != NULL ? r->ctype : "text/html; charset=utf-8");
	if (bodied) {
		buf_puts(&h, "\r\nContent-Length: ");
		buf_put_ll(&h, (long long)r->body.len);
	}
	buf_puts(&h, "\r\nCache-Control: no-store\r\n");
	if (r->new_pcsrf) {
		/* over TLS a __Host- cookie, as resp_cookie() sets them */
		buf_puts(&h, resp_tls(r) ? "Set-Cookie: __Host-pcsrf=" :
		    "Set-Cookie: pcsrf=");
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
	part[0] = (struct iovec){ h.p, h.len };
	part[1] = (struct iovec){ r->body.p,
	    bodied && r->method != METHOD_HEAD ? r->body.len : 0 };
	rc = send_records(r->fr, part);
out:
	buf_free(&h);
	return rc;
}

void
resp_reset(struct req *r)
{
	r->status = 200;
	r->ctype = NULL;
	buf_reset(&r->head);
	buf_reset(&r->body);
	r->err_msg[0] = '\0';
	r->then = NULL;
	r->then_arg = 0;
}
