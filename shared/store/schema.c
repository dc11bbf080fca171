/* schema.c -- the schema, one migration per step of PRAGMA user_version.
 * Migrations are append-only: a released step is never edited, a change
 * is a new step.  db_migrate() applies them in one IMMEDIATE transaction.
 */
#include "store/schema.h"

const char *const schema_migrations[] = {
	/* 1: accounts */
	"CREATE TABLE users ("
	"  id INTEGER PRIMARY KEY,"
	"  login TEXT NOT NULL UNIQUE COLLATE NOCASE,"
	"  name TEXT NOT NULL,"
	"  pwhash TEXT NOT NULL,"
	"  is_admin INTEGER NOT NULL DEFAULT 0,"
	"  created_at INTEGER NOT NULL);"
	"CREATE TABLE sessions ("
	"  hash BLOB PRIMARY KEY,"
	"  user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,"
	"  csrf TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL);"
	"CREATE INDEX sessions_expires ON sessions(expires_at);"
	"CREATE INDEX sessions_user ON sessions(user_id);"
	"CREATE TABLE settings ("
	"  name TEXT PRIMARY KEY,"
	"  value INTEGER NOT NULL);",
	/* 2: the social core -- topics, posts, follows, likes, reposts, comments */
	"CREATE TABLE topics ("
	"  id INTEGER PRIMARY KEY,"
	"  slug TEXT NOT NULL UNIQUE,"
	"  created_at INTEGER NOT NULL);"
	"INSERT INTO topics(slug, created_at) VALUES('general', 0);"
	"CREATE TABLE posts ("
	"  id INTEGER PRIMARY KEY,"
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  topic_id INTEGER NOT NULL REFERENCES topics(id),"
	"  body TEXT NOT NULL,"
	"  status INTEGER NOT NULL DEFAULT 0 CHECK (status IN (0, 1)),"
	"  is_deleted INTEGER NOT NULL DEFAULT 0 CHECK (is_deleted IN (0, 1)),"
	"  created_at INTEGER NOT NULL,"
	"  published_at INTEGER,"
	"  updated_at INTEGER NOT NULL);"
	"CREATE INDEX posts_user_visible ON posts(user_id, published_at, id)"
	"  WHERE status = 1 AND is_deleted = 0;"
	"CREATE INDEX posts_topic_visible ON posts(topic_id, published_at, id)"
	"  WHERE status = 1 AND is_deleted = 0;"
	"CREATE INDEX posts_user ON posts(user_id, id);"
	"CREATE TABLE follows ("
	"  follower_id INTEGER NOT NULL REFERENCES users(id),"
	"  followee_id INTEGER NOT NULL REFERENCES users(id),"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (follower_id, followee_id)) WITHOUT ROWID;"
	"CREATE INDEX follows_followee ON follows(followee_id, created_at, follower_id);"
	"CREATE INDEX follows_follower ON follows(follower_id, created_at, followee_id);"
	"CREATE TABLE likes ("
	"  post_id INTEGER NOT NULL REFERENCES posts(id),"
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (post_id, user_id)) WITHOUT ROWID;"
	"CREATE INDEX likes_user ON likes(user_id, post_id);"
	"CREATE TABLE reposts ("
	"  post_id INTEGER NOT NULL REFERENCES posts(id),"
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  created_at INTEGER NOT NULL,"
	"  PRIMARY KEY (post_id, user_id)) WITHOUT ROWID;"
	"CREATE INDEX reposts_user ON reposts(user_id, post_id);"
	"CREATE TABLE comments ("
	"  id INTEGER PRIMARY KEY,"
	"  post_id INTEGER NOT NULL REFERENCES posts(id),"
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  body TEXT NOT NULL,"
	"  is_deleted INTEGER NOT NULL DEFAULT 0 CHECK (is_deleted IN (0, 1)),"
	"  created_at INTEGER NOT NULL);"
	"CREATE INDEX comments_post ON comments(post_id, id);",
	/* 3: counters -- the durable snapshot, the applied flush batches,
	 * and each post's like count (state the formula reads) */
	"CREATE TABLE counters ("
	"  name TEXT NOT NULL,"
	"  key TEXT NOT NULL,"
	"  value INTEGER NOT NULL,"
	"  PRIMARY KEY (name, key)) WITHOUT ROWID;"
	"CREATE TABLE flushes ("
	"  id INTEGER PRIMARY KEY,"
	"  applied_at INTEGER NOT NULL,"
	"  counters INTEGER NOT NULL,"
	"  total INTEGER NOT NULL);"
	"ALTER TABLE posts ADD COLUMN like_count INTEGER NOT NULL DEFAULT 0;"
	"UPDATE posts SET like_count = "
	"  (SELECT COUNT(*) FROM likes WHERE post_id = posts.id);",
	/* 4: notifications, system notices, read markers */
	"CREATE TABLE notifications ("
	"  id INTEGER PRIMARY KEY,"
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  actor_id INTEGER NOT NULL REFERENCES users(id),"
	"  kind TEXT NOT NULL CHECK (kind IN ('like', 'comment', 'repost', 'follow')),"
	"  post_id INTEGER,"
	"  comment_id INTEGER,"
	"  is_read INTEGER NOT NULL DEFAULT 0 CHECK (is_read IN (0, 1)),"
	"  created_at INTEGER NOT NULL);"
	"CREATE INDEX notifications_user ON notifications(user_id, id);"
	"CREATE INDEX notifications_unread ON notifications(user_id) WHERE is_read = 0;"
	"CREATE INDEX notifications_source ON notifications(actor_id, kind, post_id, comment_id);"
	"CREATE TABLE notices ("
	"  id INTEGER PRIMARY KEY,"
	"  title TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  created_at INTEGER NOT NULL);"
	"CREATE TABLE markers ("
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  kind TEXT NOT NULL,"
	"  key INTEGER NOT NULL DEFAULT 0,"
	"  value INTEGER NOT NULL,"
	"  PRIMARY KEY (user_id, kind, key)) WITHOUT ROWID;",
	/* 5: reconciliation runs and their drift reports */
	"CREATE TABLE reconcile_runs ("
	"  id INTEGER PRIMARY KEY,"
	"  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),"
	"  dry_run INTEGER NOT NULL DEFAULT 0,"
	"  reason TEXT NOT NULL,"
	"  owner INTEGER NOT NULL DEFAULT 0,"
	"  progress INTEGER NOT NULL DEFAULT 0,"
	"  checkpoint INTEGER NOT NULL DEFAULT 0,"
	"  report TEXT NOT NULL DEFAULT '[]',"
	"  error TEXT,"
	"  created_at INTEGER NOT NULL,"
	"  started_at INTEGER,"
	"  finished_at INTEGER);"
	"CREATE INDEX reconcile_runs_state ON reconcile_runs(state);",
	/* 6: counter deltas that could not reach Redis (Redis down) */
	"CREATE TABLE counter_backlog ("
	"  name TEXT NOT NULL,"
	"  key TEXT NOT NULL,"
	"  delta INTEGER NOT NULL,"
	"  PRIMARY KEY (name, key)) WITHOUT ROWID;",
	/* 7: one index fewer to write per notification (read-all and the
	 * recount do well with notifications_user) */
	"DROP INDEX notifications_unread;",
	/* 8: nothing looks likes or reposts up by user (every query goes by
	 * post, or by the (post, user) key), and no user row is ever deleted
	 * (the one thing a foreign key would want them for): a like or
	 * unlike writes one page fewer */
	"DROP INDEX likes_user;"
	"DROP INDEX reposts_user;",
	/* 9: a like remembers its notification (likes.note_id), so unlike
	 * withdraws it by id and like notifications leave notifications_source
	 * (now partial): a like or unlike writes one page fewer.  The backfill
	 * runs while the full index still exists. */
	"ALTER TABLE likes ADD COLUMN note_id INTEGER;"
	"UPDATE likes SET note_id = (SELECT MAX(n.id) FROM notifications n "
	"  WHERE n.actor_id = likes.user_id AND n.kind = 'like' "
	"  AND n.post_id = likes.post_id AND n.comment_id IS NULL);"
	"DROP INDEX notifications_source;"
	"CREATE INDEX notifications_source ON notifications(actor_id, kind, "
	"  post_id, comment_id) WHERE kind <> 'like';",
	/* 10: the counter outbox -- an action's deltas, written in its own
	 * transaction, so a process killed between the commit and Redis
	 * leaves them for the worker to apply (outbox.h) */
	"CREATE TABLE counter_outbox ("
	"  id INTEGER PRIMARY KEY,"
	"  at INTEGER NOT NULL,"
	"  deltas TEXT NOT NULL);",
	/* 11: the people search -- the login and each word of the name,
	 * ASCII letters folded to lower case (base/words.h), one row per
	 * (word, user): a prefix is a range of this key, never a scan.  The
	 * backfill splits names on spaces as words_fold() does. */
	"CREATE TABLE name_words ("
	"  word TEXT NOT NULL,"
	"  user_id INTEGER NOT NULL,"
	"  PRIMARY KEY (word, user_id)) WITHOUT ROWID;"
	"INSERT OR IGNORE INTO name_words(word, user_id) "
	"  SELECT lower(login), id FROM users;"
	"INSERT OR IGNORE INTO name_words(word, user_id) "
	"  WITH RECURSIVE w(uid, word, rest) AS ("
	"    SELECT id, '', lower(name) || ' ' FROM users"
	"    UNION ALL SELECT uid, substr(rest, 1, instr(rest, ' ') - 1),"
	"      substr(rest, instr(rest, ' ') + 1) FROM w WHERE rest <> '')"
	"  SELECT word, uid FROM w WHERE word <> '';",
	/* 12: failed logins per account and window (account.h), in SQLite
	 * so a restart does not reset a throttle */
	"CREATE TABLE login_failures ("
	"  login TEXT PRIMARY KEY,"
	"  since INTEGER NOT NULL,"
	"  failures INTEGER NOT NULL) WITHOUT ROWID;",
	/* 13: which worker runs the jobs (store/lease.h): one row, its owner
	 * and until when (ms) */
	"CREATE TABLE worker_lease ("
	"  id INTEGER PRIMARY KEY CHECK (id = 1),"
	"  owner TEXT NOT NULL,"
	"  until INTEGER NOT NULL);",
	/* 14: a backlog row's version, bumped by every delta added to it:
	 * a settle deletes the row only if nothing was added since it read
	 * it (comparing the value let a later delta of the same size go) */
	"ALTER TABLE counter_backlog ADD COLUMN ver INTEGER NOT NULL DEFAULT 0;",
	/* 15: outbox rows whose deltas could not be read, kept aside by the
	 * drain instead of deleted unread (outbox.c) */
	"CREATE TABLE counter_outbox_bad ("
	"  id INTEGER PRIMARY KEY,"
	"  at INTEGER NOT NULL,"
	"  deltas TEXT NOT NULL,"
	"  found_at INTEGER NOT NULL);",
	/* 16: notifications in groups (social/notify.h): likes of one post,
	 * reposts of one post, follows, within 12 hours of the group's
	 * first; each group keeps its size and unread count.  Those before
	 * are groups of one.  The owner's unread ones are indexed again: a
	 * group read and a read-all touch as many rows as are unread, not
	 * every notification the user has. */
	"CREATE TABLE note_groups ("
	"  id INTEGER PRIMARY KEY,"
	"  user_id INTEGER NOT NULL REFERENCES users(id),"
	"  kind TEXT NOT NULL,"
	"  post_id INTEGER,"
	"  first_at INTEGER NOT NULL,"
	"  last_at INTEGER NOT NULL,"
	"  size INTEGER NOT NULL,"
	"  unread INTEGER NOT NULL);"
	"ALTER TABLE notifications ADD COLUMN group_id INTEGER;"
	"INSERT INTO note_groups(id, user_id, kind, post_id, first_at, last_at,"
	"  size, unread) SELECT id, user_id, kind, post_id, created_at,"
	"  created_at, 1, 1 - is_read FROM notifications;"
	"UPDATE notifications SET group_id = id;"
	"CREATE INDEX note_groups_list ON note_groups(user_id, last_at);"
	"CREATE INDEX note_groups_open ON note_groups(user_id, kind, post_id,"
	"  first_at);"
	"CREATE INDEX notifications_group ON notifications(group_id, id);"
	"CREATE INDEX notifications_unread ON notifications(user_id, id)"
	"  WHERE is_read = 0;",
	/* 17: reposts reach the reposter's followers' feeds (sql.h): a feed
	 * rebuilt from SQLite, and a follow, read a user's reposts newest
	 * first.  One index page more per repost and unrepost. */
	"CREATE INDEX reposts_user_time ON reposts(user_id, created_at);",
	/* 18: a run's owner beyond one machine (count/runs.h): its name
	 * (host, pid, start: app.h's owner) and until when (ms) its lease
	 * holds; a run whose lease lapsed is another process's to take.
	 * owner stays, the pid, for the pages. */
	"ALTER TABLE reconcile_runs ADD COLUMN owner_name TEXT NOT NULL "
	"  DEFAULT '';"
	"ALTER TABLE reconcile_runs ADD COLUMN lease_until INTEGER NOT NULL "
	"  DEFAULT 0;",
	/* 19: a feed names, for each post, the newest repost by someone the
	 * reader follows (sql.h: HOME_REPOSTED_BY).  In the order of this
	 * index that is the first such row; by the primary key SQLite
	 * sorted each post's reposts in a temporary B-tree, made and
	 * cleared for every post of every feed even when it had none: a
	 * sixth of the feed statement's time (docs/BENCHMARKS.md).  One
	 * index page more per repost and unrepost. */
	"CREATE INDEX reposts_post_time ON reposts(post_id, created_at, "
	"  user_id);",
	/* 20: an account's failed logins, each one's time (account.h): the
	 * lock is on 10 within any 15 minutes, not within a window that
	 * began at the first and started over when it ended (9 failures at
	 * its end and 10 after it were 19 guesses in a few seconds) */
	"ALTER TABLE login_failures ADD COLUMN times TEXT NOT NULL DEFAULT '';",
	/* 21: backlog rows no counter of this build can take (a family it
	 * does not know, a key it cannot read), kept aside by the settle
	 * instead of waiting for ever: they kept the backlog from ever
	 * being empty (a flush's exit 1, Redis taken as refusing), and 500
	 * of them hid every row behind (count/backlog.c) */
	"CREATE TABLE counter_backlog_bad ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL,"
	"  key TEXT NOT NULL,"
	"  delta INTEGER NOT NULL,"
	"  ver INTEGER NOT NULL,"
	"  found_at INTEGER NOT NULL);",
	/* 22: the people search folds every letter, not ASCII's alone
	 * (base/words.h): the words written before are folded again
	 * (store/refold.h), a row the fold makes another's dropped */
	"UPDATE OR REPLACE name_words SET word = tally_fold(word) "
	"  WHERE word <> tally_fold(word);",
};

const int schema_version =
    (int)(sizeof(schema_migrations) / sizeof(schema_migrations[0]));
