/* A function's address from an object pointer: dlsym and the driver entry-point lookup return one as a void *. */
#ifndef TPG_FN_PTR_H
#define TPG_FN_PTR_H

#include <string.h>

typedef void (*tpg_fn)(void);
#ifdef __cplusplus /* a C++ caller of the runtime's headers (none includes it yet) */
static_assert(sizeof(tpg_fn) == sizeof(void *), "function and object pointers have one size (POSIX)");
#else
_Static_assert(sizeof(tpg_fn) == sizeof(void *), "function and object pointers have one size (POSIX)");
#endif

/* ISO C converts between object and function pointers only through their bytes (-Wpedantic refuses the cast, which a
 * vendoring project's pedantic CFLAGS make an error); POSIX guarantees that a void * holds a function's address.
 * The caller casts the result to the function's own pointer type (a conversion between function pointers). */
static inline tpg_fn tpg__fn(void *p) {
    tpg_fn f;
    memcpy(&f, &p, sizeof f);
    return f;
}

#endif /* TPG_FN_PTR_H */
