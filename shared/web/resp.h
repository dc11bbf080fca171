/* resp.h -- building and sending the response of a struct req.
 *
 * Pages append HTML to r->body (through html.h) and set r->status;
 * resp_send() is the only code that writes to the FastCGI stream.
 * Personalised output is never cached: Cache-Control: no-store.
 */
#ifndef TALLY_RESP_H
#define TALLY_RESP_H

#include "web/req.h"

/* Adds "name: value"; a value with CR or LF is dropped (logged). */
void		 resp_header(struct req *, const char *name, const char *value);
/* 1 when the request came over TLS (nginx passes HTTPS=on): cookies then
 * carry Secure and responses Strict-Transport-Security. */
int		 resp_tls(const struct req *);
/* Set-Cookie name=value; Path=/; HttpOnly; SameSite=Lax[; Secure]
 * (max_age < 0: session cookie; 0: delete). */
/* The one-time message (web/flash.h: an enum flash) the page this
 * answer's redirect leads to shows. */
void		 resp_flash(struct req *, int flash);
void		 resp_cookie(struct req *, const char *name, const char *value,
		    long max_age);
/* 303 See Other to a relative path.  Returns 0. */
int		 resp_redirect(struct req *, const char *path);
/* The one error page: status, a title from the status, and msg (kept in
 * r->err_msg).  Discards any body built so far; does no I/O (a presumed
 * reader's is made again by route.c once confirmed).  Returns -1, for
 * "return resp_error(...)". */
int		 resp_error(struct req *, int status, const char *msg);
/* A plain-text answer (healthz, metrics). */
void		 resp_text(struct req *, int status, const char *ctype,
		    const char *text);
const char	*resp_reason(int status);
/* Writes status line, headers and body to the client; 0 or -1 (gone). */
int		 resp_send(struct req *);

/* Forgets the response made so far (status 200, no header, no body, no
 * error message, nothing to answer later): an action run again. */
void	resp_reset(struct req *);

#endif
