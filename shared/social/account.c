/* account.c -- accounts; see account.h. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "base/auth.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/valid.h"
#include "base/words.h"
#include "social/account.h"
#include "social/sesscache.h"
#include "store/dbq.h"
#include "store/rds.h"

static int
word_put(struct db *d, const char *w, long long uid)
{
	struct dbq *s = dbq_stmt(d, STMT_NAME_WORD_PUT);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, w, -1);
	dbq_bind_i64(s, 2, uid);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

/* A login is reserved when one of its words -- its runs of letters,
 * which digits and underscores part -- is a name staff answer to: not
 * "admin" alone, but "admin_2", "the_root" and "Tally_Support" too, which
 * only the exact names let anyone take.  "rootbeer" and "supportive" are
 * words of their own, and free. */
int
account_reserved(const char *login)
{
	static const char *const names[] = {
		"admin", "administrator", "root", "tally", "support",
		"moderator",
	};
	const char *p = login, *w;
	size_t i, len;

	while (*p != '\0') {
		for (; *p != '\0' && !isalpha((unsigned char)*p); p++)
			;
		for (w = p; *p != '\0' && isalpha((unsigned char)*p); p++)
			;
		len = (size_t)(p - w);
		for (i = 0; len > 0 && i < sizeof(names) / sizeof(names[0]);
		    i++)
			if (strlen(names[i]) == len &&
			    strncasecmp(w, names[i], len) == 0)
				return 1;
	}
	return 0;
}

int
account_index(struct db *d, long long uid, const char *login,
    const char *name)
{
	char w[WORD_MAX], whole[WORD_MAX];
	const char *p = name;
	int nwords = 0;

	if (words_fold(login, w) > 0 && word_put(d, w, uid) == -1)
		return -1;
	while (words_next(&p, w) > 0) {
		nwords++;
		if (word_put(d, w, uid) == -1)
			return -1;
	}
	/* "ada lo" finds Ada Lovelace: the whole name is a word too */
	if (nwords > 1 && words_fold(name, whole) > 0 &&
	    word_put(d, whole, uid) == -1)
		return -1;
	return 0;
}

long long
account_create(struct db *d, const char *login, const char *name,
    const char *pw, size_t pwlen, int is_admin, int min_cost)
{
	char hash[AUTH_HASH_MAX];
	struct dbq *s;
	long long id = 0;
	int rc, own;

	if (auth_hash(pw, pwlen, min_cost, hash) == -1)
		return -1;
	own = !dbq_in_txn(d);
	if (own && db_begin(d) == -1)
		return -1;
	if ((s = dbq_stmt(d, STMT_USER_INSERT)) == NULL) {
		if (own)
			db_rollback(d);
		return -1;
	}
	dbq_bind_text(s, 1, login, -1);
	dbq_bind_text(s, 2, name, -1);
	dbq_bind_text(s, 3, hash, -1);
	dbq_bind_int(s, 4, is_admin ? 1 : 0);
	dbq_bind_i64(s, 5, clock_wall_ms());
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		id = dbq_i64(s, 0);
	else if (rc != DBQ_DONE) {
		log_err("user insert: %s", dbq_errmsg(d));
		id = -1;
	}
	dbq_done(s);
	/* the user and their words of the search in one transaction */
	if (id > 0 && account_index(d, id, login, name) == -1)
		id = -1;
	if (own && id == -1)
		db_rollback(d);
	else if (own && db_commit(d) == -1)
		return -1;
	return id;
}

int
account_by_login(struct db *d, const char *login, struct account *out)
{
	struct dbq *s = dbq_stmt(d, STMT_USER_BY_LOGIN);
	int rc;

	memset(out, 0, sizeof(*out));
	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, login, -1);
	rc = dbq_step(s);
	if (rc == DBQ_ROW) {
		out->id = dbq_i64(s, 0);
		dbq_col_text(s, 1, out->login, sizeof(out->login));
		dbq_col_text(s, 2, out->name, sizeof(out->name));
		out->is_admin = dbq_int(s, 4);
	}
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

