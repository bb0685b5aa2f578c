/* bench/bench_transport.c - every transport side by side with the Redis
   limit, on the same redis-server nodes in one run.

   For 1, 3 and 5 nodes (started here on loopback, pinned to --server-cpu)
   and each transport (hiredis sync, hiredis async on libev, raw socket),
   one client does sequential acquire + release cycles, each on a fresh
   key: cycles/s, acquire and release latency (p50, p99, p99.9) and the
   client's CPU per cycle (user + sys). The limit is redis-benchmark on
   node 0 for the same command (SET key value NX PX, -c 1 -P 1): a cycle
   is two round trips, so the sequential limit is half its rate; each row
   prints its ratio to that. Rows also go to a CSV file (--csv).

   Usage: bench_transport [--cycles N] [--nodes 1,3,5] [--server-cpu C] [--csv FILE]
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

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <time.h>

enum { T_HIREDIS, T_LIBEV, T_SOCKET, T_COUNT };
static const char *const t_name[T_COUNT] = { "hiredis sync", "hiredis libev", "raw socket" };

static int64_t now_us(void) { return redlock_socket_now_us(); }


static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The q-quantile of n sorted values. */
static int64_t quantile(const int64_t *v, int n, double q)
{
    int k = (int)(q * (n - 1) + 0.5);
    return v[k < 0 ? 0 : k >= n ? n - 1 : k];
}

/* ---- one client per transport, driven the same way: acquire, release ---- */

typedef struct client {
    int t;
    redlock_socket s;
    redlock_hiredis h;
    redlock_libev e;
    struct ev_loop *loop;
    redlock_lock lock;           /* libev: the core lock */
    redlock_socket_lock slock;
    redlock_hiredis_lock hlock;
    int done, status;            /* libev: the result of the operation in flight */
} client;

static void on_result(redlock_lock *lk, const redlock_result *r)
{
    client *c = (client *)r->user;
    (void)lk;
    c->done = 1;
    c->status = r->status;
}

/* retry: contenders retry every 2 ms (+0..2 ms) for up to 10 s; otherwise
   one attempt. */
static void core_retry(redlock_config *core, int retry)
{
    core->retry_count = retry ? 1000000 : -1;
    core->retry_delay_ms = 2;
    core->retry_jitter_ms = 2;
    core->wait_ms = 10000;
}

static int client_open(client *c, int t, const redis_nodes *rn, int retry)
{
    int i, n = rn->n;
    memset(c, 0, sizeof *c);
    c->t = t;
    if (t == T_SOCKET) {
        redlock_socket_config cfg;
        redlock_socket_config_init(&cfg);
        cfg.node_count = n;
        for (i = 0; i < n; i++) cfg.node[i].port = redis_nodes_port(rn, i);
        core_retry(&cfg.core, retry);
        return redlock_socket_init(&c->s, &cfg) == REDLOCK_OK && redlock_socket_connect(&c->s) == REDLOCK_OK ? 0 : -1;
    } else {
        redlock_hiredis_config cfg;
        redlock_hiredis_config_init(&cfg);
        cfg.node_count = n;
        for (i = 0; i < n; i++) cfg.node[i].port = redis_nodes_port(rn, i);
        core_retry(&cfg.core, retry);
        if (t == T_HIREDIS) return redlock_hiredis_init(&c->h, &cfg) == REDLOCK_OK ? 0 : -1;
        c->loop = ev_loop_new(EVFLAG_AUTO);
        return c->loop && redlock_libev_init(&c->e, c->loop, &cfg) == REDLOCK_OK ? 0 : -1;
    }
}

static void client_close(client *c)
{
    if (c->t == T_SOCKET) redlock_socket_deinit(&c->s);
    else if (c->t == T_HIREDIS) redlock_hiredis_deinit(&c->h);
    else {
        redlock_libev_deinit(&c->e);
        ev_loop_destroy(c->loop);
    }
}

static int client_lock(client *c, const char *key)
{
    redlock_lock_opts o;
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = 10000;
    if (c->t == T_SOCKET) return redlock_socket_lock_init(&c->s, &c->slock, &o);
    if (c->t == T_HIREDIS) return redlock_hiredis_lock_init(&c->h, &c->hlock, &o);
    o.on_result = on_result;
    o.user = c;
    return redlock_lock_init(&c->lock, redlock_libev_client(&c->e), &o);
}

