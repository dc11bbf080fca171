/* sql.h -- every SQL statement tally runs, by number.
 *
 * The text lives in sql.c's table and nowhere else (PostgreSQL's where it
 * differs in sql_pg.c; make lint refuses SQL text elsewhere, but for the
 * schema's migrations and the engines' own transaction and pragma
 * statements: scripts/lint-layers.pl); a statement of several shapes (N
 * rows) is an entry per shape.  Values are only ever bound
 * (sqlite3_bind_*), never pasted.  dbq_stmt() prepares a statement on
 * first use and keeps it for the life of the process.
 */
#ifndef TALLY_SQL_H
#define TALLY_SQL_H

/*
 * A post's columns (POST_COLS in sql.c and sql_pg.c: post_from_row reads
 * them) are followed, in STMT_HOME_BY_IDS and STMT_POSTS_MARKS_BY_IDS,
 * by the reader's marks: 1 when
 * the reader (?2) liked / reposted the post, else 0.  The same text on
 * both engines (a CASE, not a bare EXISTS: PostgreSQL's is a boolean).
 */
#define POST_NCOLS	12
#define POST_COLS "p.id, p.user_id, u.login, u.name, t.slug, p.body, " \
	"p.status, p.is_deleted, p.created_at, p.published_at, p.topic_id, " \
	"p.like_count "
/* Inserts whose new row's id the caller reads with dbq_insert_id()
 * (dbq.h): SQLite runs them as they are (its last insert rowid),
 * PostgreSQL with " RETURNING id" (sql_pg.c). */
#define NOTE_INSERT_SQL \
	"INSERT INTO notifications(user_id, actor_id, kind, post_id, " \
	"comment_id, created_at, group_id) VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7)"
#define NOTE_GROUP_NEW_SQL \
	"INSERT INTO note_groups(user_id, kind, post_id, first_at, last_at, " \
	"size, unread) VALUES(?1, ?2, ?3, ?4, ?4, 1, 1)"
/* A group that lost members (?2 of its size, ?3 of its unread; the rows
 * already deleted): its first and last times are its oldest and newest
 * member's left (by id: members come in time order), so that a group
 * whose newest went takes its place among the others again, and one
 * whose first went is open as long as its first left (notify.h).  Two
 * index probes of notifications_group (group_id, id), whatever its size.
 * PostgreSQL's tally_unlike() has it as GROUP_LEFT_SET("r.group_id"). */
/* Group g has no member left: what drops it after a withdrawal.  Its
 * stored size is not asked: planted or drifted below its rows, it
 * dropped a group that still had members, whose notifications then
 * belonged to no group (no page showed them, and reconciliation, which
 * walks the groups, never found them). */
#define NOTE_GROUP_EMPTY(g) \
	"NOT EXISTS (SELECT 1 FROM notifications WHERE group_id = " g ")"
#define GROUP_LEFT_SET(g) \
	"first_at = coalesce((SELECT created_at FROM notifications WHERE " \
	"group_id = " g " ORDER BY id LIMIT 1), first_at), last_at = " \
	"coalesce((SELECT created_at FROM notifications WHERE group_id = " \
	g " ORDER BY id DESC LIMIT 1), last_at)"
/* STMT_NOTES_PAGE: user, limit, offset, before time, before id -- a
 * page of groups, the one with the newest member first, among those
 * after the group (time, id) in that order; the post's start, whether
 * it is still shown, whether it was cut, and `snap': the engine's
 * snapshot of the statement as text (PostgreSQL's pg_snapshot, whose
 * writers commit out of the order of their ids: STMT_NOTE_READ_ALL's
 * ?5), or '' */
#define NOTES_PAGE_SQL(snap) \
	"SELECT g.id, g.kind, g.post_id, g.size, g.unread, g.last_at, " \
	"coalesce(substr(p.body, 1, 60), ''), " \
	"CASE WHEN p.status = 1 AND p.is_deleted = 0 THEN 1 ELSE 0 END, " \
	"CASE WHEN length(p.body) > 60 THEN 1 ELSE 0 END, " snap " " \
	"FROM note_groups g LEFT JOIN posts p ON p.id = g.post_id " \
	"WHERE g.user_id = ?1 AND (g.last_at, g.id) < (?4, ?5) " \
	"ORDER BY g.last_at DESC, g.id DESC LIMIT ?2 OFFSET ?3"
#define OUTBOX_ADD_SQL \
	"INSERT INTO counter_outbox(at, deltas) VALUES(?1, ?2)"
