/* bench/bench_transport.c - every transport side by side with the Redis
   limit, on the same redis-server nodes in one run.

   For 1, 3 and 5 nodes (started here on loopback, pinned to --server-cpu)
   and each transport (hiredis sync, hiredis async on libev, the raw-socket
   adapter's blocking calls, and the raw-socket adapter driven by a poll()
   loop of the caller's through its foreign-loop API), one client does
   sequential acquire + release cycles, each on a fresh key: cycles/s,
   acquire and release latency (p50, p99, p99.9), the client's CPU per
   cycle (user + sys) and heap allocations per cycle (the whole process:
   adapter, library and core). Then 64 locks in flight over the same
   connections. The limit is redis-benchmark, in the same run, for the same
   commands (SET key v NX PX, EVALSHA of the release script) with as many
   connections as nodes, at -P 1 and at -P 64, against node 0: per
   connection, that is the rate of one node's part of a round when every
   server shares one CPU. A cycle is one SET round and one EVALSHA round,
   so its limit is 1 / (1/set + 1/evalsha) (half the -P 1 rate when the two
   cost the same). Each figure is measured twice, the transports in
   opposite orders, and both are printed.

   Then the fenced lock's cost: the raw-socket transport's sequential cycles
   with plain and with fenced locks, side by side.

   Then read-mostly: 16 clients, 95% reads, with readers-writer locks
   against the plain lock on the same workload.

   Then contention: 20 clients of one transport take turns on one key, each
   holding it about 1 ms and pausing 1 ms before asking again, with the
   library's defaults (release notifications on), the same without
   notifications, and without them but with retries tuned for 1 ms holds.
   On one node also the ceiling of any waking scheme: the same threads
   handing the key round a ring by a script that sets it for the next and
   publishes to it, and how long a 1 ms nanosleep lasts.

   Files (--out DIR): transport.csv, contention.csv, latency.dat (the
   latency distributions), latency.gp and, when gnuplot is installed,
   latency.png.

   A busy machine makes a cycle fail now and then (a node timeout): a
   failed cycle, turn or hand-off is counted in its row's `failed` column
   and left out of the row's rates and latencies, which are the successful
   ones'. The run ends with status 1 only when a row had no success at
   all, and then names the rows.

   Usage: bench_transport [--cycles N] [--nodes 1,3,5] [--contend S] [--server-cpu C] [--out DIR]
                          [--fail-every N]
   --fail-every N (a test of the failure path): every Nth measured cycle,
   lock in flight and turn of a contention or read-mostly client asks,
   once, for a key another owner holds on every node, and so fails.
   Pin the client with taskset (make bench-transport does). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#define REDLOCK_HIREDIS_IMPLEMENTATION
#define REDLOCK_LIBEV_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "adapters/redlock_hiredis.h"
#include "adapters/redlock_libev.h"
#include "redis_nodes.h"
#include "bench_util.h"

#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { T_HIREDIS, T_LIBEV, T_SOCKET, T_FOREIGN, T_COUNT };
static const char *const t_name[T_COUNT] = { "hiredis sync", "hiredis libev", "socket", "socket foreign" };
enum { R_NONE, R_DEFAULT, R_QUIET, R_TUNED }; /* retry settings */
#define SETTINGS 3                    /* contention: R_DEFAULT, R_QUIET, R_TUNED */
static const char *const setting_name[] = { "one try", "default", "no notif", "tuned" };
#define RUNS 2                        /* each figure twice, interleaved */
#define MAX_K 8                       /* node counts in one run */

static int64_t now_us(void) { return redlock_socket_now_us(); }

/* ---- failures: counted per row; a row without a success fails the run ---- */

#define INJECTED_KEY "bench:injected" /* --fail-every: held by another owner on every node */
static int fail_every;                /* 0: no injected failures */

/* Whether the nth (from 0) measured cycle or turn is an injected failure. */
static int injected(long n) { return fail_every > 0 && n >= 0 && (n + 1) % fail_every == 0; }

static char failed_rows[4096]; /* the rows without a success, for the last line */
static int failed_row_count;

/* A row's failures, said on stderr as they happen; a row with none that
   succeeded is remembered for the run's status. */
static void row_failures(const char *row, long failed, long ok)
{
    size_t len = strlen(failed_rows);
    if (failed == 0 && ok > 0) return;
    fprintf(stderr, "bench_transport: %s: %ld failed, %ld succeeded%s\n", row, failed, ok,
            ok ? " (the failures are counted in the row and left out of its figures)" : "");
    if (ok) return;
    failed_row_count++;
    snprintf(failed_rows + len, sizeof failed_rows - len, "%s%s", len ? "; " : "", row);
}

/* ---- heap allocations, counted while a cycle's calls run ---- */
#include "bench_alloc.h"

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of n sorted values. */
static int64_t quantile(const int64_t *v, int n, double q)
{
    int k = (int)(q * (n - 1) + 0.5);
    return n <= 0 ? -1 : v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* ---- one client per transport, driven the same way: acquire, release ---- */

typedef struct client {
    int t;
    redlock_socket s;
    redlock_hiredis h;
    redlock_libev e;
    struct ev_loop *loop;
    redlock_lock lock;           /* libev, foreign loop: the core lock */
    redlock_socket_lock slock;
    redlock_hiredis_lock hlock;
    int done, status;            /* libev, foreign loop: the result of the operation in flight */
} client;

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    client *c = (client *)r->user;
    (void)lk;
    c->done = 1;
    c->status = r->status;
}

/* R_NONE: one attempt. R_DEFAULT: the library's defaults (3 retries,
   200 +- 100 ms apart, release notifications on). R_QUIET: the same
   without release notifications. R_TUNED, for 1 ms holds, without
   notifications: retry every 1 ms
   (+-1 ms) for up to 10 s. */
static void core_retry(redlock_config *core, int retry)
{
    if (retry == R_NONE) core->retry_count = -1;
    if (retry != R_TUNED) return;
    core->retry_count = 1000000;
    core->retry_delay_ms = 1;
    core->retry_jitter_ms = 1;
    core->wait_ms = 10000;
}

/* 0, or -1 with nothing left open. */
static int client_open(client *c, int t, const redis_nodes *rn, int retry)
{
    int i, n = rn->n;
    memset(c, 0, sizeof *c);
    c->t = t;
    if (t == T_SOCKET || t == T_FOREIGN) {
        redlock_socket_config cfg;
        redlock_socket_config_init(&cfg);
        cfg.node_count = n;
        for (i = 0; i < n; i++) cfg.node[i].port = redis_nodes_port(rn, i);
        core_retry(&cfg.core, retry);
        cfg.notify_off = retry == R_QUIET || retry == R_TUNED;
        if (redlock_socket_init(&c->s, &cfg) != REDLOCK_OK) return -1;
        if (redlock_socket_connect(&c->s) == REDLOCK_OK) return 0;
        redlock_socket_deinit(&c->s);
        return -1;
    } else {
        redlock_hiredis_config cfg;
        redlock_hiredis_config_init(&cfg);
        cfg.node_count = n;
        for (i = 0; i < n; i++) cfg.node[i].port = redis_nodes_port(rn, i);
        core_retry(&cfg.core, retry);
        cfg.notify_off = retry == R_QUIET || retry == R_TUNED;
        if (t == T_HIREDIS) return redlock_hiredis_init(&c->h, &cfg) == REDLOCK_OK ? 0 : -1;
        c->loop = ev_loop_new(EVFLAG_AUTO);
        if (c->loop && redlock_libev_init(&c->e, c->loop, &cfg) == REDLOCK_OK) return 0;
        if (c->loop) ev_loop_destroy(c->loop);
        return -1;
    }
}