long long
account_check(struct db *d, const char *login, const char *pw, size_t pwlen,
    char *stamp)
{
	struct dbq *s = dbq_stmt(d, STMT_USER_BY_LOGIN);
	char hash[AUTH_HASH_MAX] = "";
	long long id = 0;
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, login, -1);
	rc = dbq_step(s);
	if (rc == DBQ_ROW) {
		id = dbq_i64(s, 0);
		dbq_col_text(s, 3, hash, sizeof(hash));
	}
	dbq_done(s);
	if (rc != DBQ_ROW && rc != DBQ_DONE)
		return -1;
	if (auth_verify(id ? hash : NULL, pw, pwlen) == -1)
		return 0;
	if (stamp != NULL)
		memcpy(stamp, hash, sizeof(hash));
	return id;
}

int
account_stamp(struct db *d, const char *login, char stamp[AUTH_HASH_MAX])
{
	struct dbq *s = dbq_stmt(d, STMT_USER_BY_LOGIN);
	int rc;

	stamp[0] = '\0';
	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, login, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		dbq_col_text(s, 3, stamp, AUTH_HASH_MAX);
	dbq_done(s);
	return rc == DBQ_ROW ? 1 : rc == DBQ_DONE ? 0 : -1;
}

int
account_ensure_admin(struct db *d, const char *pw, char *out, size_t outsz,
    int min_cost)
{
	struct account a;
	char gen[TOKEN_LEN + 1];
	long long id;
	int rc;

	if ((rc = account_by_login(d, "admin", &a)) != 0)
		return rc == 1 ? 0 : -1;
	if (pw == NULL || *pw == '\0') {
		auth_token_new(gen);
		gen[20] = '\0';		/* 120 bits is plenty to type */
		pw = gen;
	}
	/* a password /login and /settings take (8-128 bytes of UTF-8, no
	 * control characters): one they would refuse never logs in */
	if (strlen(pw) >= outsz ||
	    valid_check(VALID_PASSWORD, pw, strlen(pw), NULL) == -1) {
		log_err("TALLY_ADMIN_PASSWORD must be 8 to 128 bytes of UTF-8 "
		    "without control characters");
		return -1;
	}
	id = account_create(d, "admin", "Administrator", pw, strlen(pw), 1,
	    min_cost);
	if (id <= 0)
		return id == 0 ? 0 : -1;
	memcpy(out, pw, strlen(pw) + 1);
	return 1;
}

long long
account_throttled(struct db *d, const char *login, long long now)
{
	struct dbq *s = dbq_stmt(d, STMT_LOGIN_FAIL_GET);
	long long since = 0, left = 0;
	int rc, n = 0;

	if (s == NULL)
		return -1;
	dbq_bind_text(s, 1, login, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW) {
		since = dbq_i64(s, 0);
		n = dbq_int(s, 1);
	}
	dbq_done(s);
	if (rc == DBQ_ERR)
		return -1;
	if (n >= LOGIN_FAIL_MAX && since + LOGIN_FAIL_WINDOW > now)
		left = since + LOGIN_FAIL_WINDOW - now;
	return left;
}

/* The failures kept of a row read by STMT_LOGIN_FAIL_GET: its times,
 * ascending; a row from before the times were kept holds its count of
 * failures at its start.  How many, at most LOGIN_FAIL_MAX. */
static int
fail_times(long long since, int n, const char *list, long long *t)
{
	char *end;
	int k = 0;

	if (list[0] == '\0') {
		for (; k < n && k < LOGIN_FAIL_MAX; k++)
			t[k] = since;
		return k;
	}
	while (k < LOGIN_FAIL_MAX && *list != '\0') {
		t[k] = strtoll(list, &end, 10);
		if (end == list)
			break;
		k++;
		list = end + strspn(end, " ");
	}
	return k;
}

