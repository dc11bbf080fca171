/* pg_stmt.c -- PostgreSQL statements: translation, binding, running;
 * see pg.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "base/buf.h"
#include "base/log.h"
#include "store/pg.h"
#include "store/pg_int.h"
#include "store/query.h"

/* Type oids of the bound values (PostgreSQL's catalog numbers). */
#define OID_BYTEA	17
#define OID_INT8	20

/* Skips "INDEXED BY name " at s; how many bytes it takes (0: none). */
static size_t
hint_len(const char *s)
{
	const char *p = s;

	if (strncmp(p, "INDEXED BY ", 11) != 0)
		return 0;
	p += 11;
	while (isalnum((unsigned char)*p) || *p == '_')
		p++;
	while (*p == ' ')
		p++;
	return (size_t)(p - s);
}

char *
pg_translate(const char *sql)
{
	struct buf b = { 0 };
	const char *s = sql;
	int next = 1, quoted = 0;
	long v;
	char *end;
	size_t h;

	while (*s != '\0') {
		if (*s == '\'')
			quoted = !quoted;
		if (!quoted && *s == '?') {
			s++;
			if (isdigit((unsigned char)*s)) {
				v = strtol(s, &end, 10);
				s = end;
			} else
				v = next;
			next = (int)v + 1;
			buf_printf(&b, "$%ld", v);
			continue;
		}
		if (!quoted && (h = hint_len(s)) > 0) {
			s += h;
			continue;
		}
		buf_putc(&b, *s++);
	}
	buf_putc(&b, '\0');
	return buf_take(&b);
}

/* The highest "$N" of translated text. */
static int
nparams(const char *sql)
{
	long n = 0, v;

	for (; *sql != '\0'; sql++)
		if (*sql == '$' && (v = strtol(sql + 1, NULL, 10)) > n)
			n = v;
	return (int)n;
}

static struct pgq *
pgq_new(struct pgdb *p, const char *sql, int once)
{
	struct pgq *q = calloc(1, sizeof(*q));

	if (q == NULL)
		return NULL;
	q->p = p;
	q->sql = pg_translate(sql);
	q->n = nparams(q->sql);
	q->once = once;
	snprintf(q->name, sizeof(q->name), "t%u", ++p->seq);
	q->val = calloc((size_t)q->n + 1, sizeof(*q->val));
	q->len = calloc((size_t)q->n + 1, sizeof(*q->len));
	q->fmt = calloc((size_t)q->n + 1, sizeof(*q->fmt));
	q->kind = calloc((size_t)q->n + 1, 1);
	q->own = calloc((size_t)q->n + 1, sizeof(*q->own));
	q->num = calloc((size_t)q->n + 1, sizeof(*q->num));
	if (q->val == NULL || q->len == NULL || q->fmt == NULL ||
	    q->kind == NULL || q->own == NULL || q->num == NULL) {
		pgq_free(q);
		return NULL;
	}
	return q;
}

void
pgq_free(struct pgq *q)
{
	if (q == NULL)
		return;
	pgq_done(q);
	free(q->sql);
	free(q->val);
	free(q->len);
	free(q->fmt);
	free(q->kind);
	free(q->own);
	free(q->num);
	free(q);
}

struct pgq *
pg_stmt(struct pgdb *p, int id, const char *sql)
{
	if (p->st[id] == NULL && (p->st[id] = pgq_new(p, sql, 0)) == NULL)
		log_err("postgres statement %d: out of memory", id);
	return p->st[id];
}

struct pgq *
pg_prepare_once(struct pgdb *p, const char *sql)
{
	return pgq_new(p, sql, 1);
}

void
pgq_finalize(struct pgq *q)
{
	char sql[40];
	PGresult *r;

	if (q == NULL)
		return;
	if (q->prepared && q->epoch == q->p->epoch) {
		snprintf(sql, sizeof(sql), "DEALLOCATE %s", q->name);
		r = PQexec(q->p->c, sql);
		PQclear(r);
	}
	pgq_free(q);
}

void
pgq_reset(struct pgq *q)
{
	PQclear(q->res);
	q->res = NULL;
	q->ran = 0;
	q->row = q->nrows = 0;
}

void
pgq_done(struct pgq *q)
{
	int i;

	pgq_reset(q);
	for (i = 1; i <= q->n; i++) {
		free(q->own[i]);
		q->own[i] = NULL;
		q->val[i] = NULL;
		q->kind[i] = 0;
	}
}