static void client_unlock(client *c)
{
    if (c->t == T_SOCKET) redlock_socket_lock_deinit(&c->slock);
    else if (c->t == T_HIREDIS) redlock_hiredis_lock_deinit(&c->hlock);
    else redlock_lock_deinit(&c->lock);
}

/* The libev loop until the operation's result (at most 10 s). */
static int libev_wait(client *c, int rc)
{
    int64_t until = now_us() + 10000000;
    if (rc != REDLOCK_OK) return rc;
    while (!c->done && now_us() < until) ev_run(c->loop, EVRUN_ONCE);
    return c->done ? c->status : REDLOCK_ERR_TIMEOUT;
}

static int client_acquire(client *c)
{
    if (c->t == T_SOCKET) return redlock_socket_acquire(&c->slock);
    if (c->t == T_HIREDIS) return redlock_hiredis_acquire(&c->hlock);
    c->done = 0;
    return libev_wait(c, redlock_acquire(&c->lock));
}

static int client_release(client *c)
{
    if (c->t == T_SOCKET) return redlock_socket_release(&c->slock);
    if (c->t == T_HIREDIS) return redlock_hiredis_release(&c->hlock);
    c->done = 0;
    return libev_wait(c, redlock_release(&c->lock));
}

/* ---- many locks in flight over one connection per node ---- */

#define DEPTH 64
static int inflight_results, inflight_failed;

static void on_inflight(redlock_lock *lk, const redlock_result *r)
{
    (void)lk;
    inflight_results++;
    inflight_failed += r->status != REDLOCK_OK;
}

static redlock_client *client_core(client *c)
{
    return c->t == T_SOCKET ? redlock_socket_client(&c->s) : c->t == T_HIREDIS ? redlock_hiredis_client(&c->h)
                                                                             : redlock_libev_client(&c->e);
}

/* One turn of the client's loop. */
static void client_turn(client *c)
{
    if (c->t == T_SOCKET) redlock_socket_run(&c->s, 0); /* what is ready, no wait: a run(ms) lasts ms */
    else if (c->t == T_HIREDIS) redlock_hiredis_run(&c->h, 0);
    else ev_run(c->loop, EVRUN_ONCE);
}

/* DEPTH locks acquired at once with the core's non-blocking calls, then
   released at once, `rounds` times: cycles/s, or -1 if one failed. */
static double inflight(client *c, int nodes, int rounds)
{
    static redlock_lock locks[DEPTH];
    static char keys[DEPTH][48];
    redlock_lock_opts o;
    int64_t t0;
    int i, r, op, ok = 1;
    memset(&o, 0, sizeof o);
    o.ttl_ms = 10000;
    o.on_result = on_inflight;
    for (i = 0; i < DEPTH; i++) {
        snprintf(keys[i], sizeof keys[i], "bench:inflight:%d:%d:%d", nodes, c->t, i);
        o.key = keys[i];
        if (redlock_lock_init(&locks[i], client_core(c), &o) != REDLOCK_OK) return -1;
    }
    t0 = now_us();
    for (r = 0; r < rounds && ok; r++)
        for (op = 0; op < 2 && ok; op++) {
            int64_t until = now_us() + 10000000;
            inflight_results = inflight_failed = 0;
            for (i = 0; i < DEPTH; i++)
                if ((op ? redlock_release(&locks[i]) : redlock_acquire(&locks[i])) != REDLOCK_OK) ok = 0;
            while (ok && inflight_results < DEPTH && now_us() < until) client_turn(c);
            ok = ok && inflight_results == DEPTH && inflight_failed == 0;
        }
    t0 = now_us() - t0;
    for (i = 0; i < DEPTH; i++) redlock_lock_deinit(&locks[i]);
    return ok ? (double)DEPTH * rounds / (t0 / 1e6) : -1;
}

/* ---- contention: 16 clients, one key, each holding about 1 ms ---- */

#define CONTENDERS 16
typedef struct contender {
    client c;
    const redis_nodes *rn;
    int t, wins, failed;
    pthread_t th;
} contender;

