/* pg.c -- the PostgreSQL engine: connection, transactions, statements;
 * see pg.h.
 *
 * One file: why this file of over 500 lines is one concept -- a
 * statement lives on its connection: prepared on it as it is now (the
 * epoch pg_check_conn() bumps), run once it was checked, riding in the
 * round trip of its transaction's BEGIN or COMMIT, freed with it (it
 * caches the table's); a cursor lives in a transaction, which closes
 * it; statements sent ahead live in the connection's pipeline (pg_ahead.c,
 * beside: pg_int.h), which any other statement first empties.  Cut in two, connection and
 * statements called each other.  The
 * connection and its transactions come first; the statements use them,
 * and are reached back only to be freed (pg_close(), pgq_free()). */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libpq-fe.h>

#include "base/buf.h"
#include "base/log.h"
#include "store/dbq_int.h"
#include "store/pg.h"
#include "store/pg_ahead.h"
#include "store/pg_int.h"
#include "store/schema.h"
#include "store/sql.h"

static void	pg_check_conn(struct pgdb *);
static int	refused(struct pgdb *);

static void	pq_done(struct dbq *);

static void	pgq_free(struct pgq *);
static void	cursor_close(struct pgq *);
static int	begin_now(struct pgdb *);

int
pg_is_url(const char *s)
{
	return strncmp(s, "postgresql://", 13) == 0 ||
	    strncmp(s, "postgres://", 11) == 0 || strchr(s, '=') != NULL;
}

/* The same on p's connection, counted (pg_ntrips()). */
static int
run(struct pgdb *p, const char *sql, char *err, size_t errsz)
{
	pg_ahead_wait(p);	/* no statement runs in a pipeline left open */
	p->trips++;
	return pg_run_on(p->c, sql, err, errsz);
}

/* A transaction begins or ends (or the connection is new): the cursors
 * open before are gone with theirs. */
static void
txn_turn(struct pgdb *p)
{
	p->txns++;
	p->streams = 0;
}

/* A transaction of the caller's own, while a streamed statement reads
 * in the read-only transaction it began: refused (pg.h). */
static int
streaming(struct pgdb *p)
{
	if (p->streams == 0)
		return 0;
	snprintf(p->err, sizeof(p->err), "a transaction begun while a "
	    "streamed statement reads (pg.h)");
	log_err("postgres: %s", p->err);
	return 1;
}

int
pg_exec(struct pgdb *p, const char *sql)
{
	int rc, end = strcmp(sql, "COMMIT") == 0 ||
	    strcmp(sql, "ROLLBACK") == 0;

	if (strncmp(sql, "PRAGMA", 6) == 0)
		return 0;		/* SQLite's knobs */
	if (strcmp(sql, "BEGIN") == 0)	/* a read snapshot */
		sql = "BEGIN ISOLATION LEVEL REPEATABLE READ";
	if (strncmp(sql, "BEGIN", 5) == 0 && streaming(p))
		return -1;
	if (end) {
		p->commit_due = 0;	/* not sent: this is the end */
		p->save_due = 0;
		if (p->open && !p->lost && p->committed == 0 &&
		    !p->begin_due)
			pg_check_conn(p);	/* lost: no COMMIT on the next */
		p->open = 0;
		if (p->lost) {		/* rolled back with its connection */
			p->lost = p->committed = p->begin_due = 0;
			txn_turn(p);
			if (sql[0] == 'R')
				return 0;
			refused(p);
			log_err("postgres: %s: COMMIT", p->err);
			return -1;
		}
		/* a COMMIT that went with the last statement: how it went;
		 * a ROLLBACK after it, of what its failure left open */
		rc = sql[0] == 'C' ? p->committed : 0;
		if (p->committed != 0 && (rc != 0 ||
		    PQtransactionStatus(p->c) == PQTRANS_IDLE)) {
			p->committed = 0;
			txn_turn(p);
			if (rc == -1)
				log_err("postgres: %s: COMMIT", p->err);
			return rc == -1 ? -1 : 0;
		}
		p->committed = 0;
		if (p->begin_due) {
			p->begin_due = 0;	/* nothing sent: nothing to end */
			txn_turn(p);
			return 0;
		}
	}
	if (begin_now(p) == -1)
		return -1;
	if (strncmp(sql, "BEGIN", 5) == 0) {
		/* a transaction of its own: one lost is over (its caller
		 * never ended it) */
		p->lost = p->open = 0;
		txn_turn(p);
	} else if (end)
		txn_turn(p);
	pg_check_conn(p);
	if (p->lost)
		return refused(p);
	if (run(p, sql, p->err, sizeof(p->err)) == -1) {
		log_err("postgres: %s: %.60s", p->err, sql);
		return -1;
	}
	if (strncmp(sql, "BEGIN", 5) == 0)
		p->open = 1;
	return 0;
}

