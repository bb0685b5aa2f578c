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

#define NOMEM_OWN_CALLS
#define NOMEM_COUNT_BLOCKS
#include "nomem.h"

#ifdef NOMEM_AVAILABLE
static int node_ports[3]; /* a closed port, or servers that grant everything */
static int granting;      /* node_ports are the granting servers */
static int armed;         /* an allocation is set to fail */
static int nomem_seen;    /* an event, a node status or a return said NOMEM */

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
    for (i = 0; i < 3; i++) o->node[i].port = node_ports[i];
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

/* An operation's end on granting nodes: OK, NOMEM, or (a vote lost to a
   failed allocation) NO_QUORUM. Returns rc == OK. */
static int op_told(int rc)
{
    if (rc == REDLOCK_ERR_NOMEM) nomem_seen = 1;
    else if (rc != REDLOCK_ERR_NO_QUORUM || !armed) CHECK_EQ(rc, REDLOCK_OK);
    return rc == REDLOCK_OK;
}

/* The nodes' statuses after a call: NOMEM there is told too. */
static void hiredis_statuses(redlock_hiredis *c)
{
    int i;
    for (i = 0; i < 3; i++)
        if (redlock_hiredis_node_status(c, i, NULL, 0) == REDLOCK_ERR_NOMEM) nomem_seen = 1;
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
    if (count_blocks && k >= 0 && nomem_live() != before) {
        printf("#   allocation %ld failing: %ld blocks left\n", k, nomem_live() - before);
        CHECK_EQ(nomem_live(), before);
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
    long before = nomem_live(), calls;
    int rc;
    config(&o);
    o.watchdog_thread = threaded;
    nomem_seen = 0;
    armed = k >= 0;
    nomem_arm(k);
    rc = redlock_hiredis_init(&c, &o);
    if (rc == REDLOCK_OK) {
        int lrc, i;
        for (i = 0; i < o.node_count; i++)
            if (redlock_hiredis_node_status(&c, i, NULL, 0) == REDLOCK_ERR_NOMEM) nomem_seen = 1;
        lrc = redlock_hiredis_lock_init(&c, &lk, &lo);
        if (lrc == REDLOCK_OK) {
            int arc = redlock_hiredis_acquire(&lk);
            hiredis_statuses(&c);
            if (!granting) {
                CHECK(arc != REDLOCK_OK); /* nobody listens: no quorum */
            } else if (op_told(arc)) {
                op_told(redlock_hiredis_extend(&lk, 2000));
                hiredis_statuses(&c);
                op_told(redlock_hiredis_release(&lk));
                hiredis_statuses(&c);
            }
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
   until it is decided (on granting nodes, then a release), deinit. */
typedef struct libev_wait { int done, status; } libev_wait;

static void on_result(redlock_lock *lock, const redlock_result *r)
{
    libev_wait *w = (libev_wait *)r->user;
    (void)lock;
    w->done = 1;
    w->status = r->status;
}

/* Starts an operation (rc of the call) and runs the loop until its result;
   returns what the operation ended with. */
static int libev_finish(struct ev_loop *loop, libev_wait *w, int rc)
{
    int spins = 0;
    if (rc != REDLOCK_OK) return rc;
    while (!w->done && spins++ < 2000) ev_run(loop, EVRUN_ONCE);
    CHECK(w->done);
    return w->status;
}

static void libev_statuses(redlock_libev *c)
{
    int i;
    for (i = 0; i < 3; i++)
        if (redlock_libev_node_status(c, i, NULL, 0) == REDLOCK_ERR_NOMEM) nomem_seen = 1;
}

static int libev_round(long k)
{
    redlock_libev c;
    redlock_libev_config o;
    redlock_lock lk;
    redlock_lock_opts lo = lock_opts();
    long before = nomem_live(), calls;
    struct ev_loop *loop = ev_loop_new(EVFLAG_AUTO);
    libev_wait w = { 0, 0 };
    int rc;
    if (!loop) { CHECK(0); return 0; }
    config(&o);
    lo.on_result = on_result;
    lo.user = &w;
    nomem_seen = 0;
    armed = k >= 0;
    nomem_arm(k);
    rc = redlock_libev_init(&c, loop, &o);
    if (rc == REDLOCK_OK) {
        int lrc;
        libev_statuses(&c);
        lrc = redlock_lock_init(&lk, redlock_libev_client(&c), &lo);
        if (lrc == REDLOCK_OK) {
            int arc = libev_finish(loop, &w, redlock_acquire(&lk));
            libev_statuses(&c);
            if (!granting) {
                CHECK(arc != REDLOCK_OK);
            } else if (op_told(arc)) {
                w.done = 0;
                op_told(libev_finish(loop, &w, redlock_release(&lk)));
                libev_statuses(&c);
            }
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

/* Every round with allocation 0, 1, 2, ... failing, until one ends with
   all its allocations made. */
static void each_allocation(const char *what, int (*round)(long, int), int arg)
{
    long k;
    for (k = 0; k < 400 && round(k, arg); k++) {}
    printf("# %s%s: %ld allocations failed in turn\n", what, granting ? " (granting nodes)" : "", k);
    CHECK(k > 3 && k < 400);
}

static int libev_round_of(long k, int unused) { (void)unused; return libev_round(k); }

/* Proves: the blocking adapter, without and with its watchdog thread, and
   the libev adapter survive every allocation failing in turn, and each
   failure is told (a return, a node's status or an event says NOMEM):
   against a port nobody listens on (connecting fails fast), and against
   three servers that grant everything (a lock's whole life: connect,
   AUTH, commands, replies, release). */
static void test_each_allocation_fails(void)
{
    hostile h[3];
    int i;
    for (i = 0; i < 3; i++) node_ports[i] = hostile_closed_port();
    /* a round without failures first: glibc keeps what the first name
       lookup allocates (its resolver's state), for the rest of the run */
    hiredis_round(-1, 0);
    each_allocation("hiredis", hiredis_round, 0);
    each_allocation("hiredis (watchdog thread)", hiredis_round, 1);
    each_allocation("libev", libev_round_of, 0);
    for (i = 0; i < 3; i++) {
        CHECK_EQ(hostile_start(&h[i], HOSTILE_GOOD, NULL), 0);
        node_ports[i] = h[i].port;
    }
    granting = 1;
    hiredis_round(-1, 0);
    each_allocation("hiredis", hiredis_round, 0);
    each_allocation("hiredis (watchdog thread)", hiredis_round, 1);
    each_allocation("libev", libev_round_of, 0);
    for (i = 0; i < 3; i++) hostile_stop(&h[i]);
}

int main(void)
{
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
