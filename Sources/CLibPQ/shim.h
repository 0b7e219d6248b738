#include <libpq-fe.h>

/*
 * How libpq keeps a result's rows in memory, read in place by SkerryPostgres (PostgresResult+Cells.swift)
 * instead of three calls per cell (PQgetisnull, PQgetlength, PQgetvalue).
 *
 * These mirror the start of `struct pg_result` and `PGresAttValue` in libpq's internal header
 * (libpq-int.h), the same in PostgreSQL 15 and 18 (and long before). They are not libpq's public interface, so the
 * Swift side uses them only after checking, once per process, that the loaded libpq agrees with
 * them on a result it built through the public API (PQmakeEmptyPGresult, PQsetResultAttrs,
 * PQsetvalue); if it does not, every cell is read through the public calls.
 */

/* One cell of a row: its length in bytes (-1 for NULL) and its bytes (followed by a 0 byte; for
   NULL, an empty string: never a null pointer). */
typedef struct SkerryPQCell {
    int len;
    char *value;
} SkerryPQCell;

/* The first fields of a result: its row and column counts, its column descriptions, and its rows
   (each an array of `numAttributes` cells). */
typedef struct SkerryPQResultHead {
    int ntups;
    int numAttributes;
    PGresAttDesc *attDescs;
    SkerryPQCell **tuples;
} SkerryPQResultHead;