/* A write transaction's start: BEGIN, and its transaction id taken at
 * once, so that it comes before any outbox id the transaction takes (the
 * outbox's horizon stands on that: count/outbox.h).  No lock: writers
 * run at once, each waiting only on the rows it shares with another. */
#define BEGIN_SQL	"BEGIN ISOLATION LEVEL READ COMMITTED"
#define XACT_SQL	"SELECT pg_current_xact_id()"

/* The savepoint due, "SAVEPOINT a<n>", into sql (24 bytes). */
static const char *
save_sql(const struct pgdb *p, char *sql, size_t sz)
{
	snprintf(sql, sz, "SAVEPOINT a%u", p->saves);
	return sql;
}

/* Sends a pg_begin() or pg_savepoint() still due, alone (one round
 * trip): before anything but a statement of the table (which takes them
 * along: pipelined()).  0, or -1 (logged; a BEGIN that failed began
 * nothing). */
static int
begin_now(struct pgdb *p)
{
	char sql[96], sp[24];
	int begin = p->begin_due, save = p->save_due;

	p->begin_due = p->save_due = 0;
	if (!begin && !save)
		return 0;
	snprintf(sql, sizeof(sql), "%s%s%s", begin ? BEGIN_SQL "; " XACT_SQL :
	    "", begin && save ? "; " : "", save ? save_sql(p, sp, sizeof(sp)) :
	    "");
	if (run(p, sql, p->err, sizeof(p->err)) == -1) {
		log_err("postgres: begin: %s", p->err);
		if (begin && PQtransactionStatus(p->c) != PQTRANS_IDLE)
			run(p, "ROLLBACK", p->err, sizeof(p->err));
		return -1;
	}
	return 0;
}

int
pg_begin(struct pgdb *p)
{
	/* Nothing is sent yet: BEGIN and the id go in the round trip of the
	 * transaction's first statement (pipelined()), one round trip a
	 * write less; the transaction is the caller's from now on
	 * (pg_in_txn()). */
	if (streaming(p) || begin_now(p) == -1)
		return -1;
	p->lost = p->open = 0;	/* a new transaction: one lost is over */
	pg_check_conn(p);
	p->state[0] = '\0';
	txn_turn(p);
	p->begin_due = 1;
	p->open = 1;
	return 0;
}

void
pg_commit_next(struct pgdb *p)
{
	/* in a transaction of the caller's only: a COMMIT ends it */
	if (pg_in_txn(p) && p->committed == 0)
		p->commit_due = 1;
}

void
pg_savepoint(struct pgdb *p)
{
	/* in a transaction of the caller's only */
	if (pg_in_txn(p)) {
		p->saves++;
		p->save_due = 1;
		p->state[0] = '\0';
	}
}

