#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro that casts -1 to a function pointer, which Swift cannot import.
/// Binding with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type skerry_sqlite_transient(void) {
    return SQLITE_TRANSIENT;
}

#if defined(__GLIBC__)
#include <malloc.h>
/// Gives the heap's free memory back to the system (glibc keeps freed pages resident otherwise).
static inline void skerry_release_free_memory(void) {
    malloc_trim(0);
}
#else
static inline void skerry_release_free_memory(void) {}
#endif