static void client_close(client *c)
{
    if (c->t == T_SOCKET || c->t == T_FOREIGN) redlock_socket_deinit(&c->s);
    else if (c->t == T_HIREDIS) redlock_hiredis_deinit(&c->h);
    else {
        redlock_libev_deinit(&c->e);
        ev_loop_destroy(c->loop);
    }
}

static redlock_client *client_core(client *c)
{
    return c->t == T_HIREDIS ? redlock_hiredis_client(&c->h)
         : c->t == T_LIBEV   ? redlock_libev_client(&c->e)
                             : redlock_socket_client(&c->s);
}

static int bench_fence; /* the locks of the sequential cycles are fenced (section 11) */

/* one_try: a single attempt whatever the client's retries. */
static int client_lock(client *c, const char *key, int one_try)
{
    redlock_lock_opts o;
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    o.fence = bench_fence;
    o.retry_count = one_try ? -1 : 0;
    if (c->t == T_SOCKET) return redlock_socket_lock_init(&c->s, &c->slock, &o);
    if (c->t == T_HIREDIS) return redlock_hiredis_lock_init(&c->h, &c->hlock, &o);
    o.on_result = on_result;
    o.user = c;
    return redlock_lock_init(&c->lock, client_core(c), &o);
}

static void client_turn(client *c, int64_t until_us);

/* Before a lock goes: the undo or cleanup of its last operation is sent
   and answered (at most 1 s), or a contender that gave up last would
   leave a late SET's key for the next run to wait out. */
static void client_unlock(client *c)
{
    redlock_lock *lk = c->t == T_SOCKET ? &c->slock.lock : c->t == T_HIREDIS ? &c->hlock.lock : &c->lock;
    int64_t until = now_us() + 1000000;
    while (redlock_lock_pending(lk) && now_us() < until) client_turn(c, until);
    if (c->t == T_SOCKET) redlock_socket_lock_deinit(&c->slock);
    else if (c->t == T_HIREDIS) redlock_hiredis_lock_deinit(&c->hlock);
    else redlock_lock_deinit(&c->lock);
}

/* One turn of the client's loop, waiting at most until `until_us` where
   the transport lets the caller wait (libev, the foreign poll() loop); the
   adapters' own loops are turned without waiting: their run(ms) lasts ms. */
static void client_turn(client *c, int64_t until_us)
{
    if (c->t == T_SOCKET) redlock_socket_run(&c->s, 0);
    else if (c->t == T_HIREDIS) redlock_hiredis_run(&c->h, 0);
    else if (c->t == T_LIBEV) ev_run(c->loop, EVRUN_ONCE);
    else {
        struct pollfd pfd[REDLOCK_SOCKET_MAX_FDS];
        int n = redlock_socket_pollfds(&c->s, pfd);
        if (poll(pfd, (nfds_t)n, redlock_socket_poll_ms(&c->s, until_us)) >= 0) redlock_socket_dispatch(&c->s, pfd, n);
    }
}

/* The loop until the core lock's operation has its result (at most 20 s). */
static int loop_wait(client *c, int rc)
{
    int64_t until = now_us() + 20000000;
    if (rc != REDLOCK_OK) return rc;
    while (!c->done && now_us() < until) client_turn(c, until);
    return c->done ? c->status : REDLOCK_ERR_TIMEOUT;
}

static int client_acquire(client *c)
{
    if (c->t == T_SOCKET) return redlock_socket_acquire(&c->slock);
    if (c->t == T_HIREDIS) return redlock_hiredis_acquire(&c->hlock);
    c->done = 0;
    return loop_wait(c, redlock_acquire(&c->lock));
}

static int client_release(client *c)
{
    if (c->t == T_SOCKET) return redlock_socket_release(&c->slock);
    if (c->t == T_HIREDIS) return redlock_hiredis_release(&c->hlock);
    c->done = 0;
    return loop_wait(c, redlock_release(&c->lock));
}

/* ---- sequential cycles ---- */

typedef struct row {
    double rate, cpu_us, allocs, inflight;
    int64_t acq[3], rel[3]; /* p50, p99, p99.9 */
    long ok, failed;                  /* sequential cycles */
    long inflight_ok, inflight_failed; /* cycles of the locks in flight */
} row;

/* `cycles` acquire + release cycles on fresh keys (a tenth more first, to
   warm up, not counted). A cycle whose lock, acquire or release fails is
   counted in r->failed and left out: the latencies of the r->ok that
   succeeded go to acq[] / rel[] (unsorted), and the rate is theirs over
   their own time (each failed cycle's time, from its acquire to its lock's
   end, is taken out). CPU and allocations are per cycle, failed ones
   included. */
static void sequential(client *c, int nodes, int run, int cycles, int64_t *acq, int64_t *rel, row *r)
{
    char key[64];
    double c0 = bench_cpu_s();
    int64_t t0, a, start = now_us(), failed_us = 0;
    long a0 = 0, allocs = 0;
    int i, ok;
    r->ok = r->failed = 0;
    for (i = -cycles / 10; i < cycles; i++) {
        if (injected(i)) snprintf(key, sizeof key, "%s", INJECTED_KEY);
        else snprintf(key, sizeof key, "bench:transport:%d:%d:%d:%d", nodes, c->t, run, i);
        ok = client_lock(c, key, 0) == REDLOCK_OK;
        if (i == 0) {
            c0 = bench_cpu_s();
            start = now_us();
        }
        a0 = bench_allocations();
        t0 = now_us();
        ok = ok && client_acquire(c) == REDLOCK_OK;
        a = now_us() - t0;
        if (i >= 0 && ok) acq[r->ok] = a;
        a = now_us();
        ok = ok && client_release(c) == REDLOCK_OK;
        if (i >= 0) {
            if (ok) rel[r->ok++] = now_us() - a;
            allocs += bench_allocations() - a0;
        }
        client_unlock(c);
        if (i >= 0 && !ok) {
            r->failed++;
            failed_us += now_us() - t0;
        }
    }
    r->rate = r->ok ? r->ok / ((now_us() - start - failed_us) / 1e6) : 0;
    r->cpu_us = (bench_cpu_s() - c0) / cycles * 1e6;
    r->allocs = (double)allocs / cycles;
}

/* ---- many locks in flight over one connection per node ---- */

#define DEPTH 64
static redlock_lock inflight_locks[DEPTH];
static int inflight_status[DEPTH]; /* the result of each lock's operation; 1: none yet */
static int inflight_results;

static void on_inflight(redlock_lock *lk, const redlock_result *r)
{
    if (r->op != REDLOCK_OP_ACQUIRE && r->op != REDLOCK_OP_RELEASE) return;
    inflight_results++;
    inflight_status[lk - inflight_locks] = r->status;
}

/* One operation (acquire, or release) on every lock whose status is OK,
   at once; then the loop until their results are in (at most 10 s). A
   lock whose call is refused, whose result is an error or that has none
   in time gets a failed status. */
