/* sql_pg.c -- the PostgreSQL text of the statements where SQLite's
 * dialect differs; see sql.h.  The others run as sql.c has them, with
 * "?N" made "$N" (pg.h).
 *
 *   json_each(?)        a list of ids arrives as an array literal
 *                       ("{1,2,3}", dbq_bind_ids()): unnest() it
 *   max(a, b)           greatest(a, b)
 *   a IS ?              a IS NOT DISTINCT FROM ?
 *   rowid               the table's key
 *   FROM (SELECT ...)   needs an alias
 *   an insert's id      RETURNING id (SQLite's is its last insert rowid:
 *                       a RETURNING clause costs SQLite a temporary table
 *                       each run; dbq_insert_id())
 *   a deleted row's     RETURNING it (SQLite reads it first:
 *   column              dbq_cheap_returning())
 */
#include "store/sql.h"

/* STMT_NOTE_REMOVE's notifications: user, actor, kind, post, comment */
#define NOTE_SOURCE_PG	"user_id = ?1 AND actor_id = ?2 AND kind = ?3 AND " \
	"kind <> 'like' AND post_id IS NOT DISTINCT FROM ?4 AND comment_id " \
	"IS NOT DISTINCT FROM ?5"
/* A term that holds (>= 0) once the groups without a post of the
 * notifications where `notes` are locked, in id order: a subquery that
 * names no column of the statement's rows runs before any of them is
 * touched.  Every writer of such a group (a follow's) takes its row
 * before its members: the follow that joins it, its read and delete
 * (social/notify.c owner_change()), a read-all (STMT_NOTE_READ_ALL: all
 * of its groups), and with this term the unfollow's withdrawal.  Groups
 * of a post are ordered by the post's row, which every writer takes
 * first (docs/ARCHITECTURE.md). */
#define POSTLESS_GROUPS_LOCKED(notes) "(SELECT COUNT(*) FROM (SELECT id " \
	"FROM note_groups WHERE post_id IS NULL AND id IN (SELECT group_id " \
	"FROM notifications WHERE " notes ") ORDER BY id FOR NO KEY UPDATE) " \
	"g) >= 0"

/* STMT_NOTE_READ_ALL's notifications, beside the user's unread up to ?2:
 * those of no post, of a post the read-all holds (?3), or of a post with
 * no row; and, when the page's snapshot is given (?5: NOTES_PAGE_SQL's,
 * sql.h), only those it saw: a writer that took an id below the page's
 * newest may commit after the page (ids are not given in commit order),
 * and its notification was never shown.  A row from before schema step
 * 13 has no xact: committed long before any page that names it. */
#define READ_ALL_OF "(post_id IS NULL OR post_id = ANY(?3::bigint[]) OR " \
	"NOT EXISTS (SELECT 1 FROM posts p WHERE p.id = notifications.post_id))" \
	" AND (?5::text IS NULL OR xact IS NULL OR " \
	"pg_visible_in_snapshot(xact, ?5::text::pg_snapshot))"

#define IDS(n)	"unnest(" n "::bigint[]) WITH ORDINALITY j(value, key)"
/*
 * Visible posts by id (a page of a timeline or a profile), with their
 * authors and topics: "id = ANY" is one scan of the posts' primary key,
 * which the generic plan keeps at any size of the array; a join of the
 * unnested array let it hash a sequential scan of every post instead
 * (a 300-user site: the feed's statement 17 % slower at three clients).
 */
#define POSTS_JOINED "FROM posts p JOIN users u ON u.id = p.user_id " \
	"JOIN topics t ON t.id = p.topic_id "
#define POSTS_ID_IN(ids) "WHERE p.id = ANY(" ids "::bigint[]) AND " \
	"p.status = 1 AND p.is_deleted = 0"
#define POSTS_BY_IDS(ids) POSTS_JOINED POSTS_ID_IN(ids)