/* The rows of STMT_COUNTER_ADD_MANY: COUNTER_ADD_ROWS times
 * STMT_COUNTER_ADD_PLAIN's (name, key, delta), parameters ? in order
 * (row i's name is 3i + 1).  sql.c checks its text has that many. */
#define COUNTER_ADD_ROWS	64
/* Deletes whose removed row's column the caller needs: PostgreSQL
 * returns it (" RETURNING ...", sql_pg.c); SQLite reads it first with
 * the statement named beside (dbq_cheap_returning(), dbq.h). */
#define LIKE_DELETE_SQL \
	"DELETE FROM likes WHERE post_id = ?1 AND user_id = ?2"
#define NOTE_BY_ID_SQL(is) "WHERE id = ?6 AND user_id = ?1 AND " \
	"actor_id = ?2 AND kind = ?3 AND post_id " is " ?4 AND " \
	"comment_id " is " ?5"
/* Rows an action reads, then changes on what it read: the same text on
 * SQLite (its writer is alone) and, locking the row (FOR NO KEY UPDATE:
 * a like's insert may still take its key share), on PostgreSQL, whose
 * writers run at once (sql_pg.c). */
#define POST_GET_SQL "SELECT " POST_COLS "FROM posts p JOIN users u ON " \
	"u.id = p.user_id JOIN topics t ON t.id = p.topic_id WHERE p.id = ?1"
#define POST_HEAD_SQL "SELECT id, user_id, topic_id, status, is_deleted " \
	"FROM posts WHERE id = ?1"
#define COMMENT_GET_SQL "SELECT id, post_id, user_id, is_deleted FROM " \
	"comments WHERE id = ?1"
#define VIEWER_MARK_COLS \
	", CASE WHEN EXISTS(SELECT 1 FROM likes l WHERE l.user_id = ?2 " \
	"AND l.post_id = p.id) THEN 1 ELSE 0 END, " \
	"CASE WHEN EXISTS(SELECT 1 FROM reposts r WHERE r.user_id = ?2 " \
	"AND r.post_id = p.id) THEN 1 ELSE 0 END "
/*
 * Reposts in home feeds.  A post is in user U's feed when U wrote it, U
 * follows its author, or someone U follows reposted it; its place is the
 * newest of its publication (in the first two cases) and those reposts.
 * HOME_REPOSTED_BY(u) is, after the marks in STMT_HOME_BY_IDS, the login
 * of the newest repost by someone u follows (NULL: none).
 * HOME_SCORE(max, u, p) is the place of post p in u's feed, -1 when it
 * has none; max is the dialect's two-argument maximum.
 */
#define HOME_REPOST_BY(u) "FROM reposts r JOIN follows f ON " \
	"f.follower_id = " u " AND f.followee_id = r.user_id "
#define HOME_VISIBLE(p) "SELECT 1 FROM posts v WHERE v.id = " p " AND " \
	"v.status = 1 AND v.is_deleted = 0"
#define HOME_REPOSTED_BY(u) \
	", (SELECT ru.login " HOME_REPOST_BY(u) "JOIN users ru ON " \
	"ru.id = r.user_id WHERE r.post_id = p.id ORDER BY r.created_at " \
	"DESC, r.user_id DESC LIMIT 1) "
#define HOME_SCORE(max, u, p) \
	max "(coalesce((SELECT a.published_at FROM posts a WHERE a.id = " p \
	" AND a.status = 1 AND a.is_deleted = 0 AND (a.user_id = " u " OR " \
	"EXISTS(SELECT 1 FROM follows f WHERE f.follower_id = " u " AND " \
	"f.followee_id = a.user_id))), -1), coalesce((SELECT max(r.created_at) " \
	HOME_REPOST_BY(u) "WHERE r.post_id = " p " AND EXISTS(" \
	HOME_VISIBLE(p) ")), -1))"