static void inflight_op(client *c, int release)
{
    int64_t until = now_us() + 10000000;
    int i, want = 0;
    inflight_results = 0;
    for (i = 0; i < DEPTH; i++) {
        if (inflight_status[i] != REDLOCK_OK) continue;
        inflight_status[i] = 1;
        if ((release ? redlock_release(&inflight_locks[i]) : redlock_acquire(&inflight_locks[i])) == REDLOCK_OK) want++;
        else if (inflight_status[i] == 1) inflight_status[i] = REDLOCK_ERR_BUSY;
    }
    while (inflight_results < want && now_us() < until) client_turn(c, until);
    for (i = 0; i < DEPTH; i++)
        if (inflight_status[i] == 1) inflight_status[i] = REDLOCK_ERR_TIMEOUT;
}

/* Lock i of the locks in flight, on a key of its own (generation g: a
   fresh key each time the lock is made again after a failed cycle, so
   that what the failure left on the nodes, until its ttl, refuses
   nothing). 0, or -1. */
static int inflight_init(client *c, int nodes, int run, int i, int g)
{
    char key[64];
    redlock_lock_opts o;
    memset(&o, 0, sizeof o);
    o.ttl_ms = 10000;
    o.on_result = on_inflight;
    if (injected(i)) snprintf(key, sizeof key, "%s", INJECTED_KEY);
    else if (g) snprintf(key, sizeof key, "bench:inflight:%d:%d:%d:%d:%d", nodes, c->t, run, i, g);
    else snprintf(key, sizeof key, "bench:inflight:%d:%d:%d:%d", nodes, c->t, run, i);
    o.key = key;
    return redlock_lock_init(&inflight_locks[i], client_core(c), &o) == REDLOCK_OK ? 0 : -1;
}

/* DEPTH locks acquired at once with the core's non-blocking calls, then
   those acquired released at once, `rounds` times. A lock's cycle that
   fails is counted in r->inflight_failed, and the lock is made again
   before the next round; the rate counts the successful cycles, over the
   whole time. */
static void inflight(client *c, int nodes, int run, int rounds, row *r)
{
    static int made[DEPTH];
    int64_t t0;
    int i, n;
    r->inflight_ok = r->inflight_failed = 0;
    for (i = 0; i < DEPTH; i++) made[i] = inflight_init(c, nodes, run, i, 0) == 0;
    t0 = now_us();
    for (n = 0; n < rounds; n++) {
        for (i = 0; i < DEPTH; i++) {
            if (n > 0 && made[i] && inflight_status[i] != REDLOCK_OK) { /* its last cycle failed */
                redlock_lock_deinit(&inflight_locks[i]);
                made[i] = inflight_init(c, nodes, run, i, n) == 0;
            }
            inflight_status[i] = !made[i] ? REDLOCK_ERR_NOMEM : REDLOCK_OK;
        }
        inflight_op(c, 0);
        inflight_op(c, 1);
        for (i = 0; i < DEPTH; i++) {
            if (inflight_status[i] == REDLOCK_OK) r->inflight_ok++;
            else r->inflight_failed++;
        }
    }
    t0 = now_us() - t0;
    for (i = 0; i < DEPTH; i++)
        if (made[i]) redlock_lock_deinit(&inflight_locks[i]);
    r->inflight = r->inflight_ok / (t0 / 1e6);
}

/* ---- contention: 20 clients, one key, each holding about 1 ms ---- */

#define CONTENDERS 20
typedef struct contender {
    client c;
    int open, wins, gave_up, failed;
    long turns;
    pthread_t th;
} contender;

typedef struct crow {
    double rate;
    int64_t p50, p99; /* hand-off */
    int lo, hi, total, gave_up; /* acquisitions per client: fewest, most, all */
    int failed;                 /* turns that failed (not a lost race: an error) */
} crow;

static pthread_mutex_t handoff_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t handoff_release_us, handoff_until_us;
static int64_t *handoff;
static int handoffs, handoff_cap;

#define CONTENDED_KEY "bench:contended"

/* An injected failure (--fail-every): the turn asks once for a key that
   another owner holds, pauses 1 ms as after a turn, then the contender's
   lock is back on the contended key. 0, or -1 if that lock cannot be made
   again. */
static int contend_injected(contender *x)
{
    struct timespec ms1 = { 0, 1000000 };
    client_unlock(&x->c);
    if (client_lock(&x->c, INJECTED_KEY, 1) == REDLOCK_OK) {
        (void)client_acquire(&x->c);
        nanosleep(&ms1, NULL); /* meanwhile the refusal's follow-up is answered: the unlock need not spin */
        client_unlock(&x->c);
    } else
        nanosleep(&ms1, NULL);
    return client_lock(&x->c, CONTENDED_KEY, 0) == REDLOCK_OK ? 0 : -1;
}

static void *contend_main(void *arg)
{
    contender *x = (contender *)arg;
    struct timespec ms1 = { 0, 1000000 };
    if (client_lock(&x->c, CONTENDED_KEY, 0) != REDLOCK_OK) {
        x->failed++;
        return NULL;
    }
    while (now_us() < handoff_until_us) {
        int64_t at;
        int rc;
        if (injected(x->turns++)) {
            x->failed++;
            if (contend_injected(x) != 0) return NULL; /* no lock left to unlock */
            continue;
        }
        rc = client_acquire(&x->c);
        if (rc == REDLOCK_ERR_LOCKED || rc == REDLOCK_ERR_TIMEOUT) { /* retries used up: ask again */
            x->gave_up++;
            continue;
        }
        if (rc != REDLOCK_OK) {
            x->failed++;
            nanosleep(&ms1, NULL); /* as after a turn */
            continue;
        }
        at = now_us();
        pthread_mutex_lock(&handoff_mu);
        if (handoff_release_us && handoffs < handoff_cap)
            handoff[handoffs++] = at > handoff_release_us ? at - handoff_release_us : 0;
        handoff_release_us = 0; /* one hand-off per release */
        pthread_mutex_unlock(&handoff_mu);
        nanosleep(&ms1, NULL); /* hold */
        if (client_release(&x->c) != REDLOCK_OK) x->failed++;
        else {
            x->wins++;
            pthread_mutex_lock(&handoff_mu);
            handoff_release_us = now_us();
            pthread_mutex_unlock(&handoff_mu);
        }
        nanosleep(&ms1, NULL); /* other work before asking again */
    }
    client_unlock(&x->c);
    return NULL;
}

/* CONTENDERS clients of transport t with the given retry settings, each
   with its connections, take turns on one key for `seconds`. A client
   that cannot connect, and a turn that fails (an error, not a lost race;
   or its release), count in out->failed; the rates count the turns that
   acquired and released. 0, or -1 if the hand-off record cannot be
   allocated. */
