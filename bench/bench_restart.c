/* bench/bench_restart.c - what restart-aware voting costs (redlock.h
   section 4, Restarts), with the raw-socket adapter on real nodes.

   1. How long a lock is unavailable after a restart. Three nodes without
      persistence (--appendonly no). A holder takes a lock of ttl T (no
      renewals); two of the three nodes are killed and restarted empty.
      Then two clients try, one attempt every 5 ms, until granted: one
      that never saw the nodes (`new client`: their uptime is below the
      bound) on the holder's key, and the holder's own client (`holder's
      client`: it sees their new run_id) on a free key. Printed per ttl:
      the time from the restart (both nodes answer PING again) to the
      first grant, median and worst of --runs runs, beside the bound (the
      ttl plus the drift allowance), and the validity the holder still
      counted on at the new client's grant (median). Then the same with
      the rule off (cfg.core.max_ttl_ms = -1): granted at once, while the
      holder still counts on its validity (two holders).
   2. The preamble's cost per connection, on one node: connect and the
      preamble (INFO and CONFIG GET appendfsync) against a connection
      without them (cfg.info_off), alternating blocks: microseconds per
      connection (median of the blocks) and the size of INFO's answer.

   Usage: bench_restart [--ttls MS,MS...] [--runs N] [--connects N] [--blocks B] [--server-cpu C]
   Pin it with taskset (make bench-restart does). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "adapters/redlock_socket.h"
#include "redis_nodes.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TTLS 8
#define MAX_RUNS 32
#define MAX_BLOCKS 32
#define GIVE_UP_MS 20000 /* a try loop past the bound by this much: the row fails */

static int open_client(redlock_socket *s, const redis_nodes *rn, int info_off, int rule_off)
{
    redlock_socket_config cfg;
    int i;
    redlock_socket_config_init(&cfg);
    cfg.node_count = rn->n;
    for (i = 0; i < rn->n; i++) cfg.node[i].port = redis_nodes_port(rn, i);
    cfg.info_off = info_off;
    cfg.core.retry_count = -1; /* one attempt per acquire */
    if (rule_off) cfg.core.max_ttl_ms = -1;
    return redlock_socket_init(s, &cfg) == REDLOCK_OK ? 0 : -1;
}

/* Tries l every 5 ms until granted, for up to ms: seconds of the grant on
   bench_now_s's clock, or -1. */
static double acquire_by(redlock_socket_lock *l, long ms)
{
    double until = bench_now_s() + ms / 1e3;
    while (bench_now_s() < until) {
        if (redlock_socket_acquire(l) == REDLOCK_OK) return bench_now_s();
        redis_nodes__sleep_ms(5);
    }
    return -1;
}

/* One run of part 1 at ttl_ms (rule_off: both clients count grants at
   once): *fresh and *seen get the milliseconds from the restart to the new
   client's and the holder's client's grant (-1: none), *left the holder's
   validity left at the new client's grant (ms). 0, or -1 when the run
   could not be set up. */
static int restart_run(redis_nodes *rn, int64_t ttl_ms, int rule_off, int run, double *fresh, double *seen,
                       double *left)
{
    redlock_socket a, b;
    redlock_socket_lock la, la2, lb;
    redlock_lock_opts o;
    char key[64], key2[64];
    double t_restart;
    int rc = -1;
    *fresh = *seen = -1;
    *left = 0;
    snprintf(key, sizeof key, "bench:restart:%lld:%d:%d", (long long)ttl_ms, rule_off, run);
    snprintf(key2, sizeof key2, "bench:restart:%lld:%d:%d:2", (long long)ttl_ms, rule_off, run);
    if (open_client(&a, rn, 0, rule_off) != 0) return -1;
    memset(&o, 0, sizeof o);
    o.key = key;
    o.ttl_ms = ttl_ms;
    if (redlock_socket_lock_init(&a, &la, &o) != REDLOCK_OK) goto out_a;
    /* the nodes grant once older than the bound (the last run's restart) */
    if (acquire_by(&la, (long)ttl_ms + GIVE_UP_MS) < 0) goto out_la;
    redis_node_kill(rn, 0);
    redis_node_kill(rn, 1);
    if (redis_node_restart_volatile(rn, 0) != 0 || redis_node_restart_volatile(rn, 1) != 0) goto out_la;
    t_restart = bench_now_s();
    if (open_client(&b, rn, 0, rule_off) != 0) goto out_la;
    if (redlock_socket_lock_init(&b, &lb, &o) != REDLOCK_OK) goto out_b;
    o.key = key2;
    if (redlock_socket_lock_init(&a, &la2, &o) != REDLOCK_OK) goto out_lb;
    /* both try in turn, each every 5 ms, until both are granted */
    {
        double until = t_restart + (ttl_ms + GIVE_UP_MS) / 1e3;
        while ((*fresh < 0 || *seen < 0) && bench_now_s() < until) {
            if (*fresh < 0 && redlock_socket_acquire(&lb) == REDLOCK_OK) {
                *fresh = (bench_now_s() - t_restart) * 1e3;
                *left = redlock_lock_remaining_us(&la.lock) / 1e3;
            }
            if (*seen < 0 && redlock_socket_acquire(&la2) == REDLOCK_OK) *seen = (bench_now_s() - t_restart) * 1e3;
            redis_nodes__sleep_ms(5);
        }
    }
    rc = 0;
    if (redlock_lock_state(&la2.lock) == REDLOCK_STATE_HELD) (void)redlock_socket_release(&la2);
    redlock_socket_lock_deinit(&la2);
out_lb:
    if (redlock_lock_state(&lb.lock) == REDLOCK_STATE_HELD) (void)redlock_socket_release(&lb);
    redlock_socket_lock_deinit(&lb);
out_b:
    redlock_socket_deinit(&b);
out_la:
    redlock_socket_lock_deinit(&la);
out_a:
    redlock_socket_deinit(&a);
    return rc;
}

