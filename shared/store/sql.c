/* sql.c -- the statement table; see sql.h.
 *
 * One file: why this file of over 500 lines is one concept --
 * the table is one array indexed by enum stmt, and its point is
 * that every statement of tally is found in one place (PostgreSQL's
 * differing texts are sql_pg.c). */
#include "store/sql.h"

/* A post the counters count: published, not deleted (the recounts). */
#define VISIBLE "status = 1 AND is_deleted = 0"
/* STMT_SESSION_GET_MANY's: which of its hashes a row matched */
#define SESS_WHEN(n)	" WHEN ?" #n " THEN " #n
/* STMT_COUNTER_ADD_MANY's rows, written out: COUNTER_ADD_ROWS of them. */
#define ADD_ROW		"(?, ?, ?)"
#define ADD_ROWS4	ADD_ROW ", " ADD_ROW ", " ADD_ROW ", " ADD_ROW
#define ADD_ROWS16	ADD_ROWS4 ", " ADD_ROWS4 ", " ADD_ROWS4 ", " ADD_ROWS4
#define ADD_ROWS64	ADD_ROWS16 ", " ADD_ROWS16 ", " ADD_ROWS16 ", " \
			ADD_ROWS16
_Static_assert(sizeof(ADD_ROWS64) - 1 == COUNTER_ADD_ROWS *
    (sizeof(ADD_ROW ", ") - 1) - (sizeof(", ") - 1),
    "STMT_COUNTER_ADD_MANY has COUNTER_ADD_ROWS rows");

