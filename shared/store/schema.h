/* schema.h -- the schema as numbered migrations. */
#ifndef TALLY_SCHEMA_H
#define TALLY_SCHEMA_H

/* Migration n (1-based) brings user_version from n-1 to n. */
extern const char *const schema_migrations[];
extern const int schema_version;

/* The same schema on PostgreSQL (pg.c): its own steps, recorded in the
 * table tally_schema. */
extern const char *const schema_pg_migrations[];
extern const int schema_pg_version;

#endif