static int contend(int t, const redis_nodes *rn, double seconds, int retry, crow *out)
{
    static contender x[CONTENDERS];
    int i;
    int64_t t0;
    handoff_cap = 1000000;
    handoff = (int64_t *)malloc((size_t)handoff_cap * sizeof *handoff);
    if (!handoff) return -1;
    handoffs = 0;
    handoff_release_us = 0;
    for (i = 0; i < CONTENDERS; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].open = client_open(&x[i].c, t, rn, retry) == 0;
    }
    t0 = now_us();
    handoff_until_us = t0 + (int64_t)(seconds * 1e6);
    for (i = 0; i < CONTENDERS; i++)
        if (x[i].open) pthread_create(&x[i].th, NULL, contend_main, &x[i]);
    for (i = 0; i < CONTENDERS; i++)
        if (x[i].open) pthread_join(x[i].th, NULL);
    t0 = now_us() - t0;
    memset(out, 0, sizeof *out);
    out->lo = out->hi = x[0].wins;
    for (i = 0; i < CONTENDERS; i++) {
        out->total += x[i].wins;
        out->failed += x[i].failed + !x[i].open;
        out->gave_up += x[i].gave_up;
        if (x[i].wins < out->lo) out->lo = x[i].wins;
        if (x[i].wins > out->hi) out->hi = x[i].wins;
        if (x[i].open) client_close(&x[i].c);
    }
    qsort(handoff, (size_t)handoffs, sizeof *handoff, cmp_i64);
    out->p50 = quantile(handoff, handoffs, 0.5);
    out->p99 = quantile(handoff, handoffs, 0.99);
    out->rate = out->total / (t0 / 1e6);
    free(handoff);
    return 0;
}

/* ---- the ceiling: a hand-off with nothing left to save ---- */

/* What no waking scheme can beat on this machine: the same 20 threads, but
   each holder's release is a script that sets the key for the next thread
   of a ring and publishes to that thread's channel, which it waits on (hiredis,
   blocking). No race, no retry, no undo, one wake per hand-off: only the
   1 ms hold, the script and the wake-up of the next thread remain. */
typedef struct ring_member {
    int i, port;
    pthread_t th;
    long handoffs;
    int broke; /* its wait or its script failed before the stop */
} ring_member;

static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static int ring_ready, ring_stop;

static int ring_stopping(void)
{
    int stop;
    pthread_mutex_lock(&ring_mu);
    stop = ring_stop;
    pthread_mutex_unlock(&ring_mu);
    return stop;
}

static void *ring_main(void *arg)
{
    ring_member *m = (ring_member *)arg;
    struct timespec ms1 = { 0, 1000000 };
    struct timeval two_s = { 2, 0 };
    char mine[32], next[32];
    redisContext *c = redisConnect("127.0.0.1", m->port), *sub = redisConnect("127.0.0.1", m->port);
    redisReply *r = NULL;
    snprintf(mine, sizeof mine, "bench:ring:%d", m->i);
    snprintf(next, sizeof next, "bench:ring:%d", (m->i + 1) % CONTENDERS);
    if (c && !c->err && sub && !sub->err && redisSetTimeout(sub, two_s) == REDIS_OK)
        r = (redisReply *)redisCommand(sub, "SUBSCRIBE %s", mine);
    if (r) freeReplyObject(r);
    pthread_mutex_lock(&ring_mu);
    ring_ready++; /* counted even on failure: the caller then sees too few hand-offs, not a hang */
    pthread_mutex_unlock(&ring_mu);
    m->broke = 1;
    while (r) {
        void *msg;
        if (redisGetReply(sub, &msg) != REDIS_OK) break; /* nothing for 2 s: the ring broke */
        freeReplyObject(msg);
        if (ring_stopping()) {
            m->broke = 0;
            break;
        }
        m->handoffs++;
        nanosleep(&ms1, NULL); /* hold */
        r = (redisReply *)redisCommand(c, "EVAL %s 1 bench:ring %s %s",
                                       "redis.call('SET', KEYS[1], ARGV[1], 'PX', 10000) "
                                       "return redis.call('PUBLISH', ARGV[2], ARGV[1])",
                                       next, next);
        if (r) freeReplyObject(r);
        nanosleep(&ms1, NULL); /* other work */
    }
    if (c && !c->err) { /* wake the next one, which then sees the stop */
        r = (redisReply *)redisCommand(c, "PUBLISH %s stop", next);
        if (r) freeReplyObject(r);
    }
    if (c) redisFree(c);
    if (sub) redisFree(sub);
    return NULL;
}

/* Hand-offs per second of the ring on `port` for `seconds`, *total of
   them; *broke: how many members' waits or scripts failed. */
static double ring(int port, double seconds, int *broke, long *total)
{
    static ring_member m[CONTENDERS];
    redisContext *c;
    redisReply *r;
    int i, ready;
    int64_t t0;
    ring_ready = ring_stop = 0;
    for (i = 0; i < CONTENDERS; i++) {
        memset(&m[i], 0, sizeof m[i]);
        m[i].i = i;
        m[i].port = port;
        pthread_create(&m[i].th, NULL, ring_main, &m[i]);
    }
    do {
        struct timespec ms1 = { 0, 1000000 };
        nanosleep(&ms1, NULL);
        pthread_mutex_lock(&ring_mu);
        ready = ring_ready;
        pthread_mutex_unlock(&ring_mu);
    } while (ready < CONTENDERS);
    c = redisConnect("127.0.0.1", port);
    t0 = now_us();
    r = c && !c->err ? (redisReply *)redisCommand(c, "PUBLISH bench:ring:0 go") : NULL;
    if (r) freeReplyObject(r);
    while (now_us() - t0 < (int64_t)(seconds * 1e6)) {
        struct timespec ms10 = { 0, 10000000 };
        nanosleep(&ms10, NULL);
    }
    pthread_mutex_lock(&ring_mu);
    ring_stop = 1;
    pthread_mutex_unlock(&ring_mu);
    t0 = now_us() - t0;
    *broke = 0;
    *total = 0;
    for (i = 0; i < CONTENDERS; i++) {
        pthread_join(m[i].th, NULL);
        *total += m[i].handoffs;
        *broke += m[i].broke;
    }
    if (c) redisFree(c);
    return *total / (t0 / 1e6);
}

/* Mean length in us of a 1 ms nanosleep here, over `n` of them. */
static double sleep_1ms_us(int n)
{
    struct timespec ms1 = { 0, 1000000 };
    int64_t t0 = now_us();
    int i;
    for (i = 0; i < n; i++) nanosleep(&ms1, NULL);
    return (double)(now_us() - t0) / n;
}

/* ---- read-mostly: readers-writer locks against the plain lock ---- */

/* READERS threads (raw socket, connections of their own) take one key
   for `seconds`: each turn a read (95%) or a write, held 1 ms, then 1 ms
   of other work. rw: reads take a shared hold, writes an exclusive one
   (section 12); plain: every turn takes the plain lock. Turns done per
   second (the turns that acquired and released, *done of them); *failed:
   the turns that did not and the members that could not be set up. */
#define READERS 16
typedef struct rm_member {
    redlock_socket s;
    redlock_socket_lock shared, exclusive, injected;
    pthread_t th;
    int open;
    uint64_t rng;
    long reads, writes, refused, turns;
} rm_member;

static int64_t rm_until;

static void *rm_main(void *arg)
{
    rm_member *m = (rm_member *)arg;
    struct timespec ms1 = { 0, 1000000 };
    while (now_us() < rm_until) {
        int write;
        redlock_socket_lock *l;
        m->rng = m->rng * 6364136223846793005ull + 1442695040888963407ull;
        write = (m->rng >> 33) % 100 < 5;
        l = injected(m->turns++) ? &m->injected : write ? &m->exclusive : &m->shared;
        if (redlock_socket_acquire(l) != REDLOCK_OK) {
            m->refused++;
            if (l == &m->injected) nanosleep(&ms1, NULL); /* as after a turn */
            continue;
        }
        nanosleep(&ms1, NULL); /* hold */
        if (redlock_socket_release(l) != REDLOCK_OK) m->refused++;
        else if (write) m->writes++;
        else m->reads++;
        nanosleep(&ms1, NULL); /* other work */
    }
    return NULL;
}