/* n connections (connect and preamble: redlock_socket_connect waits for
   its answers) with or without INFO and CONFIG: microseconds each of those
   that succeeded (0 if none did); *failed: how many failed. */
static double connect_us(const redis_nodes *rn, int info_off, int n, int *failed)
{
    double t0, ok_s = 0;
    int i;
    *failed = 0;
    for (i = 0; i < n; i++) {
        redlock_socket s;
        t0 = bench_now_s();
        if (open_client(&s, rn, info_off, 0) != 0) {
            (*failed)++;
            continue;
        }
        if (redlock_socket_connect(&s) != REDLOCK_OK) (*failed)++;
        else ok_s += bench_now_s() - t0;
        redlock_socket_deinit(&s);
    }
    return *failed < n ? ok_s / (n - *failed) * 1e6 : 0;
}

/* The size of INFO's answer on node 0 (bytes), or -1. */
static long info_bytes(const redis_nodes *rn)
{
    static const char cmd[] = "*1\r\n$4\r\nINFO\r\n";
    char line[64];
    long n = -1;
    int fd = redis_nodes__connect(redis_nodes_port(rn, 0), 1000);
    if (fd < 0) return -1;
    if (redis_nodes__write_all(fd, cmd, sizeof cmd - 1) == 0 && redis_nodes__read_line(fd, line, sizeof line) == 0 &&
        line[0] == '$')
        n = atol(line + 1);
    close(fd);
    return n;
}

static void pin(const redis_nodes *rn, int cpu)
{
    char cmd[128];
    int i;
    if (cpu < 0) return;
    for (i = 0; i < rn->n; i++) {
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", cpu, (int)rn->node[i].pid);
        if (system(cmd) != 0) fprintf(stderr, "bench_restart: could not pin a server\n");
    }
}