const char *const sql_text[STMT__MAX] = {
	/* STMT_PING */
	[STMT_PING] =
	    "SELECT 1",
	/* STMT_USER_INSERT: login, name, pwhash, is_admin, now */
	[STMT_USER_INSERT] =
	    "INSERT INTO users(login, name, pwhash, is_admin, created_at) "
	    "VALUES(?1, ?2, ?3, ?4, ?5) ON CONFLICT(login) DO NOTHING RETURNING id",
	/* STMT_USER_BY_LOGIN: login */
	[STMT_USER_BY_LOGIN] =
	    "SELECT id, login, name, pwhash, is_admin FROM users WHERE login = ?1",
	/* STMT_SESSION_INSERT: hash, user, csrf, now, expires, stamp (NULL:
	 * none) -- only while the user's password is still the one the login
	 * matched (social/session.h) */
	[STMT_SESSION_INSERT] =
	    "INSERT INTO sessions(hash, user_id, csrf, created_at, expires_at) "
	    "SELECT ?1, ?2, ?3, ?4, ?5 WHERE ?6 IS NULL OR EXISTS (SELECT 1 "
	    "FROM users WHERE id = ?2 AND pwhash = ?6)",
	/* STMT_SESSION_GET: hash, now */
	[STMT_SESSION_GET] =
	    "SELECT s.user_id, s.csrf, u.login, u.is_admin, s.expires_at "
	    "FROM sessions s JOIN users u ON u.id = s.user_id "
	    "WHERE s.hash = ?1 AND s.expires_at > ?2",
	/* STMT_SESSION_GET_MANY: 16 hashes (NULL: none), now -- each live
	 * session's row after the number of the hash it matched */
	[STMT_SESSION_GET_MANY] =
	    "SELECT CASE s.hash" SESS_WHEN(1) SESS_WHEN(2) SESS_WHEN(3)
	    SESS_WHEN(4) SESS_WHEN(5) SESS_WHEN(6) SESS_WHEN(7) SESS_WHEN(8)
	    SESS_WHEN(9) SESS_WHEN(10) SESS_WHEN(11) SESS_WHEN(12)
	    SESS_WHEN(13) SESS_WHEN(14) SESS_WHEN(15) SESS_WHEN(16) " END, "
	    "s.user_id, s.csrf, u.login, u.is_admin, s.expires_at "
	    "FROM sessions s JOIN users u ON u.id = s.user_id "
	    "WHERE s.hash IN (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
	    "?12, ?13, ?14, ?15, ?16) AND s.expires_at > ?17",
	/* STMT_SESSION_DELETE: hash */
	[STMT_SESSION_DELETE] =
	    "DELETE FROM sessions WHERE hash = ?1",
	/* STMT_SESSION_EXPIRE: now, limit -- bounded batches */
	[STMT_SESSION_EXPIRE] =
	    "DELETE FROM sessions WHERE rowid IN "
	    "(SELECT rowid FROM sessions WHERE expires_at <= ?1 LIMIT ?2)",
	/* STMT_SETTING_GET: name */
	[STMT_SETTING_GET] =
	    "SELECT value FROM settings WHERE name = ?1",
	/* STMT_SETTING_PUT: name, value */
	[STMT_SETTING_PUT] =
	    "INSERT INTO settings(name, value) VALUES(?1, ?2) "
	    "ON CONFLICT(name) DO UPDATE SET value = excluded.value",

	/* STMT_TOPIC_UPSERT: slug, now -- the id, created or not */
	[STMT_TOPIC_UPSERT] =
	    "INSERT INTO topics(slug, created_at) VALUES(?1, ?2) "
	    "ON CONFLICT(slug) DO UPDATE SET slug = excluded.slug RETURNING id",
	/* STMT_TOPIC_BY_SLUG: slug */
	[STMT_TOPIC_BY_SLUG] =
	    "SELECT id, slug FROM topics WHERE slug = ?1",
	/* STMT_POST_INSERT: user, topic, body, status, now */
	[STMT_POST_INSERT] =
	    "INSERT INTO posts(user_id, topic_id, body, status, created_at, "
	    "published_at, updated_at) VALUES(?1, ?2, ?3, ?4, ?5, "
	    "CASE WHEN ?4 = 1 THEN ?5 END, ?5) RETURNING id",
	/* STMT_POST_GET: id */
	[STMT_POST_GET] = POST_GET_SQL,
	/* STMT_POST_HEAD: id -- what an action on the post needs: its
	 * author, topic and visibility (one lookup, no body) */
	[STMT_POST_HEAD] = POST_HEAD_SQL,
	/* STMT_POST_UPDATE: id, body, topic, status, now -- keeps the first
	 * publication time, so a re-published post keeps its place */
	[STMT_POST_UPDATE] =
	    "UPDATE posts SET body = ?2, topic_id = ?3, status = ?4, "
	    "published_at = CASE WHEN ?4 = 1 THEN coalesce(published_at, ?5) "
	    "ELSE published_at END, updated_at = ?5 WHERE id = ?1 AND is_deleted = 0",
	/* STMT_POST_DELETE: id, now */
	[STMT_POST_DELETE] =
	    "UPDATE posts SET is_deleted = 1, updated_at = ?2 "
	    "WHERE id = ?1 AND is_deleted = 0",
	/* STMT_POSTS_BY_IDS: json array of ids -- visible posts, in no order
	 * (postlist_read() puts them in the order of the ids: no sorter) */
	[STMT_POSTS_BY_IDS] =
	    "SELECT " POST_COLS "FROM json_each(?1) j JOIN posts p ON p.id = j.value "
	    "JOIN users u ON u.id = p.user_id JOIN topics t ON t.id = p.topic_id "
	    "WHERE p.status = 1 AND p.is_deleted = 0",
	/* STMT_HOME_SQL: user, limit, offset -- own and followees' posts,
	 * and what followees reposted, each once at its newest place (sql.h) */
	[STMT_HOME_SQL] =
	    "SELECT id, max(at) FROM (SELECT p.id AS id, p.published_at AS at "
	    "FROM posts p WHERE p.status = 1 AND p.is_deleted = 0 AND p.user_id "
	    "IN (SELECT followee_id FROM follows WHERE follower_id = ?1 "
	    "UNION ALL SELECT ?1) UNION ALL SELECT r.post_id, r.created_at "
	    "FROM follows f JOIN reposts r ON r.user_id = f.followee_id "
	    "JOIN posts p ON p.id = r.post_id WHERE f.follower_id = ?1 AND "
	    "p.status = 1 AND p.is_deleted = 0) AS h GROUP BY id "
	    "ORDER BY 2 DESC, id DESC LIMIT ?2 OFFSET ?3",
	/* STMT_PROFILE_SQL: user, limit, offset */
	[STMT_PROFILE_SQL] =
	    "SELECT id, published_at FROM posts INDEXED BY posts_user_visible "
	    "WHERE user_id = ?1 AND status = 1 AND is_deleted = 0 "
	    "ORDER BY published_at DESC, id DESC LIMIT ?2 OFFSET ?3",
	/* STMT_TOPIC_SQL: topic, limit, offset */
	[STMT_TOPIC_SQL] =
	    "SELECT id, published_at FROM posts INDEXED BY posts_topic_visible "
	    "WHERE topic_id = ?1 AND status = 1 AND is_deleted = 0 "
	    "ORDER BY published_at DESC, id DESC LIMIT ?2 OFFSET ?3",
	/* STMT_FOLLOW_INSERT: follower, followee, now -- a row only if new */
	[STMT_FOLLOW_INSERT] =
	    "INSERT INTO follows(follower_id, followee_id, created_at) "
	    "VALUES(?1, ?2, ?3) ON CONFLICT DO NOTHING RETURNING created_at",
	/* STMT_FOLLOW_DELETE: follower, followee -- a row only if it existed */
	[STMT_FOLLOW_DELETE] =
	    "DELETE FROM follows WHERE follower_id = ?1 AND followee_id = ?2 "
	    "RETURNING created_at",
	/* STMT_IS_FOLLOWING: follower, followee */
	[STMT_IS_FOLLOWING] =
	    "SELECT created_at FROM follows WHERE follower_id = ?1 AND followee_id = ?2",
	/* STMT_FOLLOWERS_PAGE_SQL: user, limit, offset */
	[STMT_FOLLOWERS_PAGE_SQL] =
	    "SELECT u.id, u.login, u.name, f.created_at FROM follows f "
	    "JOIN users u ON u.id = f.follower_id WHERE f.followee_id = ?1 "
	    "ORDER BY f.created_at DESC, f.follower_id DESC LIMIT ?2 OFFSET ?3",
	/* STMT_FOLLOWING_PAGE_SQL: user, limit, offset */
	[STMT_FOLLOWING_PAGE_SQL] =
	    "SELECT u.id, u.login, u.name, f.created_at FROM follows f "
	    "JOIN users u ON u.id = f.followee_id WHERE f.follower_id = ?1 "
	    "ORDER BY f.created_at DESC, f.followee_id DESC LIMIT ?2 OFFSET ?3",
	/* STMT_FOLLOWERS_CHUNK: user, after time, after id, limit -- oldest first */
	[STMT_FOLLOWERS_CHUNK] =
	    "SELECT follower_id, created_at FROM follows WHERE followee_id = ?1 "
	    "AND (created_at, follower_id) > (?2, ?3) "
	    "ORDER BY created_at, follower_id LIMIT ?4",
	/* STMT_FOLLOWING_CHUNK: user, after time, after id, limit */
	[STMT_FOLLOWING_CHUNK] =
	    "SELECT followee_id, created_at FROM follows WHERE follower_id = ?1 "
	    "AND (created_at, followee_id) > (?2, ?3) "
	    "ORDER BY created_at, followee_id LIMIT ?4",
	/* STMT_FOLLOWERS_BY_IDS: user, json ids -- still following, in order */
	[STMT_FOLLOWERS_BY_IDS] =
	    "SELECT u.id, u.login, u.name, f.created_at FROM json_each(?2) j "
	    "JOIN follows f ON f.follower_id = j.value AND f.followee_id = ?1 "
	    "JOIN users u ON u.id = j.value "
	    "ORDER BY f.created_at DESC, f.follower_id DESC",
	/* STMT_FOLLOWING_BY_IDS: user, json ids */
	[STMT_FOLLOWING_BY_IDS] =
	    "SELECT u.id, u.login, u.name, f.created_at FROM json_each(?2) j "
	    "JOIN follows f ON f.followee_id = j.value AND f.follower_id = ?1 "
	    "JOIN users u ON u.id = j.value "
	    "ORDER BY f.created_at DESC, f.followee_id DESC",
	/* STMT_LIKE_INSERT: post, user, now (dbq_changes(): 1 new, 0 there) */
	[STMT_LIKE_INSERT] =
	    "INSERT INTO likes(post_id, user_id, created_at) VALUES(?1, ?2, ?3) "
	    "ON CONFLICT DO NOTHING",
	/* STMT_LIKE_DELETE: post, user (its notification's id: first
	 * STMT_LIKE_NOTE_OF; PostgreSQL returns it) */
	[STMT_LIKE_DELETE] = LIKE_DELETE_SQL,
	/* STMT_LIKE_NOTE: post, user, notification */
	[STMT_LIKE_NOTE] =
	    "UPDATE likes SET note_id = ?3 WHERE post_id = ?1 AND user_id = ?2",
	/* STMT_REPOST_INSERT: post, user, now (dbq_changes() as a like) */
	[STMT_REPOST_INSERT] =
	    "INSERT INTO reposts(post_id, user_id, created_at) VALUES(?1, ?2, ?3) "
	    "ON CONFLICT DO NOTHING",
	/* STMT_COMMENT_INSERT: post, user, body, now */
	[STMT_COMMENT_INSERT] =
	    "INSERT INTO comments(post_id, user_id, body, created_at) "
	    "VALUES(?1, ?2, ?3, ?4) RETURNING id",
	/* STMT_COMMENT_DELETE: id */
	[STMT_COMMENT_DELETE] =
	    "UPDATE comments SET is_deleted = 1 WHERE id = ?1 AND is_deleted = 0",
	/* STMT_COMMENTS_OF_POST: post, after, limit -- oldest first */
	[STMT_COMMENTS_OF_POST] =
	    "SELECT c.id, c.user_id, u.login, u.name, c.body, c.created_at "
	    "FROM comments c JOIN users u ON u.id = c.user_id "
	    "WHERE c.post_id = ?1 AND c.id > ?2 AND c.is_deleted = 0 "
	    "ORDER BY c.id LIMIT ?3",
	/* STMT_COMMENTS_BEFORE: post, comment, n -- a row when at least n
	 * + 1 comments of the post come before that one */
	[STMT_COMMENTS_BEFORE] =
	    "SELECT 1 FROM comments WHERE post_id = ?1 AND id < ?2 AND "
	    "is_deleted = 0 ORDER BY id LIMIT 1 OFFSET ?3",
	/* STMT_HOME_BY_IDS: json ids, reader -- visible, and by the reader
	 * or someone the reader follows now, or reposted by someone the
	 * reader follows (a stale entry is skipped); with the reader's like
	 * and repost marks (one statement, not two) and who reposted it */
	[STMT_HOME_BY_IDS] =
	    "SELECT " POST_COLS VIEWER_MARK_COLS HOME_REPOSTED_BY("?2")
	    "FROM json_each(?1) j JOIN posts p ON p.id = j.value "
	    "JOIN users u ON u.id = p.user_id JOIN topics t ON t.id = p.topic_id "
	    "WHERE p.status = 1 AND p.is_deleted = 0 AND (p.user_id = ?2 OR "
	    "EXISTS(SELECT 1 FROM follows f WHERE f.follower_id = ?2 "
	    "AND f.followee_id = p.user_id) OR EXISTS(SELECT 1 "
	    HOME_REPOST_BY("?2") "WHERE r.post_id = p.id))",
	/* STMT_POSTS_MARKS_BY_IDS: json ids, reader -- visible posts, with
	 * the reader's like and repost marks */
	[STMT_POSTS_MARKS_BY_IDS] =
	    "SELECT " POST_COLS VIEWER_MARK_COLS
	    "FROM json_each(?1) j JOIN posts p ON p.id = j.value "
	    "JOIN users u ON u.id = p.user_id JOIN topics t ON t.id = p.topic_id "
	    "WHERE p.status = 1 AND p.is_deleted = 0",
	/* STMT_DRAFTS_OF_USER: user, before (an id), limit -- the newest
	 * drafts older than that one (posts_user: one range, newest first) */
	[STMT_DRAFTS_OF_USER] =
	    "SELECT " POST_COLS "FROM posts p JOIN users u ON u.id = p.user_id "
	    "JOIN topics t ON t.id = p.topic_id WHERE p.user_id = ?1 "
	    "AND p.id < ?2 AND p.status = 0 AND p.is_deleted = 0 "
	    "ORDER BY p.id DESC LIMIT ?3",
	/* STMT_POST_LIKES_ADD: post, delta -- bookkeeping in the like's txn */
	[STMT_POST_LIKES_ADD] =
	    "UPDATE posts SET like_count = like_count + ?2 WHERE id = ?1",
	/* STMT_COUNTER_GET: name, key */
	[STMT_COUNTER_GET] =
	    "SELECT value FROM counters WHERE name = ?1 AND key = ?2",
	/* STMT_COUNTER_ADD: name, key, delta */
	[STMT_COUNTER_ADD] =
	    "INSERT INTO counters(name, key, value) VALUES(?1, ?2, ?3) "
	    "ON CONFLICT(name, key) DO UPDATE SET value = counters.value + "
	    "excluded.value "
	    "RETURNING value",
	/* STMT_COUNTER_ADD_PLAIN: name, key, delta (no value back) */
	[STMT_COUNTER_ADD_PLAIN] =
	    "INSERT INTO counters(name, key, value) VALUES(?1, ?2, ?3) "
	    "ON CONFLICT(name, key) DO UPDATE SET value = counters.value + "
	    "excluded.value",
	/* STMT_COUNTER_SET: name, key, value */
	[STMT_COUNTER_SET] =
	    "INSERT INTO counters(name, key, value) VALUES(?1, ?2, ?3) "
	    "ON CONFLICT(name, key) DO UPDATE SET value = excluded.value",
	/* STMT_FLUSH_RECORD: id, now, counters, total -- a row only if new */
	[STMT_FLUSH_RECORD] =
	    "INSERT INTO flushes(id, applied_at, counters, total) "
	    "VALUES(?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING",
	/* STMT_FLUSH_PRUNE: before (ms), n -- of the n oldest rows, those
	 * applied before that time, but the newest row (fbatch.h) */
	[STMT_FLUSH_PRUNE] =
	    "DELETE FROM flushes WHERE id IN (SELECT id FROM flushes ORDER BY "
	    "id LIMIT ?2) AND applied_at < ?1 AND id < (SELECT max(id) FROM "
	    "flushes)",
	/* STMT_FLUSH_APPLIED: id */
	[STMT_FLUSH_APPLIED] =
	    "SELECT 1 FROM flushes WHERE id = ?1",
	/* STMT_NOTE_INSERT: user, actor, kind, post, comment, now, group ->
	 * its id (dbq_insert_id()) */
	[STMT_NOTE_INSERT] = NOTE_INSERT_SQL,
	/* STMT_NOTE_REMOVE: user, actor, kind, post, comment -- the source went
	 * (not a like: those go by id, and notifications_source leaves them
	 * out; the literal term lets the planner use that partial index) */
	[STMT_NOTE_REMOVE] =
	    "DELETE FROM notifications WHERE user_id = ?1 AND actor_id = ?2 AND "
	    "kind = ?3 AND kind <> 'like' AND post_id IS ?4 AND comment_id IS ?5 "
	    "RETURNING is_read, group_id",
	/* STMT_NOTE_REMOVE_ID: user, actor, kind, post, comment, id -- the one
	 * the source remembered, if it is still that one (an id can be reused
	 * once its owner deleted it) */
	[STMT_NOTE_REMOVE_ID] =
	    "DELETE FROM notifications " NOTE_BY_ID_SQL("IS"),
	/* STMT_NOTE_READ: group, user -- the owner's unread ones of the group
	 * (notifications_unread: as many rows as the user has unread) */
	[STMT_NOTE_READ] =
	    "UPDATE notifications SET is_read = 1 WHERE user_id = ?2 "
	    "AND is_read = 0 AND group_id = ?1",
	/* STMT_NOTE_DELETE: group, user -> each removed one's is_read */
	[STMT_NOTE_DELETE] =
	    "DELETE FROM notifications WHERE group_id = ?1 AND user_id = ?2 "
	    "RETURNING is_read",
	/* STMT_NOTE_READ_ALL: user, up to id -- the newest one a page showed
	 * --, posts (dbq_bind_ids(): STMT_NOTE_POSTS_LOCK's), up to time (a
	 * shown id taken again is newer), the page's snapshot (PostgreSQL's;
	 * SQLite's one writer commits in the order of its ids: every row)
	 * -> the group of each one read: of those posts, or of none */
	[STMT_NOTE_READ_ALL] =
	    "UPDATE notifications SET is_read = 1 WHERE user_id = ?1 "
	    "AND is_read = 0 AND id <= ?2 AND created_at <= ?4 AND (post_id "
	    "IS NULL OR post_id IN (SELECT value FROM json_each(?3))) "
	    "AND (?5 IS NULL OR 1) RETURNING group_id",
	/* STMT_NOTES_PAGE: sql.h's NOTES_PAGE_SQL; SQLite's writes in
	 * the order of their ids, and its snapshot is no column */
	[STMT_NOTES_PAGE] = NOTES_PAGE_SQL("''"),
	/* STMT_NOTICE_INSERT: title, body, now -- the next number after the
	 * last committed (the notices badge is the newest's less the last
	 * seen: social/badges.c), its transaction holding the "notices" lock
	 * (dbq_lock_key()) until its commit: no gap, in commit order */
	[STMT_NOTICE_INSERT] =
	    "INSERT INTO notices(id, title, body, created_at) SELECT "
	    "coalesce(max(id), 0) + 1, ?1, ?2, ?3 FROM notices RETURNING id",
	/* STMT_NOTICES_PAGE: limit, offset */
	[STMT_NOTICES_PAGE] =
	    "SELECT id, title, body, created_at FROM notices ORDER BY id DESC "
	    "LIMIT ?1 OFFSET ?2",
	/* STMT_MARKER_PUT: user, kind, key, value -- markers only move forward */
	[STMT_MARKER_PUT] =
	    "INSERT INTO markers(user_id, kind, key, value) VALUES(?1, ?2, ?3, ?4) "
	    "ON CONFLICT(user_id, kind, key) DO UPDATE SET "
	    "value = max(value, excluded.value)",
	/* STMT_FOLLOWED_MARKS: reader -- per followee, unread starts after,
	 * and the followee's visible posts published after that: one index
	 * range each, bounded like a profile timeline (1000) */
	[STMT_FOLLOWED_MARKS] =
	    "SELECT f.followee_id, max(f.created_at, coalesce(m.value, 0)), "
	    "(SELECT COUNT(*) FROM (SELECT 1 FROM posts p INDEXED BY "
	    "posts_user_visible WHERE p.user_id = f.followee_id AND "
	    "p.status = 1 AND p.is_deleted = 0 AND p.published_at > "
	    "max(f.created_at, coalesce(m.value, 0)) LIMIT 1000)) "
	    "FROM follows f LEFT JOIN markers m ON m.user_id = f.follower_id "
	    "AND m.kind = 'author' AND m.key = f.followee_id WHERE f.follower_id = ?1",
	/* STMT_NOTE_OWNER: id -> its recipient, its time */
	[STMT_NOTE_OWNER] =
	    "SELECT user_id, created_at FROM notifications WHERE id = ?1",
	/* STMT_COUNTERS_OF_FAMILY: name */
	[STMT_COUNTERS_OF_FAMILY] =
	    "SELECT key, value FROM counters WHERE name = ?1",
	/* STMT_LIKE_COUNT_FIX: first id, last id -- one chunk, short txn */
	[STMT_LIKE_COUNT_FIX] =
	    "UPDATE posts SET like_count = (SELECT COUNT(*) FROM likes "
	    "WHERE post_id = posts.id) WHERE id BETWEEN ?1 AND ?2 AND like_count != "
	    "(SELECT COUNT(*) FROM likes WHERE post_id = posts.id)",
	/* STMT_LIKE_COUNT_DRIFT: first id, last id -- posts, max error */
	[STMT_LIKE_COUNT_DRIFT] =
	    "SELECT COUNT(*), coalesce(max(abs(like_count - (SELECT COUNT(*) FROM "
	    "likes WHERE post_id = posts.id))), 0) FROM posts WHERE id BETWEEN ?1 "
	    "AND ?2 AND like_count != (SELECT COUNT(*) FROM likes "
	    "WHERE post_id = posts.id)",
	/* STMT_POST_MAX_ID */
	[STMT_POST_MAX_ID] =
	    "SELECT coalesce(max(id), 0) FROM posts",
	/* STMT_POST_OWNER: id -- the author, whose bucket holds the post's
	 * counters (count/cname.h) */
	[STMT_POST_OWNER] =
	    "SELECT user_id FROM posts WHERE id = ?1",
	/* STMT_POST_OWNERS -- every post's id and author, by id */
	[STMT_POST_OWNERS] =
	    "SELECT id, user_id FROM posts ORDER BY id",
	/* STMT_RUN_CREATE: dry, reason, now -- only when none is active */
	[STMT_RUN_CREATE] =
	    "INSERT INTO reconcile_runs(state, dry_run, reason, created_at) "
	    "SELECT 'queued', ?1, ?2, ?3 WHERE NOT EXISTS (SELECT 1 FROM "
	    "reconcile_runs WHERE state IN ('queued', 'running')) RETURNING id",
	/* STMT_RUN_ACTIVE */
	[STMT_RUN_ACTIVE] =
	    "SELECT id FROM reconcile_runs WHERE state IN ('queued', 'running') "
	    "ORDER BY id LIMIT 1",
	/* STMT_RUN_GET: id */
	[STMT_RUN_GET] =
	    "SELECT id, state, dry_run, reason, progress, checkpoint, report, "
	    "coalesce(error, ''), created_at, coalesce(started_at, 0), "
	    "coalesce(finished_at, 0), owner, owner_name, lease_until FROM "
	    "reconcile_runs WHERE id = ?1",
	/* STMT_RUN_LIST: limit */
	[STMT_RUN_LIST] =
	    "SELECT id, state, dry_run, reason, progress, checkpoint, report, "
	    "coalesce(error, ''), created_at, coalesce(started_at, 0), "
	    "coalesce(finished_at, 0), owner, owner_name, lease_until FROM "
	    "reconcile_runs ORDER BY id DESC LIMIT ?1",
	/* STMT_RUN_CLAIM: id, now, owner's pid, owner's name, lease's end --
	 * compare and set: a queued run, one of the owner's own, or one
	 * whose lease lapsed (runs.h) */
	[STMT_RUN_CLAIM] =
	    "UPDATE reconcile_runs SET state = 'running', owner = ?3, "
	    "owner_name = ?4, lease_until = ?5, started_at = coalesce(started_at, "
	    "?2) WHERE id = ?1 AND state IN ('queued', 'running') AND "
	    "(owner_name = ?4 OR lease_until < ?2)",
	/* STMT_RUN_PROGRESS: id, progress, checkpoint, report, owner's name,
	 * lease's end -- only while the run is still the owner's; a step
	 * done clears what STMT_RUN_NOTE said of a failed one */
	[STMT_RUN_PROGRESS] =
	    "UPDATE reconcile_runs SET progress = ?2, checkpoint = ?3, report = ?4, "
	    "lease_until = ?6, error = NULL WHERE id = ?1 AND state = 'running' AND "
	    "owner_name = ?5",
	/* STMT_RUN_FINISH: id, state, error, now, owner's name */
	[STMT_RUN_FINISH] =
	    "UPDATE reconcile_runs SET state = ?2, error = ?3, finished_at = ?4, "
	    "progress = CASE WHEN ?2 = 'done' THEN 100 ELSE progress END WHERE id = ?1 "
	    "AND state = 'running' AND owner_name = ?5",
	/* STMT_RUN_NOTE: id, text, owner's name -- a running run's note (a
	 * step that failed and will be tried again) */
	[STMT_RUN_NOTE] =
	    "UPDATE reconcile_runs SET error = ?2 WHERE id = ?1 AND "
	    "state = 'running' AND owner_name = ?3",
	/* STMT_RUN_RENEW: id, owner's name, lease's end */
	[STMT_RUN_RENEW] =
	    "UPDATE reconcile_runs SET lease_until = ?3 WHERE id = ?1 AND "
	    "state = 'running' AND owner_name = ?2",
	/* STMT_COUNTERS_OF_TOPIC: name, topic -- a topic's (user, topic) rows */
	[STMT_COUNTERS_OF_TOPIC] =
	    /* the topic's authors first (its visible posts, by index), then
	     * each one's counter by key: bounded by the topic, never a scan
	     * of every (user, topic) counter */
	    "SELECT c.key, c.value FROM (SELECT DISTINCT user_id FROM posts "
	    "INDEXED BY posts_topic_visible WHERE topic_id = ?2 AND status = 1 "
	    "AND is_deleted = 0) p JOIN counters c ON c.name = ?1 "
	    "AND c.key = p.user_id || ':' || ?2",
	/* STMT_USERS_BY_IDS: json ids -- in the given order */
	[STMT_USERS_BY_IDS] =
	    "SELECT u.id, u.login, u.name FROM json_each(?1) j JOIN users u "
	    "ON u.id = j.value ORDER BY j.key",
	/* STMT_LAST_FLUSH -- time and size of the newest applied batch */
	[STMT_LAST_FLUSH] =
	    "SELECT applied_at, counters, total FROM flushes ORDER BY id DESC LIMIT 1",
	/* STMT_MAX_IDS -- users, posts, topics */
	[STMT_MAX_IDS] =
	    "SELECT (SELECT coalesce(max(id), 0) FROM users), "
	    "(SELECT coalesce(max(id), 0) FROM posts), "
	    "(SELECT coalesce(max(id), 0) FROM topics)",
	/* STMT_POST_AT_OR_AFTER: id -- a post's (user, topic) for sampling */
	[STMT_POST_AT_OR_AFTER] =
	    "SELECT user_id, topic_id FROM posts WHERE id >= ?1 ORDER BY id LIMIT 1",
	/* STMT_BACKLOG_ADD: name, key, delta, a new row's version (the wall
	 * clock in microseconds: a row's version grows by 1 a delta, each
	 * added more than a microsecond after the last, so a row never
	 * takes the version of one deleted before it, which a settle's mark
	 * in Redis may still name, count/settle.c) */
	[STMT_BACKLOG_ADD] =
	    "INSERT INTO counter_backlog(name, key, delta, ver) "
	    "VALUES(?1, ?2, ?3, ?4) "
	    "ON CONFLICT(name, key) DO UPDATE SET delta = counter_backlog.delta + "
	    "excluded.delta, ver = counter_backlog.ver + 1",
	/* STMT_BACKLOG_GET: name, key -> delta, version */
	[STMT_BACKLOG_GET] =
	    "SELECT delta, ver FROM counter_backlog WHERE name = ?1 AND key = ?2",
	/* STMT_BACKLOG_BATCH: limit */
	[STMT_BACKLOG_BATCH] =
	    "SELECT name, key, delta, ver FROM counter_backlog LIMIT ?1",
	/* STMT_BACKLOG_DONE: name, key, version -- only if nothing was added
	 * since that version was read */
	[STMT_BACKLOG_DONE] =
	    "DELETE FROM counter_backlog WHERE name = ?1 AND key = ?2 AND ver = ?3",
	/* STMT_BACKLOG_QUARANTINE: name, key, version, now -- a row no
	 * counter can take, kept aside (STMT_BACKLOG_DONE then deletes it) */
	[STMT_BACKLOG_QUARANTINE] =
	    "INSERT INTO counter_backlog_bad(name, key, delta, ver, found_at) "
	    "SELECT name, key, delta, ver, ?4 FROM counter_backlog "
	    "WHERE name = ?1 AND key = ?2 AND ver = ?3",
	/* STMT_FLUSH_MAX */
	[STMT_FLUSH_MAX] =
	    "SELECT coalesce(max(id), 0) FROM flushes",
	/* STMT_BADGE_SCALARS: user -- latest notice, its marker, the red dot's
	 * light and the user's last /news visit, in one statement */
	[STMT_BADGE_SCALARS] =
	    "SELECT (SELECT coalesce(max(id), 0) FROM notices), "
	    "(SELECT value FROM markers WHERE user_id = ?1 AND kind = 'notices' "
	    "AND key = 0), (SELECT value FROM settings WHERE name = 'red_dot_at'), "
	    "(SELECT value FROM markers WHERE user_id = ?1 AND kind = 'news' "
	    "AND key = 0)",
	/* STMT_AUTHOR_SEEN: author, reader -- the author's newest visible
	 * post's publish time, and where the reader's unread of the author
	 * starts (the later of the follow and the "author" marker; -1: the
	 * reader does not follow the author) */
	[STMT_AUTHOR_SEEN] =
	    "SELECT coalesce(max(published_at), 0), coalesce((SELECT "
	    "coalesce((SELECT value FROM markers WHERE user_id = ?2 AND "
	    "kind = 'author' AND key = ?1 AND value > f.created_at), "
	    "f.created_at) FROM follows f WHERE f.follower_id = ?2 AND "
	    "f.followee_id = ?1), -1) "
	    "FROM posts INDEXED BY posts_user_visible WHERE user_id = ?1 "
	    "AND status = 1 AND is_deleted = 0",
	/* STMT_RUN_LAST_DONE -- the newest finished run */
	[STMT_RUN_LAST_DONE] =
	    "SELECT id, state, dry_run, reason, progress, checkpoint, report, "
	    "coalesce(error, ''), created_at, coalesce(started_at, 0), "
	    "coalesce(finished_at, 0), owner, owner_name, lease_until FROM "
	    "reconcile_runs WHERE state = 'done' ORDER BY id DESC LIMIT 1",
	/* STMT_OUTBOX_ADD: at, deltas -> its id (dbq_insert_id()) */
	[STMT_OUTBOX_ADD] = OUTBOX_ADD_SQL,
	/* STMT_OUTBOX_ADD_MANY: at, the rows' deltas as an array -> each
	 * row's id and deltas; a PostgreSQL group's (outbox_group_end()),
	 * never run here */
	[STMT_OUTBOX_ADD_MANY] = "SELECT 0, ?2 WHERE ?1 AND 0",
	/* STMT_OUTBOX_CUTOFF: at -- the newest row at least that old */
	[STMT_OUTBOX_CUTOFF] =
	    "SELECT coalesce(max(id), 0) FROM counter_outbox WHERE at <= ?1",
	/* STMT_OUTBOX_BATCH: after, up to, limit */
	[STMT_OUTBOX_BATCH] =
	    "SELECT id, deltas FROM counter_outbox WHERE id > ?1 AND id <= ?2 "
	    "AND deltas <> '' ORDER BY id LIMIT ?3",
	/* STMT_OUTBOX_FLOOR_RAISE: name, value -- the setting raised to
	 * value, never lowered: a drain that commits after another's of a
	 * later cutoff leaves that one's (outbox.c delete_upto()) */
	[STMT_OUTBOX_FLOOR_RAISE] =
	    "INSERT INTO settings(name, value) VALUES(?1, ?2) "
	    "ON CONFLICT(name) DO UPDATE SET value = max(settings.value, "
	    "excluded.value)",
	/* STMT_OUTBOX_CLEAR: id -- its deltas are elsewhere now; the row
	 * stays (the newest row is never deleted: see outbox.c) */
	[STMT_OUTBOX_CLEAR] =
	    "UPDATE counter_outbox SET deltas = '' WHERE id = ?1 AND deltas <> ''",
	/* STMT_OUTBOX_DONE: up to -- drained rows, but the newest of them */
	[STMT_OUTBOX_DONE] =
	    "DELETE FROM counter_outbox WHERE id < ?1",
	/* STMT_OUTBOX_QUARANTINE: id, now -- a malformed row kept aside */
	[STMT_OUTBOX_QUARANTINE] =
	    "INSERT INTO counter_outbox_bad(id, at, deltas, found_at) "
	    "SELECT id, at, deltas, ?2 FROM counter_outbox WHERE id = ?1 "
	    "ON CONFLICT DO NOTHING",

	/* Counting's statements once built beside their callers (sql.h) */
	/* STMT_COUNTER_ADD_MANY: COUNTER_ADD_ROWS of (name, key, delta) --
	 * a flush's sorted rows, 64 a statement (taken.c) */
	[STMT_COUNTER_ADD_MANY] =
	    "INSERT INTO counters(name, key, value) VALUES " ADD_ROWS64
	    " ON CONFLICT(name, key) DO UPDATE SET "
	    "value = counters.value + excluded.value",
	/* STMT_COUNTERS_CLEAR: the family kept (views: no truth rows) --
	 * before a full recount writes every other family again */
	[STMT_COUNTERS_CLEAR] =
	    "DELETE FROM counters WHERE name != ?1",
	/* STMT_RECOUNT_<FAMILY> -- key1[, key2], value of every counter of
	 * the family, from the truth rows; STMT_RECOUNT_ONE_<FAMILY>: key1[,
	 * key2] -- the value of one (the catalog: count/counters.c) */
	[STMT_RECOUNT_USER_POSTS] =
	    "SELECT user_id, COUNT(*) FROM posts WHERE " VISIBLE
	    " GROUP BY user_id",
	[STMT_RECOUNT_ONE_USER_POSTS] =
	    "SELECT COUNT(*) FROM posts WHERE user_id = ?1 AND " VISIBLE,
	[STMT_RECOUNT_USER_FOLLOWERS] =
	    "SELECT followee_id, COUNT(*) FROM follows GROUP BY followee_id",
	[STMT_RECOUNT_ONE_USER_FOLLOWERS] =
	    "SELECT COUNT(*) FROM follows WHERE followee_id = ?1",
	[STMT_RECOUNT_USER_FOLLOWING] =
	    "SELECT follower_id, COUNT(*) FROM follows GROUP BY follower_id",
	[STMT_RECOUNT_ONE_USER_FOLLOWING] =
	    "SELECT COUNT(*) FROM follows WHERE follower_id = ?1",
	[STMT_RECOUNT_USER_LIKES] =
	    "SELECT p.user_id, COUNT(*) FROM likes l JOIN posts p ON "
	    "p.id = l.post_id WHERE p.status = 1 AND p.is_deleted = 0 "
	    "GROUP BY p.user_id",
	[STMT_RECOUNT_ONE_USER_LIKES] =
	    "SELECT COUNT(*) FROM likes l JOIN posts p ON p.id = l.post_id "
	    "WHERE p.user_id = ?1 AND p.status = 1 AND p.is_deleted = 0",
	[STMT_RECOUNT_POST_LIKES] =
	    "SELECT post_id, COUNT(*) FROM likes GROUP BY post_id",
	[STMT_RECOUNT_ONE_POST_LIKES] =
	    "SELECT COUNT(*) FROM likes WHERE post_id = ?1",
	[STMT_RECOUNT_POST_COMMENTS] =
	    "SELECT post_id, COUNT(*) FROM comments WHERE is_deleted = 0 "
	    "GROUP BY post_id",
	[STMT_RECOUNT_ONE_POST_COMMENTS] =
	    "SELECT COUNT(*) FROM comments WHERE post_id = ?1 AND is_deleted = 0",
	[STMT_RECOUNT_POST_REPOSTS] =
	    "SELECT post_id, COUNT(*) FROM reposts GROUP BY post_id",
	[STMT_RECOUNT_ONE_POST_REPOSTS] =
	    "SELECT COUNT(*) FROM reposts WHERE post_id = ?1",
	[STMT_RECOUNT_TOPIC_POSTS] =
	    "SELECT topic_id, COUNT(*) FROM posts WHERE " VISIBLE
	    " GROUP BY topic_id",
	[STMT_RECOUNT_ONE_TOPIC_POSTS] =
	    "SELECT COUNT(*) FROM posts WHERE topic_id = ?1 AND " VISIBLE,
	[STMT_RECOUNT_UT_POSTS] =
	    "SELECT user_id, topic_id, COUNT(*) FROM posts WHERE " VISIBLE
	    " GROUP BY user_id, topic_id",
	[STMT_RECOUNT_ONE_UT_POSTS] =
	    "SELECT COUNT(*) FROM posts WHERE user_id = ?1 AND topic_id = ?2 "
	    "AND " VISIBLE,
	[STMT_RECOUNT_UT_RATING] =
	    "SELECT p.user_id, p.topic_id, COUNT(*) FROM likes l JOIN posts p "
	    "ON p.id = l.post_id WHERE p.status = 1 AND p.is_deleted = 0 "
	    "GROUP BY p.user_id, p.topic_id",
	[STMT_RECOUNT_ONE_UT_RATING] =
	    "SELECT COUNT(*) FROM likes l JOIN posts p ON p.id = l.post_id "
	    "WHERE p.user_id = ?1 AND p.topic_id = ?2 AND p.status = 1 AND "
	    "p.is_deleted = 0",
	[STMT_RECOUNT_USER_UNREAD] =
	    "SELECT user_id, COUNT(*) FROM notifications WHERE is_read = 0 "
	    "GROUP BY user_id",
	[STMT_RECOUNT_ONE_USER_UNREAD] =
	    "SELECT COUNT(*) FROM notifications WHERE user_id = ?1 AND "
	    "is_read = 0",

	/* STMT_VIEWER_MARKS: viewer, json post ids -- (post, 1) liked,
	 * (post, 2) reposted: one key lookup per post and table */
	[STMT_VIEWER_MARKS] =
	    "SELECT post_id, 1 FROM likes WHERE user_id = ?1 AND post_id IN "
	    "(SELECT value FROM json_each(?2)) UNION ALL "
	    "SELECT post_id, 2 FROM reposts WHERE user_id = ?1 AND post_id IN "
	    "(SELECT value FROM json_each(?2))",
	/* STMT_FOLLOWING_AMONG: follower, json user ids -- those followed */
	[STMT_FOLLOWING_AMONG] =
	    "SELECT followee_id FROM follows WHERE follower_id = ?1 AND "
	    "followee_id IN (SELECT value FROM json_each(?2))",
	/* STMT_NAME_WORD_PUT: word (folded), user -- the people search */
	[STMT_NAME_WORD_PUT] =
	    "INSERT INTO name_words(word, user_id) VALUES(?1, ?2) "
	    "ON CONFLICT DO NOTHING",
	/* STMT_PEOPLE_FIND: from word, below, limit, after user -- a range
	 * of the index read in key order, resumed after (word, user) */
	[STMT_PEOPLE_FIND] =
	    "SELECT word, user_id FROM name_words "
	    "WHERE (word, user_id) > (?1, ?4) AND word < ?2 "
	    "ORDER BY word, user_id LIMIT ?3",
	/* STMT_TOPICS_ALL: limit, newest -- the limit busiest by their
	 * durable post counts, and the newest few (a first post's count may
	 * not be flushed yet): find.h */
	[STMT_TOPICS_ALL] =
	    "SELECT id, slug FROM topics WHERE id IN (SELECT CAST(key AS "
	    "INTEGER) FROM counters WHERE name = 'topic_posts' AND value > 0 "
	    "ORDER BY value DESC LIMIT ?1) OR id IN (SELECT id FROM topics "
	    "ORDER BY id DESC LIMIT ?2)",
	/* STMT_TOPIC_BY_ID: id */
	[STMT_TOPIC_BY_ID] =
	    "SELECT slug FROM topics WHERE id = ?1",
	/* STMT_TOPIC_PUBLIC: topic -- 1 when a visible post is in it */
	[STMT_TOPIC_PUBLIC] =
	    "SELECT EXISTS (SELECT 1 FROM posts INDEXED BY posts_topic_visible "
	    "WHERE topic_id = ?1 AND status = 1 AND is_deleted = 0)",
	/* STMT_USER_SET_PWHASH: login, pwhash -> the user's id */
	[STMT_USER_SET_PWHASH] =
	    "UPDATE users SET pwhash = ?2 WHERE login = ?1 RETURNING id",
	/* STMT_SESSIONS_OF_USER_DELETE: user */
	[STMT_SESSIONS_OF_USER_DELETE] =
	    "DELETE FROM sessions WHERE user_id = ?1",
	/* STMT_LOGIN_FAIL_GET: login -- the oldest failure kept, how many
	 * are kept, and their times (account.h; "" in a row from before) */
	[STMT_LOGIN_FAIL_GET] =
	    "SELECT since, failures, times FROM login_failures WHERE login = ?1",
	/* STMT_LOGIN_FAIL_NEW: login, now, times -- an account's first failure
	 * kept (a login nobody has is not counted: signup tells who exists
	 * anyway); nothing when the row is there */
	[STMT_LOGIN_FAIL_NEW] =
	    "INSERT INTO login_failures(login, since, failures, times) "
	    "SELECT ?1, ?2, 1, ?3 WHERE EXISTS (SELECT 1 FROM users WHERE login = ?1) "
	    "ON CONFLICT(login) DO NOTHING",
	/* STMT_LOGIN_FAIL_SET: login, since, failures, times, and the three as
	 * they were read -- only if no one changed them since */
	[STMT_LOGIN_FAIL_SET] =
	    "UPDATE login_failures SET since = ?2, failures = ?3, times = ?4 "
	    "WHERE login = ?1 AND since = ?5 AND failures = ?6 AND times = ?7",
	/* STMT_LOGIN_FAIL_CLEAR: login */
	[STMT_LOGIN_FAIL_CLEAR] =
	    "DELETE FROM login_failures WHERE login = ?1",
	/* STMT_SEED_NOTE_MAX -- the newest notification before a seed */
	[STMT_SEED_NOTE_MAX] =
	    "SELECT coalesce(max(id), 0) FROM notifications",
	/* STMT_SEED_NOTES_READ: after id, before ms -- a seed's old ones read */
	[STMT_SEED_NOTES_READ] =
	    "UPDATE notifications SET is_read = 1 WHERE id > ?1 "
	    "AND created_at < ?2",
	/* STMT_SEED_GROUPS_UNREAD: after id -- the groups of a seed's
	 * notifications, their unread counted again after the above */
	[STMT_SEED_GROUPS_UNREAD] =
	    "UPDATE note_groups SET unread = (SELECT COUNT(*) FROM "
	    "notifications n WHERE n.group_id = note_groups.id AND "
	    "n.is_read = 0) WHERE id IN (SELECT group_id FROM notifications "
	    "WHERE id > ?1)",
	/* STMT_LEASE_TAKE: owner, now, ms -- a row back when owner holds
	 * the lease now: taken free or expired, or renewed */
	[STMT_LEASE_TAKE] =
	    "INSERT INTO worker_lease(id, owner, until) VALUES(1, ?1, ?2 + ?3) "
	    "ON CONFLICT(id) DO UPDATE SET owner = excluded.owner, "
	    "until = excluded.until WHERE worker_lease.owner = excluded.owner "
	    "OR worker_lease.until < ?2 RETURNING owner",
	/* STMT_LEASE_DROP: owner */
	[STMT_LEASE_DROP] =
	    "DELETE FROM worker_lease WHERE owner = ?1",
	/* STMT_LIKE_NOTE_OF: post, user -> the like's notification id */
	[STMT_LIKE_NOTE_OF] =
	    "SELECT note_id FROM likes WHERE post_id = ?1 AND user_id = ?2",
	/* STMT_NOTE_READ_OF: as STMT_NOTE_REMOVE_ID -> its is_read, group */
	[STMT_NOTE_READ_OF] =
	    "SELECT is_read, group_id FROM notifications " NOTE_BY_ID_SQL("IS"),
	/* STMT_NOTE_GROUP_OPEN: user, kind, post, since -> the group a new
	 * notification joins: begun after since (social/notify.h) */
	[STMT_NOTE_GROUP_OPEN] =
	    "SELECT id FROM note_groups WHERE user_id = ?1 AND kind = ?2 AND "
	    "post_id IS ?3 AND first_at > ?4 ORDER BY first_at DESC LIMIT 1",
	/* STMT_NOTE_GROUP_NEW: user, kind, post, at -> its id (one unread) */
	[STMT_NOTE_GROUP_NEW] = NOTE_GROUP_NEW_SQL,
	/* STMT_NOTE_GROUP_ADD: id, size delta, unread delta, at (0: none) */
	[STMT_NOTE_GROUP_ADD] =
	    "UPDATE note_groups SET size = size + ?2, unread = unread + ?3, "
	    "last_at = max(last_at, ?4) WHERE id = ?1",
	/* STMT_NOTE_GROUP_LEFT: id, size delta, unread delta -- members gone */
	[STMT_NOTE_GROUP_LEFT] =
	    "UPDATE note_groups SET size = size + ?2, unread = unread + ?3, "
	    GROUP_LEFT_SET("?1") " WHERE id = ?1",
	/* STMT_NOTE_GROUP_DROP_EMPTY: id -- a group whose last one went */
	[STMT_NOTE_GROUP_DROP_EMPTY] =
	    "DELETE FROM note_groups WHERE id = ?1 AND "
	    NOTE_GROUP_EMPTY("?1"),
	/* STMT_NOTE_GROUP_OF: notification id, user -> its group */
	[STMT_NOTE_GROUP_OF] =
	    "SELECT group_id FROM notifications WHERE id = ?1 AND user_id = ?2",
	/* STMT_NOTE_GROUP_DELETE: group, user */
	[STMT_NOTE_GROUP_DELETE] =
	    "DELETE FROM note_groups WHERE id = ?1 AND user_id = ?2",
	/* STMT_NOTE_GROUP_MEMBERS: group, n -- its newest n, with who */
	[STMT_NOTE_GROUP_MEMBERS] =
	    "SELECT n.id, n.created_at, u.login, u.name FROM notifications n "
	    "JOIN users u ON u.id = n.actor_id WHERE n.group_id = ?1 "
	    "ORDER BY n.id DESC LIMIT ?2",
	/* STMT_USER_SET_NAME: id, name -> the login */
	[STMT_USER_SET_NAME] =
	    "UPDATE users SET name = ?2 WHERE id = ?1 RETURNING login",
	/* STMT_NAME_WORDS_DROP: user -- the people search's words of a name
	 * about to change */
	[STMT_NAME_WORDS_DROP] =
	    "DELETE FROM name_words WHERE user_id = ?1",
	/* STMT_USER_SET_PWHASH_ID: id, hash, the hash replaced -- only while
	 * it is still the one the current password matched */
	[STMT_USER_SET_PWHASH_ID] =
	    "UPDATE users SET pwhash = ?2 WHERE id = ?1 AND pwhash = ?3",
	/* STMT_SESSIONS_OTHERS_DELETE: user, the hash of the one kept */
	[STMT_SESSIONS_OTHERS_DELETE] =
	    "DELETE FROM sessions WHERE user_id = ?1 AND hash <> ?2",
	/* STMT_REPOST_DELETE: post, user -- an unrepost */
	[STMT_REPOST_DELETE] =
	    "DELETE FROM reposts WHERE post_id = ?1 AND user_id = ?2",
	/* STMT_HOME_SCORES: user, json post ids -- each post's place in the
	 * user's feed, -1 none (an unfollow puts them right) */
	[STMT_HOME_SCORES] =
	    "SELECT j.value, " HOME_SCORE("max", "?1", "j.value")
	    " FROM json_each(?2) j",
	/* STMT_HOME_SCORES_OF_POST: post, json user ids -- the post's place
	 * in each user's feed, -1 none (an unrepost's fan-out) */
	[STMT_HOME_SCORES_OF_POST] =
	    "SELECT j.value, " HOME_SCORE("max", "j.value", "?1")
	    " FROM json_each(?2) j",
	/* STMT_REPOSTS_OF_USER: user, limit -- visible posts they reposted,
	 * newest repost first (a follow brings them into the feed) */
	[STMT_REPOSTS_OF_USER] =
	    "SELECT r.post_id, r.created_at FROM reposts r JOIN posts p ON "
	    "p.id = r.post_id WHERE r.user_id = ?1 AND p.status = 1 AND "
	    "p.is_deleted = 0 ORDER BY r.created_at DESC LIMIT ?2",
	/* STMT_OUTBOX_ID_TAKEN -- the newest outbox id handed out.  The
	 * three statements of outbox_horizon() (outbox.h): SQLite's ids
	 * commit in their order, so every id is below the horizon and no
	 * transaction is waited for; PostgreSQL's are in sql_pg.c. */
	[STMT_OUTBOX_ID_TAKEN] = "SELECT 9223372036854775807",
	/* STMT_TXN_OPEN -- tally's write transactions running now, as a
	 * list of "process:transaction id" (NULL: none) */
	[STMT_TXN_OPEN] = "SELECT NULL",
	/* STMT_TXN_STILL: such a list -- how many of them still run (never
	 * run here, with no list; its one parameter as PostgreSQL's) */
	[STMT_TXN_STILL] = "SELECT 0 * length(coalesce(?1, ''))",
	/* STMT_OUTBOX_IDS_BETWEEN: after, up to, limit -- the ids a read
	 * snapshot sees above the horizon (settle.c) */
	[STMT_OUTBOX_IDS_BETWEEN] =
	    "SELECT id FROM counter_outbox WHERE id > ?1 AND id <= ?2 "
	    "ORDER BY id LIMIT ?3",
	/* STMT_POST_GET_LOCK, STMT_POST_HEAD_LOCK, STMT_COMMENT_GET_LOCK:
	 * id -- in a write transaction, what it will change on what it
	 * reads (sql.h) */
	[STMT_POST_GET_LOCK] = POST_GET_SQL,
	[STMT_POST_HEAD_LOCK] = POST_HEAD_SQL,
	[STMT_COMMENT_GET_LOCK] = COMMENT_GET_SQL,
	/* STMT_LOCK_KEY: name -- a lock of one name until the transaction
	 * ends (dbq_lock_key()); SQLite's writer is alone already */
	[STMT_LOCK_KEY] = "SELECT ?1 WHERE 0",
	/* STMT_LOCK_KEY_SHARED: name -- the same, shared with others that
	 * take it shared */
	[STMT_LOCK_KEY_SHARED] = "SELECT ?1 WHERE 0",
	/* STMT_LIKE_COUNT_LOCK, STMT_NOTE_GROUP_LOCK: first id, last id --
	 * a repair's rows locked before its recount (reconcile.c); a
	 * group's own, before its delete (notify.c) */
	[STMT_LIKE_COUNT_LOCK] = "SELECT ?1, ?2 WHERE 0",
	[STMT_NOTE_GROUP_LOCK] = "SELECT ?1, ?2 WHERE 0",
	/* STMT_NOTE_GROUP_POSTS_LOCK: first id, last id -- the posts of
	 * those groups, locked before the groups as every writer takes a
	 * post's row before its group (reconcile.c) */
	[STMT_NOTE_GROUP_POSTS_LOCK] = "SELECT ?1, ?2 WHERE 0",
	/* STMT_NOTE_POSTS_LOCK: user, up to id -> the posts of the user's
	 * unread notifications; on PostgreSQL their rows held before a
	 * read-all touches one (notify.c); SQLite's writer is alone
	 * already */
	[STMT_NOTE_POSTS_LOCK] = "SELECT DISTINCT post_id FROM notifications "
	    "WHERE user_id = ?1 AND is_read = 0 AND id <= ?2 "
	    "AND post_id IS NOT NULL",
	/* STMT_NOTE_GROUP_POST_LOCK: group, user -- the same for a read or
	 * a delete of one group: its post's row */
	[STMT_NOTE_GROUP_POST_LOCK] = "SELECT ?1, ?2 WHERE 0",
	/* STMT_LIKE_ON_SERVER: post, user, now, a group's oldest first_at
	 * -> visible, author, topic, changed, note; STMT_UNLIKE_ON_SERVER:
	 * post, user -> the same.  A like's or an unlike's steps in one
	 * call, where the engine runs them as a function of its own
	 * (dbq_server_actions(): PostgreSQL, schema_pg.c); on SQLite, in
	 * process, the caller runs the steps, and these never run. */
	[STMT_LIKE_ON_SERVER] = "SELECT ?1, ?2, ?3, ?4, 0 WHERE 0",
	[STMT_UNLIKE_ON_SERVER] = "SELECT ?1, ?2, 0, 0, 0 WHERE 0",
	/* STMT_AFTER_LOAD: after a bulk load (seed.c), the tables made as
	 * a live site's are: PostgreSQL's planner statistics gathered, and
	 * its rows marked visible to all (which index-only scans need), or
	 * they wait for the autovacuum, a minute or more; SQLite's plans
	 * are fixed here (INDEXED BY), and it runs nothing */
	[STMT_AFTER_LOAD] = "SELECT 0 WHERE 0",
	/* STMT_POST_REPOSTED: post -- a row when anyone reposted it */
	[STMT_POST_REPOSTED] =
	    "SELECT 1 FROM reposts WHERE post_id = ?1 LIMIT 1",
	/* STMT_REPOSTERS_OF_POST: post, after user, limit -- who reposted
	 * it, by id (a withdrawal's fan-out to their followers) */
	[STMT_REPOSTERS_OF_POST] =
	    "SELECT user_id FROM reposts WHERE post_id = ?1 AND user_id > ?2 "
	    "ORDER BY user_id LIMIT ?3",
	/* STMT_REPOST_AT: post, user -- when the repost was made */
	[STMT_REPOST_AT] =
	    "SELECT created_at FROM reposts WHERE post_id = ?1 AND user_id = ?2",
	/* STMT_NOTE_GROUP_MAX_ID */
	[STMT_NOTE_GROUP_MAX_ID] =
	    "SELECT coalesce(max(id), 0) FROM note_groups",
	/* STMT_NOTE_GROUP_DRIFT: first id, last id -- groups whose stored
	 * size or unread differs from their rows, the largest error */
	[STMT_NOTE_GROUP_DRIFT] =
	    "SELECT COUNT(*), coalesce(max(max(abs(size - rs), abs(unread - ru))), 0) "
	    "FROM (SELECT size, unread, (SELECT COUNT(*) FROM notifications n "
	    "WHERE n.group_id = g.id) AS rs, (SELECT COUNT(*) FROM "
	    "notifications n WHERE n.group_id = g.id AND n.is_read = 0) AS ru "
	    "FROM note_groups g WHERE g.id BETWEEN ?1 AND ?2) AS d "
	    "WHERE size <> rs OR unread <> ru",
	/* STMT_NOTE_GROUP_FIX: first id, last id -- one chunk, short txn */
	[STMT_NOTE_GROUP_FIX] =
	    "UPDATE note_groups SET size = (SELECT COUNT(*) FROM notifications n "
	    "WHERE n.group_id = note_groups.id), unread = (SELECT COUNT(*) FROM "
	    "notifications n WHERE n.group_id = note_groups.id AND "
	    "n.is_read = 0) WHERE id BETWEEN ?1 AND ?2 AND (size <> (SELECT "
	    "COUNT(*) FROM notifications n WHERE n.group_id = note_groups.id) "
	    "OR unread <> (SELECT COUNT(*) FROM notifications n WHERE "
	    "n.group_id = note_groups.id AND n.is_read = 0))",
};

/* Every family's recount (the catalog's, count/counters.c), the
 * counters of a family, every post's author: reconciliation reads each
 * whole, and a leaderboard's rebuild the counters of its family. */
const unsigned char sql_stream[STMT__MAX] = {
	[STMT_RECOUNT_USER_POSTS] = 1,
	[STMT_RECOUNT_USER_FOLLOWERS] = 1,
	[STMT_RECOUNT_USER_FOLLOWING] = 1,
	[STMT_RECOUNT_USER_LIKES] = 1,
	[STMT_RECOUNT_POST_LIKES] = 1,
	[STMT_RECOUNT_POST_COMMENTS] = 1,
	[STMT_RECOUNT_POST_REPOSTS] = 1,
	[STMT_RECOUNT_TOPIC_POSTS] = 1,
	[STMT_RECOUNT_UT_POSTS] = 1,
	[STMT_RECOUNT_UT_RATING] = 1,
	[STMT_RECOUNT_USER_UNREAD] = 1,
	[STMT_COUNTERS_OF_FAMILY] = 1,
	[STMT_POST_OWNERS] = 1,
};