/* One more failure of login at now: the row's failures within the
 * window before now, and now, the newest LOGIN_FAIL_MAX of them kept.
 * Written only over the row as it was read: two failures at once each
 * read again the row the other wrote.  0 (or no such account), -1. */
static int
fail_add(struct db *d, const char *login, long long now)
{
	long long t[LOGIN_FAIL_MAX + 1], since = 0;
	char old[LOGIN_FAIL_MAX * 24 + 1], list[sizeof(old)];
	struct dbq *s;
	int tries, rc, n, k, m, lo, len, changed, absent = 0;

	for (tries = 0; tries < 8; tries++) {
		if ((s = dbq_stmt(d, STMT_LOGIN_FAIL_GET)) == NULL)
			return -1;
		dbq_bind_text(s, 1, login, -1);
		old[0] = '\0';
		n = 0;
		if ((rc = dbq_step(s)) == DBQ_ROW) {
			since = dbq_i64(s, 0);
			n = dbq_int(s, 1);
			dbq_col_text(s, 2, old, sizeof(old));
		}
		dbq_done(s);
		if (rc == DBQ_ERR)
			return -1;
		if (rc != DBQ_ROW && absent)
			return 0;	/* no row, and none made: nobody's */
		if (rc != DBQ_ROW) {
			snprintf(list, sizeof(list), "%lld", now);
			if ((s = dbq_stmt(d, STMT_LOGIN_FAIL_NEW)) == NULL)
				return -1;
			dbq_bind_text(s, 1, login, -1);
			dbq_bind_i64(s, 2, now);
			dbq_bind_text(s, 3, list, -1);
			if ((changed = dbq_write(d, s)) != 0)
				return changed > 0 ? 0 : -1;
			absent = 1;	/* nobody's, or another's first */
			continue;
		}
		k = fail_times(since, n, old, t);
		/* those still within the window, and this one */
		for (lo = m = 0; lo < k; lo++)
			if (t[lo] + LOGIN_FAIL_WINDOW > now)
				t[m++] = t[lo];
		t[m++] = now;
		/* the newest LOGIN_FAIL_MAX: t[lo] on */
		lo = m > LOGIN_FAIL_MAX ? m - LOGIN_FAIL_MAX : 0;
		list[0] = '\0';
		for (len = 0, k = lo; k < m; k++)
			len += snprintf(list + len, sizeof(list) - (size_t)len,
			    "%s%lld", k > lo ? " " : "", t[k]);
		if ((s = dbq_stmt(d, STMT_LOGIN_FAIL_SET)) == NULL)
			return -1;
		dbq_bind_text(s, 1, login, -1);
		dbq_bind_i64(s, 2, t[lo]);
		dbq_bind_i64(s, 3, m - lo);
		dbq_bind_text(s, 4, list, -1);
		dbq_bind_i64(s, 5, since);
		dbq_bind_i64(s, 6, n);
		dbq_bind_text(s, 7, old, -1);
		if ((changed = dbq_write(d, s)) != 0)
			return changed > 0 ? 0 : -1;
	}
	log_warn("login %s: its failed logins kept changing; one not "
	    "counted", login);
	return -1;
}