int
pg_savepoint_rollback(struct pgdb *p)
{
	char sql[40];

	if (p->save_due && !p->lost) {	/* nothing was sent since */
		p->save_due = 0;
		return 0;
	}
	p->save_due = 0;
	if (p->lost)
		return -1;	/* the transaction is gone */
	if (PQtransactionStatus(p->c) == PQTRANS_IDLE)
		return -1;	/* the transaction is gone */
	snprintf(sql, sizeof(sql), "ROLLBACK TO SAVEPOINT a%u", p->saves);
	if (run(p, sql, p->err, sizeof(p->err)) == -1) {
		log_err("postgres: %s: ROLLBACK TO SAVEPOINT", p->err);
		return -1;
	}
	return 0;
}

int
pg_in_txn(struct pgdb *p)
{
	PGTransactionStatusType st = PQtransactionStatus(p->c);

	/* the streams' own transaction is none of the caller's; a dead
	 * connection's state is unknown, and only one the caller opened
	 * on it is the caller's (lost with it: refused()) */
	if (p->begin_due || p->lost)
		return 1;
	if (st == PQTRANS_UNKNOWN)
		return p->open;
	return st != PQTRANS_IDLE && p->streams == 0;
}

/* A statement of a transaction whose connection was lost: refused, as
 * every one until the caller ends the transaction (its ROLLBACK passes,
 * its COMMIT fails).  The server rolled the transaction back with the
 * connection, and the new connection is in none: a statement run there
 * would commit on its own, apart from the rest (half an action, or an
 * action of a group that is then retried whole).  -1. */
static int
refused(struct pgdb *p)
{
	snprintf(p->err, sizeof(p->err), "the connection was lost inside "
	    "the transaction, which the server rolled back");
	snprintf(p->state, sizeof(p->state), "08006");
	return -1;
}

/* Once a connection was lost (the server restarted), connects again;
 * its prepared statements went with it, and so did the transaction the
 * caller had open on it (p->lost: refused()).  Outside a transaction it first
 * reads what the server sent meanwhile: a connection the server ended
 * while it sat idle (a restart, a backend terminated) holds its last
 * words (a FATAL notice) and then its end, and libpq marks it bad only
 * once it reads that end; so it reads while there is something to read,
 * and the statement goes out on a new connection instead of failing on
 * the old one.  One poll() a statement outside a transaction (nothing to
 * read, the usual case); none inside one. */
static void
pg_check_conn(struct pgdb *p)
{
	struct pollfd pfd;
	int i;

	pg_ahead_wait(p);	/* which may find the connection unusable */
	/* the server in no transaction on a live connection, none due or
	 * just committed: the caller's ended (or never began) on it, and a
	 * loss now would take nothing of it (p->open is not left to refuse
	 * the statements of a process that runs no transaction of its own) */
	if (p->open && !p->begin_due && p->committed == 0 && !p->broken &&
	    PQstatus(p->c) == CONNECTION_OK &&
	    PQtransactionStatus(p->c) == PQTRANS_IDLE)
		p->open = 0;
	for (i = 0; i < 4 && !p->broken && PQstatus(p->c) == CONNECTION_OK &&
	    PQtransactionStatus(p->c) == PQTRANS_IDLE; i++) {
		pfd.fd = PQsocket(p->c);
		pfd.events = POLLIN;
		if (poll(&pfd, 1, 0) <= 0 || !PQconsumeInput(p->c))
			break;
	}
	if (PQstatus(p->c) == CONNECTION_OK && !p->broken)
		return;
	p->broken = 0;
	if (p->open)
		p->lost = 1;	/* its transaction is gone: refused() */
	PQreset(p->c);
	if (PQstatus(p->c) != CONNECTION_OK)
		return;
	log_warn("postgres: connected again");
	p->epoch++;	/* every statement prepares again */
	txn_turn(p);	/* and no cursor is open on it */
	run(p, sql_pg_session, p->err, sizeof(p->err));
}