int main(int argc, char **argv)
{
    int64_t ttl[MAX_TTLS] = { 1000, 3000 };
    int nttl = 2, runs = 3, connects = 200, blocks = 5, server_cpu = -1, i, k, rc = 0;
    redis_nodes rn;
    redlock_config dflt;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ttls") && i + 1 < argc) {
            char *p = argv[++i];
            for (nttl = 0; *p && nttl < MAX_TTLS; nttl++) {
                ttl[nttl] = strtol(p, &p, 10);
                if (*p == ',') p++;
            }
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--connects") && i + 1 < argc) connects = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--blocks") && i + 1 < argc) blocks = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--server-cpu") && i + 1 < argc) server_cpu = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: bench_restart [--ttls MS,MS...] [--runs N] [--connects N] [--blocks B] "
                            "[--server-cpu C]\n");
            return 64;
        }
    }
    for (k = 0; k < nttl; k++)
        if (ttl[k] < 100 || ttl[k] > 60000) nttl = 0;
    if (nttl < 1 || runs < 1 || runs > MAX_RUNS || connects < 1 || blocks < 1 || blocks > MAX_BLOCKS) {
        fprintf(stderr, "bench_restart: --ttls 100..60000 each, --runs 1..%d, --connects >= 1, --blocks 1..%d\n",
                MAX_RUNS, MAX_BLOCKS);
        return 64;
    }
    redis_nodes_deadline(900);
    redlock_config_init(&dflt);

    /* 1. unavailable after two of three nodes restart empty */
    if (redis_nodes_start_volatile(&rn, 3, NULL, NULL) != 0) {
        fprintf(stderr, "bench_restart: cannot start redis-server\n");
        return 1;
    }
    pin(&rn, server_cpu);
    printf("raw-socket adapter, 3 nodes without persistence, 2 of them killed and restarted empty\n"
           "under a holder; ms from the restart to the first grant (one attempt every 5 ms),\n"
           "median and worst of %d runs, beside the bound (ttl + drift allowance); the holder's\n"
           "validity left at the new client's grant (median); rule off: cfg.core.max_ttl_ms = -1\n\n", runs);
    printf("%-8s %-5s %10s %20s %24s %16s\n", "ttl ms", "rule", "bound ms", "new client med/max",
           "holder's client med/max", "holder left ms");
    for (k = 0; k < nttl; k++) {
        int off;
        for (off = 0; off < 2; off++) {
            double fresh[MAX_RUNS], seen[MAX_RUNS], left[MAX_RUNS], fmax = 0, smax = 0;
            double bound = ttl[k] + ttl[k] * dflt.drift_factor + (double)dflt.clock_drift_ms; /* the core's drift */
            char a[32], b[32];
            int ok = 0;
            for (i = 0; i < runs; i++) {
                double f, s, l;
                if (restart_run(&rn, ttl[k], off, i, &f, &s, &l) != 0 || f < 0 || s < 0) {
                    fprintf(stderr, "bench_restart: ttl %lld%s, run %d: a client was never granted (or no setup)\n",
                            (long long)ttl[k], off ? " rule off" : "", i);
                    continue;
                }
                fresh[ok] = f;
                seen[ok] = s;
                left[ok++] = l;
                if (f > fmax) fmax = f;
                if (s > smax) smax = s;
            }
            if (!ok) {
                printf("%-8lld %-5s %10.0f %20s %24s %16s\n", (long long)ttl[k], off ? "off" : "on", bound, "-", "-",
                       "-");
                rc = 1;
                continue;
            }
            snprintf(a, sizeof a, "%.0f / %.0f", bench_median(fresh, ok), fmax);
            snprintf(b, sizeof b, "%.0f / %.0f", bench_median(seen, ok), smax);
            printf("%-8lld %-5s %10.0f %20s %24s %16.0f\n", (long long)ttl[k], off ? "off" : "on", bound, a, b,
                   bench_median(left, ok));
        }
    }
    redis_nodes_stop(&rn);

    /* 2. the preamble's cost per connection */
    if (redis_nodes_start(&rn, 1, NULL, NULL) != 0) {
        fprintf(stderr, "bench_restart: cannot start redis-server\n");
        return 1;
    }
    pin(&rn, server_cpu);
    {
        double us[2][MAX_BLOCKS], med[2];
        int failed[2] = { 0, 0 }, n[2] = { 0, 0 }, b, warm;
        (void)connect_us(&rn, 0, connects / 4 + 1, &warm); /* warm up */
        for (b = 0; b < blocks; b++)
            for (i = 0; i < 2; i++) {
                int f, which = (b + i) % 2; /* 0: with INFO and CONFIG, 1: without */
                double v = connect_us(&rn, which, connects, &f);
                failed[which] += f;
                if (f < connects) us[which][n[which]++] = v;
            }
        for (i = 0; i < 2; i++) med[i] = n[i] ? bench_median(us[i], n[i]) : 0;
        printf("\none node (durable), connect + preamble, median of %d blocks of %d connections;\n"
               "INFO's answer here: %ld bytes\n\n", blocks, connects, info_bytes(&rn));
        printf("%-26s %16s %8s\n", "preamble", "us/connection", "failed");
        printf("%-26s %16.1f %8d\n", "INFO + CONFIG (default)", med[0], failed[0]);
        printf("%-26s %16.1f %8d\n", "none (info_off)", med[1], failed[1]);
        if (med[0] > 0 && med[1] > 0) printf("\nthe preamble adds %.1f us per connection\n", med[0] - med[1]);
        for (i = 0; i < 2; i++)
            if (!n[i]) {
                fprintf(stderr, "bench_restart: no connection succeeded in a preamble row\n");
                rc = 1;
            }
    }
    redis_nodes_stop(&rn);
    return rc;
}
