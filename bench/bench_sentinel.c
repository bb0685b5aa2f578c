/* bench/bench_sentinel.c - what a Sentinel group costs beside a plain node,
   with the raw-socket adapter on real servers: a primary, a replica and
   three sentinels (tests/shared/redis_group.h), all pinned to one CPU.

   1. Acquire + release cycles on one lock: the primary named as a plain
      node (redis://) against the same primary as a redis-sentinel://
      node, whose every command's answer is confirmed by a sentinel
      before it counts. Alternating blocks of --cycles cycles; printed per
      kind: cycles/s (median of the blocks) and the p50 / p99 of one
      cycle's time over all of them, and the ratio.
   2. A new connection (what a reconnect costs): client init, connect and
      the first acquire + release, plain against Sentinel (which first
      asks the sentinels for the primary and the group's last failover):
      median microseconds of --connects.

   Usage: bench_sentinel [--cycles N] [--blocks B] [--connects N] [--server-cpu C]
   Pin it with taskset (make bench-sentinel does). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "bench_socket.h"
#include "redis_group.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const bench_sentinel_key[1] = { "bench-sentinel" };

#define MAX_BLOCKS 32
#define MAX_SAMPLES 400000

/* n cycles: each one's seconds appended to lat (room permitting); the
   block's cycles/s, or -1 when a cycle failed. */
static double block(redlock_socket_lock *l, int n, double *lat, int *nlat)
{
    double t0 = bench_now_s();
    int i;
    for (i = 0; i < n; i++) {
        double c = bench_now_s();
        if (redlock_socket_acquire(l) != REDLOCK_OK || redlock_socket_release(l) != REDLOCK_OK) return -1;
        if (*nlat < MAX_SAMPLES) lat[(*nlat)++] = bench_now_s() - c;
    }
    return n / (bench_now_s() - t0);
}

/* Median microseconds of n new clients' init, connect, acquire + release. */
static double connect_us(const char *list, int n)
{
    double v[256];
    int i, k = 0;
    if (n > 256) n = 256;
    for (i = 0; i < n; i++) {
        redlock_socket s;
        redlock_socket_lock l;
        double t0 = bench_now_s();
        if (bench_socket_open(&s, &l, 1, bench_sentinel_key, list, "bench_sentinel") != 0) return -1;
        if (redlock_socket_acquire(&l) == REDLOCK_OK && redlock_socket_release(&l) == REDLOCK_OK)
            v[k++] = (bench_now_s() - t0) * 1e6;
        bench_socket_close(&s, &l, 1);
    }
    return k == n ? bench_pct(v, k, 0.5) : -1;
}

static void pin(const redis_nodes *rn, int cpu)
{
    int i;
    for (i = 0; i < rn->n; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", cpu, (int)rn->node[i].pid);
        if (system(cmd) != 0) fprintf(stderr, "bench_sentinel: could not pin a server\n");
    }
}

int main(int argc, char **argv)
{
    static double lat[2][MAX_SAMPLES];
    int nlat[2] = { 0, 0 }, cycles = 2000, blocks = 6, connects = 40, server_cpu = -1, i, b, failed = 0;
    double rate[2][MAX_BLOCKS];
    char lists[2][256];
    const char *names[2] = { "plain (redis://)", "Sentinel (redis-sentinel://)" };
    redis_group g;
    redlock_socket s[2];
    redlock_socket_lock l[2];
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--cycles") == 0) cycles = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--blocks") == 0) blocks = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--connects") == 0) connects = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--server-cpu") == 0) server_cpu = atoi(argv[i + 1]);
    }
    if (cycles < 1 || blocks < 1 || blocks > MAX_BLOCKS || connects < 1) {
        fprintf(stderr, "usage: bench_sentinel [--cycles N] [--blocks 1..%d] [--connects N] [--server-cpu C]\n", MAX_BLOCKS);
        return 2;
    }
    redis_nodes_deadline(600);
    if (redis_group_start(&g, "bench", 3) != 0) {
        fprintf(stderr, "bench_sentinel: cannot start a Sentinel group\n");
        return 1;
    }
    if (server_cpu >= 0) {
        pin(&g.primary, server_cpu);
        pin(&g.replica, server_cpu);
        pin(&g.sentinels, server_cpu);
    }
    snprintf(lists[0], sizeof lists[0], "127.0.0.1:%d", redis_group_primary_port(&g));
    snprintf(lists[1], sizeof lists[1], "redis-sentinel://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d/bench",
             redis_group_sentinel_port(&g, 0), redis_group_sentinel_port(&g, 1), redis_group_sentinel_port(&g, 2));
    for (i = 0; i < 2; i++)
        if (bench_socket_open(&s[i], &l[i], 1, bench_sentinel_key, lists[i], "bench_sentinel") != 0 || block(&l[i], 100, lat[i], &nlat[i]) < 0) { /* warm up */
            fprintf(stderr, "bench_sentinel: %s: cannot lock\n", names[i]);
            redis_group_stop(&g);
            return 1;
        }
    nlat[0] = nlat[1] = 0;
    printf("acquire + release cycles on one lock, %d blocks of %d, alternating (servers: a primary, a replica, 3 sentinels)\n",
           blocks, cycles);
    for (b = 0; b < blocks; b++) {
        int j;
        for (j = 0; j < 2; j++) { /* the first kind alternates */
            i = (b + j) % 2;
            if ((rate[i][b] = block(&l[i], cycles, lat[i], &nlat[i])) < 0) failed++;
        }
    }
    printf("%-30s %12s %10s %10s\n", "node", "cycles/s", "p50 us", "p99 us");
    for (i = 0; i < 2; i++) {
        double r = bench_pct(rate[i], blocks, 0.5);
        printf("%-30s %12.0f %10.1f %10.1f\n", names[i], r, bench_pct(lat[i], nlat[i], 0.5) * 1e6, bench_pct(lat[i], nlat[i], 0.99) * 1e6);
    }
    printf("Sentinel / plain: %.2f of the cycles/s (each command's answer confirmed by a sentinel first)\n",
           bench_pct(rate[1], blocks, 0.5) / bench_pct(rate[0], blocks, 0.5));
    for (i = 0; i < 2; i++) bench_socket_close(&s[i], &l[i], 1);
    printf("a new client: init, connect, acquire + release (median of %d)\n", connects);
    for (i = 0; i < 2; i++) {
        double us = connect_us(lists[i], connects);
        if (us < 0) failed++;
        printf("%-30s %10.0f us\n", names[i], us);
    }
    redis_group_stop(&g);
    if (failed) fprintf(stderr, "bench_sentinel: %d rows failed\n", failed);
    return failed ? 1 : 0;
}