int
account_login_result(struct db *d, const char *login, int ok, long long now)
{
	struct dbq *s;
	int rc;

	if (!ok)
		return fail_add(d, login, now);
	if ((s = dbq_stmt(d, STMT_LOGIN_FAIL_CLEAR)) == NULL)
		return -1;
	dbq_bind_text(s, 1, login, -1);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

long long
account_set_password(struct app *a, const char *login, const char *pw,
    size_t pwlen, int min_cost)
{
	char hash[AUTH_HASH_MAX];
	struct db *d = a->db;
	struct dbq *s;
	long long id = 0;
	int rc;

	if (auth_hash(pw, pwlen, min_cost, hash) == -1 || db_begin(d) == -1)
		return -1;
	if ((s = dbq_stmt(d, STMT_USER_SET_PWHASH)) == NULL)
		goto fail;
	dbq_bind_text(s, 1, login, -1);
	dbq_bind_text(s, 2, hash, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		id = dbq_i64(s, 0);
	dbq_done(s);
	if (rc == DBQ_ERR)
		goto fail;
	/* every session of the account ends with its old password */
	if (id > 0) {
		if ((s = dbq_stmt(d, STMT_SESSIONS_OF_USER_DELETE)) == NULL)
			goto fail;
		dbq_bind_i64(s, 1, id);
		rc = dbq_step(s);
		dbq_done(s);
		if (rc != DBQ_DONE)
			goto fail;
		if (account_login_result(d, login, 1, 0) == -1)
			goto fail;
	}
	if (db_commit(d) == -1)
		return -1;
	if (id > 0)	/* and their copies in Redis with them */
		sesscache_forget(a->rds, id, NULL);
	return id;
fail:
	db_rollback(d);
	return -1;
}

int
account_rename(struct app *a, long long uid, const char *name)
{
	struct db *d = a->db;
	struct dbq *s;
	char login[40] = "";
	int rc;

	if (db_begin(d) == -1 || (s = dbq_stmt(d, STMT_USER_SET_NAME)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_text(s, 2, name, -1);
	if ((rc = dbq_step(s)) == DBQ_ROW)
		snprintf(login, sizeof(login), "%s", dbq_text(s, 0));
	dbq_done(s);
	if (rc == DBQ_ERR)
		goto fail;
	if (login[0] == '\0') {
		db_rollback(d);
		return 0;
	}
	if ((s = dbq_stmt(d, STMT_NAME_WORDS_DROP)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, uid);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE || account_index(d, uid, login, name) == -1 ||
	    db_commit(d) == -1)
		goto fail;
	return 1;
fail:
	db_rollback(d);
	return -1;
}

int
account_change_password(struct app *a, long long uid, const char *login,
    const char *current, size_t curlen, const char *pw, size_t pwlen,
    const char *keep_sid, int min_cost)
{
	char hash[AUTH_HASH_MAX], was[AUTH_HASH_MAX];
	unsigned char keep[TOKEN_HASH_LEN];
	struct db *d = a->db;
	struct dbq *s;
	long long id;
	int rc, changed;

	if ((id = account_check(d, login, current, curlen, was)) == -1)
		return -1;
	if (id != uid)
		return 0;
	if (auth_hash(pw, pwlen, min_cost, hash) == -1)
		return -1;
	auth_token_hash(keep_sid != NULL ? keep_sid : "", keep);
	if (db_begin(d) == -1 ||
	    (s = dbq_stmt(d, STMT_USER_SET_PWHASH_ID)) == NULL)
		goto fail;
	dbq_bind_i64(s, 1, uid);
	dbq_bind_text(s, 2, hash, -1);
	dbq_bind_text(s, 3, was, -1);
	rc = dbq_step(s);
	changed = dbq_changes(d);
	dbq_done(s);
	if (rc == DBQ_DONE && changed == 0) {
		/* another change came first: the current password is no
		 * longer the one that was checked */
		db_rollback(d);
		return 0;
	}
	if (rc != DBQ_DONE ||
	    (s = dbq_stmt(d, STMT_SESSIONS_OTHERS_DELETE)) == NULL)
		goto fail;
	/* every other session ends with the old password */
	dbq_bind_i64(s, 1, uid);
	dbq_bind_blob_copy(s, 2, keep, sizeof(keep));
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE || db_commit(d) == -1)
		goto fail;
	/* and their copies in Redis (the asking one's is read again) */
	sesscache_forget(a->rds, uid, NULL);
	return 1;
fail:
	db_rollback(d);
	return -1;
}