/* What a connection sets first, and again once made again (pg.c): a
 * writer that waits longer than SQLite's busy timeout fails; its
 * application_name says tally (unless the operator's already begins so:
 * "tally-host2"), which outbox_horizon() looks for; and, unless the
 * operator set it (server, database or role), a random page costs
 * the planner 1.1 pages read in order, not 4 (data in memory, not on a
 * spinning disk).  At 4, PostgreSQL read a small table whole once per row
 * of a loop rather than probe its index: a spread feed's statement cost
 * the server twice its CPU (docs/BENCHMARKS.md, "On PostgreSQL").
 * Last, unless set elsewhere (the server, the database, the role, or the
 * client's PGOPTIONS): a transaction of tally's left idle for
 * PG_IDLE_TX_MS is ended by the server, its connection with it.  No
 * transaction of tally's waits that long between two statements (a
 * Redis call's timeout is 500 ms, the outbox's horizon waits 2 s); a
 * writer that does is stopped, or its host cut off, and kept its row
 * locks and the outbox's horizon for as long as its TCP connection
 * seemed alive: with the kernel's keepalive, over two hours of every
 * like of its post failing at lock_timeout.  Its own commit fails
 * (nothing of it was committed), and the connection is made again
 * (pg_check_conn()). */
#define PG_IDLE_TX_MS	"30000"
const char sql_pg_session[] = "SET lock_timeout = 5000; "
    "SET client_min_messages = warning; "
    "SELECT set_config('application_name', 'tally', false) WHERE "
    "current_setting('application_name') NOT LIKE 'tally%'; "
    "SELECT set_config(name, CASE name WHEN 'random_page_cost' THEN '1.1' "
    "ELSE '" PG_IDLE_TX_MS "' END, false) FROM pg_settings "
    "WHERE name IN ('random_page_cost', "
    "'idle_in_transaction_session_timeout') AND source = 'default'";