enum stmt {
	STMT_PING,
	STMT_USER_INSERT,
	STMT_USER_BY_LOGIN,
	STMT_SESSION_INSERT,
	STMT_SESSION_GET,
	STMT_SESSION_GET_MANY,
	STMT_SESSION_DELETE,
	STMT_SESSION_EXPIRE,
	STMT_SETTING_GET,
	STMT_SETTING_PUT,
	STMT_TOPIC_UPSERT,
	STMT_TOPIC_BY_SLUG,
	STMT_POST_INSERT,
	STMT_POST_GET,
	STMT_POST_HEAD,
	STMT_POST_UPDATE,
	STMT_POST_DELETE,
	STMT_POSTS_BY_IDS,
	STMT_HOME_SQL,
	STMT_PROFILE_SQL,
	STMT_TOPIC_SQL,
	STMT_FOLLOW_INSERT,
	STMT_FOLLOW_DELETE,
	STMT_IS_FOLLOWING,
	STMT_FOLLOWERS_PAGE_SQL,
	STMT_FOLLOWING_PAGE_SQL,
	STMT_FOLLOWERS_CHUNK,
	STMT_FOLLOWING_CHUNK,
	STMT_FOLLOWERS_BY_IDS,
	STMT_FOLLOWING_BY_IDS,
	STMT_LIKE_INSERT,
	STMT_LIKE_DELETE,
	STMT_LIKE_NOTE,
	STMT_REPOST_INSERT,
	STMT_COMMENT_INSERT,
	STMT_COMMENT_DELETE,
	STMT_COMMENTS_OF_POST,
	STMT_COMMENTS_BEFORE,
	STMT_HOME_BY_IDS,
	STMT_POSTS_MARKS_BY_IDS,
	STMT_DRAFTS_OF_USER,
	STMT_POST_LIKES_ADD,
	STMT_COUNTER_GET,
	STMT_COUNTER_ADD,
	STMT_COUNTER_ADD_PLAIN,
	STMT_COUNTER_SET,
	STMT_FLUSH_RECORD,
	STMT_FLUSH_APPLIED,
	STMT_FLUSH_PRUNE,
	STMT_NOTE_INSERT,
	STMT_NOTE_REMOVE,
	STMT_NOTE_REMOVE_ID,
	STMT_NOTE_READ,
	STMT_NOTE_DELETE,
	STMT_NOTE_READ_ALL,
	STMT_NOTES_PAGE,
	STMT_NOTICE_INSERT,
	STMT_NOTICES_PAGE,
	STMT_MARKER_PUT,
	STMT_FOLLOWED_MARKS,
	STMT_NOTE_OWNER,
	STMT_COUNTERS_OF_FAMILY,
	STMT_LIKE_COUNT_FIX,
	STMT_LIKE_COUNT_DRIFT,
	STMT_POST_MAX_ID,
	STMT_POST_OWNER,
	STMT_POST_OWNERS,
	STMT_RUN_CREATE,
	STMT_RUN_ACTIVE,
	STMT_RUN_GET,
	STMT_RUN_LIST,
	STMT_RUN_CLAIM,
	STMT_RUN_PROGRESS,
	STMT_RUN_FINISH,
	STMT_RUN_RENEW,
	STMT_RUN_NOTE,
	STMT_COUNTERS_OF_TOPIC,
	STMT_USERS_BY_IDS,
	STMT_LAST_FLUSH,
	STMT_MAX_IDS,
	STMT_POST_AT_OR_AFTER,
	STMT_BACKLOG_ADD,
	STMT_BACKLOG_GET,
	STMT_BACKLOG_BATCH,
	STMT_BACKLOG_DONE,
	STMT_BACKLOG_QUARANTINE,
	STMT_FLUSH_MAX,
	STMT_BADGE_SCALARS,
	STMT_AUTHOR_SEEN,
	STMT_RUN_LAST_DONE,
	STMT_OUTBOX_ADD,
	STMT_OUTBOX_ADD_MANY,
	STMT_OUTBOX_CUTOFF,
	STMT_OUTBOX_BATCH,
	STMT_OUTBOX_CLEAR,
	STMT_OUTBOX_FLOOR_RAISE,
	STMT_OUTBOX_DONE,
	STMT_OUTBOX_QUARANTINE,
	/* Counting's statements that were once built beside their callers:
	 * the multi-row UPSERT of a flush (taken.c), the catalog's recounts
	 * (count/counters.c: one family's every key, and one key), the
	 * clean slate of a full recount (recount.c). */
	STMT_COUNTER_ADD_MANY,
	STMT_COUNTERS_CLEAR,
	STMT_RECOUNT_USER_POSTS,
	STMT_RECOUNT_ONE_USER_POSTS,
	STMT_RECOUNT_USER_FOLLOWERS,
	STMT_RECOUNT_ONE_USER_FOLLOWERS,
	STMT_RECOUNT_USER_FOLLOWING,
	STMT_RECOUNT_ONE_USER_FOLLOWING,
	STMT_RECOUNT_USER_LIKES,
	STMT_RECOUNT_ONE_USER_LIKES,
	STMT_RECOUNT_POST_LIKES,
	STMT_RECOUNT_ONE_POST_LIKES,
	STMT_RECOUNT_POST_COMMENTS,
	STMT_RECOUNT_ONE_POST_COMMENTS,
	STMT_RECOUNT_POST_REPOSTS,
	STMT_RECOUNT_ONE_POST_REPOSTS,
	STMT_RECOUNT_TOPIC_POSTS,
	STMT_RECOUNT_ONE_TOPIC_POSTS,
	STMT_RECOUNT_UT_POSTS,
	STMT_RECOUNT_ONE_UT_POSTS,
	STMT_RECOUNT_UT_RATING,
	STMT_RECOUNT_ONE_UT_RATING,
	STMT_RECOUNT_USER_UNREAD,
	STMT_RECOUNT_ONE_USER_UNREAD,
	STMT_VIEWER_MARKS,
	STMT_FOLLOWING_AMONG,
	STMT_NAME_WORD_PUT,
	STMT_PEOPLE_FIND,
	STMT_TOPICS_ALL,
	STMT_TOPIC_BY_ID,
	STMT_TOPIC_PUBLIC,
	STMT_USER_SET_PWHASH,
	STMT_SESSIONS_OF_USER_DELETE,
	STMT_LOGIN_FAIL_GET,
	STMT_LOGIN_FAIL_NEW,
	STMT_LOGIN_FAIL_SET,
	STMT_LOGIN_FAIL_CLEAR,
	STMT_SEED_NOTE_MAX,
	STMT_SEED_NOTES_READ,
	STMT_LEASE_TAKE,
	STMT_LEASE_DROP,
	STMT_LIKE_NOTE_OF,
	STMT_NOTE_READ_OF,
	STMT_NOTE_GROUP_OPEN,
	STMT_NOTE_GROUP_NEW,
	STMT_NOTE_GROUP_ADD,
	STMT_NOTE_GROUP_LEFT,
	STMT_NOTE_GROUP_DROP_EMPTY,
	STMT_NOTE_GROUP_OF,
	STMT_NOTE_GROUP_DELETE,
	STMT_NOTE_GROUP_MEMBERS,
	STMT_NOTE_GROUP_MAX_ID,
	STMT_NOTE_GROUP_DRIFT,
	STMT_NOTE_GROUP_FIX,
	STMT_SEED_GROUPS_UNREAD,
	STMT_USER_SET_NAME,
	STMT_NAME_WORDS_DROP,
	STMT_USER_SET_PWHASH_ID,
	STMT_SESSIONS_OTHERS_DELETE,
	STMT_REPOST_DELETE,
	STMT_HOME_SCORES,
	STMT_HOME_SCORES_OF_POST,
	STMT_REPOSTS_OF_USER,
	STMT_REPOST_AT,
	STMT_POST_REPOSTED,
	STMT_REPOSTERS_OF_POST,
	STMT_OUTBOX_ID_TAKEN,
	STMT_TXN_OPEN,
	STMT_TXN_STILL,
	STMT_OUTBOX_IDS_BETWEEN,
	STMT_POST_GET_LOCK,
	STMT_POST_HEAD_LOCK,
	STMT_COMMENT_GET_LOCK,
	STMT_LOCK_KEY,
	STMT_LOCK_KEY_SHARED,
	STMT_LIKE_COUNT_LOCK,
	STMT_NOTE_GROUP_LOCK,
	STMT_NOTE_GROUP_POSTS_LOCK,
	STMT_NOTE_POSTS_LOCK,
	STMT_NOTE_GROUP_POST_LOCK,
	STMT_LIKE_ON_SERVER,
	STMT_UNLIKE_ON_SERVER,
	STMT_AFTER_LOAD,
	STMT__MAX
};

extern const char *const sql_text[STMT__MAX];
/* The PostgreSQL text of the statements whose dialects differ (NULL:
 * sql_text's, translated; see pg.h). */
extern const char *const sql_pg_text[STMT__MAX];
/* The settings every PostgreSQL connection runs first (pg.c). */
extern const char sql_pg_session[];
/* 1 for the statements whose rows are read a few at a time on
 * PostgreSQL (a cursor, pg.h): the scans of whole tables that
 * reconciliation and a full recount read, whose results grow with the
 * site.  Any other statement's result arrives whole.  SQLite steps every
 * statement a row at a time already. */
extern const unsigned char sql_stream[STMT__MAX];

#endif
