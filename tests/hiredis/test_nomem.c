/* test_nomem.c - the hiredis and libev adapters when memory runs out: each
   allocation the adapters and the core make in a call fails in turn
   (malloc, calloc, realloc and free are interposed; glibc's __libc_* do
   the real work; only calls from this program's own code are failed:
   hiredis 0.14 aborts when its own allocations fail, which is hiredis's
   business). The call must return OK or REDLOCK_ERR_NOMEM (a
   connection that could not be made is a node error, not a crash), and
   every block it took must be freed by the matching deinit: the blocks
   alive are counted and must be the same after each round. The nodes are
   a port nobody listens on, so connecting fails fast and nothing waits. */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include "check.h"
#include "hostile_server.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef __GLIBC__
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

static long nomem_at = -1; /* the allocation (0-based) that fails; -1: none */
static long nomem_calls;
static long live_blocks;   /* allocated through these and not freed */

/* this program's code (the adapters and the core are compiled into it) */
extern char __executable_start, etext;
static int ours(const void *ret) { return (const char *)ret >= &__executable_start && (const char *)ret < &etext; }

static int nomem_now(const void *ret) { return nomem_at >= 0 && ours(ret) && nomem_calls++ == nomem_at; }
static void *counted(void *p) { if (p) live_blocks++; return p; }
void *malloc(size_t n) { return nomem_now(__builtin_return_address(0)) ? NULL : counted(__libc_malloc(n)); }
void *calloc(size_t n, size_t size)
{
    return nomem_now(__builtin_return_address(0)) ? NULL : counted(__libc_calloc(n, size));
}
void *realloc(void *p, size_t n)
{
    if (nomem_now(__builtin_return_address(0))) return NULL;
    return p ? __libc_realloc(p, n) : counted(__libc_realloc(p, n));
}
void free(void *p)
{
    if (p) live_blocks--;
    __libc_free(p);
}

static void nomem_arm(long k) { nomem_at = k; nomem_calls = 0; }
static long nomem_disarm(void) { long n = nomem_calls; nomem_at = -1; return n; }

static int closed_port;
static int nomem_seen; /* an event, a node status or a return said NOMEM */

static void on_event(void *user, const redlock_event *ev)
{
    (void)user;
    if (ev->status == REDLOCK_ERR_NOMEM) nomem_seen = 1;
}

static void config(redlock_hiredis_config *o)
{
    int i;
    redlock_hiredis_config_init(o);
    o->node_count = 3;
    for (i = 0; i < 3; i++) o->node[i].port = closed_port;
    o->node[1].host = "localhost";           /* a name to copy */
    o->username = "user";                    /* and credentials */
    o->password = "secret";
    o->connect_timeout_ms = 200;
    o->command_timeout_ms = 200;
    o->core.node_timeout_ms = 50;
    o->core.retry_count = -1;
    o->on_event = on_event;
}

static redlock_lock_opts lock_opts(void)
{
    redlock_lock_opts lo;
    memset(&lo, 0, sizeof lo);
    lo.key = "nomem:key";
    lo.ttl_ms = 1000;
    return lo;
}

/* A call refused: it must say NOMEM. */
static void refused(int rc)
{
    CHECK_EQ(rc, REDLOCK_ERR_NOMEM);
    nomem_seen = 1;
}

/* The end of a round with allocation k failing (k < 0: none), `calls`
   allocations made: a failed allocation is never silent, and (if
   count_blocks) no block is left. Returns 1 while k was within the round. */
static int round_end(long k, long calls, long before, int count_blocks)
{
    if (k >= 0 && k < calls && !nomem_seen) {
        printf("#   allocation %ld failed and nothing said NOMEM\n", k);
        CHECK(0);
    }
    if (count_blocks && k >= 0 && live_blocks != before) {
        printf("#   allocation %ld failing: %ld blocks left\n", k, live_blocks - before);
        CHECK_EQ(live_blocks, before);
    }
    return k < calls;
}

/* One round of the blocking adapter with allocation k failing: init, a
   lock, a blocking acquire (the nodes refuse: a failed vote each), deinit.
   Returns 1 while k was within the round's allocations. */
