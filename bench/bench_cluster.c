/* bench/bench_cluster.c - what routing by hash slot costs beside a plain
   node, with the raw-socket adapter on a real 3-master Redis Cluster
   (tests/shared/redis_cluster.h), the servers pinned to one CPU.

   1. Acquire + release cycles on one lock: the master of the key's slot
      named as a plain node (redis://) against the cluster as a
      redis-cluster:// node (the command routed to the same master).
      Alternating blocks of --cycles cycles; per kind: cycles/s (median
      of the blocks), p50 / p99 of one cycle, and the ratio.
   2. The same on 3 keys, one per master, in turn (the cluster only: the
      plain node serves one master's slots).
   3. A new client: init, connect, the first acquire + release (the
      cluster asks CLUSTER SLOTS first): median microseconds of --connects.

   Usage: bench_cluster [--cycles N] [--blocks B] [--connects N] [--server-cpu C]
   Pin it with taskset (make bench-cluster does). */
#define _POSIX_C_SOURCE 200809L
#define REDLOCK_IMPLEMENTATION
#define REDLOCK_SOCKET_IMPLEMENTATION
#include "bench_socket.h"
#include "redis_cluster.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_BLOCKS 32
#define MAX_SAMPLES 400000

/* A key whose slot master m (of 3) was given. */
static void key_of(char *buf, size_t cap, int m)
{
    int k;
    for (k = 0;; k++) {
        unsigned slot;
        snprintf(buf, cap, "bench-cluster-%d", k);
        slot = redlock_cluster_slot(buf, strlen(buf));
        if ((int)slot >= m * 16384 / 3 && (int)slot < (m + 1) * 16384 / 3) return;
    }
}

/* n cycles on the nl locks in turn: each successful one's seconds
   appended to lat, a failed one counted in *failed (bench/README.md,
   "Failed cycles"); the block's successful cycles/s, or -1 when none
   succeeded. */
static double block(redlock_socket_lock *l, int nl, int n, double *lat, int *nlat, int *failed)
{
    double t0 = bench_now_s(), lost = 0;
    int i, ok = 0;
    for (i = 0; i < n; i++) {
        double c = bench_now_s();
        int a = redlock_socket_acquire(&l[i % nl]), r = a == REDLOCK_OK ? redlock_socket_release(&l[i % nl]) : a;
        if (a != REDLOCK_OK || r != REDLOCK_OK) {
            if (getenv("BENCH_DEBUG")) fprintf(stderr, "bench_cluster: %s / %s\n", redlock_strerror(a), redlock_strerror(r));
            (*failed)++;
            lost += bench_now_s() - c;
            continue;
        }
        ok++;
        if (*nlat < MAX_SAMPLES) lat[(*nlat)++] = bench_now_s() - c;
    }
    return ok ? ok / (bench_now_s() - t0 - lost) : -1;
}

static double connect_us(const char *list, const char *const *keys, int n)
{
    double v[256];
    int i, k = 0;
    if (n > 256) n = 256;
    for (i = 0; i < n; i++) {
        redlock_socket s;
        redlock_socket_lock l[1];
        double t0 = bench_now_s();
        if (bench_socket_open(&s, l, 1, keys, list, "bench_cluster") != 0) return -1;
        if (redlock_socket_acquire(&l[0]) == REDLOCK_OK && redlock_socket_release(&l[0]) == REDLOCK_OK)
            v[k++] = (bench_now_s() - t0) * 1e6;
        bench_socket_close(&s, l, 1);
    }
    return k == n ? bench_pct(v, k, 0.5) : -1;
}

