/* nomem.h - an allocator that fails on demand, for the out-of-memory tests.

   Include it in one test program (glibc only: the real work is done by
   __libc_malloc and friends). malloc, calloc and realloc are replaced;
   nomem_arm(k) makes the k-th allocation from then on (0-based) fail, and
   nomem_disarm() stops that and says how many allocations were made.

   NOMEM_COUNT_BLOCKS  free is replaced too, and nomem_live() counts the
                       blocks alive, so a test can see what a call left
                       behind (not with valgrind, which replaces free).
   NOMEM_OWN_CALLS     only allocations called from this program's own code
                       fail or count (the libraries it links, hiredis say,
                       are left alone: hiredis 0.14 aborts when its own
                       allocations fail, which is hiredis's business). */
#ifndef NOMEM_H
#define NOMEM_H

#include <stddef.h>

#ifdef __GLIBC__
#define NOMEM_AVAILABLE 1

extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);

/* volatile: the compiler takes malloc for a builtin that touches none of
   the program's variables, and may keep these in registers across a call
   inlined into the test (the parser of redlock_nodes.h is static inline) */
static volatile long nomem__at = -1; /* the allocation that fails; -1: none */
static volatile long nomem__calls;
static volatile long nomem__live;    /* blocks allocated here and not freed */

#ifdef NOMEM_OWN_CALLS
extern char __executable_start, etext;
#define NOMEM__MINE() ((const char *)__builtin_return_address(0) >= &__executable_start && \
                       (const char *)__builtin_return_address(0) < &etext)
#else
#define NOMEM__MINE() 1
#endif

static int nomem__fail(int mine) { return nomem__at >= 0 && mine && nomem__calls++ == nomem__at; }
static void *nomem__counted(void *p) { if (p) nomem__live++; return p; }

void *malloc(size_t n) { return nomem__fail(NOMEM__MINE()) ? NULL : nomem__counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t size)
{
    return nomem__fail(NOMEM__MINE()) ? NULL : nomem__counted(__libc_calloc(n, size));
}
void *realloc(void *p, size_t n)
{
    if (nomem__fail(NOMEM__MINE())) return NULL;
    return p ? __libc_realloc(p, n) : nomem__counted(__libc_realloc(p, n));
}

#ifdef NOMEM_COUNT_BLOCKS
extern void __libc_free(void *p);
void free(void *p)
{
    if (p) nomem__live--;
    __libc_free(p);
}
#endif

/* Arms the failure of allocation k (counted from now). */
static inline void nomem_arm(long k) { nomem__at = k; nomem__calls = 0; }
/* Disarms; returns how many allocations were made since nomem_arm. */
static inline long nomem_disarm(void) { long n = nomem__calls; nomem__at = -1; return n; }
/* The blocks alive (0 without NOMEM_COUNT_BLOCKS: frees are not seen). */
static inline long nomem_live(void)
{
#ifdef NOMEM_COUNT_BLOCKS
    return nomem__live;
#else
    return 0;
#endif
}
#endif /* __GLIBC__ */

#endif /* NOMEM_H */