/* One reader's client and its locks: shared, exclusive and, with
   --fail-every, the injected failure's (one try on a key another owner
   holds). 0, or -1 with nothing left open. */
static int rm_open(rm_member *m, const redis_nodes *rn, int rw)
{
    redlock_socket_config cfg;
    redlock_lock_opts o;
    int j;
    redlock_socket_config_init(&cfg);
    cfg.node_count = rn->n;
    for (j = 0; j < rn->n; j++) cfg.node[j].port = redis_nodes_port(rn, j);
    cfg.core.retry_count = 1000000; /* wait as long as it takes (the run bounds it) */
    cfg.core.retry_delay_ms = 2;
    cfg.core.retry_jitter_ms = 1;
    cfg.core.wait_ms = 10000;
    if (redlock_socket_init(&m->s, &cfg) != REDLOCK_OK) return -1;
    memset(&o, 0, sizeof o);
    o.key = "bench:read-mostly";
    o.ttl_ms = 10000;
    o.access = rw ? REDLOCK_ACCESS_SHARED : REDLOCK_ACCESS_DEFAULT;
    if (redlock_socket_connect(&m->s) != REDLOCK_OK || redlock_socket_lock_init(&m->s, &m->shared, &o) != REDLOCK_OK)
        goto no_shared;
    o.access = rw ? REDLOCK_ACCESS_EXCLUSIVE : REDLOCK_ACCESS_DEFAULT;
    if (redlock_socket_lock_init(&m->s, &m->exclusive, &o) != REDLOCK_OK) goto no_exclusive;
    o.access = REDLOCK_ACCESS_DEFAULT;
    o.key = INJECTED_KEY;
    o.retry_count = -1;
    if (fail_every && redlock_socket_lock_init(&m->s, &m->injected, &o) != REDLOCK_OK) goto no_injected;
    return 0;
no_injected:
    redlock_socket_lock_deinit(&m->exclusive);
no_exclusive:
    redlock_socket_lock_deinit(&m->shared);
no_shared:
    redlock_socket_deinit(&m->s);
    return -1;
}

static double read_mostly(const redis_nodes *rn, int rw, double seconds, double *write_share, long *failed, long *done)
{
    static rm_member m[READERS];
    int i;
    long reads = 0, writes = 0;
    int64_t t0;
    *failed = 0;
    for (i = 0; i < READERS; i++) {
        memset(&m[i], 0, sizeof m[i]);
        m[i].rng = 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1);
        m[i].open = rm_open(&m[i], rn, rw) == 0;
    }
    t0 = now_us();
    rm_until = t0 + (int64_t)(seconds * 1e6);
    for (i = 0; i < READERS; i++)
        if (m[i].open) pthread_create(&m[i].th, NULL, rm_main, &m[i]);
    for (i = 0; i < READERS; i++)
        if (m[i].open) pthread_join(m[i].th, NULL);
    t0 = now_us() - t0;
    for (i = 0; i < READERS; i++) {
        *failed += m[i].refused + !m[i].open;
        if (!m[i].open) continue;
        reads += m[i].reads;
        writes += m[i].writes;
        redlock_socket_lock_deinit(&m[i].shared);
        redlock_socket_lock_deinit(&m[i].exclusive);
        if (fail_every) redlock_socket_lock_deinit(&m[i].injected);
        redlock_socket_deinit(&m[i].s);
    }
    *done = reads + writes;
    *write_share = reads + writes ? 100.0 * writes / (reads + writes) : 0;
    return (reads + writes) / (t0 / 1e6);
}

/* ---- the limit: redis-benchmark, one process, as many connections as nodes ---- */

typedef struct limits {
    double set1, eval1, set64, eval64; /* requests/s per connection */
} limits;

/* Requests/s per connection of redis-benchmark -c N -P `pipeline` running
   `args` on node 0 (N = the node count): N requests (or N x pipeline) in
   flight from one client process, served by one CPU, as a round of the
   N-node cycle is; the other nodes idle meanwhile. 0 if it cannot run. */
static double node_rate(const redis_nodes *rn, int pipeline, int requests, const char *args)
{
    char cmd[512], line[512];
    double rps = 0;
    FILE *f;
    snprintf(cmd, sizeof cmd, "redis-benchmark -p %d -c %d -P %d -n %d -r 1000000 --csv %s 2>/dev/null",
             redis_nodes_port(rn, 0), rn->n, pipeline, requests * rn->n, args);
    if (!(f = popen(cmd, "r"))) return 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "\",\"");
        if (strncmp(line, "\"test\"", 6) != 0 && p && atof(p + 3) > 0) rps = atof(p + 3);
    }
    pclose(f);
    return rps / rn->n;
}

static double cycle_limit(double set, double eval) { return set > 0 && eval > 0 ? 1 / (1 / set + 1 / eval) : 0; }

static void measure_limits(const redis_nodes *rn, const char *sha, int requests, limits *l)
{
    char eval[256];
    const char *set = "SET 'bench:limit:__rand_int__' v NX PX 10000";
    snprintf(eval, sizeof eval, "EVALSHA %s 1 'bench:limit:__rand_int__' v", sha);
    l->set1 = node_rate(rn, 1, requests, set);
    l->eval1 = node_rate(rn, 1, requests, eval);
    l->set64 = node_rate(rn, DEPTH, requests * 4, set);
    l->eval64 = node_rate(rn, DEPTH, requests * 4, eval);
}

/* ---- the plot ---- */

/* The latency distribution (percentile against microseconds) of one
   transport, node count and operation, as one gnuplot data block. */
static void write_distribution(FILE *f, const char *title, int64_t *v, int n)
{
    int i;
    qsort(v, (size_t)n, sizeof *v, cmp_i64);
    fprintf(f, "# %s%s\n", title, n ? "" : ": no successful cycle");
    for (i = 0; i <= 1000 && n > 0; i++) fprintf(f, "%lld %.1f\n", (long long)quantile(v, n, i / 1000.0), i / 10.0);
    fprintf(f, "\n\n");
}

static int write_plot(const char *dir, const int *nodes, int nn)
{
    char path[512];
    FILE *f;
    int k, op, t;
    snprintf(path, sizeof path, "%s/latency.gp", dir);
    if (!(f = fopen(path, "w"))) return -1;
    fprintf(f, "# gnuplot %s/latency.gp: latency.dat as latency.png (written by bench_transport)\n"
               "set terminal pngcairo size 1600,900\nset output '%s/latency.png'\n"
               "set multiplot layout 2,%d title 'sequential acquire + release, one client: latency distribution'\n"
               "set logscale x\nset xlabel 'microseconds'\nset ylabel 'percentile'\nset key bottom right\n"
               "set grid\nset yrange [0:100]\n",
            dir, dir, nn);
    for (op = 0; op < 2; op++)
        for (k = 0; k < nn; k++) {
            fprintf(f, "set title '%s, %d node%s'\nplot ", op ? "release" : "acquire", nodes[k], nodes[k] > 1 ? "s" : "");
            for (t = 0; t < T_COUNT; t++)
                fprintf(f, "%s'%s/latency.dat' index %d using 1:2 with lines lw 2 title '%s'", t ? ", " : "", dir,
                        (k * 2 + op) * T_COUNT + t, t_name[t]);
            fprintf(f, "\n");
        }
    fprintf(f, "unset multiplot\n");
    fclose(f);
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        printf("\nplot: gnuplot not found, %s/latency.png not written (apt-get install gnuplot-nox)\n", dir);
        return 0;
    }
    snprintf(path, sizeof path, "gnuplot '%s/latency.gp'", dir);
    if (system(path) != 0) {
        printf("\nplot: gnuplot failed\n");
        return -1;
    }
    printf("\nplot: %s/latency.png (data %s/latency.dat)\n", dir, dir);
    return 0;
}