void
pgq_bind(struct pgq *q, int i, int kind, const void *v, int len, int copy)
{
	char *c;

	if (q == NULL || i < 1 || i > q->n)
		return;
	free(q->own[i]);
	q->own[i] = NULL;
	q->kind[i] = (char)kind;
	q->fmt[i] = kind == 'b';	/* a blob goes as its bytes */
	q->len[i] = 0;
	q->val[i] = NULL;
	if (kind == 'n')
		return;
	if (kind == 'i') {
		snprintf(q->num[i], sizeof(q->num[i]), "%lld",
		    *(const long long *)v);
		q->val[i] = q->num[i];
		return;
	}
	if (kind == 't') {	/* text: NUL-terminated for libpq */
		if (len < 0)
			len = (int)strlen(v);
		else
			copy = 1;	/* a length: maybe no NUL after it */
	}
	q->len[i] = len;
	if (!copy) {
		q->val[i] = v;
		return;
	}
	if ((c = malloc((size_t)len + 1)) == NULL)
		return;		/* runs as NULL: the caller's error shows */
	memcpy(c, v, (size_t)len);
	c[len] = '\0';
	q->own[i] = c;
	q->val[i] = c;
}

/* Prepares q with the types of its values now bound. */
static int
prepare(struct pgq *q)
{
	Oid *types = calloc((size_t)q->n + 1, sizeof(*types));
	PGresult *r;
	int i, ok;

	if (types == NULL)
		return -1;
	for (i = 1; i <= q->n; i++)
		types[i] = q->kind[i] == 'i' ? OID_INT8 :
		    q->kind[i] == 'b' ? OID_BYTEA : 0;
	if (q->once)	/* a new name: an old one may be taken */
		snprintf(q->name, sizeof(q->name), "t%u", ++q->p->seq);
	r = PQprepare(q->p->c, q->name, q->sql, q->n, types + 1);
	free(types);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok) {
		snprintf(q->p->err, sizeof(q->p->err), "%s",
		    PQresultErrorMessage(r));
		q->p->err[strcspn(q->p->err, "\n")] = '\0';
		log_err("postgres prepare: %s: %.80s", q->p->err, q->sql);
	}
	PQclear(r);
	if (!ok)
		return -1;
	q->prepared = 1;
	q->epoch = q->p->epoch;
	return 0;
}

/* Runs q: its whole result into q->res.  0, or -1. */
static int
execute(struct pgq *q)
{
	struct pgdb *p = q->p;
	ExecStatusType st;
	const char *tag;

	pg_check_conn(p);
	if ((!q->prepared || q->epoch != p->epoch) && prepare(q) == -1)
		return -1;
	if (p->nstmt != NULL)
		(*p->nstmt)++;
	q->res = PQexecPrepared(p->c, q->name, q->n, q->val + 1, q->len + 1,
	    q->fmt + 1, 0);
	q->ran = 1;
	st = PQresultStatus(q->res);
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK) {
		snprintf(p->err, sizeof(p->err), "%s",
		    PQresultErrorMessage(q->res));
		p->err[strcspn(p->err, "\n")] = '\0';
		tag = PQresultErrorField(q->res, PG_DIAG_SQLSTATE);
		snprintf(p->state, sizeof(p->state), "%s", tag != NULL ? tag : "");
		return -1;
	}
	q->nrows = st == PGRES_TUPLES_OK ? PQntuples(q->res) : 0;
	q->row = -1;
	tag = PQcmdStatus(q->res);
	if (strncmp(tag, "INSERT", 6) == 0 || strncmp(tag, "UPDATE", 6) == 0 ||
	    strncmp(tag, "DELETE", 6) == 0)
		p->changes = (int)strtol(PQcmdTuples(q->res), NULL, 10);
	return 0;
}

int
pgq_step(struct pgq *q)
{
	if (q == NULL)
		return DBQ_ERR;
	if (!q->ran && execute(q) == -1)
		return DBQ_ERR;
	if (q->res == NULL || PQresultStatus(q->res) != PGRES_TUPLES_OK) {
		if (PQresultStatus(q->res) == PGRES_COMMAND_OK)
			return DBQ_DONE;
		return DBQ_ERR;
	}
	if (q->row + 1 >= q->nrows) {
		q->row = q->nrows;
		return DBQ_DONE;
	}
	q->row++;
	return DBQ_ROW;
}

const char *
pgq_value(struct pgq *q, int col)
{
	if (q == NULL || q->res == NULL || q->row < 0 || q->row >= q->nrows ||
	    col >= PQnfields(q->res) || PQgetisnull(q->res, q->row, col))
		return NULL;
	return PQgetvalue(q->res, q->row, col);
}