struct pgdb *
pg_open(const char *conninfo, unsigned long long *nstmt)
{
	struct pgdb *p;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	p->nstmt = nstmt;
	p->fetch = PG_FETCH_ROWS;
	p->c = PQconnectdb(conninfo);
	if (PQstatus(p->c) != CONNECTION_OK) {
		log_err("postgres connect: %s", PQerrorMessage(p->c));
		pg_close(p);
		return NULL;
	}
	if (run(p, sql_pg_session, p->err, sizeof(p->err)) == -1 ||
	    pg_migrate_on(p->c, p->err, sizeof(p->err)) == -1) {
		log_err("postgres: %s", p->err);
		pg_close(p);
		return NULL;
	}
	return p;
}

void
pg_close(struct pgdb *p)
{
	int i;

	if (p == NULL)
		return;
	pg_ahead_drop(p);
	for (i = 0; i < STMT__MAX; i++)
		if (p->st[i] != NULL)
			pgq_free(p->st[i]);
	PQfinish(p->c);
	free(p);
}

/* Statements: translated, bound, run on the connection. */

/* Type oids of the bound values (PostgreSQL's catalog numbers). */
#define OID_BYTEA	17
#define OID_INT8	20

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
pgq_new(struct pgdb *p, const char *sql, int once, int stream)
{
	struct pgq *q = calloc(1, sizeof(*q));
	struct buf b = { 0 };
	char *t;

	if (q == NULL)
		return NULL;
	q->q.engine = &pg_engine;
	q->p = p;
	q->once = once;
	snprintf(q->name, sizeof(q->name), "t%u", ++p->seq);
	t = pg_translate(sql);
	if (stream) {	/* what is prepared declares its cursor */
		q->stream = 1;
		buf_printf(&b, "DECLARE %sc NO SCROLL CURSOR FOR %s", q->name,
		    t);
		buf_putc(&b, '\0');
		free(t);
		t = buf_take(&b);
	}
	q->sql = t;
	q->n = nparams(q->sql);
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

static void
pgq_free(struct pgq *q)
{
	if (q == NULL)
		return;
	pq_done(&q->q);
	free(q->sql);
	free(q->val);
	free(q->len);
	free(q->fmt);
	free(q->kind);
	free(q->own);
	free(q->num);
	free(q);
}

struct dbq *
pg_stmt(struct pgdb *p, int id, const char *sql, int stream)
{
	if (p->st[id] == NULL &&
	    (p->st[id] = pgq_new(p, sql, 0, stream)) == NULL)
		log_err("postgres statement %d: out of memory", id);
	return p->st[id] != NULL ? &p->st[id]->q : NULL;
}

struct dbq *
pg_prepare_once(struct pgdb *p, const char *sql)
{
	struct pgq *q = pgq_new(p, sql, 1, 0);

	return q != NULL ? &q->q : NULL;
}

static void
pq_finalize(struct dbq *d)
{
	struct pgq *q = PQ(d);
	char sql[40];
	PGresult *r;

	if (q == NULL)
		return;
	if (q->prepared && q->epoch == q->p->epoch) {
		pg_ahead_wait(q->p);
		snprintf(sql, sizeof(sql), "DEALLOCATE %s", q->name);
		r = PQexec(q->p->c, sql);
		q->p->trips++;
		PQclear(r);
	}
	pgq_free(q);
}

static void
pq_reset(struct dbq *d)
{
	struct pgq *q = PQ(d);

	cursor_close(q);
	PQclear(q->res);
	q->res = NULL;
	q->ran = 0;
	q->row = q->nrows = 0;
}

static void
pq_done(struct dbq *d)
{
	struct pgq *q = PQ(d);
	int i;

	pq_reset(d);
	for (i = 1; i <= q->n; i++) {
		free(q->own[i]);
		q->own[i] = NULL;
		q->val[i] = NULL;
		q->kind[i] = 0;
	}
}

static void
pq_bind(struct dbq *d, int i, int kind, const void *v, int len, int copy)
{
	struct pgq *q = PQ(d);
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
	q->p->trips++;
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

/* q->res failed: its error on the connection.  -1. */
static int
failed(struct pgq *q)
{
	struct pgdb *p = q->p;
	const char *tag;

	snprintf(p->err, sizeof(p->err), "%s", PQresultErrorMessage(q->res));
	p->err[strcspn(p->err, "\n")] = '\0';
	tag = PQresultErrorField(q->res, PG_DIAG_SQLSTATE);
	snprintf(p->state, sizeof(p->state), "%s", tag != NULL ? tag : "");
	return -1;
}

/*
 * A streamed statement (sql_stream, sql.h) is a cursor: what is prepared
 * declares it, and its rows come p->fetch at a time (FETCH), so that a
 * result of millions of rows never sits whole in this process.  A
 * cursor lives in a transaction: the caller's, or else a read-only one
 * of its own, which the streams open meanwhile share (p->streams) and
 * which ends with the last of them.  Between two fetches the caller may
 * run other statements (reads: the transaction is read-only) and
 * streams; it may not begin a transaction of its own (refused), and one
 * that it ends (the caller's) takes the cursor with it.
 */
static int
cursor_open(struct pgq *q)
{
	struct pgdb *p = q->p;

	if (begin_now(p) == -1)	/* the caller's, then */
		return -1;
	if (PQtransactionStatus(p->c) == PQTRANS_IDLE) {
		txn_turn(p);
		if (run(p, "BEGIN READ ONLY", p->err, sizeof(p->err)) == -1)
			return -1;
	} else if (p->streams == 0) {
		q->txn = p->txns;	/* the caller's transaction */
		return 0;
	}
	p->streams++;
	q->own_txn = 1;
	q->txn = p->txns;
	return 0;
}

/* Closes q's cursor (nothing when none is open, or when its
 * transaction is over), and ends the streams' own transaction once no
 * stream is left in it (rolled back when a statement failed in it). */
static void
cursor_close(struct pgq *q)
{
	struct pgdb *p = q->p;
	PGTransactionStatusType ts = PQtransactionStatus(p->c);
	int live = q->txn == p->txns, end;
	char sql[48];

	end = live && q->own_txn && p->streams == 1;
	if (q->cursor && live && !end && ts == PQTRANS_INTRANS) {
		snprintf(sql, sizeof(sql), "CLOSE %sc", q->name);
		if (run(p, sql, p->err, sizeof(p->err)) == -1)
			log_warn("postgres: %s", p->err);
	}
	q->cursor = 0;
	if (q->own_txn && live && !end)
		p->streams--;
	q->own_txn = 0;
	if (!end)
		return;
	txn_turn(p);
	if (run(p, ts == PQTRANS_INTRANS ? "COMMIT" : "ROLLBACK", p->err,
	    sizeof(p->err)) == -1)
		log_warn("postgres: %s", p->err);
}

/* The next p->fetch rows of q's cursor into q->res.  0, or -1. */
static int
fetch(struct pgq *q)
{
	struct pgdb *p = q->p;
	char sql[64];

	PQclear(q->res);
	snprintf(sql, sizeof(sql), "FETCH FORWARD %d FROM %sc", p->fetch,
	    q->name);
	q->res = PQexec(p->c, sql);
	p->trips++;
	q->row = -1;
	q->nrows = 0;
	if (PQresultStatus(q->res) != PGRES_TUPLES_OK)
		return failed(q);
	q->nrows = PQntuples(q->res);
	q->last = q->nrows < p->fetch;
	if (q->nrows > p->held)
		p->held = q->nrows;
	return 0;
}

/* How a pipeline's COMMIT went by its answer r (NULL: none): 1, or -1
 * (its error in p->err; a failed statement's replaces it: execute()). */
static int
ended(struct pgdb *p, PGresult *r)
{
	const char *tag;

	if (r == NULL || PQresultStatus(r) == PGRES_PIPELINE_ABORTED) {
		snprintf(p->err, sizeof(p->err), "COMMIT not run: a statement "
		    "of the transaction failed");
		return -1;
	}
	if (pg_answered(r, "COMMIT", p->err, sizeof(p->err)) == 0)
		return 1;
	tag = PQresultErrorField(r, PG_DIAG_SQLSTATE);
	snprintf(p->state, sizeof(p->state), "%s", tag != NULL ? tag : "");
	return -1;
}

/* q in one round trip (libpq's pipeline mode) with a write's BEGIN and
 * transaction id before it (begin), then an action's savepoint (save),
 * its COMMIT after it (commit: how it went in p->committed).  q's
 * result, or the first error's (what failed stops what follows, and the
 * caller's rollback ends what began). */
static PGresult *
pipelined(struct pgq *q, int begin, int save, int commit)
{
	struct pgdb *p = q->p;
	PGconn *c = p->c;
	PGresult *r, *out = NULL, *end = NULL;
	ExecStatusType st;
	char sp[24];
	int i, n, sent, at;

	p->begin_due = 0;
	p->save_due = 0;
	p->commit_due = 0;
	sent = PQenterPipelineMode(c) && (!begin ||
	    (PQsendQueryParams(c, BEGIN_SQL, 0, NULL, NULL, NULL, NULL, 0) &&
	    PQsendQueryParams(c, XACT_SQL, 0, NULL, NULL, NULL, NULL, 0))) &&
	    (!save || PQsendQueryParams(c, save_sql(p, sp, sizeof(sp)), 0,
	    NULL, NULL, NULL, NULL, 0)) &&
	    PQsendQueryPrepared(c, q->name, q->n, q->val + 1, q->len + 1,
	    q->fmt + 1, 0) && (!commit ||
	    PQsendQueryParams(c, "COMMIT", 0, NULL, NULL, NULL, NULL, 0)) &&
	    PQpipelineSync(c);
	at = (begin ? 2 : 0) + (save != 0);	/* the statement's place */
	n = at + 1 + (commit != 0);
	/* each command's result, then a NULL; the sync's last */
	for (i = 0; sent && i < n; i++) {
		if ((r = PQgetResult(c)) == NULL)
			break;
		st = PQresultStatus(r);
		if (i == at + 1)
			end = r;	/* the COMMIT's */
		else if (out == NULL && (i == at ||
		    (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)))
			out = r;	/* the statement's, or the first error */
		else
			PQclear(r);
		while ((r = PQgetResult(c)) != NULL)
			PQclear(r);
	}
	while ((r = PQgetResult(c)) != NULL &&
	    PQresultStatus(r) != PGRES_PIPELINE_SYNC)
		PQclear(r);
	PQclear(r);
	if (!PQexitPipelineMode(c))
		log_err("postgres: pipeline: %s", PQerrorMessage(c));
	if (out == NULL)	/* not sent, or cut short: the connection's */
		out = PQmakeEmptyPGresult(c, PGRES_FATAL_ERROR);
	if (commit)
		p->committed = ended(p, end);
	PQclear(end);
	return out;
}

/* Runs q: its whole result into q->res, or its first rows when it
 * streams.  0, or -1. */
static int
execute(struct pgq *q)
{
	struct pgdb *p = q->p;
	ExecStatusType st;
	const char *tag;

	pg_check_conn(p);	/* the pipeline emptied first */
	if (p->lost)
		return refused(p);
	/* A statement prepared inside a group's transaction: its savepoint
	 * first, so that a prepare that fails is rolled back to it (the
	 * failure aborted the whole group, its COMMIT a silent rollback) */
	if ((!q->prepared || q->epoch != p->epoch) && ((p->save_due &&
	    !p->begin_due && begin_now(p) == -1) || prepare(q) == -1))
		return -1;
	if (p->nstmt != NULL)
		(*p->nstmt)++;
	q->ran = 1;
	if (q->stream && cursor_open(q) == -1)
		return -1;
	p->trips++;
	if (q->stream)
		p->commit_due = 0;	/* a cursor's: the COMMIT goes alone */
	if (p->begin_due || p->save_due || p->commit_due)
		q->res = pipelined(q, p->begin_due, p->save_due,
		    p->commit_due);
	else
		q->res = PQexecPrepared(p->c, q->name, q->n, q->val + 1,
		    q->len + 1, q->fmt + 1, 0);
	st = PQresultStatus(q->res);
	if (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK)
		return failed(q);
	if (q->stream) {
		q->cursor = 1;
		return fetch(q);
	}
	q->nrows = st == PGRES_TUPLES_OK ? PQntuples(q->res) : 0;
	q->row = -1;
	if (q->nrows > p->held)
		p->held = q->nrows;
	tag = PQcmdStatus(q->res);
	if (strncmp(tag, "INSERT", 6) == 0 || strncmp(tag, "UPDATE", 6) == 0 ||
	    strncmp(tag, "DELETE", 6) == 0)
		p->changes = (int)strtol(PQcmdTuples(q->res), NULL, 10);
	return 0;
}

static int
pq_step(struct dbq *d)
{
	struct pgq *q = PQ(d);

	if (q == NULL)
		return PGQ_ERR;
	if (!q->ran && execute(q) == -1) {
		cursor_close(q);
		return PGQ_ERR;
	}
	if (q->res == NULL || PQresultStatus(q->res) != PGRES_TUPLES_OK) {
		if (PQresultStatus(q->res) == PGRES_COMMAND_OK)
			return PGQ_DONE;
		return PGQ_ERR;
	}
	if (q->row + 1 >= q->nrows && q->cursor && !q->last) {
		if (fetch(q) == -1) {
			cursor_close(q);
			return PGQ_ERR;
		}
	}
	if (q->row + 1 >= q->nrows) {
		cursor_close(q);	/* its snapshot goes now */
		q->row = q->nrows;
		return PGQ_DONE;
	}
	q->row++;
	return PGQ_ROW;
}

/* A statement sent ahead (pg_ahead.c) is prepared first, outside the
 * pipeline (PQprepare() waits for its answer), and goes out of no
 * transaction: the group's first opens the pipeline. */
int
pg_ahead_send(struct dbq *d)
{
	struct pgq *q = PQ(d);
	struct pgdb *p = q->p;

	if (p->ahead_open)	/* PQprepare() waits: not in a pipeline */
		return q->prepared && q->epoch == p->epoch && !q->stream ?
		    pg_ahead_push(q) : 0;
	pg_ahead_drop(p);
	if (p->begin_due || p->save_due || p->commit_due || p->streams > 0 ||
	    q->stream)
		return 0;
	pg_check_conn(p);
	if (p->lost || PQtransactionStatus(p->c) != PQTRANS_IDLE ||
	    ((!q->prepared || q->epoch != p->epoch) && prepare(q) == -1))
		return 0;
	return pg_ahead_push(q);
}

static const char *
pq_text(struct dbq *d, int col)
{
	struct pgq *q = PQ(d);

	if (q == NULL || q->res == NULL || q->row < 0 || q->row >= q->nrows ||
	    col >= PQnfields(q->res) || PQgetisnull(q->res, q->row, col))
		return NULL;
	return PQgetvalue(q->res, q->row, col);
}

static long long
pq_i64(struct dbq *d, int col)
{
	const char *v = pq_text(d, col);

	if (v == NULL)
		return 0;
	if (v[0] == 't' || v[0] == 'f')		/* a boolean */
		return v[0] == 't';
	return strtoll(v, NULL, 10);
}

static int
pq_is_null(struct dbq *d, int col)
{
	return pq_text(d, col) == NULL;
}

const struct dbq_engine pg_engine = {
	pq_done, pq_reset, pq_finalize, pq_bind, pq_step, pq_i64, pq_text,
	pq_is_null, "{}"
};