/* ---- the tables ---- */

/* p50/p99/p99.9 of a row, or "-" if no cycle succeeded. */
static void quantiles_text(char *buf, size_t cap, const int64_t *q, long ok)
{
    if (ok) snprintf(buf, cap, "%lld/%lld/%lld", (long long)q[0], (long long)q[1], (long long)q[2]);
    else snprintf(buf, cap, "-");
}

static void print_row(FILE *csv, int t, int nodes, int run, const row *r, const limits *l)
{
    char a[40], re[40];
    double lim = cycle_limit(l->set1, l->eval1), lim64 = cycle_limit(l->set64, l->eval64);
    quantiles_text(a, sizeof a, r->acq, r->ok);
    quantiles_text(re, sizeof re, r->rel, r->ok);
    printf("%-14s %5d %3d %8.0f %6ld %17s %17s %6.1f %6.1f %7.0f %5.0f%% %8.0f %6ld %7.0f %5.0f%%\n", t_name[t], nodes,
           run + 1, r->rate, r->failed, a, re, r->cpu_us, r->allocs, lim, lim > 0 ? 100 * r->rate / lim : 0,
           r->inflight, r->inflight_failed, lim64, lim64 > 0 ? 100 * r->inflight / lim64 : 0);
    if (csv)
        fprintf(csv, "%s,%d,%d,%.0f,%lld,%lld,%lld,%lld,%lld,%lld,%.1f,%.2f,%.0f,%.0f,%.0f,%.3f,%.0f,%.0f,%.0f,%.0f,%.3f,"
                     "%ld,%ld\n",
                t_name[t], nodes, run + 1, r->rate, (long long)r->acq[0], (long long)r->acq[1], (long long)r->acq[2],
                (long long)r->rel[0], (long long)r->rel[1], (long long)r->rel[2], r->cpu_us, r->allocs, l->set1,
                l->eval1, lim, lim > 0 ? r->rate / lim : 0, r->inflight, l->set64, l->eval64, lim64,
                lim64 > 0 ? r->inflight / lim64 : 0, r->failed, r->inflight_failed);
}

static void print_crow(FILE *csv, int t, int nodes, int retry, int run, const crow *r)
{
    char h[40], fair[40];
    double mean = (double)r->total / CONTENDERS, least = mean > 0 ? 100 * r->lo / mean : 0;
    if (r->total) snprintf(h, sizeof h, "%lld/%lld", (long long)r->p50, (long long)r->p99);
    else snprintf(h, sizeof h, "-");
    snprintf(fair, sizeof fair, "%d/%d", r->lo, r->hi);
    printf("%-14s %5d %-8s %3d %8.0f %15s %11s %8.0f%% %8d %6d\n", t_name[t], nodes, setting_name[retry],
           run + 1, r->rate, h, fair, least, r->gave_up, r->failed);
    if (csv)
        fprintf(csv, "%s,%d,%s,%d,%.0f,%lld,%lld,%d,%d,%.3f,%d,%d\n", t_name[t], nodes, setting_name[retry],
                run + 1, r->rate, (long long)r->p50, (long long)r->p99, r->lo, r->hi, least / 100, r->gave_up,
                r->failed);
}

static void usage(void)
{
    fprintf(stderr, "usage: bench_transport [--cycles N] [--nodes 1,3,5] [--contend SECONDS] [--server-cpu C] [--out DIR]\n"
                    "                       [--fail-every N]\n");
}