int main(int argc, char **argv)
{
    enum { KINDS = 3 };
    static double lat[KINDS][MAX_SAMPLES];
    int nlat[KINDS] = { 0, 0, 0 }, nlocks[KINDS] = { 1, 1, 3 }, nfail[KINDS] = { 0, 0, 0 }, cycles = 2000, blocks = 6,
        connects = 40, server_cpu = -1, i, b, failed = 0, warm = 0;
    double rate[KINDS][MAX_BLOCKS];
    char lists[KINDS][256], keys[3][32];
    const char *kp[3];
    const char *names[KINDS] = { "plain (redis://)", "cluster (redis-cluster://)", "cluster, 3 keys on 3 masters" };
    redis_cluster c;
    redlock_socket s[KINDS];
    redlock_socket_lock l[KINDS][3];
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--cycles") == 0) cycles = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--blocks") == 0) blocks = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--connects") == 0) connects = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--server-cpu") == 0) server_cpu = atoi(argv[i + 1]);
    }
    if (cycles < 1 || blocks < 1 || blocks > MAX_BLOCKS || connects < 1) {
        fprintf(stderr, "usage: bench_cluster [--cycles N] [--blocks 1..%d] [--connects N] [--server-cpu C]\n", MAX_BLOCKS);
        return 2;
    }
    redis_nodes_deadline(600);
    if (redis_cluster_start(&c, 3, 1) != 0) {
        fprintf(stderr, "bench_cluster: cannot start a cluster\n");
        return 1;
    }
    for (i = 0; i < 3 && server_cpu >= 0; i++) {
        char cmd[64];
        snprintf(cmd, sizeof cmd, "taskset -pc %d %d >/dev/null", server_cpu, (int)redis_nodes_pid(&c.rn, i));
        if (system(cmd) != 0) fprintf(stderr, "bench_cluster: could not pin a server\n");
    }
    for (i = 0; i < 3; i++) {
        key_of(keys[i], sizeof keys[i], i);
        kp[i] = keys[i];
    }
    snprintf(lists[0], sizeof lists[0], "127.0.0.1:%d", redis_cluster_port(&c, 0));
    snprintf(lists[1], sizeof lists[1], "redis-cluster://127.0.0.1:%d+127.0.0.1:%d+127.0.0.1:%d", redis_cluster_port(&c, 0),
             redis_cluster_port(&c, 1), redis_cluster_port(&c, 2));
    memcpy(lists[2], lists[1], sizeof lists[1]);
    for (i = 0; i < KINDS; i++)
        if (bench_socket_open(&s[i], l[i], nlocks[i], kp, lists[i], "bench_cluster") != 0 || block(l[i], nlocks[i], 100, lat[i], &nlat[i], &warm) < 0) {
            fprintf(stderr, "bench_cluster: %s: cannot lock\n", names[i]);
            redis_cluster_stop(&c);
            return 1;
        }
    nlat[0] = nlat[1] = nlat[2] = 0;
    printf("acquire + release cycles, %d blocks of %d, alternating (servers: a 3-master cluster)\n", blocks, cycles);
    for (b = 0; b < blocks; b++) {
        int j;
        for (j = 0; j < KINDS; j++) { /* the first kind rotates */
            i = (b + j) % KINDS;
            rate[i][b] = block(l[i], nlocks[i], cycles, lat[i], &nlat[i], &nfail[i]);
        }
    }
    printf("%-32s %12s %10s %10s %7s\n", "node", "cycles/s", "p50 us", "p99 us", "failed");
    for (i = 0; i < KINDS; i++) {
        if (!nlat[i]) { /* no success: not a measurement */
            printf("%-32s %12s %10s %10s %7d\n", names[i], "-", "-", "-", nfail[i]);
            failed++;
            continue;
        }
        printf("%-32s %12.0f %10.1f %10.1f %7d\n", names[i], bench_pct(rate[i], blocks, 0.5), bench_pct(lat[i], nlat[i], 0.5) * 1e6,
               bench_pct(lat[i], nlat[i], 0.99) * 1e6, nfail[i]);
        if (nfail[i]) fprintf(stderr, "bench_cluster: %s: %d failed, %d succeeded\n", names[i], nfail[i], nlat[i]);
    }
    printf("cluster / plain: %.2f of the cycles/s (the same master)\n", bench_pct(rate[1], blocks, 0.5) / bench_pct(rate[0], blocks, 0.5));
    for (i = 0; i < KINDS; i++) bench_socket_close(&s[i], l[i], nlocks[i]);
    printf("a new client: init, connect, acquire + release (median of %d)\n", connects);
    for (i = 0; i < 2; i++) {
        double us = connect_us(lists[i], kp, connects);
        if (us < 0) failed++;
        printf("%-32s %10.0f us\n", names[i], us);
    }
    redis_cluster_stop(&c);
    if (failed) fprintf(stderr, "bench_cluster: %d rows failed\n", failed);
    return failed ? 1 : 0;
}