static pthread_mutex_t handoff_mu = PTHREAD_MUTEX_INITIALIZER;
static int64_t handoff_release_us, handoff_until_us;
static int64_t *handoff;
static int handoffs, handoff_cap;

static void *contend_main(void *arg)
{
    contender *x = (contender *)arg;
    struct timespec hold = { 0, 1000000 };
    if (client_lock(&x->c, "bench:contended") != REDLOCK_OK) {
        x->failed++;
        return NULL;
    }
    while (now_us() < handoff_until_us) {
        int64_t at;
        if (client_acquire(&x->c) != REDLOCK_OK) {
            x->failed++;
            continue;
        }
        at = now_us();
        pthread_mutex_lock(&handoff_mu);
        if (handoff_release_us && handoffs < handoff_cap) handoff[handoffs++] = at - handoff_release_us;
        pthread_mutex_unlock(&handoff_mu);
        x->wins++;
        nanosleep(&hold, NULL);
        if (client_release(&x->c) != REDLOCK_OK) x->failed++;
        pthread_mutex_lock(&handoff_mu);
        handoff_release_us = now_us();
        pthread_mutex_unlock(&handoff_mu);
    }
    client_unlock(&x->c);
    return NULL;
}

/* CONTENDERS clients of transport t, each with its connections, take
   turns on one key for `seconds`: acquisitions/s, hand-off latency
   (release done -> next holder's acquire done) p50 / p99 in *p50 / *p99,
   min and max acquisitions per client. -1 if a client failed. */
static double contend(int t, const redis_nodes *rn, double seconds, int64_t *p50, int64_t *p99, int *lo, int *hi)
{
    static contender x[CONTENDERS];
    int i, total = 0, bad = 0;
    int64_t t0;
    handoff_cap = 1000000;
    handoff = (int64_t *)malloc((size_t)handoff_cap * sizeof *handoff);
    if (!handoff) return -1;
    handoffs = 0;
    handoff_release_us = 0;
    for (i = 0; i < CONTENDERS; i++) {
        memset(&x[i], 0, sizeof x[i]);
        x[i].t = t;
        x[i].rn = rn;
        if (client_open(&x[i].c, t, rn, 1) != 0) return -1;
    }
    t0 = now_us();
    handoff_until_us = t0 + (int64_t)(seconds * 1e6);
    for (i = 0; i < CONTENDERS; i++) pthread_create(&x[i].th, NULL, contend_main, &x[i]);
    for (i = 0; i < CONTENDERS; i++) pthread_join(x[i].th, NULL);
    t0 = now_us() - t0;
    *lo = *hi = x[0].wins;
    for (i = 0; i < CONTENDERS; i++) {
        total += x[i].wins;
        bad += x[i].failed;
        if (x[i].wins < *lo) *lo = x[i].wins;
        if (x[i].wins > *hi) *hi = x[i].wins;
        client_close(&x[i].c);
    }
    qsort(handoff, (size_t)handoffs, sizeof *handoff, cmp_i64);
    *p50 = handoffs ? quantile(handoff, handoffs, 0.5) : -1;
    *p99 = handoffs ? quantile(handoff, handoffs, 0.99) : -1;
    free(handoff);
    return bad ? -1 : total / (t0 / 1e6);
}

/* ---- the limit: redis-benchmark on node 0 ---- */

/* requests/s of redis-benchmark -c 1 -P 1 for SET key value NX PX on a
   random key, or 0 if it cannot run. */
static double redis_limit(int port, int n)
{
    char cmd[256], line[256];
    double rps = 0;
    FILE *f;
    snprintf(cmd, sizeof cmd,
             "redis-benchmark -p %d -c 1 -P 1 -n %d -r 1000000 --csv SET 'bench:limit:__rand_int__' v NX PX 10000 2>/dev/null",
             port, n);
    if (!(f = popen(cmd, "r"))) return 0;
    while (fgets(line, sizeof line, f)) {
        const char *p = strstr(line, "\",\"");
        if (strncmp(line, "\"SET", 4) == 0 && p) rps = atof(p + 3);
    }
    pclose(f);
    return rps;
}

