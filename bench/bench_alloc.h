/* bench/bench_alloc.h - counts every heap allocation of the process:
   malloc, calloc and realloc are replaced by wrappers around glibc's own
   (__libc_*), counting atomically (threads allocate too). Include it in
   one file of a benchmark program only; bench_allocations() reads the
   count. */
#ifndef BENCH_ALLOC_H
#define BENCH_ALLOC_H

#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static long bench__allocations;

void *malloc(size_t n)
{
    __atomic_fetch_add(&bench__allocations, 1, __ATOMIC_RELAXED);
    return __libc_malloc(n);
}
void *calloc(size_t a, size_t b)
{
    __atomic_fetch_add(&bench__allocations, 1, __ATOMIC_RELAXED);
    return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n)
{
    __atomic_fetch_add(&bench__allocations, 1, __ATOMIC_RELAXED);
    return __libc_realloc(p, n);
}

static inline long bench_allocations(void) { return __atomic_load_n(&bench__allocations, __ATOMIC_RELAXED); }

#endif