int main(int argc, char **argv)
{
    int cycles = 2000, server_cpu = -1, nodes[MAX_K] = { 1, 3, 5 }, nn = 3, k, t, i, run, retry, rc = 0;
    const char *out = NULL;
    FILE *csv = NULL, *ccsv = NULL, *dat = NULL;
    int64_t *acq, *rel, *dist[MAX_K][T_COUNT][2];
    long dist_n[MAX_K][T_COUNT]; /* successful cycles in dist[k][t][*], both runs */
    double seconds = 1.0;
    static row rows[MAX_K][RUNS][T_COUNT];
    static limits lim[MAX_K][RUNS];
    static crow crows[MAX_K][SETTINGS][RUNS][T_COUNT];
    double ceiling[MAX_K][RUNS], hold_us = 0;
    int ceiling_broke[MAX_K][RUNS];
    static row fenced[MAX_K][RUNS][2]; /* socket, sequential: [0] plain, [1] fenced, side by side */
    double rmost[MAX_K][RUNS][2], rmost_w[MAX_K][RUNS][2]; /* read-mostly: [0] plain, [1] readers-writer */
    long rmost_failed[MAX_K][RUNS][2];
    char name[128];
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc) cycles = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--server-cpu") && i + 1 < argc) server_cpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--contend") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--fail-every") && i + 1 < argc) fail_every = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            char *p = argv[++i];
            for (nn = 0; nn < MAX_K && *p; nn++) {
                nodes[nn] = (int)strtol(p, &p, 10);
                if (*p == ',') p++;
                else if (*p) break;
            }
            if (*p) {
                usage();
                return 64;
            }
        } else {
            usage();
            return 64;
        }
    }
    for (k = 0; k < nn; k++)
        if (nodes[k] < 1 || nodes[k] > 16) {
            fprintf(stderr, "bench_transport: node counts are 1..16\n");
            return 64;
        }
    if (cycles < 100 || cycles > 10000000) {
        fprintf(stderr, "bench_transport: --cycles must be 100..10000000\n");
        return 64;
    }
    if (!(seconds > 0 && seconds <= 600)) {
        fprintf(stderr, "bench_transport: --contend must be in (0, 600] seconds\n");
        return 64;
    }
    if (fail_every < 0) {
        fprintf(stderr, "bench_transport: --fail-every must be 1 or more\n");
        return 64;
    }
    acq = (int64_t *)malloc((size_t)cycles * sizeof *acq);
    rel = (int64_t *)malloc((size_t)cycles * sizeof *rel);
    if (!acq || !rel) return 70;
    for (k = 0; k < nn; k++)
        for (t = 0; t < T_COUNT; t++) {
            dist_n[k][t] = 0;
            for (i = 0; i < 2; i++)
                if (!(dist[k][t][i] = (int64_t *)malloc((size_t)cycles * RUNS * sizeof(int64_t)))) return 70;
        }
    if (out) {
        char path[512];
        snprintf(path, sizeof path, "%s/transport.csv", out);
        csv = fopen(path, "w");
        snprintf(path, sizeof path, "%s/contention.csv", out);
        ccsv = fopen(path, "w");
        snprintf(path, sizeof path, "%s/latency.dat", out);
        dat = fopen(path, "w");
        if (!csv || !ccsv || !dat) {
            fprintf(stderr, "bench_transport: cannot write in %s\n", out);
            return 73;
        }
        fprintf(csv, "transport,nodes,run,cycles_per_s,acquire_p50_us,acquire_p99_us,acquire_p999_us,release_p50_us,"
                     "release_p99_us,release_p999_us,cpu_us_per_cycle,allocs_per_cycle,set_rps_c1,evalsha_rps_c1,"
                     "limit_cycles_per_s,ratio,inflight64_cycles_per_s,set_rps_p64,evalsha_rps_p64,"
                     "limit64_cycles_per_s,ratio64,failed_cycles,failed_inflight64\n");
        fprintf(ccsv, "transport,nodes,retry,run,acquisitions_per_s,handoff_p50_us,handoff_p99_us,min_per_client,"
                      "max_per_client,min_over_mean,gave_up,failed\n");
    }
    redis_nodes_deadline(900);
    for (k = 0; k < nn; k++) {
        redis_nodes rn;
        char sha[128];
        fprintf(stderr, "bench_transport: %d node%s ...\n", nodes[k], nodes[k] > 1 ? "s" : "");
        if (redis_nodes_start(&rn, nodes[k], NULL, NULL) != 0) {
            fprintf(stderr, "bench_transport: cannot start %d redis-servers\n", nodes[k]);
            return 1;
        }
        for (i = 0; i < rn.n; i++) {
            char cmd[64];
            if (server_cpu >= 0) {
                snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", server_cpu, (int)rn.node[i].pid);
                if (system(cmd) != 0) fprintf(stderr, "bench_transport: could not pin a server\n");
            }
            redis_nodes_cmd(&rn, i, sha, sizeof sha, "SCRIPT", "LOAD", redlock_release_script(), (char *)NULL);
            if (fail_every) { /* the injected failures' key: held by another owner */
                char reply[128];
                redis_nodes_cmd(&rn, i, reply, sizeof reply, "SET", INJECTED_KEY, "another-owner", (char *)NULL);
            }
        }
        for (run = 0; run < RUNS; run++) {
            measure_limits(&rn, sha, cycles * 4, &lim[k][run]); /* about half a second each */
            for (i = 0; i < T_COUNT; i++) {
                client c;
                row *r;
                t = run % 2 ? T_COUNT - 1 - i : i; /* the second run in the opposite order */
                r = &rows[k][run][t];
                memset(r, 0, sizeof *r);
                if (client_open(&c, t, &rn, R_NONE) == 0) {
                    sequential(&c, nodes[k], run, cycles, acq, rel, r);
                    inflight(&c, nodes[k], run, cycles * 4 / DEPTH + 1, r);
                    client_close(&c);
                } else { /* every cycle of the row failed */
                    r->failed = cycles;
                    r->inflight_failed = (long)DEPTH * (cycles * 4 / DEPTH + 1);
                }
                snprintf(name, sizeof name, "%s, %d node%s, run %d, sequential", t_name[t], nodes[k],
                         nodes[k] > 1 ? "s" : "", run + 1);
                row_failures(name, r->failed, r->ok);
                snprintf(name, sizeof name, "%s, %d node%s, run %d, %d in flight", t_name[t], nodes[k],
                         nodes[k] > 1 ? "s" : "", run + 1, DEPTH);
                row_failures(name, r->inflight_failed, r->inflight_ok);
                memcpy(dist[k][t][0] + dist_n[k][t], acq, (size_t)r->ok * sizeof *acq);
                memcpy(dist[k][t][1] + dist_n[k][t], rel, (size_t)r->ok * sizeof *rel);
                dist_n[k][t] += r->ok;
                qsort(acq, (size_t)r->ok, sizeof *acq, cmp_i64);
                qsort(rel, (size_t)r->ok, sizeof *rel, cmp_i64);
                r->acq[0] = quantile(acq, (int)r->ok, 0.5);
                r->acq[1] = quantile(acq, (int)r->ok, 0.99);
                r->acq[2] = quantile(acq, (int)r->ok, 0.999);
                r->rel[0] = quantile(rel, (int)r->ok, 0.5);
                r->rel[1] = quantile(rel, (int)r->ok, 0.99);
                r->rel[2] = quantile(rel, (int)r->ok, 0.999);
            }
        }
        for (run = 0; run < RUNS; run++) /* the fence's round trip: plain and fenced, interleaved */
            for (i = 0; i < 2; i++) {
                client c;
                int f = run % 2 ? 1 - i : i;
                row *r = &fenced[k][run][f];
                memset(r, 0, sizeof *r);
                bench_fence = f;
                if (client_open(&c, T_SOCKET, &rn, R_NONE) == 0) {
                    sequential(&c, nodes[k], 10 + run * 2 + f, cycles, acq, rel, r);
                    client_close(&c);
                } else
                    r->failed = cycles;
                snprintf(name, sizeof name, "socket, %d node%s, run %d, %s", nodes[k], nodes[k] > 1 ? "s" : "", run + 1,
                         f ? "fenced" : "plain (beside fenced)");
                row_failures(name, r->failed, r->ok);
                qsort(acq, (size_t)r->ok, sizeof *acq, cmp_i64);
                r->acq[0] = quantile(acq, (int)r->ok, 0.5);
                r->acq[1] = quantile(acq, (int)r->ok, 0.99);
            }
        bench_fence = 0;
        for (run = 0; run < RUNS; run++) /* read-mostly: plain and readers-writer, interleaved */
            for (i = 0; i < 2; i++) {
                int rw = run % 2 ? 1 - i : i;
                long done;
                rmost[k][run][rw] = read_mostly(&rn, rw, seconds, &rmost_w[k][run][rw], &rmost_failed[k][run][rw], &done);
                snprintf(name, sizeof name, "read-mostly %s, %d node%s, run %d", rw ? "rw" : "plain", nodes[k],
                         nodes[k] > 1 ? "s" : "", run + 1);
                row_failures(name, rmost_failed[k][run][rw], done);
            }
        for (retry = 0; retry < SETTINGS; retry++)
            for (run = 0; run < RUNS; run++)
                for (i = 0; i < T_COUNT; i++) {
                    crow *cr = &crows[k][retry][run][t = run % 2 ? T_COUNT - 1 - i : i];
                    if (contend(t, &rn, seconds, R_DEFAULT + retry, cr) != 0) {
                        fprintf(stderr, "bench_transport: out of memory\n");
                        redis_nodes_stop(&rn);
                        return 70;
                    }
                    snprintf(name, sizeof name, "contention %s %s, %d node%s, run %d", t_name[t],
                             setting_name[R_DEFAULT + retry], nodes[k], nodes[k] > 1 ? "s" : "", run + 1);
                    row_failures(name, cr->failed, cr->total);
                }
        for (run = 0; run < RUNS; run++)
            if (nodes[k] == 1) {
                long total;
                ceiling[k][run] = ring(redis_nodes_port(&rn, 0), seconds, &ceiling_broke[k][run], &total);
                snprintf(name, sizeof name, "ceiling ring (members broke / hand-offs), run %d", run + 1);
                row_failures(name, ceiling_broke[k][run], total);
            }
        redis_nodes_stop(&rn);
    }

    printf("sequential acquire + release on a fresh key, %d cycles per row, one client; then %d locks in flight\n"
           "limit: redis-benchmark -c <nodes> on node 0 (one process, pinned like the client), per connection,\n"
           "SET NX PX and EVALSHA of the release script: 1 / (1/set + 1/evalsha), at -P 1 and at -P %d\n"
           "failed: cycles that failed, left out of the rates and latencies (the successful cycles' own);\n"
           "CPU us and allocs: per cycle, failed ones included\n\n",
           cycles, DEPTH, DEPTH);
    printf("%-14s %5s %3s %8s %6s %17s %17s %6s %6s %7s %6s %8s %6s %7s %6s\n", "transport", "nodes", "run",
           "cycles/s", "failed", "acquire p50/99/99.9", "release p50/99/99.9", "CPU us", "allocs", "limit", "ratio",
           "64 in fl.", "failed", "limit", "ratio");
    for (k = 0; k < nn; k++) {
        printf("%-14s %5d %3s  limit: SET %.0f/s, EVALSHA %.0f/s per connection (run 1); %.0f/s, %.0f/s (run 2); -P %d: "
               "%.0f/s, %.0f/s; %.0f/s, %.0f/s\n",
               "", nodes[k], "", lim[k][0].set1, lim[k][0].eval1, lim[k][1].set1, lim[k][1].eval1, DEPTH,
               lim[k][0].set64, lim[k][0].eval64, lim[k][1].set64, lim[k][1].eval64);
        for (t = 0; t < T_COUNT; t++)
            for (run = 0; run < RUNS; run++) print_row(csv, t, nodes[k], run, &rows[k][run][t], &lim[k][run]);
    }

    printf("\nfenced locks (section 11): the raw-socket transport's sequential cycles (acquire + release on a\n"
           "fresh key), plain and fenced side by side; the fenced acquire adds the write-back's round trip\n\n");
    printf("%5s %3s %10s %10s %7s %21s %21s %13s\n", "nodes", "run", "plain/s", "fenced/s", "ratio",
           "plain acq. p50/99 us", "fenced acq. p50/99 us", "failed p/f");
    for (k = 0; k < nn; k++)
        for (run = 0; run < RUNS; run++) {
            const row *pl = &fenced[k][run][0], *fe = &fenced[k][run][1];
            char pq[48], fq[48], fails[32];
            if (pl->ok) snprintf(pq, sizeof pq, "%14lld/%-6lld", (long long)pl->acq[0], (long long)pl->acq[1]);
            else snprintf(pq, sizeof pq, "%21s", "-");
            if (fe->ok) snprintf(fq, sizeof fq, "%14lld/%-6lld", (long long)fe->acq[0], (long long)fe->acq[1]);
            else snprintf(fq, sizeof fq, "%21s", "-");
            snprintf(fails, sizeof fails, "%ld/%ld", pl->failed, fe->failed);
            printf("%5d %3d %10.0f %10.0f %6.0f%% %s %s %13s\n", nodes[k], run + 1, pl->rate, fe->rate,
                   pl->rate > 0 ? 100.0 * fe->rate / pl->rate : 0.0, pq, fq, fails);
        }

    printf("\nread-mostly: %d clients (raw socket, threads) on one key for %.1f s, each turn a read (95%%) or a\n"
           "write, held 1 ms, then 1 ms of other work; rw: shared holds for reads, exclusive for writes;\n"
           "plain: the plain lock for every turn; failed: turns that did not acquire and release, left out\n\n",
           READERS, seconds);
    printf("%5s %3s %12s %12s %7s %10s %13s\n", "nodes", "run", "plain/s", "rw/s", "ratio", "writes", "failed p/rw");
    for (k = 0; k < nn; k++)
        for (run = 0; run < RUNS; run++) {
            char fails[48];
            snprintf(fails, sizeof fails, "%ld/%ld", rmost_failed[k][run][0], rmost_failed[k][run][1]);
            printf("%5d %3d %12.0f %12.0f %6.1fx %9.1f%% %13s\n", nodes[k], run + 1, rmost[k][run][0], rmost[k][run][1],
                   rmost[k][run][0] > 0 ? rmost[k][run][1] / rmost[k][run][0] : 0.0, rmost_w[k][run][1], fails);
        }

    printf("\ncontention: %d clients of one transport (threads, connections of their own) take turns on one key\n"
           "for %.1f s, each holding it about 1 ms and pausing 1 ms before asking again. default: the library's\n"
           "settings (3 retries, 200 +- 100 ms apart, release notifications on; an acquire that used its retries\n"
           "up asks again: gave up); no notif: the same without notifications; tuned: no notifications, retry\n"
           "every 1 ms +- 1 ms, wait up to 10 s. failed: turns that ended in an error (not a lost race) or\n"
           "whose release failed, left out of the acquisitions\n\n",
           CONTENDERS, seconds);
    printf("%-14s %5s %-8s %3s %8s %15s %11s %9s %8s %6s\n", "transport", "nodes", "retry", "run", "acq./s",
           "hand-off p50/99", "min/max", "min/mean", "gave up", "failed");
    for (k = 0; k < nn; k++)
        for (retry = 0; retry < SETTINGS; retry++)
            for (t = 0; t < T_COUNT; t++)
                for (run = 0; run < RUNS; run++)
                    print_crow(ccsv, t, nodes[k], R_DEFAULT + retry, run, &crows[k][retry][run][t]);
    hold_us = sleep_1ms_us(500);
    for (k = 0; k < nn; k++)
        if (nodes[k] == 1) {
            printf("\nceiling on 1 node: the same %d threads hand the key round a ring, each holder's release a script\n"
                   "that sets it for the next and publishes to it (no race, no retry, one wake per hand-off):\n"
                   "%.0f / %.0f hand-offs/s; a 1 ms nanosleep lasts %.0f us here, so holds alone allow %.0f/s\n",
                   CONTENDERS, ceiling[k][0], ceiling[k][1], hold_us, 1e6 / hold_us);
            if (ceiling_broke[k][0] || ceiling_broke[k][1])
                printf("failed: the ring broke at %d / %d of its members (a wait of 2 s or a script failed)\n",
                       ceiling_broke[k][0], ceiling_broke[k][1]);
            for (run = 0; run < RUNS && ccsv; run++)
                fprintf(ccsv, "ceiling,1,ring,%d,%.0f,,,,,,,%d\n", run + 1, ceiling[k][run], ceiling_broke[k][run]);
        }

    if (dat) {
        for (k = 0; k < nn; k++)
            for (i = 0; i < 2; i++)
                for (t = 0; t < T_COUNT; t++) {
                    char title[96];
                    snprintf(title, sizeof title, "%s, %d nodes, %s", t_name[t], nodes[k], i ? "release" : "acquire");
                    write_distribution(dat, title, dist[k][t][i], (int)dist_n[k][t]);
                }
        fclose(dat);
    }
    if (csv) fclose(csv);
    if (ccsv) fclose(ccsv);
    if (out) {
        printf("\nfiles: %s/transport.csv, %s/contention.csv\n", out, out);
        if (write_plot(out, nodes, nn) != 0) rc = 1;
    }
    for (k = 0; k < nn; k++)
        for (t = 0; t < T_COUNT; t++) {
            free(dist[k][t][0]);
            free(dist[k][t][1]);
        }
    free(acq);
    free(rel);
    if (failed_row_count) { /* a row with failures and successes is a measurement; one without success is not */
        fprintf(stderr, "bench_transport: %d row%s without a success: %s\n", failed_row_count,
                failed_row_count > 1 ? "s" : "", failed_rows);
        rc = 1;
    }
    return rc;
}
