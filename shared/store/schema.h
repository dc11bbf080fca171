/* schema.h -- the SQLite schema as numbered migrations. */
#ifndef TALLY_SCHEMA_H
#define TALLY_SCHEMA_H

/* Migration n (1-based) brings user_version from n-1 to n. */
extern const char *const schema_migrations[];
extern const int schema_version;

#endif