const char *const sql_pg_text[STMT__MAX] = {
	[STMT_SESSION_EXPIRE] =
	    "DELETE FROM sessions WHERE hash IN "
	    "(SELECT hash FROM sessions WHERE expires_at <= ?1 LIMIT ?2)",
	/* A list of posts by id (POSTS_BY_IDS above): the cards come in no
	 * order of their own (postlist.c puts them in the list's). */
	[STMT_POSTS_BY_IDS] =
	    "SELECT " POST_COLS POSTS_BY_IDS("?1"),
	[STMT_FOLLOWERS_BY_IDS] =
	    "SELECT u.id, u.login, u.name, f.created_at FROM " IDS("?2") " "
	    "JOIN follows f ON f.follower_id = j.value AND f.followee_id = ?1 "
	    "JOIN users u ON u.id = j.value "
	    "ORDER BY f.created_at DESC, f.follower_id DESC",
	[STMT_FOLLOWING_BY_IDS] =
	    "SELECT u.id, u.login, u.name, f.created_at FROM " IDS("?2") " "
	    "JOIN follows f ON f.followee_id = j.value AND f.follower_id = ?1 "
	    "JOIN users u ON u.id = j.value "
	    "ORDER BY f.created_at DESC, f.followee_id DESC",
	/* As sql.c's, written so that PostgreSQL reads each thing once: the
	 * reader's followees once (the CTE f), the newest repost by one of
	 * them of each listed post in one pass over the reposts of those
	 * posts (rb), the posts as POSTS_BY_IDS (rb joined between its two
	 * halves), the reader's own marks as probes of the primary keys
	 * (VIEWER_MARK_COLS: an EXISTS a row; LEFT JOINs of likes and
	 * reposts cost 5 % more).  sql.c's per-post
	 * subqueries sorted the reposts again for every post; this text cut
	 * the server's CPU of a spread feed by 12 % (docs/BENCHMARKS.md).
	 * A repost's user always exists (a foreign key), so rb has a row
	 * exactly when sql.c's EXISTS is true. */
	[STMT_HOME_BY_IDS] =
	    "WITH f AS (SELECT followee_id FROM follows WHERE follower_id = ?2), "
	    "rb AS (SELECT DISTINCT ON (r.post_id) r.post_id, ru.login "
	    "FROM reposts r JOIN f ON f.followee_id = r.user_id "
	    "JOIN users ru ON ru.id = r.user_id WHERE r.post_id = ANY(?1::bigint[]) "
	    "ORDER BY r.post_id, r.created_at DESC, r.user_id DESC) "
	    "SELECT " POST_COLS VIEWER_MARK_COLS ", rb.login " POSTS_JOINED
	    "LEFT JOIN rb ON rb.post_id = p.id " POSTS_ID_IN("?1") " AND "
	    "(p.user_id = ?2 OR p.user_id IN (SELECT followee_id FROM f) OR "
	    "rb.post_id IS NOT NULL)",
	/* every writer takes its transaction id at BEGIN (pg.c), before
	 * any outbox id: see outbox_horizon() */
	[STMT_OUTBOX_ID_TAKEN] =
	    "SELECT coalesce(pg_sequence_last_value(pg_get_serial_sequence("
	    "'counter_outbox', 'id')::regclass), 0)",
	/* Only tally's connections (their application_name, set by
	 * sql_pg_session): another client's open transaction (an
	 * operator's psql left "idle in transaction") writes no outbox row,
	 * and waiting for it stalled every drain and failed every
	 * reconciliation.  A process and its transaction id: that
	 * transaction, however long its process lives (backend_xid is shown
	 * for every role's connections).  Only this database's: the
	 * outbox's ids are its own, and another site's (or a staging copy's)
	 * writers on the same server, a seed's long transaction among them,
	 * held back every drain here. */
	[STMT_TXN_OPEN] =
	    "SELECT string_agg(pid || ':' || backend_xid, ',') FROM "
	    "pg_stat_activity WHERE application_name LIKE 'tally%' AND "
	    "datname = current_database() AND "
	    "backend_xid IS NOT NULL AND pid <> pg_backend_pid()",
	[STMT_TXN_STILL] =
	    "SELECT count(*) FROM pg_stat_activity WHERE pid || ':' || "
	    "backend_xid = ANY(string_to_array(?1, ','))",
	/* ?1 is compared with users.login (citext) and stored in
	 * login_failures.login (text): untyped, PostgreSQL deduced two types
	 * for it and refused to prepare the statement -- no failed login was
	 * ever counted, and no account was ever locked */
	[STMT_LOGIN_FAIL_NEW] =
	    "INSERT INTO login_failures(login, since, failures, times) "
	    "SELECT CAST(?1 AS text), ?2, 1, CAST(?3 AS text) WHERE EXISTS "
	    "(SELECT 1 FROM users WHERE login = CAST(?1 AS text)) "
	    "ON CONFLICT(login) DO NOTHING",
	[STMT_TOPICS_ALL] =
	    "SELECT id, slug FROM topics WHERE id IN (SELECT CAST(key AS "
	    "bigint) FROM counters WHERE name = 'topic_posts' AND value > 0 "
	    "ORDER BY value DESC LIMIT ?1) OR id IN (SELECT id FROM topics "
	    "ORDER BY id DESC LIMIT ?2)",
	[STMT_POST_GET_LOCK] = POST_GET_SQL " FOR NO KEY UPDATE OF p",
	[STMT_POST_HEAD_LOCK] = POST_HEAD_SQL " FOR NO KEY UPDATE",
	[STMT_COMMENT_GET_LOCK] = COMMENT_GET_SQL " FOR NO KEY UPDATE",
	/* the user's row held (shared) while it is checked: a password
	 * change under way (its row updated, its sessions not yet deleted)
	 * is waited for, and its new hash then refuses the session */
	[STMT_SESSION_INSERT] =
	    "INSERT INTO sessions(hash, user_id, csrf, created_at, expires_at) "
	    "SELECT ?1, ?2, ?3, ?4, ?5 WHERE CAST(?6 AS text) IS NULL OR "
	    "EXISTS (SELECT 1 FROM users WHERE id = ?2 AND pwhash = ?6 FOR "
	    "SHARE)",
	/* and the table's sequence moved to it (setval: a row another
	 * client inserts takes the next) */
	[STMT_NOTICE_INSERT] =
	    "WITH n AS (INSERT INTO notices(id, title, body, created_at) "
	    "SELECT coalesce(max(id), 0) + 1, ?1, ?2, ?3 FROM notices "
	    "RETURNING id) SELECT id, setval(pg_get_serial_sequence('notices', "
	    "'id'), id) FROM n",
	[STMT_LOCK_KEY] = "SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))",
	[STMT_LOCK_KEY_SHARED] =
	    "SELECT pg_advisory_xact_lock_shared(hashtextextended(?1, 0))",
	/* in id order, as every writer that takes several of them */
	[STMT_LIKE_COUNT_LOCK] = "SELECT id FROM posts WHERE id BETWEEN ?1 "
	    "AND ?2 ORDER BY id FOR NO KEY UPDATE",
	/* shared (a read-all beside another), in id order, as a group
	 * commit takes its posts (web/batch.c) */
	[STMT_NOTES_PAGE] = NOTES_PAGE_SQL("pg_current_snapshot()::text"),
	[STMT_OUTBOX_FLOOR_RAISE] =
	    "INSERT INTO settings(name, value) VALUES(?1, ?2) "
	    "ON CONFLICT(name) DO UPDATE SET value = greatest(settings.value, "
	    "excluded.value)",
	[STMT_NOTE_POSTS_LOCK] = "SELECT id FROM posts WHERE id IN (SELECT "
	    "post_id FROM notifications WHERE user_id = ?1 AND is_read = 0 "
	    "AND id <= ?2) ORDER BY id FOR SHARE",
	/* a post with no row, which no writer can hold, is no reason to
	 * leave its notifications unread.  Every group it reads is taken
	 * first, in id order, before any notification: a delete or a read
	 * of one group takes its group before its members, and a repair
	 * takes groups by id; a read-all that took the members first, and
	 * the follows' groups before the posts', deadlocked with each */
	[STMT_NOTE_READ_ALL] =
	    "UPDATE notifications SET is_read = 1 WHERE user_id = ?1 "
	    "AND is_read = 0 AND id <= ?2 AND created_at <= ?4 AND "
	    READ_ALL_OF " AND "
	    "(SELECT COUNT(*) FROM (SELECT id FROM note_groups WHERE id IN "
	    "(SELECT group_id FROM notifications WHERE user_id = ?1 AND "
	    "is_read = 0 AND id <= ?2 AND created_at <= ?4 AND " READ_ALL_OF
	    ") ORDER BY id FOR NO KEY UPDATE) g) >= 0 RETURNING group_id",
	[STMT_NOTE_GROUP_POST_LOCK] = "SELECT id FROM posts WHERE id = (SELECT "
	    "post_id FROM note_groups WHERE id = ?1 AND user_id = ?2) FOR SHARE",
	[STMT_LIKE_ON_SERVER] = "SELECT visible, author, topic, changed, note "
	    "FROM tally_like(?1, ?2, ?3, ?4)",
	[STMT_UNLIKE_ON_SERVER] = "SELECT visible, author, topic, changed, note "
	    "FROM tally_unlike(?1, ?2)",
	/* the tables a seed fills (alone, it would go through the system's
	 * catalogs too, with a warning for each it may not touch); VACUUM
	 * too: until the rows are marked visible to all, an index-only scan
	 * still reads the table, and the feed costs twice its CPU */
	[STMT_AFTER_LOAD] = "VACUUM (ANALYZE) users, topics, posts, follows, "
	    "likes, reposts, comments, notifications, note_groups, "
	    "name_words, counters",
	[STMT_NOTE_GROUP_LOCK] = "SELECT id FROM note_groups WHERE id BETWEEN "
	    "?1 AND ?2 ORDER BY id FOR NO KEY UPDATE",
	/* shared, in id order, as a group commit takes its posts */
	[STMT_NOTE_GROUP_POSTS_LOCK] = "SELECT id FROM posts WHERE id IN "
	    "(SELECT post_id FROM note_groups WHERE id BETWEEN ?1 AND ?2) "
	    "ORDER BY id FOR SHARE",
	[STMT_HOME_SCORES] =
	    "SELECT j.value, " HOME_SCORE("greatest", "?1", "j.value")
	    " FROM " IDS("?2"),
	[STMT_HOME_SCORES_OF_POST] =
	    "SELECT j.value, " HOME_SCORE("greatest", "j.value", "?1")
	    " FROM " IDS("?2"),
	[STMT_POSTS_MARKS_BY_IDS] =
	    "SELECT " POST_COLS VIEWER_MARK_COLS POSTS_BY_IDS("?1"),
	/* a follow's group before its member: the member first, an
	 * unfollow deadlocked with the group's delete */
	[STMT_NOTE_REMOVE] =
	    "DELETE FROM notifications WHERE " NOTE_SOURCE_PG " AND "
	    POSTLESS_GROUPS_LOCKED(NOTE_SOURCE_PG) " RETURNING is_read, "
	    "group_id",
	[STMT_NOTE_REMOVE_ID] =
	    "DELETE FROM notifications "
	    NOTE_BY_ID_SQL("IS NOT DISTINCT FROM") " RETURNING is_read, group_id",
	[STMT_NOTE_READ_OF] =
	    "SELECT is_read, group_id FROM notifications "
	    NOTE_BY_ID_SQL("IS NOT DISTINCT FROM"),
	[STMT_NOTE_GROUP_OPEN] =
	    "SELECT id FROM note_groups WHERE user_id = ?1 AND kind = ?2 AND "
	    "post_id IS NOT DISTINCT FROM ?3 AND first_at > ?4 "
	    "ORDER BY first_at DESC LIMIT 1",
	[STMT_NOTE_GROUP_NEW] = NOTE_GROUP_NEW_SQL " RETURNING id",
	[STMT_NOTE_GROUP_ADD] =
	    "UPDATE note_groups SET size = size + ?2, unread = unread + ?3, "
	    "last_at = greatest(last_at, ?4) WHERE id = ?1",
	[STMT_NOTE_GROUP_DRIFT] =
	    "SELECT COUNT(*), coalesce(max(greatest(abs(size - rs), abs(unread - ru))), 0) "
	    "FROM (SELECT size, unread, (SELECT COUNT(*) FROM notifications n "
	    "WHERE n.group_id = g.id) AS rs, (SELECT COUNT(*) FROM "
	    "notifications n WHERE n.group_id = g.id AND n.is_read = 0) AS ru "
	    "FROM note_groups g WHERE g.id BETWEEN ?1 AND ?2) AS d "
	    "WHERE size <> rs OR unread <> ru",
	[STMT_LIKE_DELETE] = LIKE_DELETE_SQL " RETURNING note_id",
	[STMT_NOTE_INSERT] = NOTE_INSERT_SQL " RETURNING id",
	[STMT_OUTBOX_ADD] = OUTBOX_ADD_SQL " RETURNING id",
	[STMT_OUTBOX_ADD_MANY] = "INSERT INTO counter_outbox(at, deltas) "
	    "SELECT ?1, unnest(?2::text[]) RETURNING id, deltas",
	[STMT_MARKER_PUT] =
	    "INSERT INTO markers(user_id, kind, key, value) VALUES(?1, ?2, ?3, ?4) "
	    "ON CONFLICT(user_id, kind, key) DO UPDATE SET "
	    "value = greatest(markers.value, excluded.value)",
	[STMT_FOLLOWED_MARKS] =
	    "SELECT f.followee_id, greatest(f.created_at, coalesce(m.value, 0)), "
	    "(SELECT COUNT(*) FROM (SELECT 1 FROM posts p WHERE "
	    "p.user_id = f.followee_id AND p.status = 1 AND p.is_deleted = 0 "
	    "AND p.published_at > greatest(f.created_at, coalesce(m.value, 0)) "
	    "LIMIT 1000) s) "
	    "FROM follows f LEFT JOIN markers m ON m.user_id = f.follower_id "
	    "AND m.kind = 'author' AND m.key = f.followee_id WHERE f.follower_id = ?1",
	/* one active run: the partial unique index reconcile_runs_active
	 * stops a second one that a concurrent check let through */
	[STMT_RUN_CREATE] =
	    "INSERT INTO reconcile_runs(state, dry_run, reason, created_at) "
	    "SELECT 'queued', ?1, ?2, ?3 WHERE NOT EXISTS (SELECT 1 FROM "
	    "reconcile_runs WHERE state IN ('queued', 'running')) "
	    "ON CONFLICT DO NOTHING RETURNING id",
	[STMT_USERS_BY_IDS] =
	    "SELECT u.id, u.login, u.name FROM " IDS("?1") " JOIN users u "
	    "ON u.id = j.value ORDER BY j.key",
	[STMT_VIEWER_MARKS] =
	    "SELECT post_id, 1 FROM likes WHERE user_id = ?1 AND "
	    "post_id = ANY(?2::bigint[]) UNION ALL "
	    "SELECT post_id, 2 FROM reposts WHERE user_id = ?1 AND "
	    "post_id = ANY(?2::bigint[])",
	[STMT_FOLLOWING_AMONG] =
	    "SELECT followee_id FROM follows WHERE follower_id = ?1 AND "
	    "followee_id = ANY(?2::bigint[])",
	[STMT_TOPIC_PUBLIC] =
	    "SELECT CAST(EXISTS (SELECT 1 FROM posts "
	    "WHERE topic_id = ?1 AND status = 1 AND is_deleted = 0) AS INTEGER)",
};