static int hiredis_round(long k, int threaded)
{
    redlock_hiredis c;
    redlock_hiredis_config o;
    redlock_hiredis_lock lk;
    redlock_lock_opts lo = lock_opts();
    long before = live_blocks, calls;
    int rc;
    config(&o);
    o.watchdog_thread = threaded;
    nomem_seen = 0;
    nomem_arm(k);
    rc = redlock_hiredis_init(&c, &o);
    if (rc == REDLOCK_OK) {
        int lrc, i;
        for (i = 0; i < o.node_count; i++)
            if (redlock_hiredis_node_status(&c, i, NULL, 0) == REDLOCK_ERR_NOMEM) nomem_seen = 1;
        lrc = redlock_hiredis_lock_init(&c, &lk, &lo);
        if (lrc == REDLOCK_OK) {
            int arc = redlock_hiredis_acquire(&lk);
            if (arc == REDLOCK_OK) CHECK(0);     /* nobody listens: no quorum */
            redlock_hiredis_lock_deinit(&lk);
        } else {
            refused(lrc);
        }
        redlock_hiredis_deinit(&c);
    } else {
        refused(rc);
    }
    calls = nomem_disarm();
    /* a thread's start-up blocks are glibc's to keep: counted without one */
    return round_end(k, calls, before, !threaded);
}

/* The same with the libev adapter: init, a lock, an acquire run on the loop
   until it is decided, deinit. */
static void on_result(redlock_lock *lock, const redlock_result *r)
{
    (void)lock;
    *(int *)r->user = 1;
}

static int libev_round(long k)
{
    redlock_libev c;
    redlock_libev_config o;
    redlock_lock lk;
    redlock_lock_opts lo = lock_opts();
    long before = live_blocks, calls;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    int rc, done = 0;
    if (!loop) { CHECK(0); return 0; }
    config(&o);
    lo.on_result = on_result;
    lo.user = &done;
    nomem_seen = 0;
    nomem_arm(k);
    rc = redlock_libev_init(&c, loop, &o);
    if (rc == REDLOCK_OK) {
        int lrc, i;
        for (i = 0; i < o.node_count; i++)
            if (redlock_libev_node_status(&c, i, NULL, 0) == REDLOCK_ERR_NOMEM) nomem_seen = 1;
        lrc = redlock_lock_init(&lk, redlock_libev_client(&c), &lo);
        if (lrc == REDLOCK_OK) {
            int spins = 0;
            if (redlock_acquire(&lk) == REDLOCK_OK)
                while (!done && spins++ < 2000) ev_run(loop, EVRUN_ONCE);
            CHECK(done);
            redlock_lock_deinit(&lk);
        } else {
            refused(lrc);
        }
        redlock_libev_deinit(&c);
    } else {
        refused(rc);
    }
    calls = nomem_disarm();
    ev_loop_destroy(loop);
    return round_end(k, calls, before, 1);
}

/* Proves: the blocking adapter, without and with its watchdog thread, and
   the libev adapter survive every allocation failing in turn, and each
   failure is told (a return, a node's status or an event says NOMEM). */
static void test_each_allocation_fails(void)
{
    long k;
    int threaded;
    /* a round without failures first: glibc keeps what the first name
       lookup allocates (its resolver's state), for the rest of the run */
    hiredis_round(-1, 0);
    for (threaded = 0; threaded < 2; threaded++) {
        for (k = 0; k < 400 && hiredis_round(k, threaded); k++) {}
        printf("# hiredis%s: %ld allocations failed in turn\n", threaded ? " (watchdog thread)" : "", k);
        CHECK(k > 3 && k < 400);
    }
    for (k = 0; k < 400 && libev_round(k); k++) {}
    printf("# libev: %ld allocations failed in turn\n", k);
    CHECK(k > 3 && k < 400);
}

int main(void)
{
    closed_port = hostile_closed_port();
    RUN(test_each_allocation_fails);
    return CHECK_EXIT();
}
#else
int main(void)
{
    printf("# the out-of-memory test needs glibc's __libc_malloc: not run here\n");
    return 0;
}
#endif
