/* db_int.h -- what db.c and ckpt.c share (nothing outside them). */
#ifndef TALLY_DB_INT_H
#define TALLY_DB_INT_H

struct db;

/* The writers' lock (db.h), an flock() on "<database>-wlock": 0 once
 * held (or when there is no lock file: SQLite's own lock still holds),
 * -1 when DB_BUSY_MS passed (logged).  Releasing it records how long it
 * was waited for and held (/metrics). */
int	db_wlock(struct db *);
void	db_wunlock(struct db *);

#endif
