/* session.c -- sessions in SQLite; see session.h. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "base/clock.h"
#include "base/log.h"
#include "social/session.h"
#include "store/db.h"
#include "store/dbq.h"

int
session_id_parse(const char *sid, long long *uid, char hex[SID_HEX_LEN + 1])
{
	unsigned char h[TOKEN_HASH_LEN];
	const char *dot;
	long long v = 0;
	size_t i;

	if (sid == NULL || strlen(sid) > SID_MAX ||
	    (dot = strchr(sid, '.')) == NULL || dot == sid || dot - sid > 18 ||
	    strlen(dot + 1) != TOKEN_LEN)
		return -1;
	for (i = 0; sid + i < dot; i++) {
		if (sid[i] < '0' || sid[i] > '9' || (i == 0 && sid[i] == '0'))
			return -1;
		v = v * 10 + (sid[i] - '0');
	}
	for (i = 1; dot[i] != '\0'; i++)
		if (!((dot[i] >= 'A' && dot[i] <= 'Z') ||
		    (dot[i] >= 'a' && dot[i] <= 'z') ||
		    (dot[i] >= '0' && dot[i] <= '9') || dot[i] == '-' ||
		    dot[i] == '_'))
			return -1;
	*uid = v;
	if (hex != NULL) {
		auth_token_hash(sid, h);
		sodium_bin2hex(hex, SID_HEX_LEN + 1, h, sizeof(h));
	}
	return 0;
}

int
session_create(struct db *d, long long uid, long secs,
    char sid[SID_MAX + 1], char csrf[TOKEN_LEN + 1], const char *stamp)
{
	unsigned char h[TOKEN_HASH_LEN];
	char tok[TOKEN_LEN + 1];
	struct dbq *s = dbq_stmt(d, STMT_SESSION_INSERT);
	long long now = clock_wall_ms();
	int rc;

	if (s == NULL)
		return -1;
	auth_token_new(tok);
	snprintf(sid, SID_MAX + 1, "%lld.%s", uid, tok);
	auth_token_new(csrf);
	auth_token_hash(sid, h);
	dbq_bind_blob_copy(s, 1, h, sizeof(h));
	dbq_bind_i64(s, 2, uid);
	dbq_bind_text_copy(s, 3, csrf, -1);
	dbq_bind_i64(s, 4, now);
	dbq_bind_i64(s, 5, now + (long long)secs * 1000);
	if (stamp != NULL)
		dbq_bind_text(s, 6, stamp, -1);
	else
		dbq_bind_null(s, 6);
	rc = dbq_step(s);
	dbq_done(s);
	if (rc != DBQ_DONE) {
		log_err("session insert: %s", dbq_errmsg(d));
		return -1;
	}
	return dbq_changes(d) == 1 ? 0 : 1;
}

/* A session row's columns from col on (user id, csrf, login, is_admin,
 * expires_at) into out, for the session of user uid: 1, or 0 (refused:
 * the row is another user's, which ids this code made never are). */
static int
session_row(struct dbq *s, int col, long long uid, struct session *out)
{
	out->user_id = dbq_i64(s, col);
	dbq_col_text(s, col + 1, out->csrf, sizeof(out->csrf));
	dbq_col_text(s, col + 2, out->login, sizeof(out->login));
	out->is_admin = dbq_int(s, col + 3);
	out->expires_at = dbq_i64(s, col + 4);
	if (out->user_id == uid)
		return 1;
	memset(out, 0, sizeof(*out));
	return 0;
}

int
session_load(struct db *d, const char *sid, struct session *out)
{
	unsigned char h[TOKEN_HASH_LEN];
	struct dbq *s;
	long long uid;
	int rc, found = 0;

	memset(out, 0, sizeof(*out));
	if (session_id_parse(sid, &uid, NULL) == -1)
		return 0;
	/* may be copied to Redis under a generation read just before
	 * (sesscache.h): read now (db.h db_reads_together()) */
	db_reads_end(d);
	if ((s = dbq_stmt(d, STMT_SESSION_GET)) == NULL)
		return -1;
	auth_token_hash(sid, h);
	dbq_bind_blob_copy(s, 1, h, sizeof(h));
	dbq_bind_i64(s, 2, clock_wall_ms());
	rc = dbq_step(s);
	if (rc == DBQ_ROW)
		found = session_row(s, 0, uid, out);
	dbq_done(s);
	if (rc == DBQ_ROW)
		return found;
	return rc == DBQ_DONE ? 0 : -1;
}

int
session_load_many(struct db *d, const char *const *sids, int n,
    struct session *out, int *rc)
{
	unsigned char h[SESSION_MANY][TOKEN_HASH_LEN];
	long long uid[SESSION_MANY];
	int same[SESSION_MANY];	/* the first slot of the same sid; -1 none */
	struct dbq *s = NULL;
	int i, j, k = DBQ_DONE, any = 0;

	assert(n >= 0 && n <= SESSION_MANY);
	for (i = 0; i < n; i++) {
		memset(&out[i], 0, sizeof(out[i]));
		rc[i] = 0;
		same[i] = -1;
		if (sids[i] == NULL ||
		    session_id_parse(sids[i], &uid[i], NULL) == -1)
			continue;
		for (j = 0; j < i && same[i] == -1; j++)
			if (same[j] == j && strcmp(sids[j], sids[i]) == 0)
				same[i] = j;
		if (same[i] == -1) {
			same[i] = i;
			auth_token_hash(sids[i], h[i]);
			any = 1;
		}
	}
	if (!any)
		return 0;
	if ((s = dbq_stmt(d, STMT_SESSION_GET_MANY)) == NULL)
		goto failed;
	for (i = 0; i < SESSION_MANY; i++)
		if (i < n && same[i] == i)
			dbq_bind_blob(s, i + 1, h[i], TOKEN_HASH_LEN);
		else
			dbq_bind_null(s, i + 1);
	dbq_bind_i64(s, SESSION_MANY + 1, clock_wall_ms());
	/* each row names the slot whose hash it matched (1-based) */
	while ((k = dbq_step(s)) == DBQ_ROW)
		if ((i = dbq_int(s, 0) - 1) >= 0 && i < n && same[i] == i)
			rc[i] = session_row(s, 1, uid[i], &out[i]);
	dbq_done(s);
	if (k != DBQ_DONE)
		goto failed;
	for (i = 0; i < n; i++)
		if (same[i] >= 0 && same[i] != i) {
			out[i] = out[same[i]];
			rc[i] = rc[same[i]];
		}
	return 0;
failed:
	log_err("sessions: %s", dbq_errmsg(d));
	for (i = 0; i < n; i++)
		rc[i] = same[i] >= 0 ? -1 : 0;
	return -1;
}

int
session_delete(struct db *d, const char *sid)
{
	unsigned char h[TOKEN_HASH_LEN];
	struct dbq *s = dbq_stmt(d, STMT_SESSION_DELETE);
	int rc;

	if (s == NULL)
		return -1;
	auth_token_hash(sid, h);
	dbq_bind_blob_copy(s, 1, h, sizeof(h));
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? 0 : -1;
}

int
session_expire(struct db *d, int limit)
{
	struct dbq *s = dbq_stmt(d, STMT_SESSION_EXPIRE);
	int rc;

	if (s == NULL)
		return -1;
	dbq_bind_i64(s, 1, clock_wall_ms());
	dbq_bind_int(s, 2, limit);
	rc = dbq_step(s);
	dbq_done(s);
	return rc == DBQ_DONE ? dbq_changes(d) : -1;
}