int main(int argc, char **argv)
{
    int cycles = 2000, server_cpu = -1, nodes[8] = { 1, 3, 5 }, nn = 3, k, t, i;
    const char *csv_path = NULL;
    FILE *csv = NULL;
    int64_t *acq, *rel;
    double seconds = 1.0;
    struct { double rate; int64_t p50, p99; int lo, hi; } ct[8][T_COUNT];
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--cycles") && i + 1 < argc) cycles = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--server-cpu") && i + 1 < argc) server_cpu = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--csv") && i + 1 < argc) csv_path = argv[++i];
        else if (!strcmp(argv[i], "--contend") && i + 1 < argc) seconds = atof(argv[++i]);
        else if (!strcmp(argv[i], "--nodes") && i + 1 < argc) {
            char *p = argv[++i];
            for (nn = 0; nn < 8 && *p; nn++) {
                nodes[nn] = (int)strtol(p, &p, 10);
                if (*p == ',') p++;
            }
        } else {
            fprintf(stderr, "usage: bench_transport [--cycles N] [--nodes 1,3,5] [--contend SECONDS] [--server-cpu C] [--csv FILE]\n");
            return 64;
        }
    }
    for (k = 0; k < nn; k++)
        if (nodes[k] < 1 || nodes[k] > 16) {
            fprintf(stderr, "bench_transport: node counts are 1..16\n");
            return 64;
        }
    if (cycles < 10) {
        fprintf(stderr, "bench_transport: --cycles must be at least 10\n");
        return 64;
    }
    acq = (int64_t *)malloc((size_t)cycles * sizeof *acq);
    rel = (int64_t *)malloc((size_t)cycles * sizeof *rel);
    if (!acq || !rel) return 70;
    if (csv_path && !(csv = fopen(csv_path, "w"))) {
        fprintf(stderr, "bench_transport: cannot write %s\n", csv_path);
        return 73;
    }
    if (csv)
        fprintf(csv, "transport,nodes,cycles_per_s,acquire_p50_us,acquire_p99_us,acquire_p999_us,"
                     "release_p50_us,release_p99_us,release_p999_us,cpu_us_per_cycle,limit_cycles_per_s,ratio,"
                     "inflight64_cycles_per_s,contended_per_s,handoff_p50_us,handoff_p99_us,min_per_client,max_per_client\n");
    redis_nodes_deadline(900);
    printf("sequential acquire + release on a fresh key, %d cycles per row; limit: redis-benchmark\n"
           "-c 1 -P 1 SET key v NX PX on node 0, halved (a cycle is two round trips)\n\n", cycles);
    printf("%-14s %5s %9s %24s %24s %8s %9s %6s %10s\n", "transport", "nodes", "cycles/s", "acquire p50/p99/p99.9 us",
           "release p50/p99/p99.9 us", "CPU us", "limit", "ratio", "64 in fl.");
    for (k = 0; k < nn; k++) {
        redis_nodes rn;
        double limit;
        if (redis_nodes_start(&rn, nodes[k], NULL, NULL) != 0) {
            fprintf(stderr, "bench_transport: cannot start %d redis-servers\n", nodes[k]);
            return 1;
        }
        if (server_cpu >= 0)
            for (i = 0; i < rn.n; i++) {
                char cmd[64];
                snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", server_cpu, (int)rn.node[i].pid);
                if (system(cmd) != 0) fprintf(stderr, "bench_transport: could not pin a server\n");
            }
        limit = redis_limit(redis_nodes_port(&rn, 0), cycles * 4) / 2;
        for (t = 0; t < T_COUNT; t++) {
            client c;
            char key[64];
            double c0 = bench_cpu_s(), wall;
            int64_t t0, start = now_us();
            int ok = 1;
            if (client_open(&c, t, &rn, 0) != 0) {
                fprintf(stderr, "bench_transport: %s cannot connect\n", t_name[t]);
                return 1;
            }
            for (i = -cycles / 10; i < cycles && ok; i++) { /* the first tenth warms up */
                snprintf(key, sizeof key, "bench:transport:%d:%d:%d", nodes[k], t, i);
                ok = client_lock(&c, key) == REDLOCK_OK;
                if (i == 0) {
                    c0 = bench_cpu_s();
                    start = now_us();
                }
                t0 = now_us();
                ok = ok && client_acquire(&c) == REDLOCK_OK;
                if (i >= 0) acq[i] = now_us() - t0;
                t0 = now_us();
                ok = ok && client_release(&c) == REDLOCK_OK;
                if (i >= 0) rel[i] = now_us() - t0;
                client_unlock(&c);
            }
            wall = (now_us() - start) / 1e6;
            c0 = bench_cpu_s() - c0;
            {
                double fl = ok ? inflight(&c, nodes[k], cycles / DEPTH + 1) : -1;
                if (fl < 0) ok = 0;
                c.status = (int)fl; /* carried to the row below */
            }
            client_close(&c);
            if (!ok) {
                fprintf(stderr, "bench_transport: %s on %d nodes: a cycle failed\n", t_name[t], nodes[k]);
                redis_nodes_stop(&rn);
                return 1;
            }
            ct[k][t].rate = contend(t, &rn, seconds, &ct[k][t].p50, &ct[k][t].p99, &ct[k][t].lo, &ct[k][t].hi);
            if (ct[k][t].rate < 0) {
                fprintf(stderr, "bench_transport: %s on %d nodes: a contender failed\n", t_name[t], nodes[k]);
                redis_nodes_stop(&rn);
                return 1;
            }
            qsort(acq, (size_t)cycles, sizeof *acq, cmp_i64);
            qsort(rel, (size_t)cycles, sizeof *rel, cmp_i64);
            {
                char a[40], r[40];
                double rate = cycles / wall, cpu = c0 / cycles * 1e6;
                snprintf(a, sizeof a, "%lld/%lld/%lld", (long long)quantile(acq, cycles, 0.5),
                         (long long)quantile(acq, cycles, 0.99), (long long)quantile(acq, cycles, 0.999));
                snprintf(r, sizeof r, "%lld/%lld/%lld", (long long)quantile(rel, cycles, 0.5),
                         (long long)quantile(rel, cycles, 0.99), (long long)quantile(rel, cycles, 0.999));
                printf("%-14s %5d %9.0f %24s %24s %8.1f %9.0f %5.0f%% %10d\n", t_name[t], nodes[k], rate, a, r, cpu, limit,
                       limit > 0 ? 100 * rate / limit : 0, c.status);
                if (csv)
                    fprintf(csv, "%s,%d,%.0f,%lld,%lld,%lld,%lld,%lld,%lld,%.1f,%.0f,%.3f,%d,%.0f,%lld,%lld,%d,%d\n", t_name[t], nodes[k], rate,
                            (long long)quantile(acq, cycles, 0.5), (long long)quantile(acq, cycles, 0.99),
                            (long long)quantile(acq, cycles, 0.999), (long long)quantile(rel, cycles, 0.5),
                            (long long)quantile(rel, cycles, 0.99), (long long)quantile(rel, cycles, 0.999), cpu, limit,
                            limit > 0 ? rate / limit : 0, c.status, ct[k][t].rate, (long long)ct[k][t].p50,
                            (long long)ct[k][t].p99, ct[k][t].lo, ct[k][t].hi);
            }
        }
        redis_nodes_stop(&rn);
    }
    printf("\ncontention: %d clients of one transport (threads, connections of their own) take turns on one\n"
           "key for %.1f s, each holding it about 1 ms, retrying every 2 ms (+0..2 ms)\n\n", CONTENDERS, seconds);
    printf("%-14s %5s %13s %24s %18s\n", "transport", "nodes", "acquisitions/s", "hand-off p50/p99 us", "per client min/max");
    for (k = 0; k < nn; k++)
        for (t = 0; t < T_COUNT; t++) {
            char h[40], f[40];
            snprintf(h, sizeof h, "%lld/%lld", (long long)ct[k][t].p50, (long long)ct[k][t].p99);
            snprintf(f, sizeof f, "%d/%d", ct[k][t].lo, ct[k][t].hi);
            printf("%-14s %5d %13.0f %24s %18s\n", t_name[t], nodes[k], ct[k][t].rate, h, f);
        }
    if (csv) fclose(csv);
    free(acq);
    free(rel);
    return 0;
}
